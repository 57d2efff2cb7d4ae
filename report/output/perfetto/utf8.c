// SPDX-License-Identifier: MIT
/*
 * The perfetto output's strings: Perfetto's string fields are UTF-8 (protoc and the trace
 * processor refuse or mangle others), and the trace's names are arbitrary bytes (kernel
 * names, comms cut mid-character). So bytes that are not valid UTF-8 become U+FFFD, and a
 * string past OUT_NAME_MAX_BYTES is cut on a character boundary, "..." marking the cut, as
 * in every output.
 */
#include <stdlib.h>
#include <string.h>

#include "output/perfetto/perfetto.h"

/* The length of the valid UTF-8 sequence at u[0..len), 0 if it is not one. */
static size_t seq_len(const unsigned char *u, size_t len)
{
	size_t need, k;
	uint32_t cp;

	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		need = 1, cp = u[0] & 0x1f;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		need = 2, cp = u[0] & 0x0f;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		need = 3, cp = u[0] & 0x07;
	else
		return 0;
	if (need >= len)
		return 0;
	for (k = 1; k <= need; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[k] & 0x3f);
	}
	/* not overlong, not a surrogate, not past U+10FFFF */
	if ((need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (need == 3 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return need + 1;
}

void pf__str(struct pb *p, uint32_t field, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char *buf;
	size_t i, k, n = 0;
	bool cut = false;

	for (i = 0; i < len && i < OUT_NAME_MAX_BYTES; i += k) {
		k = seq_len(u + i, len - i);
		if (!k || i + k > OUT_NAME_MAX_BYTES)
			break;
	}
	if (i == len) {
		pb__bytes(p, field, s, len);
		return;
	}
	/* each byte becomes at most the 3 of U+FFFD; 3 more for the cut's "..." */
	buf = malloc((len < OUT_NAME_MAX_BYTES ? len : OUT_NAME_MAX_BYTES) * 3 + 3);
	if (!buf) {
		p->oom = true;
		return;
	}
	for (i = 0; i < len; i += k) {
		k = seq_len(u + i, len - i);
		if (i + (k ? k : 1) > OUT_NAME_MAX_BYTES) {
			cut = true;
			break;
		}
		if (k) {
			memcpy(buf + n, u + i, k);
			n += k;
		} else {
			memcpy(buf + n, "\xef\xbf\xbd", 3);
			n += 3;
			k = 1;
		}
	}
	if (cut) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	pb__bytes(p, field, buf, n);
	free(buf);
}
