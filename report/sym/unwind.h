/* SPDX-License-Identifier: MIT */
/*
 * Offline DWARF unwinding of -g dwarf stack copies (USER_STACK_COPY records) with libdw.
 * Each CPU_SAMPLE / GPU_LAUNCH that has a copy gets a new stack: the kernel part of its
 * recorded STACK and the user part unwound from the copy, so symbolization, aggregation and
 * correlation downstream see ordinary stacks.
 */
#ifndef XPU_REPORT_SYM_UNWIND_H
#define XPU_REPORT_SYM_UNWIND_H

#include <stdint.h>
#include <stdio.h>

#include "sym/dso.h"
#include "sym/xpa_pack.h"
#include "trace/derived_stacks.h"
#include "trace/trace.h"

/* Why a DWARF walk ended, for the complete-stack rate and `info`'s "dwarf stops". */
enum unwind_stop {
	UW_STOP_OUTERMOST,	/* CFI says there is no caller: a thread's start or _start */
	UW_STOP_COPY_END,	/* the next frame lies above the copied stack bytes */
	UW_STOP_NO_FILE,	/* pc in no ELF file we have (JIT code, anonymous memory, missing) */
	UW_STOP_NO_CFI,		/* no CFI for the pc (libdw's frame-pointer guess failed too) */
	UW_STOP_BAD_FRAME,	/* CFI found, but the caller's registers could not be read */
	UW_STOP_MAX_FRAMES,	/* the frame limit */
	UW_STOP_N
};

/* One (reason, stack) pair: every stack the walk made, counted per reason it ended. */
struct unwind_stop_rec {
	uint8_t reason;
	uint32_t pid;
	uint64_t ts;
	uint32_t stack_id;
	uint64_t count;
};

struct unwind_stats {
	uint64_t copies;		/* USER_STACK_COPY records */
	uint64_t matched;		/* joined to their sample or launch */
	uint64_t used;			/* DWARF result replaced the frame-pointer user stack */
	uint64_t failed;		/* fewer than 2 frames: the frame-pointer stack was kept */
	uint64_t frames;		/* user frames of the stacks used */
	uint64_t copy_bytes;		/* stack bytes in the copies */
	uint32_t max_copy;		/* the largest copy: about the SIZE recorded with */
	uint64_t top_bytes;		/* -g dwarf,SIZE,TOP: bytes in the stack-top windows */
	uint64_t stops[UW_STOP_N];	/* walks used, by the reason they ended */
	uint64_t fp_frames;		/* callers found by the frame-pointer rule (no CFI there) */
	uint64_t fp_scanned;		/* of those, found by scanning for a return address */
	uint64_t fp_walks;		/* walks that used it */
	struct unwind_stop_rec *stop_recs;
	size_t nstop_recs, stop_recs_cap;
	struct kmap stop_idx;		/* {reason, stack id} -> stop_recs index */
	/* with keep_walks: every walk used, for a symbol pack (`archive`) */
	struct xpa_walks_builder *walks;
	uint64_t pack_walks;		/* walks taken from a symbol pack instead of made here */
};

const char *unwind__stop_name(enum unwind_stop r);
/* Whether a walk that made stack_id ended at the outermost frame (per CFI). */
bool unwind__outermost(const struct unwind_stats *st, uint32_t stack_id);
void unwind__free(struct unwind_stats *st);

/*
 * Unwinds the stack copies of d's trace and gives each sample and launch that has one the
 * stack made from it (in d). Where a symbol pack holds the recording host's walks of a
 * trace's copies, those are used instead, with no file opened. The files come from dt (of
 * d's trace); keep_walks keeps every walk in st->walks. 0 or negative errno.
 */
int unwind__apply(struct derived_stacks *d, struct dso_table *dt, bool keep_walks,
		  struct unwind_stats *st);

/*
 * Whether over a tenth of the walks did not reach the outermost frame, mostly for running out
 * of copied stack, while copies were below the 64 KiB maximum or had no stack-top window: a
 * bigger -g dwarf,SIZE or a TOP window helps.
 */
bool unwind__copy_too_small(const struct unwind_stats *st);
/* Ids of stacks the unwinder makes: above any the writer hands out (it counts up from 1). */
#define UW_FIRST_STACK_ID 0x80000000u

/* The largest copy and window, which that hint suggests. */
#define UW_MAX_COPY_MODE "-g dwarf,65536,32768"
/* xpu-record's default -g mode, as its hints name it (record/config.h sets it) */
#define UW_DEFAULT_MODE "-g cfi"

/*
 * Whether a frame-pointer recording (-g fp) has mostly incomplete stacks: complete of total
 * events. Never true for a DWARF recording, whose own hint is unwind__copy_too_small.
 */
bool unwind__fp_too_short(const struct trace *t, uint64_t complete, uint64_t total);

/*
 * The hint for a recording whose stacks are mostly incomplete (complete of total events), or
 * NULL: the mode that would do better, never the one the trace was recorded with. One line,
 * no newline; text and info print it.
 */
const char *unwind__hint(const struct trace *t, const struct unwind_stats *uw, uint64_t complete,
			 uint64_t total);

#endif
