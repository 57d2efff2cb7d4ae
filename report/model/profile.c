// SPDX-License-Identifier: MIT
/* Aggregation of samples and GPU work into weighted stacks (see profile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "model/view.h"

static uint32_t *frames_buf;
static size_t frames_cap;
static struct frame_site *sites_buf;
static size_t sites_cap;
static uint32_t *files_buf;
static size_t files_cap;

/*
 * Adds to the entry of (pid, exec generation, stack, leaf), and with per_thread of the thread
 * and device too: {pid, tid, device} then gets a key id of its own, in place of the pid.
 * amount is of kind: GPU time, an off-CPU block's time (counted in off_n) or bytes.
 */
enum measure { MEASURE_NONE, MEASURE_GPU_NS, MEASURE_OFF_NS, MEASURE_BYTES };

/* The capture half of a graph work's entry (prof_entry.cap_*), NULL for any other. */
struct cap_part {
	uint32_t stack, mid;
	uint64_t ts;
};

static int profile_add_ctx(struct profile *p, uint32_t pid, uint32_t tid, uint32_t device,
			   uint64_t ts, uint32_t stack_id, uint32_t leaf, bool trim,
			   uint64_t samples, enum measure kind, uint64_t amount,
			   const struct cap_part *cap)
{
	uint64_t gen = trace__generation(p->s->t, pid, ts) & 0x7fffffff, key = pid;
	uint64_t b = (uint64_t)stack_id << 32 | leaf;
	struct prof_entry e = { .pid = pid, .stack_id = stack_id, .leaf = leaf, .trim = trim,
				.ts = ts };
	struct kmap *idx = &p->idx;
	uint32_t *v;
	bool ins;

	if (cap) {
		/*
		 * Keyed apart (cap_idx), by the pair of stacks in place of the stack: the key
		 * of an ordinary entry has no bit to spare
		 */
		v = kmap__put(&p->cap_pairs, stack_id, cap->stack, p->ncap_pairs, &ins);
		if (!v)
			return -ENOMEM;
		p->ncap_pairs += ins;
		b = (uint64_t)*v << 32 | leaf;
		idx = &p->cap_idx;
		e.cap_stack = cap->stack;
		e.cap_ts = cap->ts;
		e.mid = cap->mid;
	}

	if (p->per_thread) {
		v = kmap__put(&p->ctx_idx, pid, (uint64_t)tid << 32 | device, p->nctx, &ins);
		if (!v)
			return -ENOMEM;
		p->nctx += ins;
		key = *v;
		e.tid = tid;
		e.device = device;
	}
	v = kmap__put(idx, key << 32 | gen << 1 | trim, b, p->n, &ins);
	if (!v)
		return -ENOMEM;
	if (ins && VEC_PUSH(p->e, p->n, p->cap, e))
		return -ENOMEM;
	p->e[*v].samples += samples;
	if (kind == MEASURE_GPU_NS)
		p->e[*v].gpu_ns += amount;
	else if (kind == MEASURE_OFF_NS)
		p->e[*v].off_ns += amount;
	else if (kind == MEASURE_BYTES)
		p->e[*v].bytes += amount;
	p->e[*v].gpu_n += !samples && kind != MEASURE_OFF_NS;
	p->e[*v].off_n += kind == MEASURE_OFF_NS;
	return 0;
}

const char *off_cpu_state_name(uint16_t state)
{
	switch (state) {
	case XPU_OFF_PREEMPTED: return "preempted";
	case XPU_OFF_SLEEPING: return "sleeping";
	case XPU_OFF_BLOCKED: return "blocked (D)";
	default: return "other";
	}
}

/* "[off-cpu] sleeping" and the like, per state */
static uint32_t off_leaf(struct strpool *names, uint16_t state)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "[off-cpu] %s", off_cpu_state_name(state));
	return frame_intern(names, buf, strlen(buf));
}

/* Blocked time, the part of each block inside --time-range, under the stack it blocked in. */
static int add_off_cpu(struct profile *p, struct session *s)
{
	const struct filter *f = &p->s->filter;
	const struct trace *t = p->s->t;
	size_t i;
	int err;

	for (i = 0; i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];
		uint64_t a = o->ts_ns, b = o->ts_ns + o->dur_ns;
		uint32_t leaf;

		if (!filter__span(f, o->pid, o->tid, a, b)) {
			p->filtered_out++;
			continue;
		}
		if (f->has_range) {
			a = a > f->r0 ? a : f->r0;
			b = b < f->r1 ? b : f->r1;
		}
		leaf = off_leaf(&s->pool, o->state);
		if (!leaf)
			return -ENOMEM;
		err = profile_add_ctx(p, o->pid, o->tid, 0, o->ts_ns,
				      session__offcpu_stack(p->s, i), leaf, false, 0, MEASURE_OFF_NS,
				      b > a ? b - a : 0, NULL);
		if (err)
			return err;
		p->off_blocks++;
		p->off_ns += b > a ? b - a : 0;
	}
	return 0;
}

static int add_samples(struct profile *p)
{
	const struct trace *t = p->s->t;
	size_t i;
	int err;

	for (i = 0; i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];

		if (!filter__at(&p->s->filter, s->pid, s->tid, s->ts_ns)) {
			p->filtered_out++;
			continue;
		}
		err = profile_add_ctx(p, s->pid, s->tid, 0, s->ts_ns, session__sample_stack(p->s, i),
				      0, false, 1, MEASURE_NONE, 0, NULL);
		if (err)
			return err;
		p->cpu_samples++;
	}
	return 0;
}

/*
 * Work replayed from a CUDA graph node whose capture stack is known (gpu_graph.h): that stack
 * and the frame between it and the replay's, as --cuda-graphs orders them; NULL to leave the
 * work under its replay's stack alone.
 */
static const struct cap_part *capture_part(const struct profile *p, const struct gpu_work *w,
					   uint32_t mid, struct cap_part *cp)
{
	if (!w->capture || !mid)
		return NULL;
	cp->stack = session__launch_stack(p->s, w->capture - 1);
	cp->ts = p->s->t->launches[w->capture - 1].ts_ns;
	cp->mid = mid;
	return cp;
}

/* The marker frame --cuda-graphs puts between the two stacks; 0 for replay-only. */
static int graph_marker(struct session *s, uint32_t *mid)
{
	const char *name = s->opts->graphs == GRAPHS_CAPTURE_FIRST ? "[graph] replayed" :
									"[graph] captured";

	*mid = 0;
	if (s->opts->graphs == GRAPHS_REPLAY_ONLY)
		return 0;
	*mid = frame_intern(&s->pool, name, strlen(name));
	return *mid ? 0 : -ENOMEM;
}

/* GPU work under the stack of its launch; without one, under "[no stack]" (stack 0). */
static int add_gpu(struct profile *p, struct session *s)
{
	const struct gpu_join *j;
	uint32_t mid;
	size_t i;
	int err;

	err = session__join_gpu(s);
	if (err)
		return err;
	/* interned only for a trace with graph work: frame ids order text's ties */
	mid = 0;
	for (i = 0; i < session__gpu(s)->n; i++)
		if (session__gpu(s)->w[i].capture)
			break;
	if (i < session__gpu(s)->n && (err = graph_marker(s, &mid)))
		return err;
	j = session__gpu(s);
	for (i = 0; i < j->n; i++) {
		const struct gpu_work *w = &j->w[i];
		const struct xpu_rec_gpu_launch *l = w->launch ? &p->s->t->launches[w->launch - 1] :
								 NULL;
		struct cap_part cp;
		const struct cap_part *cap;

		if (!w->keep) {
			p->filtered_out++;
			continue;
		}
		cap = capture_part(p, w, mid, &cp);
		err = profile_add_ctx(p, w->pid, w->tid, w->device + 1, l ? l->ts_ns : w->start,
				      l ? session__launch_stack(p->s, w->launch - 1) : 0, w->leaf,
				      true, 0, MEASURE_GPU_NS, w->end > w->start ? w->end - w->start : 0,
				      cap);
		if (err)
			return err;
		p->gpu_unmatched += !l;
		p->gpu_records++;
	}
	return 0;
}

static int parse_dsos(struct profile *p, const char *arg)
{
	char *tok, *save = NULL;

	p->dso_buf = strdup(arg);
	if (!p->dso_buf)
		return -ENOMEM;
	for (tok = strtok_r(p->dso_buf, ",", &save); tok && p->ndsos < FILTER_MAX_COMMS;
	     tok = strtok_r(NULL, ",", &save)) {
		const char *b = strrchr(tok, '/');

		/* a path names its file: frames know files by basename */
		p->dsos[p->ndsos++] = b && b[1] ? b + 1 : tok;
	}
	return 0;
}

bool profile__dso_match(const struct profile *p, uint32_t file)
{
	const char *d;
	int i;

	if (!p->ndsos)
		return true;
	d = session__file_name(p->s, file);
	for (i = 0; i < p->ndsos; i++) {
		if (!strcmp(d, p->dsos[i]))
			return true;
	}
	return false;
}

int profile__filter_dsos(struct profile *p)
{
	size_t i, k = 0;
	int err;

	if (!p->ndsos)
		return 0;
	for (i = 0; i < p->n; i++) {
		const uint32_t *f, *files;
		uint32_t n, j;

		err = profile__frames_files(p, &p->e[i], &f, &files, &n);
		if (err)
			return err;
		for (j = 1; j < n && !profile__dso_match(p, files[j]); j++)	/* f[0]: comm */
			;
		if (j < n) {
			p->e[k++] = p->e[i];
			continue;
		}
		p->filtered_out += p->e[i].samples + p->e[i].gpu_n + p->e[i].off_n;
		p->cpu_samples -= p->e[i].samples;
		p->gpu_records -= p->e[i].gpu_n;
		p->off_blocks -= p->e[i].off_n;
		p->off_ns -= p->e[i].off_ns;
	}
	p->n = k;
	kmap__free(&p->idx);	/* indexes moved; nothing is added after this */
	kmap__free(&p->cap_idx);
	return 0;
}

/* "[gpu] alloc device" and the like, per memory kind */
static uint32_t alloc_leaf(struct strpool *names, uint8_t kind)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "[gpu] alloc %s", memory_kind_name(kind));
	return frame_intern(names, buf, strlen(buf));
}

/* The memory view: allocations held at the peak under their allocating call's stack. */
static int add_memory(struct profile *p, struct session *s)
{
	const struct trace *t = p->s->t;
	const struct gpu_mem *m;
	size_t i;
	int err;

	err = session__join_gpu(s);
	if (err)
		return err;
	m = session__gpu_mem(s);
	for (i = 0; i < m->n; i++) {
		const struct xpu_rec_gpu_memory *x = &t->memories[i];
		const struct xpu_rec_gpu_launch *l = m->r[i].launch ?
			&t->launches[m->r[i].launch - 1] : NULL;
		uint32_t leaf;

		if (x->op != XPU_GPU_MEM_ALLOC)
			continue;
		if (!m->r[i].keep) {
			p->filtered_out++;
			continue;
		}
		if (!m->r[i].at_peak)
			continue;
		leaf = alloc_leaf(&s->pool, x->mem_kind);
		if (!leaf)
			return -ENOMEM;
		err = profile_add_ctx(p, x->pid, 0, x->device + 1, l ? l->ts_ns : x->ts_ns,
				      l ? session__launch_stack(p->s, m->r[i].launch - 1) : 0, leaf,
				      true, 0, MEASURE_BYTES, x->bytes, NULL);
		if (err)
			return err;
		p->gpu_unmatched += !l;
		p->gpu_records++;
	}
	return 0;
}

int profile__build(struct profile *p, struct session *s)
{
	unsigned int adds = view__def(s->opts->view)->adds;
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->s = s;
	p->per_thread = s->opts->format == FMT_PPROF;
	if (s->opts->dsos)
		err = parse_dsos(p, s->opts->dsos);
	if (!err && (adds & VIEW_ADDS_MEMORY))
		err = add_memory(p, s);
	if (!err && (adds & VIEW_ADDS_SAMPLES))
		err = add_samples(p);
	if (!err && (adds & VIEW_ADDS_OFF_CPU))
		err = add_off_cpu(p, s);
	if (!err && (adds & VIEW_ADDS_GPU))
		err = add_gpu(p, s);
	return err;
}

int profile__frames(const struct profile *p, const struct prof_entry *e, const uint32_t **frames,
		    uint32_t *n)
{
	const struct frame_site *sites;

	return profile__frames_sites(p, e, frames, &sites, n);
}

/* Appends n frames (files, and sites with use_sites) at k; the new k. */
static uint32_t put_part(const struct profile *p, uint32_t k, const uint32_t *f,
			 const uint32_t *files, const struct frame_site *sites, bool use_sites,
			 uint32_t n)
{
	if (!n)
		return k;
	memcpy(frames_buf + k, f, n * sizeof(*f));
	memcpy(files_buf + k, files ? files : session__files(p->s, f), n * sizeof(*files_buf));
	if (use_sites && sites)
		memcpy(sites_buf + k, sites, n * sizeof(*sites));
	return k + n;
}

static uint32_t put_mid(const struct prof_entry *e, uint32_t k)
{
	files_buf[k] = 0;
	frames_buf[k] = e->mid;
	return k + 1;
}

/* An entry's frames, with their sites (NULL without) and files: profile__frames_*(). */
static int frames_of(const struct profile *p, const struct prof_entry *e,
		     const uint32_t **frames, const struct frame_site **sites,
		     const uint32_t **files, uint32_t *n)
{
	const struct frame_site *ss = e->sites, *cs = e->cap_sites;
	const uint32_t *sf = e->frames, *cf = e->cap_frames;
	uint32_t sn = e->nframes, cn = e->cap_nframes, k = 0, all, same;
	int err;

	/* not named: the lookup says so (or finds it, named for another output's needs) */
	if (!sf) {
		err = session__stack(p->s, e->pid, e->ts, e->stack_id, e->trim, &sf, &sn);
		if (err)
			return err;
		ss = session__sites(p->s, sf);
	}
	if (e->mid && !cf) {
		err = session__stack(p->s, e->pid, e->cap_ts, e->cap_stack, e->trim, &cf, &cn);
		if (err)
			return err;
		cs = session__sites(p->s, cf);
	}
	if (!e->mid)
		cn = 0;
	all = sn + cn + 3;	/* comm, mid, leaf */
	if (vec_reserve((void **)&frames_buf, &frames_cap, all, sizeof(*frames_buf)) ||
	    vec_reserve((void **)&files_buf, &files_cap, all, sizeof(*files_buf)))
		return -ENOMEM;
	*sites = NULL;
	if (ss) {
		if (vec_reserve((void **)&sites_buf, &sites_cap, all, sizeof(*sites_buf)))
			return -ENOMEM;
		memset(sites_buf, 0, all * sizeof(*sites_buf));
		*sites = sites_buf;
	}
	files_buf[k] = 0;
	frames_buf[k++] = e->comm;
	/*
	 * The outer frames both stacks share (the thread's start, main, the serving loop's
	 * callers) are drawn once, before the first part: after the marker comes only what
	 * differs, so the flame graph's width under the marker is the graph's own structure.
	 */
	for (same = 0; e->mid && same < sn && same < cn && sf[same] == cf[same]; same++)
		;
	if (e->mid && p->s->opts->graphs == GRAPHS_CAPTURE_FIRST) {
		k = put_part(p, k, cf, e->cap_files, cs, !!ss, cn);
		k = put_mid(e, k);
		k = put_part(p, k, sf + same, e->files ? e->files + same : NULL,
			     ss ? ss + same : NULL, !!ss, sn - same);
	} else {
		k = put_part(p, k, sf, e->files, ss, !!ss, sn);
		if (e->mid) {
			k = put_mid(e, k);
			k = put_part(p, k, cf + same, e->cap_files ? e->cap_files + same : NULL,
				     cs ? cs + same : NULL, !!ss, cn - same);
		}
	}
	if (e->leaf) {
		files_buf[k] = 0;
		frames_buf[k++] = e->leaf;
	}
	*frames = frames_buf;
	*files = files_buf;
	*n = k;
	return 0;
}

int profile__frames_sites(const struct profile *p, const struct prof_entry *e,
			  const uint32_t **frames, const struct frame_site **sites, uint32_t *n)
{
	const uint32_t *files;

	return frames_of(p, e, frames, sites, &files, n);
}

int profile__frames_files(const struct profile *p, const struct prof_entry *e,
			  const uint32_t **frames, const uint32_t **files, uint32_t *n)
{
	const struct frame_site *sites;

	return frames_of(p, e, frames, &sites, files, n);
}

double profile__weight(const struct profile *p, uint64_t samples, uint64_t measured)
{
	uint32_t hz = p->s->freq_hz;

	if (p->s->opts->view == VIEW_MEMORY)
		return (double)measured;
	if (p->s->weight == WEIGHT_TIME)
		return ((double)samples * 1e9 / hz + (double)measured) / 1e3;
	return (double)samples + (double)measured * hz / 1e9;
}

double profile__total_weight(const struct profile *p)
{
	double w = 0;
	size_t i;

	for (i = 0; i < p->n; i++)
		w += profile__weight(p, p->e[i].samples, prof_entry__measured(&p->e[i]));
	return w;
}

void profile__free(struct profile *p)
{
	kmap__free(&p->idx);
	kmap__free(&p->cap_idx);
	kmap__free(&p->cap_pairs);
	kmap__free(&p->ctx_idx);
	free(p->e);
	free(p->dso_buf);
	free(frames_buf);
	frames_buf = NULL;
	frames_cap = 0;
	free(sites_buf);
	sites_buf = NULL;
	sites_cap = 0;
	free(files_buf);
	files_buf = NULL;
	files_cap = 0;
	memset(p, 0, sizeof(*p));
}
