// SPDX-License-Identifier: MIT
/*
 * `--callers FUNC` and `--callees FUNC` (text): one function's callers or callees as a tree,
 * as perf report's call graph of one symbol. Every stack holding FUNC adds its weight along
 * the path from FUNC's outermost occurrence (so recursion counts once): towards the leaf for
 * callees, towards the root for callers (the direct caller first). Children are sorted by
 * weight; --rows caps the children shown per node and --percent-limit (default here 0.5%)
 * hides light branches, each counted in a "N more" line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "out/out.h"

#define MAX_DEPTH 64
#define DEFAULT_LIMIT 0.5	/* percent of FUNC's weight */

struct tnode {
	uint32_t frame;
	uint32_t first, next;	/* children list, 0 = none (node 0 is FUNC) */
	double w;
};

struct ctree {
	struct profile *p;
	struct tnode *n;
	size_t nn, cap;
	struct kmap child;	/* {parent, frame} -> node */
	double limit;		/* percent of the root's weight */
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
	return x->frame < y->frame ? -1 : x->frame > y->frame;
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

/* The outermost frame of f named like func, or -1. */
static long find_frame(const struct ctree *t, const uint32_t *f, uint32_t n, const char *func)
{
	uint32_t k;

	for (k = 1; k < n; k++) {
		if (!strcmp(strpool__str(&t->p->s->pool, f[k]), func))
			return k;
	}
	return -1;
}

int out_calltree(struct profile *p, FILE *out)
{
	const struct report_opts *o = p->s->opts;
	bool callers = o->callers != NULL;
	const char *func = callers ? o->callers : o->callees;
	struct ctree t = { .p = p, .limit = o->percent_limit > 0 ? o->percent_limit : DEFAULT_LIMIT };
	struct tnode root = { 0 };
	double total_w = 0;
	char prefix[4 * MAX_DEPTH + 4] = "";
	char unit[160];
	size_t i;
	int err = 0;

	if (VEC_PUSH(t.n, t.nn, t.cap, root))
		return -ENOMEM;
	for (i = 0; i < p->n && !err; i++) {
		double w = profile__weight(p, p->e[i].samples, p->e[i].gpu_ns);
		const uint32_t *f;
		uint32_t n;
		long at;

		total_w += w;
		err = profile__frames(p, &p->e[i], &f, &n);
		if (err)
			break;
		at = find_frame(&t, f, n, func);
		if (at > 0)
			err = tree_add(&t, f, n, (uint32_t)at, callers, w);
	}
	if (err)
		goto out;
	if (!(t.n[0].w > 0)) {
		fprintf(stderr, "xpu-report: no stack holds a function named '%s' (names as in the text "
			"report's function column)\n", func);
		err = -ENOENT;
		goto out;
	}
	fprintf(out, "# %s of %s%s\n# weight: %s\n", callers ? "callers" : "callees", func,
		callers ? " (the direct caller first)" : "",
		session__weight_unit(p->s, unit, sizeof(unit)));
	fprintf(out, "# shares are of the function's own total; rows under %.2f%% are left out\n",
		t.limit);
	fprintf(out, "%8s %12s  %s\n", "share", "total", "call tree");
	fprintf(out, "%7.2f%% %12.0f  %s (%.2f%% of all)\n", 100.0, t.n[0].w, func,
		total_w > 0 ? 100 * t.n[0].w / total_w : 0);
	err = print_node(&t, out, 0, prefix, 0);
out:
	free(t.n);
	kmap__free(&t.child);
	return err;
}
