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
#include "trace_writer.h"

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
 * fuzz_records' input (see fuzz_records.c) framed by the real trace_writer into the trace
 * memfd: one control byte (bit 0: drop the trailer), then {u8 type, u16 size, body} records.
 * Returns the control byte, 0 for an empty input.
 */
static __attribute__((unused)) uint8_t fuzz_write_records(const uint8_t *data, size_t size)
{
	struct trace_writer_opts wo = { .no_compress = 1, .frame_raw_bytes = 512 };
	struct trace_writer *w;
	size_t pos = 1;
	uint8_t ctl;
	int fd;

	fuzz_trace_reset();
	if (!size)
		return 0;
	ctl = data[0];
	fd = dup(fuzz_trace_fd());
	if (fd < 0)
		__builtin_trap();
	w = trace_writer__open_fd(fd, &wo);
	if (!w)
		__builtin_trap();
	while (pos + 3 <= size) {
		/* mostly known types, sometimes one from the future */
		uint16_t type = data[pos] < 240 ? data[pos] % (XPU_REC_TYPE_MAX_KNOWN + 1)
						: 100 + data[pos];
		uint32_t len = data[pos + 1] | (uint32_t)data[pos + 2] << 8;

		pos += 3;
		if (len > size - pos)
			len = size - pos;
		trace_writer__append(w, type, data + pos, len, 0);
		pos += len;
	}
	trace_writer__close(w);
	/* no trailer, as after a crash: the writer always adds one, so cut it off */
	if (ctl & 1) {
		off_t end = lseek(fuzz_trace_fd(), 0, SEEK_END);

		if (end >= (off_t)sizeof(struct xpu_trailer) &&
		    ftruncate(fuzz_trace_fd(), end - (off_t)sizeof(struct xpu_trailer)))
			__builtin_trap();
	}
	return ctl;
}

/*
 * One format (fmt, modulo the number of formats: symbolizing real binaries named by the
 * seeds dominates, so one report per input keeps the rate up) over the trace in the memfd;
 * variant picks the view, weight and filters.
 */
static __attribute__((unused)) void fuzz_run_reports(unsigned int variant, unsigned int fmt)
{
	static const enum report_format formats[] = {
		FMT_TEXT, FMT_FOLDED, FMT_INFO, FMT_CHROME, FMT_SVG, FMT_JSONL, FMT_PERFETTO,
	};
	struct report_opts o = {
		.input = fuzz_path,
		.output = "/dev/null",
		.view = variant % 6,	/* merged, gpu, cpu, memory, off-cpu, wall */
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
	/*
	 * About a quarter of the inputs also: xpu-report diff of the trace against itself (both
	 * numbers mixed, as either alone follows the input's structure)
	 */
	if (((variant * 2654435761u) ^ fmt) % 4 == 0 &&
	    (o.format == FMT_TEXT || o.format == FMT_FOLDED || o.format == FMT_SVG)) {
		char *files[2] = { fuzz_path, fuzz_path };

		o.diff = true;
		o.diff_order_total = variant & 1;
		diff_run(&o, files);
	}
}

#endif
