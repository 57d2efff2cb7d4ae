// SPDX-License-Identifier: MIT
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_lib.h"

char *gpu_lib__find(void)
{
	static const char *const where[] = { "", "/../lib/xpu-perf" };
	char exe[PATH_MAX], real[PATH_MAX], *path, *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t i;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	dir = dirname(exe);
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		if (asprintf(&path, "%s%s/%s", dir, where[i], GPU_LIB_NAME) < 0)
			return NULL;
		/* the target gets a plain absolute path in CUDA_INJECTION64_PATH */
		if (!access(path, R_OK) && realpath(path, real)) {
			free(path);
			return strdup(real);
		}
		free(path);
	}
	return NULL;
}
