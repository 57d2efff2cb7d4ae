/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph capture sites (issue 39): which call made the node that a replayed kernel, copy
 * or memset ran from. GPU_GRAPH_NODE records (format-spec/gpu-records.md) say, per process,
 * which traced call made each node (CREATED, its corr_id), which node each exec graph's node
 * was copied from (CLONED) and which nodes changed after capture (UPDATED, EXEC_UPDATED). A
 * replayed record's graph_node_id is followed back through the copies to the node's making;
 * the call's GPU_LAUNCH is then its capture stack. Only a chain that resolves completely and
 * saw no change before the work ran maps: anything else stays under the replay's stack and is
 * counted by why, never guessed.
 */
#ifndef XPU_REPORT_MODEL_GPU_GRAPH_H
#define XPU_REPORT_MODEL_GPU_GRAPH_H

#include <stdint.h>

#include "base/containers.h"
#include "trace/trace.h"

/* What became of a replayed record's node (gpu_work.graph) */
enum graph_fate {
	GRAPH_NONE = 0,		/* not replayed from a graph node (graph_node_id 0) */
	GRAPH_MAPPED,		/* under its capture stack */
	GRAPH_NO_NODE,		/* the node (or a node it was copied from) was never recorded:
				 * captured before the recording, a child graph's or conditional
				 * body's node without a copy record, --cuda-graphs off in the target */
	GRAPH_NO_SITE,		/* made outside a traced call, or the call has no launch stack */
	GRAPH_UPDATED,		/* changed after capture (cudaGraphExecUpdate, SetParams) */
	GRAPH_BAD_CHAIN,	/* copies that loop or go deeper than GRAPH_MAX_CHAIN: bad records */
	GRAPH_FATES
};

/* Copies of copies followed at most (instantiate of a cudaGraphClone of a child graph ...) */
#define GRAPH_MAX_CHAIN 16
/* exec_changed's key for "some exec graph of the process" (exec ids are u32) */
#define GRAPH_ANY_EXEC UINT64_MAX

struct gpu_graph {
	const struct trace *t;
	struct kmap made;		/* {pid, node id} -> graph_nodes index of its CREATED */
	struct kmap copied;		/* {pid, node id} -> index of the CLONED that made it */
	struct kmap changed;		/* {pid, node id} -> index of its earliest UPDATED */
	/*
	 * {pid, exec id} -> earliest EXEC_UPDATED of that exec graph; exec 0: of one the library
	 * could not name; GRAPH_ANY_EXEC: of any (for work whose exec graph is not known)
	 */
	struct kmap exec_changed;
	uint64_t bad_records;		/* unknown op, node id 0, a second CREATED of a node */
};

/* Indexes t's GPU_GRAPH_NODE records. 0 or -ENOMEM (gpu_graph__free either way). */
int gpu_graph__build(struct gpu_graph *g, const struct trace *t);
/*
 * The fate of work of pid that node_id ran, starting at start_ns; with GRAPH_MAPPED, *corr is
 * the call that made the node (the caller still needs its launch: GRAPH_NO_SITE without).
 */
enum graph_fate gpu_graph__resolve(const struct gpu_graph *g, uint32_t pid, uint64_t node_id,
				   uint64_t start_ns, uint32_t *corr);
/* "no node record" and the like, for info and the warning */
const char *gpu_graph__fate_name(enum graph_fate f);
/* Says once (stderr) how many replayed records did not map, by why; nothing when none. */
void gpu_graph__warn(const uint64_t fates[GRAPH_FATES]);
void gpu_graph__free(struct gpu_graph *g);

#endif
