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
	FMT_CHROME,	/* Trace Event JSON (out_chrome.c) */
	FMT_SVG,	/* flame graph (out_svg.c) */
};

enum report_view {
	VIEW_MERGED = 0,
	VIEW_GPU,
	VIEW_CPU,
};

enum report_weight {
	WEIGHT_SAMPLES = 0,
	WEIGHT_TIME,		/* microseconds */
};

#define REPORT_MAX_PIDS 64

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
	bool no_unwind;		/* --no-unwind: keep recorded stacks, ignore stack copies */
	bool no_host_files;	/* only --symfs and the archive: reproducible anywhere */
	int verbose;
	/* --time-range, seconds from the session start */
	bool has_range;
	double range_start_s, range_end_s;
};

#endif
