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

/*
 * Why frame n has no name here ("libtorch_cuda.so+0x2615", "[unknown]", ...); -1 for a frame
 * that has one.
 */
static int unknown_why(const char *n)
{
	if (n[0] != '[')
		return strstr(n, "+0x") ? STACK_UNKNOWN_NO_SYMBOLS : -1;
	if (!strcmp(n, "[unknown]"))
		return STACK_UNKNOWN_UNMAPPED;
	if (!strcmp(n, "[anon]"))
		return STACK_UNKNOWN_ANON;
	if (!strncmp(n, "[unknown dso ", 13))
		return STACK_UNKNOWN_NO_FILE;
	return STACK_UNKNOWN_OTHER;
}

const char *stack_stats__unknown_why(enum stack_unknown_why why)
{
	switch (why) {
	case STACK_UNKNOWN_NO_SYMBOLS:
		return "in files without symbols here (missing on this machine and from the pack, "
		       "or stripped)";
	case STACK_UNKNOWN_UNMAPPED:
		return "at addresses in no mapping the recording saw (a process sampled as it "
		       "exec'd, or whose mappings were never read)";
	case STACK_UNKNOWN_ANON:
		return "in anonymous memory (JIT code that published no symbols, or an address the "
		       "walk strayed to)";
	case STACK_UNKNOWN_NO_FILE:
		return "in mappings whose file the trace does not describe (a damaged or cut trace)";
	default:
		return "in code with no file ([vdso] and the like)";
	}
}

/*
 * One stack: complete, or (*why >= 0) not said complete and outermost in a frame with no name
 * here, for that reason; -1 otherwise.
 */
static int stack_complete(const struct session *ses, uint32_t pid, uint64_t ts, uint32_t stack_id,
			  uint32_t flags, bool *complete, int *why)
{
	const struct tr_stack *st = derived_stacks__get(&ses->stacks, stack_id);
	const uint32_t *f;
	const char *outer;
	uint32_t n;
	int err;

	*complete = false;
	*why = -1;
	if (!st || !st->nr_user)
		return 0;
	err = session__stack(ses, pid, ts, stack_id, false, &f, &n);
	if (err)
		return err;
	if (!n)
		return 0;
	/* root first: f[0] is the outermost user frame */
	outer = strpool__str(&ses->pool, f[0]);
	/*
	 * -g cfi: the BPF walk said so at record time, whatever the report derived from its
	 * stack since (Python frames spliced in, a backward node's rewrite): the same figure on
	 * any machine. A DWARF walk of a copy (a short walk's) says so itself.
	 */
	*complete = is_root_frame(outer) || unwind__outermost(&ses->uw, stack_id) ||
		    backward__outermost(&ses->bw, stack_id) || (flags & XPU_EVENT_USER_OUTERMOST);
	/* not said at record time, and the outermost frame has no name here: cannot tell */
	if (!*complete)
		*why = unknown_why(outer);
	return 0;
}

int stack_stats__completeness(const struct session *ses, struct stack_completeness *c)
{
	const struct trace *t = ses->t;
	bool done;
	size_t i;
	int err, why;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];

		if (!filter__at(&ses->filter, s->pid, s->tid, s->ts_ns))
			continue;
		err = stack_complete(ses, s->pid, s->ts_ns, session__sample_stack(ses, i), s->flags,
				     &done, &why);
		if (err)
			return err;
		c->cpu_total++;
		c->cpu_complete += done;
		if (why >= 0)
			c->unknown[why]++;
	}
	for (i = 0; i < t->nlaunches; i++) {
		const struct xpu_rec_gpu_launch *l = &t->launches[i];

		if (!filter__at(&ses->filter, l->pid, l->tid, l->ts_ns))
			continue;
		err = stack_complete(ses, l->pid, l->ts_ns, session__launch_stack(ses, i), l->flags,
				     &done, &why);
		if (err)
			return err;
		c->gpu_total++;
		c->gpu_complete += done;
		if (why >= 0)
			c->unknown[why]++;
	}
	return 0;
}
