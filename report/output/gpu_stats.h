/* SPDX-License-Identifier: MIT */
/*
 * The GPU sections of `--format=text` (kernels, launch sites, busy time, copies, time blocked
 * in synchronization, launch matching and clock sanity, CUPTI state per process) and the GPU
 * process states of `--format=info`. Every section is left out when the trace has no data
 * for it; output order never depends on hash order.
 */
#ifndef XPU_REPORT_OUT_GPU_STATS_H
#define XPU_REPORT_OUT_GPU_STATS_H

#include <stdio.h>

#include "model/session.h"

/* All GPU sections of the text report; prints nothing for a trace without GPU records. */
int gpu_stats__print_text(struct session *ses, FILE *out);
/* "gpu processes" for `info`: the CUPTI states each process went through; nothing if none. */
int gpu_stats__print_procs(const struct trace *t, FILE *out);

#endif
