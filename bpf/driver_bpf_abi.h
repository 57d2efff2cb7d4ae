/* SPDX-License-Identifier: MIT */
/*
 * The ABI between bpf/driver.bpf.c (xpu-record --driver) and record/driver_trace.c. Events go
 * to xpu.bpf.c's ring buffer (the map is shared by fd) behind the same struct xpu_ev_hdr, with
 * a type number of their own, far from xpu_bpf_abi.h's so that neither side's additions clash.
 */
#ifndef XPU_DRIVER_BPF_ABI_H
#define XPU_DRIVER_BPF_ABI_H

#include "xpu_bpf_abi.h"

#define XPU_EV_DRIVER_IOCTL 32

/* Character-device majors of NVIDIA device files, from /proc/devices at start. */
#define XPU_DRV_MAX_MAJORS 8

enum xpu_drv_counter {
	XPU_DRV_CNT_IOCTLS = 0,		/* ioctls on device files by traced threads */
	XPU_DRV_CNT_RB_LOST = 1,	/* the ring buffer had no room for one */
	XPU_DRV_CNT_INFLIGHT_FULL = 2,	/* the in-flight table had no room for one */
	XPU_DRV_CNT_NR = 4,
};

/* A file the tests treat as a device file (XPU_DRIVER_TEST_PATHS): its inode and sb->s_dev. */
struct xpu_drv_file_key {
	__u64 ino;
	__u32 sdev;
	__u32 reserved;
};

enum xpu_ev_ioctl_flags {
	XPU_EV_IOCTL_DRIVER_TIMED = 1,	/* driver_ns came from fentry/fexit in the module */
	XPU_EV_IOCTL_TEST_FILE = 2,	/* matched as a test file, not by its major */
};

/* hdr.ts_ns is the syscall's exit. */
struct xpu_ev_ioctl {
	struct xpu_ev_hdr hdr;
	__u64 start_ns;
	__u64 driver_ns;
	__s64 ret;
	__u32 fd;
	__u32 cmd;
	__u32 rdev;			/* kernel encoding: major << 20 | minor */
	__u32 flags;			/* enum xpu_ev_ioctl_flags */
	__u64 ino;			/* test files: their key, to name them */
	__u32 sdev;
	__u32 reserved;
};

#endif
