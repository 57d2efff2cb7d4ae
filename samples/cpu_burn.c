// SPDX-License-Identifier: MIT
/*
 * A CPU workload with a known profile, for testing xpu-record end to end.
 *
 *   cpu_burn [SECONDS]     (default 2)
 *
 * Each function burns a fixed amount of its thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not
 * of wall time or loop iterations, so the split below holds however the scheduler shares the
 * CPUs and whatever each loop costs per iteration:
 *   main thread ("cpu_burn"):   func_a 50%, func_b 25%, plugin_work 25% (in libcpu_plugin.so,
 *                               loaded with dlopen after start)
 *   thread "burn-worker":       100% in func_c, called under 40 nested recurse() frames
 *   child ("cpu_burn --child"): fork + exec of this binary, 100% in func_child
 * All three run for SECONDS of wall time.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNIT_NS 5000000ull	/* CPU time per unit of work: 5 ms */
#define CHUNK 20000ull		/* spin() iterations between CPU-time checks (~20-50 us) */
#define RECURSION_DEPTH 40

static double seconds = 2.0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Burns ns of this thread's CPU time. */
__attribute__((noinline)) static uint64_t spin(uint64_t ns)
{
	uint64_t start = thread_cpu_ns(), i;
	volatile uint64_t x = 1;

	do {
		for (i = 0; i < CHUNK; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (thread_cpu_ns() - start < ns);
	return x;
}

__attribute__((noinline)) uint64_t func_a(void)
{
	return spin(2 * UNIT_NS);
}

__attribute__((noinline)) uint64_t func_b(void)
{
	return spin(UNIT_NS);
}

__attribute__((noinline)) uint64_t func_c(void)
{
	return spin(UNIT_NS);
}

__attribute__((noinline)) uint64_t func_child(void)
{
	return spin(UNIT_NS);
}

__attribute__((noinline)) uint64_t recurse(int depth)
{
	uint64_t r;

	if (depth == 0)
		return func_c();
	r = recurse(depth - 1);
	return r + 1;	/* not a tail call: every level keeps its frame */
}

static void *worker(void *arg)
{
	double end = now() + seconds;
	uint64_t sum = 0;

	pthread_setname_np(pthread_self(), "burn-worker");
	while (now() < end)
		sum += recurse(RECURSION_DEPTH);
	return (void *)(uintptr_t)sum;
}

static int run_child(void)
{
	double end = now() + seconds;
	uint64_t sum = 0;

	while (now() < end)
		sum += func_child();
	return sum == 42;	/* keep the work; exit status 0 in practice */
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], path[PATH_MAX + 32], secs[32];
	uint64_t (*plugin_work)(uint64_t);
	uint64_t sum = 0;
	pthread_t th;
	void *lib;
	double end;
	ssize_t n;
	pid_t child;
	int status;

	if (argc > 2 && !strcmp(argv[1], "--child")) {
		seconds = atof(argv[2]);
		return run_child();
	}
	if (argc > 1)
		seconds = atof(argv[1]);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 1;
	exe[n] = '\0';

	snprintf(secs, sizeof(secs), "%g", seconds);
	child = fork();
	if (child == 0) {
		execl(exe, exe, "--child", secs, (char *)NULL);
		_exit(127);
	}
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;

	/* Loaded after start so the mapping is new to the recorder. */
	usleep(100 * 1000);
	snprintf(path, sizeof(path), "%s/libcpu_plugin.so", dirname(exe));
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "cpu_burn: %s\n", dlerror());
		return 1;
	}
	plugin_work = (uint64_t (*)(uint64_t))dlsym(lib, "plugin_work");
	if (!plugin_work)
		return 1;

	end = now() + seconds;
	while (now() < end) {
		sum += func_a();
		sum += func_b();
		sum += plugin_work(UNIT_NS);
	}
	pthread_join(th, NULL);
	if (child > 0)
		waitpid(child, &status, 0);
	printf("cpu_burn: done (%llu)\n", (unsigned long long)(sum & 0xff));
	return 0;
}
