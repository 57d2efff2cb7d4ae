// SPDX-License-Identifier: MIT
/*
 * PyTorch's autograd probes as a part of the recorder (part.h), unless --no-autograd: their
 * rows are written once a PyTorch file was probed, or could not be.
 */
#include <stdio.h>

#include "autograd_probe.h"
#include "part.h"
#include "stat_sink.h"

static bool ag_part__wanted(const struct rec_ctx *c)
{
	return !c->cfg->no_autograd;
}

static int ag_part__setup(struct rec_ctx *c, void **state)
{
	struct autograd_probe *ag = autograd_probe__new(c->bpf, c->wt);

	if (!ag) {
		log_err("cannot start the autograd probes");
		return -1;
	}
	if (c->ws)
		autograd_probe__set_walk_share(ag, c->ws);
	*state = ag;
	return 0;
}

static struct map_handler *ag_part__handler(void *state)
{
	return autograd_probe__handler(state);
}

static void ag_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct autograd_probe_stats st = { 0 };

	autograd_probe__get_stats(state, &st);
	if (!st.files && !st.unavailable)
		return;
	stat_sink__put(sink, XPU_STAT_AG_NODES, c->cnt[XPU_CNT_AG_NODES]);
	stat_sink__put(sink, XPU_STAT_AG_NODE_REPEATS, c->cnt[XPU_CNT_AG_NODE_REPEATS]);
	stat_sink__put(sink, XPU_STAT_AG_EVALS, st.evals);
	stat_sink__put(sink, XPU_STAT_AG_READ_ERR, c->cnt[XPU_CNT_AG_READ_ERR]);
	stat_sink__put(sink, XPU_STAT_AG_TOO_DEEP, st.too_deep);
	stat_sink__put(sink, XPU_STAT_AG_NODES_FROM_LAUNCH, st.nodes_from_launch);
	stat_sink__put(sink, XPU_STAT_AG_NODES_LAUNCH_LOST, st.nodes_launch_lost);
	stat_sink__put(sink, XPU_STAT_AG_COUNTERS_UNLOCATED, st.counters_unlocated);
}

static void ag_part__free(void *state)
{
	autograd_probe__free(state);
}

const struct rec_part autograd_part = {
	.name = "autograd",
	.required = true,
	.wanted = ag_part__wanted,
	.setup = ag_part__setup,
	.handler = ag_part__handler,
	.stats = ag_part__stats,
	.free = ag_part__free,
};
