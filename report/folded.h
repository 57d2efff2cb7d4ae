/* SPDX-License-Identifier: MIT */
/*
 * The folded (stack, weight) pairs behind --format=folded, for the outputs drawn from the
 * same data (out_svg.c), so that a flame graph and the folded text never disagree.
 */
#ifndef XPU_REPORT_FOLDED_H
#define XPU_REPORT_FOLDED_H

#include "profile.h"

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
