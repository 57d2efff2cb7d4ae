/* SPDX-License-Identifier: MIT */
/*
 * Names from the trace that every output prints the same way, made once per session: kernel
 * names demangled (the GPU-work join's leaves, text's kernel table, chrome's slices and
 * jsonl's kernels each demangled every name again, each with its own rules).
 */
#ifndef XPU_REPORT_MODEL_KERNEL_NAMES_H
#define XPU_REPORT_MODEL_KERNEL_NAMES_H

#include <stdint.h>

#include "base/containers.h"
#include "trace/trace.h"

struct kernel_names {
	const struct trace *t;
	struct strpool pool;		/* the demangled forms */
	struct kmap kernel_idx;		/* trace string id -> pool id, for names that demangle */
};

/* Demangles each distinct kernel name of t once. 0 or -ENOMEM; free either way. */
int kernel_names__build(struct kernel_names *n, const struct trace *t);
/*
 * Kernel name string name_str as shown: demangled where it is a C++ name the demangler takes,
 * else as recorded; NULL when the trace has no such string (callers say "[unknown kernel]").
 */
const char *kernel_names__get(const struct kernel_names *n, uint32_t name_str);
void kernel_names__free(struct kernel_names *n);

#endif
