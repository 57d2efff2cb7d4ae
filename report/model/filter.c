// SPDX-License-Identifier: MIT
/* The report's filter (see filter.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/filter.h"

static int split_names(char **buf, const char **names, int *n, const char *arg)
{
	char *tok, *save = NULL;

	*buf = strdup(arg);
	if (!*buf)
		return -ENOMEM;
	for (tok = strtok_r(*buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n >= FILTER_MAX_COMMS)
			return -EINVAL;
		names[(*n)++] = tok;
	}
	return *n ? 0 : -EINVAL;
}

/* Parses N[,N...] into ranks (when given); -EINVAL for anything else. */
static int parse_ranks(const char *s, int32_t *ranks, int *n)
{
	char *end;
	long v;

	*n = 0;
	do {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = strtol(s, &end, 10);
		if (v > INT32_MAX || *n >= FILTER_MAX_RANKS || (*end && *end != ','))
			return -EINVAL;
		if (ranks)
			ranks[*n] = (int32_t)v;
		(*n)++;
		s = *end ? end + 1 : end;
	} while (*end);
	return 0;
}

bool filter__ranks_ok(const char *s)
{
	int n;

	return !parse_ranks(s, NULL, &n);
}

int filter__init(struct filter *f, const struct trace *t, const struct report_opts *o)
{
	memset(f, 0, sizeof(*f));
	f->t = t;
	f->pids = o->pids;
	f->npids = o->npids;
	f->has_tid = o->has_tid;
	f->tid = o->tid;
	if (o->has_range) {
		uint64_t s0 = trace__start(t);

		f->has_range = true;
		f->r0 = s0 + (uint64_t)(o->range_start_s * 1e9);
		f->r1 = s0 + (uint64_t)(o->range_end_s * 1e9);
	}
	if (o->ranks && parse_ranks(o->ranks, f->ranks, &f->nranks))
		return -EINVAL;
	if (o->hosts && split_names(&f->host_buf, f->hosts, &f->nhosts, o->hosts))
		return -EINVAL;
	return o->comm ? split_names(&f->comm_buf, f->comms, &f->ncomms, o->comm) : 0;
}

bool filter__active(const struct filter *f)
{
	return f->npids || f->has_tid || f->ncomms || f->has_range || f->nhosts || f->nranks;
}

static bool name_in(const char *const *names, int n, const char *name)
{
	int i;

	for (i = 0; name && i < n; i++) {
		if (!strcmp(name, names[i]))
			return true;
	}
	return false;
}

static bool comm_is(const struct filter *f, const char *name)
{
	return name_in(f->comms, f->ncomms, name);
}

/* --host and --rank: where the process ran and its place in the job */
static bool place_match(const struct filter *f, uint32_t pid)
{
	const struct xpu_rec_process_env *e;
	int i;

	if (f->nhosts && !name_in(f->hosts, f->nhosts, trace__host(f->t, pid)))
		return false;
	if (!f->nranks)
		return true;
	e = trace__process_env(f->t, pid);
	for (i = 0; e && i < f->nranks; i++) {
		if (e->rank == f->ranks[i])
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
	if ((f->nhosts || f->nranks) && !place_match(f, pid))
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
	free(f->host_buf);
	memset(f, 0, sizeof(*f));
}
