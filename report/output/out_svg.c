// SPDX-License-Identifier: MIT
/*
 * An interactive flame graph as one self-contained SVG: the folded lines of the current view
 * and weight (folded.h, the very data --format=folded prints) are merged into a tree and
 * drawn root at the bottom, one rectangle per frame with a <title> tooltip (frame, weight,
 * percent). Labels are cut to fit in C, so the picture reads even where scripts do not run
 * (an <img>); the embedded script adds click-to-zoom, reset and search with matched percent.
 * GPU work ("[gpu] ..." leaves) is drawn in blue-greens, blocked time ("[off-cpu] ...") in
 * greys, kernel frames ("_[k]") in orange,
 * everything else in the usual warm colours, each hue fixed by a hash of the name.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "output/out.h"

#define IMG_WIDTH 1200
#define FRAME_H 16
#define PAD_X 10
#define PAD_TOP 72
#define PAD_BOTTOM 34
#define FONT_SIZE 12
#define CHAR_W (FONT_SIZE * 0.59)
#define MIN_WIDTH_PX 0.1

struct node {
	uint32_t name;		/* id in the local pool */
	uint32_t parent;
	uint32_t first, last, next;	/* children list; 0 = none (node 0 is the root) */
	uint32_t depth;
	double weight;
};

struct flame {
	struct strpool names;
	struct node *n;
	size_t nn, cap;
	struct kmap child;	/* {parent, name id} -> node */
	uint32_t max_depth;
	size_t nodes;		/* of the whole tree, whose narrowest are not all made */
};

static int node_child(struct flame *f, uint32_t parent, const char *name, size_t len,
		      uint32_t *out)
{
	uint32_t id = strpool__intern(&f->names, name, len), *v;
	struct node nd = { 0 };
	bool ins;

	if (!id)
		return -ENOMEM;
	v = kmap__put(&f->child, parent, id, f->nn, &ins);
	if (!v)
		return -ENOMEM;
	if (ins) {
		nd.name = id;
		nd.parent = parent;
		nd.depth = f->n[parent].depth + 1;
		if (VEC_PUSH(f->n, f->nn, f->cap, nd))
			return -ENOMEM;
		if (f->n[parent].last)
			f->n[f->n[parent].last].next = *v;
		else
			f->n[parent].first = *v;
		f->n[parent].last = *v;
	}
	*out = *v;
	return 0;
}

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

#define NO_NODE UINT32_MAX

/*
 * A walk over the rows in frame order (cmp_frames), where a node's rows are adjacent: with a
 * stack of the open nodes, each node's weight is known as it closes, before any node is
 * made. A node is kept when it weighs at least min_w, or (keep_matched) when its path is a
 * node of the tree other. Each row's frames up to the first node not kept, that one
 * included (its width still moves its later siblings right), go to keep[] (when not NULL).
 * With gain (and other), the largest change of share of a node not kept from other's node
 * of its path. A flame graph of many processes on deep stacks was as many nodes as their
 * frames, gigabytes for a few frames drawn; the walk holds the rows' order and the stack.
 */
struct walk {
	const struct folded *fo;
	const uint32_t *order;
	double min_w, total;		/* total: the rows' weight */
	struct flame *other;
	bool keep_matched, gain;
	uint32_t *keep;
	size_t nodes, kept;		/* every node of the whole tree; those kept */
	double max_gain;
};

/* other's child of parent with the name of frame (NO_NODE: none); 0 or -ENOMEM */
static int other_child(struct walk *w, uint32_t parent, uint32_t frame, uint32_t *out)
{
	const char *name = strpool__str(w->fo->names, frame);
	uint32_t id;
	const uint32_t *v;

	*out = NO_NODE;
	if (parent == NO_NODE)
		return 0;
	id = strpool__intern(&w->other->names, name, strlen(name));
	if (!id)
		return -ENOMEM;
	v = kmap__get(&w->other->child, parent, id);
	*out = v ? *v : NO_NODE;
	return 0;
}

static int flame_walk(struct walk *w, uint32_t max_depth)
{
	const struct folded *fo = w->fo;
	size_t *start = malloc((max_depth + 1) * sizeof(*start)), i, q;
	double *wt = malloc((max_depth + 1) * sizeof(*wt));
	uint32_t *m = malloc((max_depth + 1) * sizeof(*m)), od = 0, prev = 0, c, d;
	int err = 0;

	w->nodes = w->kept = 0;
	w->max_gain = 0;
	if (!start || !wt || !m) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; w->keep && i < fo->n; i++)
		w->keep[i] = folded__depth(fo, i);
	for (i = 0; i <= fo->n && !err; i++) {
		uint32_t r = i < fo->n ? w->order[i] : 0, nr = i < fo->n ? folded__depth(fo, r) : 0;

		for (c = 0; i && c < od && c < nr &&
			    folded__frame(fo, r, c) == folded__frame(fo, prev, c); c++)
			;
		/* the open nodes past the common prefix close, children first */
		while (od > c) {
			d = --od;
			if (d)
				wt[d - 1] += wt[d];
			w->nodes++;
			if (wt[d] >= w->min_w || (w->keep_matched && m[d] != NO_NODE)) {
				w->kept++;
				continue;
			}
			for (q = start[d]; w->keep && q < i; q++)
				w->keep[w->order[q]] = d + 1;
			if (w->gain && m[d] != NO_NODE)
				w->max_gain = fmax(w->max_gain, fabs(100.0 * wt[d] / w->total -
					100.0 * w->other->n[m[d]].weight / w->other->n[0].weight));
		}
		if (i == fo->n)
			break;
		for (d = c; d < nr && !err; d++) {
			start[d] = i;
			wt[d] = 0;
			m[d] = NO_NODE;
			if (w->other)
				err = other_child(w, d ? m[d - 1] : 0, folded__frame(fo, r, d), &m[d]);
		}
		od = nr;
		wt[nr - 1] += fo->rows[r].weight;
		prev = r;
	}
out:
	free(start);
	free(wt);
	free(m);
	return err;
}

/* The rows in frame order, or NULL. */
static uint32_t *frame_order(const struct folded *fo)
{
	uint32_t *order = malloc((fo->n ? fo->n : 1) * sizeof(*order));
	size_t i;

	if (!order)
		return NULL;
	for (i = 0; i < fo->n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, fo->n, sizeof(*order), cmp_frames, (void *)fo);
	return order;
}

/*
 * The tree of the rows, children in the order they first come (the rows are sorted
 * bytewise): of each row keep[] frames, or every frame without keep.
 */
static int flame_build(struct flame *f, const struct folded *fo, const uint32_t *keep)
{
	struct node root = { 0 };
	size_t i;
	int err = 0;

	root.name = strpool__intern(&f->names, "all", 3);
	if (!root.name || VEC_PUSH(f->n, f->nn, f->cap, root))
		return -ENOMEM;
	for (i = 0; i < fo->n && !err; i++) {
		uint32_t n = keep ? keep[i] : folded__depth(fo, i), k, cur = 0;

		f->n[0].weight += fo->rows[i].weight;
		for (k = 0; k < n && !err; k++) {
			const char *name = strpool__str(fo->names, folded__frame(fo, i, k));

			err = node_child(f, cur, name, strlen(name), &cur);
			if (!err)
				f->n[cur].weight += fo->rows[i].weight;
		}
	}
	if (!keep)
		f->nodes = f->nn;
	return err;
}

/* The deepest row's frames, and the rows' weight. */
static void rows_extent(const struct folded *fo, uint32_t *max_depth, double *total)
{
	size_t i;

	*max_depth = 0;
	*total = 0;
	for (i = 0; i < fo->n; i++) {
		*total += fo->rows[i].weight;
		if (folded__depth(fo, i) > *max_depth)
			*max_depth = folded__depth(fo, i);
	}
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

	while (i < len) {
		size_t l = utf8_len(s + i, len - i);

		if (chars == max_chars) {
			fputs("..", out);
			return;
		}
		chars++;
		if (!l || (s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) {
			fputs("&#xfffd;", out);
			i++;
			continue;
		}
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fwrite(s + i, 1, l, out); break;
		}
		i += l;
	}
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

struct draw {
	struct profile *p;
	struct flame *f;
	FILE *out;
	double scale;		/* px per weight unit */
	uint32_t height;
	uint64_t frames;
	/* a frame's fill and what its tooltip says after the name (a differential graph's) */
	void (*color)(const struct draw *d, uint32_t node, char *buf, size_t len);
	void (*tip)(const struct draw *d, uint32_t node);
	void *arg;
};

static void name_color(const struct draw *d, uint32_t node, char *buf, size_t len)
{
	frame_color(strpool__str(&d->f->names, d->f->n[node].name), buf, len);
}

/* " (weight, percent" of the whole graph; the caller closes the parenthesis */
static void weight_tip(const struct draw *d, uint32_t node)
{
	double total = d->f->n[0].weight, w = d->f->n[node].weight;

	fputs(" (", d->out);
	put_weight(d->out, d->p, w);
	fprintf(d->out, ", %.2f%%", total > 0 ? 100.0 * w / total : 0.0);
}

static void draw_node(struct draw *d, uint32_t i, double x)
{
	const struct node *nd = &d->f->n[i];
	const char *name = strpool__str(&d->f->names, nd->name);
	double w = nd->weight * d->scale, y = d->height - PAD_BOTTOM - (nd->depth + 1.0) * FRAME_H;
	size_t fit = w > 3 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0;
	char color[32];
	uint32_t c;

	if (w < MIN_WIDTH_PX || out__failed(d->out))
		return;
	d->frames++;
	d->color(d, i, color, sizeof(color));
	fprintf(d->out, "<g><title>");
	put_xml(d->out, name, SIZE_MAX);
	d->tip(d, i);
	fprintf(d->out, ")</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">",
		x, y, w, FRAME_H - 1, color, x + 3, y + FRAME_H - 4.5);
	if (fit >= 3)
		put_xml(d->out, name, utf8_chars(name) > fit ? fit - 2 : SIZE_MAX);
	fputs("</text></g>\n", d->out);
	for (c = nd->first; c; c = d->f->n[c].next) {
		draw_node(d, c, x);
		x += d->f->n[c].weight * d->scale;
	}
}

/*
 * Zoom, reset and search. Frame geometry is read back from the drawn rectangles at load, so
 * the C side stays the single source of layout; names come from the <title> (before the last
 * " (", which starts the weight).
 */
static const char svg_script[] =
	"'use strict';\n"
	"var W = " "%d" ", PAD = %d, CW = %.3f, frames = [], total = 0, zoomed = null;\n"
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
	"    var inside = f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps && f.y <= z.y;\n"
	"    var below = f.y > z.y && f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps;\n"
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
	"window.xpuFlame = { zoom: function (i) { zoom(frames[i]); }, reset: reset, search: search,\n"
	"  clearSearch: clearSearch, frames: frames, find: function (name) {\n"
	"    for (var i = 0; i < frames.length; i++) if (frames[i].name === name) return i; return -1; } };\n"
	"init();\n";

/* The subtitle: what the graph shows (the merged view of a trace without GPU work: samples). */
static const char *view_name(const struct session *s)
{
	enum report_view v = s->opts->view;

	return v == VIEW_MEMORY ? "GPU memory held at the peak (bytes) under its allocating stacks" :
	       v == VIEW_GPU ? "GPU work under its launch stacks" :
	       v == VIEW_CPU ? "CPU samples" :
	       v == VIEW_OFF_CPU ? "Off-CPU time under the stacks that blocked" :
	       v == VIEW_WALL ? "Wall time: CPU samples and off-CPU time" :
	       session__has_gpu(s) ? "CPU samples and GPU work under launch stacks" : "CPU samples";
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
	fprintf(out, "</text>\n<text x=\"%d\" y=\"56\" text-anchor=\"middle\" fill=\"#555\">Click a frame to zoom, Ctrl-F or Search to highlight.</text>\n",
		IMG_WIDTH / 2);
	for (i = 0; i < 2 && t->legend[i]; i++)
		fprintf(out, "<rect x=\"%d\" y=\"30\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"40\">%s</text>\n",
			PAD_X + 50 * i, t->legend_fill[i], PAD_X + 50 * i + 14, t->legend[i]);
	fprintf(out, "<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"22\" onclick=\"xpuFlame.reset()\">Reset zoom</text>\n"
		     "<text id=\"search\" class=\"button\" x=\"%d\" y=\"22\" text-anchor=\"end\" onclick=\"xpuFlame.search(window.prompt('Search frames (regular expression):', '') || '')\">Search</text>\n"
		     "<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		     "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		PAD_X, IMG_WIDTH - PAD_X, IMG_WIDTH - PAD_X, d->height - 12, PAD_X, d->height - 12);
}

/* The whole file: titles, the frames of d->f (built), the script. */
static void svg_write(struct draw *d, const struct svg_titles *t, size_t nlines)
{
	struct flame *f = d->f;
	FILE *out = d->out;

	d->height = PAD_TOP + (f->max_depth + 1) * FRAME_H + PAD_BOTTOM;
	d->scale = f->n[0].weight > 0 ? (IMG_WIDTH - 2.0 * PAD_X) / f->n[0].weight : 0;
	svg_head(d, t);
	fputs("<g id=\"frames\">\n", out);
	if (f->n[0].weight > 0)
		draw_node(d, 0, PAD_X);
	fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fprintf(out, svg_script, IMG_WIDTH, PAD_X, CHAR_W);
	fputs("]]></script>\n</svg>\n", out);
	if (d->p->s->opts->verbose)
		fprintf(stderr, "xpu-report: svg: %zu stacks, %llu frames drawn of %zu\n", nlines,
			(unsigned long long)d->frames, f->nodes);
}

static void flame_free(struct flame *f)
{
	strpool__free(&f->names);
	kmap__free(&f->child);
	free(f->n);
	memset(f, 0, sizeof(*f));
}

/*
 * Every drawn frame writes more than this (its <g>, <title>, <rect> and <text>): a graph of
 * more frames passes --max-output, known before the tree is made.
 */
#define FRAME_MIN_BYTES 100

/*
 * The flame tree of fo with the nodes draw_node draws, at least MIN_WIDTH_PX wide (and the
 * first narrower on each row), and the walk that found them (order and keep its arrays,
 * freed by the caller). 0, -ENOMEM, or -EFBIG (said here) for more frames to draw than
 * --max-output holds.
 */
static int flame_drawn(struct flame *f, const struct folded *fo, const struct report_opts *o,
		       struct walk *w)
{
	uint64_t max = o->max_output_bytes ? o->max_output_bytes : REPORT_MAX_OUTPUT_DEFAULT;
	int err = 0;

	w->fo = fo;
	rows_extent(fo, &f->max_depth, &w->total);
	if (!(w->total > 0))
		return flame_build(f, fo, NULL);
	/* sums in another order than the tree's may round otherwise: some slack */
	w->min_w = MIN_WIDTH_PX * 0.999 * w->total / (IMG_WIDTH - 2.0 * PAD_X);
	w->order = frame_order(fo);
	w->keep = malloc((fo->n ? fo->n : 1) * sizeof(*w->keep));
	if (!w->order || !w->keep)
		return -ENOMEM;
	err = flame_walk(w, f->max_depth);
	if (err)
		return err;
	f->nodes = w->nodes + 1;
	if (max != UINT64_MAX && w->kept + 1 > max / FRAME_MIN_BYTES) {
		fprintf(stderr, "xpu-report: error: the flame graph has %zu frames to draw, more than "
			"--max-output=%llu bytes hold: narrow it with --time-range=START,END (seconds) "
			"or --pid=PID, or raise --max-output\n", w->kept + 1, (unsigned long long)max);
		return -EFBIG;
	}
	return flame_build(f, fo, w->keep);
}

static void walk_free(struct walk *w)
{
	free((void *)w->order);
	free(w->keep);
}

int out_svg(struct profile *p, FILE *out)
{
	struct flame f = { 0 };
	struct draw d = { .p = p, .f = &f, .out = out, .color = name_color, .tip = weight_tip };
	struct svg_titles t = { .title = "Flame graph: ", .file = { p->s->opts->input },
				.what = view_name(p->s) };
	struct folded fo;
	struct walk w = { 0 };
	size_t n;
	int err;

	err = folded__build(p, &fo);
	if (!err)
		err = flame_drawn(&f, &fo, p->s->opts, &w);
	n = fo.n;
	walk_free(&w);
	folded__release(&fo);
	if (err)
		goto out;
	if (!n)
		fprintf(stderr, "xpu-report: warning: nothing to draw: the %s view of this trace is empty\n",
			p->s->opts->view == VIEW_GPU ? "gpu" : p->s->opts->view == VIEW_CPU ? "cpu" :
			p->s->opts->view == VIEW_MEMORY ? "memory" :
			p->s->opts->view == VIEW_OFF_CPU ? "off-cpu" :
			p->s->opts->view == VIEW_WALL ? "wall" : "merged");
	session__weight_unit(p->s, t.unit, sizeof(t.unit));
	/* a legend only where both kinds can be drawn */
	if (p->s->opts->view == VIEW_MERGED && session__has_gpu(p->s)) {
		t.legend[0] = "CPU";
		t.legend_fill[0] = "rgb(230,110,20)";
		t.legend[1] = "GPU";
		t.legend_fill[1] = "rgb(70,185,220)";
	}
	svg_write(&d, &t, n);
out:
	flame_free(&f);
	return err;
}

/* ---- differential flame graph (xpu-report diff -F svg) ------------------------------------ */

/* Full colour at the largest change of a frame's share, and never under this (points). */
#define DIFF_FULL_MIN 5.0

struct diff_paint {
	const struct draw *base;	/* the base's tree and profile, for tooltips */
	uint32_t *match;		/* new node -> base node of the same path; 0: none */
	double full;			/* |delta| drawn at full colour */
};

static double node_share(const struct flame *f, uint32_t node)
{
	return f->n[0].weight > 0 ? 100.0 * f->n[node].weight / f->n[0].weight : 0;
}

static double node_delta(const struct draw *d, uint32_t node)
{
	const struct diff_paint *dp = d->arg;
	uint32_t m = node ? dp->match[node] : 0;

	return node_share(d->f, node) - (m || !node ? node_share(dp->base->f, m) : 0);
}

/* red grew, blue shrank, both paler the smaller the change; grey for none */
static void delta_color(const struct draw *d, uint32_t node, char *buf, size_t len)
{
	const struct diff_paint *dp = d->arg;
	double delta = node_delta(d, node), t = fmin(1, fabs(delta) / dp->full);
	int c = (int)lround(235 - 155 * t);

	if (delta > 0)
		snprintf(buf, len, "rgb(255,%d,%d)", c, c);
	else if (delta < 0)
		snprintf(buf, len, "rgb(%d,%d,255)", c, c);
	else
		snprintf(buf, len, "rgb(235,235,235)");
}

static void delta_tip(const struct draw *d, uint32_t node)
{
	const struct diff_paint *dp = d->arg;
	uint32_t m = node ? dp->match[node] : 0;
	double delta = node_delta(d, node);

	weight_tip(d, node);
	fputs("; base: ", d->out);
	if (m || !node) {
		put_weight(d->out, dp->base->p, dp->base->f->n[m].weight);
		fprintf(d->out, ", %.2f%%", node_share(dp->base->f, m));
	} else {
		fputs("none", d->out);
	}
	fprintf(d->out, "; %+.2f points", fabs(delta) < 0.005 ? 0.0 : delta);
}

/* Pairs every node of the new tree with the base's node of the same path (0: none). */
static int match_nodes(struct flame *nf, struct flame *bf, uint32_t **match)
{
	size_t i;

	*match = calloc(nf->nn ? nf->nn : 1, sizeof(**match));
	if (!*match)
		return -ENOMEM;
	/* a parent is made before its children, so its match is known by then */
	for (i = 1; i < nf->nn; i++) {
		uint32_t pm = (*match)[nf->n[i].parent], id;
		const char *name = strpool__str(&nf->names, nf->n[i].name);
		const uint32_t *v;

		if (!pm && nf->n[i].parent)
			continue;
		id = strpool__intern(&bf->names, name, strlen(name));
		if (!id)
			return -ENOMEM;
		v = kmap__get(&bf->child, pm, id);
		(*match)[i] = v ? *v : 0;
	}
	return 0;
}

/*
 * The base's tree of a differential graph: the nodes whose path is a node of the new tree
 * (their shares are compared), and those with at least half DIFF_FULL_MIN of the base (the
 * only ones against which a new node too narrow to draw can change by more).
 */
static int base_tree(struct flame *bf, const struct folded *fo, struct flame *nf)
{
	struct walk w = { .fo = fo, .other = nf, .keep_matched = true };
	int err;

	rows_extent(fo, &bf->max_depth, &w.total);
	if (!(w.total > 0))
		return flame_build(bf, fo, NULL);
	w.min_w = DIFF_FULL_MIN / 2 / 100 * w.total;
	w.order = frame_order(fo);
	w.keep = malloc((fo->n ? fo->n : 1) * sizeof(*w.keep));
	err = w.order && w.keep ? flame_walk(&w, bf->max_depth) : -ENOMEM;
	if (!err) {
		bf->nodes = w.nodes + 1;
		err = flame_build(bf, fo, w.keep);
	}
	walk_free(&w);
	return err;
}

/*
 * Both trees hold only what the graph needs: the new one the nodes drawn (flame_drawn), the
 * base's those (base_tree); a node of new not made changes the colour scale (dp.full) as
 * much as it did, found by a second walk over new's rows.
 */
int out_svg_diff(struct profile *const side[2], FILE *out)
{
	struct flame f = { 0 }, bf = { 0 };
	struct draw base = { .p = side[0], .f = &bf };
	struct diff_paint dp = { .base = &base, .full = DIFF_FULL_MIN };
	struct draw d = { .p = side[1], .f = &f, .out = out, .color = delta_color,
			  .tip = delta_tip, .arg = &dp };
	struct svg_titles t = {
		.title = "Differential flame graph: ",
		.file = { side[0]->s->opts->input, side[1]->s->opts->input },
		.what = "the stacks of new, coloured by the change of each frame's share",
		.legend = { "grew", "shrank" },
		.legend_fill = { "rgb(255,80,80)", "rgb(80,80,255)" },
	};
	struct folded fo = { 0 }, bfo = { 0 };
	struct walk w = { 0 };
	size_t n = 0, i;
	int err;

	err = folded__build(side[1], &fo);
	if (!err)
		err = flame_drawn(&f, &fo, side[1]->s->opts, &w);
	if (!err)
		err = folded__build(side[0], &bfo);
	if (!err)
		err = base_tree(&bf, &bfo, &f);
	if (!err)
		err = match_nodes(&f, &bf, &dp.match);
	if (!err && w.order) {
		free(w.keep);
		w.keep = NULL;
		w.other = &bf;
		w.gain = true;
		err = flame_walk(&w, f.max_depth);
		dp.full = fmax(dp.full, w.max_gain);
	}
	n = fo.n;
	walk_free(&w);
	folded__release(&fo);
	folded__release(&bfo);
	if (err)
		goto out;
	for (i = 1; i < f.nn; i++)
		dp.full = fmax(dp.full, fabs(node_delta(&d, i)));
	session__weight_unit(side[1]->s, t.unit, sizeof(t.unit));
	svg_write(&d, &t, n);
out:
	free(dp.match);
	flame_free(&f);
	flame_free(&bf);
	return err;
}
