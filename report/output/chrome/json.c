// SPDX-License-Identifier: MIT
/*
 * The chrome output's JSON text. Timestamps are CLOCK_REALTIME microseconds with three
 * decimals (exact ns), mapped from CLOCK_MONOTONIC through the CLOCK_SYNC pairs
 * (trace/clock_map.h), so traces of several hosts line up. Events are written as they are produced; viewers sort, so
 * file order is not time order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "output/chrome/chrome.h"

void chrome__put(struct chrome *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfprintf(c->out, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->bytes += n;
}

void chrome__putb(struct chrome *c, const char *s, size_t n)
{
	c->bytes += fwrite(s, 1, n, c->out);
}

/*
 * A JSON string: quotes, backslashes and control bytes escaped; bytes that are not valid
 * UTF-8 (kernel names and comms are arbitrary bytes) become U+FFFD, so the file always
 * parses. Cut at OUT_NAME_MAX_BYTES (on a character boundary), marked "...".
 */
void chrome__str(struct chrome *c, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;
	bool cut = len > OUT_NAME_MAX_BYTES;

	if (cut) {
		len = OUT_NAME_MAX_BYTES;
		while (len && (u[len] & 0xc0) == 0x80)
			len--;
	}

	chrome__putb(c, "\"", 1);
	while (i < len) {
		unsigned char b = u[i];
		size_t need = 0;
		uint32_t cp;

		if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
			i++;
			run++;
			continue;
		}
		if (run)
			chrome__putb(c, s + i - run, run);
		run = 0;
		if (b < 0x80) {
			if (b == '"')
				chrome__putb(c, "\\\"", 2);
			else if (b == '\\')
				chrome__putb(c, "\\\\", 2);
			else if (b == '\n')
				chrome__putb(c, "\\n", 2);
			else if (b == '\t')
				chrome__putb(c, "\\t", 2);
			else
				chrome__put(c, "\\u%04x", b);
			i++;
			continue;
		}
		if (b >= 0xc2 && b <= 0xdf) {
			need = 1;
			cp = b & 0x1f;
		} else if (b >= 0xe0 && b <= 0xef) {
			need = 2;
			cp = b & 0x0f;
		} else if (b >= 0xf0 && b <= 0xf4) {
			need = 3;
			cp = b & 0x07;
		} else {
			need = 0;
			cp = 0;
		}
		if (need) {
			size_t k;

			for (k = 1; k <= need && i + k < len; k++) {
				if ((u[i + k] & 0xc0) != 0x80)
					break;
				cp = cp << 6 | (u[i + k] & 0x3f);
			}
			/* complete, not overlong, not a surrogate, not past U+10FFFF */
			if (k == need + 1 && !(need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) &&
			    !(need == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
				chrome__putb(c, s + i, need + 1);
				i += need + 1;
				continue;
			}
		}
		chrome__putb(c, "\\ufffd", 6);
		i++;
	}
	if (run)
		chrome__putb(c, s + len - run, run);
	chrome__putb(c, cut ? "...\"" : "\"", cut ? 4 : 1);
}

void chrome__cstr(struct chrome *c, const char *s)
{
	chrome__str(c, s, strlen(s));
}

static void put_us(struct chrome *c, uint64_t ns)
{
	chrome__put(c, "%llu.%02u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000) / 10);
}

void chrome__begin(struct chrome *c, char ph, uint32_t pid, uint32_t tid, uint64_t mono)
{
	chrome__put(c, "%s{\"ph\":\"%c\",\"pid\":%u,\"tid\":%u,\"ts\":", c->events ? ",\n" : "\n", ph, pid,
		    tid);
	put_us(c, grid_ns(chrome__realtime(c, mono)));
	c->events++;
}

void chrome__end(struct chrome *c)
{
	chrome__putb(c, "}", 1);
	/* only about bytes written: past --max-output nothing is, and that is said instead */
	if (!c->warned && c->bytes > c->warn_bytes && !out__failed(c->out)) {
		c->warned = true;
		fprintf(stderr, "xpu-report: warning: the chrome output passed %llu MB; viewers may fail to open it: narrow it with --time-range=START,END (seconds) or --pid=PID\n",
			(unsigned long long)(c->warn_bytes >> 20));
	}
}

/* dur of an X event from two monotonic times, mapped separately so slices stay nested */
void chrome__dur(struct chrome *c, uint64_t start, uint64_t end)
{
	uint64_t a = grid_ns(chrome__realtime(c, start));
	uint64_t b = grid_ns(chrome__realtime(c, end > start ? end : start));

	chrome__put(c, ",\"dur\":");
	put_us(c, b > a ? b - a : 0);
}
