/* SPDX-License-Identifier: MIT */
/*
 * The ring-buffer drain thread: turns BPF events into records for the writer thread, keeps
 * the live process tree up to date and drives mapping scans.
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
	uint64_t off_cpu_blocks;	/* --off-cpu: OFF_CPU records written */
	uint64_t ag_nodes_from_launch;	/* autograd nodes given their op's launch stack */
	uint64_t ag_nodes_launch_lost;	/* ... whose launch was not kept: written without a stack */
};

/*
 * Fork and exit events update tree; processes that vanish without an exit event (lost to a
 * full ring buffer) are found by a periodic check. The thread uses pm and tree until
 * rb_drain__stop().
 */
struct py_procs;
struct proc_tree;
struct autograd_probe;
/* ag (may be NULL) takes the PyTorch autograd evaluation events. */
struct rb_drain *rb_drain__start(int ringbuf_fd, struct writer_thread *wt, struct procmaps *pm,
				 struct py_procs *py, struct proc_tree *tree,
				 struct autograd_probe *ag);
/* Drains what is left, joins the thread. */
void rb_drain__stop(struct rb_drain *d, struct rb_drain_stats *st);

/* Events of bpf/driver.bpf.c go to dt from now on (set before its programs attach). */
struct driver_trace;
void rb_drain__set_driver(struct rb_drain *d, struct driver_trace *dt);

#endif
