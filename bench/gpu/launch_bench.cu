// SPDX-License-Identifier: MIT
/*
 * Launch-bound microbenchmark: THREADS host threads each launch LAUNCHES empty kernels on their
 * own stream, then synchronize. Prints the launch loop's own elapsed time, so a benchmark can
 * compute the added cost per launch under a profiler.
 *
 *   launch_bench [THREADS] [LAUNCHES_PER_THREAD]     (default 1 100000)
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

__global__ void empty_kernel(int x)
{
	if (x == -1)
		printf("never\n");
}

static unsigned long long now_ns()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) static void launch_loop(cudaStream_t s, int n)
{
	for (int i = 0; i < n; i++)
		empty_kernel<<<1, 32, 0, s>>>(i);
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	int launches = argc > 2 ? atoi(argv[2]) : 100000;
	std::vector<cudaStream_t> streams(threads);
	std::vector<std::thread> pool;

	if (threads < 1 || threads > 64 || launches < 1) {
		fprintf(stderr, "usage: launch_bench [THREADS 1-64] [LAUNCHES]\n");
		return 2;
	}
	for (auto &s : streams)
		cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	/* warm-up: context, module load, first-launch costs */
	launch_loop(streams[0], 1000);
	cudaDeviceSynchronize();

	unsigned long long t0 = now_ns();
	for (int t = 0; t < threads; t++)
		pool.emplace_back([&, t] {
			launch_loop(streams[t], launches);
			cudaStreamSynchronize(streams[t]);
		});
	for (auto &th : pool)
		th.join();
	unsigned long long t1 = now_ns();
	cudaError_t err = cudaGetLastError();
	if (err != cudaSuccess) {
		fprintf(stderr, "launch_bench: %s\n", cudaGetErrorString(err));
		return 1;
	}
	printf("launches %d\nelapsed_ns %llu\n", threads * launches + 1000, t1 - t0);
	return 0;
}
