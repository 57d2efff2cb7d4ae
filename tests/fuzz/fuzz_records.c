// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: xpu-report over well-framed traces with arbitrary records. Random bytes
 * almost never pass a frame CRC, so here the input is a raw record stream that the harness
 * frames with the real trace_writer (uncompressed, small frames, valid CRCs): mutations land
 * in the loader, symbolizer, correlator and outputs instead of the frame check.
 *
 * Input: one control byte, then records as {u8 type, u16 size (LE), size bytes of body}; a
 * size past the end takes what is left. Control bit 0 drops the trailer (a crashed recorder),
 * the other bits pick the report variant; the next two bytes pick filters and the format.
 */
#include <stdint.h>

#include "fuzz_report.h"
#include "trace_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_writer_opts wo = { .no_compress = 1, .frame_raw_bytes = 512 };
	struct trace_writer *w;
	size_t pos = 1;
	uint8_t ctl;
	int fd;

	if (!size)
		return 0;
	ctl = data[0];
	fuzz_trace_reset();
	fd = dup(fuzz_trace_fd());
	if (fd < 0)
		__builtin_trap();
	w = trace_writer__open_fd(fd, &wo);
	if (!w)
		__builtin_trap();
	while (pos + 3 <= size) {
		/* mostly known types (1..29), sometimes one from the future */
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
	fuzz_run_reports(ctl >> 1 | (data[size - 1] & 0x80) | (uint32_t)(size > 1 ? data[1] : 0) << 8 |
				 (uint32_t)(size > 3 ? data[3] & 1 : 0) << 16,
			 size > 2 ? data[2] : 0);
	return 0;
}
