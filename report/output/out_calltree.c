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
 * says which. A launch site as the text report's table names it, with its line ("train_step
 * (train.py:57)"), is its function where frames have no lines.
 *
 * The tree is made a level at a time, and of a level only the children a shown node shows:
 * every stack's path could be a node per frame (a tree of stacks times 64 frames, for the
 * few rows printed). Each level adds its stacks' weights, in the order of the stacks, to a
 * candidate per (parent, frame), then keeps those the parent shows (its heaviest, over the
 * limit and within --rows) and counts the rest; the stacks under one not kept go no further.
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
	uint32_t first, next;	/* shown children, in order; 0 = none (node 0 is FUNC) */
	uint32_t nc;		/* children, shown or not */
	double w;
};

/* A child found at one level, before its parent decides to show it */
struct cand {
	uint32_t parent, frame;
	double w;
};

#define GONE UINT32_MAX		/* a stack whose path left the shown nodes (or ended) */

struct ctree {
	const struct profile *p;
	bool callers;
	struct tnode *n;
	size_t nn, cap;
	double limit;		/* percent of the root's weight */
	const char *func;	/* --callers or --callees */
	struct kmap match;	/* {0, frame} -> enum match */
	enum match want;	/* M_EXACT if a frame is named FUNC, else M_PYTHON */
	uint32_t *named;	/* the frames that are FUNC as M_PYTHON, first seen first */
	size_t nnamed, named_cap;
	/* per profile entry: the frame that is FUNC (-1: none) and the node its path is at */
	long *at;
	uint32_t *cur;
	/* the level being made */
	struct cand *c;
	size_t ncand, cand_cap;
	struct kmap cidx;	/* {parent, frame} -> cand */
};

/* Frame d of entry i's path from FUNC (towards the root for callers), or GONE past its end. */
static int path_frame(struct ctree *t, size_t i, uint32_t d, uint32_t *frame)
{
	const uint32_t *f;
	uint32_t n;
	long at = t->at[i];
	int err = profile__frames(t->p, &t->p->e[i], &f, &n);

	if (err)
		return err;
	*frame = GONE;
	if (d >= MAX_DEPTH)
		return 0;
	if (t->callers && d < (uint64_t)at)	/* f[0], the process, ends it */
		*frame = f[at - 1 - d];
	else if (!t->callers && at + 1 + d < n)
		*frame = f[at + 1 + d];
	return 0;
}

/* Parent first, then as print shows children: heaviest first, then by frame id. */
static int cmp_cand(const void *a, const void *b, void *arg)
{
	const struct cand *cs = arg, *x = &cs[*(const uint32_t *)a], *y = &cs[*(const uint32_t *)b];
	int c = CMP(x->parent, y->parent);

	if (!c)
		c = CMP(y->w, x->w);
	return c ? c : CMP(x->frame, y->frame);
}

/*
 * Of the candidates sorted (order), each parent's shown children become nodes, in order,
 * and the others are counted: cand -> node (GONE: not shown) in order[] itself, by index.
 */
static int keep_shown(struct ctree *t, uint32_t *order, uint32_t *node)
{
	const struct report_opts *o = t->p->s->opts;
	size_t max = o->rows ? o->rows : SIZE_MAX, i = 0, j, k;
	double root = t->n[0].w;

	while (i < t->ncand) {
		uint32_t parent = t->c[order[i]].parent, last = 0;

		for (j = i; j < t->ncand && t->c[order[j]].parent == parent; j++)
			;
		t->n[parent].nc = (uint32_t)(j - i);
		for (k = i; k < j; k++) {
			const struct cand *c = &t->c[order[k]];
			struct tnode nd = { .frame = c->frame, .w = c->w };

			node[order[k]] = GONE;
			if (k - i >= max || !(100 * c->w / root >= t->limit))
				continue;
			if (VEC_PUSH(t->n, t->nn, t->cap, nd))
				return -ENOMEM;
			node[order[k]] = (uint32_t)(t->nn - 1);
			if (last)
				t->n[last].next = (uint32_t)(t->nn - 1);
			else
				t->n[parent].first = (uint32_t)(t->nn - 1);
			last = (uint32_t)(t->nn - 1);
		}
		i = j;
	}
	return 0;
}

/* Level d of the tree: the children of the nodes the stacks are at. *live: stacks still in. */
static int make_level(struct ctree *t, uint32_t d, size_t *live)
{
	const struct profile *p = t->p;
	uint32_t *order = NULL, *node = NULL, frame, *v;
	size_t i;
	bool ins;
	int err = 0;

	t->ncand = 0;
	kmap__free(&t->cidx);
	for (i = 0; i < p->n && !err; i++) {
		if (t->cur[i] == GONE)
			continue;
		err = path_frame(t, i, d, &frame);
		if (err || frame == GONE) {
			t->cur[i] = GONE;
			continue;
		}
		v = kmap__put(&t->cidx, t->cur[i], frame, (uint32_t)t->ncand, &ins);
		if (!v || (ins && VEC_PUSH(t->c, t->ncand, t->cand_cap,
					   ((struct cand){ .parent = t->cur[i], .frame = frame }))))
			return -ENOMEM;
		t->c[*v].w += profile__weight(p, p->e[i].samples, prof_entry__measured(&p->e[i]));
		t->cur[i] = *v;
	}
	if (err)
		return err;
	order = malloc((t->ncand ? t->ncand : 1) * sizeof(*order));
	node = malloc((t->ncand ? t->ncand : 1) * sizeof(*node));
	if (!order || !node) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->ncand; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, t->ncand, sizeof(*order), cmp_cand, t->c);
	err = keep_shown(t, order, node);
	for (i = 0, *live = 0; !err && i < p->n; i++) {
		if (t->cur[i] != GONE)
			t->cur[i] = node[t->cur[i]];
		*live += t->cur[i] != GONE;
	}
out:
	free(order);
	free(node);
	return err;
}

/* A node being printed: its children from c on (i of them printed), under prefix[0, plen). */
struct visit {
	uint32_t id, c;
	size_t plen, i, shown;
};

/*
 * Starts printing node id under prefix[0, plen): a call chain (one child, all of the weight)
 * continues at the same indentation, as one line a node; the first node of the chain with
 * other children is pushed onto the visits. 0, -EIO or -ENOMEM.
 */
static int visit_node(struct ctree *t, FILE *out, uint32_t id, const char *prefix, size_t plen,
		      struct visit **v, size_t *nv, size_t *cap)
{
	double root = t->n[0].w;
	size_t shown;
	uint32_t c;

	for (;;) {
		const struct tnode *nd = &t->n[id];

		if (!nd->nc)
			return 0;
		if (out__failed(out))
			return -EIO;
		for (shown = 0, c = nd->first; c; c = t->n[c].next)
			shown++;
		if (!(id && nd->nc == 1 && shown == 1 && t->n[nd->first].w == nd->w))
			break;
		fprintf(out, "%7.2f%% %12.0f  %s%s\n", 100 * t->n[nd->first].w / root,
			t->n[nd->first].w, prefix, strpool__str(&t->p->s->pool, t->n[nd->first].frame));
		id = nd->first;
	}
	return VEC_PUSH(*v, *nv, *cap, ((struct visit){ .id = id, .c = t->n[id].first,
							 .plen = plen, .shown = shown })) ?
		       -ENOMEM : 0;
}

/*
 * The tree under FUNC, depth first. The nodes being printed are kept on the heap, not the C
 * stack: a chain is as long as the stacks are deep, which the trace sets. 0, -EIO or -ENOMEM.
 */
static int print_tree(struct ctree *t, FILE *out, char *prefix)
{
	struct visit *v = NULL;
	size_t nv = 0, cap = 0;
	double root = t->n[0].w;
	int err;

	prefix[0] = '\0';
	err = visit_node(t, out, 0, prefix, 0, &v, &nv, &cap);
	while (!err && nv) {
		struct visit *at = &v[nv - 1];
		const struct tnode *nd = &t->n[at->id];
		const struct tnode *k;
		size_t plen = at->plen;
		uint32_t c = at->c;
		bool last;

		prefix[plen] = '\0';
		if (!c) {
			if (at->shown < nd->nc)
				fprintf(out, "%22s%s`- (%zu more)\n", "", prefix,
					(size_t)nd->nc - at->shown);
			nv--;
			continue;
		}
		k = &t->n[c];
		last = at->i + 1 == at->shown && at->shown == nd->nc;
		at->c = k->next;
		at->i++;
		fprintf(out, "%7.2f%% %12.0f  %s%s%s\n", 100 * k->w / root, k->w, prefix,
			last ? "`- " : "|- ", strpool__str(&t->p->s->pool, k->frame));
		if (plen + 4 < 4 * MAX_DEPTH) {
			memcpy(prefix + plen, last ? "   " : "|  ", 4);
			err = visit_node(t, out, c, prefix, plen + 3, &v, &nv, &cap);
		}
	}
	free(v);
	return err;
}

/*
 * How frame (in file, a symbolizer file code) is FUNC. A Python frame is "qualname (file.py)"
 * ("qualname (file.py:LINE)" with --python-lines): FUNC without the file is the qualname or
 * its last part ("forward" is "ResNet.forward").
 */
/*
 * The length of FUNC less a line, where it is a launch site as the text report names it
 * ("train_step (train.py:57)", model/user_code.h): up to the ':' of ":57)"; 0 otherwise.
 */
static size_t site_stem(const char *func)
{
	size_t n = strlen(func), i = n;

	if (n < 4 || func[n - 1] != ')')
		return 0;
	for (i = n - 1; i > 0 && func[i - 1] >= '0' && func[i - 1] <= '9'; i--)
		;
	return i < n - 1 && i > 1 && func[i - 1] == ':' && strstr(func, " (") ? i - 1 : 0;
}

static enum match match_of(const struct ctree *t, uint32_t frame, uint32_t file)
{
	const char *name = strpool__str(&t->p->s->pool, frame), *paren;
	size_t len = strlen(t->func), qlen, stem;

	if (!strcmp(name, t->func))
		return M_EXACT;
	paren = strstr(name, " (");
	if (!paren || strcmp(session__file_name(t->p->s, file), "[python]"))
		return M_NONE;
	/* a launch site from the text report: the function of that line */
	stem = site_stem(t->func);
	if (stem && !strncmp(name, t->func, stem) && name[stem] == ')' && !name[stem + 1])
		return M_PYTHON;
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
	struct ctree t = { .p = p, .callers = callers, .func = func,
			   .limit = o->percent_limit > 0 ? o->percent_limit : DEFAULT_LIMIT };
	struct tnode root = { 0 };
	double total_w = 0;
	char prefix[4 * MAX_DEPTH + 4] = "";
	char unit[160];
	size_t i, live = 0;
	uint32_t d;
	int err = 0;

	t.at = malloc((p->n ? p->n : 1) * sizeof(*t.at));
	t.cur = malloc((p->n ? p->n : 1) * sizeof(*t.cur));
	if (!t.at || !t.cur || VEC_PUSH(t.n, t.nn, t.cap, root)) {
		err = -ENOMEM;
		goto out;
	}
	err = find_matches(&t);
	for (i = 0; i < p->n && !err; i++) {
		double w = profile__weight(p, p->e[i].samples, prof_entry__measured(&p->e[i]));
		const uint32_t *f;
		uint32_t n;

		total_w += w;
		err = profile__frames(p, &p->e[i], &f, &n);
		if (err)
			break;
		t.at[i] = find_frame(&t, f, n);
		t.cur[i] = t.at[i] > 0 ? 0 : GONE;
		if (t.at[i] > 0) {
			t.n[0].w += w;
			live++;
		}
	}
	for (d = 0; live && !err; d++)
		err = make_level(&t, d, &live);
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
	err = print_tree(&t, out, prefix);
out:
	free(t.n);
	free(t.named);
	free(t.at);
	free(t.cur);
	free(t.c);
	kmap__free(&t.cidx);
	kmap__free(&t.match);
	return err;
}
