// SPDX-License-Identifier: MIT
/*
 * The JIT file parsers (record/jit/jit_parse.c) on good and hostile input: perf-map lines with
 * missing fields, bad numbers, NULs, over-long lines; jitdumps with bad magic, sizes that lie,
 * names that run off their record, moves of unknown code, a truncated tail.
 */
#include <stdlib.h>
#include <string.h>

#include "jit/jit_parse.h"
#include "unit.h"

#define MAX_SYMS 64

struct got {
	int n;
	struct {
		uint64_t start, size, ts;
		char name[XPU_JIT_NAME_MAX_BYTES + 1];
		uint32_t len;
	} s[MAX_SYMS];
	int stop_after;
};

static int collect(void *ctx, const struct jit_sym *s)
{
	struct got *g = ctx;

	if (g->n < MAX_SYMS) {
		g->s[g->n].start = s->start;
		g->s[g->n].size = s->size;
		g->s[g->n].ts = s->load_ts_ns;
		g->s[g->n].len = s->name_len;
		memcpy(g->s[g->n].name, s->name, s->name_len);
		g->s[g->n].name[s->name_len] = '\0';
	}
	g->n++;
	return g->stop_after && g->n >= g->stop_after;
}

static void parse_map(const char *text, size_t len, struct got *g, struct jit_parse_stats *st)
{
	FILE *f = fmemopen((void *)text, len, "r");

	memset(st, 0, sizeof(*st));
	CHECK(f != NULL, "fmemopen");
	if (!f)
		return;
	jit_parse__perf_map(f, collect, g, st);
	fclose(f);
}

static void test_map_lines(void)
{
	struct jit_sym s;

	CHECK(!jit_parse__map_line("7f00 b py::f:/x.py\n", 19, &s), "plain line");
	CHECK(s.start == 0x7f00 && s.size == 0xb && s.name_len == 11 &&
	      !memcmp(s.name, "py::f:/x.py", 11), "fields %llx %llx %u",
	      (unsigned long long)s.start, (unsigned long long)s.size, s.name_len);
	CHECK(!jit_parse__map_line("0x10 0x20 a b c", 15, &s) && s.start == 0x10 && s.size == 0x20 &&
	      s.name_len == 5, "0x prefixes, spaces in the name");
	CHECK(jit_parse__map_line("", 0, &s), "empty");
	CHECK(jit_parse__map_line("7f00 b\n", 7, &s), "no name");
	CHECK(jit_parse__map_line("7f00 b \n", 8, &s), "empty name");
	CHECK(jit_parse__map_line("7f00 0 f\n", 9, &s), "zero size");
	CHECK(jit_parse__map_line("zz 10 f\n", 8, &s), "not hex");
	CHECK(jit_parse__map_line("7f00  10 f\n", 11, &s), "two spaces");
	CHECK(jit_parse__map_line("10000000000000000 1 f", 21, &s), "start overflows");
	CHECK(jit_parse__map_line("ffffffffffffffff 2 f", 20, &s), "range wraps");
	CHECK(jit_parse__map_line("10 1 a\0b", 8, &s), "NUL in the name");
	CHECK(jit_parse__map_line("10\t1 f", 6, &s), "tab separator");
}

static void test_map_file(void)
{
	static const char good[] = "1000 10 first\n2000 20 second\n";
	struct jit_parse_stats st;
	struct got g = { 0 };
	char *big;
	size_t i, n;

	parse_map(good, sizeof(good) - 1, &g, &st);
	CHECK(g.n == 2 && st.symbols == 2 && !st.malformed, "good map: %d %llu", g.n,
	      (unsigned long long)st.malformed);
	CHECK(g.n == 2 && !strcmp(g.s[1].name, "second") && g.s[1].start == 0x2000, "second");

	/* garbage lines around good ones, no final newline */
	{
		static const char mixed[] = "junk\n\n1000 10 a\nzz zz zz\n3000 30 last";
		struct got h = { 0 };

		parse_map(mixed, sizeof(mixed) - 1, &h, &st);
		CHECK(h.n == 2 && st.malformed == 3 && !strcmp(h.s[1].name, "last"),
		      "mixed: %d symbols, %llu malformed", h.n, (unsigned long long)st.malformed);
	}
	/* an over-long line is one malformed entry; the next line still counts */
	n = JIT_MAP_LINE_MAX * 3;
	big = malloc(n + 32);
	CHECK(big != NULL, "malloc");
	if (!big)
		return;
	memcpy(big, "1000 10 ", 8);
	for (i = 8; i < n; i++)
		big[i] = 'x';
	big[n] = '\n';
	memcpy(big + n + 1, "2000 10 after\n", 14);
	{
		struct got h = { 0 };

		parse_map(big, n + 15, &h, &st);
		CHECK(h.n == 1 && st.malformed == 1 && !strcmp(h.s[0].name, "after"),
		      "long line: %d, %llu", h.n, (unsigned long long)st.malformed);
	}
	free(big);
	/* the callback stops the parse (the caller's cap) */
	{
		struct got h = { .stop_after = 1 };

		parse_map(good, sizeof(good) - 1, &h, &st);
		CHECK(h.n == 1, "stopped after one: %d", h.n);
	}
}

/* ---- jitdump ---------------------------------------------------------------------------- */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void header(struct buf *b, uint32_t magic, uint32_t total, uint64_t flags)
{
	struct jitdump_header h = { .magic = magic, .version = 1, .total_size = total,
				    .elf_mach = 62, .pid = 1234, .flags = flags };

	put(b, &h, sizeof(h));
}

/* A JIT_CODE_LOAD with code_size bytes of code; total_size as given when non-zero. */
static void code_load(struct buf *b, uint64_t addr, uint64_t size, uint64_t index,
		      const char *name, uint64_t ts, uint32_t total)
{
	struct jitdump_code_load cl = { .pid = 1234, .tid = 1234, .vma = addr, .code_addr = addr,
					.code_size = size, .code_index = index };
	size_t nl = strlen(name) + 1;
	struct jitdump_rec_header rh = {
		.id = JIT_CODE_LOAD,
		.total_size = total ? total : (uint32_t)(sizeof(rh) + sizeof(cl) + nl + size),
		.timestamp = ts,
	};
	uint8_t code[64] = { 0xc3 };

	put(b, &rh, sizeof(rh));
	put(b, &cl, sizeof(cl));
	put(b, name, nl);
	put(b, code, size < sizeof(code) ? size : sizeof(code));
}

static void code_move(struct buf *b, uint64_t to, uint64_t size, uint64_t index)
{
	struct jitdump_code_move cm = { .pid = 1234, .tid = 1234, .vma = to, .old_code_addr = 1,
					.new_code_addr = to, .code_size = size, .code_index = index };
	struct jitdump_rec_header rh = { .id = JIT_CODE_MOVE,
					 .total_size = sizeof(rh) + sizeof(cm) };

	put(b, &rh, sizeof(rh));
	put(b, &cm, sizeof(cm));
}

static void other(struct buf *b, uint32_t id, uint32_t extra)
{
	struct jitdump_rec_header rh = { .id = id, .total_size = sizeof(rh) + extra };
	uint8_t z[64] = { 0 };

	put(b, &rh, sizeof(rh));
	put(b, z, extra < sizeof(z) ? extra : sizeof(z));
}

static int mem_read(void *src, uint64_t off, void *out, size_t len)
{
	const struct buf *b = src;

	if (off > b->n || len > b->n - off)
		return -1;
	memcpy(out, b->p + off, len);
	return 0;
}

static void parse_dump(struct buf *b, struct got *g, struct jit_parse_stats *st)
{
	memset(st, 0, sizeof(*st));
	jit_parse__jitdump(mem_read, b, b->n, collect, g, st);
}

static void test_jitdump(void)
{
	struct jit_parse_stats st;
	struct buf b = { 0 };
	struct got g = { 0 };

	header(&b, JITDUMP_MAGIC, sizeof(struct jitdump_header), 0);
	code_load(&b, 0x10000, 16, 1, "jitted_one", 777, 0);
	other(&b, JIT_CODE_DEBUG_INFO, 40);
	code_load(&b, 0x20000, 32, 2, "jitted_two", 778, 0);
	other(&b, JIT_CODE_UNWINDING_INFO, 24);
	code_move(&b, 0x30000, 32, 2);
	other(&b, 99, 8);		/* an id from a newer writer: skipped by its size */
	other(&b, JIT_CODE_CLOSE, 0);
	parse_dump(&b, &g, &st);
	CHECK(g.n == 3 && !st.malformed, "good dump: %d symbols, %llu malformed", g.n,
	      (unsigned long long)st.malformed);
	CHECK(!strcmp(g.s[0].name, "jitted_one") && g.s[0].start == 0x10000 && g.s[0].size == 16 &&
	      g.s[0].ts == 777, "first load");
	CHECK(!strcmp(g.s[2].name, "jitted_two") && g.s[2].start == 0x30000 && g.s[2].size == 32,
	      "move keeps the name: %s %llx", g.s[2].name, (unsigned long long)g.s[2].start);

	/* a TSC clock: no load time */
	b.n = 0;
	g.n = 0;
	header(&b, JITDUMP_MAGIC, sizeof(struct jitdump_header), JITDUMP_FLAGS_ARCH_TIMESTAMP);
	code_load(&b, 0x10000, 16, 1, "f", 777, 0);
	parse_dump(&b, &g, &st);
	CHECK(g.n == 1 && g.s[0].ts == 0, "tsc timestamps dropped");

	/* bad magic (also the other byte order), header size past the end */
	b.n = 0;
	g.n = 0;
	header(&b, 0x4454694Au, sizeof(struct jitdump_header), 0);
	code_load(&b, 0x10000, 16, 1, "f", 1, 0);
	parse_dump(&b, &g, &st);
	CHECK(g.n == 0 && st.malformed == 1, "swapped magic refused");
	b.n = 0;
	header(&b, JITDUMP_MAGIC, 1u << 30, 0);
	parse_dump(&b, &g, &st);
	CHECK(g.n == 0 && st.malformed == 1, "header size past the end");
	b.n = 0;
	header(&b, JITDUMP_MAGIC, 8, 0);
	parse_dump(&b, &g, &st);
	CHECK(g.n == 0 && st.malformed == 1, "header size too small");
	parse_dump(&(struct buf){ .p = b.p, .n = 10 }, &g, &st);
	CHECK(g.n == 0 && st.malformed == 1, "file shorter than a header");

	/* records that lie about their sizes */
	b.n = 0;
	g.n = 0;
	header(&b, JITDUMP_MAGIC, sizeof(struct jitdump_header), 0);
	code_load(&b, 0x10000, 16, 1, "ok", 1, 0);
	other(&b, JIT_CODE_LOAD, 4);			/* smaller than a load's body */
	other(&b, JIT_CODE_MOVE, 8);			/* smaller than a move's body */
	code_load(&b, 0x30000, 0, 3, "empty", 1, 0);	/* no code */
	code_load(&b, ~0ull - 4, 16, 4, "wraps", 1, 0);
	code_move(&b, 0x40000, 16, 42);			/* nothing loaded with index 42 */
	/* a name with no NUL inside its record */
	{
		struct jitdump_code_load cl = { .code_addr = 0x50000, .code_size = 4 };
		struct jitdump_rec_header rh = { .id = JIT_CODE_LOAD,
						 .total_size = sizeof(rh) + sizeof(cl) + 4 };

		put(&b, &rh, sizeof(rh));
		put(&b, &cl, sizeof(cl));
		put(&b, "abcd", 4);
	}
	code_load(&b, 0x60000, 16, 6, "after", 1, 0);
	parse_dump(&b, &g, &st);
	CHECK(g.n == 2 && st.malformed == 6, "bad records skipped: %d symbols, %llu malformed", g.n,
	      (unsigned long long)st.malformed);
	CHECK(g.n == 2 && !strcmp(g.s[1].name, "after"), "parse goes on after bad records");

	/* a record claiming more bytes than the file has ends the parse; so does a tiny one */
	b.n = 0;
	g.n = 0;
	header(&b, JITDUMP_MAGIC, sizeof(struct jitdump_header), 0);
	code_load(&b, 0x10000, 16, 1, "ok", 1, 0);
	code_load(&b, 0x20000, 16, 2, "huge", 1, 0xfffffff0u);
	parse_dump(&b, &g, &st);
	CHECK(g.n == 1 && st.malformed == 1, "oversized record: %d, %llu", g.n,
	      (unsigned long long)st.malformed);
	b.n = 0;
	g.n = 0;
	header(&b, JITDUMP_MAGIC, sizeof(struct jitdump_header), 0);
	other(&b, JIT_CODE_CLOSE, 0);
	b.n -= 4;			/* half a record header: the writer is mid-record */
	parse_dump(&b, &g, &st);
	CHECK(g.n == 0 && st.malformed == 1, "cut record header");
	b.n = 0;
	header(&b, JITDUMP_MAGIC, sizeof(struct jitdump_header), 0);
	{
		struct jitdump_rec_header rh = { .id = JIT_CODE_LOAD, .total_size = 4 };

		put(&b, &rh, sizeof(rh));
	}
	parse_dump(&b, &g, &st);
	CHECK(g.n == 0 && st.malformed == 1, "record smaller than its header");

	/* a name longer than the cap is cut, not refused */
	{
		char *name = malloc(XPU_JIT_NAME_MAX_BYTES * 2);

		memset(name, 'n', XPU_JIT_NAME_MAX_BYTES * 2 - 1);
		name[XPU_JIT_NAME_MAX_BYTES * 2 - 1] = '\0';
		b.n = 0;
		g.n = 0;
		header(&b, JITDUMP_MAGIC, sizeof(struct jitdump_header), 0);
		code_load(&b, 0x10000, 16, 1, name, 1, 0);
		parse_dump(&b, &g, &st);
		CHECK(g.n == 1 && g.s[0].len == XPU_JIT_NAME_MAX_BYTES, "long name cut: %u",
		      g.n ? g.s[0].len : 0);
		free(name);
	}
	free(b.p);
}

int main(void)
{
	test_map_lines();
	test_map_file();
	test_jitdump();
	return unit_finish();
}
