// SPDX-License-Identifier: MIT
/*
 * JIT symbol lookup (see jitsyms.h). Ranges may overlap (a runtime frees code and reuses the
 * memory), so each process's array carries the running maximum of range ends: a lookup finds
 * the last range starting at or below the address, then walks back while an earlier range can
 * still reach it, keeping the latest-recorded one that does. The walk back is bounded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "sym/jitsyms.h"

#define JITSYMS_BACK_MAX 64

struct jit_range {
	uint64_t start, end;
	uint32_t seq;			/* file order: later wins */
	uint32_t name_str;
};

struct jit_pid {
	uint32_t pid;
	struct jit_range *r;		/* sorted by start */
	uint64_t *maxend;		/* maxend[i]: largest end among r[0..i] */
	size_t n;
};

struct jitsyms {
	const struct trace *t;
	struct jit_pid *pids;
	size_t npids;
	struct kmap pid_idx;
	uint64_t symbols, invalid;
};

static int cmp_range(const void *a, const void *b)
{
	const struct jit_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_sym_pid(const void *a, const void *b)
{
	const struct xpu_rec_jit_symbol *x = *(const struct xpu_rec_jit_symbol *const *)a;
	const struct xpu_rec_jit_symbol *y = *(const struct xpu_rec_jit_symbol *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* One process's ranges, from its records (in file order). */
static int add_pid(struct jitsyms *js, const struct xpu_rec_jit_symbol *const *recs, size_t n)
{
	struct jit_pid *p = &js->pids[js->npids];
	uint64_t mx = 0;
	size_t i;

	p->pid = recs[0]->pid;
	p->r = calloc(n, sizeof(*p->r));
	p->maxend = calloc(n, sizeof(*p->maxend));
	if (!p->r || !p->maxend)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct xpu_rec_jit_symbol *s = recs[i];

		if (!s->size_bytes || s->start + s->size_bytes < s->start ||
		    !trace__string(js->t, s->name_str)) {
			js->invalid++;
			continue;
		}
		p->r[p->n++] = (struct jit_range){ s->start, s->start + s->size_bytes,
						   (uint32_t)(recs[i] - js->t->jit_syms),
						   s->name_str };
	}
	if (p->n)
		qsort(p->r, p->n, sizeof(*p->r), cmp_range);
	for (i = 0; i < p->n; i++) {
		mx = p->r[i].end > mx ? p->r[i].end : mx;
		p->maxend[i] = mx;
	}
	js->symbols += p->n;
	if (!kmap__put(&js->pid_idx, p->pid, 0, (uint32_t)js->npids, NULL))
		return -ENOMEM;
	js->npids++;
	return 0;
}

int jitsyms__build(struct jitsyms **out, const struct trace *t)
{
	const struct xpu_rec_jit_symbol **order = NULL;
	struct jitsyms *js;
	size_t i, first;
	int err = -ENOMEM;

	*out = NULL;
	if (!t->njit_syms)
		return 0;
	js = calloc(1, sizeof(*js));
	order = calloc(t->njit_syms, sizeof(*order));
	if (!js || !order)
		goto fail;
	js->t = t;
	js->pids = calloc(t->njit_syms, sizeof(*js->pids));
	if (!js->pids)
		goto fail;
	for (i = 0; i < t->njit_syms; i++)
		order[i] = &t->jit_syms[i];
	qsort(order, t->njit_syms, sizeof(*order), cmp_sym_pid);
	for (first = 0, i = 1; i <= t->njit_syms; i++) {
		if (i < t->njit_syms && order[i]->pid == order[first]->pid)
			continue;
		if (add_pid(js, order + first, i - first))
			goto fail;
		first = i;
	}
	free(order);
	*out = js;
	return 0;
fail:
	free(order);
	jitsyms__free(js);
	return err;
}

struct range_key {
	const struct jit_range *r;
	uint64_t addr;
};

static bool range_at_most(size_t i, const void *arg)
{
	const struct range_key *k = arg;

	return k->r[i].start <= k->addr;
}

const char *jitsyms__find(struct jitsyms *js, uint32_t pid, uint64_t addr)
{
	const struct jit_range *best = NULL;
	const struct jit_pid *p;
	size_t lo, k;
	uint32_t *v;

	if (!js || !(v = kmap__get(&js->pid_idx, pid, 0)))
		return NULL;
	p = &js->pids[*v];
	lo = upper_bound(p->n, range_at_most, &(struct range_key){ p->r, addr });
	for (k = 0; lo > 0 && k < JITSYMS_BACK_MAX && p->maxend[lo - 1] > addr; k++, lo--) {
		const struct jit_range *r = &p->r[lo - 1];

		if (addr < r->end && (!best || r->seq > best->seq))
			best = r;
	}
	return best ? trace__string(js->t, best->name_str) : NULL;
}

void jitsyms__counts(const struct jitsyms *js, uint64_t *symbols, uint64_t *invalid)
{
	*symbols = js ? js->symbols : 0;
	*invalid = js ? js->invalid : 0;
}

void jitsyms__free(struct jitsyms *js)
{
	size_t i;

	if (!js)
		return;
	for (i = 0; js->pids && i < js->npids + 1 && i < js->t->njit_syms; i++) {
		free(js->pids[i].r);
		free(js->pids[i].maxend);
	}
	free(js->pids);
	kmap__free(&js->pid_idx);
	free(js);
}
