// SPDX-License-Identifier: MIT
/*
 * For test_pack_sudo.sh: a hostile target. It works in xpu_public_spin (CPU time, so samples
 * land there however loaded the machine is), then, if given a path, replaces its own file
 * with a symlink to it, so that a pack made after it exits, by a reader that follows paths,
 * reads that file instead. Usage: swap_self CPU_SECONDS [LINK_TARGET]
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void xpu_public_spin(double cpu_s)
{
	do {
		for (int i = 0; i < 100000; i++)
			sink += i;
	} while ((double)clock() / CLOCKS_PER_SEC < cpu_s);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], tmp[PATH_MAX + 8];
	ssize_t n;

	xpu_public_spin(argc > 1 ? atof(argv[1]) : 0.3);
	if (argc < 3)
		return 0;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	snprintf(tmp, sizeof(tmp), "%s.new", self);
	/* rename over the path: the swap is atomic, as an attacker's would be */
	if (symlink(argv[2], tmp) || rename(tmp, self)) {
		perror("swap_self");
		return 1;
	}
	return 0;
}
