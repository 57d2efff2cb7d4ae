// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what one hostile input can cost in output (issue 18). The input is
 * fuzz_records' record stream; every format runs over it (views and filters as there, no
 * --max-output) into a memfd, and an output longer than OUTPUT_FACTOR times the input (plus
 * OUTPUT_SLACK for headers and the fixed sections) is a finding. Names are cut at
 * OUT_NAME_MAX_BYTES in every output, so a string cannot be repeated at full length by each
 * event that names it: a 1 MiB name in 2,252 events wrote 2,000 times its input before.
 */
#include <stdint.h>
#include <sys/stat.h>

#include "fuzz_report.h"

#define OUTPUT_FACTOR 1024
#define OUTPUT_SLACK (1 << 20)

static int out_fd = -1;
static char out_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum report_format formats[] = {
		FMT_TEXT, FMT_FOLDED, FMT_INFO, FMT_CHROME, FMT_SVG, FMT_PPROF, FMT_PERFETTO,
	};
	struct report_opts o = { .input = fuzz_path, .max_output_bytes = UINT64_MAX };
	struct stat sb;
	uint8_t ctl;
	size_t f;

	if (!size)
		return 0;
	if (out_fd < 0) {
		out_fd = memfd_create("xpu-fuzz-out", MFD_CLOEXEC);
		if (out_fd < 0)
			__builtin_trap();
		snprintf(out_path, sizeof(out_path), "/proc/self/fd/%d", out_fd);
	}
	ctl = fuzz_write_records(data, size);
	o.output = out_path;
	o.view = (ctl >> 1) % 3;
	if ((ctl >> 5) & 1)	/* the off-CPU views too */
		o.view = (ctl >> 6) & 1 ? VIEW_WALL : VIEW_OFF_CPU;
	o.weight = (ctl >> 3) & 1;
	o.no_host_files = (ctl >> 4) & 1;
	for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		o.format = formats[f];
		report_run(&o);
		if (fstat(out_fd, &sb))
			__builtin_trap();
		if ((uint64_t)sb.st_size > (uint64_t)OUTPUT_FACTOR * size + OUTPUT_SLACK) {
			fprintf(stderr, "fuzz_output: format %d wrote %lld bytes from %zu input bytes\n",
				(int)o.format, (long long)sb.st_size, size);
			__builtin_trap();
		}
	}
	return 0;
}
