/* SPDX-License-Identifier: MIT */
/*
 * Offline DWARF unwinding of -g dwarf stack copies (USER_STACK_COPY records) with libdw.
 * Each CPU_SAMPLE / GPU_LAUNCH that has a copy gets a new stack: the kernel part of its
 * recorded STACK and the user part unwound from the copy, so symbolization, aggregation and
 * correlation downstream see ordinary stacks.
 */
#ifndef XPU_REPORT_UNWIND_H
#define XPU_REPORT_UNWIND_H

#include <stdint.h>

#include "report.h"
#include "symbolize.h"

struct unwind_stats {
	uint64_t copies;		/* USER_STACK_COPY records */
	uint64_t matched;		/* joined to their sample or launch */
	uint64_t used;			/* DWARF result replaced the frame-pointer user stack */
	uint64_t failed;		/* fewer than 2 frames: the frame-pointer stack was kept */
	uint64_t frames;		/* user frames of the stacks used */
	uint64_t copy_bytes;		/* stack bytes in the copies */
};

/* Rewrites stack ids of samples and launches that have copies. 0 or negative errno. */
int unwind__apply(struct trace *t, struct symbolizer *s, struct unwind_stats *st);

/*
 * Complete-stack rate: how many of the CPU samples (launches) passing the filters have an
 * outermost user frame that is a thread's start or main (_start, __libc_start_main,
 * __libc_start_call_main, start_thread, clone, clone3, main).
 */
struct profile;
int unwind__complete_rate(struct profile *p, uint64_t *cpu_complete, uint64_t *cpu_total,
			  uint64_t *gpu_complete, uint64_t *gpu_total);

#endif
