// SPDX-License-Identifier: MIT
/* Stacks derived from the trace's own (see derived_stacks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/derived_stacks.h"

int derived_stacks__init(struct derived_stacks *d, const struct trace *t)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->t = t;
	/* a trace made in memory (tests) has no bound: none here either */
	d->max_bytes = t->keep_max ? t->keep_max : UINT64_MAX;
	d->sample_stack = calloc(t->nsamples ? t->nsamples : 1, sizeof(*d->sample_stack));
	d->launch_stack = calloc(t->nlaunches ? t->nlaunches : 1, sizeof(*d->launch_stack));
	d->offcpu_stack = calloc(t->noffcpus ? t->noffcpus : 1, sizeof(*d->offcpu_stack));
	d->ag_node_stack = calloc(t->nag_nodes ? t->nag_nodes : 1, sizeof(*d->ag_node_stack));
	if (!d->sample_stack || !d->launch_stack || !d->offcpu_stack || !d->ag_node_stack)
		return -ENOMEM;
	for (i = 0; i < t->nag_nodes; i++)
		d->ag_node_stack[i] = t->ag_nodes[i].stack_id;
	for (i = 0; i < t->noffcpus; i++)
		d->offcpu_stack[i] = t->offcpus[i].stack_id;
	for (i = 0; i < t->nsamples; i++)
		d->sample_stack[i] = t->samples[i].stack_id;
	for (i = 0; i < t->nlaunches; i++)
		d->launch_stack[i] = t->launches[i].stack_id;
	return 0;
}

const struct tr_stack *derived_stacks__get(const struct derived_stacks *d, uint32_t id)
{
	const uint32_t *v = id ? kmap__get(&d->ids, id, 0) : NULL;

	return v ? &d->stacks[*v] : trace__stack(d->t, id);
}

static uint64_t hash_ips(const uint64_t *ips, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ ips[i]) * 1099511628211ull;
	return h;
}

static bool id_taken(const struct derived_stacks *d, uint32_t id)
{
	return !id || kmap__get(&d->ids, id, 0) || trace__stack(d->t, id);
}

int derived_stacks__make(struct derived_stacks *d, struct stack_maker *mk, const uint64_t *k,
			 uint16_t nk, const uint64_t *uips, uint16_t nu, uint32_t *id)
{
	struct tr_stack st = { .nr_kernel = nk, .nr_user = nu };
	size_t bytes = ((size_t)nk + nu) * sizeof(uint64_t);
	const struct tr_stack *old;
	uint64_t cost;
	uint32_t *v;
	bool ins;

	st.ips = malloc(bytes + 1);
	if (!st.ips)
		return -ENOMEM;
	if (nk)
		memcpy(st.ips, k, nk * sizeof(uint64_t));
	if (nu)
		memcpy(st.ips + nk, uips, nu * sizeof(uint64_t));
	/* dedup: {hash, shape} -> id; a hash collision just gets a stack of its own */
	v = kmap__put(&mk->dedup, hash_ips(st.ips, (size_t)nk + nu), (uint64_t)nk << 16 | nu, 0,
		      &ins);
	if (!v)
		goto nomem;
	if (!ins) {
		old = derived_stacks__get(d, *v);
		if (old && !memcmp(old->ips, st.ips, bytes)) {
			free(st.ips);
			*id = *v;
			return 0;
		}
	}
	/* a new stack: its ips, its table entry and the two index slots, against the bound */
	cost = bytes + sizeof(st) + 64;
	if (cost > d->max_bytes - d->bytes) {
		/* a dedup slot just made keeps 0, which names no stack: it matches nothing */
		d->refused++;
		free(st.ips);
		return 0;
	}
	d->bytes += cost;
	while (id_taken(d, mk->next_id))
		mk->next_id++;
	if (!kmap__put(&d->ids, mk->next_id, 0, d->nstacks, NULL) ||
	    VEC_PUSH(d->stacks, d->nstacks, d->stacks_cap, st))
		goto nomem;
	if (ins)
		*v = mk->next_id;
	*id = mk->next_id++;
	return 0;
nomem:
	free(st.ips);
	return -ENOMEM;
}

void derived_stacks__free(struct derived_stacks *d)
{
	size_t i;

	for (i = 0; i < d->nstacks; i++)
		free(d->stacks[i].ips);
	free(d->stacks);
	kmap__free(&d->ids);
	free(d->sample_stack);
	free(d->launch_stack);
	free(d->offcpu_stack);
	free(d->ag_node_stack);
	memset(d, 0, sizeof(*d));
}
