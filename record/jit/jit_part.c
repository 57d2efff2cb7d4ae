// SPDX-License-Identifier: MIT
/*
 * JIT symbol maps (perf maps, jitdumps) as a part of the recorder (part.h): always in the
 * process table; the files are read to their end once the drain is gone, and its rows written
 * when they held anything.
 */
#include <stdio.h>
#include <stdlib.h>

#include "jit_maps.h"
#include "part.h"
#include "stat_sink.h"

struct jit_part {
	struct jit_maps *jit;
	struct jit_maps_stats st;
};

static int jit_part__setup(struct rec_ctx *c, void **state)
{
	struct jit_part *p = calloc(1, sizeof(*p));

	if (p)
		p->jit = jit_maps__new(c->wt);
	if (!p || !p->jit) {
		free(p);
		log_err("cannot start the JIT map reader");
		return -1;
	}
	*state = p;
	return 0;
}

static struct map_handler *jit_part__handler(void *state)
{
	struct jit_part *p = state;

	return jit_maps__handler(p->jit);
}

/* the drain thread is gone: the JIT files are complete (or, with -p, as far as written) */
static void jit_part__collect(void *state, struct rec_ctx *c)
{
	struct jit_part *p = state;

	jit_maps__collect(p->jit, &p->st);
}

static void jit_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct jit_part *p = state;

	if (!p->st.symbols && !p->st.skipped)
		return;
	stat_sink__put(sink, XPU_STAT_JIT_SYMBOLS, p->st.symbols);
	stat_sink__put(sink, XPU_STAT_JIT_SKIPPED, p->st.skipped);
}

static void jit_part__free(void *state)
{
	struct jit_part *p = state;

	jit_maps__free(p->jit);
	free(p);
}

const struct rec_part jit_part = {
	.name = "jit",
	.required = true,
	.setup = jit_part__setup,
	.handler = jit_part__handler,
	.collect = jit_part__collect,
	.stats = jit_part__stats,
	.free = jit_part__free,
};
