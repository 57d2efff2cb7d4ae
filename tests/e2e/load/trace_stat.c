// SPDX-License-Identifier: MIT
/*
 * Test helper: facts about a trace that the report does not print, as shell-readable lines.
 *   trace_stat --now        CLOCK_MONOTONIC now, in ns (the clock of every trace timestamp)
 *   trace_stat FILE         samples=N last_sample_ns=T lost_ringbuf=N lost_total=N end=E
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "trace_reader.h"

int main(int argc, char **argv)
{
	uint64_t samples = 0, last = 0, lost_rb = 0, lost_all = 0;
	const struct trace_reader_status *st;
	struct trace_reader *r;
	struct trace_record rec;
	char err[256];

	if (argc == 2 && !strcmp(argv[1], "--now")) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("%llu\n", (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: trace_stat --now | FILE\n");
		return 2;
	}
	r = trace_reader__open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "trace_stat: %s\n", err);
		return 1;
	}
	while (trace_reader__next(r, &rec)) {
		if (rec.type == XPU_REC_CPU_SAMPLE) {
			struct xpu_rec_cpu_sample s;

			trace_record__get(&rec, &s, sizeof(s), NULL);
			samples++;
			if (s.ts_ns > last)
				last = s.ts_ns;
		} else if (rec.type == XPU_REC_LOST) {
			struct xpu_rec_lost l;

			trace_record__get(&rec, &l, sizeof(l), NULL);
			lost_all += l.count;
			if (l.source == XPU_LOST_RINGBUF)
				lost_rb += l.count;
		}
	}
	st = trace_reader__status(r);
	printf("samples=%llu last_sample_ns=%llu lost_ringbuf=%llu lost_total=%llu end=%d\n",
	       (unsigned long long)samples, (unsigned long long)last,
	       (unsigned long long)lost_rb, (unsigned long long)lost_all, (int)st->end);
	trace_reader__close(r);
	return 0;
}
