/* SPDX-License-Identifier: MIT */
/* The text report's GPU memory sections (GPU_MEMORY records, format 1.4). */
#ifndef XPU_REPORT_OUT_GPU_MEMORY_H
#define XPU_REPORT_OUT_GPU_MEMORY_H

#include <stdio.h>

#include "model/session.h"

/*
 * Per device: allocations, releases, peak and final bytes allocated; then the call paths that
 * allocated most, with what they still held at the end of the trace (at exit, or at the
 * fatal signal whose flush ended it). Prints nothing for a trace without memory records.
 * 0 or -ENOMEM.
 */
int gpu_memory__print_text(struct session *s, FILE *out);

#endif
