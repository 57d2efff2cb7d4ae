/* SPDX-License-Identifier: MIT */
/*
 * Several traces read as one (xpu-report A.xpu B.xpu: ranks, processes or hosts): where each
 * one's ids, pids and GPUs go in the merged trace, and the time axis they share. Every time is
 * put on the CLOCK_MONOTONIC axis of the trace that started first (in CLOCK_REALTIME), through
 * each trace's clock-sync pairs; traces of one host (and boot) share its monotonic clock
 * exactly, traces of different hosts are only as aligned as the hosts' realtime clocks (NTP).
 */
#ifndef XPU_REPORT_TRACE_MERGE_H
#define XPU_REPORT_TRACE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

#define TRACE_PARTS_MAX 256	/* pids of colliding traces move by part << 22: below 1 << 30 */

/* A trace's CLOCK_REALTIME - CLOCK_MONOTONIC at its start, from its clock map. */
struct part_clock {
	uint64_t start_mono, start_real;
	int64_t offset_ns;
};

/*
 * The shift that puts each trace on the axis of the one that started first: shift[i] =
 * offset of trace i - offset of that first one, where traces of one host (same name, offsets
 * within a second: one boot) take the first one's offset. Returns the reference's index.
 */
size_t trace_merge__align(const struct part_clock *c, const char *const *hosts, size_t n,
			  int64_t *shift);
/*
 * Loads n traces into t as one, their records within max_records bytes in all (0: the
 * default for the files' sizes together, see trace__keep_bound), each trace within its share
 * by size. 0 or negative errno, with one line in err.
 */
int trace_merge__load(struct trace *t, const char *const *paths, size_t n,
		      uint64_t max_records, char *err, size_t errlen);
#endif
