/* SPDX-License-Identifier: MIT */
/*
 * `xpu-report diff`: the function rows (func_table.h) of two sides, base and new, matched by
 * name: the process name, file and function name, as --sort keys them (a function with its
 * file, as in the function table: a name in two files is two rows). A side is added one
 * profile at a time, so a side made of several traces sums them. Weights stay in each side's
 * unit; the outputs divide by each side's total (shares), which is what compares.
 */
#ifndef XPU_REPORT_MODEL_FUNC_DIFF_H
#define XPU_REPORT_MODEL_FUNC_DIFF_H

#include "model/func_table.h"

enum diff_side {
	DIFF_BASE = 0,
	DIFF_NEW = 1,
};

struct func_diff_row {
	uint32_t comm, dso, sym;	/* ids in func_diff.names; 0 where the keys leave one out */
	double self[2], total[2];	/* per side, in that side's unit */
	bool seen[2];			/* the side has the function at all */
};

struct func_diff {
	struct strpool names;		/* process, file and function names of both sides */
	struct func_diff_row *r;
	size_t n, cap;
	struct kmap idx;		/* {comm << 32 | dso, sym} -> row */
	double total_w[2];		/* every entry's weight, per side */
	bool key_dso, key_sym;		/* rows are told apart by file, by function (--sort) */
};

/*
 * Adds profile p's function rows to side `side` (rows of the same name are summed, and so
 * are totals). Every profile added must have been built with the same options. 0 or
 * -ENOMEM; func_diff__free either way.
 */
int func_diff__add(struct func_diff *d, enum diff_side side, const struct profile *p);
/* Self and total shares of a row on a side, in percent of that side's total weight. */
double func_diff__self_share(const struct func_diff *d, const struct func_diff_row *r,
			     enum diff_side side);
double func_diff__total_share(const struct func_diff *d, const struct func_diff_row *r,
			      enum diff_side side);
void func_diff__free(struct func_diff *d);

#endif
