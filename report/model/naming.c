// SPDX-License-Identifier: MIT
/* The naming phase (see naming.h). */
#include <errno.h>
#include <string.h>

#include "base/progress.h"
#include "model/naming.h"

struct naming {
	struct session *s;
	uint64_t done, total;
};

static int name_one(struct naming *nm, uint32_t pid, uint64_t ts, uint32_t stack_id, bool trim)
{
	const uint32_t *f;
	uint32_t n;

	progress__update("naming frames", nm->done++, nm->total);
	return symbolizer__stack(&nm->s->sym, pid, ts, stack_id, trim, &f, &n);
}

/*
 * Each entry's stack, and its process name (the root of its frames): those of CPU samples
 * (no leaf) when cpu, the others when !cpu.
 */
static int name_profile(struct naming *nm, struct profile *p, bool cpu)
{
	const struct trace *t = nm->s->t;
	char buf[32];
	size_t i;
	int err;

	for (i = 0; i < p->n; i++) {
		struct prof_entry *e = &p->e[i];
		const char *comm;

		if ((e->leaf == 0) != cpu)
			continue;
		comm = trace__comm(t, e->pid, buf, sizeof(buf));
		err = name_one(nm, e->pid, e->ts, e->stack_id, e->trim);
		if (!err && e->mid)
			err = name_one(nm, e->pid, e->cap_ts, e->cap_stack, e->trim);
		if (err)
			return err;
		e->comm = frame_intern(&nm->s->pool, comm, strlen(comm));
		if (!e->comm)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The samples, launches, blocks and autograd nodes the filter keeps (untrimmed: text, info,
 * jsonl, archive).
 */
static int name_events(struct naming *nm, unsigned int sets)
{
	const struct filter *f = &nm->s->filter;
	const struct trace *t = nm->s->t;
	size_t i;
	int err = 0;

	for (i = 0; !err && (sets & NAME_SAMPLES) && i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *x = &t->samples[i];

		if (filter__at(f, x->pid, x->tid, x->ts_ns))
			err = name_one(nm, x->pid, x->ts_ns, session__sample_stack(nm->s, i), false);
	}
	for (i = 0; !err && (sets & NAME_LAUNCHES) && i < t->nlaunches; i++) {
		const struct xpu_rec_gpu_launch *l = &t->launches[i];

		if (filter__at(f, l->pid, l->tid, l->ts_ns))
			err = name_one(nm, l->pid, l->ts_ns, session__launch_stack(nm->s, i), false);
	}
	for (i = 0; !err && (sets & NAME_LAUNCH_SITES) && i < t->nlaunches; i++) {
		const struct xpu_rec_gpu_launch *l = &t->launches[i];

		if (filter__at(f, l->pid, l->tid, l->ts_ns))
			err = name_one(nm, l->pid, l->ts_ns, session__launch_stack(nm->s, i), true);
	}
	for (i = 0; !err && (sets & NAME_OFF_CPU) && i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];

		if (filter__span(f, o->pid, o->tid, o->ts_ns, o->ts_ns + o->dur_ns))
			err = name_one(nm, o->pid, o->ts_ns, session__offcpu_stack(nm->s, i), false);
	}
	for (i = 0; !err && (sets & NAME_AG_NODES) && i < t->nag_nodes; i++) {
		const struct xpu_rec_autograd_node *a = &t->ag_nodes[i];

		if (filter__at(f, a->pid, a->tid, a->ts_ns))
			err = name_one(nm, a->pid, a->ts_ns, nm->s->stacks.ag_node_stack[i], false);
	}
	return err;
}

/* The launches of backward work, untrimmed: backward_share__site() reads their stacks. */
static int name_backward(struct naming *nm)
{
	const struct trace *t = nm->s->t;
	const uint32_t *fwd = nm->s->bw.launch_forward;
	size_t i;
	int err;

	for (i = 0; fwd && i < t->nlaunches; i++) {
		if (!fwd[i])
			continue;
		err = name_one(nm, t->launches[i].pid, t->launches[i].ts_ns,
			       session__launch_stack(nm->s, i), false);
		if (err)
			return err;
	}
	return 0;
}

/* Where DWARF walks ended short of the outermost frame, for info's "dwarf stops". */
static int name_stops(struct naming *nm)
{
	const struct unwind_stats *st = &nm->s->uw;
	size_t i;
	int err;

	for (i = 0; i < st->nstop_recs; i++) {
		const struct unwind_stop_rec *r = &st->stop_recs[i];

		if (r->reason == UW_STOP_OUTERMOST)
			continue;
		err = name_one(nm, r->pid, r->ts, r->stack_id, false);
		if (err)
			return err;
	}
	return 0;
}

/* The launch stack of each GPU allocation the filter keeps (text's allocating call paths). */
static int name_alloc_sites(struct naming *nm)
{
	const struct trace *t = nm->s->t;
	const struct gpu_join *j;
	size_t i;
	int err;

	if (!t->nmemories)
		return 0;
	j = session__gpu(nm->s);
	if (!j)
		return -ENOMEM;
	for (i = 0; i < t->nmemories; i++) {
		const struct xpu_rec_gpu_memory *m = &t->memories[i];
		long li;

		if (m->op != XPU_GPU_MEM_ALLOC || !filter__at(&nm->s->filter, m->pid, 0, m->ts_ns))
			continue;
		li = gpu_join__launch(j, m->pid, m->corr_id);
		if (li < 0)
			continue;
		err = name_one(nm, t->launches[li].pid, t->launches[li].ts_ns,
			       session__launch_stack(nm->s, (size_t)li), true);
		if (err)
			return err;
	}
	return 0;
}

static int name_launch(struct naming *nm, long li, bool trim)
{
	const struct xpu_rec_gpu_launch *l;

	if (li < 0)
		return 0;
	l = &nm->s->t->launches[li];
	return name_one(nm, l->pid, l->ts_ns, session__launch_stack(nm->s, (size_t)li), trim);
}

/* The capture launches of the graph work kept, trimmed (text, jsonl) and not (chrome). */
static int name_graph_sites(struct naming *nm)
{
	const struct gpu_join *j = session__gpu(nm->s);
	size_t i;
	int err = 0;

	if (!j)
		return -ENOMEM;
	for (i = 0; !err && i < j->n; i++) {
		if (!j->w[i].keep || !j->w[i].capture)
			continue;
		err = name_launch(nm, (long)j->w[i].capture - 1, true);
		if (!err)
			err = name_launch(nm, (long)j->w[i].capture - 1, false);
	}
	return err;
}

/* The trimmed launch stacks of the GPU work kept and of the calls and syncs kept. */
static int name_gpu_sites(struct naming *nm)
{
	const struct filter *f = &nm->s->filter;
	const struct trace *t = nm->s->t;
	const struct gpu_join *j = session__gpu(nm->s);
	size_t i;
	int err = 0;

	if (!j)
		return -ENOMEM;
	for (i = 0; !err && i < j->n; i++) {
		if (j->w[i].keep && j->w[i].launch)
			err = name_launch(nm, (long)j->w[i].launch - 1, true);
	}
	for (i = 0; !err && i < t->napis; i++) {
		const struct xpu_rec_gpu_api *a = &t->apis[i];

		if (filter__span(f, a->pid, a->tid, a->start_ns, a->end_ns))
			err = name_launch(nm, gpu_join__launch(j, a->pid, a->corr_id), true);
	}
	for (i = 0; !err && i < t->nsyncs; i++) {
		const struct xpu_rec_gpu_sync *s = &t->syncs[i];
		long li = gpu_join__launch(j, s->pid, s->corr_id);
		uint32_t tid = li >= 0 ? t->launches[li].tid : 0;

		if (filter__span(f, s->pid, tid, s->start_ns, s->end_ns))
			err = name_launch(nm, li, true);
	}
	return err;
}

/*
 * Where each entry's frames are, now that nothing more is named (naming moves them): the
 * outputs then read them from the entries, and the folded way of a sample enters sym/ once.
 */
static int fix_profile(const struct session *s, struct profile *p)
{
	size_t i;
	int err;

	for (i = 0; i < p->n; i++) {
		struct prof_entry *e = &p->e[i];

		err = session__stack(s, e->pid, e->ts, e->stack_id, e->trim, &e->frames,
				     &e->nframes);
		if (err)
			return err;
		e->files = session__files(s, e->frames);
		e->sites = session__sites(s, e->frames);
		if (!e->mid)
			continue;
		err = session__stack(s, e->pid, e->cap_ts, e->cap_stack, e->trim, &e->cap_frames,
				     &e->cap_nframes);
		if (err)
			return err;
		e->cap_files = session__files(s, e->cap_frames);
		e->cap_sites = session__sites(s, e->cap_frames);
	}
	return 0;
}

int session__name(struct session *s, struct profile *p, unsigned int sets)
{
	const struct trace *t = s->t;
	struct naming nm = { .s = s };
	size_t i;
	int err = 0;

	/* built here if not yet: after this the outputs only read the session */
	err = session__join_gpu(s);
	if (err)
		return err;
	if (!p)
		sets &= ~(unsigned int)NAME_PROFILE;
	/*
	 * A profile that took the samples holds every one the filter keeps, under the same keys
	 * (untrimmed, by exec generation), in the order of their first samples: naming its
	 * sample entries names them, without a lookup per sample here.
	 */
	if ((sets & NAME_PROFILE) && p->cpu_samples)
		sets &= ~(unsigned int)NAME_SAMPLES;
	/* the progress line's total: an upper bound (the filter leaves some out) */
	/* a profile entry of graph work names two stacks */
	nm.total = (sets & NAME_PROFILE ? 2 * p->n : 0) + (sets & NAME_SAMPLES ? t->nsamples : 0) +
		   (sets & NAME_LAUNCHES ? t->nlaunches : 0) +
		   (sets & NAME_LAUNCH_SITES ? t->nlaunches : 0) +
		   (sets & NAME_OFF_CPU ? t->noffcpus : 0) +
		   (sets & NAME_AG_NODES ? t->nag_nodes : 0) +
		   (sets & NAME_STOPS ? s->uw.nstop_recs : 0) +
		   (sets & NAME_ALLOC_SITES ? t->nmemories : 0) +
		   (sets & NAME_BACKWARD ? t->nlaunches : 0) +
		   (sets & NAME_GRAPH_SITES ? 2 * (t->nkernels + t->nmemcpys + t->nmemsets) : 0) +
		   (sets & NAME_GPU_SITES ? t->nkernels + t->nmemcpys + t->nmemsets + t->napis +
						    t->nsyncs : 0);
	/*
	 * In the order the outputs met them before this phase (samples, launches, the rest of
	 * the profile): names get their ids in order, and text breaks ties between equal rows
	 * by them.
	 */
	if (sets & NAME_PROFILE)
		err = name_profile(&nm, p, true);
	if (!err)
		err = name_events(&nm, sets);
	if (!err && (sets & NAME_BACKWARD))
		err = name_backward(&nm);
	if (!err && (sets & NAME_STOPS))
		err = name_stops(&nm);
	if (!err && (sets & NAME_PROFILE))
		err = name_profile(&nm, p, false);
	if (!err && (sets & NAME_GPU_SITES))
		err = name_gpu_sites(&nm);
	if (!err && (sets & NAME_ALLOC_SITES))
		err = name_alloc_sites(&nm);
	if (!err && (sets & NAME_GRAPH_SITES))
		err = name_graph_sites(&nm);
	if (!err && (sets & NAME_PROFILE))
		err = fix_profile(s, p);
	for (i = 0; !err && (sets & NAME_DSOS) && i < t->ndsos; i++)
		dso_table__file(&s->dsos, i);
	if (!err && (sets & NAME_PROFILE))
		err = profile__filter_dsos(p);
	if (!err)
		session__warn_naming(s);
	return err;
}
