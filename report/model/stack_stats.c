// SPDX-License-Identifier: MIT
/* How complete the stacks of a report are (see stack_stats.h). */
#include <string.h>

#include "model/session.h"
#include "model/stack_stats.h"

static bool is_root_frame(const char *n)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
		"clone", "clone3", "main",
	};
	size_t i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		if (!strcmp(n, roots[i]))
			return true;
	}
	return false;
}

/* "libtorch_cuda.so+0x2615", "[unknown]": a frame whose file gave no name here */
static bool unnamed(const char *n)
{
	return n[0] == '[' || strstr(n, "+0x") != NULL;
}

static int stack_complete(const struct session *ses, uint32_t pid, uint64_t ts, uint32_t stack_id,
			  uint32_t flags, bool *complete, bool *unjudged, bool *no_mapping)
{
	const struct tr_stack *st = derived_stacks__get(&ses->stacks, stack_id);
	const uint32_t *f;
	uint32_t n;
	int err;

	*complete = false;
	*unjudged = false;
	*no_mapping = false;
	if (!st || !st->nr_user)
		return 0;
	err = session__stack(ses, pid, ts, stack_id, false, &f, &n);
	if (err)
		return err;
	/* root first: f[0] is the outermost user frame */
	/*
	 * -g cfi: the BPF walk said so at record time, whatever the report derived from its
	 * stack since (Python frames spliced in, a backward node's rewrite): the same figure on
	 * any machine. A DWARF walk of a copy (a short walk's) says so itself.
	 */
	*complete = n && (is_root_frame(strpool__str(&ses->pool, f[0])) ||
			  unwind__outermost(&ses->uw, stack_id) ||
			  backward__outermost(&ses->bw, stack_id) ||
			  (flags & XPU_EVENT_USER_OUTERMOST));
	/* not said at record time, and the outermost frame has no name here: cannot tell */
	*unjudged = n && !*complete && unnamed(strpool__str(&ses->pool, f[0]));
	*no_mapping = *unjudged && !strcmp(strpool__str(&ses->pool, f[0]), "[unknown]");
	return 0;
}

int stack_stats__complete_rate(const struct session *ses, uint64_t *cpu_complete, uint64_t *cpu_total,
			       uint64_t *gpu_complete, uint64_t *gpu_total)
{
	uint64_t unjudged;

	return stack_stats__completeness(ses, cpu_complete, cpu_total, gpu_complete, gpu_total,
					 &unjudged, NULL);
}

int stack_stats__completeness(const struct session *ses, uint64_t *cpu_complete, uint64_t *cpu_total,
			      uint64_t *gpu_complete, uint64_t *gpu_total, uint64_t *unjudged,
			      uint64_t *no_mapping)
{
	const struct trace *t = ses->t;
	uint64_t nm = 0;
	bool c, u, m;
	size_t i;
	int err;

	*cpu_complete = *cpu_total = *gpu_complete = *gpu_total = *unjudged = 0;
	for (i = 0; i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];

		if (!filter__at(&ses->filter, s->pid, s->tid, s->ts_ns))
			continue;
		err = stack_complete(ses, s->pid, s->ts_ns, session__sample_stack(ses, i), s->flags, &c,
				     &u, &m);
		if (err)
			return err;
		*cpu_total += 1;
		*cpu_complete += c;
		*unjudged += u;
		nm += m;
	}
	for (i = 0; i < t->nlaunches; i++) {
		const struct xpu_rec_gpu_launch *l = &t->launches[i];

		if (!filter__at(&ses->filter, l->pid, l->tid, l->ts_ns))
			continue;
		err = stack_complete(ses, l->pid, l->ts_ns, session__launch_stack(ses, i), l->flags, &c,
				     &u, &m);
		if (err)
			return err;
		*gpu_total += 1;
		*gpu_complete += c;
		*unjudged += u;
		nm += m;
	}
	if (no_mapping)
		*no_mapping = nm;
	return 0;
}
