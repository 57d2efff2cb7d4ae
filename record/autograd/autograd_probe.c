// SPDX-License-Identifier: MIT
/* Backward attribution's recording side (see autograd_probe.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autograd_probe.h"
#include "autograd_syms.h"
#include "bpf_setup.h"
#include "config.h"
#include "writer_thread.h"
#include "xpu_format.h"

/* Reentrant backward (checkpointing) nests evaluations; deeper ones are counted, not written. */
#define AG_MAX_DEPTH 16
#define AG_THREAD_BUCKETS 256
#define AG_MAX_FILES 64

/* Where a file is loaded, per process */
struct ag_bias {
	uint32_t pid;
	uint64_t bias;
};

struct ag_file {
	uint32_t dso_id;
	bool probed;			/* the engine's file (a cookie); else node classes only */
	struct autograd_syms syms;
	struct ag_bias *biases;		/* by process */
	size_t nbiases;
};

/*
 * A process's node counter (bpf/autograd.bpf.h ag_tls): where it is once located. The module
 * id is written by the dynamic linker after the library is mapped, so it is read from the
 * process at its first node event, and again a few times while still zero.
 */
enum ag_counter_state { AG_COUNTER_PENDING, AG_COUNTER_LOCATED, AG_COUNTER_NONE };
#define AG_COUNTER_TRIES 8
#define AG_COUNTER_RETRY_NS (50ull * 1000 * 1000)
#define AG_PROC_BUCKETS 64

struct ag_proc {
	struct ag_proc *next;
	uint32_t pid;
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
	unsigned int probes;		/* AG_PROBE_* */
	bool walk_all;			/* XPU_AUTOGRAD_WALK_ALL: no node takes its launch's stack */
	struct bpf_state *bpf;
	struct writer_thread *wt;
	struct ag_file files[AG_MAX_FILES];	/* index: the probes' attach cookie */
	uint32_t nfiles;
	struct { dev_t dev; ino_t ino; } seen[AG_MAX_FILES * 4];	/* PyTorch files looked at */
	uint32_t nseen;
	struct ag_thread *threads[AG_THREAD_BUCKETS];
	struct ag_proc *procs[AG_PROC_BUCKETS];
	struct autograd_probe_stats st;
};

struct autograd_probe *autograd_probe__new(struct bpf_state *bpf, struct writer_thread *wt)
{
	struct autograd_probe *ap = calloc(1, sizeof(*ap));
	const char *which = getenv("XPU_AUTOGRAD_PROBES");

	if (ap) {
		ap->bpf = bpf;
		ap->wt = wt;
		ap->probes = AG_PROBE_FORWARD | AG_PROBE_BACKWARD;
		ap->walk_all = getenv("XPU_AUTOGRAD_WALK_ALL") != NULL;
		if (which && !strcmp(which, "forward"))
			ap->probes = AG_PROBE_FORWARD;
		else if (which && !strcmp(which, "backward"))
			ap->probes = AG_PROBE_BACKWARD;
	}
	return ap;
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
static bool torch_library(const char *path)
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

void autograd_probe__file(struct autograd_probe *ap, pid_t pid, uint32_t dso_id, int fd,
			  const char *path, const char *map_path, uint64_t ts_ns)
{
	char err[256] = "";
	struct ag_file *f;
	struct stat st;
	uint32_t i;
	int ret;

	if (!ap || fd < 0 || !torch_library(path) || fstat(fd, &st))
		return;
	for (i = 0; i < ap->nseen; i++)
		if (ap->seen[i].dev == st.st_dev && ap->seen[i].ino == st.st_ino)
			return;
	if (ap->nseen == sizeof(ap->seen) / sizeof(ap->seen[0]))
		return;
	ap->seen[ap->nseen].dev = st.st_dev;
	ap->seen[ap->nseen++].ino = st.st_ino;
	if (ap->nfiles == AG_MAX_FILES) {
		snprintf(err, sizeof(err), "more than %d PyTorch libraries probed", AG_MAX_FILES);
		goto unavailable;
	}
	f = &ap->files[ap->nfiles];
	memset(f, 0, sizeof(*f));
	ret = autograd_syms__read(&f->syms, fd, err, sizeof(err));
	/* a PyTorch library without the engine (libtorch.so's stub): not ours */
	if (ret == -ENOENT && strncmp(base_name(path), "libtorch_cpu", 12))
		return;
	if (ret == 1) {
		f->dso_id = dso_id;
		ap->nfiles++;
		log_info("autograd: %zu node classes in %s", f->syms.nvtables, path);
		return;
	}
	if (ret)
		goto unavailable;
	ret = bpf_state__attach_autograd(ap->bpf, map_path,
					 ap->probes & AG_PROBE_FORWARD ? f->syms.set_edge_off : 0,
					 ap->probes & AG_PROBE_BACKWARD ? f->syms.evaluate_off : 0,
					 ap->nfiles, err, sizeof(err));
	if (ret) {
		autograd_syms__free(&f->syms);
		goto unavailable;
	}
	f->probed = true;
	f->dso_id = dso_id;
	ap->nfiles++;
	ap->st.files++;
	log_info("autograd: probes attached to %s (%zu node classes)", path, f->syms.nvtables);
	submit_probe(ap, pid, dso_id, XPU_AUTOGRAD_PROBED, NULL, ts_ns);
	return;
unavailable:
	ap->st.unavailable++;
	log_err("warning: backward attribution unavailable for %s: %s", path, err);
	submit_probe(ap, pid, dso_id, XPU_AUTOGRAD_UNAVAILABLE, err, ts_ns);
}

void autograd_probe__mapping(struct autograd_probe *ap, pid_t pid, uint32_t dso_id,
			     uint64_t start, uint64_t pgoff)
{
	struct ag_file *f;
	struct ag_bias *b;
	uint64_t bias;
	uint32_t i;
	size_t j;

	if (!ap)
		return;
	for (i = 0; i < ap->nfiles; i++) {
		f = &ap->files[i];
		if (f->dso_id != dso_id || !autograd_syms__bias(&f->syms, start, pgoff, &bias))
			continue;
		for (j = 0; j < f->nbiases; j++)
			if (f->biases[j].pid == (uint32_t)pid)
				break;
		if (j == f->nbiases) {
			b = realloc(f->biases, (f->nbiases + 1) * sizeof(*b));
			if (!b)
				return;
			f->biases = b;
			f->nbiases++;
		}
		f->biases[j].pid = (uint32_t)pid;
		f->biases[j].bias = bias;
	}
}

/* A node's class: from the probed file's vtables, else those of a classes-only file. */
static const char *node_class(const struct autograd_probe *ap, const struct xpu_ev_ag_eval *b)
{
	const struct ag_file *f;
	const char *cls = NULL;
	uint32_t i;
	size_t j;

	/* the probe sits on evaluate_function's first instruction: ip - its address is the bias */
	if (b->cookie < ap->nfiles && ap->files[b->cookie].probed) {
		f = &ap->files[b->cookie];
		cls = autograd_syms__class(&f->syms, b->ip - f->syms.evaluate_vaddr, b->vtable);
	}
	for (i = 0; !cls && i < ap->nfiles; i++) {
		f = &ap->files[i];
		for (j = 0; !f->probed && j < f->nbiases && !cls; j++)
			if (f->biases[j].pid == b->hdr.pid)
				cls = autograd_syms__class(&f->syms, f->biases[j].bias, b->vtable);
	}
	return cls;
}

static struct ag_proc *proc_get(struct autograd_probe *ap, uint32_t pid, bool create)
{
	struct ag_proc **b = &ap->procs[pid % AG_PROC_BUCKETS], *p;

	for (p = *b; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->next = *b;
	*b = p;
	return p;
}

/* The probed file with a located counter and its bias in pid, if any. */
static const struct ag_file *counter_file(const struct autograd_probe *ap, uint32_t pid,
					  uint64_t *bias)
{
	const struct ag_file *f;
	uint32_t i;
	size_t j;

	for (i = 0; i < ap->nfiles; i++) {
		f = &ap->files[i];
		for (j = 0; f->probed && f->syms.seq_found && j < f->nbiases; j++) {
			if (f->biases[j].pid == pid) {
				*bias = f->biases[j].bias;
				return f;
			}
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

void autograd_probe__locate_counter(struct autograd_probe *ap, pid_t pid, uint64_t ts_ns)
{
	struct ag_proc *p = ap ? proc_get(ap, (uint32_t)pid, true) : NULL;
	const struct ag_file *f;
	struct xpu_ag_tls place;
	uint64_t bias = 0;
	int ret;

	if (!p || p->state != AG_COUNTER_PENDING || ts_ns < p->next_try_ns)
		return;
	f = ap->walk_all ? NULL : counter_file(ap, (uint32_t)pid, &bias);
	ret = f ? read_counter_place((uint32_t)pid, bias + f->syms.seq.index_vaddr, f->syms.seq.add,
				     &place)
		: -ENOENT;
	if (!ret)
		ret = bpf_state__set_autograd_counter(ap->bpf, (uint32_t)pid, &place);
	if (!ret) {
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

bool autograd_probe__counter_located(const struct autograd_probe *ap, pid_t pid)
{
	const struct ag_proc *p;

	if (!ap)
		return false;
	for (p = ap->procs[(uint32_t)pid % AG_PROC_BUCKETS]; p; p = p->next)
		if (p->pid == (uint32_t)pid)
			return p->state == AG_COUNTER_LOCATED;
	return false;
}

void autograd_probe__forget(struct autograd_probe *ap, pid_t pid)
{
	struct ag_proc **pp, *p;

	if (!ap)
		return;
	for (pp = &ap->procs[(uint32_t)pid % AG_PROC_BUCKETS]; (p = *pp); pp = &p->next) {
		if (p->pid == (uint32_t)pid) {
			*pp = p->next;
			if (p->state == AG_COUNTER_LOCATED)
				bpf_state__set_autograd_counter(ap->bpf, (uint32_t)pid, NULL);
			free(p);
			return;
		}
	}
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

void autograd_probe__on_eval(struct autograd_probe *ap, const struct xpu_ev_ag_eval *ev)
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

void autograd_probe__thread_exit(struct autograd_probe *ap, uint32_t tid)
{
	struct ag_thread *t = ap ? thread_get(ap, tid, false) : NULL;

	if (t)
		t->depth = 0;
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
	for (b = 0; b < AG_PROC_BUCKETS; b++) {
		struct ag_proc *p = ap->procs[b], *n;

		for (; p; p = n) {
			n = p->next;
			free(p);
		}
	}
	for (b = 0; b < AG_THREAD_BUCKETS; b++) {
		struct ag_thread *t = ap->threads[b], *n;

		for (; t; t = n) {
			n = t->next;
			free(t);
		}
	}
	for (i = 0; i < ap->nfiles; i++) {
		autograd_syms__free(&ap->files[i].syms);
		free(ap->files[i].biases);
	}
	free(ap);
}
