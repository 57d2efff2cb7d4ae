// SPDX-License-Identifier: MIT
/*
 * `--callers FUNC` and `--callees FUNC` (text): one function's callers or callees as a tree,
 * as perf report's call graph of one symbol. Every stack holding FUNC adds its weight along
 * the path from FUNC's outermost occurrence (so recursion counts once): towards the leaf for
 * callees, towards the root for callers (the direct caller first). Children are sorted by
 * weight; --rows caps the children shown per node and --percent-limit (default here 0.5%)
 * hides light branches, each counted in a "N more" line. FUNC is a frame name as the text
 * report shows it; where no frame has that name, a Python function may be named without its
 * file and class ("train_step" for "train_step (train.py)", "forward" for "ResNet.forward
 * (resnet.py)"): every Python function of that name is then FUNC, as one, and the header
 * says which.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "output/out.h"

#define MAX_DEPTH 64
#define DEFAULT_LIMIT 0.5	/* percent of FUNC's weight */
#define NAMED_MATCHES 4		/* the Python functions FUNC stands for that the header names */

/* How a frame is FUNC: by its name, or as a Python function FUNC without its file */
enum match { M_NONE, M_EXACT, M_PYTHON };

struct tnode {
	uint32_t frame;
	uint32_t first, next;	/* children list, 0 = none (node 0 is FUNC) */
	double w;
};

struct ctree {
	const struct profile *p;
	struct tnode *n;
	size_t nn, cap;
	struct kmap child;	/* {parent, frame} -> node */
	double limit;		/* percent of the root's weight */
	const char *func;	/* --callers or --callees */
	struct kmap match;	/* {0, frame} -> enum match */
	enum match want;	/* M_EXACT if a frame is named FUNC, else M_PYTHON */
	uint32_t *named;	/* the frames that are FUNC as M_PYTHON, first seen first */
	size_t nnamed, named_cap;
};

static int tree_child(struct ctree *t, uint32_t parent, uint32_t frame, uint32_t *out)
{
	struct tnode nd = { .frame = frame };
	uint32_t *v;
	bool ins;

	v = kmap__put(&t->child, parent, frame, t->nn, &ins);
	if (!v)
		return -ENOMEM;
	if (ins) {
		nd.next = t->n[parent].first;
		if (VEC_PUSH(t->n, t->nn, t->cap, nd))
			return -ENOMEM;
		t->n[parent].first = *v;
	}
	*out = *v;
	return 0;
}

/* Adds one stack (f[0] the process name) holding the function at f[at]. */
static int tree_add(struct ctree *t, const uint32_t *f, uint32_t n, uint32_t at, bool callers,
		    double w)
{
	uint32_t cur = 0, k, d = 0;
	int err;

	t->n[0].w += w;
	if (callers) {
		for (k = at; k-- > 0 && d < MAX_DEPTH; d++) {	/* f[0], the process, ends it */
			err = tree_child(t, cur, f[k], &cur);
			if (err)
				return err;
			t->n[cur].w += w;
		}
		return 0;
	}
	for (k = at + 1; k < n && d < MAX_DEPTH; k++, d++) {
		err = tree_child(t, cur, f[k], &cur);
		if (err)
			return err;
		t->n[cur].w += w;
	}
	return 0;
}

static int cmp_node(const void *a, const void *b, void *arg)
{
	const struct tnode *n = arg, *x = &n[*(const uint32_t *)a], *y = &n[*(const uint32_t *)b];

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return CMP(x->frame, y->frame);
}

static int print_node(struct ctree *t, FILE *out, uint32_t id, char *prefix, size_t plen)
{
	const struct report_opts *o = t->p->s->opts;
	size_t nc = 0, i, shown, max = o->rows ? o->rows : SIZE_MAX;
	uint32_t c, *kids;
	double root = t->n[0].w;
	int err = 0;

	for (c = t->n[id].first; c; c = t->n[c].next)
		nc++;
	if (!nc)
		return 0;
	kids = calloc(nc, sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	for (c = t->n[id].first, i = 0; c; c = t->n[c].next)
		kids[i++] = c;
	qsort_r(kids, nc, sizeof(*kids), cmp_node, t->n);
	for (shown = 0; shown < nc && shown < max &&
			100 * t->n[kids[shown]].w / root >= t->limit; shown++)
		;
	/* a call chain (one child, all of the weight) continues at the same indentation */
	if (id && nc == 1 && shown == 1 && t->n[kids[0]].w == t->n[id].w) {
		fprintf(out, "%7.2f%% %12.0f  %s%s\n", 100 * t->n[kids[0]].w / root, t->n[kids[0]].w,
			prefix, strpool__str(&t->p->s->pool, t->n[kids[0]].frame));
		err = print_node(t, out, kids[0], prefix, plen);
		free(kids);
		return err;
	}
	for (i = 0; i < shown && !err; i++) {
		const struct tnode *k = &t->n[kids[i]];
		bool last = i + 1 == shown && shown == nc;

		fprintf(out, "%7.2f%% %12.0f  %s%s%s\n", 100 * k->w / root, k->w, prefix,
			last ? "`- " : "|- ", strpool__str(&t->p->s->pool, k->frame));
		if (plen + 4 < 4 * MAX_DEPTH) {
			memcpy(prefix + plen, last ? "   " : "|  ", 4);
			err = print_node(t, out, kids[i], prefix, plen + 3);
			prefix[plen] = '\0';
		}
	}
	if (!err && shown < nc)
		fprintf(out, "%22s%s`- (%zu more)\n", "", prefix, nc - shown);
	free(kids);
	return err;
}

/*
 * How frame (in file, a symbolizer file code) is FUNC. A Python frame is "qualname (file.py)"
 * ("qualname (file.py:LINE)" with --python-lines): FUNC without the file is the qualname or
 * its last part ("forward" is "ResNet.forward").
 */
static enum match match_of(const struct ctree *t, uint32_t frame, uint32_t file)
{
	const char *name = strpool__str(&t->p->s->pool, frame), *paren;
	size_t len = strlen(t->func), qlen;

	if (!strcmp(name, t->func))
		return M_EXACT;
	paren = strstr(name, " (");
	if (!paren || strcmp(session__file_name(t->p->s, file), "[python]"))
		return M_NONE;
	qlen = paren - name;
	if (qlen < len || memcmp(paren - len, t->func, len))
		return M_NONE;
	return qlen == len || paren[-len - 1] == '.' ? M_PYTHON : M_NONE;
}

/* Finds every frame that is FUNC, and whether one is named exactly FUNC (then only those). */
static int find_matches(struct ctree *t)
{
	const struct profile *p = t->p;
	size_t i;
	int err;

	t->want = M_PYTHON;
	for (i = 0; i < p->n; i++) {
		const uint32_t *f, *files;
		uint32_t n, k, *v;
		bool ins;

		err = profile__frames_files(p, &p->e[i], &f, &files, &n);
		if (err)
			return err;
		for (k = 1; k < n; k++) {
			v = kmap__put(&t->match, 0, f[k], 0, &ins);
			if (!v)
				return -ENOMEM;
			if (!ins)
				continue;
			*v = match_of(t, f[k], files[k]);
			if (*v == M_EXACT)
				t->want = M_EXACT;
			if (*v == M_PYTHON && VEC_PUSH(t->named, t->nnamed, t->named_cap, f[k]))
				return -ENOMEM;
		}
	}
	return 0;
}

/* The outermost frame of f that is FUNC, or -1. */
static long find_frame(const struct ctree *t, const uint32_t *f, uint32_t n)
{
	const uint32_t *v;
	uint32_t k;

	for (k = 1; k < n; k++) {
		v = kmap__get(&t->match, 0, f[k]);
		if (v && *v == t->want)
			return k;
	}
	return -1;
}

/* The name of the tree's root: FUNC, or the one Python function it stands for. */
static const char *root_name(const struct ctree *t)
{
	if (t->want == M_PYTHON && t->nnamed == 1)
		return strpool__str(&t->p->s->pool, t->named[0]);
	return t->func;
}

/* A header line for a FUNC that stands for several Python functions: which. */
static void print_named(const struct ctree *t, FILE *out)
{
	size_t i;

	if (t->want != M_PYTHON || t->nnamed < 2)
		return;
	fprintf(out, "# %s: %zu Python functions of that name, as one:", t->func, t->nnamed);
	for (i = 0; i < t->nnamed && i < NAMED_MATCHES; i++)
		fprintf(out, "%s %s", i ? "," : "", strpool__str(&t->p->s->pool, t->named[i]));
	if (t->nnamed > NAMED_MATCHES)
		fprintf(out, " and %zu more", t->nnamed - NAMED_MATCHES);
	fputc('\n', out);
}

int out_calltree(const struct profile *p, FILE *out)
{
	const struct report_opts *o = p->s->opts;
	bool callers = o->callers != NULL;
	const char *func = callers ? o->callers : o->callees;
	struct ctree t = { .p = p, .limit = o->percent_limit > 0 ? o->percent_limit : DEFAULT_LIMIT,
			   .func = func };
	struct tnode root = { 0 };
	double total_w = 0;
	char prefix[4 * MAX_DEPTH + 4] = "";
	char unit[160];
	size_t i;
	int err = 0;

	if (VEC_PUSH(t.n, t.nn, t.cap, root))
		return -ENOMEM;
	err = find_matches(&t);
	for (i = 0; i < p->n && !err; i++) {
		double w = profile__weight(p, p->e[i].samples, p->e[i].gpu_ns);
		const uint32_t *f;
		uint32_t n;
		long at;

		total_w += w;
		err = profile__frames(p, &p->e[i], &f, &n);
		if (err)
			break;
		at = find_frame(&t, f, n);
		if (at > 0)
			err = tree_add(&t, f, n, (uint32_t)at, callers, w);
	}
	if (err)
		goto out;
	if (!(t.n[0].w > 0)) {
		fprintf(stderr, "xpu-report: no stack holds a function named '%s' (names as in the text "
			"report's function column; a Python function with or without its "
			"' (file.py)')\n", func);
		err = -ENOENT;
		goto out;
	}
	fprintf(out, "# %s of %s%s\n", callers ? "callers" : "callees", root_name(&t),
		callers ? " (the direct caller first)" : "");
	print_named(&t, out);
	fprintf(out, "# weight: %s\n", session__weight_unit(p->s, unit, sizeof(unit)));
	fprintf(out, "# shares are of the function's own total; rows under %.2f%% are left out\n",
		t.limit);
	fprintf(out, "%8s %12s  %s\n", "share", "total", "call tree");
	fprintf(out, "%7.2f%% %12.0f  %s (%.2f%% of all)\n", 100.0, t.n[0].w, root_name(&t),
		total_w > 0 ? 100 * t.n[0].w / total_w : 0);
	err = print_node(&t, out, 0, prefix, 0);
out:
	free(t.n);
	free(t.named);
	kmap__free(&t.child);
	kmap__free(&t.match);
	return err;
}
