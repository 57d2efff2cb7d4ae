/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/maps, read line by line into one struct per mapping: the only parser of that file
 * in xpu-record (mapping tracking, and finding a library in a process to call into it).
 */
#ifndef XPU_RECORD_MAPS_FILE_H
#define XPU_RECORD_MAPS_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct maps_entry {
	uint64_t start, end, pgoff, ino;
	uint32_t dev;			/* (major << 20) | minor, as the trace keys files */
	bool read, write, exec;
	/* as the kernel prints it: "" for anonymous memory, "[vdso]", " (deleted)" kept */
	const char *path;
	const char *range;		/* "start-end" in hex: the name of its /proc/PID/map_files entry */
};

/*
 * Calls fn for every mapping of pid, in address order, until it returns nonzero. Returns that
 * value, 0 when every mapping was seen, or negative errno when the file cannot be opened
 * (-ENOENT: no such process). entry and its strings live until fn returns.
 */
int maps_file__each(pid_t pid, int (*fn)(void *ctx, const struct maps_entry *e), void *ctx);
/*
 * The one mapping of pid that holds addr, asked of the kernel (PROCMAP_QUERY, Linux 6.11+)
 * instead of read among all the others: calls fn for it and returns fn's value, or -ESRCH (no
 * such process), -ENOENT (nothing mapped at addr), -EOPNOTSUPP (a kernel without the query:
 * read them all) or another negative errno.
 */
int maps_file__at(pid_t pid, uint64_t addr, int (*fn)(void *ctx, const struct maps_entry *e),
		  void *ctx);

#endif
