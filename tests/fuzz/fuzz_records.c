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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t ctl;

	if (!size)
		return 0;
	ctl = fuzz_write_records(data, size);
	fuzz_run_reports(ctl >> 1 | (data[size - 1] & 0x80) | (uint32_t)(size > 1 ? data[1] : 0) << 8 |
				 (uint32_t)(size > 3 ? data[3] & 1 : 0) << 16,
			 size > 2 ? data[2] : 0);
	return 0;
}
