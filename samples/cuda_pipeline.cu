// SPDX-License-Identifier: MIT
/*
 * A small inference-like pipeline for the GPU checks: distinct kernels, each launched from its
 * own named noinline host function (so a check can find that function in the launch stack),
 * copies both ways, two streams, a CUDA graph built by stream capture and launched several
 * times, NVTX ranges and a marker, and the usual synchronize calls.
 *
 * It prints what it did as "expect ..." lines, which tests/gpu/check_trace reads:
 *   expect kernel NAME COUNT LAUNCHER        launched directly from host function LAUNCHER
 *   expect graph_kernel NAME COUNT LAUNCHER  run by graph launches made in LAUNCHER
 *   expect memcpy KIND COUNT / expect memset COUNT / expect nvtx NAME COUNT
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(call)                                                                        \
	do {                                                                               \
		cudaError_t e_ = (call);                                                   \
		if (e_ != cudaSuccess) {                                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
				cudaGetErrorString(e_));                                   \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

#define NOINLINE __attribute__((noinline))

enum { TOKENS = 256, DIM = 256, VOCAB = 4096, STEPS = 20, GRAPH_LAUNCHES = 5 };

__global__ void embed_kernel(const int *tokens, const float *table, float *out)
{
	int t = blockIdx.x, d = threadIdx.x;

	out[t * DIM + d] = table[(tokens[t] % VOCAB) * DIM + d];
}

__global__ void matmul_kernel(const float *a, const float *w, float *out)
{
	int t = blockIdx.x, j = threadIdx.x;
	float acc = 0.f;

	for (int k = 0; k < DIM; k++)
		acc += a[t * DIM + k] * w[k * DIM + j];
	out[t * DIM + j] = acc;
}

__global__ void softmax_kernel(float *x)
{
	__shared__ float buf[DIM];
	int t = blockIdx.x, d = threadIdx.x;
	float v = x[t * DIM + d];

	buf[d] = v;
	__syncthreads();
	float m = buf[0], s = 0.f;
	for (int k = 1; k < DIM; k++)
		m = fmaxf(m, buf[k]);
	for (int k = 0; k < DIM; k++)
		s += __expf(buf[k] - m);
	x[t * DIM + d] = __expf(v - m) / s;
}

__global__ void layernorm_kernel(const float *x, float *out)
{
	int t = blockIdx.x, d = threadIdx.x;
	float mean = 0.f, var = 0.f;

	for (int k = 0; k < DIM; k++)
		mean += x[t * DIM + k];
	mean /= DIM;
	for (int k = 0; k < DIM; k++)
		var += (x[t * DIM + k] - mean) * (x[t * DIM + k] - mean);
	out[t * DIM + d] = (x[t * DIM + d] - mean) * rsqrtf(var / DIM + 1e-5f);
}

__global__ void bias_kernel(float *x, float b)
{
	x[blockIdx.x * DIM + threadIdx.x] += b;
}

__global__ void gelu_kernel(float *x)
{
	float v = x[blockIdx.x * DIM + threadIdx.x];

	x[blockIdx.x * DIM + threadIdx.x] = 0.5f * v * (1.f + tanhf(0.79788456f * v));
}

struct bufs {
	int *h_tokens, *d_tokens;
	float *h_out, *d_table, *d_w, *d_x, *d_y, *d_z;
	cudaStream_t s0, s1;
	cudaEvent_t ev;
};

NOINLINE static void launch_embed(bufs &b)
{
	embed_kernel<<<TOKENS, DIM, 0, b.s0>>>(b.d_tokens, b.d_table, b.d_x);
}

NOINLINE static void launch_matmul(bufs &b)
{
	matmul_kernel<<<TOKENS, DIM, 0, b.s0>>>(b.d_x, b.d_w, b.d_y);
}

NOINLINE static void launch_softmax(bufs &b)
{
	softmax_kernel<<<TOKENS, DIM, 0, b.s0>>>(b.d_y);
}

NOINLINE static void launch_layernorm(bufs &b)
{
	layernorm_kernel<<<TOKENS, DIM, 0, b.s1>>>(b.d_y, b.d_z);
}

NOINLINE static void copy_tokens_in(bufs &b, int step)
{
	for (int i = 0; i < TOKENS; i++)
		b.h_tokens[i] = (i * 7 + step * 13) % VOCAB;
	CHECK(cudaMemcpyAsync(b.d_tokens, b.h_tokens, TOKENS * sizeof(int), cudaMemcpyHostToDevice,
			      b.s0));
}

NOINLINE static void copy_result_out(bufs &b)
{
	CHECK(cudaMemcpyAsync(b.h_out, b.d_z, TOKENS * DIM * sizeof(float), cudaMemcpyDeviceToHost,
			      b.s1));
}

NOINLINE static void run_step(bufs &b, int step)
{
	nvtxRangePushA("step");
	copy_tokens_in(b, step);
	launch_embed(b);
	launch_matmul(b);
	launch_softmax(b);
	CHECK(cudaEventRecord(b.ev, b.s0));
	CHECK(cudaStreamWaitEvent(b.s1, b.ev, 0));
	launch_layernorm(b);
	copy_result_out(b);
	CHECK(cudaStreamSynchronize(b.s1));
	nvtxRangePop();
}

/* Graph of two kernels, captured on s1 (capture launches nothing, so no records of its own). */
NOINLINE static cudaGraphExec_t build_graph(bufs &b)
{
	cudaGraph_t g;
	cudaGraphExec_t exec;

	CHECK(cudaStreamBeginCapture(b.s1, cudaStreamCaptureModeThreadLocal));
	bias_kernel<<<TOKENS, DIM, 0, b.s1>>>(b.d_z, 0.5f);
	gelu_kernel<<<TOKENS, DIM, 0, b.s1>>>(b.d_z);
	CHECK(cudaStreamEndCapture(b.s1, &g));
	CHECK(cudaGraphInstantiate(&exec, g, 0));
	CHECK(cudaGraphDestroy(g));
	return exec;
}

NOINLINE static void run_graph(bufs &b, cudaGraphExec_t exec)
{
	CHECK(cudaGraphLaunch(exec, b.s1));
}

int main(void)
{
	bufs b;
	cudaGraphExec_t exec;

	nvtxRangePushA("setup");
	CHECK(cudaStreamCreateWithFlags(&b.s0, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&b.s1, cudaStreamNonBlocking));
	CHECK(cudaEventCreateWithFlags(&b.ev, cudaEventDisableTiming));
	CHECK(cudaMallocHost(&b.h_tokens, TOKENS * sizeof(int)));
	CHECK(cudaMallocHost(&b.h_out, TOKENS * DIM * sizeof(float)));
	CHECK(cudaMalloc(&b.d_tokens, TOKENS * sizeof(int)));
	CHECK(cudaMalloc(&b.d_table, VOCAB * DIM * sizeof(float)));
	CHECK(cudaMalloc(&b.d_w, DIM * DIM * sizeof(float)));
	CHECK(cudaMalloc(&b.d_x, TOKENS * DIM * sizeof(float)));
	CHECK(cudaMalloc(&b.d_y, TOKENS * DIM * sizeof(float)));
	CHECK(cudaMalloc(&b.d_z, TOKENS * DIM * sizeof(float)));
	CHECK(cudaMemset(b.d_table, 0, VOCAB * DIM * sizeof(float)));
	CHECK(cudaMemset(b.d_w, 0, DIM * DIM * sizeof(float)));
	nvtxRangePop();

	for (int step = 0; step < STEPS; step++)
		run_step(b, step);
	nvtxMarkA("steps_done");

	exec = build_graph(b);
	for (int i = 0; i < GRAPH_LAUNCHES; i++)
		run_graph(b, exec);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaGraphExecDestroy(exec));

	printf("expect kernel embed_kernel %d launch_embed\n", STEPS);
	printf("expect kernel matmul_kernel %d launch_matmul\n", STEPS);
	printf("expect kernel softmax_kernel %d launch_softmax\n", STEPS);
	printf("expect kernel layernorm_kernel %d launch_layernorm\n", STEPS);
	printf("expect graph_kernel bias_kernel %d run_graph\n", GRAPH_LAUNCHES);
	printf("expect graph_kernel gelu_kernel %d run_graph\n", GRAPH_LAUNCHES);
	printf("expect memcpy HtoD %d\n", STEPS);
	printf("expect memcpy DtoH %d\n", STEPS);
	printf("expect memset %d\n", 2);
	printf("expect nvtx step %d\n", STEPS);
	printf("expect nvtx setup 1\n");
	printf("expect nvtx_marker steps_done 1\n");
	return 0;
}
