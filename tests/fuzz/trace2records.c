// SPDX-License-Identifier: MIT
/*
 * Turns a real trace into a seed for fuzz_records: a control byte, then every record as
 * {u8 type, u16 size, body}. Records over 64 KiB (big KSYMS chunks) are cut; fuzz inputs are
 * small anyway.
 *
 * Every DSO gets a build-id that matches no file: symbolizing the real libraries a trace names
 * (libdw, compressed debug info) costs ~100 ms per run, and the files are not the hostile
 * input; the trace is. Real files are still opened by fuzz_report and the golden tests.
 */
#include <stdio.h>
#include <string.h>

#include "trace_reader.h"

int main(int argc, char **argv)
{
	struct trace_reader *r;
	struct trace_record rec;
	char err[256];
	FILE *out;

	if (argc != 3) {
		fprintf(stderr, "usage: trace2records TRACE.xpu OUT\n");
		return 2;
	}
	r = trace_reader__open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "trace2records: %s\n", err);
		return 1;
	}
	out = fopen(argv[2], "w");
	if (!out) {
		perror(argv[2]);
		trace_reader__close(r);
		return 1;
	}
	fputc(0, out);
	while (trace_reader__next(r, &rec)) {
		uint32_t len = rec.body_size > 0xffff ? 0xffff : rec.body_size;
		const void *body = rec.body;
		struct xpu_rec_dso d;

		if (rec.type > 0xff)
			continue;
		if (rec.type == XPU_REC_DSO && len == sizeof(d)) {
			memcpy(&d, rec.body, sizeof(d));
			if (!d.build_id_len)
				d.build_id_len = 1;
			d.build_id[0] ^= 0xa5;
			body = &d;
		}
		fputc(rec.type, out);
		fputc(len & 0xff, out);
		fputc(len >> 8, out);
		fwrite(body, 1, len, out);
	}
	trace_reader__close(r);
	return fclose(out) ? 1 : 0;
}
