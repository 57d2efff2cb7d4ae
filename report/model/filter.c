// SPDX-License-Identifier: MIT
/* The report's filter (see filter.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/filter.h"

uint64_t filter__trace_start(const struct trace *t)
{
	uint64_t lo = UINT64_MAX;
	size_t i;

	if (t->has_session && t->session.start_mono_ns)
		return t->session.start_mono_ns;
	if (t->nsamples)
		lo = t->samples[0].ts_ns;
	if (t->nkernels && t->kernels[0].start_ns < lo)
		lo = t->kernels[0].start_ns;
	for (i = 0; i < t->napis; i++)
		lo = t->apis[i].start_ns < lo ? t->apis[i].start_ns : lo;
	for (i = 0; i < t->nmemcpys; i++)
		lo = t->memcpys[i].start_ns < lo ? t->memcpys[i].start_ns : lo;
	return lo == UINT64_MAX ? 0 : lo;
}

static int split_comms(struct filter *f, const char *arg)
{
	char *tok, *save = NULL;

	f->comm_buf = strdup(arg);
	if (!f->comm_buf)
		return -ENOMEM;
	for (tok = strtok_r(f->comm_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (f->ncomms >= FILTER_MAX_COMMS)
			return -EINVAL;
		f->comms[f->ncomms++] = tok;
	}
	return f->ncomms ? 0 : -EINVAL;
}

int filter__init(struct filter *f, struct trace *t, const struct report_opts *o)
{
	memset(f, 0, sizeof(*f));
	f->t = t;
	f->pids = o->pids;
	f->npids = o->npids;
	f->has_tid = o->has_tid;
	f->tid = o->tid;
	if (o->has_range) {
		uint64_t s0 = filter__trace_start(t);

		f->has_range = true;
		f->r0 = s0 + (uint64_t)(o->range_start_s * 1e9);
		f->r1 = s0 + (uint64_t)(o->range_end_s * 1e9);
	}
	return o->comm ? split_comms(f, o->comm) : 0;
}

bool filter__active(const struct filter *f)
{
	return f->npids || f->has_tid || f->ncomms || f->has_range;
}

static bool comm_is(const struct filter *f, const char *name)
{
	int i;

	for (i = 0; name && i < f->ncomms; i++) {
		if (!strcmp(name, f->comms[i]))
			return true;
	}
	return false;
}

static bool comm_match(const struct filter *f, uint32_t pid, uint32_t tid)
{
	const struct tr_thread *th = tid ? trace__thread(f->t, tid) : NULL;
	char buf[32];

	if (comm_is(f, trace__comm(f->t, pid, buf, sizeof(buf))))
		return true;
	return th && th->pid == pid && comm_is(f, trace__string(f->t, th->comm_str));
}

bool filter__task(const struct filter *f, uint32_t pid, uint32_t tid)
{
	int i;

	if (f->npids) {
		for (i = 0; i < f->npids; i++) {
			if (f->pids[i] == pid)
				break;
		}
		if (i == f->npids)
			return false;
	}
	if (f->has_tid && f->tid != tid)
		return false;
	return !f->ncomms || comm_match(f, pid, tid);
}

bool filter__process(const struct filter *f, uint32_t pid)
{
	return filter__task(f, pid, f->has_tid ? f->tid : 0);
}

bool filter__at(const struct filter *f, uint32_t pid, uint32_t tid, uint64_t ts)
{
	return filter__span(f, pid, tid, ts, ts);
}

bool filter__span(const struct filter *f, uint32_t pid, uint32_t tid, uint64_t start,
		  uint64_t end)
{
	if (f->has_range && (end < f->r0 || start > f->r1))
		return false;
	return filter__task(f, pid, tid);
}

void filter__free(struct filter *f)
{
	free(f->comm_buf);
	memset(f, 0, sizeof(*f));
}
