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

#endif
