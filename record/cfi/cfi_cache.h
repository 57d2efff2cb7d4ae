/* SPDX-License-Identifier: MIT */
/*
 * A cache of built unwind tables (cfi_build.h), so that a second recording of the same
 * program does not build them again: building PyTorch's libtorch_cpu alone takes seconds of
 * CPU at each start. One file per ELF file in a directory (default ~/.cache/xpu-perf/cfi),
 * named by a key of the file's identity: its build-id and size, or, without a build-id, its
 * device, inode, size and modification time.
 *
 * A cache entry is checked, never trusted: the directory must belong to the recorder's user
 * and be writable by nobody else; an entry must be a regular file of that user (opened without
 * following links); its header must name the same key and size, its length match its row
 * count, its checksum match, and its rows be sorted with known kinds and its loads sane. Any
 * doubt is a miss (counted as rejected), and the table is built as before. Entries are written
 * whole to a temporary name and renamed, so a crash leaves no half entry. The directory is
 * kept under a size bound by removing the least recently used entries after a write.
 */
#ifndef XPU_RECORD_CFI_CACHE_H
#define XPU_RECORD_CFI_CACHE_H

#include <stdint.h>

#include "cfi_build.h"

struct cfi_cache;

struct cfi_cache_stats {
	uint64_t hits;			/* tables read from the cache */
	uint64_t misses;		/* tables not there (then built) */
	uint64_t rejected;		/* entries found but refused by the checks */
	uint64_t writes;		/* tables written */
	uint64_t write_errors;		/* tables that could not be written */
	uint64_t evicted;		/* entries removed to keep the bound */
};

#define CFI_CACHE_DEFAULT_MB 1024

/*
 * The cache in dir (created, 0700, when missing), at most max_bytes. NULL with *err set
 * (negative errno) when dir cannot be used: not ours, writable by others, not a directory.
 */
struct cfi_cache *cfi_cache__open(const char *dir, uint64_t max_bytes, int *err);
void cfi_cache__free(struct cfi_cache *c);

/* The default directory: $XPU_CACHE_DIR/cfi, else $XDG_CACHE_HOME/xpu-perf/cfi, else ~/.cache/xpu-perf/cfi. */
int cfi_cache__default_dir(char *buf, size_t len);

/*
 * The table of the ELF file open at fd, whose build-id is id (len 0: none), into t
 * (cfi_table__free frees it). 0 on a hit, -ENOENT on a miss or a refused entry. Thread safe.
 */
int cfi_cache__get(struct cfi_cache *c, int fd, const uint8_t *id, int id_len,
		   struct cfi_table *t);
/* Stores t as the table of the file at fd. Thread safe; failures are only counted. */
void cfi_cache__put(struct cfi_cache *c, int fd, const uint8_t *id, int id_len,
		    const struct cfi_table *t);

void cfi_cache__get_stats(struct cfi_cache *c, struct cfi_cache_stats *st);

#endif
