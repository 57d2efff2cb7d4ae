// SPDX-License-Identifier: MIT
/*
 * The symbol pack as a part of the recorder (part.h): the copies of the files only the traced
 * processes reach, taken as they are mapped and at a last look, then FILE.xpa once the trace
 * is in place. Its rows (the copies') are in every STATS record, 0 when no pack is made
 * (--no-pack, a trace to standard output).
 */
#include <stdio.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_copy.h"
#include "human_bytes.h"
#include "part.h"
#include "procmaps.h"
#include "stat_sink.h"
#include "symbol_pack.h"

struct pack_part {
	struct host_copy *copies;	/* NULL: no pack, or the copies could not be made */
	struct host_copy_stats st;
	bool packed;
	struct symbol_pack_done done;
};

static bool wants_pack(const struct rec_ctx *c)
{
	return !c->cfg->no_pack && c->trace_path;
}

static int pack_part__setup(struct rec_ctx *c, void **state)
{
	const struct record_config *cfg = c->cfg;
	struct pack_part *p = calloc(1, sizeof(*p));
	struct user_creds user;

	if (!p)
		return -1;
	if (wants_pack(c)) {
		if (cfg->sudo)
			user_creds__load(&user, cfg->user_uid, cfg->user_gid, cfg->user_name);
		p->copies = host_copy__new(c->trace_path, cfg->sudo ? &user : NULL);
		procmaps__set_copies(c->pm, p->copies);
	}
	*state = p;
	return 0;
}

/* a library replaced since it was mapped: copied now, from the descriptor kept */
static void pack_part__collect(void *state, struct rec_ctx *c)
{
	struct pack_part *p = state;

	host_copy__last_look(p->copies);
	host_copy__get_stats(p->copies, &p->st);
}

static void pack_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct pack_part *p = state;

	stat_sink__put(sink, XPU_STAT_HOST_COPIES, p->st.files);
	stat_sink__put(sink, XPU_STAT_HOST_COPY_BYTES, p->st.bytes);
	stat_sink__put(sink, XPU_STAT_HOST_COPIES_SKIPPED, p->st.skipped);
	stat_sink__put(sink, XPU_STAT_HOST_COPIES_LATE, p->st.late);
	stat_sink__put(sink, XPU_STAT_HOST_COPY_UNWATCHED, p->st.unwatched);
}

/* the trace is in place: its pack reads it like any report would */
static void pack_part__committed(void *state, struct rec_ctx *c)
{
	struct pack_part *p = state;

	if (wants_pack(c))
		p->packed = !symbol_pack__make(c->trace_path, c->cfg, host_copy__dir(p->copies),
					       &p->done);
	/* the copies served the pack; they are the traced processes' files, not the user's */
	host_copy__free(p->copies);
	p->copies = NULL;
}

static void pack_part__summary(void *state, struct rec_summary *sum)
{
	struct pack_part *p = state;
	char bytes[32];

	if (!p->packed)
		return;
	human_bytes(bytes, sizeof(bytes), p->done.bytes);
	snprintf(sum->beside, sizeof(sum->beside), " and its symbol pack %s (%s, %.1f s)",
		 p->done.path, bytes, p->done.seconds);
}

static void pack_part__free(void *state)
{
	struct pack_part *p = state;

	host_copy__free(p->copies);
	free(p);
}

const struct rec_part symbol_pack_part = {
	.name = "symbol_pack",
	.required = true,
	.setup = pack_part__setup,
	.collect = pack_part__collect,
	.stats = pack_part__stats,
	.committed = pack_part__committed,
	.summary = pack_part__summary,
	.free = pack_part__free,
};
