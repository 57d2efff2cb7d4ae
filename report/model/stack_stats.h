/* SPDX-License-Identifier: MIT */
/* Facts about the stacks of a report that the text and info outputs turn into hints. */
#ifndef XPU_REPORT_MODEL_STACK_STATS_H
#define XPU_REPORT_MODEL_STACK_STATS_H

#include <stdint.h>

struct session;

/*
 * Complete-stack rate: how many of the CPU samples (launches) passing the filters have an
 * outermost user frame that is a thread's start or main (_start, __libc_start_main,
 * __libc_start_call_main, start_thread, clone, clone3, main), or a DWARF walk that ended
 * where the CFI says there is no caller (a thread's first frame in a libc without symbols).
 */
int stack_stats__complete_rate(const struct session *ses, uint64_t *cpu_complete, uint64_t *cpu_total,
			       uint64_t *gpu_complete, uint64_t *gpu_total);
/*
 * The same, and *unjudged: samples and launches that no walk said were complete at record
 * time (-g fp and dwarf traces, short cfi walks) and whose outermost frame has no name here:
 * their completeness cannot be told on this machine. Of them *no_mapping (NULL: not asked)
 * have it at an address in no mapping the recording saw ("[unknown]": a process sampled as it
 * exec'd, or whose mappings were never read); the others have it in a file without symbols
 * here (missing on this machine and from the pack, or stripped).
 */
int stack_stats__completeness(const struct session *ses, uint64_t *cpu_complete, uint64_t *cpu_total,
			      uint64_t *gpu_complete, uint64_t *gpu_total, uint64_t *unjudged,
			      uint64_t *no_mapping);

#endif
