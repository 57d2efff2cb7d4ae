/* SPDX-License-Identifier: MIT */
/*
 * The report session: the loaded trace, the options, the DSO table (the files, opened once),
 * the symbolizer with its frame names, the stacks the unwinder and the Python splicer derived,
 * and the GPU-work join. Outputs that need no aggregation (info, chrome, archive) read only this; the aggregation (profile.h) is
 * built on top of it.
 */
#ifndef XPU_REPORT_MODEL_SESSION_H
#define XPU_REPORT_MODEL_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/filter.h"
#include "model/gpu_join.h"
#include "model/gpu_mem.h"
#include "model/kernel_names.h"
#include "model/opts.h"
#include "sym/backward.h"
#include "sym/debuginfod_fetch.h"
#include "sym/dso.h"
#include "sym/pyframes.h"
#include "sym/symbolize.h"
#include "sym/unwind.h"
#include "trace/clock_map.h"
#include "trace/derived_stacks.h"
#include "trace/trace.h"

struct session {
	const struct trace *t;		/* read-only: what is derived from it lives here */
	const struct report_opts *opts;
	struct filter filter;		/* the one filter every output applies */
	struct strpool pool;		/* frame names */
	struct kernel_names kernel_names;	/* demangled once (kernel_names.h) */
	struct clock_map clk;		/* monotonic to realtime: timelines and jsonl */
	struct dso_table dsos;		/* the unwinder and the symbolizer read it */
	struct symbolizer sym;
	struct derived_stacks stacks;	/* DWARF-unwound and Python-spliced stacks */
	uint32_t freq_hz;		/* sampling frequency used to convert GPU time */
	enum report_weight weight;	/* --weight, WEIGHT_AUTO resolved (session__setup) */
	struct unwind_stats uw;		/* -g dwarf traces */
	struct pyframes_stats py;	/* Python frames spliced in */
	struct backward_stats bw;	/* backward work put under its forward stacks */
	struct gpu_join gpu;		/* valid once session__join_gpu() succeeded */
	bool gpu_built;
	struct gpu_mem mem;		/* likewise */
	bool mem_built;
};

/*
 * Sets up the filter and the symbolizer, then derives the stacks every output sees: DWARF-unwound user
 * stacks (-g dwarf), then Python frames spliced in, then PyTorch's backward work put under
 * the forward stacks that caused it (unless --no-backward). 0 or negative errno (-EINVAL: a bad
 * --comm); teardown either way.
 */
int session__setup(struct session *s, const struct trace *t, const struct report_opts *opts);
/* Whether the trace holds GPU work, launches or API calls (GPU lines are left out if not). */
bool session__has_gpu(const struct session *s);
/*
 * The unit of the weights of text, folded and svg, in words, for their headers and `info`
 * (folded output has no header line). Returns buf.
 */
const char *session__weight_unit(const struct session *s, char *buf, size_t size);
/*
 * Whether any CPU sample, GPU record, API call or off-CPU block passes the filter (a timeline that would be
 * empty is refused). Out of memory counts as true: the output then reports it.
 */
bool session__selects_any(struct session *s);
/* The stack id of t->samples[i] / t->launches[i] that outputs use (derived or the trace's). */
static inline uint32_t session__sample_stack(const struct session *s, size_t i)
{
	return s->stacks.sample_stack[i];
}

static inline uint32_t session__launch_stack(const struct session *s, size_t i)
{
	return s->stacks.launch_stack[i];
}

static inline uint32_t session__offcpu_stack(const struct session *s, size_t i)
{
	return s->stacks.offcpu_stack[i];
}

/* Whether the trace was recorded with --off-cpu (or holds OFF_CPU records anyway). */
bool session__has_off_cpu(const struct session *s);

/*
 * Joins the GPU work and pairs GPU memory (peak found), with the filter applied, once: the
 * aggregation and the naming pass do, so outputs find both built. 0 or -ENOMEM.
 */
int session__join_gpu(struct session *s);
/* The join and the memory session__join_gpu() built; NULL before it ran or when it failed. */
const struct gpu_join *session__gpu(const struct session *s);
const struct gpu_mem *session__gpu_mem(const struct session *s);
/*
 * Multi-trace: where a process ran and its place in a distributed job, for labels (text,
 * info, chrome, pprof). The rank is the process's RANK (PROCESS_ENV, from the injected
 * library) or its nearest ancestor's; -1 when unknown. The host is its trace's SESSION host
 * ("" when unknown). The pid is the one its host knew (merged traces may move colliding ones).
 */
int32_t session__process_rank(const struct session *s, uint32_t pid);
const char *session__process_host(const struct session *s, uint32_t pid);
uint32_t session__process_pid(const struct session *s, uint32_t pid);
/* Whether processes get host/rank labels: several traces, or ranks recorded. */
bool session__has_places(const struct session *s);
/* "host H rank N" (the parts known), for labels; "" when neither. Returns buf. */
const char *session__process_place(const struct session *s, uint32_t pid, char *buf,
				   size_t size);
/*
 * The frames of a stack the naming pass named (naming.h), root first, as symbolizer__stack()
 * gives them (trim: a launch stack less CUDA's frames). -ENOENT if it was not named.
 */
int session__stack(const struct session *s, uint32_t pid, uint64_t ts, uint32_t stack_id,
		   bool trim, const uint32_t **frames, uint32_t *n);
/* The sites (NULL unless kept: pprof) and files of the frames session__stack() gave. */
const struct frame_site *session__sites(const struct session *s, const uint32_t *frames);
const uint32_t *session__files(const struct session *s, const uint32_t *frames);
/* A file code's name (symbolizer__file_name): "libc.so.6", "[kernel.kallsyms]", ... */
const char *session__file_name(const struct session *s, uint32_t file);
/* The file a frame name came from, by basename, and its DSO record (NULL if none). */
const char *session__frame_file(const struct session *s, uint32_t frame);
const struct tr_dso *session__frame_file_rec(const struct session *s, uint32_t frame);
/* Says, once each, what naming cut or left unnamed past its bounds (symbolize.h). */
void session__warn_naming(const struct session *s);
/* JIT symbols: those read, those refused, and the frames they named. */
/*
 * The interpreter's frames between Python frames dropped from the distinct stacks named so
 * far (sym/interp_fold.h; 0 with --python-interp).
 */
uint64_t session__interp_folded(const struct session *s);
void session__jit_counts(const struct session *s, uint64_t *syms, uint64_t *invalid,
			 uint64_t *named);
/* Why a DWARF walk ended, in a word (unwind.h), for info's "dwarf stops". */
const char *session__stop_name(enum unwind_stop r);
/* The hint for mostly incomplete stacks, complete of total events, or NULL (unwind.h). */
const char *session__unwind_hint(const struct session *s, uint64_t complete, uint64_t total);
/* The Python runtimes the trace found, a line each after prefix (pyframes.h). */
void session__print_py_runtimes(const struct session *s, FILE *out, const char *prefix);
/* What the debuginfod lookups of this run did (sym/debuginfod_fetch.h). */
void session__debuginfod(const struct session *s, struct debuginfod_stats *st);
/* Where the files of the frames named so far came from (symbolize.h), counted by file. */
void session__sources(const struct session *s, struct sym_sources *src);
/* Where DSO record i's file came from, in words, for `info` (NAME_DSOS looked it up). */
const char *session__dso_status(const struct session *s, size_t i);
void session__teardown(struct session *s);

#endif
