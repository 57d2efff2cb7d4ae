/* SPDX-License-Identifier: MIT */
/*
 * Reads the executable mappings of traced processes from /proc/PID/maps into the process table
 * (proc_table.h) and the trace: a DSO record once per file (with its build-id), a MAPPING
 * record per new mapping; the table's handlers hear of each new file and mapping. Owned by the
 * drain thread.
 */
#ifndef XPU_RECORD_PROCMAPS_H
#define XPU_RECORD_PROCMAPS_H

#include <stdint.h>
#include <sys/types.h>

struct host_copy;
struct writer_thread;
struct procmaps;
struct proc_table;

struct procmaps_stats {
	uint64_t scans;			/* reads of all of a process's mappings */
	uint64_t queries;		/* one mapping asked for by address (an mmap) */
	uint64_t entries;		/* mappings read, and known ones looked at to diff them */
	uint64_t scan_failures;		/* processes with a read that failed (gone), once each */
	uint64_t read_failures;		/* the reads that failed */
	uint64_t dsos;
	uint64_t mappings;
	uint64_t inherited;		/* of those, copied from a parent at fork */
	uint64_t from_events;		/* failed reads answered by the kernel's mmap events */
	uint64_t events_lost;		/* mmap records the kernel could not write (ring full) */
	uint64_t events_dropped;	/* kept, then dropped for the bound (kernel_mmaps.h) */
};

/* Reads into pt, and is the reader pt calls for an IP it has no mapping for. */
struct procmaps *procmaps__new(struct writer_thread *wt, struct proc_table *pt);
void procmaps__free(struct procmaps *pm);
/*
 * Opens the kernel's mmap events (kernel_mmaps.h; silently none without the permission): a
 * read of a process that is gone is answered from them. Before the traced processes start.
 */
void procmaps__use_kernel_events(struct procmaps *pm);
/* Takes the events the kernel wrote since the last call (each drain turn: the rings stay short). */
void procmaps__poll_events(struct procmaps *pm);
/* Each new file the host cannot reach by its path is copied into hc (NULL: none are). */
void procmaps__set_copies(struct procmaps *pm, struct host_copy *hc);

/*
 * Reads pid's maps and writes what is new, stamped ts_ns (the event that made us look): after
 * an exec (proc_table__exec) every mapping is new. Returns the number of new mappings or
 * negative errno.
 */
int procmaps__scan(struct procmaps *pm, pid_t pid, uint64_t ts_ns);
/*
 * pid made an executable mapping at addr: that one mapping is read (a scan on first sight of
 * pid, or on a kernel that cannot look one up). Returns what procmaps__scan does.
 */
int procmaps__mapped(struct procmaps *pm, pid_t pid, uint64_t addr, uint64_t ts_ns);
/*
 * pid was forked by parent: until it execs, its mappings are its parent's, taken from the
 * table (a scan when the parent's are unknown). A child that exits before it could be read
 * keeps its frames that way (a fork storm lost 31% of them to [unknown]).
 */
int procmaps__forked(struct procmaps *pm, pid_t pid, pid_t parent, uint64_t ts_ns);
void procmaps__get_stats(const struct procmaps *pm, struct procmaps_stats *st);

#endif
