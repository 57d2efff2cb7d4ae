/* SPDX-License-Identifier: MIT */
/*
 * Backward attribution: every CPU sample, GPU launch and off-CPU block taken while PyTorch's
 * autograd engine evaluated a node (AUTOGRAD_EVAL: after its start, while the thread's stack
 * holds the evaluation's return address) gets a stack made of
 *   the forward stack that created the node (AUTOGRAD_NODE of the same address and class,
 *   the latest before the evaluation), a frame "[backward] CLASS", then the event's own frames
 *   from Engine::evaluate_function inwards.
 * A node with no such forward record keeps the engine's own outer frames, with the
 * "[backward] CLASS" frame still marking where the node begins: it is counted, never guessed.
 * The frame travels as a tagged address, as Python frames do (pyframes.h).
 */
#ifndef XPU_REPORT_SYM_BACKWARD_H
#define XPU_REPORT_SYM_BACKWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/derived_stacks.h"
#include "trace/trace.h"

/* "BW" in the top 16 bits; the low 32 bits are the class's string id (0: unnamed). */
#define BWF_TAG 0x4257000000000000ull
#define BWF_IS(ip) (((ip) >> 48) == 0x4257)
#define BWF_MAKE(class_str) (BWF_TAG | (uint32_t)(class_str))
#define BWF_CLASS(ip) ((uint32_t)(ip))

/* Why an evaluation got no forward stack */
enum bw_unmatched {
	BW_NO_FORWARD = 0,	/* no AUTOGRAD_NODE of that address before it (AccumulateGrad,
				 * GraphRoot, a node made before recording began) */
	BW_OTHER_CLASS = 1,	/* the address's last node was of another class: reused memory */
	BW_UNMATCHED_KINDS,
};

struct backward_stats {
	uint64_t evals, evals_matched;
	uint64_t unmatched[BW_UNMATCHED_KINDS];
	/* events inside an evaluation: all, and those put under a forward stack */
	uint64_t samples, samples_attributed;
	uint64_t launches, launches_attributed;
	uint64_t offcpus, offcpus_attributed;
	uint64_t search_cut;		/* events whose search for an evaluation was cut short */
	bool recorded;			/* the trace was recorded with the autograd probes */
	/* per t->launches[i]: 1 + the AUTOGRAD_NODE index whose forward stack it got, else 0 */
	uint32_t *launch_forward;
	uint8_t *launch_backward;	/* per t->launches[i]: 1 when made inside an evaluation */
	/*
	 * stacks made here whose outer part (the forward stack, or the engine's) came from a walk
	 * that reached the outermost frame (-g cfi's flag on its record)
	 */
	struct kmap outermost;
};

/*
 * Rewrites d's sample, launch and off-CPU stacks as above (run after pyframes__apply, so both
 * stacks hold their Python frames). 0 or -ENOMEM.
 */
int backward__apply(struct derived_stacks *d, struct backward_stats *st);
/* Whether stack_id is one made here whose outer part reached the outermost frame. */
bool backward__outermost(const struct backward_stats *st, uint32_t stack_id);
/* The frame name of a tagged address: "[backward] MmBackward0". */
int backward__name(const struct trace *t, uint64_t ip, char *buf, size_t len);
void backward__free(struct backward_stats *st);

#endif
