/* SPDX-License-Identifier: MIT */
/*
 * The function rows of a profile: per (comm, dso, sym) key, as --sort picks its parts, the
 * self weight (the frame on top of the stack) and the total weight (the frame anywhere on the
 * stack, counted once per stack even under recursion). The text report's function tables and
 * `xpu-report diff` are both built from these rows, so they never disagree.
 */
#ifndef XPU_REPORT_MODEL_FUNC_TABLE_H
#define XPU_REPORT_MODEL_FUNC_TABLE_H

#include "model/profile.h"

/* One row: a (comm, dso, sym) key, parts not in --sort left 0 (dso: see func_table). */
struct func_row {
	uint32_t comm, sym;	/* frame ids in the session's pool */
	uint32_t dso;		/* id in func_table.dsos: the file the frame is in */
	double self, total;	/* in the session's unit (profile__weight) */
	size_t stamp;		/* last entry whose total counted this row, + 1 */
};

struct func_table {
	const struct profile *p;
	uint8_t sort[REPORT_MAX_SORT];	/* --sort, default sym */
	int nsort;
	bool key[SORT_COMM + 1];	/* which --sort keys are on */
	struct strpool dsos;		/* file names ("[gpu]", "[off-cpu]" for those leaves) */
	struct kmap file_idx;		/* {symbolizer file code, 0} -> id in dsos */
	struct func_row *r;
	size_t n, cap;
	struct kmap idx;
};

/*
 * Builds the rows of profile p, keyed as p's options' --sort says (sym without it; with sym,
 * a name in two files is two rows, each with its file). A stack's self weight is its leaf's,
 * but blocked time's is the frame's that blocked, above the "[off-cpu] STATE" leaf. Only
 * frames that pass --dso count. Symbolizes every stack of p. 0, or negative errno;
 * func_table__free either way.
 */
int func_table__build(struct func_table *ft, const struct profile *p);
/* The file name of a row ("" if the keys leave it out). */
static inline const char *func_table__dso(const struct func_table *ft, const struct func_row *r)
{
	return strpool__str(&ft->dsos, r->dso);
}
void func_table__free(struct func_table *ft);

#endif
