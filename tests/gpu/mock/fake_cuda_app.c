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
 * the library's setup: the file is loaded, a wait until xpu-record has probed it, one view op (a
 * node without a launch: xpu-record locates the node counter at the first node), 300 ms,
 * then forward_kernels() makes LAUNCHES ops that each launch one kernel (MmBackward0 nodes),
 * forward_views() LAUNCHES ops that launch nothing (ViewBackward0 nodes), and run_backward()
 * evaluates every node, each evaluation launching one kernel: LAUNCHES forward kernels and
 * 2 LAUNCHES + 1 backward kernels in all.
 *
 * For the in-process launch walk (tests/e2e/test_inproc_walk.sh, test_inproc_hostile.sh):
 * FAKE_CUDA_DEPTH=N: each launch is made N calls below main, through the walker's kinds of
 * frames in turn (level k's function is deep_fns[k % 6]: plain, alloca (CFA from rbp), in
 * FAKE_CUDA_DEEPLIB's library (tests/e2e/inproc/deep_lib.c), stack-realigned (gcc's DRAP),
 * then the library's alloca and realigned ones; realigned: DRAP, CFA read from the frame), so that from main: deep_fns[N % 6],
 * deep_fns[(N - 1) % 6], ..., deep_fns[1], launch_fake_kernel. Without FAKE_CUDA_DEEPLIB the
 * library's kinds are the program's own. FAKE_CUDA_THREADS=T: T more threads make LAUNCHES
 * launches each, as the main thread does (launch ids stay unique).
 * FAKE_CUDA_HOSTILE=MODE: launch 0 and every 10th after it (i % 10 == 0) is made from a hostile
 * place, and the count is printed ("hostile H"); the process must go on unharmed:
 *   sigaltstack     from a SIGUSR1 handler running on a sigaltstack of twice the least the
 *                   kernel asks (AT_MINSIGSTKSZ, else the historic MINSIGSTKSZ of 2048), in
 *                   whole pages, above a PROT_NONE guard page (FAKE_CUDA_ALTSTACK=BYTES to
 *                   choose); how much of it was used is printed
 *   badfp           from an assembly function without CFI, with rbp 0x10
 *   badfp-cfi       from an assembly function whose CFI says CFA = rbp + 16, with rbp 0x10
 *   badra           from an assembly function (with CFI) whose own return address on the stack
 *                   reads 0x10 during the launch, put back before it returns
 *   badra-unmapped  the same with the address of an unmapped page (mapped, then munmap'd)
 *                   (no mapping made by these modes is executable: none makes xpu-record
 *                   rescan the process's mappings while it launches)
 *   nested          a launch made while another launch's stack is being read: a hardware
 *                   watchpoint (perf_event_open, synchronous SIGTRAP) on the return-address
 *                   slot of the launching function (watch_launch) fires when the in-process
 *                   walk reads it, and the SIGTRAP handler (on_trap) launches once more
 *                   (launch ids from 0x20000000); the launches nested are printed ("nested K").
 *                   A walk in BPF reads from the kernel, which the watchpoint leaves out.
 * FAKE_CUDA_THRASH_KIB=K: before each launch of the main loop, write one word in every 64-byte
 * line of a K KiB buffer, as a framework's own work between two launches does to the caches:
 * the walk then pays for what it touches (bench/inproc_launch_cost.py --thrash-kib).
 * FAKE_CUDA_NO_MAIN: defined by a file that includes this one for its launch code
 * (tests/gpu/mock/fake_cuda_py.c), which then has no main().
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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
static int no_inject __attribute__((unused));
static unsigned long *mock_callbacks;
static int *mock_finalized;
static int ioctl_fd = -1;
/* FAKE_CUDA_API=1: API records for each launch and for a cheap call after it */
static int api_records;

__attribute__((unused)) static void on_sigint(int sig)
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

/*
 * What the CUDA driver does at cuInit() with CUDA_INJECTION64_PATH: loads the library and calls
 * its InitializeInjection(), here over the fake libcupti MOCK (loaded first, global, so that
 * the library's own search finds its symbols through XPU_CUPTI_LIB). XPU NULL: MOCK only
 * (FAKE_CUDA_NO_INJECT). 0, or 1 with a message.
 */
static int fake_inject(const char *xpu, const char *mock)
{
	int (*init)(void) = NULL;
	void *m, *l = NULL;

	m = dlopen(mock, RTLD_NOW | RTLD_GLOBAL);
	if (m && xpu)
		l = dlopen(xpu, RTLD_NOW | RTLD_LOCAL);
	if (!m || (xpu && !l)) {
		fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
		return 1;
	}
	*(void **)&mock_api = dlsym(m, "mock_api");
	*(void **)&mock_record = dlsym(m, "mock_record");
	*(void **)&mock_now = dlsym(m, "mock_now");
	mock_callbacks = dlsym(m, "mock_callbacks");
	mock_finalized = dlsym(m, "mock_finalized");
	if (l)
		*(void **)&init = dlsym(l, "InitializeInjection");
	if (!mock_api || !mock_record || !mock_now || (xpu && (!init || init() != 1))) {
		fprintf(stderr, "fake_cuda_app: cannot initialize the injection\n");
		return 1;
	}
	return 0;
}

/*
 * FAKE_TORCH: waits until xpu-record has probed the library t, 20 s at most (then its counts
 * say what was missed): a uprobe puts its breakpoint (int3, 0xcc) over the first byte of the
 * probed function in every process that maps the file, so this one reads it there. The
 * fixed 300 ms this replaced could be too short on a loaded machine once the probes' programs
 * are verified at the library's first mapping (0.2 to 0.6 s for PyTorch's on the 2-CPU box).
 */
static void fake_torch_wait_probed(void *t)
{
	static const char *const probed[] = {
		"_ZN5torch8autograd4impl17set_gradient_edgeERKN2at6TensorENS0_4EdgeE",
		"_ZN5torch8autograd6Engine17evaluate_functionERKSt10shared_ptrINS0_9GraphTaskEE"
		"PNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE",
	};
	struct timespec ts = { 0, 10 * 1000000 };
	int tries, i, done;

	for (tries = 0; tries < 2000; tries++) {
		for (i = done = 0; i < 2; i++) {
			const volatile unsigned char *code = dlsym(t, probed[i]);

			done += code && *code == 0xcc;
		}
		if (done == 2)
			return;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "fake_cuda_app: the fake libtorch was not probed within 20 s\n");
}

#ifndef FAKE_CUDA_NO_MAIN
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
	fake_torch_wait_probed(t);
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

/*
 * FAKE_CUDA_DEPTH: the levels of a deep launch (see the top of this file). The library's half
 * (tests/e2e/inproc/deep_lib.c) has the same struct deep_ops and DEEP_NEXT. Each level keeps a
 * frame (no inlining, cloning or sibling call), so every walker must find every one.
 */
struct deep_ops {
	void (*fn[6])(int n, uint32_t corr, const struct deep_ops *ops);
	void (*leaf)(uint32_t corr);
};
#define DEEP_NEXT(n, corr, ops)                                                    \
	do {                                                                       \
		if ((n) == 0)                                                      \
			(ops)->leaf(corr);                                         \
		else                                                               \
			(ops)->fn[(n) % 6]((n), (corr), (ops));                    \
	} while (0)
static struct deep_ops deep_ops;
static int deep_depth;

__attribute__((noipa)) static void deep_plain(int n, uint32_t corr, const struct deep_ops *ops)
{
	volatile char pad[40];

	pad[0] = (char)n;
	DEEP_NEXT(n - 1, corr, ops);
	pad[1] = pad[0];
}

/* alloca: gcc keeps a frame pointer here even with -fomit-frame-pointer (CFA = rbp + 16) */
__attribute__((noipa)) static void deep_alloca(int n, uint32_t corr, const struct deep_ops *ops)
{
	char *p = __builtin_alloca(16 + (n & 3) * 16);

	p[0] = (char)n;
	__asm__ volatile("" : : "r"(p) : "memory");
	DEEP_NEXT(n - 1, corr, ops);
	__asm__ volatile("" : : "r"(p) : "memory");
}

/*
 * a 64-byte aligned local and an alloca: the stack is realigned through gcc's DRAP (r10), and
 * the CFA is read from the frame (CFA = *(rbp - 8))
 */
__attribute__((noipa)) static void deep_aligned(int n, uint32_t corr, const struct deep_ops *ops)
{
	char buf[64] __attribute__((aligned(64)));
	char *p = __builtin_alloca(8 + (n & 1) * 24);

	buf[0] = (char)n;
	p[0] = (char)n;
	__asm__ volatile("" : : "r"(buf), "r"(p) : "memory");
	DEEP_NEXT(n - 1, corr, ops);
	__asm__ volatile("" : : "r"(buf), "r"(p) : "memory");
}

/* 0 or 1 with a message: the levels, the library's where FAKE_CUDA_DEEPLIB names it */
static int deep_setup(void)
{
	const char *lib = getenv("FAKE_CUDA_DEEPLIB");
	void (*lp)(int, uint32_t, const struct deep_ops *) = deep_plain;
	void (*la)(int, uint32_t, const struct deep_ops *) = deep_alloca;
	void (*lg)(int, uint32_t, const struct deep_ops *) = deep_aligned;

	deep_depth = getenv("FAKE_CUDA_DEPTH") ? atoi(getenv("FAKE_CUDA_DEPTH")) : 0;
	if (deep_depth < 0 || deep_depth > 200) {
		fprintf(stderr, "fake_cuda_app: FAKE_CUDA_DEPTH is 0 to 200\n");
		return 1;
	}
	if (lib && *lib) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
			return 1;
		}
		*(void **)&lp = dlsym(h, "lib_deep_plain");
		*(void **)&la = dlsym(h, "lib_deep_alloca");
		*(void **)&lg = dlsym(h, "lib_deep_aligned");
		if (!lp || !la || !lg) {
			fprintf(stderr, "fake_cuda_app: %s is not deep_lib.c's\n", lib);
			return 1;
		}
	}
	deep_ops = (struct deep_ops){ { deep_plain, deep_alloca, lp, deep_aligned, la, lg },
				      launch_fake_kernel };
	return 0;
}

/*
 * FAKE_CUDA_HOSTILE (see the top of this file). The assembly callers take (launch, corr, value)
 * and call launch(corr) with value as rbp (fake_badfp_call: no CFI at all; fake_badfp_cfi_call:
 * CFI that says CFA = rbp + 16) or as their own return address (fake_badra_call, with true CFI:
 * r12 keeps the real one meanwhile). rbp is callee-saved, so launch() gives it back unchanged.
 */
void fake_badfp_call(void (*launch)(uint32_t), uint32_t corr, uint64_t rbp);
void fake_badfp_cfi_call(void (*launch)(uint32_t), uint32_t corr, uint64_t rbp);
void fake_badra_call(void (*launch)(uint32_t), uint32_t corr, uint64_t ra);
#if defined(__x86_64__)
__asm__(".text\n"
	".globl fake_badfp_call\n"
	".type fake_badfp_call, @function\n"
	"fake_badfp_call:\n"
	"\tpush %rbp\n"
	"\tmov %rdi, %rax\n"
	"\tmov %esi, %edi\n"
	"\tmov %rdx, %rbp\n"
	"\tcall *%rax\n"
	"\tpop %rbp\n"
	"\tret\n"
	".size fake_badfp_call, .-fake_badfp_call\n"

	".globl fake_badfp_cfi_call\n"
	".type fake_badfp_cfi_call, @function\n"
	"fake_badfp_cfi_call:\n"
	"\t.cfi_startproc\n"
	"\tpush %rbp\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\t.cfi_offset %rbp, -16\n"
	"\tmov %rsp, %rbp\n"
	"\t.cfi_def_cfa_register %rbp\n"
	"\tmov %rdi, %rax\n"
	"\tmov %esi, %edi\n"
	"\tmov %rdx, %rbp\n"
	"\tcall *%rax\n"
	"\tmov %rsp, %rbp\n"
	"\tpop %rbp\n"
	"\t.cfi_def_cfa %rsp, 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size fake_badfp_cfi_call, .-fake_badfp_cfi_call\n"

	".globl fake_badra_call\n"
	".type fake_badra_call, @function\n"
	"fake_badra_call:\n"
	"\t.cfi_startproc\n"
	"\tpush %r12\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\t.cfi_offset %r12, -16\n"
	"\tmov 8(%rsp), %r12\n"
	"\tmov %rdx, 8(%rsp)\n"
	"\tmov %rdi, %rax\n"
	"\tmov %esi, %edi\n"
	"\tcall *%rax\n"
	"\tmov %r12, 8(%rsp)\n"
	"\tpop %r12\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size fake_badra_call, .-fake_badra_call\n");
#endif

enum hostile { H_NONE, H_SIGALTSTACK, H_BADFP, H_BADFP_CFI, H_BADRA, H_BADRA_UNMAPPED, H_NESTED };
static enum hostile hostile;
static unsigned long hostile_count;
static uint64_t unmapped_page;
static volatile uint32_t sig_corr;
static unsigned char *altstack;
static size_t altstack_size;

static void on_hostile_signal(int sig)
{
	(void)sig;
	launch_fake_kernel(sig_corr);
	__asm__ volatile("" ::: "memory");	/* keep this frame: no sibling call */
}

/* FAKE_CUDA_HOSTILE=nested: the watchpoint, its slot, the launches nested */
static int watch_fd = -1;
static void **watch_slot;
static unsigned long nested_count;

static void on_trap(int sig)
{
	(void)sig;
	/* once per watched launch: the nested launch's own walk reads the slot too */
	ioctl(watch_fd, PERF_EVENT_IOC_DISABLE, 0);
	launch_fake_kernel(0x20000000u + (uint32_t)nested_count++);
	__asm__ volatile("" ::: "memory");
}

/*
 * A launch under the watchpoint on this function's own return-address slot (a frame pointer
 * is kept here to find it: __builtin_frame_address). Called from the same place in main each
 * time, so the slot is the same each time: the watchpoint is made at the first call.
 */
__attribute__((noinline)) static int watch_launch(uint32_t corr)
{
	void **slot = (void **)__builtin_frame_address(0) + 1;

	if (watch_fd < 0) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_BREAKPOINT;
		a.size = sizeof(a);
		a.bp_type = HW_BREAKPOINT_RW;	/* x86 watches reads only with writes */
		a.bp_addr = (uintptr_t)slot;
		a.bp_len = HW_BREAKPOINT_LEN_8;
		a.sample_period = 1;
		a.disabled = 1;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.sigtrap = 1;
		a.remove_on_exec = 1;
		watch_fd = (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (watch_fd < 0) {
			fprintf(stderr, "fake_cuda_app: no hardware watchpoint: %s\n", strerror(errno));
			return -1;
		}
		watch_slot = slot;
	}
	if (slot != watch_slot) {
		fprintf(stderr, "fake_cuda_app: watch_launch's slot moved\n");
		return -1;
	}
	ioctl(watch_fd, PERF_EVENT_IOC_ENABLE, 0);
	launch_fake_kernel(corr);
	ioctl(watch_fd, PERF_EVENT_IOC_DISABLE, 0);
	__asm__ volatile("" ::: "memory");
	return 0;
}

/* 0 or 1 with a message */
static int hostile_setup(void)
{
	const char *m = getenv("FAKE_CUDA_HOSTILE");
	long page = sysconf(_SC_PAGESIZE);

	if (!m || !*m)
		return 0;
	if (!strcmp(m, "sigaltstack"))
		hostile = H_SIGALTSTACK;
	else if (!strcmp(m, "badfp"))
		hostile = H_BADFP;
	else if (!strcmp(m, "badfp-cfi"))
		hostile = H_BADFP_CFI;
	else if (!strcmp(m, "badra"))
		hostile = H_BADRA;
	else if (!strcmp(m, "badra-unmapped"))
		hostile = H_BADRA_UNMAPPED;
	else if (!strcmp(m, "nested"))
		hostile = H_NESTED;
	else {
		fprintf(stderr, "fake_cuda_app: FAKE_CUDA_HOSTILE=%s: not sigaltstack, badfp, "
			"badfp-cfi, badra, badra-unmapped or nested\n", m);
		return 1;
	}
#if !defined(__x86_64__)
	if (hostile != H_SIGALTSTACK) {
		fprintf(stderr, "fake_cuda_app: FAKE_CUDA_HOSTILE=%s is x86-64 only\n", m);
		return 1;
	}
#endif
	if (hostile == H_BADRA_UNMAPPED) {
		/* not PROT_EXEC: an executable mapping would make xpu-record rescan the process */
		void *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || munmap(p, page)) {
			perror("fake_cuda_app: mmap");
			return 1;
		}
		unmapped_page = (uint64_t)p + 0x40;
	}
	if (hostile == H_NESTED) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_trap;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGTRAP, &sa, NULL)) {
			perror("fake_cuda_app: sigaction");
			return 1;
		}
	}
	if (hostile == H_SIGALTSTACK) {
		struct sigaction sa;
		stack_t ss;
		/* glibc's MINSIGSTKSZ is sysconf(_SC_SIGSTKSZ) under _GNU_SOURCE: not the least */
		unsigned long min = getauxval(AT_MINSIGSTKSZ);
		unsigned char *p;

		if (min < 2048)
			min = 2048;
		altstack_size = getenv("FAKE_CUDA_ALTSTACK") ? strtoul(getenv("FAKE_CUDA_ALTSTACK"), NULL, 0)
							     : 2 * min;
		/* whole pages, so that a guard page lies right at each end */
		altstack_size = (altstack_size + page - 1) & ~(page - 1);
		p = mmap(NULL, altstack_size + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || mprotect(p + page, altstack_size, PROT_READ | PROT_WRITE)) {
			perror("fake_cuda_app: altstack");
			return 1;
		}
		altstack = p + page;
		/* a pattern, to tell afterwards how deep the handler went */
		memset(altstack, 0xa5, altstack_size);
		ss = (stack_t){ .ss_sp = altstack, .ss_size = altstack_size };
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_hostile_signal;
		sa.sa_flags = SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL)) {
			perror("fake_cuda_app: sigaltstack");
			return 1;
		}
	}
	return 0;
}

/* one hostile launch (MODE's place), launch id corr */
__attribute__((noinline)) static void hostile_launch(uint32_t corr)
{
	hostile_count++;
	switch (hostile) {
	case H_SIGALTSTACK:
		sig_corr = corr;
		raise(SIGUSR1);
		break;
#if defined(__x86_64__)
	case H_BADFP:
		fake_badfp_call(launch_fake_kernel, corr, 0x10);
		break;
	case H_BADFP_CFI:
		fake_badfp_cfi_call(launch_fake_kernel, corr, 0x10);
		break;
	case H_BADRA:
		fake_badra_call(launch_fake_kernel, corr, 0x10);
		break;
	case H_BADRA_UNMAPPED:
		fake_badra_call(launch_fake_kernel, corr, unmapped_page);
		break;
#endif
	case H_NESTED:
		if (watch_launch(corr))
			exit(3);
		break;
	default:
		launch_fake_kernel(corr);
	}
	__asm__ volatile("" ::: "memory");
}

/* FAKE_CUDA_THRASH_KIB: the buffer written between launches */
static unsigned char *volatile thrash;
static size_t thrash_bytes;

/* one launch of the loop: hostile, deep or plain (inlined: a plain one is main's own call) */
static inline __attribute__((always_inline)) void launch_one(unsigned long i, uint32_t corr)
{
	if (hostile && i % 10 == 0)
		hostile_launch(corr);
	else if (deep_depth)
		DEEP_NEXT(deep_depth, corr, &deep_ops);
	else
		launch_fake_kernel(corr);
}

/* FAKE_CUDA_THREADS: thread k (1..T) makes launches k * LAUNCHES + 1 .. (k + 1) * LAUNCHES */
struct launcher {
	pthread_t t;
	unsigned long n, first;
};

static void *launch_thread(void *arg)
{
	struct launcher *l = arg;
	unsigned long i;

	for (i = 0; i < l->n; i++)
		launch_one(i, (uint32_t)(l->first + i));
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static struct timespec loop_start, loop_end;

int main(int argc, char **argv)
{
	unsigned long n, i, allocs_every = 0, nthreads = 0, t;
	static struct launcher threads[64];

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
	if (fake_inject(no_inject ? NULL : argv[1], argv[2]))
		return 1;
	if (getenv("FAKE_TORCH"))
		return fake_torch(getenv("FAKE_TORCH"), (int)n);
	if (deep_setup() || hostile_setup())
		return 1;
	/*
	 * FAKE_CUDA_START_MS: a pause before the first launch, for the tests whose counts need the
	 * recorder to have published this process's mappings and their tables (it reads them from
	 * the exec and dlopen events on its drain thread; on a loaded machine that lagged behind
	 * the first launches of a program that launches at once, as no CUDA program does).
	 */
	if (getenv("FAKE_CUDA_START_MS")) {
		long ms = atol(getenv("FAKE_CUDA_START_MS"));
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

		if (ms > 0 && ms < 10000)
			nanosleep(&ts, NULL);
	}
	if (getenv("FAKE_CUDA_THREADS"))
		nthreads = strtoul(getenv("FAKE_CUDA_THREADS"), NULL, 10);
	if (nthreads && (!n || nthreads > 64 || hostile)) {
		fprintf(stderr, "fake_cuda_app: FAKE_CUDA_THREADS is 1 to 64, with LAUNCHES > 0 and no FAKE_CUDA_HOSTILE\n");
		return 1;
	}
	for (t = 0; t < nthreads; t++) {
		threads[t].n = n;
		threads[t].first = (t + 1) * n + 1;
		if (pthread_create(&threads[t].t, NULL, launch_thread, &threads[t])) {
			fprintf(stderr, "fake_cuda_app: cannot start a launching thread\n");
			return 1;
		}
	}
	if (getenv("FAKE_CUDA_THRASH_KIB")) {
		unsigned long kib = strtoul(getenv("FAKE_CUDA_THRASH_KIB"), NULL, 10);

		if (kib && kib <= (1ul << 20)) {
			thrash_bytes = kib << 10;
			thrash = calloc(1, thrash_bytes);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &loop_start);
	for (i = 0; (!n || i < n) && !stop; i++) {
		if (thrash) {
			size_t k;

			for (k = 0; k < thrash_bytes; k += 64)
				thrash[k] += (unsigned char)i;
		}
		launch_one(i, (uint32_t)i + 1);
		if (allocs_every && i % allocs_every == 0)
			allocate_fake(i / allocs_every);
		if (i % 500 == 499) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
		}
	}
	for (t = 0; t < nthreads; t++)
		pthread_join(threads[t].t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &loop_end);
	printf("launches %lu\n", i * (nthreads + 1));
	/* bench/inproc_launch_cost.py: the launch loop's own time, start-up left out */
	printf("loop_ns %lld\n", (long long)(loop_end.tv_sec - loop_start.tv_sec) * 1000000000ll +
				     (loop_end.tv_nsec - loop_start.tv_nsec));
	if (hostile)
		printf("hostile %lu\n", hostile_count);
	if (hostile == H_NESTED)
		printf("nested %lu\n", nested_count);
	if (altstack) {
		size_t used = 0;

		/* the stack grows down: the untouched pattern is at its low end */
		while (used < altstack_size && altstack[used] == 0xa5)
			used++;
		printf("altstack used %zu of %zu bytes\n", altstack_size - used, altstack_size);
	}
	if (mock_callbacks && mock_finalized)
		printf("callbacks %lu finalized %d\n", *mock_callbacks, *mock_finalized);
	return 0;
}
#endif /* FAKE_CUDA_NO_MAIN */
