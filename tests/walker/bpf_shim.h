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
 * Include it instead of vmlinux.h and libbpf's bpf_helpers.h (whose helpers are BPF calls);
 * the macros and kernel types shared with cupti/walk_shim.h are in bpf/user_shim.h.
 */
#ifndef XPU_WALKER_BPF_SHIM_H
#define XPU_WALKER_BPF_SHIM_H

#include "user_shim.h"

/* ---- helpers: implemented in walker_host.c against the loaded snapshot ---- */
long shim_probe_read_user(void *dst, __u32 size, const void *src);
void *shim_map_lookup(const void *map, const void *key);
long shim_map_update(const void *map, const void *key, const void *value, __u64 flags);
long shim_ringbuf_output(const void *map, const void *data, __u64 size, __u64 flags);
struct task_struct *shim_current_task(void);
__u64 shim_ktime_get_ns(void);

/* one CPU: the snapshot's */
static inline __u32 shim_cpu(void)
{
	return 0;
}

/* xpu.bpf.c's counters, which the walkers bump through count() and count_n() */

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
