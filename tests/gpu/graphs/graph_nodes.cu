// SPDX-License-Identifier: MIT
/*
 * CUDA graphs for tests/gpu/cuda_graphs.sh (issue 39): one graph built by stream capture and
 * one with the node API, each kernel named after the function that put it in its graph, so
 * that a report that puts a kernel under the wrong capture site shows it at once:
 *
 *   capture_attention  captures attn_kernel and a cudaMemsetAsync
 *   capture_mlp        captures mlp_kernel and a cudaMemcpyAsync (device to device)
 *   build_node_api     cudaGraphAddKernelNode(node_api_kernel), cudaGraphAddMemsetNode
 *   add_child          a child graph (child_kernel) added with cudaGraphAddChildGraphNode
 *   replay_captured / replay_built   REPLAYS cudaGraphLaunch of each exec graph
 *   update_exec        cudaGraphExecUpdate of the captured exec graph from a fresh capture of
 *                      the same shape, then replay_after_update (REPLAYS / 10 launches)
 *
 *   graph_nodes [REPLAYS]      (default 200); prints what it launched, one line per graph
 */
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CK(x)                                                                              \
	do {                                                                               \
		cudaError_t e_ = (x);                                                      \
		if (e_ != cudaSuccess) {                                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,         \
				cudaGetErrorString(e_));                                   \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

#define N (1 << 16)

__global__ void attn_kernel(float *x)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < N)
		x[i] = x[i] * 0.5f + 1.0f;
}

__global__ void mlp_kernel(float *x)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < N)
		x[i] = x[i] > 0 ? x[i] : 0.01f * x[i];
}

__global__ void node_api_kernel(float *x)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < N)
		x[i] += 2.0f;
}

__global__ void child_kernel(float *x)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < N)
		x[i] -= 1.0f;
}

static float *a, *b;

__attribute__((noinline)) static void capture_attention(cudaStream_t s)
{
	attn_kernel<<<N / 256, 256, 0, s>>>(a);
	CK(cudaMemsetAsync(b, 0, N * sizeof(float), s));
}

__attribute__((noinline)) static void capture_mlp(cudaStream_t s)
{
	mlp_kernel<<<N / 256, 256, 0, s>>>(a);
	CK(cudaMemcpyAsync(b, a, N * sizeof(float), cudaMemcpyDeviceToDevice, s));
}

__attribute__((noinline)) static cudaGraph_t capture_model(cudaStream_t s)
{
	cudaGraph_t g;

	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	capture_attention(s);
	capture_mlp(s);
	CK(cudaStreamEndCapture(s, &g));
	return g;
}

__attribute__((noinline)) static void build_node_api(cudaGraph_t g)
{
	cudaKernelNodeParams kp = {};
	cudaMemsetParams mp = {};
	void *args[] = { &a };
	cudaGraphNode_t k, m;

	kp.func = (void *)node_api_kernel;
	kp.gridDim = dim3(N / 256);
	kp.blockDim = dim3(256);
	kp.kernelParams = args;
	CK(cudaGraphAddKernelNode(&k, g, NULL, 0, &kp));
	mp.dst = b;
	mp.value = 0;
	mp.elementSize = 4;
	mp.width = N;
	mp.height = 1;
	CK(cudaGraphAddMemsetNode(&m, g, &k, 1, &mp));
}

__attribute__((noinline)) static void add_child(cudaGraph_t g)
{
	cudaKernelNodeParams kp = {};
	void *args[] = { &a };
	cudaGraph_t child;
	cudaGraphNode_t k, c;

	CK(cudaGraphCreate(&child, 0));
	kp.func = (void *)child_kernel;
	kp.gridDim = dim3(N / 256);
	kp.blockDim = dim3(256);
	kp.kernelParams = args;
	CK(cudaGraphAddKernelNode(&k, child, NULL, 0, &kp));
	CK(cudaGraphAddChildGraphNode(&c, g, NULL, 0, child));
	CK(cudaGraphDestroy(child));
}

__attribute__((noinline)) static void replay_captured(cudaGraphExec_t e, cudaStream_t s, int n)
{
	for (int i = 0; i < n; i++)
		CK(cudaGraphLaunch(e, s));
	CK(cudaStreamSynchronize(s));
}

__attribute__((noinline)) static void replay_built(cudaGraphExec_t e, cudaStream_t s, int n)
{
	for (int i = 0; i < n; i++)
		CK(cudaGraphLaunch(e, s));
	CK(cudaStreamSynchronize(s));
}

__attribute__((noinline)) static void update_exec(cudaGraphExec_t e, cudaStream_t s)
{
	cudaGraph_t g2 = capture_model(s);
	cudaGraphExecUpdateResultInfo info;

	CK(cudaGraphExecUpdate(e, g2, &info));
	CK(cudaGraphDestroy(g2));
}

__attribute__((noinline)) static void replay_after_update(cudaGraphExec_t e, cudaStream_t s, int n)
{
	for (int i = 0; i < n; i++)
		CK(cudaGraphLaunch(e, s));
	CK(cudaStreamSynchronize(s));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	cudaGraph_t captured, built;
	cudaGraphExec_t ec, eb;
	cudaStream_t s;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&a, N * sizeof(float)));
	CK(cudaMalloc(&b, N * sizeof(float)));
	captured = capture_model(s);
	CK(cudaGraphCreate(&built, 0));
	build_node_api(built);
	add_child(built);
	CK(cudaGraphInstantiate(&ec, captured, 0));
	CK(cudaGraphInstantiate(&eb, built, 0));
	replay_captured(ec, s, n);
	replay_built(eb, s, n);
	update_exec(ec, s);
	replay_after_update(ec, s, n / 10);
	printf("captured: %d replays of attn_kernel, memset, mlp_kernel, memcpy\n", n);
	printf("built: %d replays of node_api_kernel, memset, child_kernel\n", n);
	printf("updated: %d replays after cudaGraphExecUpdate\n", n / 10);
	CK(cudaGraphExecDestroy(ec));
	CK(cudaGraphExecDestroy(eb));
	CK(cudaGraphDestroy(captured));
	CK(cudaGraphDestroy(built));
	return 0;
}
