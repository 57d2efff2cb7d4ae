// SPDX-License-Identifier: MIT
/* Trace strings made safe for a terminal (see term_safe.h). */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "base/term_safe.h"

/*
 * The length of the valid UTF-8 character at u (n bytes there), 0 if it is not one, or
 * SIZE_MAX if the n bytes are a valid start that more bytes could finish.
 */
static size_t utf8_char(const unsigned char *u, size_t n)
{
	size_t need, k;
	uint32_t cp;

	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		need = 2;
		cp = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		need = 3;
		cp = u[0] & 0x0f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		need = 4;
		cp = u[0] & 0x07;
	} else {
		return 0;
	}
	for (k = 1; k < need; k++) {
		if (k >= n)
			return SIZE_MAX;
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[k] & 0x3f);
		/* overlong forms, surrogates and past U+10FFFF, as soon as the second byte tells */
		if (k == 1 && ((need == 3 && (cp < 0x20 || (cp >= 0x360 && cp <= 0x37f))) ||
			       (need == 4 && (cp < 0x10 || cp > 0x10f))))
			return 0;
	}
	return need;
}

static bool is_control(const unsigned char *u, size_t len)
{
	if (len == 1)
		return (u[0] < 0x20 && u[0] != '\t' && u[0] != '\n') || u[0] == 0x7f;
	/* C1: U+0080..U+009F, which some terminals take as CSI and the like */
	return len == 2 && u[0] == 0xc2 && u[1] < 0xa0;
}

static int emit_octal(const unsigned char *u, size_t len, term_safe_emit emit, void *arg)
{
	char buf[16];
	size_t i;

	for (i = 0; i < len; i++) {
		buf[0] = '\\';
		buf[1] = (char)('0' + (u[i] >> 6));
		buf[2] = (char)('0' + ((u[i] >> 3) & 7));
		buf[3] = (char)('0' + (u[i] & 7));
		if (emit(arg, buf, 4))
			return -1;
	}
	return 0;
}

/* Escapes [u, u + n) whole: a character cut at the end is held, unless final. */
static int escape(struct term_safe *ts, const unsigned char *u, size_t n, bool final,
		  term_safe_emit emit, void *arg)
{
	size_t i = 0, run = 0;

	while (i < n) {
		size_t len = utf8_char(u + i, n - i);

		if (len == SIZE_MAX && !final) {
			if (i > run && emit(arg, (const char *)u + run, i - run))
				return -1;
			memcpy(ts->held, u + i, n - i);
			ts->nheld = n - i;
			return 0;
		}
		if (len == SIZE_MAX || !len || is_control(u + i, len)) {
			if (!len || len == SIZE_MAX)
				len = 1;
			if ((i > run && emit(arg, (const char *)u + run, i - run)) ||
			    emit_octal(u + i, len, emit, arg))
				return -1;
			i += len;
			run = i;
			continue;
		}
		i += len;
	}
	return i > run ? emit(arg, (const char *)u + run, i - run) : 0;
}

int term_safe__write(struct term_safe *ts, const char *buf, size_t n, term_safe_emit emit,
		     void *arg)
{
	const unsigned char *u = (const unsigned char *)buf;

	/* a held start: finish it with the bytes it needs (at most 3), or escape it */
	while (ts->nheld && n) {
		unsigned char c[4];
		size_t have = ts->nheld, take = n < 4 - have ? n : 4 - have, len;

		memcpy(c, ts->held, have);
		memcpy(c + have, u, take);
		len = utf8_char(c, have + take);
		ts->nheld = 0;
		if (len == SIZE_MAX) {
			/* still not finished: all of n went in */
			memcpy(ts->held, c, have + take);
			ts->nheld = have + take;
			return 0;
		}
		if (len && len > have) {
			if (is_control(c, len) ? emit_octal(c, len, emit, arg) :
						 emit(arg, (const char *)c, len))
				return -1;
			u += len - have;
			n -= len - have;
		} else {
			/* the held first byte is no character: escaped, the rest looked at again */
			if (emit_octal(c, 1, emit, arg))
				return -1;
			if (have > 1) {
				memmove(ts->held, c + 1, have - 1);
				ts->nheld = have - 1;
				if (escape(ts, ts->held, ts->nheld, true, emit, arg))
					return -1;
				ts->nheld = 0;
			}
		}
	}
	return escape(ts, u, n, false, emit, arg);
}

int term_safe__flush(struct term_safe *ts, term_safe_emit emit, void *arg)
{
	unsigned char c[4];
	size_t n = ts->nheld;

	memcpy(c, ts->held, n);
	ts->nheld = 0;
	return escape(ts, c, n, true, emit, arg);
}

void term_safe__put_name(FILE *out, const char *s)
{
	const char *p = s;

	for (; *p; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t') {
			fwrite(s, 1, (size_t)(p - s), out);
			fprintf(out, "\\%03o", (unsigned char)*p);
			s = p + 1;
		}
	}
	fwrite(s, 1, (size_t)(p - s), out);
}

/* ---- stderr ---------------------------------------------------------------------------- */

static FILE *raw_err;
static struct term_safe err_state;

static int write_raw(void *arg, const char *p, size_t n)
{
	return fwrite(p, 1, n, arg) == n ? 0 : -1;
}

static ssize_t err_write(void *cookie, const char *buf, size_t n)
{
	int r = term_safe__write(&err_state, buf, n, write_raw, cookie);

	fflush(cookie);
	return r ? -1 : (ssize_t)n;
}

static int err_close(void *cookie)
{
	term_safe__flush(&err_state, write_raw, cookie);
	return fflush(cookie);
}

FILE *term_safe__wrap_stderr(void)
{
	cookie_io_functions_t io = { .write = err_write, .close = err_close };
	FILE *raw, *safe;

	if (raw_err)
		return raw_err;
	raw = fdopen(dup(STDERR_FILENO), "w");
	if (!raw)
		return stderr;
	setvbuf(raw, NULL, _IONBF, 0);
	safe = fopencookie(raw, "w", io);
	if (!safe) {
		fclose(raw);
		return stderr;
	}
	setvbuf(safe, NULL, _IOLBF, 0);
	raw_err = raw;
	stderr = safe;
	return raw;
}

FILE *term_safe__raw_stderr(void)
{
	return raw_err ? raw_err : stderr;
}
