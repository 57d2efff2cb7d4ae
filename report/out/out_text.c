// SPDX-License-Identifier: MIT
/*
 * `--format=text`, in the manner of `perf report --stdio`: a header saying what was recorded
 * and what was lost, the top functions by self and by total weight (a function counted once
 * per stack even when recursive), the split by process and thread, then the GPU sections
 * (gpu_stats.c): kernels, launch sites, busy time, copies, synchronization, matching.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "model/stack_stats.h"
#include "out/gpu_stats.h"

#define TOP_N 25

struct rank {
	uint32_t id;
	double w;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void print_cmdline(struct trace *t, FILE *out)
{
	const uint32_t *v = t->has_session && t->session.cmdline_str ?
				    kmap__get(&t->string_ids, t->session.cmdline_str, 0) : NULL;
	uint32_t i, len;

	fprintf(out, "# command:   ");
	if (!v) {
		fprintf(out, "-\n");
		return;
	}
	len = t->strings[*v].len;
	while (len && t->strings[*v].s[len - 1] == '\0')
		len--;
	for (i = 0; i < len; i++) {
		unsigned char c = t->strings[*v].s[i];

		fputc(c == '\0' ? ' ' : c < 0x20 ? '?' : c, out);
	}
	fputc('\n', out);
}

static void print_header(struct profile *p, FILE *out)
{
	struct trace *t = p->s->t;
	uint64_t lost[8] = { 0 };
	size_t i;

	fprintf(out, "# xpu-report\n");
	print_cmdline(t, out);
	if (t->has_session && t->has_end && t->end.end_mono_ns >= t->session.start_mono_ns)
		fprintf(out, "# duration:  %.3f s\n",
			(t->end.end_mono_ns - t->session.start_mono_ns) / 1e9);
	/* only an unusual end gets a line: a crash explains a profile that stops short */
	if (t->has_end && t->end.term_signal)
		fprintf(out, "# target:    killed by signal %u (%s)\n", (unsigned int)t->end.term_signal,
			strsignal((int)t->end.term_signal));
	else if (t->has_end && t->end.exit_code > 0)
		fprintf(out, "# target:    exited with status %d\n", (int)t->end.exit_code);
	fprintf(out, "# samples:   %zu at %u Hz%s\n", t->nsamples, p->s->freq_hz,
		t->has_session && t->session.sample_freq_hz ? "" : " (assumed)");
	if (t->nkernels || t->nmemcpys || t->nmemsets)
		fprintf(out, "# gpu:       %zu kernels, %zu copies, %zu memsets, %zu launches\n",
			t->nkernels, t->nmemcpys, t->nmemsets, t->nlaunches);
	for (i = 0; i < t->nlost; i++)
		lost[t->lost[i].source < 8 ? t->lost[i].source : 0] += t->lost[i].count;
	fprintf(out, "# lost:      ringbuf %" PRIu64 ", stack %" PRIu64 ", cupti %" PRIu64
		", transport %" PRIu64 ", mappings %" PRIu64 ", writer %" PRIu64 "\n",
		lost[XPU_LOST_RINGBUF], lost[XPU_LOST_STACK], lost[XPU_LOST_CUPTI_RECORDS],
		lost[XPU_LOST_CUPTI_TRANSPORT], lost[XPU_LOST_MAPPINGS], lost[XPU_LOST_WRITER]);
	fprintf(out, "# trace:     %s\n", t->st.end == TRACE_END_CLEAN ? "complete" : "truncated");
	{
		uint64_t cc, ct, gc, gt;
		const char *hint;

		/* complete: the outermost frame is main or a thread's start (see unwind.h) */
		if (!stack_stats__complete_rate(p->s, &cc, &ct, &gc, &gt) && ct + gt) {
			fprintf(out, "# stacks:    %.1f%% of samples complete", ct ? 100.0 * cc / ct : 0.0);
			if (gt)
				fprintf(out, ", %.1f%% of launches", 100.0 * gc / gt);
			fprintf(out, "%s\n", p->s->uw.used ? " (dwarf)" : "");
			hint = unwind__hint(p->s->t, &p->s->uw, cc + gc, ct + gt);
			if (hint)
				fprintf(out, "#            %s\n", hint);
		}
	}
	if (t->npy_runtimes) {
		pyframes__print_runtimes(t, out, "# python:    ");
		fprintf(out, "#            %" PRIu64 " samples and %" PRIu64 " launches with Python "
			"frames\n", p->s->py.samples, p->s->py.launches);
	}
	if (p->filtered_out)
		fprintf(out, "# filtered:  %" PRIu64 " records left out by --pid/--tid/--comm/--time-range\n",
			p->filtered_out);
	fprintf(out, "# weight:    %s\n#\n", p->s->opts->weight == WEIGHT_TIME ? "microseconds" :
		"samples (GPU time converted at the sampling rate)");
}

static int print_functions(struct profile *p, FILE *out, double total_w)
{
	size_t nf, i, nr;
	double *self = NULL, *tot = NULL;
	uint32_t *stamp = NULL;
	struct rank *r = NULL;
	int err = 0, pass;

	/* symbolize everything first so that every frame name has its id */
	for (i = 0; i < p->n; i++) {
		const uint32_t *f;
		uint32_t n;

		err = profile__frames(p, &p->e[i], &f, &n);
		if (err)
			return err;
	}
	nf = p->s->pool.n ? p->s->pool.n : 1;
	self = calloc(nf, sizeof(double));
	tot = calloc(nf, sizeof(double));
	stamp = calloc(nf, sizeof(uint32_t));
	r = calloc(nf, sizeof(*r));
	if (!self || !tot || !stamp || !r) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->n; i++) {
		double w = profile__weight(p, p->e[i].samples, p->e[i].gpu_ns);
		const uint32_t *f;
		uint32_t n, k;

		err = profile__frames(p, &p->e[i], &f, &n);
		if (err)
			goto out;
		if (n < 2)
			continue;
		if (f[n - 1] < nf)
			self[f[n - 1]] += w;
		for (k = 1; k < n; k++) {	/* frame 0 is the process name */
			if (f[k] >= nf || stamp[f[k]] == i + 1)
				continue;
			stamp[f[k]] = i + 1;
			tot[f[k]] += w;
		}
	}
	for (pass = 0; pass < 2; pass++) {
		double *v = pass ? tot : self;

		for (i = 1, nr = 0; i < nf; i++) {
			if (v[i] > 0) {
				r[nr].id = i;
				r[nr++].w = v[i];
			}
		}
		if (nr)
			qsort(r, nr, sizeof(*r), cmp_rank);
		fprintf(out, "# top functions by %s\n", pass ? "total (with children)" : "self");
		fprintf(out, "%8s %12s  %s\n", "share", pass ? "total" : "self", "function");
		for (i = 0; i < nr && i < TOP_N; i++)
			fprintf(out, "%7.2f%% %12.0f  %s\n", total_w > 0 ? 100 * r[i].w / total_w : 0,
				r[i].w, strpool__str(&p->s->pool, r[i].id));
		fprintf(out, "\n");
	}
out:
	free(self);
	free(tot);
	free(stamp);
	free(r);
	return err;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct tr_thread *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Samples per process and per thread that pass the filter, in the trace's order. */
static int count_tasks(struct session *ses, struct tr_proc **procs, struct tr_thread **threads,
		       uint64_t *total)
{
	struct trace *t = ses->t;
	size_t i;

	*procs = calloc(t->nprocs ? t->nprocs : 1, sizeof(**procs));
	*threads = calloc(t->nthreads ? t->nthreads : 1, sizeof(**threads));
	if (!*procs || !*threads)
		return -ENOMEM;
	if (t->nprocs)
		memcpy(*procs, t->procs, t->nprocs * sizeof(**procs));
	if (t->nthreads)
		memcpy(*threads, t->threads, t->nthreads * sizeof(**threads));
	for (i = 0; i < t->nprocs; i++)
		(*procs)[i].samples = 0;
	for (i = 0; i < t->nthreads; i++)
		(*threads)[i].samples = 0;
	*total = 0;
	for (i = 0; i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];
		const uint32_t *pi = kmap__get(&t->proc_ids, s->pid, 0);
		const uint32_t *ti = kmap__get(&t->thread_ids, s->tid, 0);

		if (!filter__at(&ses->filter, s->pid, s->tid, s->ts_ns))
			continue;
		*total += 1;
		if (pi)
			(*procs)[*pi].samples++;
		if (ti)
			(*threads)[*ti].samples++;
	}
	return 0;
}

static int print_tasks(struct profile *p, FILE *out)
{
	struct trace *t = p->s->t;
	struct tr_proc *pr = NULL;
	struct tr_thread *th = NULL;
	size_t i, shown = 0;
	uint64_t total;
	char buf[32];
	int err;

	err = count_tasks(p->s, &pr, &th, &total);
	if (err)
		goto out;
	if (t->nthreads)
		qsort(th, t->nthreads, sizeof(*th), cmp_thread);
	fprintf(out, "# cpu samples by process\n%8s %10s %8s  %s\n", "share", "samples", "pid", "comm");
	for (i = 0; i < t->nprocs; i++) {
		if (!pr[i].samples)
			continue;
		fprintf(out, "%7.2f%% %10" PRIu64 " %8u  %s\n",
			total ? 100.0 * pr[i].samples / total : 0, pr[i].samples, pr[i].pid,
			trace__comm(t, pr[i].pid, buf, sizeof(buf)));
	}
	fprintf(out, "\n# cpu samples by thread\n%8s %10s %8s %8s  %s\n", "share", "samples", "pid",
		"tid", "comm");
	for (i = 0; i < t->nthreads && shown < TOP_N; i++) {
		const char *c = trace__string(t, th[i].comm_str);

		if (!th[i].samples)
			continue;
		shown++;
		fprintf(out, "%7.2f%% %10" PRIu64 " %8u %8u  %s\n",
			total ? 100.0 * th[i].samples / total : 0, th[i].samples,
			th[i].pid, th[i].tid, c ? c : trace__comm(t, th[i].pid, buf, sizeof(buf)));
	}
	fprintf(out, "\n");
out:
	free(pr);
	free(th);
	return err;
}

int out_text(struct profile *p, FILE *out)
{
	double total_w = 0;
	size_t i;
	int err;

	print_header(p, out);
	for (i = 0; i < p->n; i++)
		total_w += profile__weight(p, p->e[i].samples, p->e[i].gpu_ns);
	err = print_functions(p, out, total_w);
	if (!err)
		err = print_tasks(p, out);
	if (!err)
		err = gpu_stats__print_text(p->s, out);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}
