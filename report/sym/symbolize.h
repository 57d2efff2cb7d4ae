/* SPDX-License-Identifier: MIT */
/*
 * Turns recorded stacks into frame names. DSOs come from the session's table (dso.h), kernel
 * frames named from the trace's kallsyms snapshot (kallsyms.h), user symbols come from ELF
 * symbol tables (plus "sym@plt" for PLT stubs, and the vdso image the trace carries); code no
 * symbol covers is named by the start of its .eh_frame FDE ("lib.so+0x15b80"), so a stripped
 * function is one frame. With inline_frames, DWARF inline chains add a frame per inlined
 * callee; without (the default, like perf's --sort sym), the outer function keeps the time.
 * Every result is cached:
 * per (DSO, file offset) for addresses and per (pid, exec generation, stack id) for stacks.
 */
#ifndef XPU_REPORT_SYM_SYMBOLIZE_H
#define XPU_REPORT_SYM_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sym/dso.h"
#include "sym/kallsyms.h"
#include "trace/derived_stacks.h"
#include "trace/trace.h"

struct jitsyms;

/*
 * The most frames a named stack has: four per address of the format's deepest stack (1,024
 * addresses, FORMAT.md 3.3). A symbol pack may give each address a run of 256 frames (512 with
 * --inline), so 1,024 addresses named 262,144 frames, and every output's cost went with that;
 * past the cap the stack keeps its outermost frames and ends in SYM_CUT_FRAME.
 */
#define SYM_STACK_MAX_FRAMES 4096
#define SYM_CUT_FRAME "[frames cut: over 4096]"
/*
 * The frames assembled for named stacks, in all, hold at most SYM_FRAMES_KEPT_PER_RECORD_BYTE
 * times the records' bound in bytes (trace.h trace__keep_bound; at least its default least,
 * TRACE_KEEP_MIN_DEFAULT, which traces read as one share), at what a kept frame costs:
 * its id and file (8 bytes), and its site with opts.sites (40). Each (process, stack) is named
 * apart, so 20,000 processes on one stack of 250 frames name 5 million (a case the hostile
 * tests keep whole), and short stacks of long pack runs named 256 frames an address. Past it
 * a stack is SYM_UNNAMED_FRAME alone.
 */
#define SYM_FRAMES_KEPT_PER_RECORD_BYTE 4
#define SYM_UNNAMED_FRAME "[stack not named: past --max-records]"

/* How frames are named (where files come from: dso_opts). */
struct sym_opts {
	bool python_lines;
	bool python_interp;		/* --python-interp: keep the frames interp_fold.h drops */
	bool inline_frames;		/* --inline: a frame per DWARF inlined callee */
	bool sites;			/* keep each frame's site and source line (pprof) */
	bool list_addrs;		/* keep symbolizer.addr_list */
};

/*
 * Where a frame came from, kept with sites (symbolizer__sites): the address as a file offset
 * of its DSO and, when DWARF has them, the source file and line. The frames of one address
 * (a function and the calls inlined into it) share dso and off; the function has outer set.
 */
struct frame_site {
	uint32_t dso;			/* trace DSO index + 1; 0: not in an ELF file */
	uint32_t file;			/* source file name in the frame name pool, 0 if unknown */
	uint64_t off;
	uint32_t line;			/* 0 if unknown */
	bool outer;
};

struct sym_addr {
	uint32_t dso;			/* trace DSO index */
	uint64_t off;			/* file offset */
};

struct frames_ref {
	uint32_t first, n;		/* a run in symbolizer.frame_ids */
};

struct symbolizer {
	const struct trace *t;
	const struct derived_stacks *stacks;	/* what stack ids name (the trace's and derived) */
	struct dso_table *dsos;		/* the session's: files opened once, for the unwinder too */
	struct sym_opts opts;
	struct strpool *pool;		/* frame names; shared with the outputs */

	struct kallsyms ksyms;

	uint32_t *frame_ids;
	size_t nframe_ids, frame_ids_cap;
	struct frame_site *sites;	/* with opts.sites: one per frame_ids entry */
	size_t sites_cap;
	uint32_t *frame_files;		/* one per frame_ids entry: the file of that frame */
	size_t frame_files_cap;
	struct frames_ref *refs;
	size_t nrefs, refs_cap;
	struct kmap addr_cache;		/* {dso index + 1, file offset} -> refs index */
	struct kmap stack_cache;	/* {pid, gen, trim}, stack id -> refs index */
	struct kmap run_ids;		/* {hash of a stack's frames, 0} -> the first refs index */
	struct jitsyms *jit;		/* JIT_SYMBOL names, or NULL */

	uint32_t *frame_dso;		/* frame id -> its file (see symbolizer__frame_dso) */
	size_t frame_dso_cap;
	uint32_t *scratch;		/* one stack being assembled */
	size_t scratch_cap;
	struct frame_site *scratch_sites;
	size_t scratch_sites_cap;
	uint32_t *scratch_files;
	size_t scratch_files_cap;
	bool *interp_dso;		/* per trace DSO: a Python runtime's file (interp_fold.h) */
	uint8_t *scratch_kinds;		/* enum interp_kind of each scratch frame */
	bool *scratch_drop;
	size_t scratch_kinds_cap, scratch_drop_cap;

	/* shown by `info` and -v */
	uint64_t addrs_resolved, addrs_unknown;
	/* with opts.list_addrs: every (DSO index, file offset) named, in order (`archive`) */
	struct sym_addr *addr_list;
	size_t naddr_list, addr_list_cap;
	uint64_t jit_named;		/* frames named by a JIT symbol */
	/* the bounds above: stacks cut at SYM_STACK_MAX_FRAMES, stacks left unnamed */
	uint64_t stacks_cut, stacks_unnamed;
	uint64_t frames_assembled, frames_budget;	/* in frames */
	bool scratch_cut, scratch_over;	/* the stack being assembled met a bound */
	uint64_t interp_folded;		/* interpreter frames between Python frames, dropped */
};

/*
 * Stack ids are looked up in stacks (whose trace it symbolizes), files in dsos (of the same
 * trace), which must outlive it. 0 or negative errno.
 */
int symbolizer__init(struct symbolizer *s, const struct derived_stacks *stacks,
		     struct dso_table *dsos, const struct sym_opts *opts, struct strpool *pool);
/*
 * Frames of a stack, root first (user outermost ... user leaf, then kernel frames). With
 * trim_gpu, frames inside CUDA/CUPTI libraries are dropped (launch stacks); unless
 * opts.python_interp, so are the interpreter's frames between Python frames (interp_fold.h).
 * The array stays valid until the next call. Returns 0 or -ENOMEM.
 */
int symbolizer__stack(struct symbolizer *s, uint32_t pid, uint64_t ts, uint32_t stack_id,
		      bool trim_gpu, const uint32_t **frames, uint32_t *n);
/*
 * The frames of a stack symbolizer__stack() named already, as it gave them, read-only: for
 * readers that come after the naming, and must not name. -ENOENT if never named.
 */
int symbolizer__named(const struct symbolizer *s, uint32_t pid, uint64_t ts, uint32_t stack_id,
		      bool trim_gpu, const uint32_t **frames, uint32_t *n);
/*
 * With opts.sites, the sites of frames symbolizer__stack() returned (same index), else NULL.
 * Valid as long as the frames.
 */
const struct frame_site *symbolizer__sites(const struct symbolizer *s, const uint32_t *frames);
/*
 * The file of each frame symbolizer__stack() returned (same index), as a code for
 * symbolizer__file_name(): unlike symbolizer__frame_dso(), the file this frame of this stack
 * is in, where one name is in several files (_start, in the program and in ld.so). Valid as
 * long as the frames.
 */
const uint32_t *symbolizer__files(const struct symbolizer *s, const uint32_t *frames);
/* A file code's name: "libc.so.6", "[kernel.kallsyms]", "[python]", "[autograd]", "[unknown]". */
const char *symbolizer__file_name(const struct symbolizer *s, uint32_t file);
/*
 * The file a frame name came from, by basename ("libc.so.6"), "[kernel.kallsyms]", "[python]"
 * or "[unknown]"; a name found in several files keeps the first. Valid for frames returned by
 * symbolizer__stack().
 */
const char *symbolizer__frame_dso(const struct symbolizer *s, uint32_t frame);
/* The trace's DSO a frame name came from (as above), or NULL for kernel, Python, unknown. */
const struct tr_dso *symbolizer__frame_dso_rec(const struct symbolizer *s, uint32_t frame);
/*
 * For `xpu-report archive`: the frames of one address of a DSO (a file offset), leaf first,
 * with their sites, named with or without inline frames whatever the options say; *named: the
 * function is named by a symbol. Not cached; valid until the next call. 0 or negative errno.
 */
int symbolizer__address(struct symbolizer *s, size_t dso_idx, uint64_t file_off,
			bool inline_frames, const uint32_t **frames, const struct frame_site **sites,
			uint32_t *n, bool *named);
void symbolizer__free(struct symbolizer *s);

#endif
