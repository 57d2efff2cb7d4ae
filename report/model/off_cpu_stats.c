// SPDX-License-Identifier: MIT
/* Blocked-time totals of a --off-cpu trace (see off_cpu_stats.h). */
#include <inttypes.h>
#include <string.h>

#include "model/off_cpu_stats.h"
#include "model/profile.h"

void off_cpu_stats__sum(const struct session *s, struct off_cpu_stats *st)
{
	const struct trace *t = s->t;
	size_t i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];
		uint32_t k = o->state < OFF_CPU_STATES && o->state ? o->state : XPU_OFF_OTHER;

		if (!filter__span(&s->filter, o->pid, o->tid, o->ts_ns, o->ts_ns + o->dur_ns))
			continue;
		st->blocks++;
		st->ns += o->dur_ns;
		st->no_stack += !!(o->flags & XPU_OFF_NO_STACK);
		st->state_blocks[k]++;
		st->state_ns[k] += o->dur_ns;
	}
	st->min_ns = trace__stat(t, XPU_STAT_OFF_CPU_MIN_NS);
	st->short_blocks = trace__stat(t, XPU_STAT_OFF_CPU_SHORT);
	st->open = trace__stat(t, XPU_STAT_OFF_CPU_OPEN);
}

void off_cpu_stats__header(const struct session *s, FILE *out)
{
	struct off_cpu_stats st;
	uint32_t k;

	off_cpu_stats__sum(s, &st);
	fprintf(out, "# off-cpu:   %" PRIu64 " blocks of at least %.3g ms, %.3f s in all (", st.blocks,
		st.min_ns / 1e6, st.ns / 1e9);
	for (k = 1; k < OFF_CPU_STATES; k++)
		fprintf(out, "%s%s %.3f s", k > 1 ? ", " : "", off_cpu_state_name((uint16_t)k),
			st.state_ns[k] / 1e9);
	fprintf(out, ")\n");
	if (st.no_stack)
		fprintf(out, "#            %" PRIu64 " blocks without a stack (preempted in user code: "
			"it had changed before it could be taken)\n", st.no_stack);
}

void off_cpu_stats__info(const struct session *s, FILE *out)
{
	struct off_cpu_stats st;
	uint32_t k;

	off_cpu_stats__sum(s, &st);
	fprintf(out, "off-cpu\n");
	fprintf(out, "  %-16s %" PRIu64 " (%.6f s)\n", "blocks", st.blocks, st.ns / 1e9);
	for (k = 1; k < OFF_CPU_STATES; k++)
		fprintf(out, "  %-16s %" PRIu64 " (%.6f s)\n", off_cpu_state_name((uint16_t)k),
			st.state_blocks[k], st.state_ns[k] / 1e9);
	fprintf(out, "  %-16s %" PRIu64 "\n", "without stack", st.no_stack);
	fprintf(out, "  %-16s %" PRIu64 " ns (shorter blocks: %" PRIu64 ", only counted)\n",
		"minimum", st.min_ns, st.short_blocks);
	fprintf(out, "  %-16s %" PRIu64 " threads still blocked when recording stopped\n", "open",
		st.open);
}
