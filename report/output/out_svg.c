// SPDX-License-Identifier: MIT
/*
 * An interactive flame graph as one self-contained SVG: the folded lines of the current view
 * and weight (folded.h, the very data --format=folded prints) drawn as their tree, one
 * rectangle per frame with a <title> tooltip (frame, weight, percent), each
 * frame found in the lines as it is drawn (no tree is made: struct side). Labels are cut to
 * fit in C, so the picture reads even where scripts do not run (an <img>); the embedded
 * script adds click-to-zoom, reset and search with matched percent. GPU work ("[gpu] ..."
 * leaves) is drawn in blue-greens, blocked time ("[off-cpu] ...") in greys, kernel frames
 * ("_[k]") in orange, everything else in the usual warm colours, each hue fixed by a hash of
 * the name.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/view.h"
#include "output/out.h"

#define IMG_WIDTH 1200
#define FRAME_H 16
#define PAD_X 10
#define PAD_TOP 72
#define PAD_BOTTOM 34
/*
 * By default the root is at the top (an icicle, as speedscope and flamegraph.pl --inverted
 * draw it): a browser opens a file at its top, and a deep graph (a PyTorch trace's import
 * and compiler recursion: 5,000 px) drawn root at the bottom opened on blank space above
 * one thin tower. The line that shows the frame under the pointer goes under the titles,
 * where it stays in sight; --svg-root=bottom draws the flame graph and scrolls to its root.
 */
#define ICICLE_PAD_TOP 90
#define ICICLE_PAD_BOTTOM 12
#define ICICLE_DETAILS_Y 78
#define FONT_SIZE 12
#define CHAR_W (FONT_SIZE * 0.59)
#define MIN_WIDTH_PX 0.1

/*
 * The rows of one profile in frame order (cmp_frames), where a node's rows are adjacent: with
 * the sums of their weights in that order, a node's weight is a difference of two sums and
 * its children are found by a scan of its rows, so the graph is drawn from the rows with no
 * tree (a tree of the frames drawn was 130 bytes a frame: 1.3 GB for a 1 GB graph of a 58 KB
 * trace). The weights are integers (folded__round), so every sum is exact in any order.
 */
struct side {
	const struct folded *fo;
	uint32_t *order;	/* rows in frame order */
	double *sum;		/* sum[i]: the weight of order[0..i) */
	double total;
	uint32_t max_depth;
};

/* Rows in frame order: frame by frame, names compared whole, so a subtree's rows are adjacent. */
static int cmp_frames(const void *a, const void *b, void *arg)
{
	const struct folded *fo = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b, k;
	uint32_t na = folded__depth(fo, i), nb = folded__depth(fo, j);

	for (k = 0;; k++) {
		uint32_t x = folded__frame(fo, i, k), y = folded__frame(fo, j, k);
		int c = x == y ? 0 : strcmp(strpool__str(fo->names, x), strpool__str(fo->names, y));

		if (c)
			return c;
		if (k + 1 == na || k + 1 == nb)
			return CMP(na, nb);
	}
}

static int side_open(struct side *sd, const struct folded *fo)
{
	size_t n = fo->n, i;

	memset(sd, 0, sizeof(*sd));
	sd->fo = fo;
	sd->order = malloc((n ? n : 1) * sizeof(*sd->order));
	sd->sum = malloc((n + 1) * sizeof(*sd->sum));
	if (!sd->order || !sd->sum)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sd->order[i] = (uint32_t)i;
		if (folded__depth(fo, i) > sd->max_depth)
			sd->max_depth = folded__depth(fo, i);
	}
	qsort_r(sd->order, n, sizeof(*sd->order), cmp_frames, (void *)fo);
	sd->sum[0] = 0;
	for (i = 0; i < n; i++)
		sd->sum[i + 1] = sd->sum[i] + fo->rows[sd->order[i]].weight;
	sd->total = sd->sum[n];
	return 0;
}

static void side_close(struct side *sd)
{
	free(sd->order);
	free(sd->sum);
}

static uint32_t row_depth(const struct side *sd, size_t i)
{
	return folded__depth(sd->fo, sd->order[i]);
}

/* Frame k's name of row r (an index into fo->rows) and of the row i in frame order */
static const char *frame_name(const struct side *sd, uint32_t r, uint32_t k)
{
	return strpool__str(sd->fo->names, folded__frame(sd->fo, r, k));
}

static const char *row_frame(const struct side *sd, size_t i, uint32_t k)
{
	return frame_name(sd, sd->order[i], k);
}

/* A search in rows [lo, lo + n) of sd, at frame k, for name */
struct row_key {
	const struct side *sd;
	size_t lo;
	uint32_t k;
	const char *name;
};

static bool ends_before(size_t i, const void *arg)
{
	const struct row_key *q = arg;

	return row_depth(q->sd, q->lo + i) <= q->k;
}

static bool named_below(size_t i, const void *arg)
{
	const struct row_key *q = arg;

	return strcmp(row_frame(q->sd, q->lo + i, q->k), q->name) < 0;
}

static bool named_at_most(size_t i, const void *arg)
{
	const struct row_key *q = arg;

	return strcmp(row_frame(q->sd, q->lo + i, q->k), q->name) <= 0;
}

/*
 * Of the rows [*lo, *hi) of sd that share the first k frames of a path (those that end there
 * first, then the others by frame k's name), the ones whose frame k is name; none: lo == hi.
 */
static void side_child(const struct side *sd, size_t *lo, size_t *hi, uint32_t k,
		       const char *name)
{
	struct row_key q = { .sd = sd, .lo = *lo, .k = k, .name = name };
	size_t n = *hi - *lo, a;

	a = upper_bound(n, ends_before, &q);
	q.lo += a;
	n -= a;
	*lo = q.lo + upper_bound(n, named_below, &q);
	*hi = q.lo + upper_bound(n, named_at_most, &q);
}

/* A node's share of its graph, in percent (0 in an empty one) */
static double share_of(const struct side *sd, double w)
{
	return sd->total > 0 ? 100.0 * w / sd->total : 0;
}

/*
 * Every drawn frame writes more than this and its name (its <g>, <title> with the name and
 * weight, <rect> and <text>; 136 bytes at the least): a graph of more passes --max-output,
 * known before the first frame is written.
 */
#define FRAME_MIN_BYTES 120

/*
 * A walk over the rows in frame order: with a stack of the open nodes, each node's weight is
 * known as it closes. It counts the nodes of the whole graph and those at least min_w wide
 * (the frames drawn are among them) and the least they write; with base, the largest change
 * of share of a node from the base's node of its path (its whole share where the base has
 * none).
 */
struct walk {
	const struct side *sd, *base;
	double min_w;
	size_t nodes, kept;
	uint64_t bytes;
	double max_gain;
};

static int flame_walk(struct walk *w)
{
	const struct side *sd = w->sd;
	size_t n = sd->fo->n, i, *blo = NULL, *bhi = NULL;
	double *wt = malloc((sd->max_depth + 1) * sizeof(*wt));
	uint32_t od = 0, prev = 0, c, d, r, nr;
	int err = 0;

	w->nodes = w->kept = 0;
	w->bytes = FRAME_MIN_BYTES + 3;		/* the root, "all" */
	w->max_gain = 0;
	if (w->base) {
		blo = malloc((sd->max_depth + 1) * sizeof(*blo));
		bhi = malloc((sd->max_depth + 1) * sizeof(*bhi));
	}
	if (!wt || (w->base && (!blo || !bhi))) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i <= n; i++) {
		r = i < n ? sd->order[i] : 0;
		nr = i < n ? folded__depth(sd->fo, r) : 0;
		for (c = 0; i && c < od && c < nr &&
			    folded__frame(sd->fo, r, c) == folded__frame(sd->fo, prev, c); c++)
			;
		/* the open nodes past the common prefix close, children first */
		while (od > c) {
			d = --od;
			if (d)
				wt[d - 1] += wt[d];
			w->nodes++;
			if (wt[d] >= w->min_w) {
				w->kept++;
				w->bytes += FRAME_MIN_BYTES + strlen(frame_name(sd, prev, d));
			}
			if (w->base) {
				double bw = w->base->sum[bhi[d]] - w->base->sum[blo[d]];
				double was = blo[d] < bhi[d] ? share_of(w->base, bw) : 0;

				w->max_gain = fmax(w->max_gain, fabs(share_of(sd, wt[d]) - was));
			}
		}
		if (i == n)
			break;
		for (d = c; d < nr; d++) {
			wt[d] = 0;
			if (!w->base)
				continue;
			blo[d] = d ? blo[d - 1] : 0;
			bhi[d] = d ? bhi[d - 1] : w->base->fo->n;
			if (blo[d] < bhi[d])
				side_child(w->base, &blo[d], &bhi[d], d, frame_name(sd, r, d));
		}
		od = nr;
		wt[nr - 1] += sd->fo->rows[r].weight;
		prev = r;
	}
out:
	free(wt);
	free(blo);
	free(bhi);
	return err;
}

/* ---- escaping ----------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if the bytes there are not one. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	uint32_t cp;
	size_t need, k;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 1, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 2, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 3, cp = s[0] & 0x07;
	else
		return 0;
	if (need >= avail)
		return 0;
	for (k = 1; k <= need; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if ((need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) || cp >= 0xfffe)) ||
	    (need == 3 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return need + 1;
}

/*
 * XML text or attribute: markup characters as entities; bytes XML 1.0 cannot hold (control
 * characters, invalid UTF-8) as U+FFFD, so any frame name gives a well-formed file. At most
 * max_chars characters are written (then ".."), counting characters, not bytes.
 */
static void put_xml(FILE *out, const char *str, size_t max_chars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), i = 0, chars = 0;
	size_t run = 0;		/* the first byte not written yet */

	/* bytes kept as they are go out in runs: a call per byte was half a large graph's time */
	while (i < len) {
		size_t l = utf8_len(s + i, len - i);
		const char *ent = NULL;

		if (chars == max_chars) {
			fwrite(s + run, 1, i - run, out);
			fputs("..", out);
			return;
		}
		chars++;
		if (!l || (s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) {
			ent = "&#xfffd;";
			l = 1;
		} else {
			switch (s[i]) {
			case '&': ent = "&amp;"; break;
			case '<': ent = "&lt;"; break;
			case '>': ent = "&gt;"; break;
			case '"': ent = "&quot;"; break;
			case '\'': ent = "&#39;"; break;
			}
		}
		if (ent) {
			fwrite(s + run, 1, i - run, out);
			fputs(ent, out);
			run = i + l;
		}
		i += l;
	}
	fwrite(s + run, 1, i - run, out);
}

static size_t utf8_chars(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), i = 0, n = 0;

	while (i < len) {
		size_t l = utf8_len(s + i, len - i);

		i += l ? l : 1;
		n++;
	}
	return n;
}

/* ---- drawing ------------------------------------------------------------------------------ */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void frame_color(const char *name, char *buf, size_t len)
{
	uint32_t h = name_hash(name);
	double v1 = (h & 0xff) / 255.0, v2 = (h >> 8 & 0xff) / 255.0, v3 = (h >> 16 & 0xff) / 255.0;
	size_t nl = strlen(name);
	int r, g, b;

	if (!strncmp(name, "[gpu] ", 6)) {
		r = 40 + 60 * v1;
		g = 150 + 70 * v2;
		b = 190 + 60 * v3;
	} else if (!strncmp(name, "[off-cpu] ", 10)) {
		r = g = b = 150 + 50 * v1;
	} else if (nl > 4 && !strcmp(name + nl - 4, "_[k]")) {
		r = 230 + 25 * v3;
		g = 150 + 50 * v2;
		b = 40 + 30 * v1;
	} else {
		r = 205 + 50 * v3;
		g = 230 * v1;
		b = 55 * v2;
	}
	snprintf(buf, len, "rgb(%d,%d,%d)", r, g, b);
}

static void put_weight(FILE *out, const struct profile *p, double w)
{
	if (p->s->opts->view == VIEW_MEMORY) {
		fprintf(out, "%.0f bytes", w);
	} else if (p->s->weight == WEIGHT_TIME) {
		if (w >= 1e6)
			fprintf(out, "%.3f s", w / 1e6);
		else if (w >= 1e3)
			fprintf(out, "%.3f ms", w / 1e3);
		else
			fprintf(out, "%.0f us", w);
	} else {
		fprintf(out, "%.0f sample%s", w, w == 1 ? "" : "s");
	}
}

/* A frame as it is drawn: its name and weight, and in a differential graph its base's node. */
struct frame_at {
	const char *name;
	uint32_t depth;		/* 0: the root, "all" */
	double weight;
	bool in_base;		/* the base has a node of this path, of weight base_w */
	double base_w;
};

struct draw {
	const struct profile *p;
	const struct side *sd, *base;	/* base: a differential graph's */
	FILE *out;
	double scale;		/* px per weight unit */
	uint32_t height;
	bool icicle;		/* the root at the top (not --svg-root=bottom) */
	uint64_t frames;
	/* a frame's fill and what its tooltip says after the name (a differential graph's) */
	void (*color)(const struct draw *d, const struct frame_at *fr, char *buf, size_t len);
	void (*tip)(const struct draw *d, const struct frame_at *fr);
	void *arg;
	/* the children of the nodes being drawn, a node's above its parent's */
	struct child {
		size_t lo, hi;		/* its rows, in frame order */
		uint32_t first;		/* its first row bytewise: the order drawn */
	} *kids;
	size_t nkids, kids_cap;
};

static void name_color(const struct draw *d, const struct frame_at *fr, char *buf, size_t len)
{
	frame_color(fr->name, buf, len);
}

/* " (weight, percent" of the whole graph; the caller closes the parenthesis */
static void weight_tip(const struct draw *d, const struct frame_at *fr)
{
	fputs(" (", d->out);
	put_weight(d->out, d->p, fr->weight);
	fprintf(d->out, ", %.2f%%", share_of(d->sd, fr->weight));
}

static int cmp_child(const void *a, const void *b)
{
	const struct child *x = a, *y = b;

	return CMP(x->first, y->first);
}

/* A frame waiting to be drawn: at x over the rows [lo, hi), its base's rows [blo, bhi). */
struct pending {
	struct frame_at fr;
	size_t lo, hi, blo, bhi;
	double x;
};

/*
 * Frame fr at x over the rows [lo, hi) (frame order); pushes its children, each as wide as its
 * weight, onto the pending frames so that they come off in the order their first rows come
 * bytewise (the order of the folded lines). With a base, [blo, bhi) are the base's rows of
 * fr's path. 0 or -ENOMEM.
 */
static int draw_one(struct draw *d, const struct pending *at, struct pending **todo, size_t *ntodo,
		    size_t *todo_cap)
{
	const struct side *sd = d->sd;
	const struct frame_at *fr = &at->fr;
	const char *name = fr->name;
	double x = at->x, w = fr->weight * d->scale;
	double y = d->icicle ? ICICLE_PAD_TOP + (double)fr->depth * FRAME_H :
			       d->height - PAD_BOTTOM - (fr->depth + 1.0) * FRAME_H;
	size_t fit = w > 3 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0, i, k, first;
	char color[32];

	if (w < MIN_WIDTH_PX || out__failed(d->out))
		return 0;
	d->frames++;
	d->color(d, fr, color, sizeof(color));
	fprintf(d->out, "<g><title>");
	put_xml(d->out, name, SIZE_MAX);
	d->tip(d, fr);
	fprintf(d->out, ")</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">",
		x, y, w, FRAME_H - 1, color, x + 3, y + FRAME_H - 4.5);
	if (fit >= 3)
		put_xml(d->out, name, utf8_chars(name) > fit ? fit - 2 : SIZE_MAX);
	fputs("</text></g>\n", d->out);
	/* the children: runs of rows of one frame at this depth, after the rows that end here */
	d->nkids = 0;
	for (i = at->lo; i < at->hi && row_depth(sd, i) == fr->depth; i++)
		;
	while (i < at->hi) {
		uint32_t id = folded__frame(sd->fo, sd->order[i], fr->depth);
		struct child c = { .lo = i, .first = sd->order[i] };

		for (; i < at->hi && folded__frame(sd->fo, sd->order[i], fr->depth) == id; i++)
			if (sd->order[i] < c.first)
				c.first = sd->order[i];
		c.hi = i;
		if (VEC_PUSH(d->kids, d->nkids, d->kids_cap, c))
			return -ENOMEM;
	}
	qsort(d->kids, d->nkids, sizeof(*d->kids), cmp_child);
	/* pushed last first, so the first comes off first; each x after its elder siblings' */
	first = *ntodo;
	for (k = 0; k < d->nkids; k++) {
		const struct child *c = &d->kids[k];
		struct pending p = { .fr = { .depth = fr->depth + 1 }, .lo = c->lo, .hi = c->hi,
				     .blo = at->blo, .bhi = at->bhi, .x = x };

		p.fr.name = row_frame(sd, c->lo, fr->depth);
		p.fr.weight = sd->sum[c->hi] - sd->sum[c->lo];
		if (d->base && fr->in_base && p.fr.weight * d->scale >= MIN_WIDTH_PX) {
			side_child(d->base, &p.blo, &p.bhi, fr->depth, p.fr.name);
			p.fr.in_base = p.blo < p.bhi;
			p.fr.base_w = d->base->sum[p.bhi] - d->base->sum[p.blo];
		}
		x += p.fr.weight * d->scale;
		if (VEC_PUSH(*todo, *ntodo, *todo_cap, p))
			return -ENOMEM;
	}
	for (i = first, k = *ntodo; k > i + 1; i++, k--) {
		struct pending tmp = (*todo)[i];

		(*todo)[i] = (*todo)[k - 1];
		(*todo)[k - 1] = tmp;
	}
	return 0;
}

/*
 * The graph from root down, depth first, each frame before its children. The pending frames
 * are kept on the heap: a graph is as deep as its deepest stack, which the trace (and a
 * symbol pack's runs of frames) sets, and a recursion per level overflowed the C stack.
 */
static int draw_graph(struct draw *d, const struct frame_at *root, size_t nrows, size_t nbase)
{
	struct pending *todo = NULL, at;
	size_t ntodo = 0, todo_cap = 0;
	int err = 0;

	at = (struct pending){ .fr = *root, .hi = nrows, .bhi = nbase, .x = PAD_X };
	if (VEC_PUSH(todo, ntodo, todo_cap, at))
		return -ENOMEM;
	while (ntodo && !err) {
		at = todo[--ntodo];
		err = draw_one(d, &at, &todo, &ntodo, &todo_cap);
	}
	free(todo);
	return err;
}

/*
 * Zoom, reset and search. Frame geometry is read back from the drawn rectangles at load, so
 * the C side stays the single source of layout; names come from the <title> (before the last
 * " (", which starts the weight). UP is 1 where children are drawn above their parent (root
 * at the bottom: the page opens scrolled down to it), -1 where below (an icicle).
 */
static const char svg_script[] =
	"'use strict';\n"
	"var W = " "%d" ", PAD = %d, CW = %.3f, UP = %d, frames = [], total = 0, zoomed = null;\n"
	"function $(id) { return document.getElementById(id); }\n"
	"function nameOf(g) { var t = g.firstElementChild.textContent; return t.substring(0, t.lastIndexOf(' (')); }\n"
	"function init() {\n"
	"  var gs = $('frames').children;\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i], r = g.querySelector('rect');\n"
	"    var f = { g: g, r: r, t: g.querySelector('text'), name: nameOf(g), x: +r.getAttribute('x'),\n"
	"      w: +r.getAttribute('width'), y: +r.getAttribute('y'), fill: r.getAttribute('fill') };\n"
	"    frames.push(f);\n"
	"    g.addEventListener('click', (function (f) { return function () { zoom(f); }; })(f));\n"
	"    g.addEventListener('mouseover', (function (f) { return function () { $('details').textContent = f.g.firstElementChild.textContent; }; })(f));\n"
	"    g.addEventListener('mouseout', function () { $('details').textContent = ' '; });\n"
	"  }\n"
	"  if (frames.length) total = frames[0].w;\n"
	"  if (UP > 0 && window.scrollTo) window.scrollTo(0, document.documentElement.scrollHeight);\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); searchPrompt(); }\n"
	"    else if (e.key === 'Escape') { clearSearch(); reset(); }\n"
	"  });\n"
	"}\n"
	"function label(f, w) {\n"
	"  var n = Math.floor((w - 6) / CW), s = f.name;\n"
	"  f.t.textContent = n < 3 ? '' : (s.length > n ? s.substring(0, n - 2) + '..' : s);\n"
	"}\n"
	"function place(f, x, w) {\n"
	"  f.r.setAttribute('x', x.toFixed(2)); f.r.setAttribute('width', w.toFixed(2));\n"
	"  f.t.setAttribute('x', (x + 3).toFixed(2)); label(f, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var eps = 1e-6, ratio = (W - 2 * PAD) / z.w;\n"
	"  zoomed = z;\n"
	"  frames.forEach(function (f) {\n"
	"    var inside = f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps && UP * (z.y - f.y) >= 0;\n"
	"    var below = UP * (f.y - z.y) > 0 && f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps;\n"
	"    f.g.classList.remove('hide', 'parent');\n"
	"    if (inside) place(f, PAD + (f.x - z.x) * ratio, f.w * ratio);\n"
	"    else if (below) { f.g.classList.add('parent'); place(f, PAD, W - 2 * PAD); }\n"
	"    else f.g.classList.add('hide');\n"
	"  });\n"
	"  $('unzoom').classList.remove('hide');\n"
	"}\n"
	"function reset() {\n"
	"  zoomed = null;\n"
	"  frames.forEach(function (f) { f.g.classList.remove('hide', 'parent'); place(f, f.x, f.w); });\n"
	"  $('unzoom').classList.add('hide');\n"
	"}\n"
	"function clearSearch() {\n"
	"  frames.forEach(function (f) { f.r.setAttribute('fill', f.fill); f.g.classList.remove('match'); });\n"
	"  $('matched').textContent = ' ';\n"
	"}\n"
	"function search(term) {\n"
	"  var re, spans = [], sum = 0, end = -1, n = 0;\n"
	"  clearSearch();\n"
	"  if (!term) return 0;\n"
	"  try { re = new RegExp(term); } catch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&')); }\n"
	"  frames.forEach(function (f) {\n"
	"    if (!re.test(f.name)) return;\n"
	"    f.r.setAttribute('fill', 'rgb(230,0,230)'); f.g.classList.add('match'); n++;\n"
	"    spans.push([f.x, f.x + f.w]);\n"
	"  });\n"
	"  /* nested matches count once: merge the covered x ranges */\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  spans.forEach(function (s) {\n"
	"    if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }\n"
	"    else if (s[1] > end) { sum += s[1] - end; end = s[1]; }\n"
	"  });\n"
	"  var pct = total > 0 ? 100 * sum / total : 0;\n"
	"  $('matched').textContent = n ? 'Matched: ' + pct.toFixed(2) + '%%' : 'No match';\n"
	"  return pct;\n"
	"}\n"
	"function searchPrompt() {\n"
	"  var t = window.prompt('Search frames (regular expression):', '');\n"
	"  if (t !== null) search(t);\n"
	"}\n"
	"window.xpuFlame = { zoom: function (i) { zoom(frames[i]); }, reset: reset, search: search, up: UP,\n"
	"  clearSearch: clearSearch, frames: frames, find: function (name) {\n"
	"    for (var i = 0; i < frames.length; i++) if (frames[i].name === name) return i; return -1; } };\n"
	"init();\n";

/* The subtitle: what the graph shows (the merged view of a trace without GPU work: samples). */
static const char *view_name(const struct session *s)
{
	const char *title = view__def(s->opts->view)->svg_title;

	if (title)
		return title;
	return session__has_gpu(s) ? "CPU samples and GPU work under launch stacks" : "CPU samples";
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* What the lines above the graph say: title, subtitle, and a legend of two colours or none. */
struct svg_titles {
	const char *title;		/* "Flame graph: ", then the files */
	const char *file[2];		/* the second one NULL but in a differential graph */
	const char *what;		/* the subtitle, before "; weight: " and the unit */
	char unit[160];
	const char *legend[2], *legend_fill[2];
};

static void svg_head(const struct draw *d, const struct svg_titles *t)
{
	uint32_t details_y = d->icicle ? ICICLE_DETAILS_Y : d->height - 12;
	FILE *out = d->out;
	int i;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\">\n",
		IMG_WIDTH, d->height, IMG_WIDTH, d->height);
	fprintf(out, "<style>\n"
		     "text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }\n"
		     "#frames text { pointer-events: none; }\n"
		     "#frames g { cursor: pointer; }\n"
		     "#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
		     ".hide { display: none; }\n"
		     ".parent { opacity: 0.5; }\n"
		     ".button { cursor: pointer; fill: #225; text-decoration: underline; }\n"
		     "#title { font-size: 17px; }\n"
		     "</style>\n",
		FONT_SIZE);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f6f6f2\"/>\n"
		     "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">%s",
		IMG_WIDTH / 2, t->title);
	put_xml(out, base_name(t->file[0]), 80);
	if (t->file[1]) {
		fputs(" vs ", out);
		put_xml(out, base_name(t->file[1]), 80);
	}
	fprintf(out, "</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\" fill=\"#555\">%s; weight: ",
		IMG_WIDTH / 2, t->what);
	put_xml(out, t->unit, sizeof(t->unit));
	fprintf(out, "</text>\n<text x=\"%d\" y=\"56\" text-anchor=\"middle\" fill=\"#555\">%sClick a frame to zoom, Ctrl-F or Search to highlight.</text>\n",
		IMG_WIDTH / 2, d->icicle ? "Root at the top (--svg-root=bottom: at the bottom). " : "");
	for (i = 0; i < 2 && t->legend[i]; i++)
		fprintf(out, "<rect x=\"%d\" y=\"30\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"40\">%s</text>\n",
			PAD_X + 50 * i, t->legend_fill[i], PAD_X + 50 * i + 14, t->legend[i]);
	fprintf(out, "<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"22\" onclick=\"xpuFlame.reset()\">Reset zoom</text>\n"
		     "<text id=\"search\" class=\"button\" x=\"%d\" y=\"22\" text-anchor=\"end\" onclick=\"xpuFlame.search(window.prompt('Search frames (regular expression):', '') || '')\">Search</text>\n"
		     "<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		     "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		PAD_X, IMG_WIDTH - PAD_X, IMG_WIDTH - PAD_X, details_y, PAD_X, details_y);
}

/*
 * The whole file: titles, the frames of d->sd (and d->base's, in a differential graph), the
 * script; nodes: the graph's, drawn or not. 0 or -ENOMEM.
 */
static int svg_write(struct draw *d, const struct svg_titles *t, size_t nodes)
{
	const struct side *sd = d->sd;
	struct frame_at root = { .name = "all", .weight = sd->total, .in_base = true,
				 .base_w = d->base ? d->base->total : 0 };
	FILE *out = d->out;
	int err = 0;

	d->icicle = !d->p->s->opts->svg_root_bottom;
	d->height = (d->icicle ? ICICLE_PAD_TOP + ICICLE_PAD_BOTTOM : PAD_TOP + PAD_BOTTOM) +
		    (sd->max_depth + 1) * FRAME_H;
	d->scale = sd->total > 0 ? (IMG_WIDTH - 2.0 * PAD_X) / sd->total : 0;
	svg_head(d, t);
	fputs("<g id=\"frames\">\n", out);
	if (sd->total > 0)
		err = draw_graph(d, &root, sd->fo->n, d->base ? d->base->fo->n : 0);
	free(d->kids);
	if (err)
		return err;
	fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fprintf(out, svg_script, IMG_WIDTH, PAD_X, CHAR_W, d->icicle ? -1 : 1);
	fputs("]]></script>\n</svg>\n", out);
	if (d->p->s->opts->verbose)
		fprintf(stderr, "xpu-report: svg: %zu stacks, %llu frames drawn of %zu\n", sd->fo->n,
			(unsigned long long)d->frames, nodes);
	return 0;
}

/*
 * The walk over sd (w: with its base, if any), and whether the frames at least MIN_WIDTH_PX
 * wide fit --max-output: 0, -ENOMEM, or -EFBIG (said here) for more than it holds.
 */
static int flame_walk_checked(struct walk *w, const struct report_opts *o)
{
	uint64_t max = o->max_output_bytes ? o->max_output_bytes : REPORT_MAX_OUTPUT_DEFAULT;
	int err;

	/* some slack, as the tree this count was made for summed in another order */
	w->min_w = MIN_WIDTH_PX * 0.999 * w->sd->total / (IMG_WIDTH - 2.0 * PAD_X);
	err = flame_walk(w);
	if (err)
		return err;
	if (max != UINT64_MAX && w->bytes > max) {
		fprintf(stderr, "xpu-report: error: the flame graph has %zu frames to draw, more than "
			"--max-output=%llu bytes hold (%llu at the least): narrow it with "
			"--time-range=START,END (seconds) or --pid=PID, or raise --max-output\n",
			w->kept + 1, (unsigned long long)max, (unsigned long long)w->bytes);
		return -EFBIG;
	}
	return 0;
}

int out_svg(const struct profile *p, FILE *out)
{
	struct side sd = { 0 };
	struct draw d = { .p = p, .sd = &sd, .out = out, .color = name_color, .tip = weight_tip };
	struct svg_titles t = { .title = "Flame graph: ", .file = { p->s->opts->input },
				.what = view_name(p->s) };
	struct folded fo;
	struct walk w = { .sd = &sd };
	int err;

	err = folded__build(p, &fo);
	if (!err)
		err = side_open(&sd, &fo);
	if (!err)
		err = flame_walk_checked(&w, p->s->opts);
	if (err)
		goto out;
	if (!fo.n)
		fprintf(stderr, "xpu-report: warning: nothing to draw: the %s view of this trace is empty\n",
			view__def(p->s->opts->view)->name);
	session__weight_unit(p->s, t.unit, sizeof(t.unit));
	/* a legend only where both kinds can be drawn */
	if (p->s->opts->view == VIEW_MERGED && session__has_gpu(p->s)) {
		t.legend[0] = "CPU";
		t.legend_fill[0] = "rgb(230,110,20)";
		t.legend[1] = "GPU";
		t.legend_fill[1] = "rgb(70,185,220)";
	}
	err = svg_write(&d, &t, w.nodes + 1);
out:
	side_close(&sd);
	folded__release(&fo);
	return err;
}

/* ---- differential flame graph (xpu-report diff -F svg) ------------------------------------ */

/* Full colour at the largest change of a frame's share, and never under this (points). */
#define DIFF_FULL_MIN 5.0

struct diff_paint {
	const struct profile *base;		/* the base's profile, for tooltips */
	double full;			/* |delta| drawn at full colour */
};

/* The change of a frame's share from the base's node of its path (its share where none). */
static double node_delta(const struct draw *d, const struct frame_at *fr)
{
	return share_of(d->sd, fr->weight) - (fr->in_base ? share_of(d->base, fr->base_w) : 0);
}

/* red grew, blue shrank, both paler the smaller the change; grey for none */
static void delta_color(const struct draw *d, const struct frame_at *fr, char *buf, size_t len)
{
	const struct diff_paint *dp = d->arg;
	double delta = node_delta(d, fr), t = fmin(1, fabs(delta) / dp->full);
	int c = (int)lround(235 - 155 * t);

	if (delta > 0)
		snprintf(buf, len, "rgb(255,%d,%d)", c, c);
	else if (delta < 0)
		snprintf(buf, len, "rgb(%d,%d,255)", c, c);
	else
		snprintf(buf, len, "rgb(235,235,235)");
}

static void delta_tip(const struct draw *d, const struct frame_at *fr)
{
	const struct diff_paint *dp = d->arg;
	double delta = node_delta(d, fr);

	weight_tip(d, fr);
	fputs("; base: ", d->out);
	if (fr->in_base) {
		put_weight(d->out, dp->base, fr->base_w);
		fprintf(d->out, ", %.2f%%", share_of(d->base, fr->base_w));
	} else {
		fputs("none", d->out);
	}
	fprintf(d->out, "; %+.2f points", fabs(delta) < 0.005 ? 0.0 : delta);
}

/*
 * The frames of new, each coloured by its change from the base's node of its path, found in
 * the base's rows (side_child). Full colour at the largest change of any node of new, drawn
 * or not (a frame too narrow to see may have lost most of the base's share): a walk over
 * new's rows before the first frame is written.
 */
int out_svg_diff(const struct profile *const side[2], FILE *out)
{
	struct side sd = { 0 }, bsd = { 0 };
	struct diff_paint dp = { .base = side[0], .full = DIFF_FULL_MIN };
	struct draw d = { .p = side[1], .sd = &sd, .base = &bsd, .out = out,
			  .color = delta_color, .tip = delta_tip, .arg = &dp };
	struct svg_titles t = {
		.title = "Differential flame graph: ",
		.file = { side[0]->s->opts->input, side[1]->s->opts->input },
		.what = "the stacks of new, coloured by the change of each frame's share",
		.legend = { "grew", "shrank" },
		.legend_fill = { "rgb(255,80,80)", "rgb(80,80,255)" },
	};
	struct folded fo = { 0 }, bfo = { 0 };
	struct walk w = { .sd = &sd, .base = &bsd };
	int err;

	err = folded__build(side[1], &fo);
	if (!err)
		err = folded__build(side[0], &bfo);
	if (!err)
		err = side_open(&sd, &fo);
	if (!err)
		err = side_open(&bsd, &bfo);
	if (!err)
		err = flame_walk_checked(&w, side[1]->s->opts);
	if (err)
		goto out;
	dp.full = fmax(dp.full, w.max_gain);
	session__weight_unit(side[1]->s, t.unit, sizeof(t.unit));
	err = svg_write(&d, &t, w.nodes + 1);
out:
	side_close(&sd);
	side_close(&bsd);
	folded__release(&fo);
	folded__release(&bfo);
	return err;
}
