// SPDX-License-Identifier: MIT
/*
 * Built with neither CFI nor a frame pointer (tests/e2e/test_cfi.sh): a walk in BPF cannot step
 * out of this function, so -g cfi takes a stack copy of each sample here, which xpu-report
 * unwinds by a return-address scan. It calls nothing, so its return address stays at [sp].
 */
volatile unsigned long sink;

void nocfi_burn(unsigned long n)
{
	unsigned long i, x = sink;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}
