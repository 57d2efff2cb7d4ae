/* SPDX-License-Identifier: MIT */
/*
 * The in-process launch walk (common/walk_share.h): the launching thread's native and Python
 * stack, taken at the launch callback by bpf/cfi_walk.bpf.h and bpf/py_walk.bpf.h compiled as
 * user code (cupti/walk_shim.h), into the very events the BPF marker probe would have sent.
 * Reads only memory it has checked (the thread's own stack; the shared tables) or that the
 * thread's own interpreter owns; takes no lock, allocates nothing and makes no system call
 * on the launch path (a thread's first launch sets up its slot once).
 */
#ifndef XPU_CUPTI_INPROC_WALK_H
#define XPU_CUPTI_INPROC_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "walk_share.h"

/*
 * At injection, before any callback: the row cache, the per-thread slots and the autograd
 * slots (mmap'd, touched only as used), and the Python entry points the walk needs. 0 or
 * negative errno (then every launch takes the marker).
 */
int inproc_walk__init(void);

/*
 * The share as mapped by the flusher thread (transport), published with release semantics;
 * NULL until then. The walk validates magic, version and sizes before the first use.
 */
void inproc_walk__set_share(const struct xpu_share_arena *arena, uint64_t arena_bytes,
			    const struct xpu_share_proc *proc, uint64_t proc_bytes);
bool inproc_walk__have_share(void);
/* The walk memo (inproc_walk.c) on or off; on unless XPU_CUPTI_WALK_MEMO=0 at init. */
void inproc_walk__set_memo(bool on);

/*
 * Walks the stack the probed marker would have seen, had it been called by the function that
 * called the launch entry: the entry's stack pointer sp (the return address at [sp]) and frame
 * pointer bp. On success returns 0 and fills *py (nr 0: no Python frames; then not to be sent)
 * and *ev, stamped with the same tid and ts_ns, with their sizes as sent (the event cut to its
 * frames); else returns the enum xpu_inproc_counter reason (XPU_INPROC_FB_*), counted, and
 * the launch must take the marker. Also notes the launch for the autograd join.
 */
int inproc_walk__launch(uint32_t corr_id, uint32_t cbid, uint32_t domain, uint64_t sp,
			uint64_t bp, struct xpu_ev_pystack *py, uint32_t *py_bytes,
			struct xpu_ev_gpu_launch *ev, uint32_t *ev_bytes);

/* Counts a fallback decided outside the walk (a full queue: XPU_INPROC_FB_RING_FULL). */
void inproc_walk__count(enum xpu_inproc_counter c, uint64_t n);

/* The running totals of every thread, for XPU_CUPTI_MSG_WALK_STATS. */
void inproc_walk__stats(struct xpu_cupti_walk_stats *out);

/* Where the autograd slots are, for XPU_CUPTI_MSG_INPROC (addr 0: none). */
void inproc_walk__ag_slots(uint64_t *addr, uint32_t *nslots);

#endif
