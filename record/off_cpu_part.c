// SPDX-License-Identifier: MIT
/*
 * --off-cpu as a part of the recorder (part.h): the BPF programs are the core's (bpf_setup.c
 * loads them with the others); this part closes the recording's account of them. Blocks that
 * ended but still waited for their thread to run its own code (to take the stack) are lost;
 * threads still blocked are counted, not closed: their block has no end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_setup.h"
#include "clock.h"
#include "part.h"
#include "rb_drain.h"
#include "stat_sink.h"
#include "writer_thread.h"

struct off_cpu_part {
	uint64_t pending;	/* ended, their stack never taken: LOST */
	uint64_t open;		/* threads still off their CPU at the end */
	uint64_t blocks;	/* OFF_CPU records the drain wrote */
};

static bool off_cpu_part__wanted(const struct rec_ctx *c)
{
	return c->cfg->off_cpu;
}

static int off_cpu_part__setup(struct rec_ctx *c, void **state)
{
	struct off_cpu_part *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	c->session_flags |= XPU_SESSION_OFF_CPU;
	*state = p;
	return 0;
}

static void off_cpu_part__collect(void *state, struct rec_ctx *c)
{
	struct off_cpu_part *p = state;
	struct xpu_rec_lost lost = { .source = XPU_LOST_OFF_CPU };
	struct wt_rec r = {
		.type = XPU_REC_LOST, .body = &lost, .body_size = sizeof(lost), .must_keep = true,
	};

	p->blocks = c->drained->off_cpu_blocks;
	if (bpf_state__off_cpu_leftover(c->bpf, &p->pending, &p->open) || !p->pending)
		return;
	lost.ts_ns = r.ts_ns = clock_mono_ns();
	lost.count = p->pending;
	writer_thread__submit(c->wt, &r);
}

static void off_cpu_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct off_cpu_part *p = state;
	const uint64_t *cnt = c->cnt;

	stat_sink__put(sink, XPU_STAT_OFF_CPU_MIN_NS, c->cfg->off_cpu_min_ns);
	stat_sink__put(sink, XPU_STAT_OFF_CPU_BLOCKS, p->blocks);
	stat_sink__put(sink, XPU_STAT_OFF_CPU_SHORT, cnt[XPU_CNT_OFFCPU_SHORT]);
	stat_sink__put(sink, XPU_STAT_OFF_CPU_NO_STACK, cnt[XPU_CNT_OFFCPU_NO_STACK]);
	stat_sink__put(sink, XPU_STAT_OFF_CPU_LOST, cnt[XPU_CNT_OFFCPU_LOST] + p->pending);
	stat_sink__put(sink, XPU_STAT_OFF_CPU_OPEN, p->open);
}

static void off_cpu_part__summary(void *state, struct rec_summary *sum)
{
	struct off_cpu_part *p = state;
	size_t len = strnlen(sum->counts, sizeof(sum->counts));

	snprintf(sum->counts + len, sizeof(sum->counts) - len, "%llu off-CPU blocks, ",
		 (unsigned long long)p->blocks);
}

const struct rec_part off_cpu_part = {
	.name = "off_cpu",
	.wanted = off_cpu_part__wanted,
	.setup = off_cpu_part__setup,
	.collect = off_cpu_part__collect,
	.stats = off_cpu_part__stats,
	.summary = off_cpu_part__summary,
	.free = free,
};
