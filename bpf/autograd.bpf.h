/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PyTorch autograd: what the report needs to put backward work under the forward code that
 * caused it (included by xpu.bpf.c). Two facts, read with no change to the target:
 *  - forward: torch::autograd::impl::set_gradient_edge(const Variable&, Edge) runs when an
 *    op's output gets the node that will compute its gradient; Edge is passed by invisible
 *    reference (it holds a shared_ptr), so the second argument points at {Node*, ctrl, input_nr}.
 *    The event carries the stack, as a launch does.
 *  - backward: Engine::evaluate_function(graph_task&, Node*, InputBuffer&, queue&) evaluates
 *    one node: the third argument is the node. No probe marks its end: while it runs, the
 *    return address read at [sp] here is in every stack of the thread, and the report tells
 *    the node's work by that (a uretprobe would also put its trampoline's address in those
 *    stacks, and every walk of the node's samples and launches would stop there).
 * xpu-record attaches these where it finds the symbols (record/autograd_probe.c); the report
 * joins a backward evaluation to the forward event of the same node address and class.
 *
 * The forward stack is most of what attribution costs (a walk per node, as long as a launch's),
 * and for an op that launched GPU work it is already known: the launch's. An op makes its node
 * (at::sequence_number::get_and_increment(), the thread's node counter goes to N + 1), then
 * runs its kernels, then sets the node on its outputs (here). A launch of the same thread that
 * saw the counter at N + 1 and the same innermost Python frame at the same instruction as this
 * event happened after the node was made, and no other node was made since, in the same Python
 * call: the node event then names that launch instead of walking (XPU_EV_AG_FROM_LAUNCH).
 * Anything else (no launch since the node was made: views, CPU ops; no counter located) walks.
 */

/* tid -> the node and output number of the thread's last forward event */
struct ag_last {
	__u64 node;
	__u32 input_nr;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct ag_last);
} ag_last_node SEC(".maps");

/*
 * An op with several outputs sets the same node on each, output numbers rising: one event (and
 * one stack walk) per node is enough. A new node that reuses the address of the one before
 * starts again at a lower or equal output number, so it is sent.
 */
static __always_inline bool ag_repeat(__u32 tid, __u64 node, __u32 input_nr)
{
	struct ag_last *last = bpf_map_lookup_elem(&ag_last_node, &tid);
	struct ag_last now = { .node = node, .input_nr = input_nr };
	bool repeat = last && last->node == node && input_nr > last->input_nr;

	if (last) {
		last->node = node;
		last->input_nr = input_nr;
	} else {
		bpf_map_update_elem(&ag_last_node, &tid, &now, BPF_ANY);
	}
	return repeat;
}

/* tgid -> where its node counter lives; filled by xpu-record (record/autograd_probe.c) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct xpu_ag_tls);
} ag_tls SEC(".maps");

/*
 * tid -> what its last walked launch saw, for the node event of the same op. Only threads that
 * made a node have one (the node event adds it): the engine's threads, which launch the
 * backward's kernels and make no node, pay nothing at their launches.
 */
struct ag_launch {
	__u64 seq;			/* the node counter */
	__u64 py_frame;			/* innermost Python frame, 0: none */
	__u64 py_instr;			/* the 8 bytes at its instruction field */
	__u64 ts;			/* the launch event's hdr.ts_ns, 0: no launch yet */
	__u64 dtv, block;		/* the thread's dtv when block (its counter's) was read */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct ag_launch);
} ag_launches SEC(".maps");

/*
 * The current thread's node counter, through glibc's dtv as __tls_get_addr() finds it (see
 * record/tls_ref.h): false when the thread has no block for it yet. The block of a loaded
 * module does not move; the dtv does when it grows, so the block's address is kept with the
 * dtv it was read from and read again when that changes.
 */
static __always_inline bool ag_seq_now(const struct xpu_ag_tls *t, struct ag_launch *la, __u64 *seq)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fs = BPF_CORE_READ(task, thread.fsbase), dtv = 0, len = 0, block = 0;

	if (!fs || bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(fs + XPU_TLS_TCB_DTV)) || !dtv)
		return false;
	if (dtv == la->dtv && la->block) {
		block = la->block;
	} else {
		if (bpf_probe_read_user(&len, sizeof(len), (void *)(dtv - XPU_TLS_DTV_ENTRY)) ||
		    !t->modid || t->modid > len ||
		    bpf_probe_read_user(&block, sizeof(block),
					(void *)(dtv + t->modid * XPU_TLS_DTV_ENTRY)) ||
		    !block || block == XPU_TLS_DTV_UNALLOCATED)
			return false;
		la->dtv = dtv;
		la->block = block;
	}
	return !bpf_probe_read_user(seq, sizeof(*seq), (void *)(block + t->off));
}

/* The thread's innermost Python frame and its instruction field (0, 0 outside Python). */
static __always_inline void ag_py_site(__u32 slot, __u32 tgid, __u32 tid, __u64 *frame,
				       __u64 *instr)
{
	const struct xpu_py_layout *l = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk_state *w;
	__u64 ts;

	*frame = 0;
	*instr = 0;
	if (!l)
		return;
	w = bpf_map_lookup_elem(&py_scratch, &slot);
	if (!w)
		return;
	w->l = *l;
	/* an op's event, as a launch: a sample's "none found" does not hide its thread */
	ts = py_tstate(w, &slot, tid, bpf_ktime_get_ns(), 1);
	*frame = ts ? py_top_frame(w, ts) : 0;
	if (*frame)
		bpf_probe_read_user(instr, sizeof(*instr), (void *)(*frame + w->l.fr_instr));
}

/*
 * After a launch's complete walk, in slot 1 (the launch's): what a node event of the same op
 * compares with. The Python site is the walk's own (emit_pystack ran just before).
 */
static __always_inline void ag_note_launch(__u32 tgid, __u32 tid, __u64 ts)
{
	struct ag_launch *la = bpf_map_lookup_elem(&ag_launches, &tid);
	const struct xpu_ag_tls *t;
	struct py_walk_state *w;
	__u32 slot = 1;

	if (!la || !(t = bpf_map_lookup_elem(&ag_tls, &tgid)))
		return;
	if (!ag_seq_now(t, la, &la->seq)) {
		la->ts = 0;
		return;
	}
	w = bpf_map_lookup_elem(&py_scratch, &slot);
	la->py_frame = w ? w->top_frame : 0;
	la->py_instr = w ? w->top_instr : 0;
	la->ts = ts;
}

/*
 * tgid -> where its libxpu-cupti.so keeps each thread's last launch walked in process (those
 * never reach ag_note_launch); filled by xpu-record from the library's INPROC message.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct xpu_ag_inproc);
} ag_inproc SEC(".maps");

/* common/walk_share.h struct xpu_ag_inproc_slot (that header is not BPF's to include) */
struct ag_inproc_slot {
	__u32 tid;
	__u32 reserved;
	__u64 seq;
	__u64 py_frame;
	__u64 py_instr;
	__u64 ts;
};
_Static_assert(sizeof(struct ag_inproc_slot) == 40, "ag inproc slot size");

/*
 * The thread's last launch, of either path: the newer of what BPF noted (la) and what the
 * thread's in-process slot holds. The slot is the thread's own memory, written only by the
 * thread, so reading it here (in the same thread) never sees half a write; a slot of another
 * thread (tid mismatch) or a stale one loses to la.
 */
static __always_inline void ag_last_launch(__u32 tgid, __u32 tid, const struct ag_launch *la,
					   struct ag_launch *out)
{
	const struct xpu_ag_inproc *ip = bpf_map_lookup_elem(&ag_inproc, &tgid);
	struct ag_inproc_slot slot;
	__u32 n;

	out->seq = la->seq;
	out->py_frame = la->py_frame;
	out->py_instr = la->py_instr;
	out->ts = la->ts;
	if (!ip)
		return;
	n = ip->nslots;
	if (!n || n > XPU_AG_INPROC_MAX_SLOTS || (n & (n - 1)) ||
	    bpf_probe_read_user(&slot, sizeof(slot),
				(void *)(ip->addr + (__u64)(tid & (n - 1)) * sizeof(slot))))
		return;
	if (slot.tid != tid || !slot.ts || slot.ts <= la->ts)
		return;
	out->seq = slot.seq;
	out->py_frame = slot.py_frame;
	out->py_instr = slot.py_instr;
	out->ts = slot.ts;
}

/* The launch of the op that made the node now being set, if any (see the top of this file). */
static __always_inline bool ag_op_launch(__u32 tgid, __u32 tid, __u64 *launch_ts)
{
	struct ag_launch *la = bpf_map_lookup_elem(&ag_launches, &tid), fresh = {}, last;
	const struct xpu_ag_tls *t;
	__u64 seq = 0, frame, instr;

	if (!la) {
		/*
		 * the thread's first node: its BPF launches are noted from now on; a launch
		 * walked in process needs no note, but the counter's read keeps its dtv in la
		 */
		bpf_map_update_elem(&ag_launches, &tid, &fresh, BPF_ANY);
		la = bpf_map_lookup_elem(&ag_launches, &tid);
		if (!la)
			return false;
	}
	ag_last_launch(tgid, tid, la, &last);
	t = bpf_map_lookup_elem(&ag_tls, &tgid);
	if (!t || !last.ts || !ag_seq_now(t, la, &seq) || seq != last.seq)
		return false;
	ag_py_site(1, tgid, tid, &frame, &instr);
	if (frame != last.py_frame || instr != last.py_instr)
		return false;
	*launch_ts = last.ts;
	return true;
}

/* A thread ended (bpf/xpu.bpf.c on_exit): its entries go, so a new thread starts clean. */
static __always_inline void ag_forget_thread(__u32 tid)
{
	bpf_map_delete_elem(&ag_launches, &tid);
	bpf_map_delete_elem(&ag_last_node, &tid);
}

SEC("uprobe")
int BPF_KPROBE(on_ag_node, void *var, void *edge)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct xpu_ev_ag_node *ev;
	__u64 node = 0, vtable = 0, ts = 0, launch_ts = 0, e[3];	/* Edge: node, ctrl, input_nr */
	__u32 input_nr;

	if (!is_traced(tgid))
		return 0;
	if (bpf_probe_read_user(e, sizeof(e), edge) || !(node = e[0]) ||
	    bpf_probe_read_user(&vtable, sizeof(vtable), (void *)node)) {
		count(XPU_CNT_AG_READ_ERR);
		return 0;
	}
	input_nr = (__u32)e[2];
	if (ag_repeat(tid, node, input_nr)) {
		count(XPU_CNT_AG_NODE_REPEATS);
		return 0;
	}
	count(XPU_CNT_AG_NODES);
	if (ag_op_launch(tgid, tid, &launch_ts)) {
		ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
		if (!ev) {
			count(XPU_CNT_RB_LOST);
			return 0;
		}
		count(XPU_CNT_AG_NODES_FROM_LAUNCH);
		fill_hdr(&ev->hdr, XPU_EV_AG_NODE, tgid, tid);
		ev->node = node;
		ev->vtable = vtable;
		ev->ag_flags = XPU_EV_AG_FROM_LAUNCH;
		ev->launch_ts = launch_ts;
		ev->ustart = 0;
		ev->nr_user = 0;
		ev->uflags = 0;
		ev->uips[0] = 0;
		bpf_probe_read_user(&ev->uips[0], sizeof(ev->uips[0]), (void *)PT_REGS_SP(ctx));
		bpf_ringbuf_submit(ev, lazy_wakeup());
		return 0;
	}
	if (ustack_bytes && !copy_short_walks)
		ts = emit_ustack(1, tgid, tid, XPU_EV_AG_NODE, 0);
	ts = emit_pystack(1, tgid, tid, ts, XPU_EV_AG_NODE);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_CNT_RB_LOST);
		return 0;
	}
	fill_hdr_at(&ev->hdr, XPU_EV_AG_NODE, tgid, tid, ts);
	ev->node = node;
	ev->vtable = vtable;
	ev->ag_flags = 0;
	ev->launch_ts = 0;
	ev->nr_user = entry_stack(ctx, 1, tgid, tid, XPU_EV_AG_NODE, ev->hdr.ts_ns, ev->uips,
				  &ev->ustart, &ev->uflags);
	bpf_ringbuf_submit(ev, lazy_wakeup());
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_ag_eval_begin, void *engine, void *graph_task, void *node)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct xpu_ev_ag_eval *ev;

	if (!is_traced(tgid))
		return 0;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_CNT_RB_LOST);
		return 0;
	}
	count(XPU_CNT_AG_EVALS);
	fill_hdr(&ev->hdr, XPU_EV_AG_EVAL, tgid, (__u32)id);
	ev->cookie = (__u32)bpf_get_attach_cookie(ctx);
	ev->reserved = 0;
	ev->node = (__u64)node;
	ev->vtable = 0;
	ev->ret_addr = 0;
	ev->ip = PT_REGS_IP(ctx);
	ev->sp = PT_REGS_SP(ctx);
	if (bpf_probe_read_user(&ev->vtable, sizeof(ev->vtable), node) ||
	    bpf_probe_read_user(&ev->ret_addr, sizeof(ev->ret_addr), (void *)PT_REGS_SP(ctx)))
		count(XPU_CNT_AG_READ_ERR);
	bpf_ringbuf_submit(ev, lazy_wakeup());
	return 0;
}
