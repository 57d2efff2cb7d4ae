// SPDX-License-Identifier: MIT
/*
 * The shared library's half of tests/gpu/mock/fake_cuda_app.c's deep launches
 * (FAKE_CUDA_DEPTH, FAKE_CUDA_DEEPLIB): three kinds of frame (plain, alloca, realigned) that
 * go on to the next level through the program's table, so that a launch's stack crosses
 * between the program and this file (both built without frame pointers) again and again.
 * struct deep_ops and DEEP_NEXT are fake_cuda_app.c's.
 */
#include <stdint.h>

struct deep_ops {
	void (*fn[6])(int n, uint32_t corr, const struct deep_ops *ops);
	void (*leaf)(uint32_t corr);
};
#define DEEP_NEXT(n, corr, ops)                                                    \
	do {                                                                       \
		if ((n) == 0)                                                      \
			(ops)->leaf(corr);                                         \
		else                                                               \
			(ops)->fn[(n) % 6]((n), (corr), (ops));                    \
	} while (0)

__attribute__((noipa)) void lib_deep_plain(int n, uint32_t corr, const struct deep_ops *ops)
{
	volatile char pad[24];

	pad[0] = (char)n;
	DEEP_NEXT(n - 1, corr, ops);
	pad[1] = pad[0];
}

__attribute__((noipa)) void lib_deep_alloca(int n, uint32_t corr, const struct deep_ops *ops)
{
	char *p = __builtin_alloca(32 + (n & 1) * 48);

	p[0] = (char)n;
	__asm__ volatile("" : : "r"(p) : "memory");
	DEEP_NEXT(n - 1, corr, ops);
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* realigned with an alloca: gcc's DRAP, CFA = *(rbp - 8) */
__attribute__((noipa)) void lib_deep_aligned(int n, uint32_t corr, const struct deep_ops *ops)
{
	char buf[96] __attribute__((aligned(32)));
	char *p = __builtin_alloca(16 + (n & 2) * 8);

	buf[0] = (char)n;
	p[0] = (char)n;
	__asm__ volatile("" : : "r"(buf), "r"(p) : "memory");
	DEEP_NEXT(n - 1, corr, ops);
	__asm__ volatile("" : : "r"(buf), "r"(p) : "memory");
}
