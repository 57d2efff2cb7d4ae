// SPDX-License-Identifier: MIT
/* GPU memory: allocations paired with releases, and the peak (see gpu_mem.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/gpu_mem.h"

const char *memory_kind_name(uint8_t k)
{
	static const char *const names[] = {
		[XPU_MEM_UNKNOWN] = "unknown", [XPU_MEM_PAGEABLE] = "pageable",
		[XPU_MEM_PINNED] = "pinned", [XPU_MEM_DEVICE] = "device", [XPU_MEM_ARRAY] = "array",
		[XPU_MEM_MANAGED] = "managed", [XPU_MEM_DEVICE_STATIC] = "device static",
		[XPU_MEM_MANAGED_STATIC] = "managed static",
	};

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

/* (pid, device, address, ts, op): a release follows the allocation it frees */
static int cmp_addr(const void *a, const void *b, void *recs)
{
	const struct xpu_rec_gpu_memory *r = recs;
	const struct xpu_rec_gpu_memory *x = &r[*(const uint32_t *)a], *y = &r[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return CMP(x->pid, y->pid);
	if (x->device != y->device)
		return CMP(x->device, y->device);
	if (x->address != y->address)
		return CMP(x->address, y->address);
	if (x->ts_ns != y->ts_ns)
		return CMP(x->ts_ns, y->ts_ns);
	if (x->op != y->op)
		return CMP(x->op, y->op);
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

int gpu_mem__cmp_time(const void *a, const void *b, void *recs)
{
	const struct xpu_rec_gpu_memory *r = recs;
	const struct xpu_rec_gpu_memory *x = &r[*(const uint32_t *)a], *y = &r[*(const uint32_t *)b];

	if (x->ts_ns != y->ts_ns)
		return CMP(x->ts_ns, y->ts_ns);
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void pair_releases(struct gpu_mem *m, const struct xpu_rec_gpu_memory *recs,
			  const uint32_t *by, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++) {
		const struct xpu_rec_gpu_memory *a = &recs[by[i]], *b = &recs[by[i + 1]];

		if (a->op == XPU_GPU_MEM_ALLOC && b->op == XPU_GPU_MEM_FREE && a->pid == b->pid &&
		    a->device == b->device && a->address == b->address) {
			m->r[by[i]].pair = by[i + 1] + 1;
			m->r[by[i + 1]].pair = by[i] + 1;
		}
	}
}

/* Walks the kept allocations and their releases in time order; marks those held at the peak. */
static void find_peak(struct gpu_mem *m, const struct xpu_rec_gpu_memory *recs, uint32_t *by,
		      size_t n)
{
	uint64_t cur = 0;
	size_t i, k = 0, peak_at = 0;
	bool any = false;

	for (i = 0; i < n; i++) {
		const struct gpu_mem_rec *r = &m->r[by[i]];

		if (r->keep || (recs[by[i]].op == XPU_GPU_MEM_FREE && r->pair &&
				m->r[r->pair - 1].keep))
			by[k++] = by[i];
	}
	for (i = 0; i < k; i++) {
		const struct xpu_rec_gpu_memory *x = &recs[by[i]];

		if (x->op == XPU_GPU_MEM_ALLOC) {
			cur += x->bytes;
			if (!any || cur > m->peak_bytes) {
				m->peak_bytes = cur;
				m->peak_ts = x->ts_ns;
				peak_at = i;
				any = true;
			}
		} else {
			uint64_t b = recs[m->r[by[i]].pair - 1].bytes;

			cur -= b <= cur ? b : cur;
		}
	}
	if (!any)
		return;
	/* held at the peak: allocated at or before it, released (if at all) after it */
	for (i = 0; i <= peak_at; i++)
		if (recs[by[i]].op == XPU_GPU_MEM_ALLOC)
			m->r[by[i]].at_peak = true;
	for (i = 0; i <= peak_at; i++)
		if (recs[by[i]].op == XPU_GPU_MEM_FREE)
			m->r[m->r[by[i]].pair - 1].at_peak = false;
}

int gpu_mem__build(struct gpu_mem *m, const struct trace *t, const struct gpu_join *j,
		   const struct filter *f)
{
	uint32_t *by = NULL;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (!t->nmemories)
		return 0;
	m->r = calloc(t->nmemories, sizeof(*m->r));
	by = calloc(t->nmemories, sizeof(*by));
	if (!m->r || !by) {
		free(by);
		return -ENOMEM;
	}
	m->n = t->nmemories;
	for (i = 0; i < m->n; i++) {
		const struct xpu_rec_gpu_memory *x = &t->memories[i];
		long l = gpu_join__launch(j, x->pid, x->corr_id), a = gpu_join__api(j, x->pid, x->corr_id);
		struct gpu_mem_rec *r = &m->r[i];

		r->launch = l >= 0 ? l + 1 : 0;
		r->tid = a >= 0 ? t->apis[a].tid : l >= 0 ? t->launches[l].tid : 0;
		r->keep = x->op == XPU_GPU_MEM_ALLOC && filter__at(f, x->pid, r->tid, x->ts_ns);
		by[i] = (uint32_t)i;
	}
	if (m->n) {	/* an empty table may be NULL */
		qsort_r(by, m->n, sizeof(*by), cmp_addr, t->memories);
		pair_releases(m, t->memories, by, m->n);
		qsort_r(by, m->n, sizeof(*by), gpu_mem__cmp_time, t->memories);
	}
	find_peak(m, t->memories, by, m->n);
	free(by);
	return 0;
}

void gpu_mem__free(struct gpu_mem *m)
{
	free(m->r);
	memset(m, 0, sizeof(*m));
}
