// SPDX-License-Identifier: MIT
/*
 * The ring buffer's drain as a part of the recorder (part.h): the thread that turns BPF's
 * events into records, started once the first records are written (c->drain: the later
 * parts route to it and feed it), stopped once the later parts stopped feeding it. Its rows:
 * what it took.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_setup.h"
#include "part.h"
#include "rb_drain.h"
#include "stat_sink.h"

struct drain_part {
	struct rb_drain *drain;		/* from start to stop */
	struct rb_drain_stats st;	/* its counters, once stopped */
};

static int drain_part__setup(struct rec_ctx *c, void **state)
{
	struct drain_part *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	*state = p;
	return 0;
}

static int drain_part__start(void *state, struct rec_ctx *c)
{
	struct drain_part *p = state;

	p->drain = rb_drain__start(bpf_state__events_fd(c->bpf), c->wt, c->pm, c->pt);
	if (!p->drain) {
		log_err("cannot start the ring buffer thread: %s", strerror(errno));
		return -1;
	}
	c->drain = p->drain;
	return 0;
}

/* Drains what is left, the queue of the launches walked in process too. */
static void drain_part__stop(void *state, struct rec_ctx *c)
{
	struct drain_part *p = state;

	if (!p->drain)
		return;
	rb_drain__stop(p->drain, c->aborted ? NULL : &p->st);
	p->drain = NULL;
	c->drain = NULL;
	if (!c->aborted)
		c->drained = &p->st;
}

static void drain_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct drain_part *p = state;

	stat_sink__put(sink, XPU_STAT_SAMPLES, p->st.samples);
	stat_sink__put(sink, XPU_STAT_TASK_EVENTS, p->st.task_events);
	stat_sink__put(sink, XPU_STAT_GPU_LAUNCHES, p->st.gpu_launches);
}

const struct rec_part drain_part = {
	.name = "rb_drain",
	.required = true,
	.setup = drain_part__setup,
	.start = drain_part__start,
	.stop = drain_part__stop,
	.stats = drain_part__stats,
	.free = free,
};
