// SPDX-License-Identifier: MIT
/*
 * Unit tests of CUDA graph capture sites (report/model/gpu_graph.c): a node copied at
 * instantiation maps back to the call that made it; updates end the mapping from their time;
 * and bad records (loops, unknown ops, id 0, a node made twice, another process's node) never
 * give a site, never crash.
 */
#include <string.h>

#include "model/gpu_graph.h"
#include "unit.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define PID 7

static struct xpu_rec_gpu_graph_node made(uint64_t ts, uint64_t node, uint32_t corr)
{
	return (struct xpu_rec_gpu_graph_node){ .ts_ns = ts, .pid = PID, .node_id = node,
						.corr_id = corr, .op = XPU_GRAPH_NODE_CREATED };
}

static struct xpu_rec_gpu_graph_node copied(uint64_t ts, uint64_t node, uint64_t orig, uint32_t exec)
{
	return (struct xpu_rec_gpu_graph_node){ .ts_ns = ts, .pid = PID, .node_id = node,
						.orig_node_id = orig, .exec_id = exec,
						.op = XPU_GRAPH_NODE_CLONED };
}

static enum graph_fate fate(const struct gpu_graph *g, uint32_t pid, uint64_t node, uint64_t ts,
			    uint32_t *corr)
{
	return gpu_graph__resolve(g, pid, node, ts, corr);
}

int main(void)
{
	struct xpu_rec_gpu_graph_node recs[] = {
		made(10, 0x101, 41),			/* captured launch, corr 41 */
		made(11, 0x102, 0),			/* made outside a traced call */
		copied(20, 0x201, 0x101, 0xe1),		/* instantiate: exec 0xe1 */
		copied(20, 0x202, 0x102, 0xe1),
		copied(21, 0x301, 0x201, 0xe2),		/* a clone of a clone: exec 0xe2 */
		copied(22, 0x401, 0x402, 0),		/* a loop of copies */
		copied(22, 0x402, 0x401, 0),
		copied(23, 0x501, 0x999, 0),		/* copied from a node never recorded */
		copied(23, 0x502, 0, 0),		/* from node 0 */
		made(24, 0x101, 99),			/* 0x101 again: bad, the first stays */
		made(25, 0, 5),				/* node 0: bad */
		{ .ts_ns = 26, .pid = PID, .node_id = 0x601, .op = 77 },	/* unknown op */
		{ .ts_ns = 100, .pid = PID, .node_id = 0x301, .op = XPU_GRAPH_NODE_UPDATED },
		{ .ts_ns = 90, .pid = PID, .node_id = 0x301, .op = XPU_GRAPH_NODE_UPDATED },
		{ .ts_ns = 200, .pid = PID, .exec_id = 0xe1, .op = XPU_GRAPH_EXEC_UPDATED },
	};
	struct trace t;
	struct gpu_graph g;
	uint32_t corr;
	uint64_t deep[GRAPH_MAX_CHAIN + 2];
	struct xpu_rec_gpu_graph_node chain[GRAPH_MAX_CHAIN + 3];
	size_t i;

	memset(&t, 0, sizeof(t));
	t.graph_nodes = recs;
	t.ngraph_nodes = N(recs);
	CHECK(gpu_graph__build(&g, &t) == 0, "build");
	CHECK(g.bad_records == 3, "bad records: %llu", (unsigned long long)g.bad_records);

	CHECK(fate(&g, PID, 0, 50, &corr) == GRAPH_NONE, "node 0: not graph work");
	CHECK(fate(&g, PID, 0x201, 50, &corr) == GRAPH_MAPPED && corr == 41,
	      "exec node to its capture call: corr %u", corr);
	CHECK(fate(&g, PID, 0x101, 50, &corr) == GRAPH_MAPPED && corr == 41,
	      "the node itself (a graph launched without a copy record) maps, first record kept");
	CHECK(fate(&g, PID, 0x301, 50, &corr) == GRAPH_MAPPED && corr == 41, "clone of a clone");
	CHECK(fate(&g, PID, 0x202, 50, &corr) == GRAPH_NO_SITE && corr == 0, "no traced call");
	CHECK(fate(&g, PID, 0x401, 50, &corr) == GRAPH_BAD_CHAIN, "a loop of copies ends");
	CHECK(fate(&g, PID, 0x501, 50, &corr) == GRAPH_NO_NODE, "copied from an unknown node");
	CHECK(fate(&g, PID, 0x502, 50, &corr) == GRAPH_NO_NODE, "copied from node 0");
	CHECK(fate(&g, PID, 0x601, 50, &corr) == GRAPH_NO_NODE, "an unknown op makes no node");
	CHECK(fate(&g, PID, 0x7777, 50, &corr) == GRAPH_NO_NODE, "never recorded");
	CHECK(fate(&g, PID + 1, 0x201, 50, &corr) == GRAPH_NO_NODE, "ids are per process");

	/* the earliest of two updates of 0x301 (at 90) ends its mapping, inclusive */
	CHECK(fate(&g, PID, 0x301, 89, &corr) == GRAPH_MAPPED, "before its update");
	CHECK(fate(&g, PID, 0x301, 90, &corr) == GRAPH_UPDATED, "at its first update");
	/* the exec update of 0xe1 at 200: 0x201, 0x202 after it; 0xe2's copy of 0x201 is not in 0xe1 */
	CHECK(fate(&g, PID, 0x201, 199, &corr) == GRAPH_MAPPED, "before the exec update");
	CHECK(fate(&g, PID, 0x201, 200, &corr) == GRAPH_UPDATED, "after the exec update");
	CHECK(fate(&g, PID, 0x202, 300, &corr) == GRAPH_UPDATED, "after it, whatever else");
	gpu_graph__free(&g);

	/* EXEC_UPDATED of exec 0 (the library could not tell which): no graph maps after it */
	{
		struct xpu_rec_gpu_graph_node r[] = {
			made(10, 0x101, 41), copied(20, 0x201, 0x101, 0xe1),
			{ .ts_ns = 50, .pid = PID, .op = XPU_GRAPH_EXEC_UPDATED },
		};

		t.graph_nodes = r;
		t.ngraph_nodes = N(r);
		CHECK(gpu_graph__build(&g, &t) == 0, "build");
		CHECK(fate(&g, PID, 0x201, 49, &corr) == GRAPH_MAPPED, "before an unknown update");
		CHECK(fate(&g, PID, 0x201, 50, &corr) == GRAPH_UPDATED, "after an unknown update");
		gpu_graph__free(&g);
	}

	/*
	 * a copy record without its exec graph's id (or work on the original node): after any
	 * exec update of the process it may have been updated, so it no longer maps
	 */
	{
		struct xpu_rec_gpu_graph_node r[] = {
			made(10, 0x101, 41), copied(20, 0x201, 0x101, 0), copied(20, 0x301, 0x101, 0xe2),
			{ .ts_ns = 50, .pid = PID, .exec_id = 0xe1, .op = XPU_GRAPH_EXEC_UPDATED },
		};

		t.graph_nodes = r;
		t.ngraph_nodes = N(r);
		CHECK(gpu_graph__build(&g, &t) == 0, "build");
		CHECK(fate(&g, PID, 0x201, 49, &corr) == GRAPH_MAPPED, "exec unknown, before");
		CHECK(fate(&g, PID, 0x201, 50, &corr) == GRAPH_UPDATED, "exec unknown, after any");
		CHECK(fate(&g, PID, 0x101, 50, &corr) == GRAPH_UPDATED, "the original, after any");
		CHECK(fate(&g, PID, 0x301, 60, &corr) == GRAPH_MAPPED, "another exec graph's copy");
		gpu_graph__free(&g);
	}

	/* copies GRAPH_MAX_CHAIN deep still map; one deeper is a bad chain, not a site */
	for (i = 0; i < N(deep); i++)
		deep[i] = 0x1000 + i;
	chain[0] = made(1, deep[0], 3);
	for (i = 1; i < N(deep); i++)
		chain[i] = copied(2, deep[i], deep[i - 1], 0);
	t.graph_nodes = chain;
	t.ngraph_nodes = N(deep);
	CHECK(gpu_graph__build(&g, &t) == 0, "build");
	CHECK(fate(&g, PID, deep[GRAPH_MAX_CHAIN - 1], 5, &corr) == GRAPH_MAPPED && corr == 3,
	      "%d copies deep", GRAPH_MAX_CHAIN - 1);
	CHECK(fate(&g, PID, deep[GRAPH_MAX_CHAIN + 1], 5, &corr) == GRAPH_BAD_CHAIN,
	      "past GRAPH_MAX_CHAIN");
	gpu_graph__free(&g);

	/* no records: nothing maps, nothing breaks */
	t.graph_nodes = NULL;
	t.ngraph_nodes = 0;
	CHECK(gpu_graph__build(&g, &t) == 0, "build empty");
	CHECK(fate(&g, PID, 0x201, 5, &corr) == GRAPH_NO_NODE, "empty");
	gpu_graph__free(&g);
	return unit_finish();
}
