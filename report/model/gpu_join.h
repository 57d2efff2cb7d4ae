/* SPDX-License-Identifier: MIT */
/*
 * GPU work joined to its launch, once per report. Kernels, copies and memsets carry the
 * correlation id of the API call that launched them; the launch record carries the CPU stack
 * taken at that call, the API record the call's time and thread. Correlation ids are per
 * process, so the key is (pid, corr_id); a graph launch has one id and many kernels, which all
 * join the same launch. A repeated id keeps the first record of its kind.
 */
#ifndef XPU_REPORT_MODEL_GPU_JOIN_H
#define XPU_REPORT_MODEL_GPU_JOIN_H

#include <stdint.h>

#include "base/containers.h"
#include "model/filter.h"
#include "model/gpu_graph.h"
#include "model/kernel_names.h"
#include "trace/trace.h"

enum gpu_work_kind {
	GPU_WORK_KERNEL,
	GPU_WORK_MEMCPY,
	GPU_WORK_MEMSET,
	GPU_WORK_NR
};

/*
 * One kernel, copy or memset, in that order, each kind in trace order; what the outputs read
 * of every kind is here, the rest in its record (index).
 */
struct gpu_work {
	uint8_t kind;			/* enum gpu_work_kind */
	uint8_t copy_kind;		/* a memcpy's enum xpu_memcpy_kind, else 0 */
	bool keep;			/* passes the filter */
	uint32_t index;			/* into the trace's kernels, memcpys or memsets */
	uint32_t pid, corr, device;
	/* the launching thread: of the API record, else of the launch record, else 0 */
	uint32_t tid;
	uint32_t launch;		/* launch index + 1, 0 without a launch record */
	/*
	 * Replayed from a CUDA graph node (gpu_graph.h): the launch of the call that made the
	 * node (index + 1) when graph is GRAPH_MAPPED, else 0; graph is enum graph_fate
	 */
	uint32_t capture;
	uint8_t graph;
	uint32_t api;			/* API record index + 1, 0 without one */
	uint32_t leaf;			/* "[gpu] name" in the session's name pool */
	uint32_t name_str;		/* a kernel's name, a string id of the trace; else 0 */
	uint64_t start, end;
	uint64_t bytes;			/* a copy's or memset's, else 0 */
};

struct gpu_join {
	struct gpu_work *w;
	size_t n, cap;
	struct kmap launch_idx;		/* {pid, corr} -> launch index */
	struct kmap api_idx;		/* {pid, corr} -> API record index */
	struct kmap copy_idx;		/* {pid, corr} -> work index of its memcpy, else memset */
	struct kmap leaf_idx;		/* kernel name string id -> leaf frame id */
	struct gpu_graph graph;		/* the trace's graph nodes */
	bool graph_tracked;		/* a 1.12+ trace, or one with graph node records */
	uint64_t graph_fates[GRAPH_FATES];	/* of the work the filter keeps */
};

/*
 * Joins every GPU record of t and marks those that pass f; leaf names (kernels named by kn)
 * go into names. 0 or -ENOMEM (free either way).
 */
int gpu_join__build(struct gpu_join *j, const struct trace *t, const struct filter *f,
		    const struct kernel_names *kn, struct strpool *names);
/* Index of the launch (API record) of (pid, corr), or -1. */
long gpu_join__launch(const struct gpu_join *j, uint32_t pid, uint32_t corr);
long gpu_join__api(const struct gpu_join *j, uint32_t pid, uint32_t corr);
/* The memcpy or memset that the call (pid, corr) made, or NULL. */
const struct gpu_work *gpu_join__copy(const struct gpu_join *j, uint32_t pid, uint32_t corr);
void gpu_join__free(struct gpu_join *j);

/* "memcpy HtoD" and the like, for any copy kind. */
const char *memcpy_kind_name(uint8_t kind);

#endif
