// SPDX-License-Identifier: MIT
/*
 * Source lines of Python instructions from the line tables the recorder copied (PY_CODE).
 * Two formats, both read as untrusted bytes: a malformed or cut table gives -1, never a read
 * past its end.
 *
 * 3.10 (co_linetable): pairs of (byte delta, signed line delta); each pair covers the next
 * `byte delta` bytes of code, with the line moved by `line delta` (-128: no line).
 *
 * 3.11+ (location table): entries of a first byte 1CCCCLLL (code C, length L+1 code units)
 * and, by code, varints: 15 no location; 14 long form (signed line delta, then end line,
 * column, end column); 13 no column (signed line delta); 10-12 one line, line delta C-10,
 * then column and end column bytes; 0-9 short form, same line, one column byte.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym/pyline.h"
#include "xpu_format.h"

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint32_t next_byte(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

/* 6 bits a byte, least significant first, bit 6 set on all but the last */
static uint32_t varint(struct cursor *c)
{
	uint32_t b = next_byte(c), v = b & 63, shift = 6;

	while ((b & 64) && !c->bad) {
		b = next_byte(c);
		if (shift > 30) {
			c->bad = true;
			return 0;
		}
		v |= (b & 63) << shift;
		shift += 6;
	}
	return v;
}

static int32_t svarint(struct cursor *c)
{
	uint32_t v = varint(c);

	return (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

static int line_311(const uint8_t *t, uint32_t len, int32_t first, uint32_t instr)
{
	struct cursor c = { t, t + len, false };
	int64_t line = first;
	uint64_t at = 0;	/* code units covered so far */

	while (c.p < c.end) {
		uint32_t b = next_byte(&c), code = b >> 3 & 15, units = (b & 7) + 1;
		bool has_line = true;

		if (!(b & 128))
			return -1;	/* not at an entry's first byte: malformed */
		switch (code) {
		case 15:
			has_line = false;
			break;
		case 14:
			line += svarint(&c);
			varint(&c);
			varint(&c);
			varint(&c);
			break;
		case 13:
			line += svarint(&c);
			break;
		case 10: case 11: case 12:
			line += code - 10;
			next_byte(&c);
			next_byte(&c);
			break;
		default:
			next_byte(&c);
			break;
		}
		if (c.bad || line < INT32_MIN || line > INT32_MAX)
			return -1;
		if (instr < at + units)
			return has_line && line >= 0 ? (int)line : -1;
		at += units;
	}
	return -1;
}

static int line_310(const uint8_t *t, uint32_t len, int32_t first, uint32_t instr)
{
	uint64_t byte = (uint64_t)instr * 2, at = 0;
	int64_t line = first;
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2) {
		int8_t dl = (int8_t)t[i + 1];

		if (dl != -128)
			line += dl;
		if (byte < at + t[i])
			return dl != -128 && line >= 0 && line <= INT32_MAX ? (int)line : -1;
		at += t[i];
	}
	return -1;
}

int pyline__line(uint16_t kind, const uint8_t *table, uint32_t len, int32_t firstlineno,
		 uint32_t instr)
{
	if (!table || !len)
		return -1;
	switch (kind) {
	case XPU_PY_LINETABLE_310:
		return line_310(table, len, firstlineno, instr);
	case XPU_PY_LINETABLE_311:
		return line_311(table, len, firstlineno, instr);
	default:
		return -1;
	}
}
