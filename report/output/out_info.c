// SPDX-License-Identifier: MIT
/* `--format=info`: what is in the file and how complete it is, without symbolizing stacks. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/backward_share.h"
#include "model/losses.h"
#include "model/off_cpu_stats.h"
#include "model/session.h"
#include "model/stack_stats.h"
#include "output/out.h"
#include "output/text/text.h"
#include "stat_names.h"

static const char *end_name(enum trace_reader_end e)
{
	switch (e) {
	case TRACE_END_CLEAN: return "clean (trailer present)";
	case TRACE_END_NO_TRAILER: return "no trailer (recorder did not finish)";
	case TRACE_END_TRUNCATED: return "truncated";
	case TRACE_END_CORRUPT: return "corrupt";
	case TRACE_END_LIMIT: return "not read to the end (--max-records)";
	default: return "unknown";
	}
}

static const char *reason_name(uint32_t r)
{
	switch (r) {
	case XPU_END_TARGET_EXITED: return "target exited";
	case XPU_END_SIGNAL: return "signal";
	case XPU_END_ERROR: return "error";
	case XPU_END_DURATION: return "duration reached";
	default: return "unknown";
	}
}

/*
 * One line per loss source (a long recording of many short processes has hundreds of LOST
 * records); -v adds every record.
 */
/* CUDA graph capture sites (model/gpu_graph.h): what became of the replayed work kept. */
static void print_graphs(const struct session *ses, FILE *out)
{
	const struct gpu_join *j = session__gpu(ses);
	uint64_t replayed = 0;
	int f;

	if (!j || !j->graph_tracked)
		return;
	for (f = GRAPH_MAPPED; f < GRAPH_FATES; f++)
		replayed += j->graph_fates[f];
	if (!replayed && !ses->t->ngraph_nodes)
		return;
	fprintf(out, "cuda graphs\n");
	fprintf(out, "  %-34s %zu\n", "node records", ses->t->ngraph_nodes);
	if (j->graph.bad_records)
		fprintf(out, "  %-34s %" PRIu64 "\n", "bad node records", j->graph.bad_records);
	fprintf(out, "  %-34s %" PRIu64 "\n", "replayed records", replayed);
	for (f = GRAPH_MAPPED; f < GRAPH_FATES; f++)
		fprintf(out, "  %-34s %" PRIu64 "\n", gpu_graph__fate_name(f), j->graph_fates[f]);
}

static void print_lost(const struct session *ses, FILE *out)
{
	const struct trace *t = ses->t;
	struct losses l;
	uint32_t src;
	size_t i;

	losses__sum(t, &l);
	fprintf(out, "lost\n");
	for (src = 0; src < LOSS_SOURCES; src++) {
		if (l.records[src] && (l.count[src] || src != XPU_LOST_MAPPINGS))
			fprintf(out, "  %-16s %" PRIu64 " in %" PRIu64 " record%s\n",
				losses__name(src), l.count[src], l.records[src],
				l.records[src] == 1 ? "" : "s");
	}
	if (l.exited_unseen)
		fprintf(out, "  %-16s %" PRIu64 " processes exited before their mappings were read "
			"(none had samples: nothing lost)\n", "short-lived", l.exited_unseen);
	for (i = 0; ses->opts->verbose && i < t->nlost; i++)
		fprintf(out, "    %-14s %" PRIu64 " (pid %u, at %" PRIu64 " ns)\n",
			losses__name(t->lost[i].source), t->lost[i].count, t->lost[i].pid,
			t->lost[i].ts_ns);
	if (!t->nlost)
		fprintf(out, "  (none)\n");
}

/* Prints a string field, cut like names; NUL-separated lists (argv) are joined with spaces. */
static void print_str(const struct trace *t, FILE *out, const char *label, uint32_t id)
{
	const uint32_t *v = id ? kmap__get(&t->string_ids, id, 0) : NULL;
	uint32_t i, len, n;
	const char *s;

	fprintf(out, "  %-16s ", label);
	if (!v) {
		fprintf(out, "%s\n", id ? "(unknown string)" : "-");
		return;
	}
	s = t->strings[*v].s;
	len = t->strings[*v].len;
	while (len && s[len - 1] == '\0')
		len--;
	n = str__cut_len(s, len, OUT_NAME_MAX_BYTES);
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		fputc(c == '\0' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : c, out);
	}
	fputs(n < len ? "...\n" : "\n", out);
}

struct stop_row {
	uint8_t reason;
	uint32_t frame;		/* outermost frame's name id */
	uint64_t count;
};

static int cmp_stop_row(const void *a, const void *b)
{
	const struct stop_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->reason != y->reason)
		return CMP(x->reason, y->reason);
	return CMP(x->frame, y->frame);
}

/*
 * Where walks that did not reach the outermost frame ended: counts per reason and per
 * outermost frame, most frequent first, so a user sees which library lacks CFI or whether a
 * bigger copy would help.
 */
static int print_stops(const struct session *ses, FILE *out, size_t top)
{
	const struct unwind_stats *st = &ses->uw;
	struct stop_row *rows = NULL;
	size_t nrows = 0, cap = 0, i;
	struct kmap idx = { 0 };
	int err = 0, r;

	fprintf(out, "  %-16s", "dwarf stops");
	for (r = 0; r < UW_STOP_N; r++)
		fprintf(out, "%s %s %" PRIu64, r ? "," : "", session__stop_name(r), st->stops[r]);
	fprintf(out, "\n");
	for (i = 0; i < st->nstop_recs; i++) {
		const struct unwind_stop_rec *s = &st->stop_recs[i];
		struct stop_row row = { .reason = s->reason };
		const uint32_t *f;
		uint32_t n, *v;
		bool ins;

		if (s->reason == UW_STOP_OUTERMOST)
			continue;
		err = session__stack(ses, s->pid, s->ts, s->stack_id, false, &f, &n);
		if (err)
			goto out;
		row.frame = n ? f[0] : 0;
		v = kmap__put(&idx, row.reason, row.frame, nrows, &ins);
		if (!v || (ins && VEC_PUSH(rows, nrows, cap, row))) {
			err = -ENOMEM;
			goto out;
		}
		rows[*v].count += s->count;
	}
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), cmp_stop_row);
	for (i = 0; i < nrows && i < top; i++)
		fprintf(out, "    %10" PRIu64 "  %-10s at %s\n", rows[i].count,
			session__stop_name(rows[i].reason),
			rows[i].frame ? strpool__str(&ses->pool, rows[i].frame) : "?");
	if (nrows > top)
		fprintf(out, "    (%zu more)\n", nrows - top);
out:
	free(rows);
	kmap__free(&idx);
	return err;
}

/* With a filter: how many CPU samples and GPU records pass it, the set every format shows. */
static int print_selected(const struct session *ses, FILE *out)
{
	const struct trace *t = ses->t;
	const struct gpu_join *j;
	uint64_t cpu = 0, gpu = 0;
	size_t i;

	if (!filter__active(&ses->filter))
		return 0;
	j = session__gpu(ses);
	if (!j)
		return -ENOMEM;
	for (i = 0; i < t->nsamples; i++)
		cpu += filter__at(&ses->filter, t->samples[i].pid, t->samples[i].tid,
				  t->samples[i].ts_ns);
	for (i = 0; i < j->n; i++)
		gpu += j->w[i].keep;
	fprintf(out, "filter\n");
	fprintf(out, "  %-16s %" PRIu64 " of %zu\n", "cpu samples", cpu, t->nsamples);
	fprintf(out, "  %-16s %" PRIu64 " of %zu\n", "gpu records", gpu, j->n);
	return 0;
}

/*
 * Multi-trace: each trace merged, where it starts on the shared axis, the uncertainty of its
 * clock-sync pairs and the shift that put it there; then each process's host and rank.
 */
static void print_places(const struct session *ses, FILE *out)
{
	const struct trace *t = ses->t;
	char cb[32], cut[OUT_NAME_MAX_BYTES + 4], cut2[OUT_NAME_MAX_BYTES + 4];
	size_t i;

	if (t->nparts > 1) {
		fprintf(out, "traces\n");
		for (i = 0; i < t->nparts; i++) {
			const struct tr_part *p = &t->parts[i];
			const char *h = p->has_session ? trace__string(t, p->session.host_str) : NULL;

			fprintf(out, "  %-16s %s\n", "file", p->path);
			fprintf(out, "    %-14s %s\n", "host",
				h && *h ? str__cut(h, OUT_NAME_MAX_BYTES, cut) : "?");
			if (p->has_session && t->has_session)
				fprintf(out, "    %-14s %+.6f s\n", "starts at",
					((double)p->session.start_mono_ns -
					 (double)t->session.start_mono_ns) / 1e9);
			fprintf(out, "    %-14s %zu pairs, +-%" PRIu64 " to %" PRIu64 " ns\n",
				"clock sync", p->nclocks, p->clock_unc_min_ns, p->clock_unc_max_ns);
			fprintf(out, "    %-14s %+" PRId64 " ns%s\n", "shift", p->rm.shift_ns,
				p->rm.shift_ns ? " (realtime: as good as the hosts' clock sync)" :
						 "");
			if (p->rm.task_base)
				fprintf(out, "    %-14s +%u (they collide with an earlier trace's)\n",
					"pids moved", p->rm.task_base);
		}
		fprintf(out, "  %-16s %s\n", "alignment",
			"one host: its CLOCK_MONOTONIC; across hosts: CLOCK_REALTIME, assumed "
			"synchronized (NTP/PTP)");
	}
	if (!t->npenvs)
		return;
	fprintf(out, "ranks\n");
	for (i = 0; i < t->npenvs; i++) {
		const struct xpu_rec_process_env *e = &t->penvs[i];

		fprintf(out, "  pid %u (%s): rank %d local_rank %d world_size %d "
			"local_world_size %d%s%s\n", session__process_pid(ses, e->pid),
			str__cut(trace__comm(t, e->pid, cb, sizeof(cb)), OUT_NAME_MAX_BYTES, cut),
			e->rank, e->local_rank, e->world_size, e->local_world_size,
			t->nparts > 1 ? " on " : "",
			t->nparts > 1 ? str__cut(session__process_host(ses, e->pid),
						 OUT_NAME_MAX_BYTES, cut2) : "");
	}
}

/* Files looked up on the debuginfod servers of DEBUGINFOD_URLS while reading the DSOs above. */
static void print_debuginfod(const struct session *ses, FILE *out)
{
	struct debuginfod_stats st;

	session__debuginfod(ses, &st);
	if (!st.asked)
		return;
	fprintf(out, "debuginfod\n");
	fprintf(out, "  %-16s %" PRIu64 " asked, %" PRIu64 " fetched, %" PRIu64
		" that no server had, %" PRIu64 " failed (unreachable, timed out)\n", "files",
		st.asked, st.fetched, st.missing, st.failed);
}

int out_info(const struct session *ses, FILE *out)
{
	const struct trace *t = ses->t;
	const struct xpu_rec_session *s = &t->session;
	size_t i;
	int type;

	fprintf(out, "file\n");
	fprintf(out, "  %-16s %u.%u\n", "format", t->hdr.major, t->hdr.minor);
	fprintf(out, "  %-16s %" PRIu64 " of %" PRIu64 " bytes valid\n", "size",
		t->st.bytes_valid, t->st.file_bytes);
	fprintf(out, "  %-16s %" PRIu64 "\n", "frames", t->st.frames_ok);
	fprintf(out, "  %-16s %" PRIu64 "\n", "records", t->st.records);
	fprintf(out, "  %-16s %s\n", "end", end_name(t->st.end));
	if (t->st.end != TRACE_END_CLEAN && t->st.reason[0])
		fprintf(out, "  %-16s %s\n", "reason", t->st.reason);

	fprintf(out, "session\n");
	if (!t->has_session) {
		fprintf(out, "  (no session record)\n");
	} else {
		print_str(t, out, "host", s->host_str);
		print_str(t, out, "kernel", s->kernel_str);
		print_str(t, out, "arch", s->arch_str);
		print_str(t, out, "recorder", s->version_str);
		print_str(t, out, "command", s->cmdline_str);
		print_str(t, out, "options", s->options_str);
		fprintf(out, "  %-16s %u\n", "cpus", s->ncpu);
		fprintf(out, "  %-16s %u Hz\n", "frequency", s->sample_freq_hz);
		fprintf(out, "  %-16s %s\n", "stacks",
			s->stack_mode == XPU_STACK_DWARF ? "dwarf" :
			s->stack_mode == XPU_STACK_CFI ? "cfi (unwound in BPF)" :
			s->stack_mode == XPU_STACK_FP ? "frame pointer" : "unknown");
		fprintf(out, "  %-16s %s%s%s%s%s%s\n", "flags",
			s->flags & XPU_SESSION_KERNEL_STACKS ? "kernel-stacks " : "",
			s->flags & XPU_SESSION_AUTOGRAD ? "autograd " : "",
			s->flags & XPU_SESSION_CFI_SHORT_COPIES ? "cfi-short-walk-copies " : "",
			s->flags & XPU_SESSION_ATTACHED ? "attached " : "",
			s->flags & XPU_SESSION_OFF_CPU ? "off-cpu " : "",
			s->flags & XPU_SESSION_GPU ? "gpu" : "");
		fprintf(out, "  %-16s %u\n", "target pid", s->target_pid);
		fprintf(out, "  %-16s %" PRIu64 " ns (monotonic)\n", "start", s->start_mono_ns);
	}
	if (t->has_end) {
		fprintf(out, "  %-16s %" PRIu64 " ns (monotonic)\n", "end", t->end.end_mono_ns);
		if (t->has_session && t->end.end_mono_ns >= s->start_mono_ns)
			fprintf(out, "  %-16s %.3f s\n", "duration",
				(t->end.end_mono_ns - s->start_mono_ns) / 1e9);
		fprintf(out, "  %-16s %s\n", "end reason", reason_name(t->end.reason));
		/* a target killed by a signal has no exit code: the recorder stores -1 */
		if (t->end.term_signal)
			fprintf(out, "  %-16s %d (%s)\n", "killed by signal", t->end.term_signal,
				strsignal((int)t->end.term_signal));
		else
			fprintf(out, "  %-16s %d\n", "exit code", t->end.exit_code);
	} else {
		fprintf(out, "  %-16s (no session end record)\n", "end");
	}

	print_places(ses, out);
	fprintf(out, "clock sync\n");
	for (i = 0; i < t->nclocks; i++)
		fprintf(out, "  mono %" PRIu64 " realtime %" PRIu64 " boottime %" PRIu64
			" +-%" PRIu64 " ns\n", t->clocks[i].mono_ns, t->clocks[i].realtime_ns,
			t->clocks[i].boottime_ns, t->clocks[i].uncertainty_ns);
	if (!t->nclocks)
		fprintf(out, "  (none)\n");

	fprintf(out, "records\n");
	for (type = 1; type <= XPU_REC_TYPE_MAX_KNOWN; type++) {
		if (t->type_counts[type])
			fprintf(out, "  %-16s %" PRIu64 "\n", xpu_record_type_name(type),
				t->type_counts[type]);
	}
	fprintf(out, "  %-16s %" PRIu64 "\n", "unknown types", t->unknown_types);

	if (print_selected(ses, out))
		return -ENOMEM;
	{
		char unit[160];

		/* folded output has no header line: its unit is said here, in text and in svg */
		fprintf(out, "weights\n  %-16s %s\n", "text/folded/svg",
			session__weight_unit(ses, unit, sizeof(unit)));
	}

	fprintf(out, "integrity\n");
	fprintf(out, "  %-16s %" PRIu64 "\n", "bad records", t->bad_records);
	fprintf(out, "  %-16s %" PRIu64 "\n", "duplicate ids", t->dup_ids);
	fprintf(out, "  %-16s %" PRIu64 "\n", "bad string refs", t->bad_string_refs);
	fprintf(out, "  %-16s %" PRIu64 "\n", "bad stack refs", t->bad_stack_refs);
	fprintf(out, "  %-16s %" PRIu64 "\n", "bad dso refs", t->bad_dso_refs);
	if (t->ksyms_out_of_order)
		fprintf(out, "  %-16s %" PRIu64 "\n", "ksyms gaps", t->ksyms_out_of_order);

	if (ses->bw.evals || t->nag_probes ||
	    (t->has_session && (t->session.flags & XPU_SESSION_AUTOGRAD))) {
		const struct backward_stats *bw = &ses->bw;

		fprintf(out, "backward attribution\n");
		fprintf(out, "  %-16s %" PRIu64 "\n", "evaluations", bw->evals);
		fprintf(out, "  %-16s %" PRIu64 "\n", "matched", bw->evals_matched);
		fprintf(out, "  %-16s %" PRIu64 "\n", "no forward", bw->unmatched[BW_NO_FORWARD]);
		fprintf(out, "  %-16s %" PRIu64 "\n", "other class", bw->unmatched[BW_OTHER_CLASS]);
		fprintf(out, "  %-16s %" PRIu64 " of %" PRIu64 "\n", "samples", bw->samples_attributed,
			bw->samples);
		fprintf(out, "  %-16s %" PRIu64 " of %" PRIu64 "\n", "launches",
			bw->launches_attributed, bw->launches);
		fprintf(out, "  %-16s %" PRIu64 " of %" PRIu64 "\n", "off-cpu", bw->offcpus_attributed,
			bw->offcpus);
		if (bw->search_cut)
			fprintf(out, "  %-16s %" PRIu64 "\n", "search cut", bw->search_cut);
		if (backward_share__print(ses, out, "  ", "  "))
			return -ENOMEM;
	}
	print_graphs(ses, out);
	print_lost(ses, out);
	if (text__gpu_procs(t, out))
		return -ENOMEM;

	fprintf(out, "stats\n");
	for (i = 0; i < t->nstats; i++)
		fprintf(out, "  %-24s %" PRIu64 "\n", xpu_stat_name(t->stats[i].id), t->stats[i].value);
	if (!t->nstats)
		fprintf(out, "  (none)\n");

	{
		/* each reason's key: a word a script can match */
		static const char *const why_key[STACK_UNKNOWN_NR] = {
			[STACK_UNKNOWN_NO_SYMBOLS] = "unknown",
			[STACK_UNKNOWN_UNMAPPED] = "unmapped",
			[STACK_UNKNOWN_ANON] = "anonymous",
			[STACK_UNKNOWN_NO_FILE] = "no file record",
			[STACK_UNKNOWN_OTHER] = "no file",
		};
		struct stack_completeness c;
		const char *hint;
		int why;

		if (stack_stats__completeness(ses, &c))
			return -ENOMEM;
		fprintf(out, "stacks\n");
		fprintf(out, "  %-16s %" PRIu64 " of %" PRIu64 " cpu samples (%.1f%%)", "complete",
			c.cpu_complete, c.cpu_total,
			c.cpu_total ? 100.0 * c.cpu_complete / c.cpu_total : 0.0);
		if (session__has_gpu(ses))
			fprintf(out, ", %" PRIu64 " of %" PRIu64 " gpu launches (%.1f%%)", c.gpu_complete,
				c.gpu_total, c.gpu_total ? 100.0 * c.gpu_complete / c.gpu_total : 0.0);
		fputc('\n', out);
		for (why = 0; why < STACK_UNKNOWN_NR; why++)
			if (c.unknown[why])
				fprintf(out, "  %-16s %" PRIu64 " (their outermost frames are %s)\n", why_key[why],
					c.unknown[why], stack_stats__unknown_why(why));
		if (ses->sym.stacks_cut)
			fprintf(out, "  %-16s %" PRIu64 " named stacks over %d frames\n", "cut",
				ses->sym.stacks_cut, SYM_STACK_MAX_FRAMES);
		if (ses->sym.stacks_unnamed)
			fprintf(out, "  %-16s %" PRIu64 " past the frames' bound (--max-records)\n",
				"not named", ses->sym.stacks_unnamed);
		if (ses->stacks.refused)
			fprintf(out, "  %-16s %" PRIu64 " past the derived stacks' bound "
				"(--max-records)\n", "not derived", ses->stacks.refused);
		if (ses->uw.copies)
			fprintf(out, "  %-16s %" PRIu64 " copies (%.0f bytes each), %" PRIu64
				" matched, %" PRIu64 " unwound (%.1f frames each), %" PRIu64
				" kept frame pointers\n", "dwarf", ses->uw.copies,
				(double)ses->uw.copy_bytes / ses->uw.copies, ses->uw.matched, ses->uw.used,
				ses->uw.used ? (double)ses->uw.frames / ses->uw.used : 0.0, ses->uw.failed);
		if (ses->uw.fp_frames)
			fprintf(out, "  %-16s %" PRIu64 " frames in %" PRIu64 " walks, %" PRIu64
				" of them by return-address scan (code without CFI: JIT code, "
				"trampolines)\n", "fp fallback", ses->uw.fp_frames, ses->uw.fp_walks,
				ses->uw.fp_scanned);
		if (ses->uw.top_bytes)
			fprintf(out, "  %-16s %.0f bytes below the stack top per copy\n", "dwarf top",
				(double)ses->uw.top_bytes / ses->uw.copies);
		if (ses->uw.used && print_stops(ses, out, 12))
			return -ENOMEM;
		hint = session__unwind_hint(ses, c.cpu_complete + c.gpu_complete,
					    c.cpu_total + c.gpu_total);
		if (hint)
			fprintf(out, "  %-16s %s\n", "hint", hint);
	}
	if (t->npy_runtimes) {
		fprintf(out, "python\n");
		session__print_py_runtimes(ses, out, "  ");
		fprintf(out, "  %-16s %" PRIu64 " cpu samples, %" PRIu64 " gpu launches\n",
			"with frames", ses->py.samples, ses->py.launches);
		fprintf(out, "  %-16s %" PRIu64 " evaluator frames replaced, %" PRIu64
			" frame groups above a native stack that ended early\n", "spliced",
			ses->py.activations, ses->py.outer_groups);
		if (ses->opts->python_interp)
			fprintf(out, "  %-16s none: --python-interp keeps the interpreter's frames "
				"between Python frames\n", "folded");
		else
			fprintf(out, "  %-16s %" PRIu64 " of the interpreter's frames between Python "
				"frames, over the distinct stacks (--python-interp keeps them)\n",
				"folded", session__interp_folded(ses));
	}

	if (session__has_off_cpu(ses))
		off_cpu_stats__info(ses, out);

	if (t->njit_syms) {
		uint64_t syms, invalid, named;

		session__jit_counts(ses, &syms, &invalid, &named);
		fprintf(out, "jit\n");
		fprintf(out, "  %-16s %" PRIu64 " (%" PRIu64 " invalid)\n", "symbols", syms, invalid);
		fprintf(out, "  %-16s %" PRIu64 "\n", "frames named", named);
	}

	fprintf(out, "dsos\n");
	for (i = 0; i < t->ndsos; i++) {
		const struct tr_dso *d = &t->dsos[i];
		char hex[2 * XPU_BUILD_ID_MAX + 1] = "-", cut[OUT_NAME_MAX_BYTES + 4];
		int k;

		for (k = 0; k < d->rec.build_id_len; k++)
			sprintf(hex + 2 * k, "%02x", d->rec.build_id[k]);
		fprintf(out, "  %s %s local: %s\n", hex,
			d->path[0] ? str__cut(d->path, OUT_NAME_MAX_BYTES, cut) : "(unknown path)",
			session__dso_status(ses, i));
	}
	if (!t->ndsos)
		fprintf(out, "  (none)\n");
	print_debuginfod(ses, out);
	return ferror(out) ? -EIO : 0;
}
