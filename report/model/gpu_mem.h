/* SPDX-License-Identifier: MIT */
/*
 * GPU memory records (format 1.4) joined to their allocating call and to each other: each
 * release is paired with the latest earlier allocation of the same process, device and
 * address, and the peak of the bytes allocated by the allocations that pass the filter is
 * found, with the allocations still held at that moment. A release with no recorded
 * allocation (memory allocated before recording began) changes nothing.
 */
#ifndef XPU_REPORT_MODEL_GPU_MEM_H
#define XPU_REPORT_MODEL_GPU_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "model/filter.h"
#include "model/gpu_join.h"
#include "trace/trace.h"

/* One GPU_MEMORY record, by index in the trace's memories. */
struct gpu_mem_rec {
	uint32_t tid;			/* the allocating thread: of the API record, else the launch */
	uint32_t launch;		/* launch index + 1, 0 without a launch record */
	uint32_t pair;			/* the paired release/allocation index + 1, 0: none */
	bool keep;			/* an allocation that passes the filter (task and time) */
	bool at_peak;			/* an allocation kept and still held at the peak */
};

struct gpu_mem {
	struct gpu_mem_rec *r;		/* one per trace memory record */
	size_t n;
	uint64_t peak_bytes;		/* of the kept allocations, all devices together */
	uint64_t peak_ts;		/* when that peak was first reached; 0 without allocations */
};

/*
 * Pairs and marks every memory record of t; j gives the allocating call's thread and stack
 * (the API record or launch of the same pid and correlation id). An allocation passes f
 * by its pid, that thread and its time. 0 or -ENOMEM (gpu_mem__free either way).
 */
int gpu_mem__build(struct gpu_mem *m, const struct trace *t, const struct gpu_join *j,
		   const struct filter *f);
void gpu_mem__free(struct gpu_mem *m);

/* "device", "pinned", "managed"...: a memory kind (enum xpu_memory_kind), in words. */
const char *memory_kind_name(uint8_t kind);
/*
 * qsort_r's comparator of indexes into recs (an array of struct xpu_rec_gpu_memory): time
 * order; at one time, file order (which is the order the target made the calls).
 */
int gpu_mem__cmp_time(const void *a, const void *b, void *recs);

#endif
