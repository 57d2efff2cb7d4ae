// SPDX-License-Identifier: MIT
/*
 * PyTorch's autograd probes as a part of the recorder (part.h), unless --no-autograd: their
 * BPF programs are loaded at the first PyTorch library mapped, or at setup when the launched
 * command links one (its first autograd node may come right after main, before the drain
 * reads its mappings); their rows are written once a PyTorch file was probed, or could not
 * be, and autograd_programs_loaded always.
 */
#include <stdio.h>
#include <unistd.h>

#include "autograd_probe.h"
#include "bpf_setup.h"
#include "elf_deps.h"
#include "part.h"
#include "stat_sink.h"

static void note_torch(const char *path, int fd, void *arg)
{
	if (autograd_probe__torch_library(path))
		*(bool *)arg = true;
	close(fd);
}

/* The launched command maps a PyTorch library before its first instruction. */
static bool command_links_torch(const struct record_config *cfg)
{
	bool torch = false;

	if (!cfg->attach_pid && cfg->cmd && cfg->cmd[0])
		elf_deps__collect(cfg->cmd[0], note_torch, &torch);
	return torch;
}

static bool ag_part__wanted(const struct rec_ctx *c)
{
	return !c->cfg->no_autograd;
}

static int ag_part__setup(struct rec_ctx *c, void **state)
{
	struct autograd_probe *ag = autograd_probe__new(c->bpf, c->wt);
	char err[160];

	if (!ag) {
		log_err("cannot start the autograd probes");
		return -1;
	}
	if (c->ws)
		autograd_probe__set_walk_share(ag, c->ws);
	/* a failure is said by each library's AUTOGRAD_PROBE record, as at a later load */
	if (command_links_torch(c->cfg) && bpf_state__load_autograd(c->bpf, err, sizeof(err)))
		log_info("autograd: cannot load the probes ahead: %s", err);
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
	stat_sink__put(sink, XPU_STAT_AG_PROGRAMS_LOADED, bpf_state__autograd_loaded(c->bpf));
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
