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
 * The macros and kernel types shared with tests/walker are in bpf/user_shim.h.
 */
#ifndef XPU_CUPTI_WALK_SHIM_H
#define XPU_CUPTI_WALK_SHIM_H

#include "user_shim.h"

/*
 * The windows: in BPF a user read is a helper call that costs more than a frame's work, so the
 * walkers read a page's worth at once; here a read is a memcpy, and 4 KiB windows copied far
 * more than a walk uses. Both stay powers of two: py_walk.bpf.h masks window offsets with
 * 2 * PY_WIN_BYTES - 1, its thread-state read needs 2 * PY_WIN_BYTES + 8 >= PY_TS_SPAN (256)
 * and a frame read XPU_PY_FRAME_READ_MAX (104) <= PY_WIN_BYTES; a CFI read takes at least 8.
 */
#define CFI_WIN_BYTES 256
#define PY_WIN_BYTES 256

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
/* the thread's last walk, as a suffix of this one (inproc_walk.c, "the walk memo") */
struct cfi_scratch;
struct cfi_walk;
struct xpu_cfi_row;
static __always_inline int shim_cfi_memo(struct cfi_scratch *s, struct cfi_walk *w, __u32 i);
static __always_inline void shim_cfi_note(const struct cfi_walk *w, __u32 i,
					  const struct xpu_cfi_row *row);
#define CFI_STEP_MEMO(s, w, i) shim_cfi_memo((s), (w), (i))
#define CFI_ROW_NOTE(w, i, row) shim_cfi_note((w), (i), (row))
static __always_inline void count_n(__u32 idx, __u64 n);

/* the ring buffer py_walk.bpf.h sends to: here the caller's struct xpu_ev_pystack */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1);
} events SEC(".maps");

#endif
