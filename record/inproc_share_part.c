// SPDX-License-Identifier: MIT
/*
 * The walk share as a part of the recorder (part.h): with -g cfi and --launch-walk=inproc,
 * the tables and process entries that the injected libraries walk their launches over. The
 * others reach it as c->ws: the frame readers and the unwind-table builder fill it, the CUPTI
 * receiver hands it out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "inproc_share.h"
#include "part.h"

static bool share_part__wanted(const struct rec_ctx *c)
{
	return c->cfg->cfi && c->cfg->launch_walk_inproc && c->gpu_lib;
}

static int share_part__setup(struct rec_ctx *c, void **state)
{
	struct walk_share *ws = walk_share__new(XPU_CFI_MEM_BYTES);

	if (!ws) {
		log_err("launch stacks walked in BPF only: %s", strerror(errno));
		return -1;
	}
	c->ws = ws;
	*state = ws;
	return 0;
}

static void share_part__free(void *state)
{
	walk_share__free(state);
}

const struct rec_part walk_share_part = {
	.name = "walk_share",
	.wanted = share_part__wanted,
	.setup = share_part__setup,
	.free = share_part__free,
};
