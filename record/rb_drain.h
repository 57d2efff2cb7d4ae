/* SPDX-License-Identifier: MIT */
/*
 * The ring-buffer drain thread: turns BPF events into records for the writer thread, keeps
 * the set of live traced processes and drives mapping scans.
 */
#ifndef XPU_RECORD_RB_DRAIN_H
#define XPU_RECORD_RB_DRAIN_H

#include <stdint.h>
#include <sys/types.h>

struct rb_drain;
struct writer_thread;
struct procmaps;

struct rb_drain_stats {
	uint64_t samples;
	uint64_t task_events;
	uint64_t gpu_launches;
	uint64_t stack_errors;		/* events that arrived without their stack */
};

/*
 * seed: the processes traced from the start (the launched child or the attached pid); they
 * count as live until their exit event. The thread uses pm until rb_drain__stop().
 */
struct py_procs;
struct rb_drain *rb_drain__start(int ringbuf_fd, struct writer_thread *wt, struct procmaps *pm,
				 struct py_procs *py, pid_t seed);
/* Number of live processes in the traced tree. Thread-safe. */
unsigned int rb_drain__live(struct rb_drain *d);
/* Sends sig to every live process of the traced tree (as a terminal's ^C reaches them all). */
void rb_drain__signal_live(struct rb_drain *d, int sig);
/* Wait status of pid's exit event, if one was seen; returns 0 when found. Thread-safe. */
int rb_drain__exit_status(struct rb_drain *d, pid_t pid, int *status);
/* Events of bpf/driver.bpf.c go to dt from now on (set before its programs attach). */
struct driver_trace;
void rb_drain__set_driver(struct rb_drain *d, struct driver_trace *dt);
/* Drains what is left, joins the thread. */
void rb_drain__stop(struct rb_drain *d, struct rb_drain_stats *st);

#endif
