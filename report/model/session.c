// SPDX-License-Identifier: MIT
/* The report session (see session.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/warn.h"
#include "model/session.h"
#include "model/view.h"
#include "sym/jitsyms.h"

/* Without a SESSION record the rate is unknown; GPU time then converts at this rate. */
#define DEFAULT_FREQ_HZ 1000

int session__setup(struct session *s, const struct trace *t, const struct report_opts *opts)
{
	struct dso_opts dso = {
		.trace_path = opts->input,
		.more_paths = opts->ninputs > 1 ? opts->inputs + 1 : NULL,
		.nmore_paths = opts->ninputs > 1 ? (size_t)opts->ninputs - 1 : 0,
		.symfs = opts->symfs,
		.no_host_files = opts->no_host_files,
		.archive_max_bytes = opts->archive_max_bytes,
		.no_packs = opts->no_packs,
		.verbose = opts->verbose,
	};
	struct sym_opts so = {
		.python_lines = opts->python_lines,
		.python_interp = opts->python_interp,
		.inline_frames = opts->inline_frames,
		.sites = opts->format == FMT_PPROF,	/* addresses and source lines */
		.list_addrs = opts->pack_writer,
	};
	int err;

	memset(s, 0, sizeof(*s));
	s->t = t;
	s->opts = opts;
	s->freq_hz = t->has_session && t->session.sample_freq_hz ? t->session.sample_freq_hz :
								    DEFAULT_FREQ_HZ;
	s->weight = opts->weight;
	/*
	 * GPU work is measured in nanoseconds; counted in sampling periods a short kernel is a
	 * tiny fraction of one, which integer weights (folded, svg) cannot hold. So a view with
	 * GPU work is weighed in time unless samples are asked for; and blocked time is time
	 * (model/view.c says which view is which).
	 */
	if (s->weight == WEIGHT_AUTO) {
		enum view_auto_weight aw = view__def(opts->view)->auto_weight;

		s->weight = aw == VIEW_AUTO_TIME || (aw == VIEW_AUTO_TIME_WITH_GPU &&
						     (t->nkernels || t->nmemcpys || t->nmemsets)) ?
				    WEIGHT_TIME : WEIGHT_SAMPLES;
	}
	err = filter__init(&s->filter, t, opts);
	if (err)
		return err;
	err = kernel_names__build(&s->kernel_names, t);
	if (!err)
		err = clock_map__init(&s->clk, t);
	if (err)
		return err;
	err = derived_stacks__init(&s->stacks, t);
	if (err)
		return err;
	err = dso_table__init(&s->dsos, t, &dso);
	if (err)
		return err;
	err = symbolizer__init(&s->sym, &s->stacks, &s->dsos, &so, &s->pool);
	if (err)
		return err;
	/* -g dwarf: replace user stacks by DWARF-unwound ones before anything aggregates them */
	err = opts->no_unwind ? 0 : unwind__apply(&s->stacks, &s->dsos, opts->pack_writer, &s->uw);
	if (err)
		return err;
	/* then Python frames go where the (now complete) native stacks run the interpreter */
	err = pyframes__apply(&s->stacks, opts->python_lines, &s->py);
	if (err)
		return err;
	/* last: backward work takes the forward stacks, which hold their Python frames by now */
	err = opts->no_backward ? 0 : backward__apply(&s->stacks, &s->bw);
	if (!err && s->stacks.refused)
		warn__once("%" PRIu64 " stacks not derived (DWARF walks, Python frames, backward "
			   "attribution): they passed %" PRIu64 " bytes, the bound of the records "
			   "kept (--max-records); those events keep the stacks recorded",
			   s->stacks.refused, s->stacks.max_bytes);
	return err;
}

void session__warn_naming(const struct session *s)
{
	if (s->sym.stacks_cut)
		warn__once("%" PRIu64 " named stacks cut at %d frames (a symbol pack's runs of "
			   "inline frames): each keeps its outermost frames and ends in \"%s\"",
			   s->sym.stacks_cut, SYM_STACK_MAX_FRAMES, SYM_CUT_FRAME);
	if (s->sym.stacks_unnamed)
		warn__once("%" PRIu64 " stacks not named: the frames named passed %" PRIu64
			   ", as many as the bound of the records kept holds (--max-records); each "
			   "is \"%s\"",
			   s->sym.stacks_unnamed, s->sym.frames_budget, SYM_UNNAMED_FRAME);
}

bool session__has_off_cpu(const struct session *s)
{
	const struct trace *t = s->t;

	return t->noffcpus || (t->has_session && (t->session.flags & XPU_SESSION_OFF_CPU));
}

bool session__has_gpu(const struct session *s)
{
	const struct trace *t = s->t;

	return t->nkernels || t->nmemcpys || t->nmemsets || t->nlaunches || t->napis;
}

const char *session__weight_unit(const struct session *s, char *buf, size_t size)
{
	bool gpu = (view__def(s->opts->view)->adds & (VIEW_ADDS_GPU | VIEW_ADDS_MEMORY)) &&
		   (s->t->nkernels || s->t->nmemcpys || s->t->nmemsets);

	if (s->opts->view == VIEW_OFF_CPU && s->weight == WEIGHT_TIME)
		snprintf(buf, size, "microseconds off-CPU (blocks of at least the recording's "
			 "--off-cpu-min), under the stack each blocked in");
	else if (s->opts->view == VIEW_WALL && s->weight == WEIGHT_TIME)
		snprintf(buf, size, "microseconds of wall time: a CPU sample counts its period, "
			 "%.0f us at %u Hz; a block its time off-CPU", 1e6 / s->freq_hz, s->freq_hz);
	else if (s->opts->view == VIEW_MEMORY)
		snprintf(buf, size, "bytes (GPU memory held at the peak, by allocating stack)");
	else if (s->weight == WEIGHT_TIME)
		snprintf(buf, size, "microseconds (a CPU sample counts its period, %.0f us at %u Hz%s)",
			 1e6 / s->freq_hz, s->freq_hz, gpu ? "; GPU work its duration" : "");
	else if (gpu)
		snprintf(buf, size, "samples (GPU time converted at %u Hz; in folded and svg a GPU "
			 "stack counts at least 1)", s->freq_hz);
	else
		snprintf(buf, size, "samples");
	return buf;
}

bool session__selects_any(struct session *s)
{
	const struct trace *t = s->t;
	const struct gpu_join *j;
	size_t i;

	for (i = 0; i < t->nsamples; i++) {
		if (filter__at(&s->filter, t->samples[i].pid, t->samples[i].tid, t->samples[i].ts_ns))
			return true;
	}
	for (i = 0; i < t->napis; i++) {
		const struct xpu_rec_gpu_api *a = &t->apis[i];

		if (filter__span(&s->filter, a->pid, a->tid, a->start_ns, a->end_ns))
			return true;
	}
	for (i = 0; i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];

		if (filter__span(&s->filter, o->pid, o->tid, o->ts_ns, o->ts_ns + o->dur_ns))
			return true;
	}
	if (session__join_gpu(s))
		return true;
	j = session__gpu(s);
	for (i = 0; i < j->n; i++) {
		if (j->w[i].keep)
			return true;
	}
	return false;
}

int session__join_gpu(struct session *s)
{
	if (!s->gpu_built) {
		if (gpu_join__build(&s->gpu, s->t, &s->filter, &s->kernel_names, &s->pool)) {
			gpu_join__free(&s->gpu);
			return -ENOMEM;
		}
		s->gpu_built = true;
		gpu_graph__warn(s->gpu.graph_fates);
	}
	if (!s->mem_built) {
		if (gpu_mem__build(&s->mem, s->t, &s->gpu, &s->filter)) {
			gpu_mem__free(&s->mem);
			return -ENOMEM;
		}
		s->mem_built = true;
	}
	return 0;
}

const struct gpu_join *session__gpu(const struct session *s)
{
	return s->gpu_built ? &s->gpu : NULL;
}

const struct gpu_mem *session__gpu_mem(const struct session *s)
{
	return s->mem_built ? &s->mem : NULL;
}

int32_t session__process_rank(const struct session *s, uint32_t pid)
{
	const struct xpu_rec_process_env *e = trace__process_env(s->t, pid);

	return e ? e->rank : -1;
}

const char *session__process_host(const struct session *s, uint32_t pid)
{
	return trace__host(s->t, pid);
}

uint32_t session__process_pid(const struct session *s, uint32_t pid)
{
	return trace__real_pid(s->t, pid);
}

bool session__has_places(const struct session *s)
{
	return s->t->nparts > 1 || s->t->npenvs;
}

const char *session__process_place(const struct session *s, uint32_t pid, char *buf,
				   size_t size)
{
	const char *host = session__has_places(s) ? session__process_host(s, pid) : "";
	int32_t rank = session__process_rank(s, pid);
	char tr[32] = "", rk[32] = "";

	/* a pid that another trace used too: which trace it is from tells them apart */
	if (session__process_pid(s, pid) != pid)
		snprintf(tr, sizeof(tr), "%strace %u", *host ? " " : "",
			 trace__part_of(s->t, pid) + 1);
	if (rank >= 0)
		snprintf(rk, sizeof(rk), "%srank %d", *host || *tr ? " " : "", rank);
	snprintf(buf, size, "%s%s%s", host, tr, rk);
	return buf;
}

int session__stack(const struct session *s, uint32_t pid, uint64_t ts, uint32_t stack_id,
		   bool trim, const uint32_t **frames, uint32_t *n)
{
	int err = symbolizer__named(&s->sym, pid, ts, stack_id, trim, frames, n);

	/* the output would print a stack its format's naming set left out: a bug, said once */
	if (err == -ENOENT)
		warn__once("error: stack %u of process %u was not named before the "
			   "output ran (cmd/formats.c's naming set for this format)", stack_id, pid);
	return err;
}

const struct frame_site *session__sites(const struct session *s, const uint32_t *frames)
{
	return symbolizer__sites(&s->sym, frames);
}

const uint32_t *session__files(const struct session *s, const uint32_t *frames)
{
	return symbolizer__files(&s->sym, frames);
}

const char *session__file_name(const struct session *s, uint32_t file)
{
	return symbolizer__file_name(&s->sym, file);
}

const char *session__frame_file(const struct session *s, uint32_t frame)
{
	return symbolizer__frame_dso(&s->sym, frame);
}

const struct tr_dso *session__frame_file_rec(const struct session *s, uint32_t frame)
{
	return symbolizer__frame_dso_rec(&s->sym, frame);
}

uint64_t session__interp_folded(const struct session *s)
{
	return s->sym.interp_folded;
}

void session__jit_counts(const struct session *s, uint64_t *syms, uint64_t *invalid,
			 uint64_t *named)
{
	jitsyms__counts(s->sym.jit, syms, invalid);
	*named = s->sym.jit_named;
}

const char *session__stop_name(enum unwind_stop r)
{
	return unwind__stop_name(r);
}

const char *session__unwind_hint(const struct session *s, uint64_t complete, uint64_t total)
{
	return unwind__hint(s->t, &s->uw, complete, total);
}

void session__print_py_runtimes(const struct session *s, FILE *out, const char *prefix)
{
	pyframes__print_runtimes(s->t, out, prefix);
}

void session__debuginfod(const struct session *s, struct debuginfod_stats *st)
{
	debuginfod_fetch__stats(st);
}

void session__sources(const struct session *s, struct sym_sources *src)
{
	dso_table__sources(&s->dsos, src);
}

const char *session__dso_status(const struct session *s, size_t i)
{
	return dso_table__status(&s->dsos, i);
}

void session__teardown(struct session *s)
{
	symbolizer__free(&s->sym);
	dso_table__free(&s->dsos);
	unwind__free(&s->uw);
	gpu_join__free(&s->gpu);
	gpu_mem__free(&s->mem);
	backward__free(&s->bw);
	derived_stacks__free(&s->stacks);
	filter__free(&s->filter);
	kernel_names__free(&s->kernel_names);
	clock_map__free(&s->clk);
	strpool__free(&s->pool);
	memset(s, 0, sizeof(*s));
}
