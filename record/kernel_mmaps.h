/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own record of executable mappings, as perf takes it: a dummy software event on
 * every CPU with mmap2 and comm records, read from its ring buffers. /proc/PID/maps can only
 * be read while the process lives, and a shell's or a build's short-lived processes are gone
 * before the drain thread gets to them ("lost N processes' mappings"); the kernel wrote their
 * mappings at mmap time, paths included. procmaps.h reads these when its read of /proc fails.
 *
 * Kept per process, from its last exec on (the kernel's comm record of an exec starts a new
 * image), in the order mapped; only processes the process table knows are kept past a short
 * grace (the events come before the drain hears of the fork), and within a bound on entries:
 * past it, the process that mapped least recently goes, found without a scan of the store.
 * Owned by the drain thread.
 */
#ifndef XPU_RECORD_KERNEL_MMAPS_H
#define XPU_RECORD_KERNEL_MMAPS_H

#include <stdint.h>
#include <sys/types.h>

struct kernel_mmaps;
struct maps_entry;
struct proc_table;

/* mappings kept for all processes, at most; past it the oldest process's are dropped */
#define KERNEL_MMAPS_MAX_ENTRIES 65536u
/* a process the table does not know this long after its last mapping is not ours */
#define KERNEL_MMAPS_GRACE_NS (2ull * 1000000000ull)

/* PERF_RECORD_MMAP2's fields after the header, before the path (perf_event_open(2)) */
struct kernel_mmap2_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

struct kernel_mmaps_stats {
	uint64_t events;		/* executable mmap records read */
	uint64_t lost;			/* records the kernel could not write (its ring was full) */
	uint64_t dropped;		/* mappings kept, then dropped for the bound */
};

/*
 * The events on every online CPU, or NULL (no permission, an old kernel: said at -v, and the
 * recording goes on without them). pt: whose processes are kept.
 */
struct kernel_mmaps *kernel_mmaps__open(const struct proc_table *pt);
/* The store alone, fed by kernel_mmaps__take() (the unit test), or NULL. */
struct kernel_mmaps *kernel_mmaps__new(const struct proc_table *pt);
void kernel_mmaps__free(struct kernel_mmaps *km);
/*
 * One record as the kernel writes it to the ring (perf_event_header first, the sample_id's
 * TID and TIME last): mmap2 of executable mappings and comm of an exec are kept.
 */
void kernel_mmaps__take(struct kernel_mmaps *km, const void *rec, size_t size);
/* Takes what the kernel wrote since the last call; cheap when nothing was. */
void kernel_mmaps__poll(struct kernel_mmaps *km);
/*
 * Calls fn for each executable mapping of pid's current image, in address order (of mappings
 * that overlap, the later one), until fn returns nonzero. Returns the number of mappings fn
 * was given: 0 when the events told nothing of pid.
 */
int kernel_mmaps__each(struct kernel_mmaps *km, pid_t pid,
		       int (*fn)(void *ctx, const struct maps_entry *e), void *ctx);
void kernel_mmaps__get_stats(const struct kernel_mmaps *km, struct kernel_mmaps_stats *st);

#endif
