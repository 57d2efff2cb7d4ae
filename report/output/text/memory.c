// SPDX-License-Identifier: MIT
/*
 * GPU memory by device and by allocating call path. Releases are paired with allocations by
 * the session's memory join (model/gpu_mem.h); a release with none (memory allocated before
 * recording began) changes no total.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/gpu_mem.h"
#include "output/text/text.h"

#define TOP_SITES 15
#define PATH_FRAMES 4
#define MAX_DEVICES 64
#define MB(b) ((double)(b) / (1 << 20))

struct alloc {
	uint64_t bytes;			/* a release: the size of the allocation it frees */
	bool freed;			/* an allocation freed, or a release paired with one */
};

struct site {
	uint32_t path;			/* id in names */
	uint64_t bytes, count, live_bytes, live_count;
};

static int cmp_site(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return CMP(y->bytes, x->bytes);
	return CMP(x->path, y->path);
}

/* The last PATH_FRAMES frames of the allocating call's stack, root first, as one name. */
static uint32_t call_path(const struct session *s, struct strpool *names,
			  const struct xpu_rec_gpu_memory *m)
{
	const struct gpu_join *j = session__gpu(s);
	long li = j ? gpu_join__launch(j, m->pid, m->corr_id) : -1;
	const struct xpu_rec_gpu_launch *l;
	const uint32_t *f;
	char buf[2048];
	size_t len = 0;
	uint32_t n, i;

	if (li < 0)
		return strpool__intern(names, "(no launch stack)", 17);
	l = &s->t->launches[li];
	if (session__stack(s, l->pid, l->ts_ns, session__launch_stack(s, (size_t)li), true, &f,
			   &n) || !n)
		return strpool__intern(names, "(no frames)", 11);
	buf[0] = '\0';
	if (n > PATH_FRAMES)
		len += snprintf(buf, sizeof(buf), "... > ");
	for (i = n > PATH_FRAMES ? n - PATH_FRAMES : 0; i < n && len < sizeof(buf); i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s",
				strpool__str(&s->pool, f[i]), i + 1 < n ? " > " : "");
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	return strpool__intern(names, buf, len);
}

static void print_devices(const struct trace *t, const uint32_t *by_ts, size_t n, const struct alloc *al,
			  FILE *out)
{
	uint64_t cur[MAX_DEVICES] = { 0 }, peak[MAX_DEVICES] = { 0 }, total[MAX_DEVICES] = { 0 };
	uint64_t nalloc[MAX_DEVICES] = { 0 }, nfree[MAX_DEVICES] = { 0 };
	uint32_t d;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct xpu_rec_gpu_memory *m = &t->memories[by_ts[i]];

		d = m->device < MAX_DEVICES ? m->device : MAX_DEVICES - 1;
		if (m->op == XPU_GPU_MEM_ALLOC) {
			nalloc[d]++;
			total[d] += m->bytes;
			cur[d] += m->bytes;
			if (cur[d] > peak[d])
				peak[d] = cur[d];
		} else if (al[by_ts[i]].freed) {
			/* a release paired with a recorded allocation (al[] marks releases too) */
			nfree[d]++;
			cur[d] -= cur[d] >= al[by_ts[i]].bytes ? al[by_ts[i]].bytes : cur[d];
		}
	}
	fprintf(out, "\n# gpu memory (allocations and releases recorded by CUPTI; MiB)\n");
	fprintf(out, "  %6s %9s %9s %12s %10s %10s\n", "device", "allocs", "frees", "allocated",
		"peak", "at_end");
	for (d = 0; d < MAX_DEVICES; d++)
		if (nalloc[d] || nfree[d])
			fprintf(out, "  %6u %9" PRIu64 " %9" PRIu64 " %12.3f %10.3f %10.3f\n", d,
				nalloc[d], nfree[d], MB(total[d]), MB(peak[d]), MB(cur[d]));
}

static int print_sites(const struct session *s, const struct alloc *al, FILE *out)
{
	const struct trace *t = s->t;
	struct strpool names = { 0 };
	struct site *sites = NULL;
	size_t nsites = 0, cap = 0, i;
	struct kmap idx = { 0 };
	int err = 0;

	for (i = 0; i < t->nmemories && !err; i++) {
		const struct xpu_rec_gpu_memory *m = &t->memories[i];
		uint32_t path, *v;
		bool ins;

		if (m->op != XPU_GPU_MEM_ALLOC || !filter__at(&s->filter, m->pid, 0, m->ts_ns))
			continue;
		path = call_path(s, &names, m);
		v = path ? kmap__put(&idx, path, 0, (uint32_t)nsites, &ins) : NULL;
		if (!v) {
			err = -ENOMEM;
			break;
		}
		if (ins) {
			if (vec_reserve((void **)&sites, &cap, nsites + 1, sizeof(*sites))) {
				err = -ENOMEM;
				break;
			}
			sites[nsites++] = (struct site){ .path = path };
		}
		sites[*v].bytes += m->bytes;
		sites[*v].count++;
		if (!al[i].freed) {
			sites[*v].live_bytes += m->bytes;
			sites[*v].live_count++;
		}
	}
	if (!err) {
		if (nsites)	/* qsort must not see the NULL of an empty table */
			qsort(sites, nsites, sizeof(*sites), cmp_site);
		fprintf(out, "\n# top gpu allocating call paths (MiB allocated; still allocated at the "
			"end of the trace)\n");
		fprintf(out, "  %10s %8s %10s %8s  %s\n", "allocated", "allocs", "at_end", "live",
			"call path");
		for (i = 0; i < nsites && i < TOP_SITES; i++)
			fprintf(out, "  %10.3f %8" PRIu64 " %10.3f %8" PRIu64 "  %s\n",
				MB(sites[i].bytes), sites[i].count, MB(sites[i].live_bytes),
				sites[i].live_count, strpool__str(&names, sites[i].path));
	}
	free(sites);
	kmap__free(&idx);
	strpool__free(&names);
	return err;
}

int text__gpu_memory(const struct session *s, FILE *out)
{
	const struct gpu_mem *m = session__gpu_mem(s);
	const struct trace *t = s->t;
	uint32_t *by_ts = NULL;
	struct alloc *al = NULL;
	size_t i, n = 0;
	int err = -ENOMEM;

	if (!t->nmemories)
		return 0;
	by_ts = calloc(t->nmemories, sizeof(*by_ts));
	al = calloc(t->nmemories, sizeof(*al));
	if (!m || !by_ts || !al)
		goto out;
	/* the pairs of the session's one memory join (model/gpu_mem.h) */
	for (i = 0; i < t->nmemories; i++) {
		if (m->r[i].pair) {
			al[i].freed = true;
			if (t->memories[i].op == XPU_GPU_MEM_FREE)
				al[i].bytes = t->memories[m->r[i].pair - 1].bytes;
		}
		if (filter__process(&s->filter, t->memories[i].pid))
			by_ts[n++] = (uint32_t)i;
	}
	qsort_r(by_ts, n, sizeof(*by_ts), gpu_mem__cmp_time, t->memories);
	print_devices(t, by_ts, n, al, out);
	err = print_sites(s, al, out);
out:
	free(by_ts);
	free(al);
	return err;
}
