/* SPDX-License-Identifier: MIT */
/*
 * The ring-buffer drain thread: turns BPF events into records for the writer thread (those of
 * the core types itself, the others through the handler that takes them), keeps the process
 * table up to date and drives mapping reads.
 */
#ifndef XPU_RECORD_RB_DRAIN_H
#define XPU_RECORD_RB_DRAIN_H

#include <stddef.h>
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
	uint64_t inproc_events;		/* events walked in process, taken from the queue */
	uint64_t inproc_launches;	/* GPU_LAUNCH among them (also in gpu_launches) */
	uint64_t inproc_lost;		/* launches of messages the queue had no room for */
};

/*
 * Forks, execs and exits go to pt (processes that vanish without an exit event, lost to a
 * full ring buffer, are found by a periodic check), the mapping reads to pm; events of other
 * types to the handler of pt that takes them (map_handler.h events[]). The thread uses pm and
 * pt until rb_drain__stop().
 */
struct rb_drain *rb_drain__start(int ringbuf_fd, struct writer_thread *wt, struct procmaps *pm,
				 struct proc_table *pt);
/*
 * Launch events walked in process (record/inproc_events.h: a checked EVENTS payload, launches
 * of them GPU_LAUNCH), queued for the drain thread, which takes them as ring-buffer events,
 * one call's back to back. From any thread, until rb_drain__stop(). 0, or -ENOBUFS when the
 * queue is full or -ENOMEM: the launches are counted lost (and written as a LOST record).
 */
int rb_drain__inject(struct rb_drain *d, const void *entries, size_t len, uint32_t launches);
/*
 * Waits until the drain thread has processed every message rb_drain__inject() queued before
 * the call, at most timeout_ms: the receiver's answer to a client's DONE, so that its last
 * launches are taken while its process still runs (Python frames are read from it). 0 (at
 * once when rb_drain__stop() began) or -ETIMEDOUT. From any thread but the drain's.
 */
int rb_drain__sync(struct rb_drain *d, int timeout_ms);
/* Drains what is left, the queue too, joins the thread. */
void rb_drain__stop(struct rb_drain *d, struct rb_drain_stats *st);

/*
 * Events of h's types go to h from now on (set before the programs that send them attach),
 * or no longer (unroute).
 */
void rb_drain__route(struct rb_drain *d, struct map_handler *h);
void rb_drain__unroute(struct rb_drain *d, struct map_handler *h);

#endif
