// SPDX-License-Identifier: MIT
/*
 * JIT file parsers (see jit_parse.h). Both formats come from the traced process, possibly
 * half-written (the process still runs with -p) or crafted: nothing read is used before its
 * bounds are checked, and one bad entry costs only itself.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jit_parse.h"

/* Parses a hex number with an optional 0x at *p; false when there is none or it overflows. */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, digits++) {
		char c = *s;
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (v >> 60)
			return false;
		v = v << 4 | d;
	}
	if (!digits)
		return false;
	*p = s;
	*out = v;
	return true;
}

int jit_parse__map_line(const char *line, size_t len, struct jit_sym *out)
{
	const char *p = line, *end = line + len;

	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	memset(out, 0, sizeof(*out));
	if (!parse_hex(&p, end, &out->start) || p == end || *p != ' ')
		return -EINVAL;
	p++;
	if (!parse_hex(&p, end, &out->size) || p == end || *p != ' ')
		return -EINVAL;
	p++;
	if (p == end || memchr(p, '\0', end - p) || !out->size ||
	    out->start + out->size < out->start)
		return -EINVAL;
	out->name = p;
	out->name_len = end - p > XPU_JIT_NAME_MAX_BYTES ? XPU_JIT_NAME_MAX_BYTES :
							   (uint32_t)(end - p);
	return 0;
}

void jit_parse__perf_map(FILE *f, jit_sym_fn fn, void *ctx, struct jit_parse_stats *st)
{
	char line[JIT_MAP_LINE_MAX + 2];
	bool skipping = false;
	uint64_t bytes = 0;

	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		bool whole = len && line[len - 1] == '\n';
		struct jit_sym s;

		bytes += len;
		if (bytes > JIT_MAP_MAX_BYTES) {
			st->malformed++;
			return;
		}

		/* the rest of an over-long line, already counted */
		if (skipping) {
			skipping = !whole;
			continue;
		}
		if (!whole && !feof(f)) {
			st->malformed++;
			skipping = true;
			continue;
		}
		if (jit_parse__map_line(line, len, &s)) {
			/* a blank last line is no entry */
			if (len > 1 || whole)
				st->malformed++;
			continue;
		}
		st->symbols++;
		if (fn(ctx, &s))
			return;
	}
}

/* ---- jitdump ---------------------------------------------------------------------------- */

struct loaded {
	uint64_t index;
	char *name;
	uint32_t name_len;
};

/* Names of the code loaded so far, for JIT_CODE_MOVE; indexes are usually increasing. */
struct load_table {
	struct loaded *v;
	size_t n, cap;
	bool sorted;
};

#define JIT_MOVE_SCAN_MAX 4096

static const struct loaded *load_find(const struct load_table *lt, uint64_t index)
{
	size_t lo = 0, hi = lt->n, i;

	if (lt->sorted) {
		/* the last load of an index is the one that counts */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (lt->v[mid].index <= index)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo && lt->v[lo - 1].index == index ? &lt->v[lo - 1] : NULL;
	}
	/* out of order: a bounded scan of the latest loads */
	for (i = lt->n; i-- > 0 && lt->n - i <= JIT_MOVE_SCAN_MAX;)
		if (lt->v[i].index == index)
			return &lt->v[i];
	return NULL;
}

static int load_add(struct load_table *lt, uint64_t index, const char *name, uint32_t len)
{
	struct loaded l = { .index = index, .name_len = len };

	if (lt->n == lt->cap) {
		size_t cap = lt->cap ? lt->cap * 2 : 256;
		struct loaded *v = realloc(lt->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		lt->v = v;
		lt->cap = cap;
	}
	l.name = malloc(len ? len : 1);
	if (!l.name)
		return -ENOMEM;
	memcpy(l.name, name, len);
	if (lt->n && lt->v[lt->n - 1].index > index)
		lt->sorted = false;
	lt->v[lt->n++] = l;
	return 0;
}

static void load_free(struct load_table *lt)
{
	size_t i;

	for (i = 0; i < lt->n; i++)
		free(lt->v[i].name);
	free(lt->v);
}

/* The NUL-terminated name after a JIT_CODE_LOAD body, within the record's bytes. */
static int read_name(jit_read_fn rd, void *src, uint64_t off, uint64_t room, char *name,
		     uint32_t *len)
{
	size_t want = room > XPU_JIT_NAME_MAX_BYTES + 1 ? XPU_JIT_NAME_MAX_BYTES + 1 : room;
	char *nul;

	if (!want || rd(src, off, name, want))
		return -EINVAL;
	nul = memchr(name, '\0', want);
	/* a name cut at the cap is kept cut; a name running off its record is malformed */
	if (!nul && want < XPU_JIT_NAME_MAX_BYTES + 1)
		return -EINVAL;
	*len = nul ? (uint32_t)(nul - name) : XPU_JIT_NAME_MAX_BYTES;
	return *len ? 0 : -EINVAL;
}

static bool code_range_ok(uint64_t addr, uint64_t size)
{
	return size && addr + size > addr;
}

void jit_parse__jitdump(jit_read_fn rd, void *src, uint64_t size, jit_sym_fn fn, void *ctx,
			struct jit_parse_stats *st)
{
	struct load_table lt = { .sorted = true };
	char name[XPU_JIT_NAME_MAX_BYTES + 1];
	struct jitdump_header h;
	uint64_t off;
	bool mono;

	if (size < sizeof(h) || rd(src, 0, &h, sizeof(h)) || h.magic != JITDUMP_MAGIC ||
	    h.total_size < sizeof(h) || h.total_size > size) {
		st->malformed++;
		return;
	}
	mono = !(h.flags & JITDUMP_FLAGS_ARCH_TIMESTAMP);
	for (off = h.total_size; off < size;) {
		struct jitdump_rec_header rh;
		struct jit_sym s = { 0 };
		uint64_t body = off + sizeof(rh);

		if (size - off < sizeof(rh) || rd(src, off, &rh, sizeof(rh)) ||
		    rh.total_size < sizeof(rh) || rh.total_size > size - off) {
			/* the writer may be mid-record (-p): the tail is one malformed entry */
			st->malformed++;
			break;
		}
		off += rh.total_size;
		if (rh.id == JIT_CODE_LOAD) {
			struct jitdump_code_load cl;
			uint64_t room = rh.total_size - sizeof(rh);

			if (room < sizeof(cl) || rd(src, body, &cl, sizeof(cl)) ||
			    !code_range_ok(cl.code_addr, cl.code_size) ||
			    read_name(rd, src, body + sizeof(cl), room - sizeof(cl), name,
				      &s.name_len) ||
			    load_add(&lt, cl.code_index, name, s.name_len)) {
				st->malformed++;
				continue;
			}
			s.start = cl.code_addr;
			s.size = cl.code_size;
		} else if (rh.id == JIT_CODE_MOVE) {
			struct jitdump_code_move cm;
			const struct loaded *l;

			if (rh.total_size - sizeof(rh) < sizeof(cm) ||
			    rd(src, body, &cm, sizeof(cm)) ||
			    !code_range_ok(cm.new_code_addr, cm.code_size) ||
			    !(l = load_find(&lt, cm.code_index))) {
				st->malformed++;
				continue;
			}
			memcpy(name, l->name, l->name_len);
			s.name_len = l->name_len;
			s.start = cm.new_code_addr;
			s.size = cm.code_size;
		} else {
			continue;
		}
		s.name = name;
		s.load_ts_ns = mono ? rh.timestamp : 0;
		st->symbols++;
		if (fn(ctx, &s))
			break;
	}
	load_free(&lt);
}
