// SPDX-License-Identifier: MIT
/*
 * One JSON object per line per event, for scripts (format-spec/JSONL.md): CPU samples with
 * their frames, launches, API calls, kernels, copies, memsets, syncs, NVTX, ioctls, GPU
 * memory and off-CPU blocks with their frames. Every object has type, ts (CLOCK_REALTIME ns), pid and tid; lines are in time
 * order (ties: in the order of the types above, then trace order). The filter decides as in
 * every other output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/backward_share.h"
#include "model/graph_site.h"
#include "model/profile.h"
#include "model/user_code.h"
#include "output/ioctl_names.h"
#include "output/json_str.h"
#include "output/out.h"

enum ev_type {
	EV_SAMPLE,
	EV_LAUNCH,
	EV_API,
	EV_GPU,		/* a gpu_join work item: kernel, memcpy or memset */
	EV_SYNC,
	EV_NVTX,
	EV_IOCTL,
	EV_MEMORY,
	EV_OFF_CPU,
};

struct ev {
	uint64_t ts;
	uint32_t idx;
	uint8_t type;
};

struct jl {
	const struct session *s;
	const struct trace *t;
	FILE *out;
	const struct gpu_join *j;
	const struct gpu_mem *m;
	const struct clock_map *clk;	/* the session's */
	struct user_code uc;		/* launch sites (model/user_code.h) */
	struct ev *ev;
	size_t n, cap;
};

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->ts != y->ts)
		return CMP(x->ts, y->ts);
	if (x->type != y->type)
		return CMP(x->type, y->type);
	return CMP(x->idx, y->idx);
}

static int add(struct jl *l, uint8_t type, size_t idx, uint64_t ts)
{
	struct ev e = { ts, (uint32_t)idx, type };

	return VEC_PUSH(l->ev, l->n, l->cap, e);
}

/* Every event that passes the filter, by its start time. */
static int collect(struct jl *l)
{
	const struct filter *f = &l->s->filter;
	const struct trace *t = l->t;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < t->nsamples; i++)
		if (filter__at(f, t->samples[i].pid, t->samples[i].tid, t->samples[i].ts_ns))
			err = add(l, EV_SAMPLE, i, t->samples[i].ts_ns);
	for (i = 0; !err && i < t->nlaunches; i++)
		if (filter__at(f, t->launches[i].pid, t->launches[i].tid, t->launches[i].ts_ns))
			err = add(l, EV_LAUNCH, i, t->launches[i].ts_ns);
	for (i = 0; !err && i < t->napis; i++) {
		const struct xpu_rec_gpu_api *a = &t->apis[i];

		if (filter__span(f, a->pid, a->tid, a->start_ns, a->end_ns))
			err = add(l, EV_API, i, a->start_ns);
	}
	for (i = 0; !err && i < l->j->n; i++)
		if (l->j->w[i].keep)
			err = add(l, EV_GPU, i, l->j->w[i].start);
	for (i = 0; !err && i < t->nsyncs; i++) {
		const struct xpu_rec_gpu_sync *s = &t->syncs[i];
		long a = gpu_join__api(l->j, s->pid, s->corr_id);
		long la = gpu_join__launch(l->j, s->pid, s->corr_id);
		uint32_t tid = a >= 0 ? t->apis[a].tid : la >= 0 ? t->launches[la].tid : 0;

		if (filter__span(f, s->pid, tid, s->start_ns, s->end_ns))
			err = add(l, EV_SYNC, i, s->start_ns);
	}
	for (i = 0; !err && i < t->nnvtxs; i++) {
		const struct xpu_rec_nvtx *n = &t->nvtxs[i];

		if (filter__span(f, n->pid, n->tid, n->start_ns, n->end_ns))
			err = add(l, EV_NVTX, i, n->start_ns);
	}
	for (i = 0; !err && i < t->nioctls; i++) {
		const struct xpu_rec_driver_ioctl *io = &t->ioctls[i];

		if (filter__span(f, io->pid, io->tid, io->start_ns, io->end_ns))
			err = add(l, EV_IOCTL, i, io->start_ns);
	}
	for (i = 0; !err && i < l->m->n; i++) {
		const struct xpu_rec_gpu_memory *x = &t->memories[i];
		bool keep = x->op == XPU_GPU_MEM_ALLOC ? l->m->r[i].keep :
			    filter__at(f, x->pid, l->m->r[i].tid, x->ts_ns);

		if (keep)
			err = add(l, EV_MEMORY, i, x->ts_ns);
	}
	for (i = 0; !err && i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];

		if (filter__span(f, o->pid, o->tid, o->ts_ns, o->ts_ns + o->dur_ns))
			err = add(l, EV_OFF_CPU, i, o->ts_ns);
	}
	return err;
}

static void head(struct jl *l, const char *type, uint64_t mono, uint32_t pid, uint32_t tid)
{
	fprintf(l->out, "{\"type\":\"%s\",\"ts\":%" PRIu64 ",\"pid\":%u,\"tid\":%u", type,
		clock_map__realtime(l->clk, mono), pid, tid);
}

static void key_str(struct jl *l, const char *key, const char *v)
{
	fprintf(l->out, ",\"%s\":", key);
	json_cstr(l->out, v);
}

static void dur(struct jl *l, uint64_t start, uint64_t end)
{
	fprintf(l->out, ",\"dur\":%" PRIu64, end > start ? end - start : 0);
}

/* A launch of backward work under its forward stack: the node, and the forward site. */
static int backward_keys(struct jl *l, size_t launch)
{
	const char *node, *site;
	int r = backward_share__site(l->s, launch, &node, &site);

	if (r == 1) {
		key_str(l, "backward_node", node + 11);
		key_str(l, "forward_site", site);
	}
	return r < 0 ? r : 0;
}

/* A launch's site in the program's own code and the framework op (model/user_code.h). */
static int site_keys(struct jl *l, size_t launch)
{
	struct user_site us;
	int err = user_code__launch(&l->uc, launch, &us);

	if (err == -ENOENT || (!err && !us.site))	/* no stack: no site */
		return 0;
	if (err)
		return err;
	key_str(l, "site", user_code__site_name(&l->uc, &us));
	key_str(l, "op", strpool__str(&l->s->pool, us.op));
	fprintf(l->out, ",\"site_own\":%s", us.own ? "true" : "false");
	return 0;
}

/* "frames": root first, as the folded view names them (CUDA-internal frames included). */
static int frames(struct jl *l, uint32_t pid, uint64_t ts, uint32_t stack_id)
{
	const uint32_t *f;
	uint32_t n, i;
	int err;

	err = session__stack(l->s, pid, ts, stack_id, false, &f, &n);
	if (err)
		return err;
	fputs(",\"frames\":[", l->out);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', l->out);
		json_cstr(l->out, strpool__str(&l->s->pool, f[i]));
	}
	fputc(']', l->out);
	return 0;
}

static const char *domain_name(uint32_t d)
{
	return d == XPU_API_RUNTIME ? "runtime" : d == XPU_API_DRIVER ? "driver" : "unknown";
}

static const char *sync_name(uint32_t k)
{
	switch (k) {
	case XPU_SYNC_EVENT: return "event";
	case XPU_SYNC_STREAM_WAIT_EVENT: return "stream_wait_event";
	case XPU_SYNC_STREAM: return "stream";
	case XPU_SYNC_CONTEXT: return "context";
	default: return "unknown";
	}
}

static void gpu_common(struct jl *l, const struct gpu_work *w, uint32_t context, uint32_t stream)
{
	fprintf(l->out, ",\"device\":%u,\"context\":%u,\"stream\":%u,\"correlation_id\":%u",
		w->device, context, stream, w->corr);
}

static void put_kernel(struct jl *l, const struct gpu_work *w)
{
	const struct xpu_rec_gpu_kernel *k = &l->t->kernels[w->index];
	const char *name = kernel_names__get(&l->s->kernel_names, k->name_str);

	key_str(l, "name", name);
	gpu_common(l, w, k->context, k->stream);
	fprintf(l->out, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"registers_per_thread\":%u,"
		"\"static_smem_bytes\":%u,\"dynamic_smem_bytes\":%u,\"graph_id\":%u",
		k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z,
		k->registers_per_thread, k->static_smem_bytes, k->dynamic_smem_bytes, k->graph_id);
}

/*
 * Work a CUDA graph replayed (1.12, model/gpu_graph.h): its node, and where the node was
 * captured (the capture launch's correlation id and site), or why that is not known.
 */
static int graph_keys(struct jl *l, const struct gpu_work *w, uint64_t node_id)
{
	const char *site;
	int r;

	if (w->graph == GRAPH_NONE)
		return 0;
	fprintf(l->out, ",\"graph_node_id\":%" PRIu64, node_id);
	r = graph_site__name(&l->uc, w, &site);
	if (r < 0)
		return r;
	if (r == 1) {
		fprintf(l->out, ",\"capture_correlation_id\":%u",
			l->t->launches[w->capture - 1].corr_id);
		key_str(l, "capture_site", site);
	} else {
		key_str(l, "capture_site_unknown", gpu_graph__fate_name(w->graph));
	}
	return 0;
}

static int put_gpu(struct jl *l, const struct gpu_work *w)
{
	static const char *const type[] = { "kernel", "memcpy", "memset" };

	head(l, type[w->kind], w->start, w->pid, w->tid);
	dur(l, w->start, w->end);
	if (w->kind == GPU_WORK_KERNEL) {
		put_kernel(l, w);
		return graph_keys(l, w, l->t->kernels[w->index].graph_node_id);
	} else if (w->kind == GPU_WORK_MEMCPY) {
		const struct xpu_rec_gpu_memcpy *m = &l->t->memcpys[w->index];
		const char *kind = memcpy_kind_name(m->copy_kind);

		gpu_common(l, w, m->context, m->stream);
		key_str(l, "kind", strncmp(kind, "memcpy ", 7) ? "unknown" : kind + 7);
		fprintf(l->out, ",\"bytes\":%" PRIu64 ",\"src_device\":%u,\"dst_device\":%u",
			m->bytes, m->src_device, m->dst_device);
		key_str(l, "src_kind", memory_kind_name(m->src_kind));
		key_str(l, "dst_kind", memory_kind_name(m->dst_kind));
		return graph_keys(l, w, m->graph_node_id);
	} else {
		const struct xpu_rec_gpu_memset *m = &l->t->memsets[w->index];

		gpu_common(l, w, m->context, m->stream);
		fprintf(l->out, ",\"bytes\":%" PRIu64 ",\"value\":%u", m->bytes, m->value);
		key_str(l, "mem_kind", memory_kind_name(m->mem_kind));
		return graph_keys(l, w, m->graph_node_id);
	}
}

static void put_ioctl(struct jl *l, const struct xpu_rec_driver_ioctl *io)
{
	const char *file = io->file_str ? trace__string(l->t, io->file_str) : NULL;

	head(l, "ioctl", io->start_ns, io->pid, io->tid);
	dur(l, io->start_ns, io->end_ns);
	fprintf(l->out, ",\"request\":%u", io->request);
	key_str(l, "request_name", ioctl_request_name(io->request, file));
	key_str(l, "file", file);
	fprintf(l->out, ",\"fd\":%u,\"ret\":%" PRId64, io->fd, io->ret);
	if (io->flags & XPU_IOCTL_DRIVER_TIMED)
		fprintf(l->out, ",\"driver_ns\":%" PRIu64, io->driver_ns);
}

static void put_memory(struct jl *l, size_t i)
{
	const struct xpu_rec_gpu_memory *x = &l->t->memories[i];

	head(l, "memory", x->ts_ns, x->pid, l->m->r[i].tid);
	fprintf(l->out, ",\"op\":\"%s\",\"address\":%" PRIu64 ",\"bytes\":%" PRIu64
		",\"device\":%u,\"context\":%u,\"correlation_id\":%u",
		x->op == XPU_GPU_MEM_ALLOC ? "alloc" : x->op == XPU_GPU_MEM_FREE ? "free" : "unknown",
		x->address, x->bytes, x->device, x->context, x->corr_id);
	key_str(l, "mem_kind", memory_kind_name(x->mem_kind));
	if (x->stream != UINT32_MAX)
		fprintf(l->out, ",\"stream\":%u", x->stream);
	fprintf(l->out, ",\"async\":%s", x->flags & XPU_GPU_MEM_ASYNC ? "true" : "false");
}

static int put_event(struct jl *l, const struct ev *e)
{
	const struct trace *t = l->t;
	int err = 0;

	switch (e->type) {
	case EV_SAMPLE: {
		const struct xpu_rec_cpu_sample *s = &t->samples[e->idx];

		head(l, "sample", s->ts_ns, s->pid, s->tid);
		fprintf(l->out, ",\"cpu\":%u", s->cpu);
		/* the session's stack: unwound (-g dwarf) and with Python frames */
		err = frames(l, s->pid, s->ts_ns, session__sample_stack(l->s, e->idx));
		break;
	}
	case EV_LAUNCH: {
		const struct xpu_rec_gpu_launch *la = &t->launches[e->idx];

		head(l, "launch", la->ts_ns, la->pid, la->tid);
		fprintf(l->out, ",\"correlation_id\":%u,\"cbid\":%u", la->corr_id, la->cbid);
		key_str(l, "domain", domain_name(la->domain));
		if (la->flags & XPU_EVENT_IN_PROCESS)
			fputs(",\"in_process\":true", l->out);
		err = backward_keys(l, e->idx);
		if (!err)
			err = site_keys(l, e->idx);
		if (!err)
			err = frames(l, la->pid, la->ts_ns, session__launch_stack(l->s, e->idx));
		break;
	}
	case EV_API: {
		const struct xpu_rec_gpu_api *a = &t->apis[e->idx];

		head(l, "api", a->start_ns, a->pid, a->tid);
		dur(l, a->start_ns, a->end_ns);
		key_str(l, "name", trace__string(t, a->name_str));
		key_str(l, "domain", domain_name(a->domain));
		fprintf(l->out, ",\"cbid\":%u,\"correlation_id\":%u,\"return_code\":%d", a->cbid,
			a->corr_id, a->return_code);
		break;
	}
	case EV_GPU:
		err = put_gpu(l, &l->j->w[e->idx]);
		break;
	case EV_SYNC: {
		const struct xpu_rec_gpu_sync *s = &t->syncs[e->idx];
		long a = gpu_join__api(l->j, s->pid, s->corr_id);
		long la = gpu_join__launch(l->j, s->pid, s->corr_id);

		head(l, "sync", s->start_ns, s->pid,
		     a >= 0 ? t->apis[a].tid : la >= 0 ? t->launches[la].tid : 0);
		dur(l, s->start_ns, s->end_ns);
		key_str(l, "kind", sync_name(s->kind));
		fprintf(l->out, ",\"context\":%u,\"correlation_id\":%u", s->context, s->corr_id);
		if (s->stream != UINT32_MAX)
			fprintf(l->out, ",\"stream\":%u", s->stream);
		break;
	}
	case EV_NVTX: {
		const struct xpu_rec_nvtx *n = &t->nvtxs[e->idx];

		head(l, "nvtx", n->start_ns, n->pid, n->tid);
		dur(l, n->start_ns, n->end_ns);
		key_str(l, "name", n->name_str ? trace__string(t, n->name_str) : NULL);
		key_str(l, "domain", n->domain_str ? trace__string(t, n->domain_str) : NULL);
		key_str(l, "kind", n->kind == XPU_NVTX_MARKER ? "marker" : "range");
		break;
	}
	case EV_IOCTL:
		put_ioctl(l, &t->ioctls[e->idx]);
		break;
	case EV_MEMORY:
		put_memory(l, e->idx);
		break;
	case EV_OFF_CPU: {
		const struct xpu_rec_off_cpu *o = &t->offcpus[e->idx];

		head(l, "off_cpu", o->ts_ns, o->pid, o->tid);
		fprintf(l->out, ",\"dur\":%" PRIu64, o->dur_ns);
		key_str(l, "state", off_cpu_state_name(o->state));
		if (o->waker_tid)
			fprintf(l->out, ",\"waker_tid\":%u", o->waker_tid);
		err = frames(l, o->pid, o->ts_ns, session__offcpu_stack(l->s, e->idx));
		break;
	}
	}
	fputs("}\n", l->out);
	return err;
}

int out_jsonl(const struct session *ses, FILE *out)
{
	struct jl l = { .s = ses, .t = ses->t, .clk = &ses->clk, .out = out };
	size_t i;
	int err;

	l.j = session__gpu(ses);
	l.m = session__gpu_mem(ses);
	if (!l.j || !l.m)
		return -ENOMEM;
	user_code__init(&l.uc, ses);
	err = collect(&l);
	if (!err && l.n)
		qsort(l.ev, l.n, sizeof(*l.ev), cmp_ev);
	for (i = 0; !err && i < l.n; i++)
		err = out__failed(out) ? -EIO : put_event(&l, &l.ev[i]);
	free(l.ev);
	user_code__free(&l.uc);
	return err;
}
