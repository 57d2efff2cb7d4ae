/* SPDX-License-Identifier: MIT */
/* Minimal test harness: CHECK() counts, the final line is "N passed, N failed". */
#ifndef XPU_UNIT_H
#define XPU_UNIT_H

#include <stdio.h>

static int unit_passed, unit_failed;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (cond) {                                                                \
			unit_passed++;                                                     \
		} else {                                                                   \
			unit_failed++;                                                     \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
		}                                                                          \
	} while (0)

static inline int unit_finish(void)
{
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
