// SPDX-License-Identifier: MIT
/*
 * Symbol pack entries (format-spec/ARCHIVE.md 2.4, 2.5): encoding for `xpu-report archive`,
 * checked decoding for the report. Both kinds are flat tables with offsets, so a reader checks
 * each table's extent once and each reference against it, and then reads in place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "sym/xpa_pack.h"

/* ---- reading ------------------------------------------------------------------------------- */

static bool table_fits(size_t size, size_t *at, uint64_t count, size_t elem)
{
	if (count > (size - *at) / elem)
		return false;
	*at += count * elem;
	return true;
}

bool xpa_names__parse(struct xpa_names *n, const void *buf, size_t size)
{
	const uint8_t *p = buf;
	size_t at = sizeof(*n->h);
	uint32_t i, j;

	if (size < sizeof(*n->h) || ((uintptr_t)buf & 7))
		return false;
	n->h = buf;
	if (memcmp(n->h->magic, XPA_NAMES_MAGIC, 4))
		return false;
	n->addrs = (const void *)(p + at);
	if (!table_fits(size, &at, n->h->naddrs, sizeof(*n->addrs)))
		return false;
	n->frames = (const void *)(p + at);
	if (!table_fits(size, &at, n->h->nframes, sizeof(*n->frames)))
		return false;
	n->strings = (const char *)(p + at);
	/* exactly the tables and the strings; every string ends inside, "" at offset 0 */
	if (size - at != n->h->strings_size || !n->h->strings_size || n->strings[0] ||
	    n->strings[n->h->strings_size - 1])
		return false;
	for (i = 0; i < n->h->naddrs; i++) {
		const struct xpa_names_addr *a = &n->addrs[i];
		uint32_t cnt = (uint32_t)a->nplain + a->ninline;

		if ((i && a->off <= n->addrs[i - 1].off) || !a->nplain || !a->ninline ||
		    a->nplain > XPA_MAX_ADDR_FRAMES || a->ninline > XPA_MAX_ADDR_FRAMES ||
		    a->first > n->h->nframes || cnt > n->h->nframes - a->first)
			return false;
	}
	for (j = 0; j < n->h->nframes; j++) {
		if (n->frames[j].name >= n->h->strings_size || n->frames[j].file >= n->h->strings_size)
			return false;
	}
	return true;
}

struct addr_key {
	const struct xpa_names_addr *addrs;
	uint64_t off;
};

static bool addr_below(size_t i, const void *arg)
{
	const struct addr_key *k = arg;

	return k->addrs[i].off < k->off;
}

const struct xpa_names_addr *xpa_names__find(const struct xpa_names *n, uint64_t off)
{
	size_t lo = upper_bound(n->h->naddrs, addr_below, &(struct addr_key){ n->addrs, off });

	return lo < n->h->naddrs && n->addrs[lo].off == off ? &n->addrs[lo] : NULL;
}

/* The order of walks in an entry: (for_type, tid, ts, pid). */
static int walk_cmp_key(const struct xpa_walk *w, uint16_t for_type, uint32_t pid, uint32_t tid,
			uint64_t ts)
{
	if (w->for_type != for_type)
		return w->for_type < for_type ? -1 : 1;
	if (w->tid != tid)
		return w->tid < tid ? -1 : 1;
	if (w->ts != ts)
		return w->ts < ts ? -1 : 1;
	return (w->pid > pid) - (w->pid < pid);
}

bool xpa_walks__parse(struct xpa_walks *w, const void *buf, size_t size)
{
	const uint8_t *p = buf;
	size_t at = sizeof(*w->h);
	uint32_t i;

	if (size < sizeof(*w->h) || ((uintptr_t)buf & 7))
		return false;
	w->h = buf;
	if (memcmp(w->h->magic, XPA_WALKS_MAGIC, 4))
		return false;
	w->walks = (const void *)(p + at);
	if (!table_fits(size, &at, w->h->nwalks, sizeof(*w->walks)))
		return false;
	w->ips = (const void *)(p + at);
	if (!table_fits(size, &at, w->h->nips, sizeof(*w->ips)) || at != size)
		return false;
	for (i = 0; i < w->h->nwalks; i++) {
		const struct xpa_walk *x = &w->walks[i];

		if (!x->nips || x->nips > XPA_MAX_WALK_IPS || x->first > w->h->nips ||
		    x->nips > w->h->nips - x->first)
			return false;
		/* strictly sorted: a binary search finds each event's one walk */
		if (i && walk_cmp_key(&w->walks[i - 1], x->for_type, x->pid, x->tid, x->ts) >= 0)
			return false;
	}
	return true;
}

struct walk_key {
	const struct xpa_walk *walks;
	uint16_t for_type;
	uint32_t pid, tid;
	uint64_t ts;
};

static bool walk_below(size_t i, const void *arg)
{
	const struct walk_key *k = arg;

	return walk_cmp_key(&k->walks[i], k->for_type, k->pid, k->tid, k->ts) < 0;
}

const struct xpa_walk *xpa_walks__find(const struct xpa_walks *w, uint16_t for_type, uint32_t pid,
				       uint32_t tid, uint64_t ts)
{
	size_t lo = upper_bound(w->h->nwalks, walk_below,
				&(struct walk_key){ w->walks, for_type, pid, tid, ts });

	return lo < w->h->nwalks && !walk_cmp_key(&w->walks[lo], for_type, pid, tid, ts) ?
		       &w->walks[lo] : NULL;
}

/* ---- writing: names ------------------------------------------------------------------------ */

static int add_frames(struct xpa_names_builder *b, const struct xpa_frame_in *in, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct xpa_names_frame f = { .line = in[i].line, .flags = in[i].flags };

		/* string ids for now; xpa_names__finish turns them into offsets */
		f.name = strpool__intern(&b->strs, in[i].name ? in[i].name : "",
					 in[i].name ? strlen(in[i].name) : 0);
		f.file = in[i].file && in[i].file[0] ?
				 strpool__intern(&b->strs, in[i].file, strlen(in[i].file)) : 0;
		if (!f.name || (in[i].file && in[i].file[0] && !f.file) ||
		    VEC_PUSH(b->frames, b->nframes, b->frames_cap, f))
			return -ENOMEM;
	}
	return 0;
}

int xpa_names__add(struct xpa_names_builder *b, uint64_t off, const struct xpa_frame_in *plain,
		   uint16_t nplain, const struct xpa_frame_in *inl, uint16_t ninline)
{
	struct xpa_names_addr a = { .off = off, .first = (uint32_t)b->nframes, .nplain = nplain,
				    .ninline = ninline };

	if (!nplain || !ninline || nplain > XPA_MAX_ADDR_FRAMES || ninline > XPA_MAX_ADDR_FRAMES ||
	    b->nframes > UINT32_MAX - 2 * XPA_MAX_ADDR_FRAMES)
		return -EINVAL;
	if (add_frames(b, plain, nplain) || add_frames(b, inl, ninline))
		return -ENOMEM;
	return VEC_PUSH(b->addrs, b->naddrs, b->addrs_cap, a);
}

/* By offset, then in the order added (first): of an address added twice the first is kept. */
static int cmp_addr(const void *x, const void *y)
{
	const struct xpa_names_addr *a = x, *b = y;

	if (a->off != b->off)
		return (a->off > b->off) - (a->off < b->off);
	return (a->first > b->first) - (a->first < b->first);
}

int xpa_names__finish(struct xpa_names_builder *b, void **out, size_t *size)
{
	struct xpa_names_header h = { .magic = XPA_NAMES_MAGIC };
	size_t strings = 1, i, at, n = 0;
	uint32_t *offs = NULL;
	uint8_t *buf;

	/* strings in id order after the "" at offset 0 */
	offs = calloc(b->strs.n ? b->strs.n : 1, sizeof(*offs));
	if (!offs)
		return -ENOMEM;
	for (i = 1; i < b->strs.n; i++) {
		offs[i] = (uint32_t)strings;
		strings += strlen(b->strs.strs[i]) + 1;
	}
	strings = (strings + 7) & ~(size_t)7;	/* entries are read in place: keep 8-alignment */
	if (strings > UINT32_MAX) {
		free(offs);
		return -EFBIG;
	}
	if (b->naddrs)
		qsort(b->addrs, b->naddrs, sizeof(*b->addrs), cmp_addr);
	/* one row per address: an address added twice keeps its first rendering */
	for (i = 0; i < b->naddrs; i++) {
		if (n && b->addrs[n - 1].off == b->addrs[i].off)
			continue;
		b->addrs[n++] = b->addrs[i];
	}
	b->naddrs = n;
	h.naddrs = (uint32_t)b->naddrs;
	h.nframes = (uint32_t)b->nframes;
	h.strings_size = (uint32_t)strings;
	*size = sizeof(h) + b->naddrs * sizeof(*b->addrs) + b->nframes * sizeof(*b->frames) + strings;
	buf = calloc(1, *size);
	if (!buf) {
		free(offs);
		return -ENOMEM;
	}
	memcpy(buf, &h, sizeof(h));
	at = sizeof(h);
	if (b->naddrs)
		memcpy(buf + at, b->addrs, b->naddrs * sizeof(*b->addrs));
	at += b->naddrs * sizeof(*b->addrs);
	for (i = 0; i < b->nframes; i++) {
		struct xpa_names_frame f = b->frames[i];

		f.name = offs[f.name];
		f.file = offs[f.file];
		memcpy(buf + at, &f, sizeof(f));
		at += sizeof(f);
	}
	for (i = 1; i < b->strs.n; i++)
		memcpy(buf + at + offs[i], b->strs.strs[i], strlen(b->strs.strs[i]) + 1);
	free(offs);
	*out = buf;
	return 0;
}

void xpa_names__free(struct xpa_names_builder *b)
{
	free(b->addrs);
	free(b->frames);
	strpool__free(&b->strs);
	memset(b, 0, sizeof(*b));
}

/* ---- writing: walks ------------------------------------------------------------------------ */

int xpa_walks__add(struct xpa_walks_builder *b, const struct xpa_walk *w, const uint64_t *ips)
{
	struct xpa_walk x = *w;
	size_t i;

	if (!x.nips || x.nips > XPA_MAX_WALK_IPS || b->nips > UINT32_MAX - XPA_MAX_WALK_IPS)
		return -EINVAL;
	x.first = (uint32_t)b->nips;
	for (i = 0; i < x.nips; i++) {
		if (VEC_PUSH(b->ips, b->nips, b->ips_cap, ips[i]))
			return -ENOMEM;
	}
	return VEC_PUSH(b->walks, b->nwalks, b->walks_cap, x);
}

/* By event, then in the order added (first): of an event walked twice the first is kept. */
static int cmp_walk(const void *x, const void *y)
{
	const struct xpa_walk *a = x, *b = y;
	int c = walk_cmp_key(a, b->for_type, b->pid, b->tid, b->ts);

	return c ? c : (a->first > b->first) - (a->first < b->first);
}

int xpa_walks__finish(struct xpa_walks_builder *b, void **out, size_t *size)
{
	struct xpa_walks_header h = b->h;
	size_t i, n = 0;
	uint8_t *buf;

	memcpy(h.magic, XPA_WALKS_MAGIC, 4);
	if (b->nwalks)
		qsort(b->walks, b->nwalks, sizeof(*b->walks), cmp_walk);
	/* one walk per event: the unwinder uses an event's first copy only */
	for (i = 0; i < b->nwalks; i++) {
		const struct xpa_walk *w = &b->walks[i];

		if (n && !walk_cmp_key(&b->walks[n - 1], w->for_type, w->pid, w->tid, w->ts))
			continue;
		b->walks[n++] = b->walks[i];
	}
	b->nwalks = n;
	h.nwalks = (uint32_t)b->nwalks;
	h.nips = (uint32_t)b->nips;
	*size = sizeof(h) + b->nwalks * sizeof(*b->walks) + b->nips * sizeof(*b->ips);
	buf = malloc(*size);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	if (b->nwalks)
		memcpy(buf + sizeof(h), b->walks, b->nwalks * sizeof(*b->walks));
	if (b->nips)
		memcpy(buf + sizeof(h) + b->nwalks * sizeof(*b->walks), b->ips,
		       b->nips * sizeof(*b->ips));
	*out = buf;
	return 0;
}

void xpa_walks__free(struct xpa_walks_builder *b)
{
	free(b->walks);
	free(b->ips);
	memset(b, 0, sizeof(*b));
}
