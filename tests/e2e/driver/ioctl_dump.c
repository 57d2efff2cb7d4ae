// SPDX-License-Identifier: MIT
/*
 * Prints every DRIVER_IOCTL record of a trace, one line each, for tests/e2e/test_driver_ioctl.sh:
 *   pid tid request(hex) fd ret timed driver_ns duration_ns file
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "trace_reader.h"
#include "xpu_format.h"

static char names[4096][128];

int main(int argc, char **argv)
{
	struct trace_record rec;
	struct trace_reader *r;
	char err[256];

	if (argc != 2) {
		fprintf(stderr, "usage: ioctl_dump TRACE\n");
		return 2;
	}
	r = trace_reader__open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "ioctl_dump: %s\n", err);
		return 1;
	}
	while (trace_reader__next(r, &rec) > 0) {
		if (rec.type == XPU_REC_STRING) {
			struct xpu_rec_string s;
			uint32_t tail = 0;
			const char *p = trace_record__get(&rec, &s, sizeof(s), &tail);

			if (s.id < 4096 && p && s.len <= tail)
				snprintf(names[s.id], sizeof(names[0]), "%.*s", (int)s.len, p);
		} else if (rec.type == XPU_REC_DRIVER_IOCTL) {
			struct xpu_rec_driver_ioctl d;

			trace_record__get(&rec, &d, sizeof(d), NULL);
			printf("%u %u %#x %u %" PRId64 " %u %" PRIu64 " %" PRIu64 " %s\n", d.pid, d.tid,
			       d.request, d.fd, d.ret, d.flags & XPU_IOCTL_DRIVER_TIMED, d.driver_ns,
			       d.end_ns - d.start_ns, d.file_str < 4096 ? names[d.file_str] : "?");
		}
	}
	trace_reader__close(r);
	return 0;
}
