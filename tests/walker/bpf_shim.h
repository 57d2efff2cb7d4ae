/* SPDX-License-Identifier: MIT */
/*
 * What bpf/cfi_walk.bpf.h and bpf/py_walk.bpf.h need from the kernel, as user-space code, so
 * that walker_host.c runs those very headers against a snapshot of a stopped process
 * (snapshot.h). Each helper keeps the kernel's contract where the walkers depend on it:
 * bpf_probe_read_user fails (and zeroes its buffer) unless every byte lies in readable memory
 * of the snapshot, a map lookup returns NULL for a key outside the map, bpf_loop stops at the
 * first callback that returns 1. Map storage is sized exactly, so that ASan reports a walker
 * that reads past a value.
 *
 * Include it instead of vmlinux.h and libbpf's bpf_helpers.h (whose helpers are BPF calls).
 */
#ifndef XPU_WALKER_BPF_SHIM_H
#define XPU_WALKER_BPF_SHIM_H

#include <linux/bpf.h>		/* map types and flags, BPF_ANY */
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* ---- libbpf's map-definition macros (bpf_helpers.h), which are plain C already ---- */
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

/* ---- helpers: implemented in walker_host.c against the loaded snapshot ---- */
long shim_probe_read_user(void *dst, __u32 size, const void *src);
void *shim_map_lookup(const void *map, const void *key);
long shim_map_update(const void *map, const void *key, const void *value, __u64 flags);
long shim_ringbuf_output(const void *map, const void *data, __u64 size, __u64 flags);
struct task_struct *shim_current_task(void);
__u64 shim_ktime_get_ns(void);

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
#define bpf_get_smp_processor_id() 0u

/*
 * bpf_loop as the for loop it stands for. A macro, so that each callback is called with its
 * own parameter types (the BPF helper takes a void *; a call through a cast pointer would be
 * undefined). Returns the number of turns taken, as the helper does.
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

/* xpu.bpf.c's counters, which the walkers bump through count() and count_n() */
#include "xpu_bpf_abi.h"

extern __u64 shim_counters[XPU_CNT_NR];

static inline void count(__u32 idx)
{
	if (idx < XPU_CNT_NR)
		shim_counters[idx]++;
}

static inline void count_n(__u32 idx, __u64 n)
{
	if (idx < XPU_CNT_NR)
		shim_counters[idx] += n;
}

/* the ring buffer py_walk.bpf.h sends to (xpu.bpf.c defines the real one) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

#endif
