// SPDX-License-Identifier: MIT
/*
 * The chrome output's tracks: a process per traced process with a track per thread (and a
 * "<name> samples" track beside it when it has samples), a pseudo-process "GPU N" per device
 * with a track per (process, context, stream). Ids above PID_MAX_LIMIT keep the pseudo
 * tracks apart from real ones. Their names and order are written last, once all are known.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "output/chrome/chrome.h"

static int pid_add(struct chrome *c, uint32_t pid)
{
	bool ins;

	if (!kmap__put(&c->pid_idx, pid, 0, c->npids, &ins))
		return -ENOMEM;
	return ins ? VEC_PUSH(c->pids, c->npids, c->pids_cap, pid) : 0;
}

struct thread_track *chrome__thread(struct chrome *c, uint32_t pid, uint32_t tid)
{
	struct thread_track tt = { .pid = pid, .tid = tid };
	uint32_t *v;
	bool ins;

	if (pid_add(c, pid))
		return NULL;
	v = kmap__put(&c->th_idx, pid, tid, c->nth, &ins);
	if (!v)
		return NULL;
	if (ins && VEC_PUSH(c->th, c->nth, c->th_cap, tt))
		return NULL;
	return &c->th[*v];
}

const struct stream_track *chrome__stream(struct chrome *c, uint32_t device, uint32_t pid,
					  uint32_t context, uint32_t stream, int *err)
{
	struct stream_track s = { device, pid, context, stream, 0 };
	uint32_t *v, *d;
	bool ins;

	d = kmap__put(&c->dev_idx, device, 0, c->ndevs, &ins);
	if (!d || (ins && VEC_PUSH(c->devs, c->ndevs, c->devs_cap, device)))
		goto nomem;
	if (!kmap__put(&c->gpu_pids, pid, 0, 0, NULL))
		goto nomem;
	s.gpu = *d;
	v = kmap__get(&c->st_idx, (uint64_t)device << 32 | pid, (uint64_t)context << 32 | stream);
	if (v)
		return &c->st[*v];
	if (c->nst >= GPU_MAX_TRACKS)
		return NULL;	/* only a hostile file gets here: its extra streams are dropped */
	v = kmap__put(&c->st_idx, (uint64_t)device << 32 | pid, (uint64_t)context << 32 | stream,
		      c->nst, &ins);
	if (!v || VEC_PUSH(c->st, c->nst, c->st_cap, s))
		goto nomem;
	return &c->st[*v];
nomem:
	*err = -ENOMEM;
	return NULL;
}

int chrome__device(struct chrome *c, uint32_t device, uint32_t *idx)
{
	uint32_t *d;
	bool ins;

	d = kmap__put(&c->dev_idx, device, 0, c->ndevs, &ins);
	if (!d || (ins && VEC_PUSH(c->devs, c->ndevs, c->devs_cap, device)))
		return -ENOMEM;
	*idx = *d;
	return 0;
}

/* ---- names and order ------------------------------------------------------------------------ */


static void meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	chrome__put(c, "%s{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":",
		    c->events ? ",\n" : "\n", pid, tid, what);
	chrome__cstr(c, name);
	chrome__put(c, "}");
	c->events++;
	chrome__end(c);
}

static void meta_sort(struct chrome *c, const char *what, uint32_t pid, uint32_t tid, uint32_t idx)
{
	chrome__put(c, "%s{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"sort_index\":%u}",
		    c->events ? ",\n" : "\n", pid, tid, what, idx);
	c->events++;
	chrome__end(c);
}

static int cmp_th(const void *a, const void *b)
{
	const struct thread_track *x = a, *y = b;

	if (x->pid != y->pid)
		return CMP(x->pid, y->pid);
	return CMP(x->tid, y->tid);
}

/* Multi-trace: processes in order of host, then rank (none last), then pid. */
static int cmp_place(const void *a, const void *b, void *ses)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t rx = (uint32_t)session__process_rank(ses, x);
	uint32_t ry = (uint32_t)session__process_rank(ses, y);
	int h = strcmp(session__process_host(ses, x), session__process_host(ses, y));

	if (h)
		return h;
	if (rx != ry)		/* -1 (no rank) is the largest as unsigned */
		return rx < ry ? -1 : 1;
	return CMP(x, y);
}

/*
 * Process tracks: "comm pid"; with hosts or ranks (several traces, or PROCESS_ENV records)
 * "host rank N pid P (comm)", ordered by host and rank.
 */
static int emit_process_names(struct chrome *c)
{
	const struct trace *t = c->t;
	uint32_t *order = NULL;
	char buf[320], cb[32], place[300];
	size_t i;

	if (session__has_places(c->ses)) {
		order = malloc((c->npids ? c->npids : 1) * sizeof(*order));
		if (!order)
			return -ENOMEM;
		if (c->npids)
			memcpy(order, c->pids, c->npids * sizeof(*order));
		if (c->npids)
			qsort_r(order, c->npids, sizeof(*order), cmp_place, (void *)c->ses);
	}
	for (i = 0; i < c->npids; i++) {
		uint32_t pid = order ? order[i] : c->pids[i];

		if (order && *session__process_place(c->ses, pid, place, sizeof(place)))
			snprintf(buf, sizeof(buf), "%s pid %u (%s)", place,
				 session__process_pid(c->ses, pid), trace__comm(t, pid, cb, sizeof(cb)));
		else
			snprintf(buf, sizeof(buf), "%s %u", trace__comm(t, pid, cb, sizeof(cb)),
				 session__process_pid(c->ses, pid));
		meta(c, "process_name", pid, 0, buf);
		meta_sort(c, "process_sort_index", pid, 0, i);
	}
	free(order);
	return 0;
}

int chrome__emit_meta(struct chrome *c)
{
	const struct trace *t = c->t;
	char buf[320];
	size_t i, j;

	if (emit_process_names(c))
		return -ENOMEM;
	/* sorted by tid, so that each thread's samples track follows it */
	if (c->nth)
		qsort(c->th, c->nth, sizeof(*c->th), cmp_th);
	for (i = 0; i < c->nth; i++) {
		const struct thread_track *th = &c->th[i];
		const struct tr_thread *tt = trace__thread(t, th->tid);
		const char *n = tt ? trace__string(t, tt->comm_str) : NULL;

		if (n && *n)
			snprintf(buf, sizeof(buf), "%s %u", n, th->tid);
		else
			snprintf(buf, sizeof(buf), "tid %u", th->tid);
		if (th->has_events || !th->has_samples) {
			meta(c, "thread_name", th->pid, th->tid, buf);
			meta_sort(c, "thread_sort_index", th->pid, th->tid, 2 * i);
		}
		if (th->has_samples) {
			strncat(buf, " samples", sizeof(buf) - strlen(buf) - 1);
			meta(c, "thread_name", th->pid, SAMPLE_TID_BASE + th->tid, buf);
			meta_sort(c, "thread_sort_index", th->pid, SAMPLE_TID_BASE + th->tid, 2 * i + 1);
		}
	}
	for (i = 0; i < c->ndevs; i++) {
		const char *dn = NULL;

		for (j = 0; j < t->ndevices && !dn; j++) {
			if (t->devices[j].device == c->devs[i])
				dn = trace__string(t, t->devices[j].name_str);
		}
		const char *host;
		uint32_t dev = trace__real_device(t, c->devs[i], &host);
		int n;

		if (dn && *dn)
			n = snprintf(buf, sizeof(buf), "GPU %u (%s)", dev, dn);
		else
			n = snprintf(buf, sizeof(buf), "GPU %u", dev);
		/* several traces: the host a GPU belongs to */
		if (t->nparts > 1 && *host && n > 0 && (size_t)n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, " on %s", host);
		meta(c, "process_name", GPU_PID_BASE + i, 0, buf);
		meta_sort(c, "process_sort_index", GPU_PID_BASE + i, 0, c->npids + i);
	}
	for (i = 0; i < c->nst; i++) {
		const struct stream_track *s = &c->st[i];

		if (c->gpu_pids.n > 1)
			snprintf(buf, sizeof(buf), "stream %u (pid %u)", s->stream,
				 session__process_pid(c->ses, s->pid));
		else
			snprintf(buf, sizeof(buf), "stream %u", s->stream);
		meta(c, "thread_name", GPU_PID_BASE + s->gpu, chrome__stream_tid(c, s), buf);
		meta_sort(c, "thread_sort_index", GPU_PID_BASE + s->gpu, chrome__stream_tid(c, s), i);
	}
	return 0;
}

