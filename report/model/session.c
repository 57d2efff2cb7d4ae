// SPDX-License-Identifier: MIT
/* The report session (see session.h). */
#include <string.h>

#include "model/session.h"

/* Without a SESSION record the rate is unknown; GPU time then converts at this rate. */
#define DEFAULT_FREQ_HZ 1000

int session__setup(struct session *s, struct trace *t, const struct report_opts *opts)
{
	struct sym_opts so = {
		.trace_path = opts->input,
		.symfs = opts->symfs,
		.no_host_files = opts->no_host_files,
		.python_lines = opts->python_lines,
		.verbose = opts->verbose,
	};
	int err;

	memset(s, 0, sizeof(*s));
	s->t = t;
	s->opts = opts;
	s->freq_hz = t->has_session && t->session.sample_freq_hz ? t->session.sample_freq_hz :
								    DEFAULT_FREQ_HZ;
	err = filter__init(&s->filter, t, opts);
	if (err)
		return err;
	err = symbolizer__init(&s->sym, t, &so, &s->pool);
	if (err)
		return err;
	/* -g dwarf: replace user stacks by DWARF-unwound ones before anything aggregates them */
	err = opts->no_unwind ? 0 : unwind__apply(t, &s->sym, &s->uw);
	if (err)
		return err;
	/* then Python frames go where the (now complete) native stacks run the interpreter */
	return pyframes__apply(t, opts->python_lines, &s->py);
}

const struct gpu_join *session__gpu(struct session *s)
{
	if (!s->gpu_built) {
		if (gpu_join__build(&s->gpu, s->t, &s->filter, &s->pool)) {
			gpu_join__free(&s->gpu);
			return NULL;
		}
		s->gpu_built = true;
	}
	return &s->gpu;
}

void session__teardown(struct session *s)
{
	symbolizer__free(&s->sym);
	unwind__free(&s->uw);
	gpu_join__free(&s->gpu);
	filter__free(&s->filter);
	strpool__free(&s->pool);
	memset(s, 0, sizeof(*s));
}
