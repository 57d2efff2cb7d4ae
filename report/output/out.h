/* SPDX-License-Identifier: MIT */
/* The output formats, and the folded lines that folded and svg share. */
#ifndef XPU_REPORT_OUT_H
#define XPU_REPORT_OUT_H

#include "model/profile.h"

/*
 * Names from the trace (kernels, API calls, NVTX ranges, threads, devices) are cut at this
 * many bytes in every output, "..." marking the cut, so that one long string cannot grow with
 * each event that repeats it. Frame names are cut at 1 KB when interned (containers.h).
 */
#define OUT_NAME_MAX_BYTES 4096

/*
 * Whether the output stream failed: past --max-output (cmd/report.c), or a write error. A
 * failed stream takes every byte and writes none, so a writer checks this once per event (or
 * line) and stops producing, returning -EIO: the work past the limit is work for nothing.
 */
static inline bool out__failed(FILE *out)
{
	return ferror(out);
}


/* --format=text: the summary, like perf report --stdio and nsys stats. */
int out_text(const struct profile *p, FILE *out);
/* --format=info: what the file holds and how complete it is. */
int out_info(const struct session *ses, FILE *out);
/* --format=folded: one line per stack, flamegraph.pl input. */
int out_folded(const struct profile *p, FILE *out);
/* Trace Event JSON for Perfetto UI and chrome://tracing; reads the trace, not the profile. */
int out_chrome(const struct session *ses, FILE *out);
/*
 * A native Perfetto trace (perfetto.protos.Trace) of the chrome output's view, streamed with
 * interning (output/perfetto/); reads the trace, not the profile.
 */
int out_perfetto(const struct session *ses, FILE *out);
/* --callers / --callees FUNC: a text tree of one function's callers or callees. -ENOENT
 * (said on stderr) when no stack holds FUNC. */
int out_calltree(const struct profile *p, FILE *out);
/* One JSON object per event and line, for scripts (format-spec/JSONL.md); reads the session. */
int out_jsonl(const struct session *ses, FILE *out);
/* One self-contained interactive SVG flame graph of the folded view. */
int out_svg(const struct profile *p, FILE *out);
/*
 * --format=pprof: the folded view's stacks as a gzipped profile.proto message (out_pprof.c).
 * -ENOTSUP (said on stderr) in a build without protobuf-c.
 */
int out_pprof(const struct profile *p, FILE *out);
/* NULL when this build writes pprof, else a line saying what it lacks. */
const char *out_pprof__unavailable(void);

/*
 * xpu-report diff, side[0] the base, side[1] the new profile: the text table of every
 * function's shares and their change (model/func_diff.h); the two-column folded lines
 * "stack base new" (difffolded.pl's); a differential flame graph, the new profile's stacks
 * coloured by the change of each frame's share (red grew, blue shrank).
 */
int out_diff_text(const struct profile *const side[2], FILE *out);
int out_diff_folded(const struct profile *const side[2], FILE *out);
int out_svg_diff(const struct profile *const side[2], FILE *out);

/* Rows shown of n, sorted by share[] (descending): --rows and --percent-limit. */
size_t out__shown_rows(const struct report_opts *o, size_t n, const double *share);
/* "(N more rows)" when more > 0: one, many are the singular and plural of what is left out. */
void out__print_more(FILE *out, size_t more, const char *one, const char *many,
		     const struct report_opts *o);
/* The widest the dso column of the function tables grows: longer names are cut (out__fit). */
#define OUT_DSO_WIDTH_MAX 32
/*
 * s for a column of width w: s itself if it fits (or w is 0, the last column), else its head
 * and its tail around "...", so that a long file name keeps its start and its version and the
 * next column stays in place. Returns s or buf, which holds at least w + 1 bytes.
 */
const char *out__fit(const char *s, int w, char *buf);

/*
 * The folded (stack, weight) lines behind --format=folded, for the outputs drawn from the
 * same data (out_svg.c), so that a flame graph and the folded text never disagree. A line is
 * its process name (the root) and a stack of frame ids held once, however many lines share
 * it: the entries of many processes on one deep stack cost one copy of its frames, and no
 * line's text exists before it is written (it grew as processes times depth).
 */
struct folded_row {
	uint32_t comm;		/* frame id of the process name */
	uint32_t stack;		/* folded.stacks index: the frames after comm, leaf included */
	uint64_t samples, measured;	/* prof_entry's, summed */
	double weight;		/* rounded to an integer in the session's unit, >= 1 */
};

struct folded_stack {
	size_t first;		/* in folded.frames */
	uint32_t n;
	uint32_t next;		/* the next stack of the same hash, + 1; 0: none */
};

struct folded {
	const struct strpool *names;	/* the session's frame names */
	struct folded_row *rows;
	size_t n, rows_cap;
	uint32_t *frames;
	size_t nframes, frames_cap;
	struct folded_stack *stacks;
	size_t nstacks, stacks_cap;
	struct kmap stack_idx;		/* {hash, length} -> first stack of that hash */
	struct kmap row_idx;		/* {comm, stack} -> row */
};

/*
 * Rows sorted bytewise by their text "comm;root;...;leaf", equal stacks merged, rows without
 * weight left out, weights rounded (folded__round). 0 or -ENOMEM; folded__release either way.
 */
int folded__build(const struct profile *p, struct folded *f);
void folded__release(struct folded *f);
/* Frames of row i, its comm included, and frame k of them (k = 0: the comm). */
static inline uint32_t folded__depth(const struct folded *f, size_t i)
{
	return f->stacks[f->rows[i].stack].n + 1;
}

static inline uint32_t folded__frame(const struct folded *f, size_t i, uint32_t k)
{
	return k ? f->frames[f->stacks[f->rows[i].stack].first + k - 1] : f->rows[i].comm;
}

/* Writes row i's text, "comm;root;...;leaf". */
void folded__put(const struct folded *f, size_t i, FILE *out);
/*
 * The bytewise order of the texts of row i of a and row j of b (the rows of two profiles, of
 * two pools of names, in a diff), found without writing them: < 0, 0 or > 0.
 */
int folded__cmp(const struct folded *a, size_t i, const struct folded *b, size_t j);

/*
 * Rounds weight w (> 0) to an integer of at least 1, carrying the remainder in *carry (start
 * at 0, one carry per series) so that a series' rounded sum stays within 1 of its exact sum
 * wherever its exact weights allow (each at least 1 in total).
 */
double folded__round(double *carry, double w);

#endif
