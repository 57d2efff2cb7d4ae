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

/*
 * Sleeps ms milliseconds by a syscall of its own, so that an off-CPU block's walk stops here
 * too. Static timespec: the function keeps no frame, its return address stays at [sp].
 */
void nocfi_nap(long ms)
{
	static struct {
		long sec, nsec;
	} ts;
	long ret;

	ts.sec = 0;
	ts.nsec = ms * 1000000;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(35 /* nanosleep */), "D"(&ts), "S"(0)
			 : "rcx", "r11", "memory");
	(void)ret;
}
