// SPDX-License-Identifier: GPL-2.0
/*
 * xpu-record --driver: the ioctls of the traced tree on NVIDIA device files, from the
 * sys_enter/sys_exit_ioctl tracepoints, and, where the nvidia modules have BTF, the time spent
 * inside their ioctl entry points (fentry/fexit). A separate object from xpu.bpf.c so that
 * recording without --driver loads none of it; it shares xpu.bpf.c's traced_tgids and events
 * maps (user space reuses their fds before load), so the traced tree and the event order are
 * one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "driver_bpf_abi.h"

#define S_IFMT 00170000
#define S_IFCHR 0020000

char LICENSE[] SEC("license") = "GPL";

/* Majors of the NVIDIA character devices (195, nvidia-uvm's, ...), set by user space. */
const volatile __u32 nv_majors[XPU_DRV_MAX_MAJORS] = {};
const volatile __u32 nr_nv_majors = 0;
/* XPU_DRIVER_TEST_PATHS was given: also look files up in test_files */
const volatile bool have_test_files = false;

/* Same definitions as in xpu.bpf.c; replaced by its maps (bpf_map__reuse_fd) before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, struct xpu_drv_file_key);
	__type(value, __u8);
} test_files SEC(".maps");

/* One ioctl in progress per thread: from sys_enter to sys_exit. */
struct inflight {
	__u64 start_ns;
	__u64 drv_start_ns;
	__u64 drv_ns;
	__u32 fd;
	__u32 cmd;
	__u32 rdev;
	__u32 flags;
	__u64 ino;
	__u32 sdev;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct inflight);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XPU_DRV_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} drv_counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&drv_counters, &idx);

	if (v)
		*v += 1;
}

static __always_inline struct file *fd_file(__u32 fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (!fds || bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return NULL;
	return f;
}

/* Fills v's file fields and returns true when fd is an NVIDIA device file (or a test file). */
static __always_inline bool device_file(__u32 fd, struct inflight *v)
{
	struct file *f = fd_file(fd);
	struct inode *inode;
	__u32 major, i;
	umode_t mode;

	if (!f)
		return false;
	inode = BPF_CORE_READ(f, f_inode);
	if (!inode)
		return false;
	mode = BPF_CORE_READ(inode, i_mode);
	if ((mode & S_IFMT) == S_IFCHR) {
		v->rdev = BPF_CORE_READ(inode, i_rdev);
		major = v->rdev >> 20;
		for (i = 0; i < XPU_DRV_MAX_MAJORS && i < nr_nv_majors; i++)
			if (nv_majors[i] == major)
				return true;
	}
	if (have_test_files) {
		struct xpu_drv_file_key k = {
			.ino = BPF_CORE_READ(inode, i_ino),
			.sdev = BPF_CORE_READ(inode, i_sb, s_dev),
		};

		if (bpf_map_lookup_elem(&test_files, &k)) {
			v->rdev = 0;
			v->ino = k.ino;
			v->sdev = k.sdev;
			v->flags |= XPU_EV_IOCTL_TEST_FILE;
			return true;
		}
	}
	return false;
}

SEC("tracepoint/syscalls/sys_enter_ioctl")
int on_ioctl_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct inflight v = {};

	if (!bpf_map_lookup_elem(&traced_tgids, &tgid))
		return 0;
	v.fd = (__u32)ctx->args[0];
	v.cmd = (__u32)ctx->args[1];
	if (!device_file(v.fd, &v))
		return 0;
	count(XPU_DRV_CNT_IOCTLS);
	v.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&inflight, &tid, &v, BPF_ANY))
		count(XPU_DRV_CNT_INFLIGHT_FULL);
	return 0;
}

/* Lazy wakeups as for samples in xpu.bpf.c: the drain thread polls every 100 ms anyway. */
static __always_inline __u64 lazy_wakeup(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
			       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4 ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int on_ioctl_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct inflight *v = bpf_map_lookup_elem(&inflight, &tid);
	struct xpu_ev_ioctl *ev;

	if (!v)
		return 0;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_DRV_CNT_RB_LOST);
		bpf_map_delete_elem(&inflight, &tid);
		return 0;
	}
	ev->hdr.type = XPU_EV_DRIVER_IOCTL;
	ev->hdr.pid = id >> 32;
	ev->hdr.tid = tid;
	ev->hdr.cpu = bpf_get_smp_processor_id();
	ev->hdr.ts_ns = bpf_ktime_get_ns();
	ev->start_ns = v->start_ns;
	ev->driver_ns = v->drv_ns;
	ev->ret = ctx->ret;
	ev->fd = v->fd;
	ev->cmd = v->cmd;
	ev->rdev = v->rdev;
	ev->flags = v->flags;
	ev->ino = v->ino;
	ev->sdev = v->sdev;
	ev->reserved = 0;
	bpf_map_delete_elem(&inflight, &tid);
	bpf_ringbuf_submit(ev, lazy_wakeup());
	return 0;
}

/*
 * Inside the module: its ioctl entry points (nvidia.ko's and nvidia-uvm.ko's), attached by
 * name when their BTF has them (user space picks the targets). Only ioctls the tracepoint
 * kept have an in-flight entry, so the filter is one lookup.
 */
static __always_inline void driver_enter(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight *v = bpf_map_lookup_elem(&inflight, &tid);

	if (v)
		v->drv_start_ns = bpf_ktime_get_ns();
}

static __always_inline void driver_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight *v = bpf_map_lookup_elem(&inflight, &tid);

	if (v && v->drv_start_ns) {
		v->drv_ns += bpf_ktime_get_ns() - v->drv_start_ns;
		v->drv_start_ns = 0;
		v->flags |= XPU_EV_IOCTL_DRIVER_TIMED;
	}
}

SEC("fentry")
int BPF_PROG(on_nv_ioctl_enter)
{
	driver_enter();
	return 0;
}

SEC("fexit")
int BPF_PROG(on_nv_ioctl_exit)
{
	driver_exit();
	return 0;
}

SEC("fentry")
int BPF_PROG(on_uvm_ioctl_enter)
{
	driver_enter();
	return 0;
}

SEC("fexit")
int BPF_PROG(on_uvm_ioctl_exit)
{
	driver_exit();
	return 0;
}
