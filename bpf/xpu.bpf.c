// SPDX-License-Identifier: GPL-2.0
/*
 * xpu-record's kernel side: CPU samples, task lifecycle of the traced tree, executable mmaps
 * and the GPU launch marker uprobe. Everything goes to one ring buffer (layouts in
 * xpu_bpf_abi.h); every event that cannot be reserved is counted, never silently lost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "xpu_bpf_abi.h"

#define PROT_EXEC 0x4

char LICENSE[] SEC("license") = "GPL";

const volatile bool kernel_stacks = false;
/* -g dwarf: user-stack bytes to copy per event; 0 in -g fp mode, which then costs one test. */
const volatile __u32 ustack_bytes = 0;
/* -g dwarf,SIZE,TOP: bytes below each thread's stack top copied too when SIZE falls short */
const volatile __u32 ustack_top_bytes = 0;
/*
 * -g cfi (the default): the ustack_bytes copy is taken only for events whose walk did not
 * reach the outermost frame (a library's table still building, code without CFI or frame
 * pointer), so xpu-report unwinds those offline; -g cfi,check copies every event.
 */
const volatile bool copy_short_walks = false;

/*
 * tgid -> enum xpu_traced. Seeded by user space, grown on fork, shrunk on exit. Sized before
 * load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

/*
 * tgid -> 1 for processes of the tree that exited: the recorder still accepts the injected
 * library's connection of a short-lived process whose exit came before the accept.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} exited_tgids SEC(".maps");

/* tid -> 1 between sys_enter_mmap(PROT_EXEC) and sys_exit_mmap. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} pending_mmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XPU_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * -g dwarf scratch: XPU_BPF_SLOTS slots per CPU, indexed cpu * XPU_BPF_SLOTS + slot. A plain array,
 * not a per-CPU one: per-CPU values are limited to 32 KiB and a copy may be 64 KiB. Sized to
 * the possible CPUs by user space before load (1 entry when dwarf mode is off).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xpu_ev_ustack);
} ustack_scratch SEC(".maps");

/*
 * -g dwarf,SIZE,TOP: the top of each traced thread's stack (the stack pointer it was cloned
 * with; the main thread's comes from mm->start_stack instead). LRU: exits also delete.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} thread_stack_top SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		*v += 1;
}

static __always_inline void count_n(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		*v += n;
}

#include "py_walk.bpf.h"
#include "cfi_walk.bpf.h"

static __always_inline bool is_traced(__u32 tgid)
{
	return bpf_map_lookup_elem(&traced_tgids, &tgid) != NULL;
}

/* Traced, and running its own image (not the launched command before its exec). */
static __always_inline bool is_sampled(__u32 tgid)
{
	__u8 *v = bpf_map_lookup_elem(&traced_tgids, &tgid);

	return v && *v != XPU_TRACED_BEFORE_EXEC;
}

/* ts: the event's time when the stack events sent ahead of it took one already; 0: now */
static __always_inline void fill_hdr_at(struct xpu_ev_hdr *h, __u32 type, __u32 pid, __u32 tid,
					__u64 ts)
{
	h->type = type;
	h->pid = pid;
	h->tid = tid;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = ts ? ts : bpf_ktime_get_ns();
}

static __always_inline void fill_hdr(struct xpu_ev_hdr *h, __u32 type, __u32 pid, __u32 tid)
{
	fill_hdr_at(h, type, pid, tid, 0);
}

/*
 * Samples and launches do not wake the drain thread: a wakeup per event costs an irq_work on
 * the sampled CPU (it doubled the slowdown at 999 Hz). The drain thread polls every 100 ms, and
 * is woken only once a quarter of the ring is queued, so a burst cannot overflow it. Task and
 * mmap events force a wakeup: the drain thread must read /proc/PID/maps while PID still lives
 * (a plain submit wakes only a consumer that has caught up, which lazy samples prevent).
 */
static __always_inline __u64 lazy_wakeup(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
			       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4 ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
}

/*
 * The longest prefix of [sp, sp + want) that can be read, when all of it cannot: near the top of
 * a thread's stack the mapping ends (or a page is not present). Readable lengths end at page
 * boundaries; bisecting over them keeps up to the last readable page, where halving lost up to
 * half the copy, and with it the outermost frames. The result is read into data last, because a
 * failed read clears the buffer. 0 if not even the first page can be read.
 */
static __always_inline __u64 read_stack_prefix(void *data, __u64 sp, __u64 want)
{
	/* candidate k >= 1 is the length up to the kth page boundary above sp; 0 is empty */
	__u64 first = ((sp | 4095) + 1) - sp, lo = 0, hi, mid, len;
	int i;

	if (want <= first)
		return 0;		/* a single page, already failed */
	hi = (want - first + 4095) / 4096 + 1;	/* the first failing candidate: want itself */
	/* 64 KiB spans at most 17 boundaries: 5 steps */
	for (i = 0; i < 5 && hi - lo > 1; i++) {
		mid = (lo + hi) / 2;
		len = first + (mid - 1) * 4096;
		if (len > XPU_BPF_USTACK_MAX)
			len = XPU_BPF_USTACK_MAX;
		if (!bpf_probe_read_user(data, len, (void *)sp))
			lo = mid;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	len = first + (lo - 1) * 4096;
	if (len > XPU_BPF_USTACK_MAX)
		len = XPU_BPF_USTACK_MAX;
	return bpf_probe_read_user(data, len, (void *)sp) ? 0 : len;
}

static long vma_end(struct task_struct *task, struct vm_area_struct *vma, void *end)
{
	*(__u64 *)end = vma->vm_end;
	return 0;
}

/*
 * The top of the current thread's stack, or 0 when unknown. A thread that already ran when
 * recording began (xpu-record -p) was never seen cloning: its top is taken as the end of the
 * mapping that holds sp. For a pthread that mapping ends with the thread's TLS and descriptor
 * (a few KiB), just above where its stack began, so the window still reaches the first frames.
 * Remembered, so that the VMA lookup (it takes mmap_lock) runs once per thread.
 */
static __always_inline __u64 stack_top(__u32 pid, __u32 tid, __u64 sp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 *v, end = 0;

	if (pid == tid)
		return BPF_CORE_READ(task, mm, start_stack);
	v = bpf_map_lookup_elem(&thread_stack_top, &tid);
	if (v)
		return *v;
	if (bpf_find_vma(task, sp, vma_end, &end, 0) || end <= sp)
		return 0;
	bpf_map_update_elem(&thread_stack_top, &tid, &end, BPF_NOEXIST);
	return end;
}

/*
 * -g dwarf,SIZE,TOP: copies up to TOP bytes below the thread's stack top into data + len when
 * the len-byte copy from sp stopped short of it; the window never overlaps the copy. Returns
 * the bytes copied (0: none, or unreadable) and sets *addr to where they start.
 */
static __always_inline __u32 read_stack_top(struct xpu_ev_ustack *u, __u64 sp, __u64 len,
					    __u32 pid, __u32 tid, __u64 *addr)
{
	__u64 top = stack_top(pid, tid, sp), start, tlen;

	if (!top) {
		count(XPU_CNT_USTACK_TOP_ERR);
		return 0;
	}
	if (top <= sp + len || len > XPU_BPF_USTACK_MAX)
		return 0;
	start = top - ustack_top_bytes > sp + len ? (top - ustack_top_bytes) & ~7ull : sp + len;
	tlen = top - start;
	if (tlen > XPU_BPF_USTACK_TOP_MAX)
		tlen = XPU_BPF_USTACK_TOP_MAX;
	if (bpf_probe_read_user(u->data + len, tlen, (void *)start)) {
		count(XPU_CNT_USTACK_TOP_ERR);
		return 0;
	}
	*addr = start;
	return tlen;
}

/*
 * -g dwarf: sends the user registers and the top of the user stack as an XPU_EV_USTACK event
 * ahead of the event it belongs to, and returns the timestamp both carry (0 if nothing was
 * sent). The registers are the task's saved user registers, also when the sample interrupted
 * kernel code. Near the top of a thread's stack fewer than ustack_bytes may be mapped: then
 * what is readable is kept (read_stack_prefix).
 */
static __always_inline __u64 emit_ustack(__u32 slot, __u32 pid, __u32 tid, __u32 for_type,
					 __u64 ts)
{
	__u32 key = bpf_get_smp_processor_id() * XPU_BPF_SLOTS + slot;
	struct xpu_ev_ustack *u = bpf_map_lookup_elem(&ustack_scratch, &key);
	struct pt_regs *regs;
	__u64 sp, len;

	if (!u)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return 0;
	fill_hdr(&u->hdr, XPU_EV_USTACK, pid, tid);
	if (ts)
		u->hdr.ts_ns = ts;	/* an off-CPU block's: it began before the copy */
	u->for_type = for_type;
	u->regs[0] = regs->ip;
	u->regs[1] = sp = regs->sp;
	u->regs[2] = regs->bp;
	u->regs[3] = regs->bx;
	u->regs[4] = regs->r12;
	u->regs[5] = regs->r13;
	u->regs[6] = regs->r14;
	u->regs[7] = regs->r15;
	len = ustack_bytes;
	if (len > XPU_BPF_USTACK_MAX)
		len = XPU_BPF_USTACK_MAX;
	if (bpf_probe_read_user(u->data, len, (void *)sp))
		len = read_stack_prefix(u->data, sp, len);
	if (!len)
		count(XPU_CNT_USTACK_COPY_ERR);
	u->size = len;
	if (len > XPU_BPF_USTACK_MAX)
		return 0;
	u->top_addr = 0;
	u->top_size = ustack_top_bytes && len ?
		read_stack_top(u, sp, len, pid, tid, &u->top_addr) : 0;
	if (u->top_size > XPU_BPF_USTACK_TOP_MAX)
		return 0;
	if (bpf_ringbuf_output(&events, u, offsetof(struct xpu_ev_ustack, data) + len + u->top_size,
			       0)) {
		count(XPU_CNT_RB_LOST);
		return 0;
	}
	count(XPU_CNT_USTACK_COPIES);
	return u->hdr.ts_ns;
}

/*
 * -g cfi: the copy of an event whose walk fell short, stamped with the event's time (the
 * report joins them by type, tid and time). The event itself is still reserved, so the copy
 * lands after it in the ring; the report does not mind the order.
 */
static __always_inline void copy_if_short(__u32 slot, __u32 pid, __u32 tid, __u32 for_type,
					  __u64 ts, __u32 uflags)
{
	if (!copy_short_walks || (uflags & XPU_EV_U_OUTERMOST) || !(uflags & XPU_EV_U_COPY_PAYS))
		return;
	if (emit_ustack(slot, pid, tid, for_type, ts))
		count(XPU_CNT_CFI_SHORT_COPIES);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct xpu_ev_sample *ev;
	__u64 ts = 0;

	if (!is_sampled(tgid))
		return 0;
	count(XPU_CNT_SAMPLES);
	if (ustack_bytes && !copy_short_walks)
		ts = emit_ustack(0, tgid, (__u32)id, XPU_EV_SAMPLE, 0);
	ts = emit_pystack(0, tgid, (__u32)id, ts, XPU_EV_SAMPLE);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_CNT_RB_LOST);
		return 0;
	}
	fill_hdr_at(&ev->hdr, XPU_EV_SAMPLE, tgid, (__u32)id, ts);
	ev->kstack_bytes = 0;
	if (kernel_stacks) {
		ev->kstack_bytes = bpf_get_stack(ctx, ev->kips, sizeof(ev->kips), 0);
		if (ev->kstack_bytes < 0)
			count(XPU_CNT_KSTACK_ERR);
	}
	ev->uflags = 0;
	ev->reserved = 0;
	if (cfi_walk) {
		ev->ustack_bytes = cfi_walk_stack(0, tgid, ev->uips, &ev->uflags) * sizeof(__u64);
		copy_if_short(0, tgid, (__u32)id, XPU_EV_SAMPLE, ev->hdr.ts_ns, ev->uflags);
	} else
		ev->ustack_bytes = bpf_get_stack(ctx, ev->uips, XPU_BPF_MAX_FRAMES * sizeof(__u64),
						 BPF_F_USER_STACK);
	if (ev->ustack_bytes < 0)
		count(XPU_CNT_USTACK_ERR);
	bpf_ringbuf_submit(ev, lazy_wakeup());
	return 0;
}

static __always_inline void emit_task(__u32 kind, __u32 pid, __u32 tid, __u32 parent,
				      int exit_code, __u32 old_tid, const char *comm)
{
	struct xpu_ev_task *ev;

	count(XPU_CNT_TASK_EVENTS);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_CNT_RB_LOST);
		return;
	}
	fill_hdr(&ev->hdr, XPU_EV_TASK, pid, tid);
	ev->kind = kind;
	ev->parent_pid = parent;
	ev->exit_code = exit_code;
	ev->old_tid = old_tid;
	bpf_probe_read_kernel_str(ev->comm, sizeof(ev->comm), comm);
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (!is_traced(ptgid))
		return 0;
	if (ctgid == ptgid) {
		if (ustack_top_bytes) {
			/* clone's new stack pointer: the thread's frames all lie below it */
			struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(child);
			__u32 tid = child->pid;
			__u64 top = regs ? BPF_CORE_READ(regs, sp) : 0;

			if (top)
				bpf_map_update_elem(&thread_stack_top, &tid, &top, BPF_ANY);
		}
		emit_task(XPU_EV_TASK_THREAD, ctgid, child->pid, ptgid, 0, 0, child->comm);
		return 0;
	}
	/*
	 * Added here, in the parent's context, before the child can run: its first instruction
	 * is already covered.
	 */
	if (bpf_map_update_elem(&traced_tgids, &ctgid, &one, BPF_ANY))
		count(XPU_CNT_TRACED_FULL);
	emit_task(XPU_EV_TASK_FORK, ctgid, child->pid, ptgid, 0, 0, child->comm);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;

	__u8 *v = bpf_map_lookup_elem(&traced_tgids, &tgid);

	if (!v)
		return 0;
	/* the launched command runs its own image from here: sampled */
	if (*v == XPU_TRACED_BEFORE_EXEC)
		*v = XPU_TRACED;
	/* a new image: xpu-record looks for an interpreter in it again */
	bpf_map_delete_elem(&py_procs, &tgid);
	emit_task(XPU_EV_TASK_EXEC, p->tgid, p->pid, 0, 0, old_pid, p->comm);
	return 0;
}

#include "offcpu.bpf.h"

/*
 * The tracepoint runs after the thread decremented signal->live, so live == 0 means the
 * whole thread group is gone (read through CO-RE rather than the group_dead argument, which
 * older kernels lack).
 */
static __always_inline void ag_forget_thread(__u32 tid);	/* autograd.bpf.h */

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	__u8 one = 1;
	int live;

	if (!is_traced(tgid))
		return 0;
	live = BPF_CORE_READ(p, signal, live.counter);
	{
		__u32 tid = p->pid;

		if (ustack_top_bytes)
			bpf_map_delete_elem(&thread_stack_top, &tid);
		bpf_map_delete_elem(&py_threads, &tid);
		ag_forget_thread(tid);
		if (off_cpu)
			off_cpu_exit(tgid, tid);
	}
	if (live > 0) {
		emit_task(XPU_EV_TASK_THREAD_EXIT, tgid, p->pid, 0, 0, 0, p->comm);
		return 0;
	}
	bpf_map_update_elem(&exited_tgids, &tgid, &one, BPF_ANY);
	bpf_map_delete_elem(&traced_tgids, &tgid);
	bpf_map_delete_elem(&py_procs, &tgid);
	emit_task(XPU_EV_TASK_EXIT, tgid, p->pid, 0, p->exit_code, 0, p->comm);
	return 0;
}

/* prctl(PR_SET_NAME) and pthread_setname_np: the name the profile shows for a thread. */
SEC("tp_btf/task_rename")
int BPF_PROG(on_rename, struct task_struct *task, const char *comm)
{
	if (!is_traced(task->tgid))
		return 0;
	emit_task(XPU_EV_TASK_COMM, task->tgid, task->pid, 0, 0, 0, comm);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mmap")
int on_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	__u8 one = 1;

	if (!(ctx->args[2] & PROT_EXEC) || !is_traced(id >> 32))
		return 0;
	bpf_map_update_elem(&pending_mmap, &tid, &one, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int on_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct xpu_ev_mmap *ev;

	if (!bpf_map_lookup_elem(&pending_mmap, &tid))
		return 0;
	bpf_map_delete_elem(&pending_mmap, &tid);
	if (ctx->ret < 0 && ctx->ret > -4096)
		return 0;
	count(XPU_CNT_MMAP_EVENTS);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_CNT_RB_LOST);
		return 0;
	}
	fill_hdr(&ev->hdr, XPU_EV_MMAP, id >> 32, tid);
	ev->addr = ctx->ret;
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * The user stack of a function-entry uprobe into uips, leaf first from uips[*ustart]: with -g cfi
 * the walk (the rows of the probed function's first instruction find its caller); else the FP
 * walk, with the return address at [sp] put in front of it, because at function entry the frame
 * pointer still belongs to the caller, so the walk starts at the caller's caller. Kernels with
 * the uprobe-at-entry fix (6.12+) already report it; then it is not added twice. Returns the
 * frame count or a negative errno from bpf_get_stack().
 */
static __always_inline long entry_stack(struct pt_regs *ctx, __u32 slot, __u32 tgid, __u32 tid,
					__u32 for_type, __u64 ts, __u64 *uips, __u32 *ustart,
					__u32 *uflags)
{
	__u64 ret_addr = 0;
	long n;

	*uflags = 0;
	*ustart = 0;
	if (cfi_walk) {
		n = cfi_walk_stack(slot, tgid, uips, uflags);
		copy_if_short(slot, tgid, tid, for_type, ts, *uflags);
		return n;
	}
	n = bpf_get_stack(ctx, &uips[1], XPU_BPF_MAX_FRAMES * sizeof(__u64), BPF_F_USER_STACK);
	if (n < 0) {
		count(XPU_CNT_USTACK_ERR);
		return n;
	}
	n /= sizeof(__u64);
	bpf_probe_read_user(&ret_addr, sizeof(ret_addr), (void *)PT_REGS_SP(ctx));
	if (n >= 2 && uips[2] == ret_addr) {
		*ustart = 1;
		return n;
	}
	uips[0] = uips[1];
	uips[1] = ret_addr;
	return n + 1;
}

#include "autograd.bpf.h"

/*
 * Uprobe on xpu_cupti_api_enter(corr_id, cbid, domain) in libxpu-cupti.so. One program reads
 * the arguments and takes the stack (a tail call or per-CPU hand-off lost data in the
 * prototype).
 */
/* BPF_KPROBE: libbpf 1.1 has no BPF_UPROBE; the argument registers are the same. */
SEC("uprobe")
int BPF_KPROBE(on_gpu_launch, __u32 corr_id, __u32 cbid, __u32 domain)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct xpu_ev_gpu_launch *ev;
	__u64 ts = 0;

	if (!is_traced(tgid))
		return 0;
	count(XPU_CNT_GPU_LAUNCHES);
	if (ustack_bytes && !copy_short_walks)
		ts = emit_ustack(1, tgid, (__u32)id, XPU_EV_GPU_LAUNCH, 0);
	ts = emit_pystack(1, tgid, (__u32)id, ts, XPU_EV_GPU_LAUNCH);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_CNT_RB_LOST);
		return 0;
	}
	fill_hdr_at(&ev->hdr, XPU_EV_GPU_LAUNCH, tgid, (__u32)id, ts);
	ev->corr_id = corr_id;
	ev->cbid = cbid;
	ev->domain = domain;
	ev->nr_user = entry_stack(ctx, 1, tgid, (__u32)id, XPU_EV_GPU_LAUNCH, ev->hdr.ts_ns,
				  ev->uips, &ev->ustart, &ev->uflags);
	/* a walk that reached the end is whole without a copy: an autograd node may share it */
	if (ev->nr_user > 0 && (ev->uflags & XPU_EV_U_OUTERMOST))
		ag_note_launch(tgid, (__u32)id, ev->hdr.ts_ns);
	bpf_ringbuf_submit(ev, lazy_wakeup());
	return 0;
}

