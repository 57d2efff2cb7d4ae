// SPDX-License-Identifier: MIT
/*
 * Where each CUDA graph node came from (issue 39). A graph replay is one cudaGraphLaunch and
 * many kernels; what each kernel is for was decided when its node was made: by a launch, copy
 * or memset captured from a stream (torch.cuda.graph), or by cudaGraphAdd*Node. Both are
 * traced API calls that already take a launch stack (callbacks.c), keyed by their correlation
 * id, and CUPTI's resource callback for the new node comes inside that call, on its thread.
 * So a node needs no stack of its own: its GPU_GRAPH_NODE record names the call (corr_id), and
 * the report joins the node to that call's GPU_LAUNCH. Instantiation copies every node into
 * the exec graph (GRAPHNODE_CLONED), and the kernel records of a replay carry the copy's id:
 * the CLONED record maps it back. Changes that make a node run something its capture site did
 * not ask for (cudaGraphExecUpdate, SetParams on an exec node) are recorded too, so that the
 * report stops attributing from then on instead of naming a wrong site.
 *
 * Cost: nothing at replay (the kernel records carry the node id already); at capture, one
 * callback and one 48-byte record per node made or copied, queued under a mutex that only
 * graph building takes, and sent by the flusher as the synchronization records are.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xpu_cupti.h"

#define GRAPH_QUEUE 8192
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xpu_rec_gpu_graph_node q[GRAPH_QUEUE];
static unsigned int q_n;
static bool enabled;
/* XPU_CUDA_GRAPHS=replay (xpu-record --cuda-graphs=replay): never enabled */
static bool off;

void graph_nodes__off(void)
{
	off = true;
}

bool graph_nodes__wanted(void)
{
	const char *env = getenv("XPU_CUPTI_GRAPH_NODES");

	return !off && !(env && !strcmp(env, "0"));
}

void graph_nodes__drain(void)
{
	static struct xpu_rec_gpu_graph_node out[256];	/* under the transport's lock */
	unsigned int n, i;

	do {
		pthread_mutex_lock(&q_lock);
		n = q_n < 256 ? q_n : 256;
		/* oldest first: a CLONED record then follows the CREATED one it refers to */
		memcpy(out, q, n * sizeof(out[0]));
		memmove(q, q + n, (q_n - n) * sizeof(q[0]));
		q_n -= n;
		pthread_mutex_unlock(&q_lock);
		for (i = 0; i < n; i++)
			transport__append(XPU_REC_GPU_GRAPH_NODE, &out[i], sizeof(out[i]));
	} while (n == 256);
}

static void queue(struct xpu_rec_gpu_graph_node *r)
{
	bool full;

	r->ts_ns = xc_mono_ns();
	r->pid = xc_pid;
	r->tid = (uint32_t)gettid();
	pthread_mutex_lock(&q_lock);
	full = q_n == GRAPH_QUEUE;
	if (!full)
		q[q_n++] = *r;
	pthread_mutex_unlock(&q_lock);
	if (full) {
		/* a graph of thousands of nodes built within one flush period: send from here */
		transport__lock();
		graph_nodes__drain();
		transport__append(XPU_REC_GPU_GRAPH_NODE, r, sizeof(*r));
		transport__unlock();
	}
}

static uint64_t node_id(CUgraphNode n)
{
	uint64_t id = 0;

	if (!n || cupti.cuptiGetGraphNodeId(n, &id) != CUPTI_SUCCESS)
		return 0;
	return id;
}

static uint32_t graph_id(CUgraph g)
{
	uint32_t id = 0;

	if (!g || !cupti.cuptiGetGraphId || cupti.cuptiGetGraphId(g, &id) != CUPTI_SUCCESS)
		return 0;
	return id;
}

static uint32_t exec_id(CUgraphExec e)
{
	uint32_t id = 0;

	if (!e || !cupti.cuptiGetGraphExecId || cupti.cuptiGetGraphExecId(e, &id) != CUPTI_SUCCESS)
		return 0;
	return id;
}

void graph_nodes__resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd, uint32_t call_corr)
{
	const CUpti_GraphData *g = rd ? rd->resourceDescriptor : NULL;
	struct xpu_rec_gpu_graph_node r = { 0 };

	if (!enabled || !g)
		return;
	r.node_id = node_id(g->node);
	r.graph_id = graph_id(g->graph);
	r.node_type = (uint16_t)g->nodeType;
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED:
		r.op = XPU_GRAPH_NODE_CREATED;
		/* 0 when made outside a traced call: the report counts it, never guesses */
		r.corr_id = call_corr;
		break;
	case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED:
		r.op = XPU_GRAPH_NODE_CLONED;
		r.orig_node_id = node_id(g->originalNode);
		r.exec_id = exec_id(g->graphExec);
		break;
	case CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED:
	case CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS:
		r.op = XPU_GRAPH_NODE_UPDATED;
		r.exec_id = exec_id(g->graphExec);
		break;
	default:
		return;
	}
	if (!r.node_id) {
		xc_err_once("a CUDA graph node without an id (resource callback %u): its work stays "
			    "under the replay's stack", (unsigned int)cbid);
		return;
	}
	queue(&r);
}

void graph_nodes__exec_update(const CUpti_CallbackData *cb)
{
	struct xpu_rec_gpu_graph_node r = { .op = XPU_GRAPH_EXEC_UPDATED };

	if (!enabled)
		return;
	/* cudaGraphExecUpdate and cuGraphExecUpdate, every version: the exec graph comes first */
	if (cb->functionParams)
		r.exec_id = exec_id(*(CUgraphExec const *)cb->functionParams);
	/* exec_id 0: the report cannot tell which graph, and stops attributing every graph */
	queue(&r);
}

bool graph_nodes__enable(CUpti_SubscriberHandle sub)
{
	static const CUpti_CallbackId ids[] = {
		CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
		CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED, CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS,
	};
	bool ok[sizeof(ids) / sizeof(ids[0])];
	size_t i;

	enabled = false;
	if (!graph_nodes__wanted())
		return false;
	if (!cupti.cuptiGetGraphNodeId) {
		xc_info("no cuptiGetGraphNodeId in this libcupti: graph kernels stay under their replay");
		return false;
	}
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		ok[i] = cupti.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, ids[i]) ==
			CUPTI_SUCCESS;
	/*
	 * Without CREATED and CLONED nothing maps. Without the update ids an exec node changed
	 * by SetParams would keep its old site: cudaGraphExecUpdate is still seen through its API
	 * callback, but off rather than risk a wrong site.
	 */
	enabled = ok[0] && ok[1] && ok[2] && ok[3];
	if (!enabled)
		xc_err_once("cannot enable the graph node callbacks: graph kernels stay under their "
			    "replay's stack");
	return enabled;
}
