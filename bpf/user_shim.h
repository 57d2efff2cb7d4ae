/* SPDX-License-Identifier: MIT */
/*
 * What bpf/cfi_walk.bpf.h and bpf/py_walk.bpf.h need from libbpf and the kernel, as user-space
 * C, shared by the two places that run those very walkers outside the kernel: the injected
 * library's in-process launch walk (cupti/walk_shim.h) and the walker tests' snapshot host
 * (tests/walker/bpf_shim.h). Include one of those, not this: each declares the shim_*
 * helpers the macros below call (and count()/count_n()), with its own contract for reads and
 * lookups, before the walkers are included.
 *
 * The kernel's contracts the walkers depend on are kept by both: a failed read zeroes its
 * buffer and returns -EFAULT, a lookup returns NULL for a key outside the map, bpf_loop stops
 * at the first callback that returns nonzero and returns the turns taken.
 */
#ifndef XPU_BPF_USER_SHIM_H
#define XPU_BPF_USER_SHIM_H

#include <linux/bpf.h>		/* map types and flags, BPF_ANY */
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "xpu_bpf_abi.h"

/* ---- libbpf's map-definition macros (bpf_helpers.h): the maps become plain variables ---- */
#define SEC(name)
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __array(name, val) typeof(val) *name[]
/* the walkers use it to keep clang from widening a bounded index; nothing to do here */
#define barrier_var(var) __asm__ __volatile__("" : "+r"(var))
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* ---- the few kernel types the walkers read (vmlinux.h) ---- */
struct pt_regs {
	unsigned long ip, sp, bp;
};

struct thread_struct {
	unsigned long fsbase;
};

struct task_struct {
	struct thread_struct thread;
	struct pt_regs regs;		/* what bpf_task_pt_regs() returns */
};

/* CO-RE reads are plain loads of one field path in user space */
#define BPF_CORE_READ(src, ...) ((src)->__VA_ARGS__)

/* ---- the helpers, onto the includer's shim_* functions ---- */
#define bpf_probe_read_user(dst, size, src) shim_probe_read_user((dst), (size), (src))
/* the walkers only copy out of their own map values */
static inline long bpf_probe_read_kernel(void *dst, __u32 size, const void *src)
{
	memcpy(dst, src, size);
	return 0;
}
#define bpf_map_lookup_elem(map, key) shim_map_lookup((map), (key))
#define bpf_map_update_elem(map, key, value, flags) shim_map_update((map), (key), (value), (flags))
#define bpf_ringbuf_output(map, data, size, flags) shim_ringbuf_output((map), (data), (size), (flags))
#define bpf_get_current_task_btf() shim_current_task()
#define bpf_task_pt_regs(task) ((void *)&(task)->regs)
#define bpf_ktime_get_ns() shim_ktime_get_ns()
#define bpf_get_smp_processor_id() shim_cpu()

/*
 * bpf_loop as the for loop it stands for. A macro, so that each callback is called with its
 * own parameter types (the BPF helper takes a void *; a call through a cast pointer would be
 * undefined) and can be inlined. Returns the number of turns taken, as the helper does.
 */
#define bpf_loop(nr, fn, ctx, flags)                                                       \
	({                                                                                 \
		__u32 __n = (nr), __i = 0;                                                 \
		while (__i < __n) {                                                        \
			long __r = fn(__i, ctx);                                           \
			__i++;                                                             \
			if (__r)                                                           \
				break;                                                     \
		}                                                                          \
		(long)__i;                                                                 \
	})

#endif
