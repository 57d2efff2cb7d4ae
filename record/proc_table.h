/* SPDX-License-Identifier: MIT */
/*
 * The traced processes: the recorder's only table of them. Each pid has its executable
 * mappings as last read, its image (which changes at every exec), whether it still runs and
 * how it exited, and one slot per handler (map_handler.h) for what that handler keeps about
 * it; each file those mappings map has a slot per handler too. procmaps.c reads the mappings
 * in, rb_drain.c the forks, execs and exits; the table calls the handlers, and knows none.
 *
 * The drain thread owns it (before the drain thread starts and after it stops, the main
 * thread does): only it adds, changes or looks up. The main thread also counts, signals and
 * reads the exit statuses of the live tree meanwhile, under the lock the drain thread takes to
 * change those.
 */
#ifndef XPU_RECORD_PROC_TABLE_H
#define XPU_RECORD_PROC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "map_handler.h"

struct proc_table;
struct wt_rec;
struct xpu_ev_hdr;

#define PROC_MAX_HANDLERS 8

/* A file mapped executable by some process: one DSO record. */
struct proc_file {
	uint32_t dev;
	uint64_t ino;			/* 0: no file ([vdso], anonymous), keyed by name */
	char *name;			/* the key of a mapping without an inode */
	uint32_t dso_id;
	void *slot[PROC_MAX_HANDLERS];
	struct proc_file *next;
};

/* One executable mapping of a process. */
struct proc_map {
	uint64_t start, end, pgoff, ino;
	uint32_t dev;
	uint32_t prot;			/* PROT_* */
	bool vdso;
	struct proc_file *file;
};

enum proc_state {
	PROC_SEEN,			/* mappings read, but no fork told us it joined the tree */
	PROC_LIVE,			/* in the traced tree, running */
	PROC_EXITED,
};

struct proc {
	pid_t pid;
	uint32_t image;			/* a new one at each exec and exit, never repeated */
	/* executable mappings from the last read, in address order, none overlapping */
	struct proc_map *maps;
	size_t nr, cap;
	bool maps_lost;			/* a read of them failed: said once (procmaps.c) */
	/*
	 * Bumped when maps is replaced whole (a scan, a fork's copy): a handler that follows
	 * on_mapping calls reads the list again then. Else (an mmap's lookup) the only changes
	 * are those on_mapping says: the new mapping, and what it covers gone.
	 */
	uint32_t whole_reads;
	uint64_t reread_ns;		/* when an unknown IP last made the table read them again */
	void *slot[PROC_MAX_HANDLERS];
	/* under the table's lock */
	enum proc_state state;
	int status;			/* wait status of the exit; -1 unknown */
	struct proc *next;
};

/*
 * What reads a process's mappings into the table (procmaps__scan), for the table to call when
 * asked about an IP it has no mapping for: negative errno when they could not be read.
 */
typedef int (*proc_table_reader_fn)(void *ctx, pid_t pid, uint64_t ts_ns);

struct proc_table *proc_table__new(void);
/* Frees every process and file, the slots still set through their handlers' free calls. */
void proc_table__free(struct proc_table *pt);
void proc_table__set_reader(struct proc_table *pt, proc_table_reader_fn fn, void *ctx);
/*
 * Handlers are called in the order they were added (a record's joins, too). 0, or -ENOSPC
 * past PROC_MAX_HANDLERS.
 */
int proc_table__add_handler(struct proc_table *pt, struct map_handler *h);
/* The handlers added, NULL past the last. */
struct map_handler *proc_table__handler(const struct proc_table *pt, unsigned int i);

/* ---- processes (the drain thread) ---------------------------------------------------------- */

/* pid's entry, NULL when it has none. */
struct proc *proc_table__find(const struct proc_table *pt, pid_t pid);
/* pid's entry, made (as PROC_SEEN) when it has none; NULL: ENOMEM. */
struct proc *proc_table__get(struct proc_table *pt, pid_t pid);
/*
 * pid joined the traced tree (the launched command, an attached process, a fork): it counts
 * as live until it exits; a pid that exited before is a new process, with a new image.
 */
int proc_table__add_live(struct proc_table *pt, pid_t pid);
/* pid exec'd: its image ends (handlers' on_end), its mappings are to be read anew. */
void proc_table__exec(struct proc_table *pt, pid_t pid);
/* pid exited with wait status (-1 unknown): its image ends, its mappings go. */
void proc_table__exited(struct proc_table *pt, pid_t pid, int status);
/* A thread ended (tid), for handlers that keep state per thread. */
void proc_table__thread_exited(struct proc_table *pt, uint32_t tid);
/*
 * Ends the live processes that are gone from /proc or zombies (their exit event was lost to
 * a full ring buffer); returns how many, their pids in gone (up to max).
 */
size_t proc_table__reap_gone(struct proc_table *pt, pid_t *gone, size_t max);
/* Calls fn for every process, ended ones too (after the drain, for what is read at the end). */
void proc_table__each(struct proc_table *pt, void (*fn)(void *ctx, struct proc *p), void *ctx);

/* ---- mappings ---------------------------------------------------------------------------- */

/* The known mapping of pid's that holds ip, or NULL. */
const struct proc_map *proc_table__mapping_of(const struct proc_table *pt, pid_t pid,
					      uint64_t ip);
/*
 * An IP of pid's about to be recorded: pid's mappings are read when it has none yet, or
 * (at most every 200 ms a process) when none holds ip, so the trace has every mapping its
 * stacks fall into.
 */
void proc_table__check_ip(struct proc_table *pt, pid_t pid, uint64_t ip, uint64_t ts_ns);
/*
 * The file of a mapping (dev, ino, or name when ino is 0): *created says whether it is new;
 * NULL: ENOMEM. A new file's dso_id is set by the caller before it reaches the handlers.
 */
struct proc_file *proc_table__file(struct proc_table *pt, uint32_t dev, uint64_t ino,
				   const char *name, bool *created);

/* What a handler learns about a file the first time any process maps it. */
struct proc_file_open {
	pid_t pid;			/* the process whose mapping showed it */
	const char *path;		/* as /proc/PID/maps names it */
	const char *map_path;		/* /proc/PID/map_files/RANGE: the kernel resolves it to the file */
	int fd;				/* open on the file for the call only; -1: it could not be */
	uint64_t ts_ns;
	/* read from fd for the DSO record (fd >= 0 only); build_id_len 0: it has none */
	const uint8_t *build_id;
	int build_id_len;
};

/* Calls the handlers for a new file, a new mapping of p, and p's mappings just read. */
void proc_table__file_opened(struct proc_table *pt, struct proc_file *f,
			     const struct proc_file_open *o);
void proc_table__mapped(struct proc_table *pt, struct proc *p, const struct proc_map *m,
			uint64_t ts_ns);
void proc_table__maps_read(struct proc_table *pt, struct proc *p, bool changed);

/*
 * A record made from ev (of ev->pid, ev->tid) is about to be written: each handler adds what it
 * joins to such records (Python frames).
 */
void proc_table__join(struct proc_table *pt, const struct xpu_ev_hdr *ev, struct wt_rec *r);

/* ---- the live tree (any thread) ---------------------------------------------------------- */

/* Processes of the tree still running. Lock-free. */
unsigned int proc_table__live(struct proc_table *pt);
/* Sends sig to every live process (as a terminal's ^C reaches a whole process group). */
void proc_table__signal(struct proc_table *pt, int sig);
/* Wait status of pid's exit, if one was seen: 0 when found, else -ENOENT. */
int proc_table__exit_status(struct proc_table *pt, pid_t pid, int *status);

/* The slot of h in p, and in f. */
static inline void **proc__slot(struct proc *p, const struct map_handler *h)
{
	return &p->slot[h->slot];
}

static inline void **proc_file__slot(struct proc_file *f, const struct map_handler *h)
{
	return &f->slot[h->slot];
}

#endif
