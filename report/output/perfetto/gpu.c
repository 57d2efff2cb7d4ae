// SPDX-License-Identifier: MIT
/*
 * The perfetto output's GPU streams: kernels, copies and memsets on their stream's track,
 * with the chrome output's names and args (output/chrome/gpu.c), and a flow from each launch
 * to its work. A flow starts at an instant "launch" on the launching thread, inside its API
 * call (at the call's middle, or at the work's middle if that comes first: a flow must not
 * run back in time), or at the launch record's time without an API record; it ends on the
 * work's slice. Flow ids are Perfetto's flow_ids, one per (launch, work) pair.
 *
 * Track events, not GpuRenderStageEvent: that typed message is made for graphics render
 * stages and has only lately got what CUDA work needs (a name per event, kernels, launch
 * dims, and arrows from host calls, those only through the GpuCorrelation TrackEvent
 * extension, merged in April 2026); older trace processors and UIs would show unnamed stages
 * with no launch arrows, where slices with flow_ids and debug annotations read alike
 * everywhere (docs/report.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model/backward_share.h"
#include "model/gpu_mem.h"
#include "output/perfetto/perfetto.h"

/* The flow's start on the launching thread: 0, 1 when there is none, or an error. */
static int flow_start(struct perfetto *pf, uint32_t pid, uint32_t corr, uint64_t id, uint64_t f_ts)
{
	const struct trace *t = pf->t;
	struct pf_slice s = { .cat = "launch", .name = "launch", .name_len = 6, .instant = true,
			      .flow = id };
	long v = gpu_join__api(pf->j, pid, corr);

	if (v >= 0) {
		const struct xpu_rec_gpu_api *a = &t->apis[v];
		uint64_t mid;

		if (!filter__span(&pf->ses->filter, a->pid, a->tid, a->start_ns, a->end_ns))
			return 1;
		mid = a->start_ns + (a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0) / 2;
		if (f_ts < mid)
			mid = f_ts > a->start_ns ? f_ts : a->start_ns;
		s.track = pf__thread_track(pf, a->pid, a->tid);
		s.start = mid;
	} else if ((v = gpu_join__launch(pf->j, pid, corr)) >= 0) {
		const struct xpu_rec_gpu_launch *l = &t->launches[v];

		if (!filter__at(&pf->ses->filter, l->pid, l->tid, l->ts_ns))
			return 1;
		s.track = pf__thread_track(pf, l->pid, l->tid);
		s.start = l->ts_ns;
		/* no API record (API tracing off): a marker of the launch, as chrome draws */
		if (!pf->launch_marked[v]) {
			struct pf_slice m = { .track = s.track, .start = l->ts_ns, .cat = "cuda_api",
					      .name = "launch", .name_len = 6, .instant = true };
			int err;

			pf->launch_marked[v] = 1;
			pf__arg_u(&m, ARG_CORRELATION_ID, l->corr_id);
			pf__arg_u(&m, ARG_CBID, l->cbid);
			err = pf__slice(pf, &m);
			if (err)
				return err;
		}
	} else {
		return 1;
	}
	return pf__slice(pf, &s);
}

/* work a CUDA graph replayed is the backward work of its capture's launch, if any */
static void backward_args(struct perfetto *pf, struct pf_slice *s, const struct gpu_work *w)
{
	const char *node, *site;
	uint32_t launch = w->capture ? w->capture : w->launch;

	if (!launch || backward_share__site(pf->ses, launch - 1, &node, &site) != 1)
		return;
	pf__arg_s(s, ARG_BACKWARD_NODE, node + 11);
	pf__arg_s(s, ARG_FORWARD_SITE, site);
}

/* grid and block as the chrome output writes them, "(x,y,z)"; buf holds 2 * 40 bytes */
static void kernel(struct perfetto *pf, struct pf_slice *s, const struct gpu_work *w, char *buf)
{
	const struct xpu_rec_gpu_kernel *k = &pf->t->kernels[w->index];
	const char *n = kernel_names__get(&pf->ses->kernel_names, k->name_str);

	s->cat = "kernel";
	s->name = n && *n ? n : "[unknown kernel]";
	s->name_len = strlen(s->name);
	pf__arg_u(s, ARG_CORRELATION_ID, k->corr_id);
	snprintf(buf, 40, "(%u,%u,%u)", k->grid_x, k->grid_y, k->grid_z);
	pf__arg_s(s, ARG_GRID, buf);
	snprintf(buf + 40, 40, "(%u,%u,%u)", k->block_x, k->block_y, k->block_z);
	pf__arg_s(s, ARG_BLOCK, buf + 40);
	pf__arg_u(s, ARG_REGISTERS, k->registers_per_thread);
	pf__arg_u(s, ARG_STREAM, k->stream);
	if (k->flags & XPU_GPU_IN_GRAPH) {
		pf__arg_u(s, ARG_GRAPH_ID, k->graph_id);
		pf__arg_u(s, ARG_GRAPH_NODE_ID, k->graph_node_id);
	}
	backward_args(pf, s, w);
	pf->n.kernels++;
}

static void memcpy_(struct perfetto *pf, struct pf_slice *s, const struct gpu_work *w)
{
	const struct xpu_rec_gpu_memcpy *m = &pf->t->memcpys[w->index];
	uint64_t dur = m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;

	s->cat = "memcpy";
	s->name = memcpy_kind_name(m->copy_kind);
	s->name_len = strlen(s->name);
	pf__arg_u(s, ARG_CORRELATION_ID, m->corr_id);
	pf__arg_u(s, ARG_BYTES, m->bytes);
	pf__arg_s(s, ARG_SRC, memory_kind_name(m->src_kind));
	pf__arg_s(s, ARG_DST, memory_kind_name(m->dst_kind));
	/* bytes per ns is GB/s */
	if (dur)
		pf__arg_d(s, ARG_GBPS, (double)m->bytes / dur);
	if (m->copy_kind == XPU_MEMCPY_PTOP) {
		pf__arg_u(s, ARG_SRC_DEVICE, m->src_device);
		pf__arg_u(s, ARG_DST_DEVICE, m->dst_device);
	}
	pf__arg_u(s, ARG_STREAM, m->stream);
	pf->n.copies++;
}

static void memset_(struct perfetto *pf, struct pf_slice *s, const struct gpu_work *w)
{
	const struct xpu_rec_gpu_memset *m = &pf->t->memsets[w->index];

	s->cat = "memset";
	s->name = "memset";
	s->name_len = 6;
	pf__arg_u(s, ARG_CORRELATION_ID, m->corr_id);
	pf__arg_u(s, ARG_BYTES, m->bytes);
	pf__arg_u(s, ARG_VALUE, m->value);
	pf__arg_s(s, ARG_MEMORY, memory_kind_name(m->mem_kind));
	pf__arg_u(s, ARG_STREAM, m->stream);
	pf->n.memsets++;
}

static void work_stream(const struct trace *t, const struct gpu_work *w, uint32_t *context,
			uint32_t *stream)
{
	if (w->kind == GPU_WORK_KERNEL) {
		*context = t->kernels[w->index].context;
		*stream = t->kernels[w->index].stream;
	} else if (w->kind == GPU_WORK_MEMCPY) {
		*context = t->memcpys[w->index].context;
		*stream = t->memcpys[w->index].stream;
	} else {
		*context = t->memsets[w->index].context;
		*stream = t->memsets[w->index].stream;
	}
}

/* The work's interval for the busy % counters (counters.c), by the device's dense index. */
static int busy_interval(struct perfetto *pf, const struct gpu_work *w, uint64_t start,
			 uint64_t end)
{
	struct gpu_interval iv = { start, end, 0 };
	uint32_t *d;
	bool ins;

	d = kmap__put(&pf->dev_idx, w->device, 0, (uint32_t)pf->ndevs, &ins);
	if (!d || (ins && VEC_PUSH(pf->devs, pf->ndevs, pf->devs_cap, w->device)))
		return -ENOMEM;
	iv.key = *d << 1 | (w->kind != GPU_WORK_KERNEL);
	return VEC_PUSH(pf->iv, pf->niv, pf->iv_cap, iv);
}

/* Kernels, then copies, then memsets, each in trace order: the join's order, as chrome's. */
int pf__emit_gpu(struct perfetto *pf)
{
	size_t i;
	int err;

	for (i = 0; i < pf->j->n; i++) {
		const struct gpu_work *w = &pf->j->w[i];
		struct pf_slice s = { .start = w->start, .end = w->end > w->start ? w->end : w->start };
		uint64_t id = pf->next_flow + 1;
		uint32_t context, stream;
		char buf[80];

		if (!w->keep)
			continue;
		work_stream(pf->t, w, &context, &stream);
		s.track = pf__stream_track(pf, w->device, w->pid, context, stream);
		if (!s.track || busy_interval(pf, w, s.start, s.end))
			return -ENOMEM;
		if (w->kind == GPU_WORK_KERNEL)
			kernel(pf, &s, w, buf);
		else if (w->kind == GPU_WORK_MEMCPY)
			memcpy_(pf, &s, w);
		else
			memset_(pf, &s, w);
		err = flow_start(pf, w->pid, w->corr, id, s.start + (s.end - s.start) / 2);
		if (err < 0)
			return err;
		if (!err) {
			s.flow = id;
			pf->next_flow = id;
			pf->n.flows++;
		}
		err = pf__slice(pf, &s);
		if (err)
			return err;
	}
	return 0;
}
