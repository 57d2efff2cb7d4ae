// SPDX-License-Identifier: MIT
/* The join of GPU work to its launch and API call (see gpu_join.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/gpu_join.h"
#include "sym/demangle.h"

const char *memcpy_kind_name(uint8_t kind)
{
	static const char *const names[] = {
		[XPU_MEMCPY_UNKNOWN] = "memcpy", [XPU_MEMCPY_HTOD] = "memcpy HtoD",
		[XPU_MEMCPY_DTOH] = "memcpy DtoH", [XPU_MEMCPY_HTOA] = "memcpy HtoA",
		[XPU_MEMCPY_ATOH] = "memcpy AtoH", [XPU_MEMCPY_ATOA] = "memcpy AtoA",
		[XPU_MEMCPY_ATOD] = "memcpy AtoD", [XPU_MEMCPY_DTOA] = "memcpy DtoA",
		[XPU_MEMCPY_DTOD] = "memcpy DtoD", [XPU_MEMCPY_HTOH] = "memcpy HtoH",
		[XPU_MEMCPY_PTOP] = "memcpy PtoP",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "memcpy";
}

/* "[gpu] name", demangled (kernel_names.h): once per name string, however many kernels. */
static uint32_t kernel_leaf(struct gpu_join *j, const struct kernel_names *kn,
			    struct strpool *names, uint32_t name_str)
{
	char buf[DEMANGLE_MAX_OUTPUT + 8];
	const char *n = kernel_names__get(kn, name_str);
	uint32_t *v = kmap__get(&j->leaf_idx, name_str, 0), leaf;

	if (v)
		return *v;
	if (!n)
		n = "[unknown kernel]";
	snprintf(buf, sizeof(buf), "[gpu] %s", n);
	leaf = frame_intern(names, buf, strlen(buf));
	if (leaf && !kmap__put(&j->leaf_idx, name_str, 0, leaf, NULL))
		return 0;
	return leaf;
}

static uint32_t copy_leaf(struct strpool *names, const char *what)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "[gpu] %s", what);
	return frame_intern(names, buf, strlen(buf));
}

static int index_calls(struct gpu_join *j, const struct trace *t)
{
	size_t i;

	for (i = 0; i < t->nlaunches; i++)
		if (!kmap__put(&j->launch_idx, t->launches[i].pid, t->launches[i].corr_id, i, NULL))
			return -ENOMEM;
	for (i = 0; i < t->napis; i++)
		if (!kmap__put(&j->api_idx, t->apis[i].pid, t->apis[i].corr_id, i, NULL))
			return -ENOMEM;
	return 0;
}

/* A replayed record's capture launch, and what became of its node (gpu_graph.h). */
static void join_graph(struct gpu_join *j, struct gpu_work *w, uint64_t node_id)
{
	uint32_t corr;
	long c;

	/*
	 * before 1.12 no recorder took graph nodes: the work is under its replay as it always
	 * was, not something that failed to map
	 */
	if (!j->graph_tracked)
		return;
	w->graph = (uint8_t)gpu_graph__resolve(&j->graph, w->pid, node_id, w->start, &corr);
	if (w->graph != GRAPH_MAPPED)
		return;
	c = gpu_join__launch(j, w->pid, corr);
	/* the call that made the node took no stack (lost, or launch stacks off) */
	if (c < 0)
		w->graph = GRAPH_NO_SITE;
	else
		w->capture = (uint32_t)c + 1;
}

static int add_work(struct gpu_join *j, const struct trace *t, const struct filter *f,
		    struct gpu_work w, uint64_t graph_node_id)
{
	long l = gpu_join__launch(j, w.pid, w.corr), a = gpu_join__api(j, w.pid, w.corr);

	if (!w.leaf)
		return -ENOMEM;
	w.launch = l >= 0 ? l + 1 : 0;
	w.api = a >= 0 ? a + 1 : 0;
	w.tid = a >= 0 ? t->apis[a].tid : l >= 0 ? t->launches[l].tid : 0;
	w.keep = filter__span(f, w.pid, w.tid, w.start, w.end);
	join_graph(j, &w, graph_node_id);
	if (w.keep)
		j->graph_fates[w.graph]++;
	if (w.kind != GPU_WORK_KERNEL && !kmap__put(&j->copy_idx, w.pid, w.corr, j->n, NULL))
		return -ENOMEM;
	return VEC_PUSH(j->w, j->n, j->cap, w);
}

int gpu_join__build(struct gpu_join *j, const struct trace *t, const struct filter *f,
		    const struct kernel_names *kn, struct strpool *names)
{
	size_t i;
	int err;

	memset(j, 0, sizeof(*j));
	err = index_calls(j, t);
	if (!err)
		err = gpu_graph__build(&j->graph, t);
	j->graph_tracked = t->ngraph_nodes ||
			   (t->hdr.major == 1 && t->hdr.minor >= 12) || t->hdr.major > 1;
	for (i = 0; !err && i < t->nkernels; i++) {
		const struct xpu_rec_gpu_kernel *k = &t->kernels[i];

		err = add_work(j, t, f, (struct gpu_work){
			.kind = GPU_WORK_KERNEL, .index = i, .pid = k->pid, .corr = k->corr_id,
			.device = k->device, .start = k->start_ns, .end = k->end_ns,
			.name_str = k->name_str, .leaf = kernel_leaf(j, kn, names, k->name_str) },
			k->graph_node_id);
	}
	for (i = 0; !err && i < t->nmemcpys; i++) {
		const struct xpu_rec_gpu_memcpy *m = &t->memcpys[i];

		err = add_work(j, t, f, (struct gpu_work){
			.kind = GPU_WORK_MEMCPY, .index = i, .pid = m->pid, .corr = m->corr_id,
			.device = m->device, .start = m->start_ns, .end = m->end_ns,
			.bytes = m->bytes, .copy_kind = m->copy_kind,
			.leaf = copy_leaf(names, memcpy_kind_name(m->copy_kind)) }, m->graph_node_id);
	}
	for (i = 0; !err && i < t->nmemsets; i++) {
		const struct xpu_rec_gpu_memset *m = &t->memsets[i];

		err = add_work(j, t, f, (struct gpu_work){
			.kind = GPU_WORK_MEMSET, .index = i, .pid = m->pid, .corr = m->corr_id,
			.device = m->device, .start = m->start_ns, .end = m->end_ns,
			.bytes = m->bytes, .leaf = copy_leaf(names, "memset") }, m->graph_node_id);
	}
	return err;
}

long gpu_join__launch(const struct gpu_join *j, uint32_t pid, uint32_t corr)
{
	const uint32_t *v = kmap__get(&j->launch_idx, pid, corr);

	return v ? (long)*v : -1;
}

long gpu_join__api(const struct gpu_join *j, uint32_t pid, uint32_t corr)
{
	const uint32_t *v = kmap__get(&j->api_idx, pid, corr);

	return v ? (long)*v : -1;
}

const struct gpu_work *gpu_join__copy(const struct gpu_join *j, uint32_t pid, uint32_t corr)
{
	const uint32_t *v = kmap__get(&j->copy_idx, pid, corr);

	return v ? &j->w[*v] : NULL;
}

void gpu_join__free(struct gpu_join *j)
{
	free(j->w);
	kmap__free(&j->launch_idx);
	kmap__free(&j->api_idx);
	kmap__free(&j->copy_idx);
	kmap__free(&j->leaf_idx);
	gpu_graph__free(&j->graph);
	memset(j, 0, sizeof(*j));
}
