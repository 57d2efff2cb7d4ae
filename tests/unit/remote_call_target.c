// SPDX-License-Identifier: MIT
/*
 * The process tests/unit/test_remote_call.c calls into, and that must not notice:
 *  - "waiter" blocks in futex() with known values in its vector registers (ymm, or zmm with
 *    AVX-512) and a known errno, and checks them each time the wait returns: the kernel keeps
 *    both across a wait, so only a visitor that did not put them back changes them. It is
 *    the thread the visitor borrows (the only one in a futex wait);
 *  - "worker" computes in floating point and checks its invariants every iteration;
 *  - the main thread sleeps 1 ms per iteration, counts, and wakes the waiter every 10.
 * SIGUSR1 is counted, its si_value kept; SIGTERM ends it with a line
 * "ok iterations=N usr1=M fp_errors=0 ...".
 * The counters are exported (built -rdynamic) for the test to read from outside.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ERRNO_MARK 7777		/* no function sets errno to this */

long target_iterations;
long target_waiter_checks;
int target_usr1;
int target_usr1_value;		/* the last SIGUSR1's si_value: its siginfo came through */
int target_fp_errors;		/* vector registers or floating point results that changed */
int target_errno_errors;
int target_futex_word;
static volatile sig_atomic_t stopping;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	target_usr1_value = si->si_value.sival_int;
	__atomic_add_fetch(&target_usr1, 1, __ATOMIC_RELEASE);
}

static void on_term(int sig)
{
	stopping = 1;
}

/*
 * futex(FUTEX_WAIT_PRIVATE) on word while val, with in[] in the vector registers; they are
 * stored to out[] right after the system call returns (or is restarted and returns).
 */
static void wait_holding_xmm(int *word, int val, const uint8_t *in, uint8_t *out)
{
	register long r10 __asm__("r10") = 0;
	long rax = SYS_futex;

	__asm__ volatile(
		"movdqu 0(%[in]), %%xmm0\n movdqu 16(%[in]), %%xmm1\n"
		"movdqu 32(%[in]), %%xmm2\n movdqu 48(%[in]), %%xmm3\n"
		"movdqu 64(%[in]), %%xmm4\n movdqu 80(%[in]), %%xmm5\n"
		"movdqu 96(%[in]), %%xmm6\n movdqu 112(%[in]), %%xmm7\n"
		"movdqu 128(%[in]), %%xmm8\n movdqu 144(%[in]), %%xmm9\n"
		"movdqu 160(%[in]), %%xmm10\n movdqu 176(%[in]), %%xmm11\n"
		"movdqu 192(%[in]), %%xmm12\n movdqu 208(%[in]), %%xmm13\n"
		"movdqu 224(%[in]), %%xmm14\n movdqu 240(%[in]), %%xmm15\n"
		"syscall\n"
		"movdqu %%xmm0, 0(%[out])\n movdqu %%xmm1, 16(%[out])\n"
		"movdqu %%xmm2, 32(%[out])\n movdqu %%xmm3, 48(%[out])\n"
		"movdqu %%xmm4, 64(%[out])\n movdqu %%xmm5, 80(%[out])\n"
		"movdqu %%xmm6, 96(%[out])\n movdqu %%xmm7, 112(%[out])\n"
		"movdqu %%xmm8, 128(%[out])\n movdqu %%xmm9, 144(%[out])\n"
		"movdqu %%xmm10, 160(%[out])\n movdqu %%xmm11, 176(%[out])\n"
		"movdqu %%xmm12, 192(%[out])\n movdqu %%xmm13, 208(%[out])\n"
		"movdqu %%xmm14, 224(%[out])\n movdqu %%xmm15, 240(%[out])\n"
		: "+a"(rax)
		: [in] "r"(in), [out] "r"(out), "D"(word), "S"(FUTEX_WAIT_PRIVATE), "d"(val),
		  "r"(r10)
		: "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
		  "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

/* The same with all 16 ymm registers (32 bytes each). */
__attribute__((target("avx"))) static void wait_holding_ymm(int *word, int val,
							     const uint8_t *in, uint8_t *out)
{
	register long r10 __asm__("r10") = 0;
	long rax = SYS_futex;

	__asm__ volatile(
		"vmovdqu 0(%[in]), %%ymm0\n vmovdqu 32(%[in]), %%ymm1\n"
		"vmovdqu 64(%[in]), %%ymm2\n vmovdqu 96(%[in]), %%ymm3\n"
		"vmovdqu 128(%[in]), %%ymm4\n vmovdqu 160(%[in]), %%ymm5\n"
		"vmovdqu 192(%[in]), %%ymm6\n vmovdqu 224(%[in]), %%ymm7\n"
		"vmovdqu 256(%[in]), %%ymm8\n vmovdqu 288(%[in]), %%ymm9\n"
		"vmovdqu 320(%[in]), %%ymm10\n vmovdqu 352(%[in]), %%ymm11\n"
		"vmovdqu 384(%[in]), %%ymm12\n vmovdqu 416(%[in]), %%ymm13\n"
		"vmovdqu 448(%[in]), %%ymm14\n vmovdqu 480(%[in]), %%ymm15\n"
		"syscall\n"
		"vmovdqu %%ymm0, 0(%[out])\n vmovdqu %%ymm1, 32(%[out])\n"
		"vmovdqu %%ymm2, 64(%[out])\n vmovdqu %%ymm3, 96(%[out])\n"
		"vmovdqu %%ymm4, 128(%[out])\n vmovdqu %%ymm5, 160(%[out])\n"
		"vmovdqu %%ymm6, 192(%[out])\n vmovdqu %%ymm7, 224(%[out])\n"
		"vmovdqu %%ymm8, 256(%[out])\n vmovdqu %%ymm9, 288(%[out])\n"
		"vmovdqu %%ymm10, 320(%[out])\n vmovdqu %%ymm11, 352(%[out])\n"
		"vmovdqu %%ymm12, 384(%[out])\n vmovdqu %%ymm13, 416(%[out])\n"
		"vmovdqu %%ymm14, 448(%[out])\n vmovdqu %%ymm15, 480(%[out])\n"
		"vzeroupper\n"
		: "+a"(rax)
		: [in] "r"(in), [out] "r"(out), "D"(word), "S"(FUTEX_WAIT_PRIVATE), "d"(val),
		  "r"(r10)
		: "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
		  "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

/*
 * With AVX-512: zmm0-31 (64 bytes each), the upper 16 being the registers glibc's EVEX string
 * functions use first, so the ones a visitor's dlopen() surely clobbers.
 */
#define Z(n) "vmovdqu64 " #n "*64(%[in]), %%zmm" #n "\n"
#define ZS(n) "vmovdqu64 %%zmm" #n ", " #n "*64(%[out])\n"
__attribute__((target("avx512f"))) static void wait_holding_zmm(int *word, int val,
								 const uint8_t *in, uint8_t *out)
{
	register long r10 __asm__("r10") = 0;
	long rax = SYS_futex;

	__asm__ volatile(
		Z(0) Z(1) Z(2) Z(3) Z(4) Z(5) Z(6) Z(7) Z(8) Z(9) Z(10) Z(11) Z(12) Z(13) Z(14)
		Z(15) Z(16) Z(17) Z(18) Z(19) Z(20) Z(21) Z(22) Z(23) Z(24) Z(25) Z(26) Z(27)
		Z(28) Z(29) Z(30) Z(31)
		"syscall\n"
		ZS(0) ZS(1) ZS(2) ZS(3) ZS(4) ZS(5) ZS(6) ZS(7) ZS(8) ZS(9) ZS(10) ZS(11) ZS(12)
		ZS(13) ZS(14) ZS(15) ZS(16) ZS(17) ZS(18) ZS(19) ZS(20) ZS(21) ZS(22) ZS(23)
		ZS(24) ZS(25) ZS(26) ZS(27) ZS(28) ZS(29) ZS(30) ZS(31)
		"vzeroupper\n"
		: "+a"(rax)
		: [in] "r"(in), [out] "r"(out), "D"(word), "S"(FUTEX_WAIT_PRIVATE), "d"(val),
		  "r"(r10)
		: "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
		  "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
		  "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24",
		  "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
}

static void *waiter(void *arg)
{
	static uint8_t in[32 * 64], out[32 * 64];
	size_t len, i;
	unsigned int round = 0;
	int val;

	while (!stopping) {
		len = __builtin_cpu_supports("avx512f") ? 32 * 64 :
		      __builtin_cpu_supports("avx")     ? 16 * 32 : 16 * 16;
		for (i = 0; i < len; i++)
			in[i] = (uint8_t)(i * 7 + round + 1);
		memset(out, 0, len);
		val = __atomic_load_n(&target_futex_word, __ATOMIC_ACQUIRE);
		errno = ERRNO_MARK;
		if (len == 32 * 64)
			wait_holding_zmm(&target_futex_word, val, in, out);
		else if (len == 16 * 32)
			wait_holding_ymm(&target_futex_word, val, in, out);
		else
			wait_holding_xmm(&target_futex_word, val, in, out);
		if (errno != ERRNO_MARK)
			__atomic_add_fetch(&target_errno_errors, 1, __ATOMIC_RELAXED);
		if (memcmp(in, out, len))
			__atomic_add_fetch(&target_fp_errors, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&target_waiter_checks, 1, __ATOMIC_RELAXED);
		round++;
	}
	return NULL;
}

/* Floating point that checks itself: exact in doubles, so any disturbance shows. */
static void *worker(void *arg)
{
	double acc = 0, x, y;
	long i = 0;

	while (!stopping) {
		acc += 0.25;
		i++;
		x = (double)(i & 1023);
		y = (x * 0.5 + 1.0) * x + 2.0;
		if (acc != 0.25 * (double)i || y != x * x * 0.5 + x + 2.0)
			__atomic_add_fetch(&target_fp_errors, 1, __ATOMIC_RELAXED);
		if (i == 1 << 20) {
			i = 0;
			acc = 0;
		}
		if (!(i & 4095))
			sched_yield();	/* two cores: leave one to the test */
	}
	return NULL;
}

static void wake_waiter(void)
{
	__atomic_add_fetch(&target_futex_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &target_futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_RESTART | SA_SIGINFO };
	struct timespec ms = { 0, 1000000 };
	pthread_t w, c;

	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_term;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	if (pthread_create(&w, NULL, waiter, NULL) || pthread_create(&c, NULL, worker, NULL))
		return 2;
	pthread_setname_np(w, "waiter");
	pthread_setname_np(c, "worker");
	printf("ready pid=%d\n", getpid());
	fflush(stdout);
	while (!stopping) {
		nanosleep(&ms, NULL);
		if (!(++target_iterations % 10))
			wake_waiter();
	}
	wake_waiter();
	pthread_join(w, NULL);
	pthread_join(c, NULL);
	printf("%s iterations=%ld usr1=%d fp_errors=%d errno_errors=%d waiter_checks=%ld\n",
	       target_fp_errors || target_errno_errors ? "bad" : "ok", target_iterations,
	       target_usr1, target_fp_errors, target_errno_errors, target_waiter_checks);
	return 0;
}
