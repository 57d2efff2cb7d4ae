/* SPDX-License-Identifier: MIT */
/*
 * The in-process launch walk (ARCHITECTURE.md section 4): what xpu-record shares with each
 * injected libxpu-cupti.so so that a launching thread walks its own stack at the launch
 * callback, with the walkers of bpf/cfi_walk.bpf.h and bpf/py_walk.bpf.h compiled as user code
 * (cupti/walk_shim.h), and what the library sends back. Both ends are the same build on the
 * same host (as common/cupti_wire.h); nothing here reaches the trace file.
 *
 * Two memfds, passed once per connection with XPU_CUPTI_MSG_SHARE (SCM_RIGHTS) and mapped
 * read-only by the library (descriptors reopened O_RDONLY by the recorder, so the mapping
 * cannot be made writable):
 *
 *  - the table arena, one per recording, shared by every process: a directory of
 *    XPU_CFI_MAX_TABLES entries, then each table's slots exactly as its cfi_tables inner map
 *    holds them (nrows struct xpu_cfi_row, then the page index words). The memfd is sized to
 *    its capacity when created (sparse: pages cost memory only once written), so it never grows
 *    under a mapping. A table is written once, then its entry's `ready` is stored with release
 *    semantics; neither changes after. Tables are indexed as in cfi_tables (xpu_cfi_map.table).
 *
 *  - the process share, one per connected process: the process's struct xpu_cfi_proc (as
 *    written to cfi_procs), its CPython layout (as py_procs) and PyTorch's node-counter TLS
 *    reference (as ag_tls), under a sequence lock: the recorder makes seq odd, writes, makes
 *    it even. A walk reads seq (acquire) before it starts and again after it ends; an odd or
 *    changed seq discards the walk (the BPF path takes that launch).
 *
 * Back from the library: XPU_CUPTI_MSG_EVENTS carries launches whose stacks were taken in
 * process, as the very ring-buffer events the BPF path sends (struct xpu_ev_pystack, then
 * struct xpu_ev_gpu_launch, same tid and ts_ns), so the recorder turns both paths' events into
 * records with one code path. XPU_CUPTI_MSG_INPROC tells where the library keeps each thread's
 * last launch for PyTorch's autograd join (bpf/autograd.bpf.h reads it from the process);
 * XPU_CUPTI_MSG_WALK_STATS the walk's counters.
 */
#ifndef XPU_WALK_SHARE_H
#define XPU_WALK_SHARE_H

#include <stdint.h>

#include "xpu_bpf_abi.h"

#define XPU_SHARE_MAGIC 0x48535058u		/* "XPSH" */
#define XPU_SHARE_VERSION 2		/* 2: the Python layout's co_filename */

/* ---- the table arena ------------------------------------------------------------------- */

struct xpu_share_table {
	uint64_t off;			/* bytes from the arena's start to slot 0, 8-aligned */
	uint32_t slots;			/* xpu_cfi_row-sized slots: rows, then the page index */
	uint32_t ready;			/* 1 once the slots are written (store-release) */
};
_Static_assert(sizeof(struct xpu_share_table) == 16, "share table entry");

struct xpu_share_arena {
	uint32_t magic;			/* XPU_SHARE_MAGIC */
	uint32_t version;		/* XPU_SHARE_VERSION */
	uint64_t capacity_bytes;	/* the memfd's size */
	struct xpu_share_table tables[XPU_CFI_MAX_TABLES];
	/* table slots follow, from XPU_SHARE_ARENA_DATA */
};
#define XPU_SHARE_ARENA_DATA ((sizeof(struct xpu_share_arena) + 4095) & ~4095ul)

/* ---- the process share ------------------------------------------------------------------ */

enum xpu_share_proc_flags {
	XPU_SHARE_CFI = 1u << 0,	/* cfi holds the process's mappings (cfi.nr may be 0) */
	XPU_SHARE_PY = 1u << 1,		/* py holds a CPython layout */
	XPU_SHARE_AG = 1u << 2,		/* ag locates libtorch's node counter */
};

struct xpu_share_proc {
	uint32_t magic;			/* XPU_SHARE_MAGIC */
	uint32_t version;		/* XPU_SHARE_VERSION */
	uint32_t seq;			/* sequence lock: odd while the recorder writes */
	uint32_t flags;			/* enum xpu_share_proc_flags */
	struct xpu_py_layout py;
	struct xpu_ag_tls ag;
	struct xpu_cfi_proc cfi;
};

/* ---- messages (common/cupti_wire.h types 5 to 8) ---------------------------------------- */

/*
 * XPU_CUPTI_MSG_SHARE, recorder to library, right after HELLO, with two descriptors in one
 * SCM_RIGHTS message: the arena, then the process share. Not sent when launch stacks are off,
 * when the recorder walks launches in BPF only (--launch-walk=bpf), or when the process's own
 * pid differs from the one the recorder sees (a pid namespace: its thread ids are not BPF's).
 */
struct xpu_cupti_share {
	uint64_t arena_bytes;		/* size to map of each */
	uint64_t proc_bytes;
};
_Static_assert(sizeof(struct xpu_cupti_share) == 16, "cupti share size");

/*
 * Per thread, in the library's memory, where bpf/autograd.bpf.h finds what the thread's last
 * complete in-process launch walk saw (struct ag_launch's fields): slot tid & (nslots - 1),
 * valid when its tid is the reading thread's. Only the thread itself writes its slot, and the
 * node probe reads it in the same thread, so a read never sees half a write.
 */
struct xpu_ag_inproc_slot {
	uint32_t tid;
	uint32_t reserved;
	uint64_t seq;			/* the node counter at the launch */
	uint64_t py_frame;		/* innermost Python frame, 0: none */
	uint64_t py_instr;		/* the 8 bytes at its instruction field */
	uint64_t ts;			/* the launch event's hdr.ts_ns, 0: none */
};
_Static_assert(sizeof(struct xpu_ag_inproc_slot) == 40, "ag inproc slot size");

/* XPU_CUPTI_MSG_INPROC, library to recorder, once the share is mapped. */
struct xpu_cupti_inproc {
	uint64_t ag_slots_addr;		/* struct xpu_ag_inproc_slot[ag_nslots] in the process; 0: none */
	uint32_t ag_nslots;		/* a power of two */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_cupti_inproc) == 16, "cupti inproc size");

/*
 * XPU_CUPTI_MSG_EVENTS payload: entries back to back, each this header and `size` bytes of one
 * ring-buffer event (xpu_bpf_abi.h) cut to what it holds (struct xpu_ev_pystack up to its nr
 * frames, struct xpu_ev_gpu_launch up to uips[ustart + nr_user]), padded to 8 bytes. hdr.pid
 * is replaced by the peer's pid; only XPU_EV_PYSTACK and XPU_EV_GPU_LAUNCH are accepted.
 */
struct xpu_cupti_event_hdr {
	uint32_t size;
	uint32_t reserved;
};

/*
 * XPU_CUPTI_MSG_WALK_STATS payload: the library's running totals since it connected (each
 * message replaces the last): cnt[] as bpf/xpu.bpf.c's counters for the walks taken in process
 * (the recorder adds them to the BPF ones, so cfi_* and py_* stats cover both paths), then the
 * in-process walk's own.
 */
enum xpu_inproc_counter {
	XPU_INPROC_WALKS = 0,		/* launches whose stack was taken in process */
	XPU_INPROC_FALLBACKS,		/* launches sent to the BPF marker instead, all reasons: */
	XPU_INPROC_FB_NO_SHARE,		/*   no share mapped (yet), or it is not this build's */
	XPU_INPROC_FB_NO_THREAD,	/*   no per-thread slot (too many threads), or its stack unknown */
	XPU_INPROC_FB_OFF_STACK,	/*   a read outside the thread's stack (a sigaltstack, a bad frame) */
	XPU_INPROC_FB_NO_TABLE,		/*   a table not in the arena yet, or a pending one */
	XPU_INPROC_FB_CHANGED,		/*   the process share changed during the walk */
	XPU_INPROC_FB_CODE_READ,	/*   a step needed code bytes (a scan or a checked frame pointer) */
	XPU_INPROC_FB_PYTHON,		/*   the Python walk could not be done in process */
	XPU_INPROC_FB_RING_FULL,	/*   the thread's queue to the flusher was full */
	XPU_INPROC_FB_INCOMPLETE,	/*   the walk did not reach the outermost frame */
	XPU_INPROC_EVENT_BYTES,		/* bytes of events sent */
	/*
	 * One launch in XPU_INPROC_TIME_EVERY taken in process is timed, walk and queueing (two
	 * vDSO clock reads): what the launching thread pays for its stack, shown by the report.
	 */
	XPU_INPROC_TIMED,		/* launches timed */
	XPU_INPROC_TIMED_NS,		/* their time in the walk and the queue, ns */
	/* since version 6: walks that took their outer frames from the thread's last walk */
	XPU_INPROC_MEMO_WALKS,		/* walks that did */
	XPU_INPROC_MEMO_FRAMES,		/* frames they took */
	XPU_INPROC_NR,
};

#define XPU_INPROC_TIME_EVERY 16

struct xpu_cupti_walk_stats {
	uint64_t cnt[XPU_CNT_NR];
	uint64_t inproc[XPU_INPROC_NR];
};

#endif
