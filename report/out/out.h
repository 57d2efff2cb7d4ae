/* SPDX-License-Identifier: MIT */
/* The output formats, and the folded lines that folded and svg share. */
#ifndef XPU_REPORT_OUT_H
#define XPU_REPORT_OUT_H

#include "model/profile.h"

/* --format=text: the summary, like perf report --stdio and nsys stats. */
int out_text(struct profile *p, FILE *out);
/* --format=info: what the file holds and how complete it is. */
int out_info(struct session *ses, FILE *out);
/* --format=folded: one line per stack, flamegraph.pl input. */
int out_folded(struct profile *p, FILE *out);
/* Trace Event JSON for Perfetto UI and chrome://tracing; reads the trace, not the profile. */
int out_chrome(struct session *ses, FILE *out);
/* One self-contained interactive SVG flame graph of the folded view. */
int out_svg(struct profile *p, FILE *out);

/*
 * The folded (stack, weight) pairs behind --format=folded, for the outputs drawn from the
 * same data (out_svg.c), so that a flame graph and the folded text never disagree.
 */
struct folded_line {
	char *text;		/* "comm;root;...;leaf"; frame names never contain ';' */
	uint64_t samples, gpu_ns;
	double weight;		/* rounded to an integer in --weight units, > 0 */
};

/*
 * Lines sorted bytewise, equal stacks merged, zero-weight lines left out. Returns 0 or
 * -ENOMEM; free with folded__free() either way.
 */
int folded__collect(struct profile *p, struct folded_line **lines, size_t *n);
void folded__free(struct folded_line *lines, size_t n);

#endif
