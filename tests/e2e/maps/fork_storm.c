// SPDX-License-Identifier: MIT
/*
 * For test_fork_storm.sh: K children forked one after the other, none exec'ing, each working
 * a few ms of CPU time in fork_storm_child (its frames are the parent's code) and exiting at
 * once, before a recorder reading their mappings from /proc could be sure to. Usage:
 * fork_storm K
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void fork_storm_child(void)
{
	clock_t end = clock() + CLOCKS_PER_SEC / 250;

	while (clock() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 200;

	for (int i = 0; i < k; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			fork_storm_child();
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	return 0;
}
