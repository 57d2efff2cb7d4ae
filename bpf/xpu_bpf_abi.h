/* SPDX-License-Identifier: MIT */
/*
 * The ABI between bpf/xpu.bpf.c and xpu-record: ring-buffer events, counters and map keys.
 * Never written to disk (common/xpu_format.h is the on-disk layout); it only has to match
 * between the BPF object and the recorder built with it.
 */
#ifndef XPU_BPF_ABI_H
#define XPU_BPF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * bpf_get_stack() stops at the perf_event_max_stack sysctl (127 by default); one more slot
 * lets the uprobe put the return address read at [sp] in front of the FP walk.
 */
#define XPU_BPF_MAX_FRAMES 128
#define XPU_BPF_COMM_LEN 16

enum xpu_ev_type {
	XPU_EV_SAMPLE = 1,
	XPU_EV_TASK = 2,
	XPU_EV_MMAP = 3,	/* an executable mmap returned: rescan this pid's maps */
	XPU_EV_GPU_LAUNCH = 4,
	XPU_EV_USTACK = 5,	/* -g dwarf: precedes the SAMPLE or GPU_LAUNCH it belongs to */
};

/* Same values as enum xpu_task_kind in xpu_format.h. */
enum xpu_ev_task_kind {
	XPU_EV_TASK_FORK = 1,
	XPU_EV_TASK_THREAD = 2,
	XPU_EV_TASK_EXEC = 3,
	XPU_EV_TASK_EXIT = 4,
	XPU_EV_TASK_THREAD_EXIT = 5,
	XPU_EV_TASK_COMM = 6,
};

/* Per-CPU counters, summed by user space over all possible CPUs. */
enum xpu_bpf_counter {
	XPU_CNT_SAMPLES = 0,		/* perf_event hits in traced tgids */
	XPU_CNT_RB_LOST = 1,		/* bpf_ringbuf_reserve() failed: event lost */
	XPU_CNT_USTACK_ERR = 2,		/* bpf_get_stack(user) < 0 */
	XPU_CNT_KSTACK_ERR = 3,		/* bpf_get_stack(kernel) < 0 */
	XPU_CNT_TASK_EVENTS = 4,
	XPU_CNT_MMAP_EVENTS = 5,
	XPU_CNT_GPU_LAUNCHES = 6,
	XPU_CNT_TRACED_FULL = 7,	/* traced_tgids map full: a child is not followed */
	XPU_CNT_USTACK_COPIES = 8,	/* -g dwarf: stack copies sent */
	XPU_CNT_USTACK_COPY_ERR = 9,	/* -g dwarf: not a byte of the user stack was readable */
	XPU_CNT_USTACK_TOP_ERR = 10,	/* -g dwarf,SIZE,TOP: stack top unknown or unreadable */
	XPU_CNT_NR = 11,
};

struct xpu_ev_hdr {
	__u32 type;			/* enum xpu_ev_type */
	__u32 pid;			/* tgid */
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns;			/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

/* Stack sizes are bpf_get_stack()'s return value: bytes, or a negative errno. */
struct xpu_ev_sample {
	struct xpu_ev_hdr hdr;
	__s32 kstack_bytes;
	__s32 ustack_bytes;
	__u64 kips[XPU_BPF_MAX_FRAMES];
	__u64 uips[XPU_BPF_MAX_FRAMES];
};

struct xpu_ev_task {
	struct xpu_ev_hdr hdr;
	__u32 kind;			/* enum xpu_ev_task_kind */
	__u32 parent_pid;		/* FORK: tgid of the parent */
	__s32 exit_code;		/* EXIT: task->exit_code (wait status) */
	__u32 old_tid;			/* EXEC: tid that called execve (may differ from pid) */
	char comm[XPU_BPF_COMM_LEN];
};

struct xpu_ev_mmap {
	struct xpu_ev_hdr hdr;
	__u64 addr;			/* mmap() return value */
};

/*
 * uips[ustart .. ustart + nr_user) is the stack, leaf first: the marker's IP, then its caller
 * (from [sp]), then the FP walk.
 */
struct xpu_ev_gpu_launch {
	struct xpu_ev_hdr hdr;
	__u32 corr_id;
	__u32 cbid;
	__u32 domain;
	__u32 ustart;
	__s32 nr_user;			/* frames, or a negative errno from bpf_get_stack() */
	__u32 reserved;
	__u64 uips[XPU_BPF_MAX_FRAMES + 1];
};

/*
 * -g dwarf: user registers and the top `size` bytes of the user stack from regs[1] (sp). The
 * header has the same ts_ns and tid as the SAMPLE or GPU_LAUNCH event (for_type) sent right
 * after it. Only the header and `size` bytes are sent (bpf_ringbuf_output); data[] is the
 * per-CPU scratch area's room. Same regs[] order as enum xpu_ureg in xpu_format.h.
 */
#define XPU_BPF_USTACK_MAX (64u << 10)
#define XPU_BPF_USTACK_TOP_MAX (32u << 10)
#define XPU_BPF_NR_UREGS 8

/*
 * -g dwarf,SIZE,TOP: when the copy stops short of the thread's stack top, the TOP bytes below
 * that top (top_addr, top_size) follow the copy's size bytes in data[]: the outermost frames
 * (main, a thread's start, the Python interpreter's) beyond a huge frame or a deep stack.
 */
struct xpu_ev_ustack {
	struct xpu_ev_hdr hdr;
	__u32 for_type;			/* XPU_EV_SAMPLE or XPU_EV_GPU_LAUNCH */
	__u32 size;
	__u64 regs[XPU_BPF_NR_UREGS];
	__u64 top_addr;
	__u32 top_size;			/* 0: no top window */
	__u32 reserved;
	__u8 data[XPU_BPF_USTACK_MAX + XPU_BPF_USTACK_TOP_MAX];
};

#endif
