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
 * FAKE_CUDA_NO_INJECT=1: LIBXPU_CUPTI is not loaded: the program runs unprofiled until
 * xpu-record -p loads it (tests/e2e/test_attach_gpu.sh); at the end it also prints how many
 * launches a subscriber was called back for and whether CUPTI was finalized.
 * FAKE_CUDA_LIBCUDA=PATH: loads PATH first (a file named libcuda.so.1: a CUDA process to -p).
 * FAKE_CUDA_BLOCK_SIGNALS=1: blocks every signal (then only SIGKILL ends it).
 *
 * FAKE_TORCH=PATH (a build of fake_libtorch.c named libtorch_cpu.so): PyTorch's autograd instead
 * of the launch loop, for backward attribution (tests/e2e/test_autograd_from_launch.sh). After
 * the library's setup: the file is loaded, 300 ms for xpu-record to probe it, one view op (a
 * node without a launch: xpu-record locates the node counter at the first node), 300 ms again,
 * then forward_kernels() makes LAUNCHES ops that each launch one kernel (MmBackward0 nodes),
 * forward_views() LAUNCHES ops that launch nothing (ViewBackward0 nodes), and run_backward()
 * evaluates every node, each evaluation launching one kernel: LAUNCHES forward kernels and
 * 2 LAUNCHES + 1 backward kernels in all.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <dlfcn.h>
#include <pthread.h>
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
/* FAKE_CUDA_NO_INJECT=1: run unprofiled, for xpu-record -p to attach to (see main) */
static int no_inject;
static unsigned long *mock_callbacks;
static int *mock_finalized;
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

/* FAKE_TORCH: fake_libtorch.c's ops and engine, and the nodes made */
static void *(*torch_op)(void (*)(void), int);
static void (*torch_backward)(void **, int, void (*)(void));
static void **torch_nodes;
static int torch_nnodes;
static uint32_t torch_corr;

/* the kernels of an op or of a node's evaluation: one launch each */
__attribute__((noinline)) static void torch_launch(void)
{
	launch_fake_kernel(++torch_corr);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void torch_node(void (*launch)(void), int kind)
{
	torch_nodes[torch_nnodes++] = torch_op(launch, kind);
}

__attribute__((noinline)) static void forward_kernels(int k)
{
	int i;

	for (i = 0; i < k; i++)
		torch_node(torch_launch, 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void forward_views(int k)
{
	int i;

	for (i = 0; i < k; i++)
		torch_node(NULL, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void run_backward(void)
{
	torch_backward(torch_nodes, torch_nnodes, torch_launch);
	__asm__ volatile("" ::: "memory");
}

/* The FAKE_TORCH mode (see the top of this file): k ops of each kind and their backward. */
static int fake_torch(const char *path, int k)
{
	struct timespec ts = { 0, 300 * 1000000 };
	void *t = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!t) {
		fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
		return 1;
	}
	*(void **)&torch_op = dlsym(t, "fake_op");
	*(void **)&torch_backward = dlsym(t, "fake_backward");
	torch_nodes = calloc(2 * (size_t)k + 1, sizeof(*torch_nodes));
	if (!torch_op || !torch_backward || !torch_nodes) {
		fprintf(stderr, "fake_cuda_app: %s is not fake_libtorch.c's\n", path);
		return 1;
	}
	nanosleep(&ts, NULL);
	torch_node(NULL, 0);
	nanosleep(&ts, NULL);
	forward_kernels(k);
	forward_views(k);
	run_backward();
	printf("nodes %d launches %u\n", torch_nnodes, torch_corr);
	return 0;
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

/*
 * A thread that waits in the kernel for good, as the CUDA driver's own threads of every CUDA
 * process wait between events (poll, futex): xpu-record -p borrows such a thread for its
 * remote calls. Without one, the only thread here sleeps in nanosleep, whose restart needs
 * the thread's restart block, so the seize takes it only when it lands just as a sleep ends
 * (1 try in 15 to 65 here; a loaded machine once missed for the whole 3 s).
 */
static void *driver_thread(void *arg)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return NULL;
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
	no_inject = getenv("FAKE_CUDA_NO_INJECT") && !strcmp(getenv("FAKE_CUDA_NO_INJECT"), "1");
	if (getenv("FAKE_CUDA_BLOCK_SIGNALS")) {
		/* a target that blocks every signal it can: an attach must not need one */
		sigset_t all;

		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
	}
	if (no_inject) {
		pthread_t t;

		if (pthread_create(&t, NULL, driver_thread, NULL) || pthread_detach(t))
			fprintf(stderr, "fake_cuda_app: no driver thread\n");
	}
	if (getenv("FAKE_CUDA_ALLOCS"))
		allocs_every = strtoul(getenv("FAKE_CUDA_ALLOCS"), NULL, 10);
	if (argc > 4 && !strcmp(argv[4], "catch-sigint"))
		signal(SIGINT, on_sigint);
	/* a stand-in libcuda.so, by which xpu-record -p tells a CUDA process */
	if (getenv("FAKE_CUDA_LIBCUDA") && !dlopen(getenv("FAKE_CUDA_LIBCUDA"), RTLD_NOW))
		fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
	m = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
	l = no_inject ? NULL : dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!m || (!l && !no_inject)) {
		fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
		return 1;
	}
	*(void **)&mock_api = dlsym(m, "mock_api");
	*(void **)&mock_record = dlsym(m, "mock_record");
	*(void **)&mock_now = dlsym(m, "mock_now");
	mock_callbacks = dlsym(m, "mock_callbacks");
	mock_finalized = dlsym(m, "mock_finalized");
	init = NULL;
	if (l)
		*(void **)&init = dlsym(l, "InitializeInjection");
	if (!mock_api || !mock_record || !mock_now || (!no_inject && (!init || init() != 1))) {
		fprintf(stderr, "fake_cuda_app: cannot initialize the injection\n");
		return 1;
	}
	if (getenv("FAKE_TORCH"))
		return fake_torch(getenv("FAKE_TORCH"), (int)n);
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
	if (mock_callbacks && mock_finalized)
		printf("callbacks %lu finalized %d\n", *mock_callbacks, *mock_finalized);
	return 0;
}
