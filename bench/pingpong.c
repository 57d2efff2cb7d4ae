// SPDX-License-Identifier: MIT
/*
 * Context-switch-heavy fixed work for bench/offcpu_overhead.py: two threads pass a byte back
 * and forth through two pipes, so each round trip blocks each thread once (two switches).
 * Prints its own elapsed time.
 *
 *   pingpong [ROUNDS [LONG_EVERY]]   (default 100000, 0)
 *
 * LONG_EVERY > 0: every LONG_EVERY-th round the responder sleeps 2 ms first, so that the
 * initiator's block is over xpu-record's default --off-cpu-min (1 ms) and gets recorded.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds, long_every;

__attribute__((noinline)) static void respond(void)
{
	struct timespec nap = { 0, 2000000 };
	long i;
	char c;

	for (i = 0; i < rounds; i++) {
		if (read(ping[0], &c, 1) != 1)
			exit(1);
		if (long_every && i % long_every == 0)
			nanosleep(&nap, NULL);
		if (write(pong[1], &c, 1) != 1)
			exit(1);
	}
}

static void *responder(void *arg)
{
	(void)arg;
	respond();
	return NULL;
}

__attribute__((noinline)) static void initiate(void)
{
	long i;
	char c = 'x';

	for (i = 0; i < rounds; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			exit(1);
	}
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	pthread_t t;

	rounds = argc > 1 ? atol(argv[1]) : 100000;
	long_every = argc > 2 ? atol(argv[2]) : 0;
	if (rounds <= 0 || long_every < 0 || pipe(ping) || pipe(pong))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (pthread_create(&t, NULL, responder, NULL))
		return 1;
	initiate();
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("elapsed_ns %lld\n",
	       (long long)(b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec));
	return 0;
}
