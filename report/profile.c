// SPDX-License-Identifier: MIT
/* Aggregation of samples and GPU work into weighted stacks (see profile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* Without a SESSION record the rate is unknown; GPU time then converts at this rate. */
#define DEFAULT_FREQ_HZ 1000

static uint32_t *frames_buf;
static size_t frames_cap;

int profile__init(struct profile *p, struct trace *t, const struct report_opts *opts)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->t = t;
	p->opts = opts;
	p->freq_hz = t->has_session && t->session.sample_freq_hz ? t->session.sample_freq_hz :
								    DEFAULT_FREQ_HZ;
	err = symbolizer__init(&p->sym, t, opts, &p->pool);
	if (err)
		return err;
	/* -g dwarf: replace user stacks by DWARF-unwound ones before anything aggregates them */
	err = opts->no_unwind ? 0 : unwind__apply(t, &p->sym, &p->uw);
	if (err)
		return err;
	/* then Python frames go where the (now complete) native stacks run the interpreter */
	return pyframes__apply(t, opts->python_lines, &p->py);
}

bool profile__keep(struct profile *p, uint32_t pid, uint32_t tid)
{
	const struct report_opts *o = p->opts;
	int i;

	if (o->npids) {
		for (i = 0; i < o->npids; i++) {
			if (o->pids[i] == pid)
				break;
		}
		if (i == o->npids)
			return false;
	}
	if (o->has_tid && o->tid != tid)
		return false;
	if (o->comm) {
		char buf[32];

		if (strcmp(trace__comm(p->t, pid, buf, sizeof(buf)), o->comm))
			return false;
	}
	return true;
}

int profile__add(struct profile *p, uint32_t pid, uint64_t ts, uint32_t stack_id, uint32_t leaf,
		 bool trim, uint64_t samples, uint64_t gpu_ns)
{
	uint64_t gen = trace__generation(p->t, pid, ts) & 0x7fffffff;
	uint64_t a = (uint64_t)pid << 32 | gen << 1 | trim, b = (uint64_t)stack_id << 32 | leaf;
	struct prof_entry e = { pid, stack_id, leaf, trim, ts, 0, 0 };
	uint32_t *v;
	bool ins;

	v = kmap__put(&p->idx, a, b, p->n, &ins);
	if (!v)
		return -ENOMEM;
	if (ins && VEC_PUSH(p->e, p->n, p->cap, e))
		return -ENOMEM;
	p->e[*v].samples += samples;
	p->e[*v].gpu_ns += gpu_ns;
	return 0;
}

static int add_samples(struct profile *p)
{
	size_t i;
	int err;

	for (i = 0; i < p->t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &p->t->samples[i];

		if (!profile__keep(p, s->pid, s->tid)) {
			p->filtered_out++;
			continue;
		}
		err = profile__add(p, s->pid, s->ts_ns, s->stack_id, 0, false, 1, 0);
		if (err)
			return err;
		p->cpu_samples++;
	}
	return 0;
}

int profile__build(struct profile *p)
{
	int err = 0;

	if (p->opts->view != VIEW_GPU)
		err = add_samples(p);
	if (!err && p->opts->view != VIEW_CPU)
		err = correlate__add(p);
	return err;
}

int profile__frames(struct profile *p, const struct prof_entry *e, const uint32_t **frames,
		    uint32_t *n)
{
	const uint32_t *sf;
	uint32_t sn, k = 0;
	char buf[32];
	const char *comm;
	int err;

	err = symbolizer__stack(&p->sym, e->pid, e->ts, e->stack_id, e->trim, &sf, &sn);
	if (err)
		return err;
	if (vec_reserve((void **)&frames_buf, &frames_cap, sn + 2, sizeof(*frames_buf)))
		return -ENOMEM;
	comm = trace__comm(p->t, e->pid, buf, sizeof(buf));
	frames_buf[k++] = frame_intern(&p->pool, comm, strlen(comm));
	memcpy(frames_buf + k, sf, sn * sizeof(*sf));
	k += sn;
	if (e->leaf)
		frames_buf[k++] = e->leaf;
	*frames = frames_buf;
	*n = k;
	return 0;
}

double profile__weight(const struct profile *p, uint64_t samples, uint64_t gpu_ns)
{
	if (p->opts->weight == WEIGHT_TIME)
		return ((double)samples * 1e9 / p->freq_hz + (double)gpu_ns) / 1e3;
	return (double)samples + (double)gpu_ns * p->freq_hz / 1e9;
}

void profile__free(struct profile *p)
{
	symbolizer__free(&p->sym);
	unwind__free(&p->uw);
	strpool__free(&p->pool);
	kmap__free(&p->idx);
	free(p->e);
	free(frames_buf);
	frames_buf = NULL;
	frames_cap = 0;
	memset(p, 0, sizeof(*p));
}
