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

SEC("uprobe")
int BPF_KPROBE(on_ag_node, void *var, void *edge)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct xpu_ev_ag_node *ev;
	__u64 node = 0, vtable = 0, ts = 0;
	__u32 input_nr = 0;

	if (!is_traced(tgid))
		return 0;
	if (bpf_probe_read_user(&node, sizeof(node), edge) ||
	    bpf_probe_read_user(&input_nr, sizeof(input_nr), (char *)edge + 16) || !node ||
	    bpf_probe_read_user(&vtable, sizeof(vtable), (void *)node)) {
		count(XPU_CNT_AG_READ_ERR);
		return 0;
	}
	if (ag_repeat(tid, node, input_nr)) {
		count(XPU_CNT_AG_NODE_REPEATS);
		return 0;
	}
	count(XPU_CNT_AG_NODES);
	if (ustack_bytes && !copy_short_walks)
		ts = emit_ustack(1, tgid, tid, XPU_EV_AG_NODE, 0);
	ts = emit_pystack(1, tgid, tid, ts, XPU_EV_AG_NODE);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(XPU_CNT_RB_LOST);
		return 0;
	}
	fill_hdr(&ev->hdr, XPU_EV_AG_NODE, tgid, tid);
	if (ts)
		ev->hdr.ts_ns = ts;
	ev->node = node;
	ev->vtable = vtable;
	ev->reserved = 0;
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
