// SPDX-License-Identifier: MIT
/*
 * One thread polls the ring buffer. It is the only writer of the live process tree and the only
 * owner of the mapping tracker, so both change in event order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "autograd/ag_launch_cache.h"
#include "autograd/autograd_probe.h"
#include "clock.h"
#include "config.h"
#include "driver_bpf_abi.h"
#include "driver_trace.h"
#include "proc_tree.h"
#include "procmaps.h"
#include "python/py_procs.h"
#include "rb_drain.h"
#include "writer_thread.h"
#include "xpu_bpf_abi.h"

#define RB_POLL_MS 100
/* Exit events can be lost when the ring buffer is full: check liveness this often. */
#define RB_LIVENESS_NS (1000ull * 1000 * 1000)

struct rb_drain {
	struct ring_buffer *rb;
	struct writer_thread *wt;
	struct procmaps *pm;
	struct py_procs *py;		/* NULL: no Python frames */
	pthread_t thread;
	_Atomic bool stop;
	struct proc_tree *tree;
	struct driver_trace *_Atomic driver;	/* --driver, else NULL */
	struct autograd_probe *ag;	/* PyTorch autograd probes, else NULL */
	struct ag_launch_cache *launches;	/* with ag: launch stacks for nodes of the same op */
	struct ag_stack node_stack;	/* a node's stack made from its launch's */
	uint64_t last_liveness_ns;
	struct rb_drain_stats st;
};

static void check_liveness(struct rb_drain *d)
{
	pid_t gone[64];
	size_t i, n = proc_tree__reap_gone(d->tree, gone, 64);

	for (i = 0; i < n; i++) {
		log_info("pid %d is gone without an exit event", gone[i]);
		procmaps__forget(d->pm, gone[i]);
	}
}

static uint32_t stack_frames(int32_t bytes)
{
	return bytes > 0 ? (uint32_t)bytes / sizeof(uint64_t) : 0;
}

static void on_sample(struct rb_drain *d, const struct xpu_ev_sample *ev)
{
	uint32_t nk = stack_frames(ev->kstack_bytes), nu = stack_frames(ev->ustack_bytes);
	uint64_t ips[XPU_BPF_MAX_FRAMES + XPU_BPF_MAX_UFRAMES];
	struct xpu_rec_cpu_sample rec = {
		.ts_ns = ev->hdr.ts_ns,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.cpu = (uint16_t)ev->hdr.cpu,
		.flags = ev->uflags & XPU_EV_U_OUTERMOST ? XPU_EVENT_USER_OUTERMOST : 0,
	};
	struct wt_rec r = {
		.type = XPU_REC_CPU_SAMPLE,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
	};

	if (nk > XPU_BPF_MAX_FRAMES)
		nk = XPU_BPF_MAX_FRAMES;
	if (nu > XPU_BPF_MAX_UFRAMES)
		nu = XPU_BPF_MAX_UFRAMES;
	d->st.samples++;
	if (ev->ustack_bytes < 0 || ev->kstack_bytes < 0)
		d->st.stack_errors++;
	if (nu)
		procmaps__check_ip(d->pm, ev->hdr.pid, ev->uips[0], ev->hdr.ts_ns);
	if (nk + nu) {
		memcpy(ips, ev->kips, nk * sizeof(uint64_t));
		memcpy(ips + nk, ev->uips, nu * sizeof(uint64_t));
		r.has_stack = true;
		r.stack_off = offsetof(struct xpu_rec_cpu_sample, stack_id);
		r.ips = ips;
		r.nr_kernel = (uint16_t)nk;
		r.nr_user = (uint16_t)nu;
	}
	if (d->py)
		py_procs__attach(d->py, rec.tid, rec.ts_ns, &r,
				 offsetof(struct xpu_rec_cpu_sample, py_stack_id));
	writer_thread__submit(d->wt, &r);
}

static void on_task(struct rb_drain *d, const struct xpu_ev_task *ev)
{
	struct xpu_rec_task rec = {
		.ts_ns = ev->hdr.ts_ns,
		.kind = ev->kind,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.parent_pid = ev->parent_pid,
		.exit_code = ev->kind == XPU_EV_TASK_EXIT ? ev->exit_code : 0,
	};
	struct wt_rec r = {
		.type = XPU_REC_TASK,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
		.nr_str = 1,
		.str = { { offsetof(struct xpu_rec_task, comm_str), ev->comm,
			   strnlen(ev->comm, sizeof(ev->comm)) } },
		.must_keep = true,
	};

	d->st.task_events++;
	writer_thread__submit(d->wt, &r);
	switch (ev->kind) {
	case XPU_EV_TASK_FORK:
		proc_tree__add(d->tree, ev->hdr.pid);
		/* The child shares its parent's image until it execs. */
		procmaps__scan(d->pm, ev->hdr.pid, ev->hdr.ts_ns, false);
		break;
	case XPU_EV_TASK_EXEC:
		autograd_probe__forget(d->ag, ev->hdr.pid);
		if (d->py)
			py_procs__forget(d->py, ev->hdr.pid);
		procmaps__scan(d->pm, ev->hdr.pid, ev->hdr.ts_ns, true);
		break;
	case XPU_EV_TASK_THREAD_EXIT:
		autograd_probe__thread_exit(d->ag, ev->hdr.tid);
		break;
	case XPU_EV_TASK_EXIT:
		autograd_probe__thread_exit(d->ag, ev->hdr.tid);
		autograd_probe__forget(d->ag, ev->hdr.pid);
		if (d->py)
			py_procs__forget(d->py, ev->hdr.pid);
		proc_tree__exited(d->tree, ev->hdr.pid, ev->exit_code);
		procmaps__forget(d->pm, ev->hdr.pid);
		break;
	default:
		break;
	}
}

/*
 * A function-entry uprobe's stack (bpf entry_stack(): uips[ustart..], nr_user frames or a negative
 * errno) and Python frames into r, whose record has them at stack_off and py_off.
 */
static void entry_stack(struct rb_drain *d, struct wt_rec *r, const struct xpu_ev_hdr *h,
			const __u64 *uips, uint32_t ustart, int32_t nr_user, uint32_t stack_off,
			uint32_t py_off)
{
	uint32_t nu = nr_user > 0 ? (uint32_t)nr_user : 0;

	if (nr_user < 0)
		d->st.stack_errors++;
	if (ustart > 1 || nu > XPU_BPF_MAX_UFRAMES + 1 - ustart)
		nu = 0;
	if (nu) {
		procmaps__check_ip(d->pm, h->pid, uips[ustart], h->ts_ns);
		r->has_stack = true;
		r->stack_off = stack_off;
		r->ips = (const uint64_t *)&uips[ustart];
		r->nr_user = (uint16_t)nu;
	}
	if (d->py)
		py_procs__attach(d->py, h->tid, h->ts_ns, r, py_off);
}

static void on_gpu_launch(struct rb_drain *d, const struct xpu_ev_gpu_launch *ev)
{
	struct xpu_rec_gpu_launch rec = {
		.ts_ns = ev->hdr.ts_ns,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.corr_id = ev->corr_id,
		.cbid = ev->cbid,
		.domain = ev->domain,
		.flags = ev->uflags & XPU_EV_U_OUTERMOST ? XPU_EVENT_USER_OUTERMOST : 0,
	};
	struct wt_rec r = {
		.type = XPU_REC_GPU_LAUNCH,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
	};

	d->st.gpu_launches++;
	entry_stack(d, &r, &ev->hdr, ev->uips, ev->ustart, ev->nr_user,
		    offsetof(struct xpu_rec_gpu_launch, stack_id),
		    offsetof(struct xpu_rec_gpu_launch, py_stack_id));
	/* bpf/autograd.bpf.h offers only complete walks of processes with a located counter */
	if (r.has_stack && (ev->uflags & XPU_EV_U_OUTERMOST) &&
	    autograd_probe__counter_located(d->ag, (pid_t)ev->hdr.pid))
		ag_launch_cache__put(d->launches, ev->hdr.tid, ev->hdr.ts_ns, r.ips, r.nr_user,
				     r.py_frames, r.nr_py, r.py_flags);
	writer_thread__submit(d->wt, &r);
}

/*
 * A node whose op launched GPU work: the forward stack is that launch's, down to where the op
 * left its library for its kernels (record/ag_launch_cache.h), with the caller of
 * set_gradient_edge in the place of a walk's probed frame.
 */
static void node_from_launch(struct rb_drain *d, struct wt_rec *r, const struct xpu_ev_ag_node *ev,
			     struct xpu_rec_autograd_node *rec)
{
	struct ag_stack *s = &d->node_stack;
	uint64_t start = 0, end = 0;

	procmaps__mapping_of(d->pm, (pid_t)ev->hdr.pid, ev->uips[0], &start, &end);
	if (!ag_launch_cache__node_stack(d->launches, ev->hdr.tid, ev->launch_ts, ev->uips[0], start,
					 end, s)) {
		d->st.ag_nodes_launch_lost++;
		return;
	}
	d->st.ag_nodes_from_launch++;
	rec->flags = XPU_EVENT_USER_OUTERMOST | XPU_AG_NODE_FROM_LAUNCH;
	r->has_stack = true;
	r->stack_off = offsetof(struct xpu_rec_autograd_node, stack_id);
	r->ips = s->ips;
	r->nr_user = s->nr_user;
	if (s->nr_py) {
		r->py_frames = s->py;
		r->nr_py = s->nr_py;
		r->py_flags = s->py_flags;
		r->py_off = offsetof(struct xpu_rec_autograd_node, py_stack_id);
	}
}

/* PyTorch autograd: a node set on an op's output, with the forward stack that made it. */
static void on_ag_node(struct rb_drain *d, const struct xpu_ev_ag_node *ev)
{
	struct xpu_rec_autograd_node rec = {
		.ts_ns = ev->hdr.ts_ns,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.node_addr = ev->node,
		.class_addr = ev->vtable,
		.flags = ev->uflags & XPU_EV_U_OUTERMOST ? XPU_EVENT_USER_OUTERMOST : 0,
	};
	struct wt_rec r = {
		.type = XPU_REC_AUTOGRAD_NODE,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
	};

	if (ev->ag_flags & XPU_EV_AG_FROM_LAUNCH) {
		node_from_launch(d, &r, ev, &rec);
		writer_thread__submit(d->wt, &r);
		return;
	}
	entry_stack(d, &r, &ev->hdr, ev->uips, ev->ustart, ev->nr_user,
		    offsetof(struct xpu_rec_autograd_node, stack_id),
		    offsetof(struct xpu_rec_autograd_node, py_stack_id));
	writer_thread__submit(d->wt, &r);
	autograd_probe__locate_counter(d->ag, (pid_t)ev->hdr.pid, ev->hdr.ts_ns);
}

/* --off-cpu: one block, with the user stack it blocked in (or none: it was gone). */
static void on_offcpu(struct rb_drain *d, const struct xpu_ev_offcpu *ev)
{
	uint32_t nu = stack_frames(ev->ustack_bytes);
	struct xpu_rec_off_cpu rec = {
		.ts_ns = ev->hdr.ts_ns,
		.dur_ns = ev->dur_ns,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.waker_tid = ev->waker_tid,
		.state = (uint16_t)ev->state,
		.flags = (ev->uflags & XPU_EV_U_OUTERMOST ? XPU_EVENT_USER_OUTERMOST : 0) |
			 (ev->flags & XPU_EV_OFF_NO_STACK ? XPU_OFF_NO_STACK : 0),
	};
	struct wt_rec r = {
		.type = XPU_REC_OFF_CPU,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
	};

	_Static_assert(XPU_EV_OFF_NO_STACK == XPU_OFF_NO_STACK, "off-CPU flags differ");
	if (nu > XPU_BPF_MAX_UFRAMES)
		nu = XPU_BPF_MAX_UFRAMES;
	d->st.off_cpu_blocks++;
	if (ev->ustack_bytes < 0)
		d->st.stack_errors++;
	if (nu) {
		procmaps__check_ip(d->pm, ev->hdr.pid, ev->uips[0], ev->hdr.ts_ns);
		r.has_stack = true;
		r.stack_off = offsetof(struct xpu_rec_off_cpu, stack_id);
		r.ips = (const uint64_t *)ev->uips;
		r.nr_user = (uint16_t)nu;
	}
	if (d->py && !(ev->flags & XPU_EV_OFF_NO_STACK))
		py_procs__attach(d->py, rec.tid, rec.ts_ns, &r,
				 offsetof(struct xpu_rec_off_cpu, py_stack_id));
	writer_thread__submit(d->wt, &r);
}

/* The record type a stack copy belongs to (the event it was sent ahead of). */
static uint16_t owner_type(const struct xpu_ev_ustack *ev)
{
	if (ev->for_type == XPU_EV_OFFCPU)
		return XPU_REC_OFF_CPU;
	if (ev->for_type == XPU_EV_AG_NODE)
		return XPU_REC_AUTOGRAD_NODE;
	return ev->for_type == XPU_EV_GPU_LAUNCH ? XPU_REC_GPU_LAUNCH : XPU_REC_CPU_SAMPLE;
}

/* -g dwarf,SIZE,TOP: the window below the stack top, right after its copy. */
static void submit_stack_top(struct rb_drain *d, const struct xpu_ev_ustack *ev,
			     const uint8_t *data)
{
	struct xpu_rec_user_stack_top rec = {
		.ts_ns = ev->hdr.ts_ns,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.for_type = owner_type(ev),
		.size = ev->top_size,
		.addr = ev->top_addr,
	};
	struct wt_rec r = {
		.type = XPU_REC_USER_STACK_TOP,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
		.tail = data,
		.tail_size = ev->top_size,
	};

	writer_thread__submit(d->wt, &r);
}

/*
 * -g dwarf: the stack copy becomes a USER_STACK_COPY record right away. It needs no pairing
 * here: the report joins it to its sample or launch by (for_type, tid, ts_ns).
 */
static void on_ustack(struct rb_drain *d, const struct xpu_ev_ustack *ev, size_t size)
{
	size_t head = offsetof(struct xpu_ev_ustack, data);
	struct xpu_rec_user_stack_copy rec = {
		.ts_ns = ev->hdr.ts_ns,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.for_type = owner_type(ev),
		.regs_abi = XPU_REGS_X86_64,
	};
	struct wt_rec r = {
		.type = XPU_REC_USER_STACK_COPY,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
		.tail = ev->data,
	};
	uint32_t n = ev->size;

	_Static_assert(XPU_BPF_NR_UREGS == XPU_UREG_NR, "register sets differ");
	if (n > XPU_STACK_COPY_MAX_BYTES || n > size - head)
		n = size - head < XPU_STACK_COPY_MAX_BYTES ? size - head : XPU_STACK_COPY_MAX_BYTES;
	memcpy(rec.regs, ev->regs, sizeof(rec.regs));
	rec.size = n;
	r.tail_size = n;
	writer_thread__submit(d->wt, &r);
	if (ev->top_size && ev->top_size <= XPU_STACK_TOP_MAX_BYTES &&
	    ev->top_size <= size - head - n)
		submit_stack_top(d, ev, ev->data + n);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct rb_drain *d = ctx;
	const struct xpu_ev_hdr *h = data;

	if (size < sizeof(*h))
		return 0;
	switch (h->type) {
	case XPU_EV_SAMPLE:
		if (size >= sizeof(struct xpu_ev_sample))
			on_sample(d, data);
		break;
	case XPU_EV_TASK:
		if (size >= sizeof(struct xpu_ev_task))
			on_task(d, data);
		break;
	case XPU_EV_MMAP:
		procmaps__scan(d->pm, h->pid, h->ts_ns, false);
		break;
	case XPU_EV_GPU_LAUNCH:
		if (size >= sizeof(struct xpu_ev_gpu_launch))
			on_gpu_launch(d, data);
		break;
	case XPU_EV_USTACK:
		if (size >= offsetof(struct xpu_ev_ustack, data))
			on_ustack(d, data, size);
		break;
	case XPU_EV_OFFCPU:
		if (size >= sizeof(struct xpu_ev_offcpu))
			on_offcpu(d, data);
		break;
	case XPU_EV_AG_NODE:
		if (size >= sizeof(struct xpu_ev_ag_node))
			on_ag_node(d, data);
		break;
	case XPU_EV_AG_EVAL:
		if (size >= sizeof(struct xpu_ev_ag_eval) && d->ag)
			autograd_probe__on_eval(d->ag, data);
		break;
	case XPU_EV_PYSTACK:
		if (d->py)
			py_procs__frames(d->py, data, size);
		break;
	case XPU_EV_DRIVER_IOCTL:
		driver_trace__on_event(atomic_load(&d->driver), d->wt, data, size);
		break;
	}
	return 0;
}

static void *drain_main(void *arg)
{
	struct rb_drain *d = arg;
	uint64_t now;

	while (!atomic_load(&d->stop)) {
		int n = ring_buffer__poll(d->rb, RB_POLL_MS);

		if (n < 0 && n != -EINTR) {
			log_err("ring buffer poll: %s", strerror(-n));
			break;
		}
		/* Samples are submitted without a wakeup (see bpf/xpu.bpf.c): a poll that timed out
		 * still has them to read. */
		if (n == 0)
			ring_buffer__consume(d->rb);
		now = clock_mono_ns();
		if (now - d->last_liveness_ns >= RB_LIVENESS_NS) {
			d->last_liveness_ns = now;
			check_liveness(d);
		}
	}
	ring_buffer__consume(d->rb);
	return NULL;
}

struct rb_drain *rb_drain__start(int ringbuf_fd, struct writer_thread *wt, struct procmaps *pm,
				 struct py_procs *py, struct proc_tree *tree,
				 struct autograd_probe *ag)
{
	struct rb_drain *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->wt = wt;
	d->pm = pm;
	d->py = py;
	d->tree = tree;
	d->ag = ag;
	if (ag && !(d->launches = ag_launch_cache__new())) {
		err = ENOMEM;
		goto fail;
	}
	d->rb = ring_buffer__new(ringbuf_fd, handle_event, d, NULL);
	if (!d->rb) {
		err = errno;
		goto fail;
	}
	d->last_liveness_ns = clock_mono_ns();
	err = pthread_create(&d->thread, NULL, drain_main, d);
	if (err)
		goto fail;
	return d;
fail:
	ring_buffer__free(d->rb);
	ag_launch_cache__free(d->launches);
	free(d);
	errno = err;
	return NULL;
}

void rb_drain__set_driver(struct rb_drain *d, struct driver_trace *dt)
{
	atomic_store(&d->driver, dt);
}



void rb_drain__stop(struct rb_drain *d, struct rb_drain_stats *st)
{
	atomic_store(&d->stop, true);
	pthread_join(d->thread, NULL);
	if (st)
		*st = d->st;
	ring_buffer__free(d->rb);
	ag_launch_cache__free(d->launches);
	free(d);
}
