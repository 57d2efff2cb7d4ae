// SPDX-License-Identifier: MIT
/* libFuzzer target: the trace reader over arbitrary bytes, and every record's typed view. */
#include <stdint.h>
#include <string.h>

#include "record_fields.h"
#include "trace_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[200];
	struct trace_reader *r = trace_reader__open_mem(data, size, err, sizeof(err));
	struct trace_record rec;
	uint8_t body[512];

	if (!r)
		return 0;
	while (trace_reader__next(r, &rec)) {
		uint32_t min = xpu_record_min_body(rec.type), tail;
		const uint8_t *t;

		if (!min || min > sizeof(body))
			continue;
		t = trace_record__get(&rec, body, min, &tail);
		/* Touch the tail so ASan sees any out-of-bounds length. */
		if (t && tail)
			body[0] ^= t[tail - 1];
	}
	trace_reader__close(r);
	return 0;
}
