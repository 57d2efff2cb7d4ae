// SPDX-License-Identifier: MIT
/*
 * tests/e2e/test_dwarf_top.sh: a 96 KiB stack frame (hf_huge, as cuDNN's entry points have)
 * between the outer frames and the leaf, on the main thread (main -> hf_outer_a -> hf_outer_b
 * -> hf_huge -> hf_inner -> hf_leaf) and on a second thread (start_thread -> hf_thread ->
 * hf_outer_b -> ...). Built without frame pointers. A stack copy from the leaf cannot reach
 * past hf_huge; -g dwarf,SIZE,TOP's window below the stack top holds the outer frames.
 * argv[1]: seconds of CPU time each thread burns (default 2): CPU time, not wall time, so a
 * loaded machine does not shift the sample shares towards start-up.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double run_s;

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE unsigned long hf_leaf(unsigned long n)
{
	unsigned long acc = n;

	/* the CPU clock is a system call: look at it every 4096 steps */
	for (unsigned long i = 0; (i & 4095) || thread_cpu_s() < run_s; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

NOINLINE unsigned long hf_inner(unsigned long n)
{
	return hf_leaf(n + 1) ^ 3;
}

/* touched, so every page of the frame is present when BPF reads the stack */
NOINLINE unsigned long hf_huge(unsigned long n)
{
	volatile char pad[96 * 1024];

	memset((char *)pad, (int)n, sizeof(pad));
	return hf_inner(n) + pad[n % sizeof(pad)];
}

NOINLINE unsigned long hf_outer_b(unsigned long n)
{
	return hf_huge(n * 3) + 7;
}

NOINLINE unsigned long hf_outer_a(unsigned long n)
{
	return hf_outer_b(n + 2) * 5;
}

NOINLINE void *hf_thread(void *arg)
{
	return (void *)hf_outer_b((unsigned long)arg);
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	void *ret;
	unsigned long r;

	run_s = argc > 1 ? atof(argv[1]) : 2.0;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	if (pthread_create(&t, &attr, hf_thread, (void *)1ul))
		return 1;
	r = hf_outer_a(2);
	pthread_join(t, &ret);
	return (r ^ (unsigned long)ret) == 42;	/* never */
}
