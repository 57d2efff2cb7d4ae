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
	uint32_t *site, *path;		/* per launch: site frame id and path id, when done */
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
 * The trimmed stack's innermost frame less launch stubs (*site, a frame id of ses->pool) and
 * its last max frames root first, joined with " > " and followed by leaf when given (*path,
 * an id of g->names).
 */
int text_gpu__stack_path(struct gs *g, uint32_t pid, uint64_t ts, uint32_t stack_id,
			 uint32_t max, const char *leaf, uint32_t *site, uint32_t *path);
/* Time blocked in synchronize calls (sync.c). */
int text_gpu__blocked(struct gs *g, FILE *out);
/* CUPTI state per process (procs.c). */
int text_gpu__procs(struct gs *g, FILE *out);

#endif
