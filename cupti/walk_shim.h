/* SPDX-License-Identifier: MIT */
/*
 * What bpf/cfi_walk.bpf.h and bpf/py_walk.bpf.h need from the kernel, as code that runs in the
 * launching thread itself (cupti/inproc_walk.c, the only includer): include it instead of
 * vmlinux.h and libbpf's bpf_helpers.h, then the two walkers unchanged, in xpu.bpf.c's order.
 *
 * Unlike tests/walker/bpf_shim.h, which serves a snapshot and may be slow, this runs on every
 * CUDA launch: a map lookup is a compare of the map's address with the few the walkers name
 * (folded by the compiler, each call site names one map), a read is a memcpy, and nothing
 * takes a lock or makes a system call. The helpers are only declared here: inproc_walk.c
 * defines them after the walkers, because they dispatch on the walkers' own map variables.
 *
 * The kernel's contracts that the walkers depend on are kept: a failed read zeroes its buffer
 * and returns -EFAULT, a lookup returns NULL for a key outside the map, bpf_loop stops at the
 * first callback that returns nonzero and returns the turns taken.
 */
#ifndef XPU_CUPTI_WALK_SHIM_H
#define XPU_CUPTI_WALK_SHIM_H

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
#define barrier_var(var) __asm__ __volatile__("" : "+r"(var))
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/*
 * The windows: in BPF a user read is a helper call that costs more than a frame's work, so the
 * walkers read a page's worth at once; here a read is a memcpy, and 4 KiB windows copied far
 * more than a walk uses. Both stay powers of two: py_walk.bpf.h masks window offsets with
 * 2 * PY_WIN_BYTES - 1, its thread-state read needs 2 * PY_WIN_BYTES + 8 >= PY_TS_SPAN (256)
 * and a frame read XPU_PY_FRAME_READ_MAX (104) <= PY_WIN_BYTES; a CFI read takes at least 8.
 */
#define CFI_WIN_BYTES 256
#define PY_WIN_BYTES 256

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

/* ---- helpers, defined in inproc_walk.c ---- */
static __always_inline long shim_probe_read_user(void *dst, __u32 size, const void *src);
static __always_inline void *shim_map_lookup(const void *map, const void *key);
static __always_inline long shim_map_update(const void *map, const void *key, const void *value,
					    __u64 flags);
static __always_inline long shim_ringbuf_output(const void *map, const void *data, __u64 size,
						__u64 flags);
static __always_inline struct task_struct *shim_current_task(void);
static __always_inline __u32 shim_cpu(void);
static __always_inline __u64 shim_ktime_get_ns(void);
static __always_inline void count(__u32 idx);
static __always_inline void count_n(__u32 idx, __u64 n);

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
 * bpf_loop as the for loop it stands for; a macro, so that each callback is called with its
 * own parameter types and can be inlined.
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

/* the ring buffer py_walk.bpf.h sends to: here the caller's struct xpu_ev_pystack */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1);
} events SEC(".maps");

#endif
