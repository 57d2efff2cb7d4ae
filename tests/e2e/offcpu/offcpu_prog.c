// SPDX-License-Identifier: MIT
/*
 * Blocking patterns for tests/e2e/test_off_cpu.sh:
 *   offcpu_prog alternate N   N rounds of 50 ms of CPU work (burn_cpu) then a 50 ms sleep
 *                             (sleep_phase); prints the share of wall time spent sleeping,
 *                             as the program measured it
 *   offcpu_prog wait          a thread blocked 300 ms on a held mutex (wait_for_lock) and one
 *                             blocked on an empty pipe (read_from_pipe)
 * The CPU work is counted in thread CPU time, so a loaded machine stretches it in wall time
 * rather than shortening it in CPU time. Each waiting function blocks through a helper of its
 * own: with -g fp, libc's blocking calls keep no frame pointer, so the walk skips the frame
 * that called them (the helper) and goes on from the waiting function.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pipe_fd[2];
static volatile unsigned long sink;

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn_cpu(double s)
{
	double end = now_s(CLOCK_THREAD_CPUTIME_ID) + s;
	unsigned long i;

	while (now_s(CLOCK_THREAD_CPUTIME_ID) < end)
		for (i = 0; i < 10000; i++)
			sink += i;
}

/* the empty asm after each call: no tail call, so every function stays on the stack */
__attribute__((noinline)) void nap(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sleep_phase(void)
{
	nap();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void take_lock(void)
{
	pthread_mutex_lock(&lock);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void wait_for_lock(void)
{
	take_lock();
	pthread_mutex_unlock(&lock);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void read_byte(void)
{
	char c;

	if (read(pipe_fd[0], &c, 1) != 1)
		perror("read");
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void read_from_pipe(void)
{
	read_byte();
	__asm__ volatile("" ::: "memory");
}

static void *locker(void *arg)
{
	(void)arg;
	wait_for_lock();
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	read_from_pipe();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "alternate")) {
		int i, n = atoi(argv[2]);
		double t0 = now_s(CLOCK_MONOTONIC), slept = 0, t;

		for (i = 0; i < n; i++) {
			burn_cpu(0.05);
			t = now_s(CLOCK_MONOTONIC);
			sleep_phase();
			slept += now_s(CLOCK_MONOTONIC) - t;
		}
		printf("sleep share %.1f\n", 100 * slept / (now_s(CLOCK_MONOTONIC) - t0));
		printf("slept_us %.0f\n", slept * 1e6);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "wait")) {
		struct timespec ts = { 0, 300 * 1000 * 1000 };
		pthread_t a, b;

		if (pipe(pipe_fd))
			return 1;
		pthread_mutex_lock(&lock);
		pthread_create(&a, NULL, locker, NULL);
		pthread_create(&b, NULL, reader, NULL);
		nanosleep(&ts, NULL);
		pthread_mutex_unlock(&lock);
		if (write(pipe_fd[1], "x", 1) != 1)
			return 1;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		return 0;
	}
	fprintf(stderr, "usage: offcpu_prog alternate N | wait\n");
	return 2;
}
