// SPDX-License-Identifier: MIT
/*
 * `--format=text`, in the manner of `perf report --stdio`: a header saying what was recorded
 * and what was lost, the top functions by self and by total weight (a function counted once
 * per stack even when recursive), the split by process and thread, then the GPU sections
 * (text.h): kernels, launch sites, busy time, copies, synchronization, matching, memory, ioctls.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/sort.h"
#include "model/backward_share.h"
#include "model/func_table.h"
#include "model/losses.h"
#include "model/off_cpu_stats.h"
#include "model/profile.h"
#include "model/stack_stats.h"
#include "output/out.h"
#include "output/text/text.h"

static void print_cmdline(const struct trace *t, FILE *out)
{
	const uint32_t *v = t->has_session && t->session.cmdline_str ?
				    kmap__get(&t->string_ids, t->session.cmdline_str, 0) : NULL;
	uint32_t i, len, n;

	fprintf(out, "# command:   ");
	if (!v) {
		fprintf(out, "-\n");
		return;
	}
	len = t->strings[*v].len;
	while (len && t->strings[*v].s[len - 1] == '\0')
		len--;
	n = str__cut_len(t->strings[*v].s, len, OUT_NAME_MAX_BYTES);
	for (i = 0; i < n; i++) {
		unsigned char c = t->strings[*v].s[i];

		fputc(c == '\0' ? ' ' : c < 0x20 ? '?' : c, out);
	}
	fputs(n < len ? "...\n" : "\n", out);
}

/*
 * -p: the processes ran before the recording began, so their earlier work is not in it; GPU
 * work only from the moment CUPTI started in each (GPU_PROCESS ATTACHED), said with the time.
 */
static void print_attached(const struct trace *t, FILE *out)
{
	size_t i;

	fprintf(out, "# attached:  to pid %u while it ran: its work before the recording is not in "
		"it\n", (unsigned int)t->session.target_pid);
	for (i = 0; i < t->ngpu_procs; i++) {
		const struct xpu_rec_gpu_process *g = &t->gpu_procs[i];

		if (g->state == XPU_GPU_PROC_ATTACHED)
			fprintf(out, "#            pid %u: GPU work recorded from %+.3f s (CUPTI started "
				"mid-run)\n", (unsigned int)g->pid,
				g->ts_ns >= t->session.start_mono_ns ?
					(g->ts_ns - t->session.start_mono_ns) / 1e9 : 0.0);
	}
}

/* Multi-trace: one line per trace merged, where it starts on the shared axis. */
static void print_parts(const struct trace *t, FILE *out)
{
	size_t i;

	for (i = 0; i < t->nparts; i++) {
		const struct tr_part *pt = &t->parts[i];
		const char *h = pt->has_session ? trace__string(t, pt->session.host_str) : NULL;
		char cut[OUT_NAME_MAX_BYTES + 4];
		double at = pt->has_session && t->has_session ?
				    ((double)pt->session.start_mono_ns -
				     (double)t->session.start_mono_ns) / 1e9 : 0;

		fprintf(out, "# trace %zu:%*s%s: host %s, starts at %+.3f s, clock sync +-%" PRIu64
			" ns\n", i + 1, i + 1 < 10 ? 3 : 2, "", pt->path,
			h && *h ? str__cut(h, OUT_NAME_MAX_BYTES, cut) : "?", at,
			pt->clock_unc_min_ns);
	}
}

/*
 * How a -g cfi trace's stacks were made: walked in BPF, and for the walks that fell short
 * (since 1.7, the default mode) unwound offline from the copies taken with them.
 */
/*
 * Where the names came from, when not all from one place: a report read with part of its
 * files from a pack and part from this machine, or some missing, is not the recording host's.
 */
/* CUDA graphs (model/gpu_graph.h): how much replayed work is under its capture stack. */
static void graphs_line(FILE *out, const struct session *s)
{
	const struct gpu_join *j = session__gpu(s);
	uint64_t all = 0;
	int f;

	if (!j || !j->graph_tracked)
		return;
	for (f = GRAPH_MAPPED; f < GRAPH_FATES; f++)
		all += j->graph_fates[f];
	if (all)
		fprintf(out, "# graphs:    %" PRIu64 " of %" PRIu64 " GPU records replayed from CUDA "
			"graphs are under the stack that captured their node%s\n",
			j->graph_fates[GRAPH_MAPPED], all,
			j->graph_fates[GRAPH_MAPPED] < all ? " (info says why not the others)" : "");
}

static void print_sources(FILE *out, const struct session *ses)
{
	struct sym_sources src;
	const struct {
		const uint32_t *n;
		const char *what;
	} parts[] = {
		{ &src.pack, "from the symbol pack" }, { &src.local, "from this machine" },
		{ &src.archive, "from the archive" }, { &src.debuginfod, "from debuginfod" },
		{ &src.missing, "missing" },
	};
	size_t i, kinds = 0;
	const char *sep = "";

	session__sources(ses, &src);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		kinds += *parts[i].n != 0;
	if (kinds < 2)
		return;
	fputs("# symbols:   files", out);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (!*parts[i].n)
			continue;
		fprintf(out, "%s %u %s", sep, *parts[i].n, parts[i].what);
		sep = ",";
	}
	fputc('\n', out);
}

static void stack_mode_note(FILE *out, const struct session *s)
{
	if (s->uw.used && (s->t->session.flags & XPU_SESSION_CFI_SHORT_COPIES))
		fprintf(out, " (cfi; %" PRIu64 " short walk%s unwound from stack copies)\n",
			s->uw.used, s->uw.used == 1 ? "" : "s");
	else if (s->uw.used)
		fprintf(out, " (cfi,check: unwound from stack copies)\n");
	else
		fprintf(out, " (cfi)\n");
}

/*
 * Where the launch stacks were taken: in the launching thread (and what that cost it, timed
 * one launch in XPU_INPROC_TIME_EVERY by the library) or by BPF at the probed marker.
 */
static void launch_walk_line(FILE *out, const struct trace *t)
{
	uint64_t walks = trace__stat(t, XPU_STAT_INPROC_WALKS);
	uint64_t fb = trace__stat(t, XPU_STAT_INPROC_FALLBACKS);
	uint64_t timed = trace__stat(t, XPU_STAT_INPROC_TIMED);
	uint64_t ns = trace__stat(t, XPU_STAT_INPROC_TIMED_NS);
	uint64_t memo = trace__stat(t, XPU_STAT_INPROC_MEMO_WALKS);
	uint64_t memo_frames = trace__stat(t, XPU_STAT_INPROC_MEMO_FRAMES);

	if (!walks && !fb)
		return;
	fprintf(out, "# launches:  %" PRIu64 " stacks walked in the launching thread, %" PRIu64
		" by BPF", walks, fb);
	if (timed)
		fprintf(out, "; the walk cost %.2f us a launch (%" PRIu64 " timed)",
			(double)ns / (double)timed / 1e3, timed);
	/* the walk memo (cupti/inproc_walk.c): outer frames checked against the last walk */
	if (memo && walks)
		fprintf(out, "; %.0f%% took %.1f frames each from the thread's last walk",
			100.0 * (double)memo / (double)walks, (double)memo_frames / (double)memo);
	fputc('\n', out);
}

static void print_header(const struct profile *p, FILE *out)
{
	const struct trace *t = p->s->t;
	bool gpu = session__has_gpu(p->s);
	struct losses l;
	char unit[160];

	fprintf(out, "# xpu-report\n");
	print_cmdline(t, out);
	print_parts(t, out);
	if (t->has_session && t->has_end && t->end.end_mono_ns >= t->session.start_mono_ns)
		fprintf(out, "# duration:  %.3f s\n",
			(t->end.end_mono_ns - t->session.start_mono_ns) / 1e9);
	/* only an unusual end gets a line: a crash explains a profile that stops short */
	if (t->has_end && t->end.term_signal)
		fprintf(out, "# target:    killed by signal %u (%s)\n", (unsigned int)t->end.term_signal,
			strsignal((int)t->end.term_signal));
	else if (t->has_end && t->end.exit_code > 0)
		fprintf(out, "# target:    exited with status %d\n", (int)t->end.exit_code);
	if (t->has_session && (t->session.flags & XPU_SESSION_ATTACHED))
		print_attached(t, out);
	fprintf(out, "# samples:   %zu at %u Hz%s\n", t->nsamples, p->s->freq_hz,
		t->has_session && t->session.sample_freq_hz ? "" : " (assumed)");
	if (session__has_off_cpu(p->s))
		off_cpu_stats__header(p->s, out);
	if (t->nkernels || t->nmemcpys || t->nmemsets)
		fprintf(out, "# gpu:       %zu kernels, %zu copies, %zu memsets, %zu launches\n",
			t->nkernels, t->nmemcpys, t->nmemsets, t->nlaunches);
	losses__sum(t, &l);
	fprintf(out, "# lost:      ringbuf %" PRIu64 ", stack %" PRIu64, l.count[XPU_LOST_RINGBUF],
		l.count[XPU_LOST_STACK]);
	if (gpu)
		fprintf(out, ", cupti %" PRIu64 ", transport %" PRIu64,
			l.count[XPU_LOST_CUPTI_RECORDS], l.count[XPU_LOST_CUPTI_TRANSPORT]);
	fprintf(out, ", mappings %" PRIu64 ", writer %" PRIu64, l.count[XPU_LOST_MAPPINGS],
		l.count[XPU_LOST_WRITER]);
	if (l.count[XPU_LOST_PY_STACK] || t->npy_runtimes)
		fprintf(out, ", python %" PRIu64, l.count[XPU_LOST_PY_STACK]);
	if (l.count[XPU_LOST_OFF_CPU] || session__has_off_cpu(p->s))
		fprintf(out, ", off-cpu %" PRIu64, l.count[XPU_LOST_OFF_CPU]);
	if (l.count[0])
		fprintf(out, ", other %" PRIu64, l.count[0]);
	fputc('\n', out);
	if (l.exited_unseen)
		fprintf(out, "#            %" PRIu64 " short-lived process%s exited before %s mappings "
			"were read; none had samples, so nothing was lost\n", l.exited_unseen,
			l.exited_unseen == 1 ? "" : "es", l.exited_unseen == 1 ? "its" : "their");
	fprintf(out, "# trace:     %s\n", t->st.end == TRACE_END_CLEAN ? "complete" :
		t->st.end == TRACE_END_CORRUPT ? "corrupt (read up to the damage)" :
		t->st.end == TRACE_END_LIMIT ? "incomplete (read up to --max-records)" : "truncated");
	{
		struct stack_completeness c;
		const char *hint;
		int why;

		/* complete: the outermost frame is main or a thread's start (see unwind.h) */
		if (!stack_stats__completeness(p->s, &c) && c.cpu_total + c.gpu_total) {
			fprintf(out, "# stacks:    %.1f%% of samples complete",
				c.cpu_total ? 100.0 * c.cpu_complete / c.cpu_total : 0.0);
			if (c.gpu_total)
				fprintf(out, ", %.1f%% of launches", 100.0 * c.gpu_complete / c.gpu_total);
			if (p->s->t->has_session && p->s->t->session.stack_mode == XPU_STACK_CFI)
				stack_mode_note(out, p->s);
			else
				fprintf(out, "%s\n", p->s->uw.used ? " (dwarf)" : "");
			for (why = 0; why < STACK_UNKNOWN_NR; why++)
				if (c.unknown[why])
					fprintf(out, "#            unknown for %" PRIu64 " of them: their "
						"outermost frames are %s\n", c.unknown[why],
						stack_stats__unknown_why(why));
			hint = session__unwind_hint(p->s, c.cpu_complete + c.gpu_complete,
						    c.cpu_total + c.gpu_total);
			if (hint)
				fprintf(out, "#            %s\n", hint);
		}
	}
	launch_walk_line(out, t);
	print_sources(out, p->s);
	if (t->npy_runtimes) {
		session__print_py_runtimes(p->s, out, "# python:    ");
		fprintf(out, "#            %" PRIu64 " samples and %" PRIu64 " launches with Python "
			"frames\n", p->s->py.samples, p->s->py.launches);
	}
	if (backward_share__print(p->s, out, "# backward:  ", "#            "))
		return;
	graphs_line(out, p->s);
	if (p->filtered_out)
		fprintf(out, "# filtered:  %" PRIu64 " records left out by --pid/--tid/--comm/--time-range/--dso\n",
			p->filtered_out);
	fprintf(out, "# weight:    %s\n#\n", session__weight_unit(p->s, unit, sizeof(unit)));
}

static int cmp_frow(const void *a, const void *b, void *arg)
{
	const struct func_row *x = a, *y = b;
	bool by_total = *(const bool *)arg;
	double wx = by_total ? x->total : x->self, wy = by_total ? y->total : y->self;

	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->sym != y->sym)
		return CMP(x->sym, y->sym);
	if (x->dso != y->dso)
		return CMP(x->dso, y->dso);
	return CMP(x->comm, y->comm);
}

size_t out__shown_rows(const struct report_opts *o, size_t n, const double *share)
{
	size_t k, max = o->rows ? o->rows : SIZE_MAX;

	for (k = 0; k < n && k < max && share[k] >= o->percent_limit; k++)
		;
	return k;
}

void out__print_more(FILE *out, size_t more, const char *one, const char *many,
		       const struct report_opts *o)
{
	if (more)
		fprintf(out, "(%zu more %s%s)\n", more, more == 1 ? one : many,
			o->percent_limit > 0 ? ", or under --percent-limit" : "");
}

const char *out__fit(const char *s, int w, char *buf)
{
	int len = (int)strlen(s), tail = (w - 3) / 2;

	if (w <= 3 || len <= w)
		return s;
	memcpy(buf, s, w - 3 - tail);
	memcpy(buf + w - 3 - tail, "...", 3);
	memcpy(buf + w - tail, s + len - tail, tail + 1);	/* with the NUL */
	return buf;
}

/* A column of width w (0: the last, as long as s), s cut to fit. */
static void print_column(FILE *out, const char *s, int w, char *fit)
{
	fprintf(out, "  %-*s", w, out__fit(s, w, fit));
}

/* One table of the rows with weight of its kind (self or total), heaviest first. */
static int print_ftab(struct func_table *ft, FILE *out, double total_w, bool by_total)
{
	const struct report_opts *o = ft->p->s->opts;
	const struct strpool *pool = &ft->p->s->pool;
	struct func_row *rows;
	size_t i, k, nshow;
	double *share;
	char fit[OUT_DSO_WIDTH_MAX + 1];
	int dw = 3;

	rows = calloc(ft->n ? ft->n : 1, sizeof(*rows));
	share = calloc(ft->n ? ft->n : 1, sizeof(*share));
	if (!rows || !share) {
		free(rows);
		free(share);
		return -ENOMEM;
	}
	for (i = 0, k = 0; i < ft->n; i++) {	/* rows without weight of this kind go */
		if ((by_total ? ft->r[i].total : ft->r[i].self) > 0)
			rows[k++] = ft->r[i];
	}
	if (k)
		qsort_r(rows, k, sizeof(*rows), cmp_frow, &by_total);
	for (i = 0; i < k; i++)
		share[i] = total_w > 0 ? 100 * (by_total ? rows[i].total : rows[i].self) / total_w : 0;
	nshow = out__shown_rows(o, k, share);
	for (i = 0; i < nshow; i++) {
		int l = (int)strlen(func_table__dso(ft, &rows[i]));

		dw = l > dw ? l : dw;
	}
	dw = dw > OUT_DSO_WIDTH_MAX ? OUT_DSO_WIDTH_MAX : dw;
	fprintf(out, "# top %s by %s\n", ft->key[SORT_SYM] ? "functions" : ft->key[SORT_DSO] ?
		"files" : "processes", by_total ? "total (with children)" : "self");
	fprintf(out, "%8s %12s", "share", by_total ? "total" : "self");
	for (i = 0; i < (size_t)ft->nsort; i++) {
		if (ft->sort[i] == SORT_COMM)
			fprintf(out, "  %-*s", i + 1 < (size_t)ft->nsort ? 16 : 0, "comm");
		else if (ft->sort[i] == SORT_DSO || !ft->key[SORT_DSO])
			fprintf(out, "  %-*s", i + 1 < (size_t)ft->nsort || ft->sort[i] == SORT_SYM ?
				dw : 0, "dso");
		if (ft->sort[i] == SORT_SYM)
			fprintf(out, "  function");
	}
	fputc('\n', out);
	for (i = 0; i < nshow; i++) {
		const struct func_row *r = &rows[i];
		size_t j;

		fprintf(out, "%7.2f%% %12.0f", share[i], by_total ? r->total : r->self);
		for (j = 0; j < (size_t)ft->nsort; j++) {
			if (ft->sort[j] == SORT_COMM)
				print_column(out, strpool__str(pool, r->comm),
					     j + 1 < (size_t)ft->nsort ? 16 : 0, fit);
			else if (ft->sort[j] == SORT_DSO || !ft->key[SORT_DSO])
				print_column(out, func_table__dso(ft, r),
					     j + 1 < (size_t)ft->nsort || ft->sort[j] == SORT_SYM ?
					     dw : 0, fit);
			if (ft->sort[j] == SORT_SYM)
				fprintf(out, "  %s", strpool__str(pool, r->sym));
		}
		fputc('\n', out);
	}
	out__print_more(out, k - nshow, ft->key[SORT_SYM] ? "function" : "row",
		   ft->key[SORT_SYM] ? "functions" : "rows", o);
	fprintf(out, "\n");
	free(rows);
	free(share);
	return 0;
}

static int print_functions(const struct profile *p, FILE *out, double total_w)
{
	struct func_table ft;
	int err;

	err = func_table__build(&ft, p);
	if (!err)
		err = print_ftab(&ft, out, total_w, false);
	if (!err)
		err = print_ftab(&ft, out, total_w, true);
	func_table__free(&ft);
	return err;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct tr_thread *x = a, *y = b;

	if (x->samples != y->samples)
		return CMP(y->samples, x->samples);
	return CMP(x->tid, y->tid);
}

/* Samples per process and per thread that pass the filter, in the trace's order. */
static int count_tasks(const struct session *ses, struct tr_proc **procs, struct tr_thread **threads,
		       uint64_t *total)
{
	const struct trace *t = ses->t;
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

static int cmp_proc(const void *a, const void *b)
{
	const struct tr_proc *x = a, *y = b;

	if (x->samples != y->samples)
		return CMP(y->samples, x->samples);
	return CMP(x->pid, y->pid);
}

/* How many of n rows (sorted, heaviest first) are shown: --rows, --percent-limit, non-zero. */
static size_t task_rows(const struct report_opts *o, size_t n, uint64_t total,
			uint64_t (*samples)(const void *, size_t), const void *arr)
{
	size_t k, max = o->rows ? o->rows : SIZE_MAX;

	for (k = 0; k < n && k < max; k++) {
		uint64_t v = samples(arr, k);

		if (!v || (total && 100.0 * v / total < o->percent_limit))
			break;
	}
	return k;
}

static uint64_t proc_samples(const void *a, size_t i)
{
	return ((const struct tr_proc *)a)[i].samples;
}

static uint64_t thread_samples(const void *a, size_t i)
{
	return ((const struct tr_thread *)a)[i].samples;
}

static size_t nonzero(size_t n, uint64_t (*samples)(const void *, size_t), const void *arr)
{
	size_t k = 0, i;

	for (i = 0; i < n; i++)
		k += samples(arr, i) > 0;
	return k;
}

static int print_tasks(const struct profile *p, FILE *out)
{
	const struct report_opts *o = p->s->opts;
	const struct trace *t = p->s->t;
	struct tr_proc *pr = NULL;
	struct tr_thread *th = NULL;
	size_t i, shown;
	uint64_t total;
	char buf[32];
	int err;

	err = count_tasks(p->s, &pr, &th, &total);
	if (err)
		goto out;
	if (t->nprocs)
		qsort(pr, t->nprocs, sizeof(*pr), cmp_proc);
	if (t->nthreads)
		qsort(th, t->nthreads, sizeof(*th), cmp_thread);
	fprintf(out, "# cpu samples by process\n%8s %10s %8s  %s\n", "share", "samples", "pid", "comm");
	shown = task_rows(o, t->nprocs, total, proc_samples, pr);
	for (i = 0; i < shown; i++) {
		char place[300], cut[OUT_NAME_MAX_BYTES + 4];

		fprintf(out, "%7.2f%% %10" PRIu64 " %8u  %s", total ? 100.0 * pr[i].samples / total : 0,
			pr[i].samples, session__process_pid(p->s, pr[i].pid),
			str__cut(trace__comm(t, pr[i].pid, buf, sizeof(buf)), OUT_NAME_MAX_BYTES,
				 cut));
		/* multi-trace: the host and rank of each process */
		if (session__has_places(p->s) &&
		    *session__process_place(p->s, pr[i].pid, place, sizeof(place)))
			fprintf(out, "  (%s)", place);
		fputc('\n', out);
	}
	out__print_more(out, nonzero(t->nprocs, proc_samples, pr) - shown, "process", "processes", o);
	fprintf(out, "\n# cpu samples by thread\n%8s %10s %8s %8s  %s\n", "share", "samples", "pid",
		"tid", "comm");
	shown = task_rows(o, t->nthreads, total, thread_samples, th);
	for (i = 0; i < shown; i++) {
		const char *c = trace__string(t, th[i].comm_str);
		char cut[OUT_NAME_MAX_BYTES + 4];

		fprintf(out, "%7.2f%% %10" PRIu64 " %8u %8u  %s\n",
			total ? 100.0 * th[i].samples / total : 0, th[i].samples,
			session__process_pid(p->s, th[i].pid), session__process_pid(p->s, th[i].tid),
			str__cut(c ? c : trace__comm(t, th[i].pid, buf, sizeof(buf)),
				 OUT_NAME_MAX_BYTES, cut));
	}
	out__print_more(out, nonzero(t->nthreads, thread_samples, th) - shown, "thread", "threads", o);
	fprintf(out, "\n");
out:
	free(pr);
	free(th);
	return err;
}

int out_text(const struct profile *p, FILE *out)
{
	int err;

	print_header(p, out);
	err = print_functions(p, out, profile__total_weight(p));
	if (!err)
		err = print_tasks(p, out);
	if (!err)
		err = text__gpu(p->s, out);
	if (!err)
		err = text__gpu_memory(p->s, out);
	if (!err)
		err = text__ioctls(p->s, out);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}
