/* SPDX-License-Identifier: MIT */
/*
 * A part of the recorder: a feature that session.c runs through its lifecycle without knowing
 * it (Python frames, JIT maps, the unwind tables, the CUPTI receiver...). A part is a row, a
 * const struct rec_part beside its code; record/parts.c lists the rows in the order every
 * verb walks them, and says why that order. Every hook may be NULL, and every hook but wanted
 * and setup is called only for a part whose setup succeeded (it "runs"). All calls come from
 * the session's thread, in this order:
 *
 *   wanted, setup (table order) -> handler (table order, into the process table)
 *   -> the command forked behind its gate, the probes attached
 *   -> first_records (table order; before the drain thread starts, nothing else writes yet)
 *   -> start (table order; the drain runs, the command is still behind its gate)
 *   -> the recording
 *   -> quiesce (table order; sampling still on) -> sampling stopped
 *   -> stop (reverse order; the drain still runs) -> the drain thread stopped
 *   -> collect (reverse order; nothing else writes records any more) -> SESSION_END
 *   -> stats (table order) -> STATS, trace written -> committed (table order; the trace whole
 *      and in place) -> summary (table order)
 *   -> free (reverse order; the process table already gone)
 * A setup that fails midway, or a failed launch, calls stop (with c->aborted) then free.
 */
#ifndef XPU_RECORD_PART_H
#define XPU_RECORD_PART_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "xpu_bpf_abi.h"
#include "xpu_format.h"

struct bpf_state;
struct map_handler;
struct proc_table;
struct procmaps;
struct rb_drain;
struct rb_drain_stats;
struct stat_sink;
struct walk_share;
struct writer_thread;

/* All a part may use of the recording; never struct session (parts must not see it). */
struct rec_ctx {
	const struct record_config *cfg;
	struct bpf_state *bpf;			/* loaded before the first setup */
	struct writer_thread *wt;		/* the trace's writer, started before it */
	struct proc_table *pt;			/* the traced processes */
	struct procmaps *pm;			/* their mappings' reader */
	const char *gpu_lib;			/* libxpu-cupti.so to inject; NULL: CPU only */
	const char *trace_path;			/* the trace's final path; NULL: stdout */
	struct rb_drain *drain;			/* from start to the drain's stop, else NULL */
	/* the tables the injected libraries walk launches with (a part sets it); NULL: none */
	struct walk_share *ws;
	/* added to the launched command's environment, NULL-terminated (one part sets it) */
	char **child_env;
	uint32_t session_flags;			/* XPU_SESSION_* the parts add, at setup */
	/*
	 * From the drain's stop on: the walk counters of the whole recording, those of BPF plus
	 * those a part adds at its stop (a library that walks in process counts as BPF does)
	 */
	uint64_t cnt[XPU_CNT_NR];
	const struct rb_drain_stats *drained;	/* the drain's, from collect on */
	bool aborted;				/* setup or launch failed: stop waits on none */
};

/* What the last lines on stderr say, that parts know. */
struct rec_summary {
	uint64_t gpu_records;
	char counts[96];			/* more counts, each "N things, " */
	char beside[4200];			/* " and its ...": what was written beside it */
};

struct rec_part {
	const char *name;
	/* a failed setup stops the recording; otherwise the part is off, its reason said */
	bool required;
	/* NULL: always; the context has cfg, bpf, wt, pt, pm and gpu_lib */
	bool (*wanted)(const struct rec_ctx *c);
	/* its state in *state (may stay NULL): 0, or -1 with the reason said */
	int (*setup)(struct rec_ctx *c, void **state);
	struct map_handler *(*handler)(void *state);
	void (*first_records)(void *state, struct rec_ctx *c);
	void (*start)(void *state, struct rec_ctx *c);
	void (*quiesce)(void *state, struct rec_ctx *c);
	void (*stop)(void *state, struct rec_ctx *c);
	void (*collect)(void *state, struct rec_ctx *c);
	/* its rows of the STATS record (xpu_stats.def), by id; it may write its last records */
	void (*stats)(void *state, const struct rec_ctx *c, struct stat_sink *sink);
	void (*committed)(void *state, struct rec_ctx *c);
	void (*summary)(void *state, struct rec_summary *sum);
	void (*free)(void *state);
};

#endif
