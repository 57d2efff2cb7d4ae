// SPDX-License-Identifier: MIT
/*
 * report/pyline.c against line tables made by the real interpreters: tests/unit/data/pyline-3.X.txt
 * were written by tests/unit/gen_pyline_vectors.py under each CPython (co_lines() gives the
 * expected line of every instruction), and test_pyline_vectors.sh rewrites and compares them
 * where those interpreters are installed. Also hostile tables: cut, malformed, empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/pyline.h"
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

static int check_file(const char *path, unsigned int *checked)
{
	static char line[1 << 20];
	static uint8_t table[1 << 16];
	FILE *f = fopen(path, "r");
	int bad = 0;

	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int kind, instr;
		int first, want, pos = 0, n;
		char hex[1 << 16];
		size_t len;
		const char *p;

		if (sscanf(line, "%u %d %65535s %n", &kind, &first, hex, &pos) != 3)
			continue;
		len = unhex(hex, table, sizeof(table));
		for (p = line + pos; sscanf(p, "%u:%d%n", &instr, &want, &n) == 2; p += n) {
			int got = pyline__line((uint16_t)kind, table, (uint32_t)len, first, instr);

			(*checked)++;
			if (got != want) {
				fprintf(stderr, "%s: first line %d instr %u: got %d, want %d\n", path,
					first, instr, got, want);
				bad++;
			}
			/* every prefix of the table: never a read past its end, never a crash */
			pyline__line((uint16_t)kind, table, (uint32_t)(len / 2), first, instr);
		}
	}
	fclose(f);
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
	unsigned int checked = 0;
	size_t i;
	int bad = 0;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		bad += check_file(files[i], &checked);
	CHECK(bad == 0, "%d wrong lines", bad);
	CHECK(checked > 200, "%u checked", checked);
	CHECK(pyline__line(XPU_PY_LINETABLE_311, cut, sizeof(cut), 1, 0) == -1, "hostile table");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, notentry, sizeof(notentry), 1, 0) == -1, "hostile table");
	CHECK(pyline__line(XPU_PY_LINETABLE_311, NULL, 0, 1, 0) == -1, "hostile table");
	CHECK(pyline__line(XPU_PY_LINETABLE_310, notentry, 1, 1, 0) == -1, "hostile table");
	CHECK(pyline__line(99, notentry, sizeof(notentry), 1, 0) == -1, "hostile table");
	printf("%u instructions checked\n", checked);
	return unit_finish();
}
