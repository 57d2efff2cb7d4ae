/* SPDX-License-Identifier: MIT */
/* What the command line asks of a report: format, view, weight, filters, where files are. */
#ifndef XPU_REPORT_MODEL_OPTS_H
#define XPU_REPORT_MODEL_OPTS_H

#include <stdbool.h>
#include <stdint.h>

enum report_format {
	FMT_TEXT = 0,
	FMT_FOLDED,
	FMT_INFO,
	FMT_CHROME,	/* Trace Event JSON (output/chrome/) */
	FMT_SVG,	/* flame graph (out_svg.c) */
	FMT_JSONL,	/* one JSON object per event (out_jsonl.c) */
	/* pprof: gzipped profile.proto (out_pprof.c) */
	FMT_PPROF,
	FMT_PERFETTO,	/* native Perfetto protobuf (output/perfetto/) */
};

enum report_view {
	VIEW_MERGED = 0,
	VIEW_GPU,
	VIEW_CPU,
	VIEW_MEMORY,	/* GPU memory held at the peak, in bytes, by allocating stack */
	/* off-CPU (--off-cpu traces) */
	VIEW_OFF_CPU,	/* blocked time by the stack it blocked in */
	VIEW_WALL,	/* CPU samples as time plus blocked time */
};

enum report_weight {
	WEIGHT_AUTO = 0,	/* time when the view holds GPU work, else samples */
	WEIGHT_SAMPLES,
	WEIGHT_TIME,		/* microseconds */
};

/* --sort keys of the function tables, in the order given */
/* --cuda-graphs: where work replayed from a CUDA graph goes (model/gpu_graph.h) */
enum report_graphs {
	GRAPHS_REPLAY_FIRST = 0,	/* replay stack, "[graph] captured", capture stack (default) */
	GRAPHS_CAPTURE_FIRST,		/* capture stack, "[graph] replayed", replay stack */
	GRAPHS_REPLAY_ONLY,		/* the replay's stack only, as before 1.12 */
};

enum report_sort_key {
	SORT_SYM = 1,
	SORT_DSO,
	SORT_COMM,
};

#define REPORT_MAX_SORT 3
#define REPORT_DEFAULT_ROWS 25

#define REPORT_MAX_PIDS 64
/* An output stops (an error) past this many bytes unless --max-output says otherwise. */
#define REPORT_MAX_OUTPUT_DEFAULT (1ull << 30)

struct report_opts {
	enum report_format format;
	enum report_view view;
	enum report_weight weight;
	const char *output;
	const char *input;
	const char *symfs;
	const char *comm;	/* NAME[,NAME...] */
	uint32_t pids[REPORT_MAX_PIDS];
	int npids;
	uint32_t tid;
	bool has_tid;
	bool strict;
	bool python_lines;	/* --python-lines */
	bool python_interp;	/* --python-interp: the interpreter's frames between Python ones */
	bool svg_root_bottom;	/* --svg-root=bottom: a flame graph rather than an icicle */
	bool inline_frames;	/* --inline */
	bool no_unwind;		/* --no-unwind: keep recorded stacks, ignore stack copies */
	bool no_backward;	/* --no-backward: PyTorch backward work on the engine's stacks */
	enum report_graphs graphs;	/* --cuda-graphs */
	bool no_host_files;	/* only --symfs and the archive: reproducible anywhere */
	bool pack_writer;	/* `archive`: list the addresses named, keep the DWARF walks */
	bool no_packs;		/* `archive`: this host's names, never an older pack's */
	int verbose;
	uint64_t max_output_bytes;	/* --max-output; 0: REPORT_MAX_OUTPUT_DEFAULT; UINT64_MAX: none */
	uint64_t archive_max_bytes;	/* --archive-max; 0: default (sym/xpa.h); UINT64_MAX: none */
	uint64_t max_records_bytes;	/* --max-records; 0: default (trace.h); UINT64_MAX: none */
	/* --time-range, seconds from the session start */
	bool has_range;
	double range_start_s, range_end_s;
	/* navigation of the text tables */
	uint8_t sort[REPORT_MAX_SORT];	/* enum report_sort_key; none given: sym */
	int nsort;
	uint32_t rows;			/* rows per table; 0 = all (set by the command line) */
	double percent_limit;		/* hide rows under this share */
	const char *dsos;		/* --dso NAME[,NAME...]: stacks with a frame in these files */
	const char *callers, *callees;	/* a tree of one function's callers or callees */
	/* xpu-report diff BASE NEW (cmd/diff.c) */
	bool diff;			/* parsing the diff command's options */
	bool diff_order_total;		/* --order=total: rows by the change of total share */
	/* multi-trace: several traces as one (input is inputs[0]), and --host / --rank */
	const char *const *inputs;
	int ninputs;			/* 0 or 1: the one trace, input */
	const char *hosts;		/* --host NAME[,NAME...] */
	const char *ranks;		/* --rank N[,N...] */
};

#endif
