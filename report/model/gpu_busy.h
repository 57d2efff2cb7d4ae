/* SPDX-License-Identifier: MIT */
/*
 * Busy % of each GPU over time, for the timelines' counters (chrome's "busy %", perfetto's
 * "busy % kernels" and "busy % copies"): the union of each device's kernel intervals, and of
 * its copy and memset intervals, over fixed buckets, so that both outputs draw the same values.
 */
#ifndef XPU_REPORT_MODEL_GPU_BUSY_H
#define XPU_REPORT_MODEL_GPU_BUSY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/gpu_interval.h"

/* At most this many buckets over the span drawn, none shorter than the minimum. */
#define GPU_BUSY_BUCKETS 2000
#define GPU_BUSY_MIN_BUCKET_NS 10000ull

/* One point of a device's counters: its value from ts on, in % with one decimal. */
typedef int (*gpu_busy_point_fn)(void *ctx, uint32_t gpu, uint64_t ts, double kernels,
				 double copies);

/*
 * iv: the intervals drawn, key gpu << 1 for a kernel, gpu << 1 | 1 for a copy or memset
 * (sorted here). Calls point() where a device's value changes, bucket by bucket, ending at 0
 * after its last bucket; with a range, [r0, r1] clips the intervals. 0, -ENOMEM, or the
 * first nonzero return of point().
 */
int gpu_busy__points(struct gpu_interval *iv, size_t n, bool has_range, uint64_t r0, uint64_t r1,
		     gpu_busy_point_fn point, void *ctx);

#endif
