/* SPDX-License-Identifier: MIT */
/*
 * The weighted stacks every output is built from: CPU samples and (through correlate.c) GPU
 * work, aggregated per (pid, exec generation, stack id, GPU leaf) before any symbolization,
 * so each distinct stack is symbolized once however many samples hit it.
 */
#ifndef XPU_REPORT_MODEL_PROFILE_H
#define XPU_REPORT_MODEL_PROFILE_H

#include "model/opts.h"
#include "sym/pyframes.h"
#include "sym/symbolize.h"
#include "sym/unwind.h"
#include "trace/trace.h"

struct prof_entry {
	uint32_t pid;
	uint32_t stack_id;
	uint32_t leaf;		/* frame id of a GPU leaf ("[gpu] kernel"), 0 for CPU samples */
	bool trim;		/* launch stack: CUDA/CUPTI frames are dropped */
	uint64_t ts;		/* first time seen: picks the mappings used to symbolize */
	uint64_t samples;
	uint64_t gpu_ns;
};

struct profile {
	struct trace *t;
	const struct report_opts *opts;
	struct strpool pool;		/* frame names */
	struct symbolizer sym;
	struct prof_entry *e;
	size_t n, cap;
	struct kmap idx;
	uint32_t freq_hz;		/* sampling frequency used to convert GPU time */
	uint64_t cpu_samples, gpu_records, gpu_unmatched, filtered_out;
	struct unwind_stats uw;		/* -g dwarf traces */
	struct pyframes_stats py;	/* Python frames spliced in */
};

int profile__init(struct profile *p, struct trace *t, const struct report_opts *opts);
/* Whether a record of pid/tid passes --pid, --tid and --comm. */
bool profile__keep(struct profile *p, uint32_t pid, uint32_t tid);
int profile__add(struct profile *p, uint32_t pid, uint64_t ts, uint32_t stack_id, uint32_t leaf,
		 bool trim, uint64_t samples, uint64_t gpu_ns);
/* Adds the CPU samples and/or GPU work the view asks for. */
int profile__build(struct profile *p);
/* Frames of an entry, root first: comm, stack frames, GPU leaf. Valid until the next call. */
int profile__frames(struct profile *p, const struct prof_entry *e, const uint32_t **frames,
		    uint32_t *n);
/* Entry weight in the unit --weight asks for (samples, or microseconds), not rounded. */
double profile__weight(const struct profile *p, uint64_t samples, uint64_t gpu_ns);
void profile__free(struct profile *p);

/* correlate.c: joins GPU activity to launch stacks and adds it. */
int correlate__add(struct profile *p);
const char *memcpy_kind_name(uint8_t kind);

#endif
