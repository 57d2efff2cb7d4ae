/* SPDX-License-Identifier: MIT */
/*
 * Python frames in native stacks. Each sample or launch that carries a PY_STACK gets a new
 * stack in which every native activation of the interpreter's evaluator
 * (_PyEval_EvalFrameDefault) is replaced by the Python frames it was running, as
 * `py-spy --native` shows them. Python frames travel through the rest of the report as tagged
 * addresses that no mapping can hold; the symbolizer names them.
 */
#ifndef XPU_REPORT_SYM_PYFRAMES_H
#define XPU_REPORT_SYM_PYFRAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/derived_stacks.h"
#include "trace/trace.h"

/* "PY" in the top 16 bits: neither a user-space nor a kernel address on x86-64. */
#define PYF_TAG 0x5059000000000000ull
#define PYF_IS(ip) (((ip) >> 48) == 0x5059)
#define PYF_CODE_MAX 0xffffffu
#define PYF_INSTR_MAX 0xffffffu
#define PYF_MAKE(code, instr) \
	(PYF_TAG | (uint64_t)((code) & PYF_CODE_MAX) << 24 | ((instr) & PYF_INSTR_MAX))
#define PYF_CODE(ip) ((uint32_t)((ip) >> 24) & PYF_CODE_MAX)
#define PYF_INSTR(ip) ((uint32_t)(ip) & PYF_INSTR_MAX)

struct pyframes_stats {
	uint64_t samples, launches;	/* events that carried Python frames */
	uint64_t activations;		/* evaluator frames replaced by their Python frames */
	uint64_t outer_groups;		/* frame groups with no evaluator frame left in the native
					 * stack (it ended early): put above its outermost frame */
	uint64_t no_runtime;		/* frames of a process with no PY_RUNTIME: kept at the root */
};

/*
 * Gives the samples and launches that carry Python frames stacks (in d) with those frames
 * spliced into their native ones (d's stacks so far: run after unwind__apply). With lines, each
 * frame keeps the instruction it ran (qualname (file.py:LINE)); otherwise frames of one
 * function share one address, so they aggregate, except in launch and autograd-node stacks,
 * which keep it always (a launch site is a line: model/user_code.h). 0 or -ENOMEM.
 */
int pyframes__apply(struct derived_stacks *d, bool lines, struct pyframes_stats *st);

/* The frame name of a tagged address: `qualname (file.py)` or, with lines, `(file.py:42)`. */
int pyframes__name(const struct trace *t, uint64_t ip, bool lines, char *buf, size_t len);

/* What each kind of interpreter found got: one line per version and status. */
void pyframes__print_runtimes(const struct trace *t, FILE *out, const char *prefix);

#endif
