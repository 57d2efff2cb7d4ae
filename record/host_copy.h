/* SPDX-License-Identifier: MIT */
/*
 * Copies of the files a traced process maps that the host cannot reach by their path (a
 * library deleted or replaced since it was mapped, a memfd, a file in another mount
 * namespace), taken while the process lives, through its /proc/PID/map_files descriptor, or,
 * for a file its path still reached when it was mapped, at the last look before the pack
 * through that descriptor kept open (bounded: HOST_COPY_WATCH_MAX and an eighth of the
 * descriptor limit; the files beyond are counted, not watched): the symbol pack (symbol_pack.h) reads them as its --symfs, by the recorded path, and they are
 * removed with the directory when the pack is made. A copy keeps the file's mtime: the pack
 * knows a file without build-id by its recorded size and mtime. Bounded in bytes; what is left
 * out is counted. Owned by the drain thread, then the main thread.
 */
#ifndef XPU_RECORD_HOST_COPY_H
#define XPU_RECORD_HOST_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "user_creds.h"

/* copies in all at most (a container's libraries), and a file at most */
#define HOST_COPY_MAX_BYTES (1ull << 30)
#define HOST_COPY_FILE_MAX_BYTES (512ull << 20)
/* files the host reached when mapped, their descriptors held for the last look, at most */
#define HOST_COPY_WATCH_MAX 4096u

struct host_copy;

struct host_copy_stats {
	uint64_t files;			/* copied */
	uint64_t bytes;
	uint64_t skipped;		/* over the bounds, unreadable to the sudo user, or failed */
	uint64_t late;			/* of files: replaced or deleted after they were mapped */
	uint64_t unwatched;		/* reachable when mapped, not held for the last look */
};

/*
 * Copies go in a directory made beside trace (on first need). user: under sudo, the user
 * whose rights the pack has (a file they could not read is not copied; the copies are
 * theirs); NULL for root.
 */
struct host_copy *host_copy__new(const char *trace, const struct user_creds *user);
/* Removes the directory and every copy. */
void host_copy__free(struct host_copy *hc);
/*
 * The file mapped (fd, on the mapped inode dev/ino) under path, as /proc/PID/maps names it: a
 * copy when path does not lead to that very inode on the host (true then), else watched for
 * the last look.
 */
bool host_copy__add(struct host_copy *hc, int fd, const char *path, uint32_t dev, uint64_t ino);
/*
 * Before the pack: every file the host reached when it was mapped whose path leads elsewhere
 * now (replaced, deleted) is copied from the descriptor kept; the descriptors are closed.
 */
void host_copy__last_look(struct host_copy *hc);
/* The directory to give the pack as --symfs, or NULL when nothing was copied. */
const char *host_copy__dir(const struct host_copy *hc);
void host_copy__get_stats(const struct host_copy *hc, struct host_copy_stats *st);

#endif
