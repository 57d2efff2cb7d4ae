/* SPDX-License-Identifier: MIT */
/*
 * -g cfi: keeps the BPF walk's tables in step with the traced processes' mappings, as a handler
 * of the process table. A worker thread builds each file's rows once (record/cfi/cfi_build.c),
 * off the drain thread and the target's path, loads them into an inner map of cfi_tables, then
 * publishes the mappings of every process that maps the file into cfi_procs. Until then the
 * walk uses frame pointers there, and counts it. Called by the drain thread; thread safe.
 */
#ifndef XPU_RECORD_CFI_LOADER_H
#define XPU_RECORD_CFI_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfi_loader;
struct map_handler;
struct walk_share;

struct cfi_loader_stats {
	uint64_t files;			/* files with a table loaded */
	uint64_t files_failed;		/* no unwind section, not x86-64 ELF, unreadable (not
					 * files_unopened: those are no loss) */
	uint64_t files_over_budget;	/* table not loaded: the memory bound was reached */
	uint64_t rows;			/* rows loaded, all files */
	uint64_t table_bytes;		/* memory of the loaded rows */
	uint64_t build_ns;		/* time the worker spent building and loading tables */
	uint64_t build_max_ns;		/* the slowest file */
	uint64_t unsupported_rows;	/* rows the walk cannot evaluate (frame pointer there) */
	uint64_t proc_updates;		/* cfi_procs writes */
	/*
	 * mappings looked at to keep each process's list: each one added, refreshed (its
	 * file built) or gone, each step of a search, each of a whole read's: grows with the
	 * mappings made, not their square
	 */
	uint64_t map_entries;
	uint64_t update_errors;		/* failed map writes (a process's tables incomplete) */
	uint64_t maps_dropped;		/* mappings beyond XPU_CFI_MAX_MAPS per process */
	uint64_t files_shared;		/* files that share the table of one with their build-id */
	uint64_t start_wait_ns;		/* the command's start held for its first files' tables */
	uint64_t start_wait_timeouts;	/* ... and released before they were all built */
	uint64_t files_reopened;	/* queued without a descriptor, opened when built */
	uint64_t files_unopened;	/* ... that no process mapped by then (queued again if
					 * one maps them later) */
	uint64_t fds_peak;		/* descriptors the queue held at most */
	/* the table cache (cfi_cache.h), 0 without one */
	uint64_t cache_hits, cache_misses, cache_rejected, cache_writes, cache_write_errors;
	uint64_t cache_evicted;
};

/*
 * tables_fd, procs_fd: the cfi_tables and cfi_procs maps; mem_bytes bounds the rows loaded.
 * ws, if not NULL, gets every table loaded and every value written to cfi_procs too (the
 * in-process launch walk's share, record/inproc_share.h), and forgets a process with them.
 * cache, if not NULL, gives tables built before and keeps those built now (the caller frees
 * it after the loader). The vdso's table is queued at once.
 */
struct cfi_cache;
struct cfi_loader *cfi_loader__new(int tables_fd, int procs_fd, uint64_t mem_bytes,
				   struct walk_share *ws, struct cfi_cache *cache);
/* Stops the worker (a table being built is finished first) and frees everything. */
void cfi_loader__free(struct cfi_loader *cl);

/*
 * A file of pid's mappings: queues its table build if the file is new. fd is an open
 * descriptor of the mapped file (taken over: closed by the loader); -1 if it could not be
 * opened (the file is then counted as failed).
 */
void cfi_loader__file(struct cfi_loader *cl, uint32_t dev, uint64_t ino, int fd);
/*
 * Queues the files the command cmd (argv[0]) will map first: its executable, interpreter and
 * DT_NEEDED libraries (record/elf_deps.h). Returns their number or negative errno.
 */
int cfi_loader__prepare(struct cfi_loader *cl, const char *cmd);
/*
 * Waits until every queued table is built, at most timeout_ns; returns the ns waited, which
 * the stats add up (with the times the wait ran out).
 */
uint64_t cfi_loader__wait(struct cfi_loader *cl, uint64_t timeout_ns);
/* True when dev/ino was seen already (no need to open it again). */
int cfi_loader__known(struct cfi_loader *cl, uint32_t dev, uint64_t ino);
/*
 * The process table's handler: each file mapped gets its table built, each process's
 * mappings are published after every read that changed them (an mmap's lookup changes one
 * entry: the list is not made again), an exited process's go.
 */
struct map_handler *cfi_loader__handler(struct cfi_loader *cl);
void cfi_loader__get_stats(struct cfi_loader *cl, struct cfi_loader_stats *st);

#endif
