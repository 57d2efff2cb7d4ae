// SPDX-License-Identifier: MIT
/*
 * One thread polls the ring buffer. It is the only writer of the process table, so the table
 * changes in event order. Launches walked inside the target come on a queue from the CUPTI
 * receiver and are taken by the same code, so both paths make the same records.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "clock.h"
#include "config.h"
#include "event_stack.h"
#include "inproc_events.h"
#include "proc_table.h"
#include "procmaps.h"
#include "rb_drain.h"
#include "writer_thread.h"
#include "xpu_bpf_abi.h"

#define RB_POLL_MS 100
/* Exit events can be lost when the ring buffer is full: check liveness this often. */
#define RB_LIVENESS_NS (1000ull * 1000 * 1000)
/* Event types the drain routes (enum xpu_ev_type, and driver_bpf_abi.h's 32). */
#define RB_EV_TYPES 64
/*
 * Queued in-process events, at most: the drain takes the queue at least every RB_POLL_MS, so
 * only a drain thread stalled for long (a slow writer) fills it.
 */
#define RB_INJECT_MAX_BYTES (64ull << 20)

/*
 * A node event that names its op's launch (XPU_EV_AG_FROM_LAUNCH) reaches the ring buffer as
 * soon as it happens, but a launch walked in process comes later, in the library's next
 * message: such a node waits here for its launch, up to RB_HOLD_NS (then it goes as it is, and
 * the autograd handler counts its launch lost). Each thread's last launches are remembered to
 * tell. Only the head of the event travels (nr_user is 0, uips[0] the return address).
 */
#define RB_HOLD_NS (2000ull * 1000 * 1000)
#define RB_HOLD_MAX 65536
#define RB_HOLD_BYTES (offsetof(struct xpu_ev_ag_node, uips) + sizeof(__u64))
#define RB_SEEN_SLOTS 4096
#define RB_SEEN_LAUNCHES 8

#define RB_EV_MAX_BYTES                                                                     \
	(INPROC_EV_MAX_BYTES > sizeof(struct xpu_ev_ag_node) ? INPROC_EV_MAX_BYTES :         \
							       sizeof(struct xpu_ev_ag_node))

struct rb_held {
	uint64_t since_ns;
	uint64_t ev[(RB_HOLD_BYTES + 7) / 8];
};

struct rb_seen {
	uint32_t tid;
	uint32_t next;
	uint64_t ts[RB_SEEN_LAUNCHES];
};

/* One EVENTS message's checked entries (inproc_events.h), in arrival order. */
struct rb_inject {
	struct rb_inject *next;
	size_t len;
	uint8_t data[];
};

struct rb_drain {
	struct ring_buffer *rb;
	struct writer_thread *wt;
	struct procmaps *pm;
	struct proc_table *pt;
	pthread_t thread;
	_Atomic bool stop;
	/* the handler of each type the drain does not turn into records itself */
	struct map_handler *_Atomic route[RB_EV_TYPES];
	uint64_t last_liveness_ns;
	struct rb_drain_stats st;
	/* in-process events: the receiver appends, the drain thread takes the whole list */
	pthread_mutex_t q_lock;
	struct rb_inject *q_head, **q_tail;
	size_t q_bytes;
	uint64_t q_lost;		/* launches the queue had no room for (q_lock) */
	uint64_t q_lost_reported;	/* of them, written as LOST (drain thread) */
	int wake_fd;			/* eventfd: the queue got events, or stop */
	/*
	 * rb_drain__sync(): messages injected so far, and of them those the drain thread has
	 * processed (both q_lock); q_done moves, and q_cond is told, after each turn's events
	 * went through dispatch, so a waiter knows they were read while the process lived.
	 */
	uint64_t q_injected, q_done;
	pthread_cond_t q_cond;
	bool q_stopping;		/* rb_drain__stop() began: no more turns to wait for */
	/* the event being taken, full size: in-process, or a node that waited */
	uint64_t ev[(RB_EV_MAX_BYTES + 7) / 8];
	struct rb_held *held;		/* RB_HOLD_MAX, nheld in arrival order */
	size_t nheld;
	struct rb_seen *seen;		/* RB_SEEN_SLOTS, by tid */
	bool injecting;			/* dispatching a library's in-process events */
};

static void check_liveness(struct rb_drain *d)
{
	pid_t gone[64];
	size_t i, n = proc_table__reap_gone(d->pt, gone, 64);

	for (i = 0; i < n; i++)
		log_info("pid %d is gone without an exit event", gone[i]);
}

static uint32_t stack_frames(int32_t bytes)
{
	return bytes > 0 ? (uint32_t)bytes / sizeof(uint64_t) : 0;
}

static void on_sample(struct rb_drain *d, const void *data, size_t size)
{
	const struct xpu_ev_sample *ev = data;
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
		.py_off = offsetof(struct xpu_rec_cpu_sample, py_stack_id),
	};

	if (nk > XPU_BPF_MAX_FRAMES)
		nk = XPU_BPF_MAX_FRAMES;
	if (nu > XPU_BPF_MAX_UFRAMES)
		nu = XPU_BPF_MAX_UFRAMES;
	d->st.samples++;
	if (ev->ustack_bytes < 0 || ev->kstack_bytes < 0)
		d->st.stack_errors++;
	if (nu)
		proc_table__check_ip(d->pt, ev->hdr.pid, ev->uips[0], ev->hdr.ts_ns);
	if (nk + nu) {
		memcpy(ips, ev->kips, nk * sizeof(uint64_t));
		memcpy(ips + nk, ev->uips, nu * sizeof(uint64_t));
		r.has_stack = true;
		r.stack_off = offsetof(struct xpu_rec_cpu_sample, stack_id);
		r.ips = ips;
		r.nr_kernel = (uint16_t)nk;
		r.nr_user = (uint16_t)nu;
	}
	proc_table__join(d->pt, &ev->hdr, &r);
	writer_thread__submit(d->wt, &r);
}

static void on_task(struct rb_drain *d, const void *data, size_t size)
{
	const struct xpu_ev_task *ev = data;
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
		proc_table__add_live(d->pt, ev->hdr.pid);
		/* The child shares its parent's image until it execs. */
		procmaps__forked(d->pm, ev->hdr.pid, (pid_t)ev->parent_pid, ev->hdr.ts_ns);
		break;
	case XPU_EV_TASK_EXEC:
		proc_table__exec(d->pt, ev->hdr.pid);
		procmaps__scan(d->pm, ev->hdr.pid, ev->hdr.ts_ns);
		break;
	case XPU_EV_TASK_THREAD_EXIT:
		proc_table__thread_exited(d->pt, ev->hdr.tid);
		break;
	case XPU_EV_TASK_EXIT:
		proc_table__thread_exited(d->pt, ev->hdr.tid);
		proc_table__exited(d->pt, ev->hdr.pid, ev->exit_code);
		break;
	default:
		break;
	}
}

/* An executable mmap returned. */
static void on_mmap(struct rb_drain *d, const void *data, size_t size)
{
	const struct xpu_ev_mmap *ev = data;

	procmaps__mapped(d->pm, ev->hdr.pid, ev->addr, ev->hdr.ts_ns);
}

static void note_launch(struct rb_drain *d, uint32_t tid, uint64_t ts)
{
	struct rb_seen *s = &d->seen[tid % RB_SEEN_SLOTS];

	if (s->tid != tid) {
		memset(s, 0, sizeof(*s));
		s->tid = tid;
	}
	s->ts[s->next++ % RB_SEEN_LAUNCHES] = ts;
}

static bool launch_seen(const struct rb_drain *d, uint32_t tid, uint64_t ts)
{
	const struct rb_seen *s = &d->seen[tid % RB_SEEN_SLOTS];
	unsigned int i;

	for (i = 0; s->tid == tid && i < RB_SEEN_LAUNCHES; i++)
		if (s->ts[i] == ts)
			return true;
	return false;
}

static void on_gpu_launch(struct rb_drain *d, const void *data, size_t size)
{
	const struct xpu_ev_gpu_launch *ev = data;
	struct xpu_rec_gpu_launch rec = {
		.ts_ns = ev->hdr.ts_ns,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.corr_id = ev->corr_id,
		.cbid = ev->cbid,
		.domain = ev->domain,
		.flags = (ev->uflags & XPU_EV_U_OUTERMOST ? XPU_EVENT_USER_OUTERMOST : 0) |
			 (d->injecting ? XPU_EVENT_IN_PROCESS : 0),
	};
	struct wt_rec r = {
		.type = XPU_REC_GPU_LAUNCH,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
		.py_off = offsetof(struct xpu_rec_gpu_launch, py_stack_id),
	};

	d->st.gpu_launches++;
	if (d->seen)
		note_launch(d, ev->hdr.tid, ev->hdr.ts_ns);
	if (!event_stack__entry(d->pt, &r, &ev->hdr, ev->uips, ev->ustart, ev->nr_user,
				offsetof(struct xpu_rec_gpu_launch, stack_id)))
		d->st.stack_errors++;
	writer_thread__submit(d->wt, &r);
}

/* --off-cpu: one block, with the user stack it blocked in (or none: it was gone). */
static void on_offcpu(struct rb_drain *d, const void *data, size_t size)
{
	const struct xpu_ev_offcpu *ev = data;
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
		.py_off = offsetof(struct xpu_rec_off_cpu, py_stack_id),
	};

	_Static_assert(XPU_EV_OFF_NO_STACK == XPU_OFF_NO_STACK, "off-CPU flags differ");
	if (nu > XPU_BPF_MAX_UFRAMES)
		nu = XPU_BPF_MAX_UFRAMES;
	d->st.off_cpu_blocks++;
	if (ev->ustack_bytes < 0)
		d->st.stack_errors++;
	if (nu) {
		proc_table__check_ip(d->pt, ev->hdr.pid, ev->uips[0], ev->hdr.ts_ns);
		r.has_stack = true;
		r.stack_off = offsetof(struct xpu_rec_off_cpu, stack_id);
		r.ips = (const uint64_t *)ev->uips;
		r.nr_user = (uint16_t)nu;
	}
	if (!(ev->flags & XPU_EV_OFF_NO_STACK))
		proc_table__join(d->pt, &ev->hdr, &r);
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
static void on_ustack(struct rb_drain *d, const void *data, size_t size)
{
	const struct xpu_ev_ustack *ev = data;
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

/* The types the drain turns into records itself, and the least size of each. */
static const struct {
	size_t min_size;
	void (*fn)(struct rb_drain *d, const void *data, size_t size);
} core_events[RB_EV_TYPES] = {
	[XPU_EV_SAMPLE] = { sizeof(struct xpu_ev_sample), on_sample },
	[XPU_EV_TASK] = { sizeof(struct xpu_ev_task), on_task },
	[XPU_EV_MMAP] = { sizeof(struct xpu_ev_mmap), on_mmap },
	[XPU_EV_GPU_LAUNCH] = { sizeof(struct xpu_ev_gpu_launch), on_gpu_launch },
	[XPU_EV_USTACK] = { offsetof(struct xpu_ev_ustack, data), on_ustack },
	[XPU_EV_OFFCPU] = { sizeof(struct xpu_ev_offcpu), on_offcpu },
};

static void dispatch(struct rb_drain *d, void *data, size_t size)
{
	const struct xpu_ev_hdr *h = data;
	struct map_handler *mh;

	if (size < sizeof(*h) || h->type >= RB_EV_TYPES)
		return;
	if (core_events[h->type].fn) {
		if (size >= core_events[h->type].min_size)
			core_events[h->type].fn(d, data, size);
		return;
	}
	mh = atomic_load_explicit(&d->route[h->type], memory_order_acquire);
	if (mh)
		mh->on_event(mh, data, size);
}

/* Whether a node event must wait for its launch to come from the process (see rb_held). */
static bool must_hold(const struct rb_drain *d, const void *data, size_t size)
{
	const struct xpu_ev_ag_node *ev = data;

	return d->held && size >= sizeof(*ev) && ev->hdr.type == XPU_EV_AG_NODE &&
	       (ev->ag_flags & XPU_EV_AG_FROM_LAUNCH) && !ev->nr_user &&
	       !launch_seen(d, ev->hdr.tid, ev->launch_ts) && d->nheld < RB_HOLD_MAX;
}

/*
 * The held nodes whose launch came, or that waited long enough (all of them: at the end); with
 * tid, only those of that launch, right after it, before the thread's next launch replaces it
 * in the autograd handler's cache (the node was set before that next launch).
 */
static void release_held(struct rb_drain *d, bool all, uint32_t tid, uint64_t ts)
{
	uint64_t now = clock_mono_ns();
	size_t i, k = 0;

	for (i = 0; i < d->nheld; i++) {
		struct rb_held *hd = &d->held[i];
		const struct xpu_ev_ag_node *ev = (const void *)hd->ev;
		bool go = all;

		if (!go && tid)
			go = ev->hdr.tid == tid && ev->launch_ts == ts;
		else if (!go)
			go = launch_seen(d, ev->hdr.tid, ev->launch_ts) ||
			     now - hd->since_ns >= RB_HOLD_NS;
		if (!go) {
			if (k != i)
				d->held[k] = *hd;
			k++;
			continue;
		}
		memset(d->ev, 0, sizeof(struct xpu_ev_ag_node));
		memcpy(d->ev, hd->ev, RB_HOLD_BYTES);
		dispatch(d, d->ev, sizeof(struct xpu_ev_ag_node));
	}
	d->nheld = k;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct rb_drain *d = ctx;

	if (must_hold(d, data, size)) {
		struct rb_held *hd = &d->held[d->nheld++];

		hd->since_ns = clock_mono_ns();
		memcpy(hd->ev, data, RB_HOLD_BYTES);
		return 0;
	}
	dispatch(d, data, size);
	return 0;
}

static void submit_lost(struct rb_drain *d, uint64_t count)
{
	struct xpu_rec_lost lost = {
		.ts_ns = clock_mono_ns(), .source = XPU_LOST_STACK, .count = count,
	};
	struct wt_rec r = {
		.type = XPU_REC_LOST, .ts_ns = lost.ts_ns,
		.body = &lost, .body_size = sizeof(lost), .must_keep = true,
	};

	writer_thread__submit(d->wt, &r);
}

/*
 * The in-process events queued since the last turn, each message's back to back: a PYSTACK
 * waits for its launch in the Python handler, and only ring-buffer events of other turns
 * can come between two messages.
 */
static void take_injected(struct rb_drain *d)
{
	struct rb_inject *q, *next;
	uint64_t lost, upto;

	pthread_mutex_lock(&d->q_lock);
	upto = d->q_injected;
	q = d->q_head;
	d->q_head = NULL;
	d->q_tail = &d->q_head;
	d->q_bytes = 0;
	lost = d->q_lost;
	pthread_mutex_unlock(&d->q_lock);
	for (; q; q = next) {
		size_t off = 0, size;

		while ((size = inproc_events__next(q->data, q->len, &off, d->ev))) {
			const struct xpu_ev_hdr *h = (const void *)d->ev;

			d->st.inproc_events++;
			if (h->type == XPU_EV_GPU_LAUNCH)
				d->st.inproc_launches++;
			d->injecting = true;
			dispatch(d, d->ev, size);
			d->injecting = false;
			if (d->nheld && h->type == XPU_EV_GPU_LAUNCH)
				release_held(d, false, h->tid, h->ts_ns);
		}
		next = q->next;
		free(q);
	}
	if (d->nheld)
		release_held(d, false, 0, 0);
	/* written from here, in the same turn as the events that did make it */
	if (lost > d->q_lost_reported) {
		submit_lost(d, lost - d->q_lost_reported);
		d->q_lost_reported = lost;
	}
	pthread_mutex_lock(&d->q_lock);
	d->q_done = upto;
	pthread_cond_broadcast(&d->q_cond);
	pthread_mutex_unlock(&d->q_lock);
}

static void *drain_main(void *arg)
{
	struct rb_drain *d = arg;
	struct pollfd pfd[2] = {
		{ .fd = ring_buffer__epoll_fd(d->rb), .events = POLLIN },
		{ .fd = d->wake_fd, .events = POLLIN },
	};
	uint64_t now, v;
	int n;

	while (!atomic_load(&d->stop)) {
		/*
		 * The ring buffer's epoll descriptor, polled next to the queue's eventfd, rather
		 * than ring_buffer__poll(): queued launches are taken at once. Samples are
		 * submitted without a wakeup (see bpf/xpu.bpf.c): every turn consumes, a poll that
		 * timed out too.
		 */
		if (poll(pfd, 2, RB_POLL_MS) < 0 && errno != EINTR) {
			log_err("ring buffer poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents & POLLIN)
			(void)!read(d->wake_fd, &v, sizeof(v));
		/* first: what the kernel mapped precedes the BPF events that report it */
		procmaps__poll_events(d->pm);
		n = ring_buffer__consume(d->rb);
		if (n < 0 && n != -EINTR) {
			log_err("ring buffer: %s", strerror(-n));
			break;
		}
		take_injected(d);
		now = clock_mono_ns();
		if (now - d->last_liveness_ns >= RB_LIVENESS_NS) {
			d->last_liveness_ns = now;
			check_liveness(d);
		}
	}
	ring_buffer__consume(d->rb);
	take_injected(d);
	return NULL;
}

/* What the drain keeps for nodes that wait for their launch; without it, none waits. */
static void hold_init(struct rb_drain *d)
{
	d->held = malloc(RB_HOLD_MAX * sizeof(*d->held));
	d->seen = calloc(RB_SEEN_SLOTS, sizeof(*d->seen));
	if (!d->held || !d->seen) {
		free(d->held);
		free(d->seen);
		d->held = NULL;
		d->seen = NULL;
	}
}

int rb_drain__inject(struct rb_drain *d, const void *entries, size_t len, uint32_t launches)
{
	struct rb_inject *q = NULL;
	uint64_t one = 1;
	int err = 0;

	if (!len)
		return 0;
	pthread_mutex_lock(&d->q_lock);
	if (d->q_bytes + len > RB_INJECT_MAX_BYTES)
		err = -ENOBUFS;
	else if (!(q = malloc(sizeof(*q) + len)))
		err = -ENOMEM;
	if (err) {
		d->q_lost += launches;
		pthread_mutex_unlock(&d->q_lock);
		return err;
	}
	q->next = NULL;
	q->len = len;
	memcpy(q->data, entries, len);
	*d->q_tail = q;
	d->q_tail = &q->next;
	d->q_bytes += len;
	d->q_injected++;
	pthread_mutex_unlock(&d->q_lock);
	if (write(d->wake_fd, &one, sizeof(one)) < 0)
		one = 0;	/* full counter: a wakeup is pending already */
	return 0;
}

int rb_drain__sync(struct rb_drain *d, int timeout_ms)
{
	struct timespec until;
	uint64_t one = 1, upto;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&d->q_lock);
	upto = d->q_injected;
	/* a turn may be asleep in poll() with the queue already empty: wake it to be sure */
	if (d->q_done < upto && !d->q_stopping && write(d->wake_fd, &one, sizeof(one)) < 0)
		one = 0;	/* full counter: a wakeup is pending already */
	while (d->q_done < upto && !d->q_stopping && !err)
		err = pthread_cond_timedwait(&d->q_cond, &d->q_lock, &until);
	if (d->q_done < upto && !d->q_stopping)
		err = -ETIMEDOUT;
	else
		err = 0;
	pthread_mutex_unlock(&d->q_lock);
	return err;
}

static void set_route(struct rb_drain *d, struct map_handler *h, struct map_handler *to)
{
	size_t i;

	for (i = 0; i < MAP_HANDLER_EVENTS && h->events[i]; i++)
		if (h->events[i] < RB_EV_TYPES && !core_events[h->events[i]].fn && h->on_event)
			atomic_store_explicit(&d->route[h->events[i]], to, memory_order_release);
}

void rb_drain__route(struct rb_drain *d, struct map_handler *h)
{
	set_route(d, h, h);
}

void rb_drain__unroute(struct rb_drain *d, struct map_handler *h)
{
	set_route(d, h, NULL);
}

struct rb_drain *rb_drain__start(int ringbuf_fd, struct writer_thread *wt, struct procmaps *pm,
				 struct proc_table *pt)
{
	struct rb_drain *d = calloc(1, sizeof(*d));
	pthread_condattr_t ca;
	struct map_handler *h;
	unsigned int i;
	int err;

	if (!d)
		return NULL;
	d->wt = wt;
	d->pm = pm;
	d->pt = pt;
	d->q_tail = &d->q_head;
	d->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->wake_fd < 0) {
		err = errno;
		free(d);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&d->q_lock, NULL);
	pthread_condattr_init(&ca);
	/* the waits are bounded in monotonic time: a clock step must not stretch them */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->q_cond, &ca);
	pthread_condattr_destroy(&ca);
	hold_init(d);
	for (i = 0; (h = proc_table__handler(pt, i)); i++)
		rb_drain__route(d, h);
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
	free(d->held);
	free(d->seen);
	close(d->wake_fd);
	pthread_cond_destroy(&d->q_cond);
	pthread_mutex_destroy(&d->q_lock);
	free(d);
	errno = err;
	return NULL;
}

void rb_drain__stop(struct rb_drain *d, struct rb_drain_stats *st)
{
	uint64_t one = 1;

	/* a receiver still in rb_drain__sync() returns now rather than wait for the join */
	pthread_mutex_lock(&d->q_lock);
	d->q_stopping = true;
	pthread_cond_broadcast(&d->q_cond);
	pthread_mutex_unlock(&d->q_lock);
	atomic_store(&d->stop, true);
	if (write(d->wake_fd, &one, sizeof(one)) < 0)
		one = 0;	/* the poll times out instead */
	pthread_join(d->thread, NULL);
	/* an inject that raced the thread's last turn: taken here, in the same order */
	take_injected(d);
	release_held(d, true, 0, 0);
	free(d->held);
	free(d->seen);
	d->st.inproc_lost = d->q_lost;
	if (st)
		*st = d->st;
	ring_buffer__free(d->rb);
	close(d->wake_fd);
	pthread_cond_destroy(&d->q_cond);
	pthread_mutex_destroy(&d->q_lock);
	free(d);
}
