// SPDX-License-Identifier: MIT
/*
 * Built without frame pointers (-O2 -fomit-frame-pointer): only .eh_frame describes these
 * frames. Each level is noinline and calls the next in a non-tail position, so every level
 * keeps a real frame and a return address on the stack.
 */
#define NOINLINE __attribute__((noinline))

extern volatile unsigned long dw_sink;
volatile unsigned long dw_sink;

NOINLINE unsigned long dw_leaf(unsigned long n)
{
	unsigned long x = n, i;

	for (i = 0; i < 200000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	dw_sink += x;
	return x;
}

NOINLINE unsigned long dw_lib_c(unsigned long n)
{
	return dw_leaf(n + 1) ^ n;
}

NOINLINE unsigned long dw_lib_b(unsigned long n)
{
	return dw_lib_c(n * 3) + 7;
}

NOINLINE unsigned long dw_lib_a(unsigned long n)
{
	return dw_lib_b(n ^ 0x55) - 1;
}
