// SPDX-License-Identifier: MIT
/*
 * The chrome output's GPU streams: per GPU device a pseudo-process "GPU N" with one track per
 * (process, context, stream) holding kernels, copies and memsets, and flow arrows from the
 * launching API call ("s") to the work ("f" with bp "e").
 */
#include <errno.h>
#include <stdio.h>

#include "model/backward_share.h"
#include "model/graph_site.h"
#include "model/gpu_mem.h"
#include "output/chrome/chrome.h"

/*
 * The "s" end of a flow into GPU work of (pid, corr): on its API call, else its launch. It
 * sits inside the call, at its middle unless the work's own point (f_ts) comes earlier: a
 * viewer drops a flow that ends before it starts.
 */
static bool flow_start(struct chrome *c, uint32_t pid, uint32_t corr, uint64_t id, uint64_t f_ts)
{
	const struct trace *t = c->t;
	long v = gpu_join__api(c->j, pid, corr);

	if (v >= 0) {
		const struct xpu_rec_gpu_api *a = &t->apis[v];

		if (!filter__span(&c->ses->filter, a->pid, a->tid, a->start_ns, a->end_ns))
			return false;
		uint64_t mid = a->start_ns + (a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0) / 2;

		if (f_ts < mid)
			mid = f_ts > a->start_ns ? f_ts : a->start_ns;
		chrome__begin(c, 's', a->pid, a->tid, mid);
	} else if ((v = gpu_join__launch(c->j, pid, corr)) >= 0) {
		const struct xpu_rec_gpu_launch *l = &t->launches[v];
		struct thread_track *th;

		if (!filter__at(&c->ses->filter, l->pid, l->tid, l->ts_ns) ||
		    !(th = chrome__thread(c, l->pid, l->tid)))
			return false;
		th->has_events = true;
		/* no API record (API tracing off): a marker to hang the arrow on */
		if (!c->launch_marked[v]) {
			c->launch_marked[v] = 1;
			chrome__begin(c, 'i', l->pid, l->tid, l->ts_ns);
			chrome__put(c, ",\"s\":\"t\",\"cat\":\"cuda_api\",\"name\":\"launch\",\"args\":{\"correlation_id\":%u,\"cbid\":%u}",
				    l->corr_id, l->cbid);
			chrome__end(c);
		}
		chrome__begin(c, 's', l->pid, l->tid, l->ts_ns);
	} else {
		return false;
	}
	chrome__put(c, ",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%llu", (unsigned long long)id);
	chrome__end(c);
	return true;
}

static void flow_end(struct chrome *c, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t id)
{
	chrome__begin(c, 'f', pid, tid, ts);
	chrome__put(c, ",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%llu",
		    (unsigned long long)id);
	chrome__end(c);
}

/*
 * Common part of kernels, copies and memsets: filters (the launching thread decides --tid,
 * as in the folded view), finds the stream track and opens the event; the caller writes
 * name and args.
 */
static int gpu_begin(struct chrome *c, const struct gpu_work *w, uint32_t context,
		     uint32_t stream, const struct stream_track **out)
{
	const struct stream_track *s;
	struct gpu_interval iv = { w->start, w->end > w->start ? w->end : w->start, 0 };
	int err = 0;

	*out = NULL;
	if (!w->keep)
		return 0;
	s = chrome__stream(c, w->device, w->pid, context, stream, &err);
	if (!s)
		return err;
	iv.key = s->gpu << 1 | (w->kind != GPU_WORK_KERNEL);
	if (VEC_PUSH(c->iv, c->niv, c->iv_cap, iv))
		return -ENOMEM;
	*out = s;
	chrome__begin(c, 'X', GPU_PID_BASE + s->gpu, chrome__stream_tid(c, s), w->start);
	chrome__dur(c, w->start, w->end);
	return 0;
}

static void gpu_flow(struct chrome *c, const struct stream_track *s, uint32_t pid, uint32_t corr,
		     uint64_t start, uint64_t end)
{
	uint64_t id = c->next_flow + 1, mid = start + (end > start ? end - start : 0) / 2;

	if (flow_start(c, pid, corr, id, mid)) {
		flow_end(c, GPU_PID_BASE + s->gpu, chrome__stream_tid(c, s), mid, id);
		c->next_flow = id;
	}
}

/*
 * Backward work put under its forward stack: the node and the forward site, in args. Work a
 * graph replayed is the backward work of its capture's launch, if any.
 */
static void backward_args(struct chrome *c, const struct gpu_work *w)
{
	const char *node, *site;
	uint32_t launch = w->capture ? w->capture : w->launch;

	if (!launch || backward_share__site(c->ses, launch - 1, &node, &site) != 1)
		return;
	chrome__put(c, ",\"backward_node\":");
	chrome__cstr(c, node + 11);
	chrome__put(c, ",\"forward_site\":");
	chrome__cstr(c, site);
}

static void kernel_args(struct chrome *c, const struct xpu_rec_gpu_kernel *k,
			const struct gpu_work *w)
{
	const char *n = kernel_names__get(&c->ses->kernel_names, k->name_str);

	if (!n || !*n)
		n = "[unknown kernel]";
	chrome__put(c, ",\"cat\":\"kernel\",\"name\":");
	chrome__cstr(c, n);
	chrome__put(c, ",\"args\":{\"correlation_id\":%u,\"grid\":\"(%u,%u,%u)\",\"block\":\"(%u,%u,%u)\",\"registers_per_thread\":%u,\"static_smem_bytes\":%u,\"dynamic_smem_bytes\":%u,\"stream\":%u",
		    k->corr_id, k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z,
		    k->registers_per_thread, k->static_smem_bytes, k->dynamic_smem_bytes, k->stream);
	if (k->flags & XPU_GPU_IN_GRAPH)
		chrome__put(c, ",\"graph_id\":%u,\"graph_node_id\":%llu", k->graph_id,
			    (unsigned long long)k->graph_node_id);
}

/*
 * Work a CUDA graph replayed: where its node was captured, or why that is not known (it is
 * then under the replay's call alone).
 */
static void graph_args(struct chrome *c, const struct gpu_work *w)
{
	const char *site;
	int r;

	if (w->graph == GRAPH_NONE)
		return;
	r = graph_site__name(&c->uc, w, &site);
	if (r == 1) {
		chrome__put(c, ",\"capture_site\":");
		chrome__cstr(c, site);
		chrome__put(c, ",\"capture_correlation_id\":%u",
			    c->t->launches[w->capture - 1].corr_id);
	} else if (w->graph != GRAPH_MAPPED) {
		/* (mapped but no site: out of memory naming it, or a stack without frames) */
		chrome__put(c, ",\"capture_site_unknown\":");
		chrome__cstr(c, gpu_graph__fate_name(w->graph));
	}
}

static void memcpy_args(struct chrome *c, const struct xpu_rec_gpu_memcpy *m)
{
	uint64_t dur = m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;

	chrome__put(c, ",\"cat\":\"memcpy\",\"name\":\"%s\",\"args\":{\"correlation_id\":%u,\"bytes\":%llu,\"src\":\"%s\",\"dst\":\"%s\"",
		    memcpy_kind_name(m->copy_kind), m->corr_id, (unsigned long long)m->bytes,
		    memory_kind_name(m->src_kind), memory_kind_name(m->dst_kind));
	/* bytes per ns is GB/s */
	if (dur)
		chrome__put(c, ",\"GB/s\":%.3f", (double)m->bytes / dur);
	if (m->copy_kind == XPU_MEMCPY_PTOP)
		chrome__put(c, ",\"src_device\":%u,\"dst_device\":%u", m->src_device, m->dst_device);
	chrome__put(c, ",\"stream\":%u", m->stream);
	if (m->flags & XPU_GPU_IN_GRAPH)
		chrome__put(c, ",\"graph_id\":%u,\"graph_node_id\":%llu", m->graph_id,
			    (unsigned long long)m->graph_node_id);
}

static void memset_args(struct chrome *c, const struct xpu_rec_gpu_memset *m)
{
	chrome__put(c, ",\"cat\":\"memset\",\"name\":\"memset\",\"args\":{\"correlation_id\":%u,\"bytes\":%llu,\"value\":%u,\"memory\":\"%s\",\"stream\":%u",
		    m->corr_id, (unsigned long long)m->bytes, m->value, memory_kind_name(m->mem_kind),
		    m->stream);
	if (m->flags & XPU_GPU_IN_GRAPH)
		chrome__put(c, ",\"graph_id\":%u,\"graph_node_id\":%llu", m->graph_id,
			    (unsigned long long)m->graph_node_id);
}

/* The stream a work item ran on, and its name and args after gpu_begin(). */
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

static void work_args(struct chrome *c, const struct gpu_work *w)
{
	if (w->kind == GPU_WORK_KERNEL)
		kernel_args(c, &c->t->kernels[w->index], w);
	else if (w->kind == GPU_WORK_MEMCPY)
		memcpy_args(c, &c->t->memcpys[w->index]);
	else
		memset_args(c, &c->t->memsets[w->index]);
	graph_args(c, w);
	if (w->kind == GPU_WORK_KERNEL)
		backward_args(c, w);
	chrome__put(c, "}");
}

/* Kernels, then copies, then memsets, each in trace order: the join's order. */
int chrome__emit_gpu(struct chrome *c)
{
	const struct stream_track *s;
	uint32_t context, stream;
	size_t i;
	int err;

	for (i = 0; i < c->j->n; i++) {
		const struct gpu_work *w = &c->j->w[i];

		if (out__failed(c->out))
			return -EIO;
		work_stream(c->t, w, &context, &stream);
		err = gpu_begin(c, w, context, stream, &s);
		if (err)
			return err;
		if (!s)
			continue;
		work_args(c, w);
		chrome__end(c);
		gpu_flow(c, s, w->pid, w->corr, w->start, w->end);
	}
	return 0;
}
