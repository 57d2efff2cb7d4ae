/* SPDX-License-Identifier: MIT */
/*
 * A part of the recorder: a piece of the core (BPF, the trace's writer, the mapping reader, the
 * drain) or a feature (Python frames, JIT maps, the unwind tables, the CUPTI receiver...) that
 * recording.c runs through its lifecycle without knowing it. A part is a row, a const struct
 * rec_part beside its code; record/parts.c lists the rows in the order every verb walks them,
 * and says why that order. Every hook may be NULL, and every hook but wanted and setup is
 * called only for a part whose setup succeeded (it "runs"). All calls come from the recording's
 * thread, in this order:
 *
 *   wanted, setup (table order; signals go to the recording's signalfd before the first part
 *   that starts a thread) -> handler (table order, into the process table)
 *   -> the command forked behind its gate, its pids in the process table (c->pid)
 *   -> attach (table order; the probes attached)
 *   -> first_records (table order; before the drain thread starts, nothing else writes yet)
 *   -> start (table order; the drain runs from its row on, the command is still behind its gate)
 *   -> the recording: tick (reverse order; every turn of the main loop, at c->now_ns)
 *   -> quiesce (reverse order; sampling on until the BPF part's)
 *   -> stop (reverse order; the drain stops at its row: the parts after it feed it)
 *   -> collect (reverse order; nothing else writes records any more; the trace's writes
 *      c->end, SESSION_END, after every later part's last records)
 *   -> stats (table order) -> close (table order; the trace's writes STATS and puts the trace
 *      in place, c->committed) -> committed (table order, only if c->committed)
 *   -> summary (reverse order; the trace's says the last lines once the later parts added theirs)
 *   -> free (reverse order; the process table already gone)
 * A setup that fails midway, or a failed launch, attach or start, calls stop (with c->aborted)
 * then free.
 */
#ifndef XPU_RECORD_PART_H
#define XPU_RECORD_PART_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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

/*
 * All a part may use of the recording; never struct recording (parts must not see it). The
 * recording sets cfg, pt, pid, the times, end, discard and stats; the rest the parts set, each
 * at its setup unless said (a later row finds what an earlier one set).
 */
struct rec_ctx {
	const struct record_config *cfg;
	struct proc_table *pt;			/* the traced processes */
	const char *gpu_lib;			/* libxpu-cupti.so to inject; NULL: CPU only */
	struct bpf_state *bpf;			/* loaded */
	struct writer_thread *wt;		/* the trace's writer, until close */
	const char *trace_path;			/* the trace's final path; NULL: stdout */
	const char *trace_shown;		/* where it is written, for messages */
	struct procmaps *pm;			/* the traced processes' mappings' reader */
	struct rb_drain *drain;			/* from its start to its stop, else NULL */
	/* the tables the injected libraries walk launches with (a part sets it); NULL: none */
	struct walk_share *ws;
	/* added to the launched command's environment, NULL-terminated (one part sets it) */
	char **child_env;
	uint32_t session_flags;			/* XPU_SESSION_* the parts add, at setup */
	pid_t pid;				/* the command's, or the first attached */
	/* the session's start, from first_records on */
	uint64_t start_mono_ns, start_realtime_ns;
	uint64_t now_ns;			/* at tick: this turn's monotonic time */
	bool write_failed;			/* the trace cannot grow (the trace's tick said) */
	/*
	 * From the drain's stop on: the walk counters of the whole recording, those of BPF plus
	 * those a part adds at its stop (a library that walks in process counts as BPF does)
	 */
	uint64_t cnt[XPU_CNT_NR];
	const struct rb_drain_stats *drained;	/* the drain's, from its stop on */
	struct xpu_rec_session_end end;		/* from collect on: how the command ended */
	bool discard;				/* from collect on: it never ran: no trace */
	const struct xpu_stat_entry *stats;	/* at close: the STATS record's entries */
	unsigned int nr_stats;
	bool committed;				/* from close: the trace whole and in place */
	bool failed;				/* from close: it could not be written whole */
	bool aborted;				/* setup or launch failed: stop waits on none */
};

/* What the last lines on stderr say, that parts know. */
struct rec_summary {
	uint64_t gpu_records;
	char counts[96];			/* more counts, each "N things, " */
	char beside[4200];			/* " and its ...": what was written beside it */
	uint64_t mappings;			/* -v: mappings read */
	uint64_t unreadable;			/* -v: processes with unreadable mappings */
};

struct rec_part {
	const char *name;
	/* a failed setup stops the recording; otherwise the part is off, its reason said */
	bool required;
	/* its setup starts threads: they must inherit the blocked signals */
	bool threads;
	/* NULL: always; the context has what the rows before set */
	bool (*wanted)(const struct rec_ctx *c);
	/* its state in *state (may stay NULL): 0, or -1 with the reason said */
	int (*setup)(struct rec_ctx *c, void **state);
	struct map_handler *(*handler)(void *state);
	/* attach and start: 0, or -1 with the reason said (the recording stops) */
	int (*attach)(void *state, struct rec_ctx *c);
	void (*first_records)(void *state, struct rec_ctx *c);
	int (*start)(void *state, struct rec_ctx *c);
	void (*tick)(void *state, struct rec_ctx *c);
	void (*quiesce)(void *state, struct rec_ctx *c);
	void (*stop)(void *state, struct rec_ctx *c);
	void (*collect)(void *state, struct rec_ctx *c);
	/* its rows of the STATS record (xpu_stats.def), by id; it may write its last records */
	void (*stats)(void *state, const struct rec_ctx *c, struct stat_sink *sink);
	void (*close)(void *state, struct rec_ctx *c);
	void (*committed)(void *state, struct rec_ctx *c);
	void (*summary)(void *state, struct rec_summary *sum);
	void (*free)(void *state);
};

#endif
