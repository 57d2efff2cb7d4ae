/* SPDX-License-Identifier: MIT */
/*
 * What the GPU sections of the text report share (gpu.c, sync.c, procs.c): the GPU work that
 * passed --pid/--tid/--comm (the session's GPU join, its keep flag), and launch stacks as
 * call paths. Launch stacks are symbolized with CUDA-internal frames trimmed, so the "site" of
 * a launch is the first frame of the program itself, the same frame the folded output puts
 * above the "[gpu] ..." leaf.
 */
#ifndef XPU_REPORT_OUTPUT_TEXT_GPU_H
#define XPU_REPORT_OUTPUT_TEXT_GPU_H

#include "model/user_code.h"
#include "output/text/text.h"

/* rows per table: --rows, 0 for all */
#define TOP_N (g->ses->opts->rows ? (size_t)g->ses->opts->rows : SIZE_MAX)

struct gs {
	const struct session *ses;
	const struct trace *t;
	const struct gpu_join *j;	/* its kept work (keep) is what the sections count */
	size_t n;			/* of the kept work */
	uint64_t total_ns;		/* summed durations of the kept work (not a union) */
	struct strpool names;		/* call paths and API names, for display */
	struct user_code uc;		/* launch sites in the program's own code */
	uint32_t *site, *op, *path;	/* per launch: site (uc.names), op frame, path */
	uint8_t *done;
};

static inline uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

static inline double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

/*
 * A trimmed stack's op (*op, a frame id of ses->pool: its innermost frame less nvcc's launch
 * stubs, model/user_code.h), its last max frames to the op root first, joined with " > " and
 * followed by leaf when given (*path, an id of g->names), and when site is not NULL its site
 * in the program's own code (an id of g->uc.names).
 */
int text_gpu__stack_path(struct gs *g, uint32_t pid, uint64_t ts, uint32_t stack_id,
			 uint32_t max, const char *leaf, uint32_t *op, uint32_t *path,
			 uint32_t *site);
/* Time blocked in synchronize calls (sync.c). */
int text_gpu__blocked(struct gs *g, FILE *out);
/* CUPTI state per process (procs.c). */
int text_gpu__procs(struct gs *g, FILE *out);

#endif
