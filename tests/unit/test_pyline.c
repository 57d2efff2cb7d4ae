// SPDX-License-Identifier: MIT
/*
 * report/sym/pyline.c against line tables made by the real interpreters: tests/unit/data/pyline-3.X.txt
 * were written by tests/unit/gen_pyline_vectors.py under each CPython (co_lines() gives the
 * expected line of every instruction), and test_pyline_vectors.sh rewrites and compares them
 * where those interpreters are installed. Also hostile tables: every prefix of the real ones,
 * malformed, overflowing, and random bytes (run under ASan by the sanitizer pass of make test).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/pyline.h"
#include "unit.h"
#include "xpu_format.h"

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned int b;

	if (!strcmp(s, "-"))
		return 0;
	while (n < max && sscanf(s + 2 * n, "%2x", &b) == 1)
		out[n++] = (uint8_t)b;
	return n;
}

/*
 * A table cut anywhere (the recorder stores at most XPU_PY_LINETABLE_MAX_BYTES) still gives
 * either the right line or none, and is read only up to the cut: each prefix is a heap block
 * of its own size, so ASan sees a read past it.
 */
static int check_prefixes(unsigned int kind, const uint8_t *table, size_t len, int first,
			  const unsigned int *instrs, const int *wants, unsigned int n)
{
	size_t cut;
	unsigned int i;
	int bad = 0;

	for (cut = 0; cut < len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		if (!copy)
			return 1;
		memcpy(copy, table, cut);
		for (i = 0; i < n; i++) {
			int got = pyline__line((uint16_t)kind, cut ? copy : NULL, (uint32_t)cut, first,
					       instrs[i]);

			if (got != -1 && got != wants[i] && bad++ < 5)
				fprintf(stderr, "cut at %zu of %zu: instr %u: got %d, want %d or -1\n",
					cut, len, instrs[i], got, wants[i]);
		}
		free(copy);
	}
	return bad;
}

#define MAX_INSTRS 8192

static int check_file(const char *path, unsigned int *checked, unsigned int *objects)
{
	static char line[1 << 20];
	static char hex[1 << 17];
	static uint8_t table[1 << 16];
	static unsigned int instrs[MAX_INSTRS];
	static int wants[MAX_INSTRS];
	FILE *f = fopen(path, "r");
	int bad = 0;

	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int kind, instr, n_instrs = 0;
		int first, want, pos = 0, n;
		size_t len;
		const char *p;

		if (line[0] == '#')
			continue;
		if (!strchr(line, '\n') ||
		    sscanf(line, "%u %d %131071s %n", &kind, &first, hex, &pos) != 3 ||
		    strlen(hex) >= sizeof(hex) - 1) {
			fprintf(stderr, "%s: line not understood: %.60s\n", path, line);
			bad++;
			continue;
		}
		len = unhex(hex, table, sizeof(table));
		if (strcmp(hex, "-") && len * 2 != strlen(hex)) {
			fprintf(stderr, "%s: bad hex: %.60s\n", path, hex);
			bad++;
			continue;
		}
		(*objects)++;
		for (p = line + pos; sscanf(p, "%u:%d%n", &instr, &want, &n) == 2; p += n) {
			int got = pyline__line((uint16_t)kind, table, (uint32_t)len, first, instr);

			(*checked)++;
			if (got != want) {
				fprintf(stderr, "%s: first line %d instr %u: got %d, want %d\n", path,
					first, instr, got, want);
				bad++;
			}
			if (n_instrs < MAX_INSTRS) {
				instrs[n_instrs] = instr;
				wants[n_instrs++] = want;
			}
		}
		bad += check_prefixes(kind, table, len, first, instrs, wants, n_instrs);
	}
	fclose(f);
	return bad;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* Random tables of both kinds: any answer is -1 or a line, and no read leaves the table. */
static int check_random(void)
{
	static const int32_t firsts[] = { 0, 1, 100, INT32_MAX, INT32_MAX - 1, -1, INT32_MIN };
	int bad = 0, round;

	for (round = 0; round < 20000; round++) {
		uint32_t len = next_rand() % 48, i;
		uint8_t *t = malloc(len ? len : 1);
		int got;

		if (!t)
			return 1;
		for (i = 0; i < len; i++) {
			t[i] = (uint8_t)next_rand();
			if (round & 1)	/* 3.11-like: mostly entry heads and varint bytes */
				t[i] |= (next_rand() & 3) ? 0x80 : 0x40;
		}
		got = pyline__line((uint16_t)(round % 3 ? round % 3 : 2), t, len,
				   firsts[next_rand() % 7], next_rand() % 64);
		if (got < -1)
			bad++;
		free(t);
	}
	return bad;
}
int main(void)
{
	static const char *const files[] = {
		"tests/unit/data/pyline-3.10.txt", "tests/unit/data/pyline-3.11.txt",
		"tests/unit/data/pyline-3.12.txt", "tests/unit/data/pyline-3.13.txt",
	};
	static const uint8_t cut[] = { 0xf0 | 0x80, 0x41 };	/* long form, varint cut */
	static const uint8_t notentry[] = { 0x05, 0x00 };
	/* 3.10: 4 bytes on line +1, then a line delta past INT32_MAX or below 0 */
	static const uint8_t up310[] = { 4, 1, 4, 127 }, down310[] = { 4, (uint8_t)-5 };
	/* 3.11: no-column entries (code 13) of line delta +2 (svarint 4) and -2 (svarint 5) */
	static const uint8_t up311[] = { 0x80 | 13 << 3, 4 }, down311[] = { 0x80 | 13 << 3, 5 };
	/* 3.11: a long-form line delta whose varint never ends within 32 bits */
	static const uint8_t endless[] = { 0x80 | 14 << 3, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f,
					   0x7f, 0x3f, 0, 0, 0 };
	/* 3.11: line deltas of +2^30 - 1 (6 varint bytes, 31 bits): 2^30, INT32_MAX, past it */
	static const uint8_t huge[] = { 0x80 | 13 << 3, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x01,
					0x80 | 13 << 3, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x01,
					0x80 | 13 << 3, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	unsigned int checked = 0, objects, total_objects = 0;
	size_t i;
	int bad = 0;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		objects = 0;
		bad += check_file(files[i], &checked, &objects);
		/* 3.12+ inline comprehensions: fewer code objects */
		CHECK(objects >= 15, "%s: %u code objects", files[i], objects);
		total_objects += objects;
	}
	CHECK(bad == 0, "%d wrong lines", bad);
	CHECK(checked > 2000, "%u checked", checked);
	CHECK(pyline__line(XPU_PY_LINETABLE_311, cut, sizeof(cut), 1, 0) == -1, "hostile table");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, notentry, sizeof(notentry), 1, 0) == -1, "hostile table");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, NULL, 0, 1, 0) == -1, "hostile table");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, notentry, 1, 1, 0) == -1, "hostile table");
	CHECK(pyline__line(99, notentry, sizeof(notentry), 1, 0) == -1, "hostile table");
	CHECK(pyline__line(XPU_PY_LINETABLE_NONE, up310, sizeof(up310), 1, 0) == -1, "no table");

	CHECK(pyline__line(XPU_PY_LINETABLE_310, up310, sizeof(up310), 10, 1) == 11, "3.10 +1");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, up310, sizeof(up310), 10, 2) == 138, "3.10 +127");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, up310, sizeof(up310), 10, 4) == -1, "past the end");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, up310, sizeof(up310), INT32_MAX - 1, 0) ==
	      INT32_MAX, "3.10 up to INT32_MAX");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, up310, sizeof(up310), INT32_MAX - 1, 2) == -1,
	      "3.10 past INT32_MAX");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, down310, sizeof(down310), 3, 0) == -1,
	      "3.10 below line 0");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, down310, sizeof(down310), 10, 1) == 5, "3.10 -5");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, up310, sizeof(up310), 10, UINT32_MAX) == -1,
	      "3.10 instr * 2 past 32 bits");

	CHECK(pyline__line(XPU_PY_LINETABLE_311, up311, sizeof(up311), 7, 0) == 9, "3.11 +2");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, down311, sizeof(down311), 7, 0) == 5, "3.11 -2");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, down311, sizeof(down311), 1, 0) == -1,
	      "3.11 below line 0");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, up311, sizeof(up311), INT32_MAX - 1, 0) == -1,
	      "3.11 past INT32_MAX");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, endless, sizeof(endless), 1, 0) == -1,
	      "3.11 endless varint");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, huge, sizeof(huge), 1, 0) == (1 << 30),
	      "3.11 6-byte varint");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, huge, sizeof(huge), 1, 1) == INT32_MAX,
	      "3.11 up to INT32_MAX");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, huge, sizeof(huge), 1, 2) == -1,
	      "3.11 past INT32_MAX");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, up311, sizeof(up311), 7, UINT32_MAX) == -1,
	      "3.11 huge instr");
	CHECK(check_random() == 0, "random tables");
	printf("%u instructions of %u code objects checked\n", checked, total_objects);
	return unit_finish();
}
