/* SPDX-License-Identifier: MIT */
/*
 * Finds the files of a trace DSO on this machine, build-id first, never a file whose
 * build-id differs from the recorded one. Lookup order:
 *   1. the recorded path, if its build-id matches (a file without one: if its size and mtime
 *      are the recorded ones)
 *   2. /usr/lib/debug/.build-id/xx/rest.debug and ~/.debug/.build-id/xx/rest{,/elf,/debug}
 *   3. --symfs DIR + recorded path, when that stays inside DIR (symlinks resolved), checked
 *      as 1
 *   4. the trace's archive (TRACE.xpa, see format-spec/ARCHIVE.md), by build-id
 *   5. the debuginfod servers of DEBUGINFOD_URLS, by build-id, for the ELF file or the debug
 *      file still missing (debuginfod_fetch.h)
 * With no_host_files only 3, 4 and 5. A recorded path with a ".." component, a relative one or
 * one in /proc, /sys or /dev (/proc/self/cwd/X is a file of this machine's current directory)
 * is used in none of them: the file is found by build-id or not at all.
 */
#ifndef XPU_REPORT_SYM_FILE_LOOKUP_H
#define XPU_REPORT_SYM_FILE_LOOKUP_H

#include <libelf.h>
#include <stdbool.h>

#include "trace/trace.h"

struct xpa;
struct xpa_budget;

struct file_lookup_opts {
	const char *symfs;
	bool no_host_files;
	struct xpa *const *archives;	/* the traces' archives (NULL entries: none) */
	size_t narchives;
	struct xpa_budget *archive_budget;	/* what their entries may hold (xpa.h) */
};

struct found_file {
	char *path;			/* the ELF file, or NULL */
	char *debug_path;		/* a separate debug file, or NULL */
	int afd;			/* memfd of the file taken from the archive, or -1 */
	bool from_archive;		/* path names afd */
	bool from_debuginfod;		/* path or debug_path came from a debuginfod server */
	bool mismatch;			/* a candidate was there, with another build-id */
	bool refused;			/* the recorded path has "..", is relative, is in
					 * /proc, /sys or /dev, or leads out of --symfs: no
					 * file was looked for by it */
};

/* Fills out (nothing found: both paths NULL). 0 or -ENOMEM; out is freed by the caller. */
int file_lookup__find(const struct tr_dso *d, const struct file_lookup_opts *o,
		      struct found_file *out);
void found_file__free(struct found_file *f);
/* The DSO's recorded build-id in hex ("" when it has none). */
void file_lookup__hex(const struct tr_dso *d, char hex[2 * XPU_BUILD_ID_MAX + 1]);
/*
 * Opens a regular ELF file for reading (safe_open.h decides what may be opened); NULL (and
 * *fd = -1) for anything else.
 */
Elf *file_lookup__open_elf(const char *path, int *fd);
/* The same for a descriptor already open (taken over: closed, *fd = -1, when not ELF). */
Elf *file_lookup__elf_fd(int *fd);
/*
 * Whether the open file is DSO record d's: its build-id, or without one the recorded size
 * and mtime (when recorded). Checked again on the descriptor the symbols are read from, since
 * the path was looked at before it was opened again and can lead elsewhere by then.
 */
bool file_lookup__is_recorded(const struct tr_dso *d, int fd);
/*
 * A recorded path made canonical for joining to --symfs: "//" and "." components dropped.
 * -EINVAL for a path that is relative, empty or has a ".." component (it could name a file
 * outside the root it is joined to), or that is in /proc, /sys or /dev (it can lead anywhere:
 * /proc/self/cwd, /proc/PID/root, /dev/fd); -ENAMETOOLONG when out (len bytes) is too small.
 */
int file_lookup__clean_path(const char *path, char *out, size_t len);

#endif
