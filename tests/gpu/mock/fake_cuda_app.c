// SPDX-License-Identifier: MIT
/*
 * A "CUDA application" for machines without a GPU: it loads libxpu-cupti.so over the fake
 * libcupti (mock_cupti.c) as the CUDA driver would, then launches "kernels" through the fake
 * API callbacks and activity records. Run under the real xpu-record, it exercises the whole GPU
 * path: injection, the probed marker and its uprobe, the socket, the writer, the report.
 *
 *   fake_cuda_app LIBXPU_CUPTI MOCK_CUPTI LAUNCHES [catch-sigint]
 * LAUNCHES 0: until a signal. catch-sigint: handle SIGINT by leaving the loop, as Python does
 * (KeyboardInterrupt), so the process exits normally. FAKE_CUDA_ALLOCS=K in the environment:
 * also one cudaMalloc of 1 MiB every K launches, every other one freed again. FAKE_CUDA_IOCTL=FILE:
 * each launch also makes an ioctl (0xc0104629) on FILE inside the call, as the driver does on
 * /dev/nvidia*, and reports the call's API record (cudaLaunchKernel, with its time and thread).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

static void (*mock_api)(int, uint32_t, int, uint32_t);
static void (*mock_record)(const void *, uint32_t);
static uint64_t (*mock_now)(void);
static volatile sig_atomic_t stop;
static int ioctl_fd = -1;
/* FAKE_CUDA_API=1: API records for each launch and for a cheap call after it */
static int api_records;

static void on_sigint(int sig)
{
	stop = 1;
}

/* One launch, as cudaLaunchKernel looks to the library: API enter, the kernel, API exit. */
__attribute__((noinline)) static void launch_fake_kernel(uint32_t corr)
{
	CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };

	CUpti_ActivityAPI a = { .kind = CUPTI_ACTIVITY_KIND_RUNTIME, .cbid = 211 };
	char buf[16];

	a.start = mock_now();
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_ENTER, corr);
	if (ioctl_fd >= 0)
		ioctl(ioctl_fd, 0xc0104629u, buf);
	k.start = mock_now() + 1000;
	k.end = k.start + 2000;
	k.correlationId = corr;
	k.name = "_Z11fake_kernelPf";
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 32;
	k.blockY = k.blockZ = 1;
	mock_record(&k, sizeof(k));
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_EXIT, corr);
	if (ioctl_fd >= 0 || api_records) {
		a.end = mock_now();
		a.correlationId = corr;
		a.threadId = (uint32_t)gettid();
		mock_record(&a, sizeof(a));
	}
	if (api_records) {
		/* a cheap call of the kind PyTorch makes around each launch: no callback wants it */
		CUpti_ActivityAPI g = { .kind = CUPTI_ACTIVITY_KIND_RUNTIME, .cbid = 10 };

		g.start = mock_now();
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 10, CUPTI_API_ENTER, corr | 0x80000000u);
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 10, CUPTI_API_EXIT, corr | 0x80000000u);
		g.end = mock_now();
		g.correlationId = corr | 0x80000000u;
		g.threadId = (uint32_t)gettid();
		mock_record(&g, sizeof(g));
	}
}

/* One allocation or release through "cudaMalloc"/"cudaFree", as CUPTI's memory activity shows. */
static void fake_memory(uint32_t cbid, uint32_t corr, uint64_t addr, int op)
{
	CUpti_ActivityMemory4 m = { .kind = CUPTI_ACTIVITY_KIND_MEMORY2 };

	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_ENTER, corr);
	m.memoryOperationType = op;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = corr;
	m.address = addr;
	m.bytes = 1u << 20;
	m.timestamp = mock_now();
	mock_record(&m, sizeof(m));
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_EXIT, corr);
}

__attribute__((noinline)) static void allocate_fake(unsigned long k)
{
	uint64_t addr = 0x7f0000000000ull + ((uint64_t)k << 20);

	fake_memory(20, 0x40000000u + 2 * (uint32_t)k, addr,
		    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
	if (k % 2)
		fake_memory(22, 0x40000000u + 2 * (uint32_t)k + 1, addr,
			    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
}

int main(int argc, char **argv)
{
	unsigned long n, i, allocs_every = 0;
	int (*init)(void);
	void *m, *l;

	if (argc < 4) {
		fprintf(stderr, "usage: fake_cuda_app LIBXPU_CUPTI MOCK_CUPTI LAUNCHES [catch-sigint]\n");
		return 2;
	}
	n = strtoul(argv[3], NULL, 10);
	if (getenv("FAKE_CUDA_IOCTL"))
		ioctl_fd = open(getenv("FAKE_CUDA_IOCTL"), O_RDONLY);
	api_records = getenv("FAKE_CUDA_API") && !strcmp(getenv("FAKE_CUDA_API"), "1");
	if (getenv("FAKE_CUDA_ALLOCS"))
		allocs_every = strtoul(getenv("FAKE_CUDA_ALLOCS"), NULL, 10);
	if (argc > 4 && !strcmp(argv[4], "catch-sigint"))
		signal(SIGINT, on_sigint);
	m = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
	l = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!m || !l) {
		fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
		return 1;
	}
	*(void **)&mock_api = dlsym(m, "mock_api");
	*(void **)&mock_record = dlsym(m, "mock_record");
	*(void **)&mock_now = dlsym(m, "mock_now");
	*(void **)&init = dlsym(l, "InitializeInjection");
	if (!mock_api || !mock_record || !mock_now || !init || init() != 1) {
		fprintf(stderr, "fake_cuda_app: cannot initialize the injection\n");
		return 1;
	}
	for (i = 0; (!n || i < n) && !stop; i++) {
		launch_fake_kernel((uint32_t)i + 1);
		if (allocs_every && i % allocs_every == 0)
			allocate_fake(i / allocs_every);
		if (i % 500 == 499) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
		}
	}
	printf("launches %lu\n", i);
	return 0;
}
