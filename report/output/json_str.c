// SPDX-License-Identifier: MIT
/* JSON string escaping with a length cap (see json_str.h). */
#include <stdint.h>
#include <string.h>

#include "output/json_str.h"

/* Length of the valid UTF-8 sequence at u[0..n), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *u, size_t n)
{
	size_t need, k;
	uint32_t cp;

	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		need = 1;
		cp = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		need = 2;
		cp = u[0] & 0x0f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		need = 3;
		cp = u[0] & 0x07;
	} else {
		return 0;
	}
	for (k = 1; k <= need; k++) {
		if (k >= n || (u[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[k] & 0x3f);
	}
	/* not overlong, not a surrogate, not past U+10FFFF */
	if ((need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (need == 3 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return need + 1;
}

size_t json_str(FILE *out, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, w = 0, cut = len > JSON_NAME_MAX ? JSON_NAME_MAX : len;

	w += fwrite("\"", 1, 1, out);
	while (i < cut) {
		unsigned char b = u[i];
		size_t run = 0, k;

		while (i + run < cut && u[i + run] >= 0x20 && u[i + run] < 0x7f &&
		       u[i + run] != '"' && u[i + run] != '\\')
			run++;
		if (run) {
			w += fwrite(s + i, 1, run, out);
			i += run;
			continue;
		}
		if (b < 0x80) {
			if (b == '"' || b == '\\')
				w += fprintf(out, "\\%c", b);
			else if (b == '\n')
				w += fwrite("\\n", 1, 2, out);
			else if (b == '\t')
				w += fwrite("\\t", 1, 2, out);
			else
				w += fprintf(out, "\\u%04x", b);
			i++;
			continue;
		}
		k = utf8_len(u + i, cut - i);
		if (!k && cut < len && utf8_len(u + i, len - i))
			break;	/* a valid sequence that the cap would split: cut before it */
		if (k)
			w += fwrite(s + i, 1, k, out);
		else
			w += fwrite("\\ufffd", 1, 6, out);
		i += k ? k : 1;
	}
	if (cut < len)
		w += fwrite("...", 1, 3, out);
	w += fwrite("\"", 1, 1, out);
	return w;
}

size_t json_cstr(FILE *out, const char *s)
{
	if (!s)
		return fwrite("null", 1, 4, out);
	return json_str(out, s, strlen(s));
}
