/* SPDX-License-Identifier: MIT */
/*
 * Shared by the report fuzz targets: runs xpu-report's report_run() over an in-memory trace in
 * every format and view, output to /dev/null. The trace goes through a memfd so the real file
 * path (open, fstat, mmap) is exercised, not a test-only shortcut.
 */
#ifndef XPU_FUZZ_REPORT_H
#define XPU_FUZZ_REPORT_H

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/cmd.h"

static int fuzz_memfd = -1;
static char fuzz_path[64];

static int fuzz_trace_fd(void)
{
	if (fuzz_memfd < 0) {
		fuzz_memfd = memfd_create("xpu-fuzz", MFD_CLOEXEC);
		if (fuzz_memfd < 0) {
			perror("memfd_create");
			__builtin_trap();
		}
		snprintf(fuzz_path, sizeof(fuzz_path), "/proc/self/fd/%d", fuzz_memfd);
	}
	return fuzz_memfd;
}

/* Empties the memfd; the caller writes the trace through fuzz_trace_fd() (or a dup of it). */
static void fuzz_trace_reset(void)
{
	int fd = fuzz_trace_fd();

	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		__builtin_trap();
}

/*
 * One format (fmt, modulo the number of formats: symbolizing real binaries named by the
 * seeds dominates, so one report per input keeps the rate up) over the trace in the memfd;
 * variant picks the view, weight and filters.
 */
static void fuzz_run_reports(unsigned int variant, unsigned int fmt)
{
	static const enum report_format formats[] = {
		FMT_TEXT, FMT_FOLDED, FMT_INFO, FMT_CHROME, FMT_SVG,
	};
	struct report_opts o = {
		.input = fuzz_path,
		.output = "/dev/null",
		.view = variant % 3,
		.weight = (variant >> 2) & 1,
		.strict = (variant >> 3) & 1,
	};

	/* Filters: exercised on some inputs only, so the unfiltered path stays the common one. */
	if (variant & 0x10) {
		o.npids = 1;
		o.pids[0] = variant >> 8;
	}
	if (variant & 0x20) {
		o.has_tid = true;
		o.tid = variant >> 8;
	}
	if (variant & 0x40)
		o.comm = "a";
	if (variant & 0x80) {
		o.has_range = true;
		o.range_start_s = ((variant >> 8) & 0xf) * 0.01;
		o.range_end_s = o.range_start_s + ((variant >> 12) + 1) * 0.01;
	}
	/* the trace names host files; without them only the trace itself is parsed */
	o.no_host_files = (variant >> 16) & 1;
	o.format = formats[fmt % (sizeof(formats) / sizeof(formats[0]))];
	report_run(&o);
}

#endif
