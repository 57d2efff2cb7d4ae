/* SPDX-License-Identifier: MIT */
/* A CUDA API's name as the timelines show it, shared by the chrome and perfetto outputs. */
#ifndef XPU_REPORT_API_NAME_H
#define XPU_REPORT_API_NAME_H

#include <string.h>

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's version suffix is noise here. */
static inline size_t api_name_len(const char *n)
{
	size_t len = strlen(n), i = len;

	while (i > 0 && n[i - 1] >= '0' && n[i - 1] <= '9')
		i--;
	if (i < len && i >= 2 && n[i - 1] == 'v' && n[i - 2] == '_')
		return i - 2;
	return len;
}

#endif
