// SPDX-License-Identifier: MIT
/*
 * Mappings of one pid can overlap over time (munmap + mmap, dlclose + dlopen, exec), and a
 * hostile trace can make every mapping overlap every other (one that spans the address space).
 * A walk over the mappings that could hold an address is then a walk over all of them, for
 * every lookup: quadratic. So each pid gets an interval index instead: a segment tree over
 * the distinct starts and ends, each mapping stored in the O(log n) nodes that tile its range,
 * each node's mappings sorted by (ts, index). A lookup walks one leaf-to-root path and binary
 * searches each node: O(log^2 n), whatever the overlap. Memory: O(n log n) indexes at worst,
 * about one node per mapping where mappings do not overlap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "sym/maps.h"

static int cmp_mapping(const void *a, const void *b)
{
	const struct xpu_rec_mapping *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct ts_idx {
	uint64_t ts;
	uint32_t idx;
};

static int cmp_ts_idx(const void *a, const void *b)
{
	const struct ts_idx *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

struct coord_key {
	const uint64_t *xs;
	uint64_t v;
};

static bool coord_at_most(size_t i, const void *arg)
{
	const struct coord_key *k = arg;

	return k->xs[i] <= k->v;
}

/* Index of the last xs[i] <= v (xs sorted, xs[0] <= v), among nx. */
static size_t slot_of(const uint64_t *xs, size_t nx, uint64_t v)
{
	return upper_bound(nx, coord_at_most, &(struct coord_key){ xs, v }) - 1;
}

/* The distinct starts and ends of pm's mappings, sorted. */
static int build_coords(struct pid_maps *pm)
{
	size_t i, k = 0;

	pm->xs = malloc(2 * pm->n * sizeof(*pm->xs));
	if (!pm->xs)
		return -ENOMEM;
	for (i = 0; i < pm->n; i++) {
		pm->xs[2 * i] = pm->m[i].start;
		pm->xs[2 * i + 1] = pm->m[i].end;
	}
	qsort(pm->xs, 2 * pm->n, sizeof(*pm->xs), cmp_u64);
	for (i = 0; i < 2 * pm->n; i++) {
		if (!k || pm->xs[k - 1] != pm->xs[i])
			pm->xs[k++] = pm->xs[i];
	}
	pm->nx = k;	/* >= 2: every mapping has start < end */
	return 0;
}

/* Nodes of a segment tree of at most 2^64 leaves that tile a range: two per level at most. */
#define TILE_MAX 128

/*
 * The nodes that tile leaves [a, b) of the iterative segment tree of nl leaves (leaf j is node
 * nl + j, node i's parent i / 2): their mappings are those of every leaf below them.
 */
static size_t tile(size_t nl, size_t a, size_t b, size_t nodes[TILE_MAX])
{
	size_t l = a + nl, r = b + nl, n = 0;

	for (; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			nodes[n++] = l++;
		if (r & 1)
			nodes[n++] = --r;
	}
	return n;
}

/* Fills the tree: first a count per node, then the mappings in (ts, index) order. */
static int build_tree(struct pid_maps *pm)
{
	size_t nl = pm->nx - 1, nn = 2 * nl, i, k, nt, total, nodes[TILE_MAX];
	struct ts_idx *order;
	size_t *fill;

	pm->first = calloc(nn + 1, sizeof(*pm->first));
	order = malloc(pm->n * sizeof(*order));
	if (!pm->first || !order) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < pm->n; i++) {
		size_t a = slot_of(pm->xs, pm->nx, pm->m[i].start);
		size_t b = slot_of(pm->xs, pm->nx, pm->m[i].end);

		order[i] = (struct ts_idx){ pm->m[i].ts_ns, (uint32_t)i };
		nt = tile(nl, a, b, nodes);
		for (k = 0; k < nt; k++)
			pm->first[nodes[k] + 1]++;
	}
	for (i = 1; i <= nn; i++)
		pm->first[i] += pm->first[i - 1];
	total = pm->first[nn];
	pm->ids = malloc((total ? total : 1) * sizeof(*pm->ids));
	fill = malloc((nn ? nn : 1) * sizeof(*fill));
	if (!pm->ids || !fill) {
		free(order);
		free(fill);
		return -ENOMEM;
	}
	memcpy(fill, pm->first, nn * sizeof(*fill));
	qsort(order, pm->n, sizeof(*order), cmp_ts_idx);
	for (i = 0; i < pm->n; i++) {
		const struct xpu_rec_mapping *m = &pm->m[order[i].idx];
		size_t a = slot_of(pm->xs, pm->nx, m->start);
		size_t b = slot_of(pm->xs, pm->nx, m->end);

		nt = tile(nl, a, b, nodes);
		for (k = 0; k < nt; k++)
			pm->ids[fill[nodes[k]]++] = order[i].idx;
	}
	free(order);
	free(fill);
	return 0;
}

static int build_index(struct pid_maps *pm)
{
	/* indexes are u32: a pid with more mappings than that is no trace this report reads */
	if (pm->n > UINT32_MAX)
		return -ENOMEM;
	if (build_coords(pm))
		return -ENOMEM;
	return build_tree(pm);
}

static void pid_maps_free(struct pid_maps *pm)
{
	free(pm->xs);
	free(pm->first);
	free(pm->ids);
}

int maps__build(struct maps *ms, const struct xpu_rec_mapping *m, size_t n)
{
	struct xpu_rec_mapping *all;
	size_t i, j, nv = 0;

	memset(ms, 0, sizeof(*ms));
	all = ms->all = calloc(n ? n : 1, sizeof(*all));
	ms->pids = calloc(n ? n : 1, sizeof(*ms->pids));
	if (!all || !ms->pids)
		goto nomem;
	for (i = 0; i < n; i++) {
		if (m[i].end <= m[i].start) {
			ms->invalid++;
			continue;
		}
		all[nv++] = m[i];
	}
	if (nv)
		qsort(all, nv, sizeof(*all), cmp_mapping);
	for (i = 0; i < nv; i = j) {
		struct pid_maps *pm = &ms->pids[ms->npids];

		for (j = i; j < nv && all[j].pid == all[i].pid; j++)
			;
		pm->pid = all[i].pid;
		pm->m = all + i;
		pm->n = j - i;
		ms->npids++;
		if (build_index(pm) || !kmap__put(&ms->pid_idx, pm->pid, 0, ms->npids - 1, NULL))
			goto nomem;
	}
	return 0;
nomem:
	maps__free(ms);
	return -ENOMEM;
}

struct node_key {
	const struct pid_maps *pm;
	const uint32_t *ids;
	uint64_t ts;
};

static bool mapped_at_most(size_t i, const void *arg)
{
	const struct node_key *k = arg;

	return k->pm->m[k->ids[i]].ts_ns <= k->ts;
}

/* The better of the candidates so far and node's mappings for (before, after) ts (maps.h). */
static void search_node(const struct pid_maps *pm, size_t node, uint64_t ts, long *before,
			long *after)
{
	const uint32_t *ids = pm->ids + pm->first[node];
	size_t n = pm->first[node + 1] - pm->first[node], lo, c;
	uint64_t t1;

	/* first entry with ts_ns > ts */
	lo = upper_bound(n, mapped_at_most, &(struct node_key){ pm, ids, ts });
	/* ties in ts go to the highest index, as before the index existed (goldens) */
	if (lo > 0) {
		c = ids[lo - 1];
		if (*before < 0 || pm->m[c].ts_ns > pm->m[*before].ts_ns ||
		    (pm->m[c].ts_ns == pm->m[*before].ts_ns && c > (size_t)*before))
			*before = (long)c;
	}
	if (lo == n || *before >= 0)
		return;
	t1 = pm->m[ids[lo]].ts_ns;
	/* the last of the entries at t1 (they follow lo) */
	lo += upper_bound(n - lo, mapped_at_most, &(struct node_key){ pm, ids + lo, t1 });
	c = ids[lo - 1];
	if (*after < 0 || t1 < pm->m[*after].ts_ns ||
	    (t1 == pm->m[*after].ts_ns && c > (size_t)*after))
		*after = (long)c;
}

static const struct xpu_rec_mapping *find_in(const struct pid_maps *pm, uint64_t addr, uint64_t ts)
{
	size_t nl = pm->nx - 1, node;
	long before = -1, after = -1;

	if (addr < pm->xs[0] || addr >= pm->xs[nl])
		return NULL;
	for (node = slot_of(pm->xs, pm->nx, addr) + nl; node >= 1; node >>= 1)
		search_node(pm, node, ts, &before, &after);
	return before >= 0 ? &pm->m[before] : after >= 0 ? &pm->m[after] : NULL;
}

const struct pid_maps *maps__pid(const struct maps *ms, uint32_t pid)
{
	uint32_t *v = kmap__get(&ms->pid_idx, pid, 0);

	return v ? &ms->pids[*v] : NULL;
}

const struct xpu_rec_mapping *maps__find(const struct maps *ms, uint32_t pid, uint64_t addr,
					 uint64_t ts)
{
	const struct pid_maps *pm = maps__pid(ms, pid);
	const struct xpu_rec_mapping *r = pm ? find_in(pm, addr, ts) : NULL;

	if (!r && pid && (pm = maps__pid(ms, 0)))
		r = find_in(pm, addr, ts);
	return r;
}

void maps__free(struct maps *ms)
{
	size_t i;

	for (i = 0; i < ms->npids; i++)
		pid_maps_free(&ms->pids[i]);
	free(ms->all);
	free(ms->pids);
	kmap__free(&ms->pid_idx);
	memset(ms, 0, sizeof(*ms));
}
