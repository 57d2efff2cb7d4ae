/* SPDX-License-Identifier: MIT */
/*
 * The ring-buffer drain thread: turns BPF events into records for the writer thread (those of
 * the core types itself, the others through the handler that takes them), keeps the process
 * table up to date and drives mapping reads.
 */
#ifndef XPU_RECORD_RB_DRAIN_H
#define XPU_RECORD_RB_DRAIN_H

#include <stdint.h>
#include <sys/types.h>

struct rb_drain;
struct map_handler;
struct proc_table;
struct procmaps;
struct writer_thread;

struct rb_drain_stats {
	uint64_t samples;
	uint64_t task_events;
	uint64_t gpu_launches;
	uint64_t stack_errors;		/* events that arrived without their stack */
	uint64_t off_cpu_blocks;	/* --off-cpu: OFF_CPU records written */
};

/*
 * Forks, execs and exits go to pt (processes that vanish without an exit event, lost to a
 * full ring buffer, are found by a periodic check), the mapping reads to pm; events of other
 * types to the handler of pt that takes them (map_handler.h events[]). The thread uses pm and
 * pt until rb_drain__stop().
 */
struct rb_drain *rb_drain__start(int ringbuf_fd, struct writer_thread *wt, struct procmaps *pm,
				 struct proc_table *pt);
/* Drains what is left, joins the thread. */
void rb_drain__stop(struct rb_drain *d, struct rb_drain_stats *st);

/*
 * Events of h's types go to h from now on (set before the programs that send them attach),
 * or no longer (unroute).
 */
void rb_drain__route(struct rb_drain *d, struct map_handler *h);
void rb_drain__unroute(struct rb_drain *d, struct map_handler *h);

#endif
