// SPDX-License-Identifier: MIT
/* The recorder's check of a client's batch (see cupti_wire.h). */
#include <string.h>

#include "cupti_wire.h"
#include "record_fields.h"

long xpu_cupti_wire_fix_batch(void *buf, size_t len, uint32_t pid)
{
	uint8_t *p = buf;
	size_t off = 0;
	long n = 0;

	if (len % 8)
		return -1;
	while (off < len) {
		const struct xpu_record_field *pid_field;
		const struct xpu_record_desc *d;
		struct xpu_record_header h;

		if (len - off < sizeof(h))
			return -1;
		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > len - off ||
		    h.size > XPU_RECORD_MAX_BYTES)
			return -1;
		d = xpu_record_desc(h.type);
		if (!d || !d->from_cupti || h.size - sizeof(h) < d->min_body)
			return -1;
		pid_field = xpu_record_field(d, XPU_FIELD_PID);
		if (h.type == XPU_REC_STRING) {
			struct xpu_rec_string s;

			memcpy(&s, p + off + sizeof(h), sizeof(s));
			if (!s.id || s.len > h.size - sizeof(h) - sizeof(s))
				return -1;
		} else if (pid_field) {
			memcpy(p + off + sizeof(h) + pid_field->offset, &pid, sizeof(pid));
		}
		off += h.size;
		n++;
	}
	return n;
}
