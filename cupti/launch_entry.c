// SPDX-License-Identifier: MIT
/*
 * The launch entry of the in-process walk (ARCHITECTURE.md section 4): api_cb calls
 * xpu_cupti_launch() instead of the probed marker once the recorder's tables are mapped. It
 * takes the launching thread's stack in process (cupti/inproc_walk.h) and queues the events
 * for the flusher; where that cannot be done exactly it tail-jumps to the marker, which then
 * sees the very stack it sees when api_cb calls it, so that the BPF path takes the launch as
 * before and nothing is lost.
 */
#include <stddef.h>
#include <stdint.h>

#include "event_ring.h"
#include "inproc_walk.h"
#include "xpu_cupti.h"

/* the bytes a launch may queue: its PYSTACK and its launch event, both at full size */
#define LAUNCH_MAX_BYTES (sizeof(struct xpu_ev_pystack) + sizeof(struct xpu_ev_gpu_launch))
_Static_assert(((sizeof(struct xpu_ev_pystack) + 63) & ~63ul) + sizeof(struct xpu_ev_gpu_launch) <=
		       EVENT_RING_SCRATCH_BYTES,
	       "scratch holds both events");

/*
 * Called by the entry stub with its own entry's stack pointer (the return address into api_cb
 * at [sp]) and api_cb's frame pointer. 1: the launch is queued; 0: take the marker.
 */
int xc_launch_inproc(uint32_t corr, uint32_t cbid, uint32_t domain, uint64_t sp, uint64_t bp);

int xc_launch_inproc(uint32_t corr, uint32_t cbid, uint32_t domain, uint64_t sp, uint64_t bp)
{
	struct event_ring *r = event_ring__mine();
	struct xpu_ev_pystack *py;
	struct xpu_ev_gpu_launch *ev;
	uint32_t pyb = 0, evb = 0, len[2];
	const void *part[2];
	unsigned int n = 0;
	uint64_t t0 = 0;

	if (!r) {
		/* no ring, no scratch: no walk either (so none whose counts this takes back) */
		inproc_walk__count(XPU_INPROC_FB_NO_THREAD, 1);
		return 0;
	}
	/*
	 * The thread's scratch: 4 KiB would neither fit the static TLS left to us nor help the
	 * stack the walk is about to read.
	 */
	/* one launch in XPU_INPROC_TIME_EVERY pays two clock reads to say what the walk costs */
	if (++r->launches % XPU_INPROC_TIME_EVERY == 0)
		t0 = xc_mono_ns();
	py = r->scratch;
	ev = (void *)((uint8_t *)r->scratch + ((sizeof(*py) + 63) & ~(size_t)63));
	if (inproc_walk__launch(corr, cbid, domain, sp, bp, py, &pyb, ev, &evb))
		return 0;
	/*
	 * Checks after the walk, as the walk's counters expect: a fallback counted right after
	 * a walk takes that walk's counts back (BPF counts the launch's walk instead).
	 */
	if (evb < sizeof(ev->hdr) || evb > sizeof(*ev) || pyb > sizeof(*py)) {
		xc_err_once("in-process walk: event sizes %u/%u out of range: launch stacks from BPF",
			    pyb, evb);
		inproc_walk__count(XPU_INPROC_FB_INCOMPLETE, 1);
		return 0;
	}
	if (py->nr && pyb >= sizeof(py->hdr)) {
		part[n] = py;
		len[n++] = pyb;
	}
	part[n] = ev;
	len[n++] = evb;
	if (event_ring__push(r, n, part, len)) {
		inproc_walk__count(XPU_INPROC_FB_RING_FULL, 1);
		return 0;
	}
	if (t0) {
		inproc_walk__count(XPU_INPROC_TIMED, 1);
		inproc_walk__count(XPU_INPROC_TIMED_NS, xc_mono_ns() - t0);
	}
	/* --launch-walk=check: BPF walks this launch too, from the very same stack */
	return !xc_inproc_check;
}

bool xc_inproc_check;

/*
 * void xpu_cupti_launch(uint32_t corr_id, uint32_t cbid, uint32_t domain). The arguments wait
 * in callee-saved registers (three pushes also leave rsp 16-byte aligned at the call); after
 * the pops, rsp is the entry's again, so the jmp enters the marker with api_cb's return address
 * at [rsp] and the arguments in rdi, rsi and rdx, exactly as a direct call would. The CFI lets
 * an unwinder (BPF's, the in-process one, a debugger's) step out of it at every instruction.
 * xc_api_enter is the marker's hidden alias (callbacks.c): a direct jump, not through the PLT.
 */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl xpu_cupti_launch\n"
	".hidden xpu_cupti_launch\n"
	".type xpu_cupti_launch, @function\n"
	".p2align 4\n"
	"xpu_cupti_launch:\n"
	"\t.cfi_startproc\n"
	"\tpushq %rbx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_offset %rbx, -16\n"
	"\tpushq %r12\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_offset %r12, -24\n"
	"\tpushq %r13\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_offset %r13, -32\n"
	"\tmovl %edi, %ebx\n"
	"\tmovl %esi, %r12d\n"
	"\tmovl %edx, %r13d\n"
	"\tleaq 24(%rsp), %rcx\n"
	"\tmovq %rbp, %r8\n"
	"\tcall xc_launch_inproc\n"
	"\tmovl %ebx, %edi\n"
	"\tmovl %r12d, %esi\n"
	"\tmovl %r13d, %edx\n"
	"\tpopq %r13\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore %r13\n"
	"\tpopq %r12\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore %r12\n"
	"\tpopq %rbx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore %rbx\n"
	"\ttestl %eax, %eax\n"
	"\tjnz 1f\n"
	"\tjmp xc_api_enter\n"
	"1:\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size xpu_cupti_launch, .-xpu_cupti_launch\n");
#else
void xpu_cupti_launch(uint32_t corr_id, uint32_t cbid, uint32_t domain)
{
	/* no entry stub for this architecture: the BPF path takes every launch */
	xpu_cupti_api_enter(corr_id, cbid, domain);
}
#endif
