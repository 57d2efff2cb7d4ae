// SPDX-License-Identifier: MIT
/*
 * Unit tests of the symbol pack entries (report/sym/xpa_pack.c, format-spec/ARCHIVE.md 2.4
 * NAMES, 2.5 WALKS): what the builders write parses back to the same frames and walks, the
 * finders find exactly what was added, and every rule a reader checks refuses an entry that
 * breaks it (a pack comes from another machine), a misaligned buffer included.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/xpa_pack.h"
#include "unit.h"

/* A copy of an entry's bytes to damage: malloc'd, so 8-aligned as the reader wants. */
static void *copy_of(const void *p, size_t size, size_t extra)
{
	void *c = calloc(1, size + extra);

	if (c)
		memcpy(c, p, size);
	return c;
}

/* ---- NAMES ----------------------------------------------------------------------------- */

/*
 * The entry the names tests damage: 3 addresses added out of order, one of them twice (the
 * first rendering stays), with and without inline frames, files and lines.
 */
static int build_names(void **out, size_t *size)
{
	struct xpa_names_builder b = { 0 };
	const struct xpa_frame_in main_plain[] = {
		{ "main", "main.c", 10, XPA_FRAME_OUTER | XPA_FRAME_NAMED },
	};
	const struct xpa_frame_in main_inl[] = {
		{ "helper (inlined)", "helper.h", 3, 0 },
		{ "main", "main.c", 12, XPA_FRAME_OUTER | XPA_FRAME_NAMED },
	};
	const struct xpa_frame_in unnamed[] = {
		{ "libx.so+0x1234", NULL, 0, XPA_FRAME_OUTER },
	};
	const struct xpa_frame_in other[] = {
		{ "other", "", 0, XPA_FRAME_OUTER | XPA_FRAME_NAMED },
	};
	int err = 0;

	err |= xpa_names__add(&b, 0x2000, main_plain, 1, main_inl, 2);
	err |= xpa_names__add(&b, 0x1234, unnamed, 1, unnamed, 1);
	/* the same address again: the first rendering is kept */
	err |= xpa_names__add(&b, 0x2000, other, 1, other, 1);
	err |= xpa_names__add(&b, 0x9000, other, 1, main_inl, 2);
	if (!err)
		err = xpa_names__finish(&b, out, size);
	xpa_names__free(&b);
	return err;
}

static const char *frame_name(const struct xpa_names *n, const struct xpa_names_addr *a,
			      uint32_t k)
{
	return xpa_names__str(n, n->frames[a->first + k].name);
}

static void names_round_trip(void)
{
	struct xpa_names n;
	const struct xpa_names_addr *a;
	size_t size = 0;
	void *buf = NULL;

	CHECK(build_names(&buf, &size) == 0, "build");
	if (!buf)
		return;
	CHECK(size % 8 == 0, "size %zu is not a multiple of 8", size);
	CHECK(xpa_names__parse(&n, buf, size), "the built entry does not parse");
	CHECK(n.h->naddrs == 3, "naddrs %u, not 3 (one address added twice)", n.h->naddrs);
	CHECK(n.h->strings_size % 8 == 0, "strings_size %u", n.h->strings_size);
	CHECK(n.h->flags == 0, "flags %u", n.h->flags);
	CHECK(n.addrs[0].off < n.addrs[1].off && n.addrs[1].off < n.addrs[2].off,
	      "addresses not sorted");

	a = xpa_names__find(&n, 0x2000);
	CHECK(a && a->nplain == 1 && a->ninline == 2, "0x2000: %u + %u frames",
	      a ? a->nplain : 0, a ? a->ninline : 0);
	if (a && a->nplain == 1 && a->ninline == 2) {
		const struct xpa_names_frame *f = &n.frames[a->first];

		CHECK(!strcmp(frame_name(&n, a, 0), "main"), "plain: %s", frame_name(&n, a, 0));
		CHECK(!strcmp(xpa_names__str(&n, f[0].file), "main.c") && f[0].line == 10 &&
		      f[0].flags == (XPA_FRAME_OUTER | XPA_FRAME_NAMED), "plain frame's site");
		CHECK(!strcmp(frame_name(&n, a, 1), "helper (inlined)") &&
		      !strcmp(xpa_names__str(&n, f[1].file), "helper.h") && f[1].line == 3 &&
		      f[1].flags == 0, "inline: the inlined call first");
		CHECK(!strcmp(frame_name(&n, a, 2), "main") && f[2].line == 12 &&
		      (f[2].flags & XPA_FRAME_OUTER), "inline: the function last");
	}
	a = xpa_names__find(&n, 0x1234);
	CHECK(a && a->nplain == 1 && a->ninline == 1 && !strcmp(frame_name(&n, a, 0), "libx.so+0x1234"),
	      "0x1234");
	CHECK(a && n.frames[a->first].file == 0 && n.frames[a->first].line == 0 &&
	      n.frames[a->first].flags == XPA_FRAME_OUTER, "0x1234: no file, not named");
	a = xpa_names__find(&n, 0x9000);
	CHECK(a && a->nplain == 1 && a->ninline == 2 && !strcmp(frame_name(&n, a, 0), "other"),
	      "0x9000");
	/* an empty file name is no file */
	CHECK(a && n.frames[a->first].file == 0, "0x9000: \"\" file is not 0");
	/* strings are shared: "main" once */
	CHECK(a && a->ninline == 2 &&
	      n.frames[a->first + 2].name == n.frames[xpa_names__find(&n, 0x2000)->first].name,
	      "\"main\" stored twice");

	CHECK(!xpa_names__find(&n, 0), "below the first");
	CHECK(!xpa_names__find(&n, 0x1233), "just below");
	CHECK(!xpa_names__find(&n, 0x1235), "just above");
	CHECK(!xpa_names__find(&n, 0x8fff), "between");
	CHECK(!xpa_names__find(&n, 0x9001), "past the last");
	CHECK(!xpa_names__find(&n, UINT64_MAX), "UINT64_MAX");
	free(buf);
}

static void names_builder_limits(void)
{
	struct xpa_names_builder b = { 0 };
	struct xpa_frame_in f[XPA_MAX_ADDR_FRAMES + 1];
	struct xpa_names n;
	size_t size = 0, i;
	void *buf = NULL;

	for (i = 0; i < XPA_MAX_ADDR_FRAMES + 1; i++)
		f[i] = (struct xpa_frame_in){ "f", NULL, 0, 0 };
	f[XPA_MAX_ADDR_FRAMES].flags = XPA_FRAME_OUTER;
	CHECK(xpa_names__add(&b, 1, f, 0, f, 1) == -EINVAL, "no plain frame");
	CHECK(xpa_names__add(&b, 1, f, 1, f, 0) == -EINVAL, "no inline frame");
	CHECK(xpa_names__add(&b, 1, f, XPA_MAX_ADDR_FRAMES + 1, f, 1) == -EINVAL,
	      "257 plain frames");
	CHECK(xpa_names__add(&b, 1, f, 1, f, XPA_MAX_ADDR_FRAMES + 1) == -EINVAL,
	      "257 inline frames");
	CHECK(b.naddrs == 0 && b.nframes == 0, "a refused address left %zu, %zu", b.naddrs,
	      b.nframes);
	xpa_names__free(&b);

	/* the most frames a run may have, both runs */
	CHECK(xpa_names__add(&b, 7, f + 1, XPA_MAX_ADDR_FRAMES, f + 1, XPA_MAX_ADDR_FRAMES) == 0,
	      "256 + 256 frames");
	CHECK(xpa_names__finish(&b, &buf, &size) == 0, "finish");
	CHECK(buf && xpa_names__parse(&n, buf, size) && n.h->nframes == 2 * XPA_MAX_ADDR_FRAMES,
	      "256 + 256 frames do not parse");
	free(buf);
	xpa_names__free(&b);
}

/* No address at all: a valid entry that has none. */
static void names_empty(void)
{
	struct xpa_names_builder b = { 0 };
	struct xpa_names n;
	size_t size = 0;
	void *buf = NULL;

	CHECK(xpa_names__finish(&b, &buf, &size) == 0, "finish empty");
	CHECK(buf && xpa_names__parse(&n, buf, size) && n.h->naddrs == 0 && n.h->nframes == 0,
	      "the empty entry does not parse");
	CHECK(buf && !xpa_names__find(&n, 0), "found in nothing");
	free(buf);
	xpa_names__free(&b);
}

/* Whether the names entry parses after damage(copy) (an aligned copy, 8 spare bytes). */
static bool names_parse_damaged(const void *buf, size_t size, size_t new_size,
				void (*damage)(uint8_t *p, struct xpa_names *n))
{
	struct xpa_names n, v;
	uint8_t *c = copy_of(buf, size, 8);
	bool ok;

	if (!c || !xpa_names__parse(&v, c, size)) {
		free(c);
		return true;	/* fails the test: the original must parse */
	}
	/* a view of the copy with the same layout, written through */
	if (damage)
		damage(c, &v);
	ok = xpa_names__parse(&n, c, new_size);
	free(c);
	return ok;
}

#define W(p) ((void *)(uintptr_t)(p))	/* the view is const: damage writes through it */

static void swap_addrs(uint8_t *p, struct xpa_names *n)
{
	struct xpa_names_addr *a = W(n->addrs), t = a[0];

	a[0] = a[1];
	a[1] = t;
}

static void dup_addrs(uint8_t *p, struct xpa_names *n)
{
	struct xpa_names_addr *a = W(n->addrs);

	a[1].off = a[0].off;
}

static void run_past_frames(uint8_t *p, struct xpa_names *n)
{
	struct xpa_names_addr *a = W(n->addrs);
	uint32_t i;

	/* the address whose frames end the table: its inline run ends one frame past it */
	for (i = 0; i < n->h->naddrs; i++) {
		if (a[i].first + a[i].nplain + a[i].ninline == n->h->nframes)
			a[i].ninline++;
	}
}

static void first_past_frames(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_addr *)W(n->addrs))[0].first = n->h->nframes + 1;
}

static void first_huge(uint8_t *p, struct xpa_names *n)
{
	/* first + count wraps around 32 bits */
	((struct xpa_names_addr *)W(n->addrs))[0].first = UINT32_MAX;
}

static void no_plain(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_addr *)W(n->addrs))[0].nplain = 0;
}

static void no_inline(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_addr *)W(n->addrs))[0].ninline = 0;
}

static void name_past_strings(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_frame *)W(n->frames))[1].name = n->h->strings_size;
}

static void name_far_past_strings(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_frame *)W(n->frames))[0].name = UINT32_MAX;
}

static void file_past_strings(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_frame *)W(n->frames))[0].file = n->h->strings_size;
}

static void name_last_nul(uint8_t *p, struct xpa_names *n)
{
	/* the last byte is a NUL: an empty name, still inside */
	((struct xpa_names_frame *)W(n->frames))[0].name = n->h->strings_size - 1;
}

static void strings_end_unterminated(uint8_t *p, struct xpa_names *n)
{
	((char *)W(n->strings))[n->h->strings_size - 1] = 'x';
}

static void strings_start_not_empty(uint8_t *p, struct xpa_names *n)
{
	((char *)W(n->strings))[0] = 'x';
}

static void bad_magic(uint8_t *p, struct xpa_names *n)
{
	p[3] = 'X';
}

static void naddrs_plus(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_header *)p)->naddrs++;
}

static void nframes_plus(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_header *)p)->nframes++;
}

static void nframes_huge(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_header *)p)->nframes = UINT32_MAX;
}

static void naddrs_huge(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_header *)p)->naddrs = UINT32_MAX;
}

static void strings_size_plus(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_header *)p)->strings_size += 8;
}

static void strings_size_minus(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_header *)p)->strings_size -= 8;
}

static void strings_size_zero(uint8_t *p, struct xpa_names *n)
{
	((struct xpa_names_header *)p)->strings_size = 0;
}

static void names_rejections(void)
{
	size_t size = 0;
	void *buf = NULL;

	CHECK(build_names(&buf, &size) == 0 && buf, "build");
	if (!buf)
		return;
	CHECK(names_parse_damaged(buf, size, size, NULL), "the undamaged copy");
	CHECK(names_parse_damaged(buf, size, size, name_last_nul), "a name at the last NUL");

	CHECK(!names_parse_damaged(buf, size, size, bad_magic), "bad magic");
	CHECK(!names_parse_damaged(buf, size, 31, NULL), "shorter than a header");
	CHECK(!names_parse_damaged(buf, size, 0, NULL), "empty");
	/* addresses sorted, each once */
	CHECK(!names_parse_damaged(buf, size, size, swap_addrs), "unsorted addresses");
	CHECK(!names_parse_damaged(buf, size, size, dup_addrs), "an address twice");
	/* each run within the frames, 1 frame or more */
	CHECK(!names_parse_damaged(buf, size, size, run_past_frames), "run past the frames");
	CHECK(!names_parse_damaged(buf, size, size, first_past_frames), "first past the frames");
	CHECK(!names_parse_damaged(buf, size, size, first_huge), "first + count wraps");
	CHECK(!names_parse_damaged(buf, size, size, no_plain), "no plain frame");
	CHECK(!names_parse_damaged(buf, size, size, no_inline), "no inline frame");
	/* string offsets inside the strings, which are NUL-terminated, "" at 0 */
	CHECK(!names_parse_damaged(buf, size, size, name_past_strings), "name offset == size");
	CHECK(!names_parse_damaged(buf, size, size, name_far_past_strings), "name UINT32_MAX");
	CHECK(!names_parse_damaged(buf, size, size, file_past_strings), "file offset == size");
	CHECK(!names_parse_damaged(buf, size, size, strings_end_unterminated),
	      "strings not NUL-terminated");
	CHECK(!names_parse_damaged(buf, size, size, strings_start_not_empty),
	      "strings[0] is not NUL");
	/* the tables and strings fill the entry exactly */
	CHECK(!names_parse_damaged(buf, size, size + 8, NULL), "8 bytes more than the tables");
	CHECK(!names_parse_damaged(buf, size, size + 1, NULL), "1 byte more");
	CHECK(!names_parse_damaged(buf, size, size - 8, NULL), "8 bytes fewer");
	CHECK(!names_parse_damaged(buf, size, size - 1, NULL), "1 byte fewer");
	CHECK(!names_parse_damaged(buf, size, size, naddrs_plus), "naddrs + 1");
	CHECK(!names_parse_damaged(buf, size, size, nframes_plus), "nframes + 1");
	CHECK(!names_parse_damaged(buf, size, size, naddrs_huge), "naddrs UINT32_MAX");
	CHECK(!names_parse_damaged(buf, size, size, nframes_huge), "nframes UINT32_MAX");
	CHECK(!names_parse_damaged(buf, size, size, strings_size_plus), "strings_size + 8");
	CHECK(!names_parse_damaged(buf, size, size, strings_size_minus), "strings_size - 8");
	CHECK(!names_parse_damaged(buf, size, size, strings_size_zero), "strings_size 0");
	free(buf);
}

/*
 * A names entry by hand (the builder refuses what these test): one address at 0x10 with runs of
 * nplain and ninline frames, every frame named "" (offset 0); *size its bytes.
 */
static struct xpa_names_header *names_by_hand(uint32_t nplain, uint32_t ninline, size_t *size)
{
	uint32_t nframes = nplain + ninline;
	struct xpa_names_header *h;
	struct xpa_names_addr *a;

	*size = sizeof(*h) + sizeof(*a) + nframes * sizeof(struct xpa_names_frame) + 8;
	h = calloc(1, *size);
	if (!h)
		return NULL;
	a = (void *)(h + 1);
	memcpy(h->magic, XPA_NAMES_MAGIC, 4);
	h->naddrs = 1;
	h->nframes = nframes;
	h->strings_size = 8;
	a->off = 0x10;
	a->nplain = (uint16_t)nplain;
	a->ninline = (uint16_t)ninline;
	return h;
}

/* ARCHIVE.md 2.4: "Each run has 1 to 256 frames" (XPA_MAX_ADDR_FRAMES). */
static void names_run_too_long(void)
{
	static const uint32_t runs[][2] = {
		{ XPA_MAX_ADDR_FRAMES + 1, 1 },
		{ 1, XPA_MAX_ADDR_FRAMES + 1 },
		{ XPA_MAX_ADDR_FRAMES + 1, XPA_MAX_ADDR_FRAMES - 1 },
		{ XPA_MAX_ADDR_FRAMES + 1, XPA_MAX_ADDR_FRAMES + 1 },
		{ UINT16_MAX, 1 },
	};
	struct xpa_names_header *h;
	struct xpa_names n;
	size_t size, i;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		h = names_by_hand(runs[i][0], runs[i][1], &size);
		CHECK(h && !xpa_names__parse(&n, h, size), "runs of %u and %u frames parse",
		      runs[i][0], runs[i][1]);
		free(h);
	}
	/* each run at the limit, and the least: fine */
	h = names_by_hand(XPA_MAX_ADDR_FRAMES, XPA_MAX_ADDR_FRAMES, &size);
	CHECK(h && xpa_names__parse(&n, h, size), "256 + 256 frames by hand");
	free(h);
	h = names_by_hand(1, 1, &size);
	CHECK(h && xpa_names__parse(&n, h, size) && xpa_names__find(&n, 0x10) &&
	      !*xpa_names__str(&n, n.frames[0].name), "1 + 1 frames by hand");
	free(h);
}

static void names_misaligned(void)
{
	size_t size = 0, shift;
	void *buf = NULL;
	struct xpa_names n;

	CHECK(build_names(&buf, &size) == 0 && buf, "build");
	if (!buf)
		return;
	for (shift = 1; shift < 8; shift++) {
		uint8_t *c = malloc(size + 8);

		if (!c)
			break;
		memcpy(c + shift, buf, size);
		CHECK(!xpa_names__parse(&n, c + shift, size), "parsed at 8n + %zu", shift);
		free(c);
	}
	free(buf);
}

/* ---- WALKS ----------------------------------------------------------------------------- */

static const struct xpa_walk walk_in[] = {
	/* added out of order; sorted by (for_type, tid, ts, pid) */
	{ .ts = 300, .pid = 1, .tid = 2, .for_type = 11, .reason = 0, .nips = 3 },
	{ .ts = 100, .pid = 1, .tid = 2, .for_type = 11, .reason = 1, .nips = 1 },
	{ .ts = 100, .pid = 9, .tid = 2, .for_type = 11, .reason = 2, .nips = 2 },
	{ .ts = 5, .pid = 1, .tid = 1, .for_type = 40, .reason = 5, .nips = 4 },
	{ .ts = 100, .pid = 1, .tid = 3, .for_type = 11, .reason = 3, .nips = 2 },
	{ .ts = 50, .pid = 7, .tid = 2, .for_type = 11, .reason = 4, .nips = 1 },
};
#define NWALK_IN (sizeof(walk_in) / sizeof(walk_in[0]))

static uint64_t walk_ip(size_t walk, size_t k)
{
	return 0x400000 + walk * 0x1000 + k;
}

static int build_walks(void **out, size_t *size, bool with_dup)
{
	struct xpa_walks_builder b = { 0 };
	uint64_t ips[8];
	size_t i, k;
	int err = 0;

	b.h.copies = 17;
	b.h.fp_frames = 5;
	b.h.fp_scanned = 2;
	b.h.fp_walks = 3;
	for (i = 0; i < NWALK_IN; i++) {
		for (k = 0; k < walk_in[i].nips; k++)
			ips[k] = walk_ip(i, k);
		err |= xpa_walks__add(&b, &walk_in[i], ips);
	}
	if (with_dup) {
		/* the same event again: one walk per event stays */
		struct xpa_walk w = walk_in[0];

		w.nips = 1;
		ips[0] = 0xdead;
		err |= xpa_walks__add(&b, &w, ips);
	}
	if (!err)
		err = xpa_walks__finish(&b, out, size);
	xpa_walks__free(&b);
	return err;
}

static void walks_round_trip(void)
{
	struct xpa_walks w;
	size_t size = 0, i, k;
	void *buf = NULL;

	CHECK(build_walks(&buf, &size, true) == 0 && buf, "build");
	if (!buf)
		return;
	CHECK(size % 8 == 0, "size %zu", size);
	CHECK(xpa_walks__parse(&w, buf, size), "the built entry does not parse");
	CHECK(w.h->nwalks == NWALK_IN, "nwalks %u, not %zu (an event added twice)", w.h->nwalks,
	      NWALK_IN);
	CHECK(!memcmp(w.h->magic, XPA_WALKS_MAGIC, 4) && w.h->copies == 17 && w.h->fp_frames == 5 &&
	      w.h->fp_scanned == 2 && w.h->fp_walks == 3, "header counts");
	for (i = 1; i < w.h->nwalks; i++) {
		const struct xpa_walk *a = &w.walks[i - 1], *b = &w.walks[i];

		CHECK(a->for_type < b->for_type ||
		      (a->for_type == b->for_type &&
		       (a->tid < b->tid || (a->tid == b->tid &&
		       (a->ts < b->ts || (a->ts == b->ts && a->pid < b->pid))))),
		      "walks %zu, %zu out of order", i - 1, i);
	}
	for (i = 0; i < NWALK_IN; i++) {
		const struct xpa_walk *x = xpa_walks__find(&w, walk_in[i].for_type, walk_in[i].pid,
							   walk_in[i].tid, walk_in[i].ts);

		CHECK(x && x->nips == walk_in[i].nips && x->reason == walk_in[i].reason,
		      "walk %zu not found as added", i);
		for (k = 0; x && k < x->nips && k < walk_in[i].nips; k++)
			CHECK(w.ips[x->first + k] == walk_ip(i, k), "walk %zu ip %zu", i, k);
	}
	/* each part of the key counts */
	CHECK(!xpa_walks__find(&w, 12, 1, 2, 300), "for_type");
	CHECK(!xpa_walks__find(&w, 11, 2, 2, 300), "pid");
	CHECK(!xpa_walks__find(&w, 11, 1, 4, 300), "tid");
	CHECK(!xpa_walks__find(&w, 11, 1, 2, 301), "ts");
	CHECK(!xpa_walks__find(&w, 0, 0, 0, 0), "below all");
	CHECK(!xpa_walks__find(&w, UINT16_MAX, UINT32_MAX, UINT32_MAX, UINT64_MAX), "above all");
	free(buf);
}

static void walks_builder_limits(void)
{
	struct xpa_walks_builder b = { 0 };
	static uint64_t ips[XPA_MAX_WALK_IPS + 1];
	struct xpa_walk x = { .ts = 1, .pid = 1, .tid = 1, .for_type = 11 };
	struct xpa_walks w;
	size_t size = 0;
	void *buf = NULL;

	x.nips = 0;
	CHECK(xpa_walks__add(&b, &x, ips) == -EINVAL, "no ip");
	x.nips = XPA_MAX_WALK_IPS + 1;
	CHECK(xpa_walks__add(&b, &x, ips) == -EINVAL, "4097 ips");
	CHECK(b.nwalks == 0 && b.nips == 0, "a refused walk left %zu, %zu", b.nwalks, b.nips);
	xpa_walks__free(&b);

	x.nips = XPA_MAX_WALK_IPS;
	CHECK(xpa_walks__add(&b, &x, ips) == 0, "256 ips");
	CHECK(xpa_walks__finish(&b, &buf, &size) == 0, "finish");
	CHECK(buf && xpa_walks__parse(&w, buf, size) && w.walks[0].nips == XPA_MAX_WALK_IPS,
	      "256 ips do not parse");
	free(buf);
	xpa_walks__free(&b);
}

/* No walk at all: a valid entry that has none. */
static void walks_empty(void)
{
	struct xpa_walks_builder b = { 0 };
	struct xpa_walks w;
	size_t size = 0;
	void *buf = NULL;

	CHECK(xpa_walks__finish(&b, &buf, &size) == 0, "finish empty");
	CHECK(buf && size == sizeof(struct xpa_walks_header) && xpa_walks__parse(&w, buf, size) &&
	      w.h->nwalks == 0 && w.h->nips == 0, "the empty entry");
	CHECK(buf && !xpa_walks__find(&w, 11, 1, 1, 1), "found in nothing");
	free(buf);
	xpa_walks__free(&b);
}

static bool walks_parse_damaged(const void *buf, size_t size, size_t new_size,
				void (*damage)(uint8_t *p, struct xpa_walks *w))
{
	struct xpa_walks w, v;
	uint8_t *c = copy_of(buf, size, 8);
	bool ok;

	if (!c || !xpa_walks__parse(&v, c, size)) {
		free(c);
		return true;
	}
	if (damage)
		damage(c, &v);
	ok = xpa_walks__parse(&w, c, new_size);
	free(c);
	return ok;
}

static struct xpa_walk *walk_w(struct xpa_walks *w, uint32_t i)
{
	return W(&w->walks[i]);
}

static void w_bad_magic(uint8_t *p, struct xpa_walks *w)
{
	p[0] = 'Y';
}

static void w_swap(uint8_t *p, struct xpa_walks *w)
{
	struct xpa_walk t = *walk_w(w, 1);

	*walk_w(w, 1) = *walk_w(w, 2);
	*walk_w(w, 2) = t;
}

static void w_dup_key(uint8_t *p, struct xpa_walks *w)
{
	struct xpa_walk *a = walk_w(w, 2), *b = walk_w(w, 3);

	b->for_type = a->for_type;
	b->tid = a->tid;
	b->ts = a->ts;
	b->pid = a->pid;
}

static void w_pid_down(uint8_t *p, struct xpa_walks *w)
{
	/* walks 1 and 2 (type 11, tid 2, ts 100) differ by pid only, 1 then 9: make it 1 then 0 */
	walk_w(w, 2)->pid = 0;
}

static void w_zero_ips(uint8_t *p, struct xpa_walks *w)
{
	walk_w(w, 0)->nips = 0;
}

static void w_past_ips(uint8_t *p, struct xpa_walks *w)
{
	uint32_t i;

	/* the walk whose ips end the table ends one past it */
	for (i = 0; i < w->h->nwalks; i++) {
		if (w->walks[i].first + w->walks[i].nips == w->h->nips)
			walk_w(w, i)->nips++;
	}
}

static void w_first_past(uint8_t *p, struct xpa_walks *w)
{
	walk_w(w, 0)->first = w->h->nips + 1;
}

static void w_first_huge(uint8_t *p, struct xpa_walks *w)
{
	walk_w(w, 0)->first = UINT32_MAX;
}

static void w_nips_huge(uint8_t *p, struct xpa_walks *w)
{
	walk_w(w, 0)->nips = UINT32_MAX;
}

static void w_reason_unknown(uint8_t *p, struct xpa_walks *w)
{
	/* ARCHIVE.md 2.5: another reason is no damage; the report does not use the walk */
	walk_w(w, 0)->reason = 200;
}

static void w_nwalks_plus(uint8_t *p, struct xpa_walks *w)
{
	((struct xpa_walks_header *)p)->nwalks++;
}

static void w_nips_plus(uint8_t *p, struct xpa_walks *w)
{
	((struct xpa_walks_header *)p)->nips++;
}

static void w_nwalks_huge(uint8_t *p, struct xpa_walks *w)
{
	((struct xpa_walks_header *)p)->nwalks = UINT32_MAX;
}

static void w_nips_total_huge(uint8_t *p, struct xpa_walks *w)
{
	((struct xpa_walks_header *)p)->nips = UINT32_MAX;
}

static void walks_rejections(void)
{
	size_t size = 0;
	void *buf = NULL;

	CHECK(build_walks(&buf, &size, false) == 0 && buf, "build");
	if (!buf)
		return;
	CHECK(walks_parse_damaged(buf, size, size, NULL), "the undamaged copy");
	CHECK(walks_parse_damaged(buf, size, size, w_reason_unknown), "an unknown reason");

	CHECK(!walks_parse_damaged(buf, size, size, w_bad_magic), "bad magic");
	CHECK(!walks_parse_damaged(buf, size, 47, NULL), "shorter than a header");
	CHECK(!walks_parse_damaged(buf, size, size, w_swap), "unsorted walks");
	CHECK(!walks_parse_damaged(buf, size, size, w_pid_down), "unsorted by pid");
	CHECK(!walks_parse_damaged(buf, size, size, w_dup_key), "an event twice");
	CHECK(!walks_parse_damaged(buf, size, size, w_zero_ips), "a walk of no frame");
	CHECK(!walks_parse_damaged(buf, size, size, w_past_ips), "ips run past the table");
	CHECK(!walks_parse_damaged(buf, size, size, w_first_past), "first past the ips");
	CHECK(!walks_parse_damaged(buf, size, size, w_first_huge), "first + nips wraps");
	CHECK(!walks_parse_damaged(buf, size, size, w_nips_huge), "nips UINT32_MAX");
	CHECK(!walks_parse_damaged(buf, size, size + 8, NULL), "8 bytes more than the tables");
	CHECK(!walks_parse_damaged(buf, size, size - 8, NULL), "8 bytes fewer");
	CHECK(!walks_parse_damaged(buf, size, size - 1, NULL), "1 byte fewer");
	CHECK(!walks_parse_damaged(buf, size, size, w_nwalks_plus), "nwalks + 1");
	CHECK(!walks_parse_damaged(buf, size, size, w_nips_plus), "nips + 1");
	CHECK(!walks_parse_damaged(buf, size, size, w_nwalks_huge), "nwalks UINT32_MAX");
	CHECK(!walks_parse_damaged(buf, size, size, w_nips_total_huge), "header nips UINT32_MAX");
	free(buf);
}

/* A walk of 4097 frames, by hand (the builder refuses it). */
static void walks_too_many_frames(void)
{
	const uint32_t nips = XPA_MAX_WALK_IPS + 1;
	size_t size = sizeof(struct xpa_walks_header) + sizeof(struct xpa_walk) + nips * 8;
	struct xpa_walks_header *h = calloc(1, size);
	struct xpa_walk *x = (void *)(h + 1);
	struct xpa_walks w;

	if (!h)
		return;
	memcpy(h->magic, XPA_WALKS_MAGIC, 4);
	h->nwalks = 1;
	h->nips = nips;
	x->nips = nips;
	x->for_type = 11;
	CHECK(!xpa_walks__parse(&w, h, size), "a walk of %u frames parses", nips);
	x->nips = XPA_MAX_WALK_IPS;
	x->first = 1;
	CHECK(xpa_walks__parse(&w, h, size), "256 frames by hand");
	free(h);
}

static void walks_misaligned(void)
{
	size_t size = 0, shift;
	void *buf = NULL;
	struct xpa_walks w;

	CHECK(build_walks(&buf, &size, false) == 0 && buf, "build");
	if (!buf)
		return;
	for (shift = 1; shift < 8; shift++) {
		uint8_t *c = malloc(size + 8);

		if (!c)
			break;
		memcpy(c + shift, buf, size);
		CHECK(!xpa_walks__parse(&w, c + shift, size), "parsed at 8n + %zu", shift);
		free(c);
	}
	free(buf);
}

int main(void)
{
	names_round_trip();
	names_builder_limits();
	names_rejections();
	names_run_too_long();
	names_misaligned();
	walks_round_trip();
	walks_builder_limits();
	walks_rejections();
	walks_too_many_frames();
	walks_misaligned();
	/*
	 * Last: a builder with nothing in it has NULL tables, the case most likely to stop a
	 * sanitizer build (build-san/) in qsort or memcpy; the checks above have run by then.
	 */
	names_empty();
	walks_empty();
	return unit_finish();
}
