// SPDX-License-Identifier: MIT
/*
 * --driver as a part of the recorder (part.h): the ioctl tracer, routed to the drain before
 * its programs attach. Whatever fails is said once and recording goes on without it; a tracer
 * that never attached writes no rows.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bpf_setup.h"
#include "driver_trace.h"
#include "part.h"
#include "rb_drain.h"
#include "stat_sink.h"

struct driver_part {
	struct driver_trace *dt;	/* NULL once it failed to attach */
};

static bool driver_part__wanted(const struct rec_ctx *c)
{
	return c->cfg->driver;
}

static int driver_part__setup(struct rec_ctx *c, void **state)
{
	struct driver_part *p = calloc(1, sizeof(*p));
	char err[512] = "";

	if (!p)
		return -1;
	p->dt = driver_trace__load(bpf_state__traced_fd(c->bpf), bpf_state__events_fd(c->bpf),
				   err, sizeof(err));
	if (!p->dt) {
		log_err("%s", err);
		free(p);
		return -1;
	}
	*state = p;
	return 0;
}

/* Whatever fails is said, and the recording goes on without the tracer. */
static int driver_part__start(void *state, struct rec_ctx *c)
{
	struct driver_part *p = state;
	char err[512] = "";

	rb_drain__route(c->drain, driver_trace__handler(p->dt, c->wt));
	if (driver_trace__attach(p->dt, err, sizeof(err))) {
		log_err("%s", err);
		rb_drain__unroute(c->drain, driver_trace__handler(p->dt, c->wt));
		driver_trace__destroy(p->dt);
		p->dt = NULL;
	}
	return 0;
}

/* Its ring-buffer losses as LOST records, then its rows. */
static void driver_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct driver_part *p = state;
	struct xpu_stat_entry e[4];
	unsigned int n, i;

	if (!p->dt)
		return;
	n = driver_trace__finish(p->dt, c->wt, e, sizeof(e) / sizeof(e[0]));
	for (i = 0; i < n; i++)
		stat_sink__put(sink, (enum xpu_stat_id)e[i].id, e[i].value);
}

static void driver_part__free(void *state)
{
	struct driver_part *p = state;

	driver_trace__destroy(p->dt);
	free(p);
}

const struct rec_part driver_part = {
	.name = "driver",
	.wanted = driver_part__wanted,
	.setup = driver_part__setup,
	.start = driver_part__start,
	.stats = driver_part__stats,
	.free = driver_part__free,
};
