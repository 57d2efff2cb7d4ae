/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --off-cpu: where the threads of the traced tree block. Included by xpu.bpf.c after the
 * stack helpers (emit_ustack, emit_pystack, cfi_walk_stack).
 *
 * The cost is kept off the common short block. sched_switch only stamps a thread's switch-out
 * (time, state, user ip and sp) and, at its switch-in, measures the block; one shorter than
 * off_cpu_min_ns ends there, counted. A longer one waits, still without a stack, until the
 * thread runs its own code again: a user stack can only be read by the thread it belongs to.
 * Its next sys_exit (the block was inside a syscall: futex, read, poll, nanosleep...) or its next
 * switch-out then takes the stack exactly as the sampler does (frame pointers, DWARF copy or
 * CFI walk, Python frames), but only if the saved user ip and sp are those of the switch-out:
 * the user stack is then the one the thread blocked in. If not (a thread preempted in user code
 * ran on first), the block is sent without a stack, counted.
 */
#ifndef XPU_OFFCPU_BPF_H
#define XPU_OFFCPU_BPF_H

/* TASK_* bits of task->__state, as sched_switch reports prev_state */
#define OFF_TASK_INTERRUPTIBLE 0x1
#define OFF_TASK_UNINTERRUPTIBLE 0x2
#define OFF_TASK_DEAD 0x80

const volatile bool off_cpu = false;
const volatile __u64 off_cpu_min_ns = 1000000;

struct off_cpu_thread {
	__u64 out_ns;			/* switch-out of the block in progress; 0: on a CPU */
	__u64 out_ip, out_sp;		/* user registers at that switch-out */
	__u32 out_state;		/* enum xpu_ev_off_state */
	__u32 waker;			/* tid that woke it, 0: none seen */
	/* a finished block over the minimum whose stack is still to be taken; pend_ns 0: none */
	__u64 pend_ns, pend_dur;
	__u64 pend_ip, pend_sp;
	__u32 pend_state, pend_waker;
};

/* tid -> its off-CPU state; entries of exiting threads are deleted. Sized before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct off_cpu_thread);
} off_cpu_threads SEC(".maps");

static __always_inline __u32 off_state(bool preempt, unsigned int prev_state)
{
	if (preempt || !prev_state)
		return XPU_EV_OFF_PREEMPTED;
	if (prev_state & OFF_TASK_UNINTERRUPTIBLE)
		return XPU_EV_OFF_BLOCKED;
	if (prev_state & OFF_TASK_INTERRUPTIBLE)
		return XPU_EV_OFF_SLEEPING;
	return XPU_EV_OFF_OTHER;
}

/*
 * Sends the pending block of the current thread: with its stack when the current user ip and
 * sp are the ones it blocked with, else without. ctx is the program's, for bpf_get_stack.
 */
static __always_inline void off_cpu_send(void *ctx, struct off_cpu_thread *t, __u32 tgid,
					 __u32 tid, __u64 ip, __u64 sp)
{
	bool same = ip == t->pend_ip && sp == t->pend_sp;
	struct xpu_ev_offcpu *ev;
	__u64 ts = t->pend_ns;

	t->pend_ns = 0;
	if (same) {
		if (ustack_bytes && !copy_short_walks)
			emit_ustack(2, tgid, tid, XPU_EV_OFFCPU, ts);
		emit_pystack(2, tgid, tid, ts, XPU_EV_OFFCPU);
	}
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_CNT_RB_LOST);
		return;
	}
	fill_hdr(&ev->hdr, XPU_EV_OFFCPU, tgid, tid);
	ev->hdr.ts_ns = ts;
	ev->dur_ns = t->pend_dur;
	ev->state = t->pend_state;
	ev->waker_tid = t->pend_waker;
	ev->uflags = 0;
	ev->flags = 0;
	ev->reserved = 0;
	if (!same) {
		count(XPU_CNT_OFFCPU_NO_STACK);
		ev->flags = XPU_EV_OFF_NO_STACK;
		ev->ustack_bytes = 0;
	} else if (cfi_walk) {
		ev->ustack_bytes = cfi_walk_stack(2, tgid, ev->uips, &ev->uflags) * sizeof(__u64);
		copy_if_short(2, tgid, tid, XPU_EV_OFFCPU, ts, ev->uflags);
	} else {
		ev->ustack_bytes = bpf_get_stack(ctx, ev->uips, XPU_BPF_MAX_FRAMES * sizeof(__u64),
						 BPF_F_USER_STACK);
		if (ev->ustack_bytes < 0)
			count(XPU_CNT_USTACK_ERR);
	}
	bpf_ringbuf_submit(ev, lazy_wakeup());
}

/* The current thread (prev) leaves the CPU: send what is pending, then stamp this block. */
static __always_inline void off_cpu_out(void *ctx, struct task_struct *prev, bool preempt,
					unsigned int prev_state, __u64 now)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	struct off_cpu_thread *t, zero = {};
	__u32 tid = prev->pid, tgid = prev->tgid;
	__u64 ip, sp;

	if (!regs)
		return;
	t = bpf_map_lookup_elem(&off_cpu_threads, &tid);
	if (!t) {
		if (bpf_map_update_elem(&off_cpu_threads, &tid, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&off_cpu_threads, &tid)) {
			/* the table is full: this block cannot be measured */
			count(XPU_CNT_OFFCPU_LOST);
			return;
		}
		t = bpf_map_lookup_elem(&off_cpu_threads, &tid);
		if (!t)
			return;
	}
	ip = BPF_CORE_READ(regs, ip);
	sp = BPF_CORE_READ(regs, sp);
	if (t->pend_ns)
		off_cpu_send(ctx, t, tgid, tid, ip, sp);
	t->out_ip = ip;
	t->out_sp = sp;
	t->out_state = off_state(preempt, prev_state);
	t->waker = 0;
	t->out_ns = now;
}

/* next is switched in (prev's context): measure its block; keep it if it is long enough. */
static __always_inline void off_cpu_in(struct task_struct *next, __u64 now)
{
	__u32 tid = next->pid;
	struct off_cpu_thread *t = bpf_map_lookup_elem(&off_cpu_threads, &tid);
	__u64 dur;

	if (!t || !t->out_ns)
		return;
	dur = now - t->out_ns;
	if (dur < off_cpu_min_ns) {
		count(XPU_CNT_OFFCPU_SHORT);
	} else {
		/* its own switch-out sent the previous one, unless a send failed half-way */
		if (t->pend_ns)
			count(XPU_CNT_OFFCPU_LOST);
		t->pend_ns = t->out_ns;
		t->pend_dur = dur;
		t->pend_ip = t->out_ip;
		t->pend_sp = t->out_sp;
		t->pend_state = t->out_state;
		t->pend_waker = t->waker;
	}
	t->out_ns = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = 0;

	/* a dead thread's last switch: on_exit already sent and forgot its state */
	if (is_sampled(prev->tgid) && !(prev_state & OFF_TASK_DEAD)) {
		now = bpf_ktime_get_ns();
		off_cpu_out(ctx, prev, preempt, prev_state, now);
	}
	if (is_sampled(next->tgid))
		off_cpu_in(next, now ? now : bpf_ktime_get_ns());
	return 0;
}

/*
 * sched_waking runs in the waker (sched_wakeup may run on the target CPU, from an IPI):
 * remember which thread of the tree woke a blocked one. Wakers outside the tree are left out:
 * a timer's wakeup runs in whatever thread its interrupt hit, which would name a bystander.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct *p)
{
	__u64 id;
	__u32 tid;
	struct off_cpu_thread *t;

	if (!is_traced(p->tgid))
		return 0;
	id = bpf_get_current_pid_tgid();
	if (!is_traced(id >> 32))
		return 0;
	tid = p->pid;
	t = bpf_map_lookup_elem(&off_cpu_threads, &tid);
	if (t && t->out_ns)
		t->waker = (__u32)id;
	return 0;
}

/* A syscall returns to user code: the block it held, if any, gets its stack now. */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit_offcpu, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct off_cpu_thread *t = bpf_map_lookup_elem(&off_cpu_threads, &tid);

	if (!t || !t->pend_ns)
		return 0;
	off_cpu_send(ctx, t, id >> 32, tid, BPF_CORE_READ(regs, ip), BPF_CORE_READ(regs, sp));
	return 0;
}

/* A thread of the tree exits: a block it still held goes out without a stack. */
static __always_inline void off_cpu_exit(__u32 tgid, __u32 tid)
{
	struct off_cpu_thread *t = bpf_map_lookup_elem(&off_cpu_threads, &tid);
	struct xpu_ev_offcpu *ev;

	if (!t)
		return;
	if (t->pend_ns) {
		ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
		if (ev) {
			fill_hdr(&ev->hdr, XPU_EV_OFFCPU, tgid, tid);
			ev->hdr.ts_ns = t->pend_ns;
			ev->dur_ns = t->pend_dur;
			ev->state = t->pend_state;
			ev->waker_tid = t->pend_waker;
			ev->ustack_bytes = 0;
			ev->uflags = 0;
			ev->flags = XPU_EV_OFF_NO_STACK;
			ev->reserved = 0;
			count(XPU_CNT_OFFCPU_NO_STACK);
			bpf_ringbuf_submit(ev, lazy_wakeup());
		} else {
			count(XPU_CNT_RB_LOST);
		}
	}
	bpf_map_delete_elem(&off_cpu_threads, &tid);
}

#endif
