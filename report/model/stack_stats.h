/* SPDX-License-Identifier: MIT */
/* Facts about the stacks of a report that the text and info outputs turn into hints. */
#ifndef XPU_REPORT_MODEL_STACK_STATS_H
#define XPU_REPORT_MODEL_STACK_STATS_H

#include <stdint.h>

struct session;

/*
 * Why the samples and launches that no walk said were complete at record time (-g fp and
 * dwarf traces, short cfi walks) end in a frame with no name here, so that their completeness
 * cannot be told on this machine, by what that outermost frame is.
 */
enum stack_unknown_why {
	STACK_UNKNOWN_NO_SYMBOLS,	/* "libx.so+0x12": a file without symbols here (missing on
					 * this machine and from the pack, or stripped) */
	STACK_UNKNOWN_UNMAPPED,		/* "[unknown]": no mapping the recording saw (a process
					 * sampled as it exec'd, or whose mappings were never read) */
	STACK_UNKNOWN_ANON,		/* "[anon]": anonymous memory (JIT code that published no
					 * symbols, or an address the walk strayed to) */
	STACK_UNKNOWN_NO_FILE,		/* "[unknown dso N]": a mapping whose file the trace does not
					 * describe (a damaged or cut trace) */
	STACK_UNKNOWN_OTHER,		/* "[vdso]" and the other bracketed names */
	STACK_UNKNOWN_NR,
};

struct stack_completeness {
	uint64_t cpu_complete, cpu_total, gpu_complete, gpu_total;
	uint64_t unknown[STACK_UNKNOWN_NR];	/* by enum stack_unknown_why */
};

/*
 * Complete-stack rate: how many of the CPU samples (launches) passing the filters have an
 * outermost user frame that is a thread's start or main (_start, __libc_start_main,
 * __libc_start_call_main, start_thread, clone, clone3, main), or a DWARF walk that ended
 * where the CFI says there is no caller (a thread's first frame in a libc without symbols);
 * and the others that cannot be told, by reason.
 */
int stack_stats__completeness(const struct session *ses, struct stack_completeness *c);

/* The line that says why, "their outermost frames are ...", for one reason. */
const char *stack_stats__unknown_why(enum stack_unknown_why why);

#endif
