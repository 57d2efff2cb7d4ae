// SPDX-License-Identifier: MIT
/*
 * Python processes (see py_procs.h). Code objects are read with process_vm_readv once per
 * (process, address, first line): the first line, read by BPF when the frame was walked, tells
 * a code object from a later one at the same address. A code object that cannot be read (the
 * process is gone, or it was freed) keeps its frames, named by id 0, and is counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <bpf/bpf.h>

#include "config.h"
#include "intern.h"
#include "proc_table.h"
#include "py_layout.h"
#include "py_procs.h"
#include "inproc_share.h"
#include "writer_thread.h"

#define PY_PENDING_SLOTS 1024
/*
 * A thread's frames wait in a slot of their event's kind: a sample's PYSTACK can be read at
 * the end of one drain turn and its SAMPLE (still reserved) at the next, and the in-process
 * events (launches, with their own PYSTACKs) of the same thread come between the two turns.
 * With one slot per thread the launch's frames took the sample's place: the sample's were
 * counted "not joined" and the sample went without its Python frames.
 */
#define PY_PENDING_KINDS 4

static unsigned int pending_kind(uint32_t type)
{
	switch (type) {
	case XPU_EV_GPU_LAUNCH: return 1;
	case XPU_EV_OFFCPU: return 2;
	case XPU_EV_AG_NODE: return 3;
	default: return 0;
	}
}

static size_t pending_slot(uint32_t tid, uint32_t type)
{
	return (size_t)(tid % PY_PENDING_SLOTS) * PY_PENDING_KINDS + pending_kind(type);
}

/* A process's slot: its interpreter. Code ids never cross images (struct proc image). */
struct py_proc {
	bool registered;		/* a PY_RUNTIME was written for the current image */
	struct py_code_layout code;
};

/* Frames of one thread waiting for their event (same tid and ts). */
struct py_pending {
	uint32_t tid;
	uint16_t nr, flags;
	uint64_t ts_ns;
	uint64_t frames[XPU_PY_MAX_FRAMES];
};

enum code_state { CODE_OK = 1, CODE_FAILED = 2 };

struct py_procs {
	struct map_handler h;
	struct writer_thread *wt;
	int map_fd;
	bool enabled;
	struct walk_share *ws;		/* the in-process walk's copy of the layouts; may be NULL */
	struct py_pending *pending;	/* by tid and kind: pending_slot() */
	struct intern_table *codes;	/* {pid, image, address, first line} -> code id */
	uint8_t *code_state;		/* by code id */
	size_t code_state_cap;
	struct py_procs_stats st;
};

struct code_key {
	uint32_t pid, image;
	uint64_t addr;
	uint32_t fingerprint, pad;
};

static struct py_procs *of(struct map_handler *h)
{
	return (struct py_procs *)((char *)h - offsetof(struct py_procs, h));
}

static void submit_runtime(struct py_procs *pp, pid_t pid, uint32_t dso_id,
			   const struct py_elf_info *info, uint32_t status, uint64_t bias,
			   uint64_t ts_ns)
{
	struct xpu_rec_py_runtime rec = {
		.ts_ns = ts_ns,
		.pid = (uint32_t)pid,
		.status = status,
		.version_hex = info->version_hex,
		.dso_id = dso_id,
	};
	struct wt_rec r = {
		.type = XPU_REC_PY_RUNTIME,
		.ts_ns = ts_ns,
		.body = &rec,
		.body_size = sizeof(rec),
		.must_keep = true,
	};

	if (info->eval_vaddr) {
		rec.eval_start = bias + info->eval_vaddr;
		rec.eval_end = rec.eval_start + info->eval_size;
	}
	if (info->cold_vaddr) {
		rec.eval_cold_start = bias + info->cold_vaddr;
		rec.eval_cold_end = rec.eval_cold_start + info->cold_size;
	}
	writer_thread__submit(pp->wt, &r);
}

/* A file mapped for the first time: what py_layout finds in it, if it holds a CPython runtime. */
static void py_on_file(struct map_handler *h, struct proc_file *f, const struct proc_file_open *o)
{
	struct py_elf_info info, *keep;

	if (o->fd < 0 || py_layout__probe(o->fd, o->path, &info) != 1)
		return;
	keep = malloc(sizeof(*keep));
	if (keep) {
		*keep = info;
		*proc_file__slot(f, h) = keep;
	}
}

/* A new mapping of a file that holds a CPython runtime registers the process's interpreter. */
static void py_on_mapping(struct map_handler *h, struct proc *proc, const struct proc_map *m,
			  uint64_t ts_ns)
{
	struct py_procs *pp = of(h);
	const struct py_elf_info *info = m->file ? *proc_file__slot(m->file, h) : NULL;
	struct py_proc **slot = (struct py_proc **)proc__slot(proc, h), *p = *slot;
	struct xpu_py_layout l;
	uint32_t status, key = (uint32_t)proc->pid;
	uint64_t bias;

	if (!info || (p && p->registered))
		return;
	if (!p && !(p = *slot = calloc(1, sizeof(*p))))
		return;
	if (py_layout__bias(info, m->start, m->pgoff, &bias))
		return;
	p->registered = true;
	pp->st.runtimes++;
	status = info->status;
	if (status == XPU_PY_SUPPORTED && !pp->enabled)
		status = XPU_PY_DISABLED;
	if (status == XPU_PY_SUPPORTED) {
		l = info->walk;
		l.runtime_addr = bias + info->runtime_vaddr;
		p->code = info->code;
		if (bpf_map_update_elem(pp->map_fd, &key, &l, BPF_ANY)) {
			log_err("python frames off for pid %d: %s", proc->pid, strerror(errno));
			status = XPU_PY_NO_ROOM;
		} else if (pp->ws) {
			walk_share__proc_py(pp->ws, key, &l);
		}
	}
	log_info("pid %d runs CPython %x (status %u)", proc->pid, info->version_hex, status);
	submit_runtime(pp, proc->pid, m->file->dso_id, info, status, bias, ts_ns);
}

/* The process exec'd or exited: its interpreter, if any, is gone. */
static void py_on_end(struct map_handler *h, struct proc *proc, bool exec)
{
	void **slot = proc__slot(proc, h);

	free(*slot);
	*slot = NULL;
}

static void py_free(struct map_handler *h, void *slot)
{
	free(slot);
}

/* ---- reading the target's memory ---------------------------------------------------------- */

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

static size_t put_utf8(char *out, size_t room, uint32_t c)
{
	if (c < 0x80 && room >= 1) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800 && room >= 2) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000 && room >= 3) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c < 0x110000 && room >= 4) {
		out[0] = (char)(0xf0 | c >> 18);
		out[1] = (char)(0x80 | (c >> 12 & 0x3f));
		out[2] = (char)(0x80 | (c >> 6 & 0x3f));
		out[3] = (char)(0x80 | (c & 0x3f));
		return 4;
	}
	return 0;
}

/*
 * A str object as UTF-8 in out (at most XPU_PY_NAME_MAX_BYTES; longer names are cut at a
 * character). Only compact strings, which every code object's names are, can be read.
 */
static int read_str(pid_t pid, const struct py_code_layout *c, uint64_t addr, char *out,
		    size_t *len)
{
	uint8_t hdr[128], raw[XPU_PY_NAME_MAX_BYTES * 4];
	uint32_t state, kind, i, chars;
	int64_t length;
	size_t n = 0, w;

	*len = 0;
	if (!addr || c->compact_data > sizeof(hdr) || read_mem(pid, addr, hdr, c->compact_data))
		return -EFAULT;
	memcpy(&length, hdr + c->str_length, sizeof(length));
	memcpy(&state, hdr + c->str_state, sizeof(state));
	kind = state >> 2 & 7;
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4) || length < 0)
		return -EINVAL;
	chars = length > XPU_PY_NAME_MAX_BYTES ? XPU_PY_NAME_MAX_BYTES : (uint32_t)length;
	if (read_mem(pid, addr + ((state >> 6 & 1) ? c->ascii_data : c->compact_data), raw,
		     (size_t)chars * kind))
		return -EFAULT;
	for (i = 0; i < chars; i++) {
		uint32_t ch = kind == 1 ? raw[i] : kind == 2 ? ((const uint16_t *)raw)[i] :
			      ((const uint32_t *)raw)[i];

		w = put_utf8(out + n, XPU_PY_NAME_MAX_BYTES - n, ch);
		if (!w)
			break;
		n += w;
	}
	*len = n;
	return 0;
}

/* A bytes object's contents (the line table), cut at XPU_PY_LINETABLE_MAX_BYTES. */
static uint8_t *read_bytes(pid_t pid, const struct py_code_layout *c, uint64_t addr,
			   uint32_t *len)
{
	int64_t size;
	uint8_t *buf;

	*len = 0;
	if (!addr || read_mem(pid, addr + c->bytes_size, &size, sizeof(size)) || size <= 0)
		return NULL;
	if (size > XPU_PY_LINETABLE_MAX_BYTES)
		size = XPU_PY_LINETABLE_MAX_BYTES;
	buf = malloc((size_t)size);
	if (buf && read_mem(pid, addr + c->bytes_data, buf, (size_t)size)) {
		free(buf);
		return NULL;
	}
	*len = buf ? (uint32_t)size : 0;
	return buf;
}

static uint64_t field_ptr(const uint8_t *obj, uint16_t off)
{
	uint64_t v;

	memcpy(&v, obj + off, sizeof(v));
	return v;
}

/* Reads the code object and writes its PY_CODE record. */
static int define_code(struct py_procs *pp, pid_t pid, const struct py_proc *p, uint32_t id,
		       uint64_t addr, uint32_t fingerprint)
{
	const struct py_code_layout *c = &p->code;
	struct xpu_rec_py_code rec = { .id = id, .linetable_kind = c->linetable_kind };
	char name[XPU_PY_NAME_MAX_BYTES], file[XPU_PY_NAME_MAX_BYTES];
	size_t name_len, file_len;
	uint8_t obj[256], *table;
	int32_t first;
	struct wt_rec r = {
		.type = XPU_REC_PY_CODE,
		.body = &rec,
		.body_size = sizeof(rec),
		.nr_str = 2,
		.must_keep = true,
	};

	if (read_mem(pid, addr, obj, sizeof(obj)))
		return -EFAULT;
	memcpy(&first, obj + c->co_firstlineno, sizeof(first));
	/* freed since the walk, and the address reused */
	if (xpu_py_code_fingerprint((uint32_t)first, field_ptr(obj, c->co_filename)) != fingerprint)
		return -ESTALE;
	if (read_str(pid, c, field_ptr(obj, c->co_qualname ? c->co_qualname : c->co_name),
		     name, &name_len) ||
	    read_str(pid, c, field_ptr(obj, c->co_filename), file, &file_len))
		return -EFAULT;
	table = read_bytes(pid, c, field_ptr(obj, c->co_linetable), &rec.linetable_size);
	rec.firstlineno = first;
	if (!table)
		rec.linetable_kind = XPU_PY_LINETABLE_NONE;
	r.str[0].off = offsetof(struct xpu_rec_py_code, name_str);
	r.str[0].s = name;
	r.str[0].len = (uint32_t)name_len;
	r.str[1].off = offsetof(struct xpu_rec_py_code, filename_str);
	r.str[1].s = file;
	r.str[1].len = (uint32_t)file_len;
	r.tail = table;
	r.tail_size = rec.linetable_size;
	writer_thread__submit(pp->wt, &r);
	free(table);
	return 0;
}

/* The PY_CODE id of a walked frame's code object, 0 when it cannot be named. */
static uint32_t code_id(struct py_procs *pp, const struct proc *proc, const struct py_proc *p,
			uint64_t addr, uint32_t fingerprint)
{
	struct code_key k = { (uint32_t)proc->pid, proc->image, addr, fingerprint, 0 };
	int added = 0;
	uint32_t id = intern_table__get(pp->codes, &k, sizeof(k), &added);

	if (!id)
		return 0;
	if (id >= pp->code_state_cap) {
		size_t cap = pp->code_state_cap ? pp->code_state_cap * 2 : 4096;
		uint8_t *n;

		while (cap <= id)
			cap *= 2;
		n = realloc(pp->code_state, cap);
		if (!n)
			return 0;
		memset(n + pp->code_state_cap, 0, cap - pp->code_state_cap);
		pp->code_state = n;
		pp->code_state_cap = cap;
	}
	if (added) {
		if (define_code(pp, proc->pid, p, id, addr, fingerprint)) {
			pp->code_state[id] = CODE_FAILED;
			pp->st.code_errors++;
		} else {
			pp->code_state[id] = CODE_OK;
			pp->st.codes++;
		}
	}
	return pp->code_state[id] == CODE_OK ? id : 0;
}

/* ---- joining frames to their event --------------------------------------------------------- */

static void lost_frames(struct py_procs *pp, const struct py_pending *s)
{
	struct xpu_rec_lost lost = {
		.ts_ns = s->ts_ns, .source = XPU_LOST_PY_STACK, .count = 1,
	};
	struct wt_rec r = {
		.type = XPU_REC_LOST, .ts_ns = s->ts_ns, .body = &lost, .body_size = sizeof(lost),
		.must_keep = true,
	};

	pp->st.unjoined++;
	writer_thread__submit(pp->wt, &r);
}

/* An XPU_EV_PYSTACK event: kept until its sample or launch arrives. */
static void py_on_event(struct map_handler *h, const void *data, size_t size)
{
	struct py_procs *pp = of(h);
	const struct xpu_ev_pystack *ev = data;
	struct py_pending *s;
	struct proc *proc;
	struct py_proc *p;
	uint32_t i, nr;

	if (size < offsetof(struct xpu_ev_pystack, frames))
		return;
	nr = ev->nr;
	if (nr > XPU_PY_MAX_FRAMES ||
	    nr > (size - offsetof(struct xpu_ev_pystack, frames)) / sizeof(ev->frames[0]))
		return;
	proc = proc_table__find(h->pt, (pid_t)ev->hdr.pid);
	p = proc ? *proc__slot(proc, h) : NULL;
	if (!p || !p->registered)
		return;
	s = &pp->pending[pending_slot(ev->hdr.tid, ev->for_type)];
	if (s->nr)
		lost_frames(pp, s);	/* its event never came: lost in the ring buffer */
	s->tid = ev->hdr.tid;
	s->ts_ns = ev->hdr.ts_ns;
	s->flags = (ev->flags & XPU_EV_PY_TRUNCATED ? XPU_PY_STACK_TRUNCATED : 0) |
		   (ev->flags & XPU_EV_PY_READ_ERROR ? XPU_PY_STACK_READ_ERROR : 0);
	for (i = 0; i < nr; i++) {
		const struct xpu_py_frame_ev *f = &ev->frames[i];

		s->frames[i] = XPU_PY_FRAME(code_id(pp, proc, p, f->code, f->fingerprint),
					    f->instr & ~XPU_PY_EV_ENTRY, f->instr & XPU_PY_EV_ENTRY);
	}
	s->nr = (uint16_t)nr;
}

/* The sample or launch the frames of its thread were sent for, if any: r gets them. */
static void py_on_record(struct map_handler *h, const struct xpu_ev_hdr *ev, struct wt_rec *r)
{
	struct py_procs *pp = of(h);
	struct py_pending *s = &pp->pending[pending_slot(ev->tid, ev->type)];

	if (!s->nr || s->tid != ev->tid || s->ts_ns != ev->ts_ns)
		return;
	r->py_frames = s->frames;
	r->nr_py = s->nr;
	r->py_flags = s->flags;
	pp->st.stacks++;
	pp->st.frames += s->nr;
	/* the writer copies the frames when r is submitted, before the slot is reused */
	s->nr = 0;
}

struct py_procs *py_procs__new(struct writer_thread *wt, int layout_map_fd, bool enabled)
{
	struct py_procs *pp = calloc(1, sizeof(*pp));

	if (!pp)
		return NULL;
	pp->h = (struct map_handler){
		.name = "python",
		.on_file = py_on_file,
		.on_mapping = py_on_mapping,
		.on_end = py_on_end,
		.on_record = py_on_record,
		.on_event = py_on_event,
		.events = { XPU_EV_PYSTACK },
		.free_proc = py_free,
		.free_file = py_free,
	};
	pp->wt = wt;
	pp->map_fd = layout_map_fd;
	pp->enabled = enabled;
	pp->pending = calloc(PY_PENDING_SLOTS * PY_PENDING_KINDS, sizeof(*pp->pending));
	pp->codes = intern_table__new();
	if (!pp->pending || !pp->codes) {
		py_procs__free(pp);
		return NULL;
	}
	return pp;
}

void py_procs__free(struct py_procs *pp)
{
	if (!pp)
		return;
	intern_table__free(pp->codes);
	free(pp->code_state);
	free(pp->pending);
	free(pp);
}

struct map_handler *py_procs__handler(struct py_procs *pp)
{
	return &pp->h;
}

void py_procs__set_walk_share(struct py_procs *pp, struct walk_share *ws)
{
	pp->ws = ws;
}

void py_procs__get_stats(const struct py_procs *pp, struct py_procs_stats *st)
{
	*st = pp->st;
}
