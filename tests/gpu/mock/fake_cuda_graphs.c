// SPDX-License-Identifier: MIT
/*
 * A "CUDA graphs" application over the fake libcupti (mock_cupti.c), for
 * tests/e2e/test_cuda_graphs_mock.sh: the node callbacks CUPTI makes when a graph is captured,
 * built, instantiated, replayed and updated, in an order a real program makes them, with the
 * activity records of the replays. Each step is its own function, so that its stack says which
 * step made what:
 *
 *   capture_model        stream capture: capture_attention launches attn_kernel (node 0x101),
 *                        capture_mlp launches mlp_kernel (0x102) and copies (0x103, a memcpy
 *                        node) inside the capture, as torch.cuda.graph's capture does
 *   build_by_node_api    cudaGraphAddKernelNode: node_api_kernel (0x104)
 *   driver_made_node     a kernel node (0x105) made outside any traced call (a conditional
 *                        body's, made by the driver): no capture stack
 *   add_child_graph      cudaGraphAddChildGraphNode: node 0x106 of type child graph; the
 *                        kernel inside it (child_kernel) replays with node id 0x7000, which no
 *                        record names, as CUPTI reports child graph contents
 *   instantiate          exec graph 0xe1: every node cloned (0x201..0x206 from 0x101..0x106);
 *                        exec graph 0xe2: 0x301, 0x302 from 0x101, 0x102
 *   replay_loop          REPLAYS cudaGraphLaunch of 0xe1: per replay attn_kernel, mlp_kernel,
 *                        the copy, node_api_kernel, driver_kernel, child_kernel
 *   set_params           GRAPH_NODE_SET_PARAMS on 0x301 (cudaGraphExecKernelNodeSetParams)
 *   replay_second        2 launches of 0xe2: attn_kernel (0x301, updated) and mlp_kernel (0x302)
 *   exec_update          cudaGraphExecUpdate(0xe1): then replay_loop once more
 *
 *   fake_cuda_graphs LIBXPU_CUPTI MOCK_CUPTI REPLAYS
 * Prints "replayed N records" (kernels and copies of all replays).
 *
 * FAKE_TORCH=PATH (fake_libtorch.c built as libtorch_cpu.so): instead, a training step whose
 * backward pass is captured, as torch.cuda.graph captures a whole step: a wait until
 * xpu-record has probed the file, a warm-up view op, 300 ms, then forward_ops makes K = 8 ops, each
 * launching its forward kernel (eagerly: mm_fwd_kernel), and capture_backward evaluates their
 * MmBackward0 nodes, each evaluation's launch captured (node 0x8000 + i); instantiated
 * (0x9000 + i) and replayed REPLAYS times by replay_backward (bw_kernel). Prints
 * "replayed N records".
 */
#define FAKE_CUDA_NO_MAIN
#include "fake_cuda_app.c"

static void (*mock_resource)(uint32_t, const CUpti_GraphData *);
static void (*mock_api_params)(int, uint32_t, int, uint32_t, const void *, void *);
static uint32_t corr_next = 1;
static unsigned long replayed;

#define GRAPH ((CUgraph)(uintptr_t)0x9)	/* the captured graph's handle, id 9 */
#define CHILD_KERNEL_NODE 0x7000u

static void node_event(uint32_t cbid, uint64_t node, uint64_t orig, int type, uint64_t exec)
{
	CUpti_GraphData g = {
		.graph = GRAPH,
		.node = (CUgraphNode)(uintptr_t)node,
		.originalNode = (CUgraphNode)(uintptr_t)orig,
		.nodeType = (CUgraphNodeType)type,
		.graphExec = (CUgraphExec)(uintptr_t)exec,
	};

	mock_resource(cbid, &g);
}

/*
 * A traced call (runtime cbid) inside which CUPTI makes node `node` of `type`. Inlined: the
 * innermost frame of the program's own code is then the step that made the node.
 */
static inline __attribute__((always_inline)) void call_making_node(uint32_t cbid, uint64_t node,
								    int type)
{
	uint32_t corr = corr_next++;

	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_ENTER, corr);
	node_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, node, 0, type, 0);
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_EXIT, corr);
}

__attribute__((noinline)) static void capture_attention(void)
{
	call_making_node(211, 0x101, CU_GRAPH_NODE_TYPE_KERNEL);	/* cudaLaunchKernel */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void capture_mlp(void)
{
	call_making_node(211, 0x102, CU_GRAPH_NODE_TYPE_KERNEL);
	call_making_node(41, 0x103, CU_GRAPH_NODE_TYPE_MEMCPY);	/* cudaMemcpyAsync */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void capture_model(void)
{
	capture_attention();
	capture_mlp();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void build_by_node_api(void)
{
	call_making_node(289, 0x104, CU_GRAPH_NODE_TYPE_KERNEL);	/* cudaGraphAddKernelNode */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void driver_made_node(void)
{
	node_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 0x105, 0, CU_GRAPH_NODE_TYPE_KERNEL, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void add_child_graph(void)
{
	call_making_node(298, 0x106, CU_GRAPH_NODE_TYPE_GRAPH);	/* cudaGraphAddChildGraphNode */
	__asm__ volatile("" ::: "memory");
}

/*
 * A node's copy as CUPTI 13 announces it (seen on the H100, tests/gpu/cuda_graphs.sh): first
 * CREATED for the copy, outside any traced call, then CLONED from its original.
 */
static void node_copied(uint64_t node, uint64_t orig, int type, uint64_t exec)
{
	node_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, node, 0, type, 0);
	node_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, node, orig, type, exec);
}

/* cudaGraphInstantiate (not a traced call): the nodes' copies into the exec graph */
__attribute__((noinline)) static void instantiate(void)
{
	static const int types[6] = { CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_KERNEL,
				      CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_KERNEL,
				      CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_GRAPH };
	uint64_t i;

	for (i = 0; i < 6; i++)
		node_copied(0x201 + i, 0x101 + i, types[i], 0xe1);
	for (i = 0; i < 2; i++)
		node_copied(0x301 + i, 0x101 + i, types[i], 0xe2);
}

static void graph_kernel(uint32_t corr, const char *name, uint64_t node, uint32_t exec)
{
	CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };

	k.start = mock_now() + 1000;
	k.end = k.start + 2000;
	k.correlationId = corr;
	k.name = name;
	k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
	k.graphId = exec;
	k.graphNodeId = node;
	mock_record(&k, sizeof(k));
	replayed++;
}

static void graph_copy(uint32_t corr, uint64_t node, uint32_t exec)
{
	CUpti_ActivityMemcpy6 m = { .kind = CUPTI_ACTIVITY_KIND_MEMCPY };

	m.start = mock_now() + 500;
	m.end = m.start + 700;
	m.bytes = 4096;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
	m.correlationId = corr;
	m.graphId = exec;
	m.graphNodeId = node;
	mock_record(&m, sizeof(m));
	replayed++;
}

/* One cudaGraphLaunch of exec graph 0xe1: its six nodes' work, all with the launch's id */
static void launch_first(void)
{
	uint32_t corr = corr_next++;

	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 311, CUPTI_API_ENTER, corr);
	graph_kernel(corr, "attn_kernel", 0x201, 0xe1);
	graph_kernel(corr, "mlp_kernel", 0x202, 0xe1);
	graph_copy(corr, 0x203, 0xe1);
	graph_kernel(corr, "node_api_kernel", 0x204, 0xe1);
	graph_kernel(corr, "driver_kernel", 0x205, 0xe1);
	graph_kernel(corr, "child_kernel", CHILD_KERNEL_NODE, 0xe1);
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 311, CUPTI_API_EXIT, corr);
}

__attribute__((noinline)) static void replay_loop(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		launch_first();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void set_params(void)
{
	node_event(CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS, 0x301, 0, CU_GRAPH_NODE_TYPE_KERNEL,
		   0xe2);
}

__attribute__((noinline)) static void replay_second(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		uint32_t corr = corr_next++;

		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 311, CUPTI_API_ENTER, corr);
		graph_kernel(corr, "attn_kernel", 0x301, 0xe2);
		graph_kernel(corr, "mlp_kernel", 0x302, 0xe2);
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 311, CUPTI_API_EXIT, corr);
	}
	__asm__ volatile("" ::: "memory");
}

/* cudaGraphExecUpdate(0xe1, graph, &info): the exec graph's handle comes first */
__attribute__((noinline)) static void exec_update(void)
{
	struct { CUgraphExec exec; CUgraph graph; void *info; } params = {
		(CUgraphExec)(uintptr_t)0xe1, GRAPH, NULL };
	uint32_t corr = corr_next++;
	int ret = 0;

	mock_api_params(CUPTI_CB_DOMAIN_RUNTIME_API, 335, CUPTI_API_ENTER, corr, &params, &ret);
	mock_api_params(CUPTI_CB_DOMAIN_RUNTIME_API, 335, CUPTI_API_EXIT, corr, &params, &ret);
}

/* ---- FAKE_TORCH: a captured backward pass ------------------------------------------------ */
#define TORCH_OPS 8
static void *(*torch_op)(void (*)(void), int);
static void (*torch_backward)(void **, int, void (*)(void));
static void *torch_nodes[TORCH_OPS + 1];
static int torch_nnodes, torch_captured;

__attribute__((noinline)) static void forward_kernel(void)
{
	uint32_t corr = corr_next++;
	CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };

	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_ENTER, corr);
	k.start = mock_now() + 1000;
	k.end = k.start + 2000;
	k.correlationId = corr;
	k.name = "mm_fwd_kernel";
	k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
	mock_record(&k, sizeof(k));
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_EXIT, corr);
}

/* the launch an evaluation makes, inside the capture: a node, no kernel */
__attribute__((noinline)) static void backward_launch_captured(void)
{
	call_making_node(211, 0x8000 + (uint64_t)torch_captured++, CU_GRAPH_NODE_TYPE_KERNEL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void forward_ops(void)
{
	int i;

	for (i = 0; i < TORCH_OPS; i++)
		torch_nodes[torch_nnodes++] = torch_op(forward_kernel, 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void capture_backward(void)
{
	torch_backward(torch_nodes + 1, TORCH_OPS, backward_launch_captured);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void replay_backward(unsigned long n)
{
	unsigned long r;
	int i;

	for (r = 0; r < n; r++) {
		uint32_t corr = corr_next++;

		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 311, CUPTI_API_ENTER, corr);
		for (i = 0; i < torch_captured; i++)
			graph_kernel(corr, "bw_kernel", 0x9000 + (uint64_t)i, 0xe3);
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 311, CUPTI_API_EXIT, corr);
	}
	__asm__ volatile("" ::: "memory");
}

static int fake_torch_graph(const char *path, unsigned long replays)
{
	struct timespec ts = { 0, 300 * 1000000 };
	void *t = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int i;

	if (!t) {
		fprintf(stderr, "fake_cuda_graphs: %s\n", dlerror());
		return 1;
	}
	*(void **)&torch_op = dlsym(t, "fake_op");
	*(void **)&torch_backward = dlsym(t, "fake_backward");
	if (!torch_op || !torch_backward) {
		fprintf(stderr, "fake_cuda_graphs: %s is not fake_libtorch.c's\n", path);
		return 1;
	}
	fake_torch_wait_probed(t);
	torch_nodes[torch_nnodes++] = torch_op(NULL, 0);	/* the counter is located here */
	nanosleep(&ts, NULL);
	forward_ops();
	capture_backward();
	for (i = 0; i < torch_captured; i++)
		node_copied(0x9000 + (uint64_t)i, 0x8000 + (uint64_t)i, CU_GRAPH_NODE_TYPE_KERNEL,
			    0xe3);
	replay_backward(replays);
	printf("replayed %lu records\n", replayed);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n;

	if (argc < 4) {
		fprintf(stderr, "usage: fake_cuda_graphs LIBXPU_CUPTI MOCK_CUPTI REPLAYS\n");
		return 2;
	}
	n = strtoul(argv[3], NULL, 10);
	(void)launch_fake_kernel;	/* fake_cuda_app.c's own launches are not used here */
	if (fake_inject(argv[1], argv[2]))
		return 1;
	{
		void *m = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);

		*(void **)&mock_resource = m ? dlsym(m, "mock_resource") : NULL;
		*(void **)&mock_api_params = m ? dlsym(m, "mock_api_params") : NULL;
	}
	if (!mock_resource || !mock_api_params) {
		fprintf(stderr, "fake_cuda_graphs: %s has no mock_resource\n", argv[2]);
		return 1;
	}
	if (getenv("FAKE_TORCH"))
		return fake_torch_graph(getenv("FAKE_TORCH"), n);
	capture_model();
	build_by_node_api();
	driver_made_node();
	add_child_graph();
	instantiate();
	replay_loop(n);
	set_params();
	replay_second();
	exec_update();
	replay_loop(1);
	printf("replayed %lu records\n", replayed);
	return 0;
}
