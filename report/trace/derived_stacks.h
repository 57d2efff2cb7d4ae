/* SPDX-License-Identifier: MIT */
/*
 * The stacks the report derives from the trace's own (DWARF walks of -g dwarf stack copies,
 * Python frames spliced in) and the stack each sample and launch ends up with. They are kept
 * here, beside the loaded trace, which stays as it was read; the session owns them.
 */
#ifndef XPU_REPORT_TRACE_DERIVED_STACKS_H
#define XPU_REPORT_TRACE_DERIVED_STACKS_H

#include "trace/trace.h"

struct derived_stacks {
	const struct trace *t;
	struct tr_stack *stacks;	size_t nstacks, stacks_cap;
	struct kmap ids;		/* derived id -> stacks index */
	uint32_t *sample_stack;		/* per t->samples[i]: the stack id every output uses */
	uint32_t *launch_stack;		/* per t->launches[i] */
	uint32_t *offcpu_stack;		/* per t->offcpus[i] */
	uint32_t *ag_node_stack;	/* per t->ag_nodes[i]: the forward stack of a node */
	/*
	 * The bytes the derived stacks hold, at most the records' bound again (t->keep_max):
	 * backward attribution makes a stack per (evaluation, event), and a 719 KB trace made
	 * 2.1 GB of them. Past it an event keeps the stack it had; refused counts them.
	 */
	uint64_t bytes, max_bytes, refused;
};

/* One producer of derived stacks: equal stacks it makes share an id, counted from next_id. */
struct stack_maker {
	struct kmap dedup;
	uint32_t next_id;
};

/* Starts with the trace's own stack ids for every sample and launch. 0 or -ENOMEM. */
int derived_stacks__init(struct derived_stacks *d, const struct trace *t);
/* A derived stack, else the trace's; NULL for 0 or an id neither defines. */
const struct tr_stack *derived_stacks__get(const struct derived_stacks *d, uint32_t id);
/*
 * Kernel frames k[0..nk) then user frames uips[0..nu) as a stack; sets its id, one the trace
 * does not use (shared with an equal stack mk made before). A new stack past d->max_bytes is
 * not made: *id is left as it was (the caller's stack stays), counted in d->refused. 0 or
 * -ENOMEM.
 */
int derived_stacks__make(struct derived_stacks *d, struct stack_maker *mk, const uint64_t *k,
			 uint16_t nk, const uint64_t *uips, uint16_t nu, uint32_t *id);
void derived_stacks__free(struct derived_stacks *d);

#endif
