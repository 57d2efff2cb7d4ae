/* SPDX-License-Identifier: MIT */
/*
 * Busy time of a GPU: the union of its activity intervals. Kernels on different streams, and
 * copies next to kernels, overlap; summing their durations would count a busy GPU twice.
 */
#ifndef XPU_REPORT_MODEL_GPU_INTERVAL_H
#define XPU_REPORT_MODEL_GPU_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

struct gpu_interval {
	uint64_t start, end;	/* [start, end); end <= start is empty */
	uint32_t key;		/* groups intervals, e.g. the device */
};

/* Sorts by key, then start, then end. */
void gpu_intervals_sort(struct gpu_interval *iv, size_t n);
/* Length of the union of n intervals sorted by start (one key). Empty ones add nothing. */
uint64_t gpu_intervals_union(const struct gpu_interval *iv, size_t n);

#endif
