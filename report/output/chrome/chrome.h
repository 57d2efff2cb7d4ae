/* SPDX-License-Identifier: MIT */
/*
 * The chrome output's parts (--format=chrome, output/out.h's out_chrome): Trace Event JSON
 * for Perfetto UI and chrome://tracing. One struct chrome is the file being written; each
 * file of this folder draws one kind of track into it:
 *   json.c      the JSON text, its times CLOCK_REALTIME (trace/clock_map.h), on a grid
 *   tracks.c    processes, threads, GPU streams and devices as tracks, and their names
 *   threads.c   per traced thread: CUDA API calls, NVTX ranges, driver ioctls, off-CPU blocks
 *   samples.c   per traced thread with samples: the CPU samples as a flame chart
 *   gpu.c       per GPU stream: kernels, copies, memsets, and the flows from their launches
 *   counters.c  per GPU: busy % of kernels and of copies (model/gpu_interval.h)
 *   memory.c    per GPU: bytes allocated and not yet freed
 *   chrome.c    the file: its header (otherData), the tracks in order, the closing summary
 * Only chrome.c's out_chrome() is seen outside this folder.
 */
#ifndef XPU_REPORT_OUTPUT_CHROME_H
#define XPU_REPORT_OUTPUT_CHROME_H

#include "model/gpu_interval.h"
#include "model/profile.h"
#include "model/user_code.h"
#include "output/out.h"

/* Pseudo ids above PID_MAX_LIMIT (2^22), below 2^31 (viewers read pid/tid as 32-bit). */
#define SAMPLE_TID_BASE 1000000000u
#define GPU_PID_BASE 2000000000u
#define GPU_TID_BASE 2000000000u
#define GPU_MAX_TRACKS 100000000u
#define SIZE_WARN_BYTES (256ull << 20)

/* Open frames of a thread opened by one sample: from depth on, up to the next run's depth. */
struct open_run {
	uint32_t depth;
	uint32_t samples_before;	/* the thread's samples before the one that opened them */
	uint64_t start;
};

/*
 * Sampled flame chart state. The open frames are the last sample's (root first), so only its
 * stack is kept, looked up again when needed (the naming pass named it), and where the open
 * frames began, per run: a copy of every thread's open stack grew with threads times depth,
 * gigabytes for a small trace of many threads with deep stacks.
 */
struct thread_track {
	uint32_t pid, tid;
	bool has_events, has_samples;
	uint32_t last_stack;		/* of the last sample: the open frames are its frames */
	uint64_t last_ts;
	uint32_t nopen;
	uint32_t nsamples;
	struct open_run *runs;		/* by depth */
	size_t nruns, runs_cap;
};

struct stream_track {
	uint32_t device, pid, context, stream;
	uint32_t gpu;		/* index into devs */
};

struct chrome {
	const struct session *ses;
	const struct trace *t;
	FILE *out;
	uint64_t bytes, events;
	bool warned;
	uint64_t warn_bytes;

	const struct clock_map *clk;	/* the session's */

	const struct filter *f;	/* its --time-range clips the counters */
	uint64_t period_ns;

	struct thread_track *th;
	size_t nth, th_cap;
	struct kmap th_idx;	/* {pid, tid} -> th index */
	uint32_t *pids;
	size_t npids, pids_cap;
	struct kmap pid_idx;

	struct stream_track *st;
	size_t nst, st_cap;
	struct kmap st_idx;	/* {device << 32 | pid, context << 32 | stream} -> st index */
	uint32_t *devs;		/* device numbers, dense */
	size_t ndevs, devs_cap;
	struct kmap dev_idx;
	struct kmap gpu_pids;	/* distinct pids with GPU work, to name streams */

	const struct gpu_join *j;
	uint8_t *launch_marked;
	uint64_t next_flow;
	/* each drawn kernel (key GPU << 1), copy or memset (key GPU << 1 | 1), for counters.c */
	struct gpu_interval *iv;
	size_t niv, iv_cap;
	struct user_code uc;	/* the capture sites of graph work (model/graph_site.h) */

};

/* ---- json.c --------------------------------------------------------------------------------- */

void chrome__put(struct chrome *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void chrome__putb(struct chrome *c, const char *s, size_t n);
/* A JSON string of s's len bytes: escaped, invalid UTF-8 as U+FFFD, cut at OUT_NAME_MAX_BYTES. */
void chrome__str(struct chrome *c, const char *s, size_t len);
void chrome__cstr(struct chrome *c, const char *s);
/* Starts an event object: {"ph":..,"pid":..,"tid":..,"ts":.. ; chrome__end() closes it. */
void chrome__begin(struct chrome *c, char ph, uint32_t pid, uint32_t tid, uint64_t mono);
void chrome__end(struct chrome *c);
/* ,"dur": of an X event from two monotonic times, mapped separately so slices stay nested */
void chrome__dur(struct chrome *c, uint64_t start, uint64_t end);

/* ---- the time axis ------------------------------------------------------------------------- */

/* CLOCK_REALTIME of a monotonic time, through the trace's CLOCK_SYNC pairs */
static inline uint64_t chrome__realtime(const struct chrome *c, uint64_t mono)
{
	return clock_map__realtime(c->clk, mono);
}

/*
 * Viewers parse "ts" as a double. Realtime in microseconds (~1.8e15) has a resolution of only
 * 0.25 us there, so a nanosecond value would be rounded by the parser, each number on its own,
 * and a child slice could end past its parent (speedscope then refuses the file). So times go
 * on a 250 ns grid, exact in a double below 2^51 us (year 2041; a 1 us grid after that), and
 * ts and end are rounded separately with the same monotonic rounding, which keeps nesting.
 */
static inline uint64_t grid_ns(uint64_t ns)
{
	uint64_t g = ns / 1000 < (1ull << 51) ? 250 : 1000;

	return (ns + g / 2) / g * g;
}

/* ---- tracks.c ------------------------------------------------------------------------------- */

/* The track of a traced thread, made when first asked for; NULL on allocation failure. */
struct thread_track *chrome__thread(struct chrome *c, uint32_t pid, uint32_t tid);
/* The track of a GPU record, or NULL (with *err set on allocation failure). */
const struct stream_track *chrome__stream(struct chrome *c, uint32_t device, uint32_t pid,
					  uint32_t context, uint32_t stream, int *err);
static inline uint32_t chrome__stream_tid(const struct chrome *c, const struct stream_track *s)
{
	return GPU_TID_BASE + (uint32_t)(s - c->st);
}
/* The dense index of a device: its "GPU N" process is GPU_PID_BASE + index. */
int chrome__device(struct chrome *c, uint32_t device, uint32_t *idx);
/* The names and order of every track drawn, once all are known. */
int chrome__emit_meta(struct chrome *c);

/* ---- the tracks drawn: 0, -ENOMEM, -EIO when the output failed ------------------------------- */

int chrome__emit_apis(struct chrome *c);
int chrome__emit_nvtx(struct chrome *c);
int chrome__emit_ioctls(struct chrome *c);
int chrome__emit_off_cpu(struct chrome *c);
int chrome__emit_samples(struct chrome *c);
int chrome__emit_gpu(struct chrome *c);
int chrome__emit_counters(struct chrome *c);
int chrome__emit_memory(struct chrome *c);

#endif
