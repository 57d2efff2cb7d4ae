// SPDX-License-Identifier: MIT
/* CUDA graph capture sites (see gpu_graph.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/warn.h"

#include "model/gpu_graph.h"

const char *gpu_graph__fate_name(enum graph_fate f)
{
	switch (f) {
	case GRAPH_MAPPED: return "under the capture stack";
	case GRAPH_NO_NODE: return "node not recorded";
	case GRAPH_NO_SITE: return "node made outside a traced call";
	case GRAPH_UPDATED: return "node updated after capture";
	case GRAPH_BAD_CHAIN: return "copies that loop or nest too deep";
	default: return "not in a graph";
	}
}

/* Keeps the record of the earliest time under key: the first change is where sites end. */
static int put_earliest(const struct trace *t, struct kmap *m, uint64_t a, uint64_t b, size_t i)
{
	bool ins;
	uint32_t *v = kmap__put(m, a, b, (uint32_t)i, &ins);

	if (!v)
		return -ENOMEM;
	if (!ins && t->graph_nodes[i].ts_ns < t->graph_nodes[*v].ts_ns)
		*v = (uint32_t)i;
	return 0;
}

int gpu_graph__build(struct gpu_graph *g, const struct trace *t)
{
	size_t i;
	int err = 0;

	memset(g, 0, sizeof(*g));
	g->t = t;
	/* kmap values are u32 indexes */
	if (t->ngraph_nodes > UINT32_MAX)
		return -ENOMEM;
	for (i = 0; !err && i < t->ngraph_nodes; i++) {
		const struct xpu_rec_gpu_graph_node *r = &t->graph_nodes[i];
		uint32_t *v;
		bool ins;

		switch (r->op) {
		case XPU_GRAPH_NODE_CREATED:
		case XPU_GRAPH_NODE_CLONED:
			if (!r->node_id) {
				g->bad_records++;
				break;
			}
			v = kmap__put(r->op == XPU_GRAPH_NODE_CREATED ? &g->made : &g->copied,
				      r->pid, r->node_id, (uint32_t)i, &ins);
			if (!v)
				err = -ENOMEM;
			/* a node made twice: the first record stays, the second is bad */
			else if (!ins)
				g->bad_records++;
			break;
		case XPU_GRAPH_NODE_UPDATED:
			if (r->node_id)
				err = put_earliest(t, &g->changed, r->pid, r->node_id, i);
			else
				g->bad_records++;
			break;
		case XPU_GRAPH_EXEC_UPDATED:
			err = put_earliest(t, &g->exec_changed, r->pid, r->exec_id, i);
			if (!err)
				err = put_earliest(t, &g->exec_changed, r->pid, GRAPH_ANY_EXEC, i);
			break;
		default:
			g->bad_records++;
		}
	}
	return err;
}

/* Whether key's earliest change in m came at or before ts. */
static bool changed_by(const struct gpu_graph *g, const struct kmap *m, uint64_t a, uint64_t b,
		       uint64_t ts)
{
	const uint32_t *v = kmap__get(m, a, b);

	return v && g->t->graph_nodes[*v].ts_ns <= ts;
}

enum graph_fate gpu_graph__resolve(const struct gpu_graph *g, uint32_t pid, uint64_t node_id,
				   uint64_t start_ns, uint32_t *corr)
{
	uint64_t id = node_id;
	bool exec_known = false;
	int depth;

	*corr = 0;
	if (!node_id)
		return GRAPH_NONE;
	/* an exec update of an unknown exec graph: no graph of the process is safe after it */
	if (changed_by(g, &g->exec_changed, pid, 0, start_ns))
		return GRAPH_UPDATED;
	for (depth = 0; depth < GRAPH_MAX_CHAIN; depth++) {
		const uint32_t *v;

		if (changed_by(g, &g->changed, pid, id, start_ns))
			return GRAPH_UPDATED;
		/*
		 * A copy first: CUPTI announces each node of a new exec graph (and of a cloned
		 * graph) as CREATED, outside any traced call, then as CLONED from the node it
		 * copies (seen on CUDA 13, tests/gpu/cuda_graphs.sh). The copy's own CREATED
		 * record says nothing of where the work was asked for; its original does.
		 */
		v = kmap__get(&g->copied, pid, id);
		if (v) {
			if (g->t->graph_nodes[*v].exec_id) {
				exec_known = true;
				if (changed_by(g, &g->exec_changed, pid,
					       g->t->graph_nodes[*v].exec_id, start_ns))
					return GRAPH_UPDATED;
			}
			id = g->t->graph_nodes[*v].orig_node_id;
			if (!id)
				return GRAPH_NO_NODE;
			continue;
		}
		v = kmap__get(&g->made, pid, id);
		if (!v)
			return GRAPH_NO_NODE;
		/*
		 * Which exec graph ran it is not known (no copy record named one): any
		 * cudaGraphExecUpdate of the process before may have been of its graph
		 */
		if (!exec_known && changed_by(g, &g->exec_changed, pid, GRAPH_ANY_EXEC, start_ns))
			return GRAPH_UPDATED;
		*corr = g->t->graph_nodes[*v].corr_id;
		return *corr ? GRAPH_MAPPED : GRAPH_NO_SITE;
	}
	return GRAPH_BAD_CHAIN;
}

void gpu_graph__free(struct gpu_graph *g)
{
	kmap__free(&g->made);
	kmap__free(&g->copied);
	kmap__free(&g->changed);
	kmap__free(&g->exec_changed);
	memset(g, 0, sizeof(*g));
}

void gpu_graph__warn(const uint64_t fates[GRAPH_FATES])
{
	char buf[256];
	uint64_t n = 0;
	size_t len = 0;
	int f;

	for (f = GRAPH_NO_NODE; f < GRAPH_FATES; f++) {
		if (!fates[f])
			continue;
		n += fates[f];
		len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0,
					"%s%" PRIu64 " %s", len ? ", " : "", fates[f],
					gpu_graph__fate_name(f));
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
	}
	if (n)
		warn__once("warning: %" PRIu64 " GPU records replayed from CUDA graphs stay under their "
			   "replay's stack only (%s); --format=info counts them", n, buf);
}
