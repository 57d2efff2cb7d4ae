// SPDX-License-Identifier: MIT
/*
 * For the symbol pack test: work in a dlopen'ed plugin (stripped, named by its debug file) and
 * in a child process. Usage: pack_main PLUGIN.so SECONDS
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void child_spin(double seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	void (*work)(double);
	double seconds = argc > 2 ? atof(argv[2]) : 0.5;
	void *h;
	pid_t pid;

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	work = h ? (void (*)(double))dlsym(h, "plugin_work") : NULL;
	if (!work) {
		fprintf(stderr, "pack_main: %s\n", dlerror());
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		child_spin(seconds);
		_exit(0);
	}
	work(seconds);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return 0;
}
