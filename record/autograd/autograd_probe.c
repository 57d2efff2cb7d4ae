// SPDX-License-Identifier: MIT
/* Backward attribution's recording side (see autograd_probe.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ag_launch_cache.h"
#include "autograd_probe.h"
#include "autograd_syms.h"
#include "bpf_setup.h"
#include "config.h"
#include "event_stack.h"
#include "proc_table.h"
#include "inproc_share.h"
#include "writer_thread.h"
#include "xpu_bpf_abi.h"
#include "xpu_format.h"

/* Reentrant backward (checkpointing) nests evaluations; deeper ones are counted, not written. */
#define AG_MAX_DEPTH 16
#define AG_THREAD_BUCKETS 256
#define AG_MAX_FILES 64

_Static_assert(AG_MAX_FILES <= 64, "a file per bit of ag_proc.loaded");

struct ag_file {
	uint32_t dso_id;
	bool probed;			/* the engine's file (a cookie); else node classes only */
	struct autograd_syms syms;
};

/*
 * A process's slot: where it loaded the files (bias, by file index), and its node counter
 * (bpf/autograd.bpf.h ag_tls) once located. The module id is written by the dynamic linker
 * after the library is mapped, so it is read from the process at its first node event, and
 * again a few times while still zero.
 */
enum ag_counter_state { AG_COUNTER_PENDING, AG_COUNTER_LOCATED, AG_COUNTER_NONE };
#define AG_COUNTER_TRIES 8
#define AG_COUNTER_RETRY_NS (50ull * 1000 * 1000)

struct ag_proc {
	uint64_t loaded;		/* bit i: files[i] is loaded at bias[i] */
	uint64_t bias[AG_MAX_FILES];
	uint8_t state;			/* enum ag_counter_state */
	uint8_t tries;
	uint64_t next_try_ns;
};

/* A thread's evaluations that may still run: the stack pointer at each one's entry */
struct ag_thread {
	uint32_t tid;
	uint32_t depth;
	uint64_t sp[AG_MAX_DEPTH];
	struct ag_thread *next;
};

/*
 * XPU_AUTOGRAD_PROBES=forward|backward attaches one side only: what each costs can then be
 * measured apart (bench/, tests/gpu/backward_cost.sh); a report of such a trace attributes
 * nothing. XPU_AUTOGRAD_WALK_ALL=1 walks every node's stack, as before nodes could take their
 * op's launch's: what that saves can be measured the same way.
 */
enum { AG_PROBE_FORWARD = 1, AG_PROBE_BACKWARD = 2 };

struct autograd_probe {
	struct map_handler h;
	unsigned int probes;		/* AG_PROBE_* */
	bool walk_all;			/* XPU_AUTOGRAD_WALK_ALL: no node takes its launch's stack */
	struct bpf_state *bpf;
	struct writer_thread *wt;
	struct walk_share *ws;		/* the in-process walk's copy of ag_tls; may be NULL */
	struct ag_file files[AG_MAX_FILES];	/* index: the probes' attach cookie */
	uint32_t nfiles;
	struct ag_thread *threads[AG_THREAD_BUCKETS];
	struct ag_launch_cache *launches;	/* launch stacks for nodes of the same op */
	struct ag_stack node_stack;	/* a node's stack made from its launch's */
	struct autograd_probe_stats st;
};

static struct autograd_probe *of(struct map_handler *h)
{
	return (struct autograd_probe *)((char *)h - offsetof(struct autograd_probe, h));
}

/* pid's slot; made when create. */
static struct ag_proc *proc_get(struct autograd_probe *ap, pid_t pid, bool create)
{
	struct proc *proc = create ? proc_table__get(ap->h.pt, pid) : proc_table__find(ap->h.pt, pid);
	struct ag_proc **slot;

	if (!proc)
		return NULL;
	slot = (struct ag_proc **)proc__slot(proc, &ap->h);
	if (!*slot && create)
		*slot = calloc(1, sizeof(**slot));
	return *slot;
}

static const char *base_name(const char *path)
{
	const char *base = strrchr(path, '/');

	return base ? base + 1 : path;
}

/*
 * PyTorch's libraries: libtorch_cpu.so holds the engine (libtorch.so in old monolithic builds),
 * libtorch_python.so the class of nodes made in Python (PyNode: autograd.Function, compiled
 * graphs).
 */
bool autograd_probe__torch_library(const char *path)
{
	const char *base = base_name(path);

	return !strncmp(base, "libtorch_cpu.so", 15) || !strncmp(base, "libtorch.so", 11) ||
	       !strncmp(base, "libtorch_python.so", 18);
}

static void submit_probe(struct autograd_probe *ap, pid_t pid, uint32_t dso_id, uint32_t status,
			 const char *reason, uint64_t ts_ns)
{
	struct xpu_rec_autograd_probe rec = {
		.ts_ns = ts_ns, .pid = (uint32_t)pid, .dso_id = dso_id, .status = status,
	};
	struct wt_rec r = {
		.type = XPU_REC_AUTOGRAD_PROBE,
		.ts_ns = ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
		.must_keep = true,
	};

	if (reason && *reason) {
		r.nr_str = 1;
		r.str[0].off = offsetof(struct xpu_rec_autograd_probe, reason_str);
		r.str[0].s = reason;
		r.str[0].len = (uint32_t)strlen(reason);
	}
	writer_thread__submit(ap->wt, &r);
}

/*
 * A file mapped for the first time: probed when it is a PyTorch library holding the autograd
 * engine; one holding only node classes is kept for their names. Its slot: its index + 1.
 */
static void ag_on_file(struct map_handler *h, struct proc_file *pf, const struct proc_file_open *o)
{
	struct autograd_probe *ap = of(h);
	char err[256] = "";
	struct ag_file *f;
	int ret;

	if (o->fd < 0 || !autograd_probe__torch_library(o->path))
		return;
	if (ap->nfiles == AG_MAX_FILES) {
		snprintf(err, sizeof(err), "more than %d PyTorch libraries probed", AG_MAX_FILES);
		goto unavailable;
	}
	f = &ap->files[ap->nfiles];
	memset(f, 0, sizeof(*f));
	ret = autograd_syms__read(&f->syms, o->fd, err, sizeof(err));
	/* a PyTorch library without the engine (libtorch.so's stub): not ours */
	if (ret == -ENOENT && strncmp(base_name(o->path), "libtorch_cpu", 12))
		return;
	if (ret == 1) {
		f->dso_id = pf->dso_id;
		*proc_file__slot(pf, h) = (void *)(uintptr_t)++ap->nfiles;
		log_info("autograd: %zu node classes in %s", f->syms.nvtables, o->path);
		return;
	}
	if (ret)
		goto unavailable;
	ret = bpf_state__attach_autograd(ap->bpf, o->map_path,
					 ap->probes & AG_PROBE_FORWARD ? f->syms.set_edge_off : 0,
					 ap->probes & AG_PROBE_BACKWARD ? f->syms.evaluate_off : 0,
					 ap->nfiles, err, sizeof(err));
	if (ret) {
		autograd_syms__free(&f->syms);
		goto unavailable;
	}
	f->probed = true;
	f->dso_id = pf->dso_id;
	*proc_file__slot(pf, h) = (void *)(uintptr_t)++ap->nfiles;
	ap->st.files++;
	log_info("autograd: probes attached to %s (%zu node classes)", o->path, f->syms.nvtables);
	submit_probe(ap, o->pid, pf->dso_id, XPU_AUTOGRAD_PROBED, NULL, o->ts_ns);
	return;
unavailable:
	ap->st.unavailable++;
	log_err("warning: backward attribution unavailable for %s: %s", o->path, err);
	submit_probe(ap, o->pid, pf->dso_id, XPU_AUTOGRAD_UNAVAILABLE, err, o->ts_ns);
}

/* A mapping of one of the files: where it is loaded in that process. */
static void ag_on_mapping(struct map_handler *h, struct proc *proc, const struct proc_map *m,
			  uint64_t ts_ns)
{
	struct autograd_probe *ap = of(h);
	uintptr_t i = m->file ? (uintptr_t)*proc_file__slot(m->file, h) : 0;
	struct ag_proc *p;
	uint64_t bias;

	if (!i-- || !autograd_syms__bias(&ap->files[i].syms, m->start, m->pgoff, &bias) ||
	    !(p = proc_get(ap, proc->pid, true)))
		return;
	p->bias[i] = bias;
	p->loaded |= 1ull << i;
}

/* A node's class: from the probed file's vtables, else those of a classes-only file. */
static const char *node_class(struct autograd_probe *ap, const struct xpu_ev_ag_eval *b)
{
	const struct ag_proc *p = proc_get(ap, (pid_t)b->hdr.pid, false);
	const struct ag_file *f;
	const char *cls = NULL;
	uint32_t i;

	/* the probe sits on evaluate_function's first instruction: ip - its address is the bias */
	if (b->cookie < ap->nfiles && ap->files[b->cookie].probed) {
		f = &ap->files[b->cookie];
		cls = autograd_syms__class(&f->syms, b->ip - f->syms.evaluate_vaddr, b->vtable);
	}
	for (i = 0; !cls && p && i < ap->nfiles; i++) {
		f = &ap->files[i];
		if (!f->probed && (p->loaded >> i & 1))
			cls = autograd_syms__class(&f->syms, p->bias[i], b->vtable);
	}
	return cls;
}

/* The probed file with a located counter and its bias in p, if any. */
static const struct ag_file *counter_file(const struct autograd_probe *ap, const struct ag_proc *p,
					  uint64_t *bias)
{
	const struct ag_file *f;
	uint32_t i;

	for (i = 0; i < ap->nfiles; i++) {
		f = &ap->files[i];
		if (f->probed && f->syms.seq_found && (p->loaded >> i & 1)) {
			*bias = p->bias[i];
			return f;
		}
	}
	return NULL;
}

/* 0 and the counter's place, -EAGAIN while the loader has not filled the module id yet. */
static int read_counter_place(uint32_t pid, uint64_t index_addr, uint64_t add,
			      struct xpu_ag_tls *out)
{
	char path[64];
	uint64_t index[2] = { 0, 0 };
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, index, sizeof(index), (off_t)index_addr);
	close(fd);
	if (n != (ssize_t)sizeof(index))
		return n < 0 ? -errno : -EIO;
	if (!index[0])
		return -EAGAIN;
	/* dtv indices are small; anything else is not a module id */
	if (index[0] > 1u << 20)
		return -EINVAL;
	out->modid = index[0];
	out->off = index[1] + add;
	return 0;
}

/*
 * A node event of pid's: once its PyTorch is loaded and relocated, tells BPF where pid's node
 * counter is, so that nodes made by an op that launched GPU work take their stack from its
 * launch. Cheap when already done.
 */
static void locate_counter(struct autograd_probe *ap, pid_t pid, uint64_t ts_ns)
{
	struct ag_proc *p = proc_get(ap, pid, true);
	const struct ag_file *f;
	struct xpu_ag_tls place;
	uint64_t bias = 0;
	int ret;

	if (!p || p->state != AG_COUNTER_PENDING || ts_ns < p->next_try_ns)
		return;
	f = ap->walk_all ? NULL : counter_file(ap, p, &bias);
	ret = f ? read_counter_place((uint32_t)pid, bias + f->syms.seq.index_vaddr, f->syms.seq.add,
				     &place)
		: -ENOENT;
	if (!ret)
		ret = bpf_state__set_autograd_counter(ap->bpf, (uint32_t)pid, &place);
	if (!ret) {
		if (ap->ws)
			walk_share__proc_ag(ap->ws, (uint32_t)pid, &place);
		p->state = AG_COUNTER_LOCATED;
		ap->st.counters_located++;
		log_info("autograd: node counter of pid %d located (module %llu, offset %llu)", (int)pid,
			 (unsigned long long)place.modid, (unsigned long long)place.off);
		return;
	}
	if (ret == -EAGAIN && ++p->tries < AG_COUNTER_TRIES) {
		p->next_try_ns = ts_ns + AG_COUNTER_RETRY_NS;
		return;
	}
	/* every node of pid is walked, as before: costlier, not less true */
	p->state = AG_COUNTER_NONE;
	ap->st.counters_unlocated++;
	log_info("autograd: node counter of pid %d not located (%s): each node's stack is walked",
		 (int)pid, ap->walk_all ? "XPU_AUTOGRAD_WALK_ALL is set" : strerror(-ret));
}

/* Whether pid's node counter is located (its launches are worth keeping for nodes). */
static bool counter_located(struct autograd_probe *ap, pid_t pid)
{
	const struct ag_proc *p = proc_get(ap, pid, false);

	return p && p->state == AG_COUNTER_LOCATED;
}

/* The process exec'd or exited: BPF no longer reads its counter; its loads are gone. */
static void ag_on_end(struct map_handler *h, struct proc *proc, bool exec)
{
	struct autograd_probe *ap = of(h);
	struct ag_proc **slot = (struct ag_proc **)proc__slot(proc, h);

	if (!*slot)
		return;
	if ((*slot)->state == AG_COUNTER_LOCATED) {
		bpf_state__set_autograd_counter(ap->bpf, (uint32_t)proc->pid, NULL);
		if (ap->ws)
			walk_share__proc_ag(ap->ws, (uint32_t)proc->pid, NULL);
	}
	free(*slot);
	*slot = NULL;
}

static struct ag_thread *thread_get(struct autograd_probe *ap, uint32_t tid, bool create)
{
	struct ag_thread **b = &ap->threads[tid % AG_THREAD_BUCKETS], *t;

	for (t = *b; t; t = t->next)
		if (t->tid == tid)
			return t;
	if (!create)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->next = *b;
	*b = t;
	return t;
}

/* One AUTOGRAD_EVAL, written as it begins. */
static void submit_eval(struct autograd_probe *ap, const struct xpu_ev_ag_eval *ev,
			uint32_t depth)
{
	const char *cls = node_class(ap, ev);
	struct xpu_rec_autograd_eval rec = {
		.begin_ns = ev->hdr.ts_ns,
		.pid = ev->hdr.pid,
		.tid = ev->hdr.tid,
		.node_addr = ev->node,
		.class_addr = ev->vtable,
		.caller_ip = ev->ret_addr,
		.depth = (uint16_t)depth,
	};
	struct wt_rec r = {
		.type = XPU_REC_AUTOGRAD_EVAL,
		.ts_ns = ev->hdr.ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
	};

	if (cls) {
		r.nr_str = 1;
		r.str[0].off = offsetof(struct xpu_rec_autograd_eval, class_str);
		r.str[0].s = cls;
		r.str[0].len = (uint32_t)strlen(cls);
	}
	ap->st.evals++;
	writer_thread__submit(ap->wt, &r);
}

static void on_eval(struct autograd_probe *ap, const struct xpu_ev_ag_eval *ev)
{
	struct ag_thread *t = thread_get(ap, ev->hdr.tid, true);

	if (!t) {
		ap->st.too_deep++;
		return;
	}
	/*
	 * The thread's evaluations still running: a nested (reentrant) one runs deeper in the
	 * stack, so those entered at this stack pointer or above it have returned.
	 */
	while (t->depth && t->sp[t->depth - 1] <= ev->sp)
		t->depth--;
	if (t->depth == AG_MAX_DEPTH) {
		ap->st.too_deep++;
		return;
	}
	submit_eval(ap, ev, t->depth);
	t->sp[t->depth++] = ev->sp;
}

/* A thread ended: forgets its evaluations. */
static void ag_on_thread_end(struct map_handler *h, uint32_t tid)
{
	struct ag_thread *t = thread_get(of(h), tid, false);

	if (t)
		t->depth = 0;
}

/*
 * A node whose op launched GPU work: the forward stack is that launch's, down to where the op
 * left its library for its kernels (ag_launch_cache.h), with the caller of set_gradient_edge in
 * the place of a walk's probed frame.
 */
static void node_from_launch(struct autograd_probe *ap, struct wt_rec *r,
			     const struct xpu_ev_ag_node *ev, struct xpu_rec_autograd_node *rec)
{
	const struct proc_map *m = proc_table__mapping_of(ap->h.pt, (pid_t)ev->hdr.pid, ev->uips[0]);
	struct ag_stack *s = &ap->node_stack;

	if (!ag_launch_cache__node_stack(ap->launches, ev->hdr.tid, ev->launch_ts, ev->uips[0],
					 m ? m->start : 0, m ? m->end : 0, s)) {
		ap->st.nodes_launch_lost++;
		return;
	}
	ap->st.nodes_from_launch++;
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

/* A node set on an op's output, with the forward stack that made it. */
static void on_node(struct autograd_probe *ap, const struct xpu_ev_ag_node *ev)
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
		node_from_launch(ap, &r, ev, &rec);
		writer_thread__submit(ap->wt, &r);
		return;
	}
	r.py_off = offsetof(struct xpu_rec_autograd_node, py_stack_id);
	event_stack__entry(ap->h.pt, &r, &ev->hdr, ev->uips, ev->ustart, ev->nr_user,
			   offsetof(struct xpu_rec_autograd_node, stack_id));
	writer_thread__submit(ap->wt, &r);
	locate_counter(ap, (pid_t)ev->hdr.pid, ev->hdr.ts_ns);
}

static void ag_on_event(struct map_handler *h, const void *data, size_t size)
{
	struct autograd_probe *ap = of(h);
	const struct xpu_ev_hdr *ev = data;

	if (ev->type == XPU_EV_AG_NODE && size >= sizeof(struct xpu_ev_ag_node))
		on_node(ap, data);
	else if (ev->type == XPU_EV_AG_EVAL && size >= sizeof(struct xpu_ev_ag_eval))
		on_eval(ap, data);
}

/*
 * A launch record about to be written: bpf/autograd.bpf.h offers nodes only the complete walks
 * of processes with a located counter; those are kept, with the Python frames joined to them
 * (the Python handler is added before this one).
 */
static void ag_on_record(struct map_handler *h, const struct xpu_ev_hdr *ev, struct wt_rec *r)
{
	struct autograd_probe *ap = of(h);
	const struct xpu_rec_gpu_launch *rec = r->body;

	if (r->type == XPU_REC_GPU_LAUNCH && r->has_stack &&
	    (rec->flags & XPU_EVENT_USER_OUTERMOST) && counter_located(ap, (pid_t)ev->pid))
		ag_launch_cache__put(ap->launches, ev->tid, ev->ts_ns, r->ips, r->nr_user,
				     r->py_frames, r->nr_py, r->py_flags);
}

static void ag_free_proc(struct map_handler *h, void *slot)
{
	free(slot);
}

struct autograd_probe *autograd_probe__new(struct bpf_state *bpf, struct writer_thread *wt)
{
	struct autograd_probe *ap = calloc(1, sizeof(*ap));
	const char *which = getenv("XPU_AUTOGRAD_PROBES");

	if (!ap)
		return NULL;
	ap->h = (struct map_handler){
		.name = "autograd",
		.on_file = ag_on_file,
		.on_mapping = ag_on_mapping,
		.on_end = ag_on_end,
		.on_thread_end = ag_on_thread_end,
		.on_record = ag_on_record,
		.on_event = ag_on_event,
		.events = { XPU_EV_AG_NODE, XPU_EV_AG_EVAL },
		.free_proc = ag_free_proc,
	};
	ap->launches = ag_launch_cache__new();
	if (!ap->launches) {
		free(ap);
		return NULL;
	}
	ap->bpf = bpf;
	ap->wt = wt;
	ap->probes = AG_PROBE_FORWARD | AG_PROBE_BACKWARD;
	ap->walk_all = getenv("XPU_AUTOGRAD_WALK_ALL") != NULL;
	if (which && !strcmp(which, "forward"))
		ap->probes = AG_PROBE_FORWARD;
	else if (which && !strcmp(which, "backward"))
		ap->probes = AG_PROBE_BACKWARD;
	return ap;
}

struct map_handler *autograd_probe__handler(struct autograd_probe *ap)
{
	return &ap->h;
}

void autograd_probe__set_walk_share(struct autograd_probe *ap, struct walk_share *ws)
{
	ap->ws = ws;
}

void autograd_probe__get_stats(const struct autograd_probe *ap, struct autograd_probe_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (ap)
		*st = ap->st;
}

void autograd_probe__free(struct autograd_probe *ap)
{
	size_t b;
	uint32_t i;

	if (!ap)
		return;
	for (b = 0; b < AG_THREAD_BUCKETS; b++) {
		struct ag_thread *t = ap->threads[b], *n;

		for (; t; t = n) {
			n = t->next;
			free(t);
		}
	}
	for (i = 0; i < ap->nfiles; i++)
		autograd_syms__free(&ap->files[i].syms);
	ag_launch_cache__free(ap->launches);
	free(ap);
}
