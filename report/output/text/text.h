/* SPDX-License-Identifier: MIT */
/*
 * The sections of --format=text past the CPU tables (summary.c writes those, then these), and
 * the GPU process states of --format=info. Every section is left out when the trace has no
 * data for it; output order never depends on hash order. Each returns 0 or -ENOMEM.
 *   gpu.c     kernels, launch sites, busy time per device, copies, launch matching
 *   sync.c    time blocked in GPU synchronization, by call and by stack
 *   procs.c   CUPTI state per process
 *   memory.c  GPU memory by device and by allocating call path
 *   ioctls.c  driver ioctls by request code and by the CUDA call that made them
 */
#ifndef XPU_REPORT_OUTPUT_TEXT_H
#define XPU_REPORT_OUTPUT_TEXT_H

#include <stdio.h>

#include "model/session.h"

/* All GPU sections (gpu.c, sync.c, procs.c); nothing for a trace without GPU records. */
int text__gpu(const struct session *ses, FILE *out);
/* "gpu processes" for `info`: the CUPTI states each process went through; nothing if none. */
int text__gpu_procs(const struct trace *t, FILE *out);
/*
 * Per device: allocations, releases, peak and final bytes allocated; then the call paths that
 * allocated most, with what they still held at the end of the trace (at exit, or at the
 * fatal signal whose flush ended it). Nothing for a trace without memory records.
 */
int text__gpu_memory(const struct session *s, FILE *out);
/*
 * ioctls per request code (count, time in the syscall and inside the driver, errors), and per
 * CUDA API call that made them: the innermost API record of the same thread whose time
 * contains the ioctl's. Nothing for a trace without ioctl records.
 */
int text__ioctls(const struct session *s, FILE *out);

#endif
