/* SPDX-License-Identifier: MIT */
/* Where the GPU library that this xpu-record injects is. */
#ifndef XPU_RECORD_GPU_LIB_H
#define XPU_RECORD_GPU_LIB_H

#define GPU_LIB_NAME "libxpu-cupti.so"

/*
 * libxpu-cupti.so of this very xpu-record, found from its own path so a build and an install
 * never mix: next to it (build/), or in ../lib/xpu-perf/ (make install). An absolute path to
 * free, or NULL: none (CPU only).
 */
char *gpu_lib__find(void);

#endif
