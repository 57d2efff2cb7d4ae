// SPDX-License-Identifier: MIT
/*
 * Load for the recorder, bounded: NPROC short-lived processes (each with two threads, and
 * one in four exec'ing /bin/true), at most 16 alive at a time, while the main process keeps
 * starting short threads of its own. Prints "forkstorm: done N" at the end.
 *   forkstorm [NPROC]   (default 2000)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spin(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

static void *worker(void *arg)
{
	spin((unsigned long)(uintptr_t)arg);
	return NULL;
}

static void child(int i)
{
	pthread_t t[2];
	int k;

	for (k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, worker, (void *)(uintptr_t)200000);
	spin(100000);
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	if (i % 4 == 0)
		execl("/bin/true", "true", (char *)NULL);
	_exit(0);
}

int main(int argc, char **argv)
{
	int nproc = argc > 1 ? atoi(argv[1]) : 2000, started = 0, alive = 0, done = 0;
	pthread_t t;

	while (done < nproc) {
		while (started < nproc && alive < 16) {
			pid_t p = fork();

			if (p == 0)
				child(started);
			if (p < 0)
				break;
			started++;
			alive++;
		}
		/* the parent's own short threads, between reaps */
		if (!pthread_create(&t, NULL, worker, (void *)(uintptr_t)50000))
			pthread_join(t, NULL);
		if (wait(NULL) > 0) {
			alive--;
			done++;
		} else if (started >= nproc) {
			break;
		}
	}
	printf("forkstorm: done %d\n", done);
	return 0;
}
