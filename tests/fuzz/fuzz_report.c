// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: xpu-report, every format, over an arbitrary file. Seeded with real traces
 * whose frames carry CRCs, so mutations mostly test the framing; fuzz_records.c goes deeper.
 */
#include <stdint.h>

#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd;

	fuzz_trace_reset();
	fd = fuzz_trace_fd();
	if (size && write(fd, data, size) != (ssize_t)size)
		__builtin_trap();
	/* options from the last bytes: the first ones are the fixed magic */
	fuzz_run_reports(size > 3 ? data[size - 1] | (uint32_t)data[size - 3] << 8 |
					    (uint32_t)(data[size - 2] & 0x80) << 9 : 0,
			 size > 1 ? data[size - 2] : 0);
	return 0;
}
