/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python frames of the current thread, read at a CPU sample or a GPU launch, in the same
 * program that takes the native stack: since 3.11 CPython keeps its frames in heap chunks, not
 * on the C stack, so no stack copy holds them, and the code objects they name exist only in
 * the process. Only addresses leave here (code object, instruction index, a fingerprint);
 * xpu-record reads names and line tables from the process while it runs.
 *
 * Included by xpu.bpf.c, which provides count() and the events ring buffer.
 */
#ifndef XPU_PY_WALK_BPF_H
#define XPU_PY_WALK_BPF_H

/*
 * A thread with no Python state is looked up again after this long: the main thread has none
 * for the first milliseconds of start-up, a CUDA or autograd worker may never have one.
 */
#define PY_NO_THREAD_RETRY_NS (10ull * 1000 * 1000)
#define PY_MAX_INTERPRETERS 4
#define PY_MAX_THREADS 64
/* Entry frames (3.12+) take loop turns without being sent; allow for some. */
#define PY_WALK_STEPS (XPU_BPF_PY_MAX_FRAMES + 32)

/* tgid -> where its interpreter keeps thread states and frames; filled by xpu-record. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct xpu_py_layout);
} py_procs SEC(".maps");

struct py_thread {
	__u64 tstate;			/* 0: none found at checked_ns */
	__u64 checked_ns;
	/*
	 * A "none found" entry made for a launch (1) or a CPU sample (0). A launch trusts only a
	 * launch's: a sample may have scanned in a new thread's first instants, before its state
	 * carried its own id (CPython links the state under its creator's id and the thread sets
	 * its own when it starts), and its entry would have hidden that thread's first 10 ms of
	 * launches from the scan (test_inproc_python once lost a worker's 100 launches' frames).
	 */
	__u32 by_launch;
	__u32 reserved;
};

/* tid -> its PyThreadState, so the thread list is walked once per thread, not per event. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct py_thread);
} py_threads SEC(".maps");

/*
 * One walk in progress: the event being filled and what the loop steps share. bpf_loop()
 * callbacks are verified once, where an unrolled walk of 160 steps is not verifiable.
 */
/*
 * Bytes of a thread's data stack read at once (3.11+). Its frames lie in one chunk, each
 * callee just above its caller, so one read of the memory below a frame holds its callers
 * too: a read of user memory costs more than a frame's work.
 */
#ifndef PY_WIN_BYTES
#define PY_WIN_BYTES 1024
#endif
/*
 * From 3.12, a frame entered from C has an entry frame on the C stack between it and its
 * caller, so the chain of a PyTorch stack (every nn.Module call goes through C) alternates
 * between the data stack and the C stack. A frame that far from the window goes to a second
 * window, the bytes after the first, read from the frame up to its page's end: the entry
 * frames of one stack lie on the C stack in that order, each caller's above its callee, a few
 * hundred bytes apart, so one read serves several of them; the first window keeps the data
 * stack, whose next frame is most likely still there. Only where a frame is read from
 * changes, never what is read.
 */
#define PY_WIN_NEAR (64 * 1024)

/*
 * The fingerprint of a code object (its first line and file name object) is the one read per
 * frame that the window does not serve: a per-CPU cache keeps it for PY_CODE_CACHE_NS after
 * the read. A code object
 * can be freed and its address reused by another; a frame of the new one within that time
 * would carry the old fingerprint (and name). 2 ms bounds that window while a launch loop
 * (tens of us per launch) still reads each of its code objects once in dozens of launches.
 */
#define PY_CODE_CACHE_SLOTS 256
#define PY_CODE_CACHE_NS (2ull * 1000 * 1000)

struct py_code_cache_entry {
	__u64 code;
	__u64 read_ns;
	__u32 tgid;
	__u32 fingerprint;
};

struct py_walk_state {
	struct xpu_ev_pystack ev;
	struct xpu_py_layout l;
	__u64 win_base;			/* user address of win[0] */
	__u32 win_len;			/* 0: empty */
	__u32 cwin_len;			/* the second window's (PY_WIN_NEAR); 0: empty */
	__u64 cwin_base;		/* user address of win[PY_WIN_BYTES] */
	__u32 reads;			/* user reads of frames, counted per walk */
	__u32 code_hits;		/* fingerprints from the code cache, per walk */
	__u32 tgid;
	__u64 now;
	struct py_code_cache_entry codes[PY_CODE_CACHE_SLOTS];
	/* the window, then a frame read alone (PY_WIN_NEAR), then 8 bytes: see py_win_u64 */
	__u8 win[2 * PY_WIN_BYTES + 8];
	__u64 frame;			/* next frame to read; 0 at the end */
	__u64 interp, ts, key;		/* thread-state scan */
	__u64 ts_frame;			/* the frame field read with a cached state's check; 0: not read */
	__u64 found;
	__u32 nr;
	__u32 scanned;
	/* the innermost frame of the last walk and the 8 bytes at its instruction field (0, 0:
	 * none), for bpf/autograd.bpf.h */
	__u64 top_frame, top_instr;
};

/* XPU_BPF_SLOTS slots per CPU, as ustack_scratch. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XPU_BPF_SLOTS);
	__type(key, __u32);
	__type(value, struct py_walk_state);
} py_scratch SEC(".maps");

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* What a thread state's id field holds for the current thread (see xpu_py_layout.ts_id). */
static __always_inline __u64 py_thread_key(const struct xpu_py_layout *l, __u32 tid)
{
	struct task_struct *task;

	if (l->id_is_tid)
		return tid;
	task = bpf_get_current_task_btf();
	return BPF_CORE_READ(task, thread.fsbase);
}

/* One step of the thread-state scan: the next thread, or the next interpreter's first. */
static long py_scan_step(__u64 i, void *ctx)
{
	struct py_walk_state *w = bpf_map_lookup_elem(&py_scratch, ctx);
	const struct xpu_py_layout *l;

	if (!w)
		return 1;
	l = &w->l;
	if (!w->ts) {
		if (!w->interp || w->scanned++ >= PY_MAX_INTERPRETERS)
			return 1;
		w->ts = py_read_ptr(w->interp + l->interp_threads_head);
		w->interp = py_read_ptr(w->interp + l->interp_next);
		return 0;
	}
	if (py_read_ptr(w->ts + l->ts_id) == w->key) {
		w->found = w->ts;
		return 1;
	}
	w->ts = py_read_ptr(w->ts + l->ts_next);
	return 0;
}

static __always_inline __u64 py_find_tstate(struct py_walk_state *w, __u32 *slot, __u64 key)
{
	count(XPU_CNT_PY_THREAD_SCANS);
	w->key = key;
	w->found = 0;
	w->ts = 0;
	w->scanned = 0;
	w->interp = py_read_ptr(w->l.runtime_addr + w->l.rt_interp_head);
	bpf_loop(PY_MAX_INTERPRETERS * (PY_MAX_THREADS + 1), py_scan_step, slot, 0);
	return w->found;
}

/*
 * Thread-state fields read together: every layout so far has its id and frame fields within
 * 160 bytes, so the check of a cached state and the read of its top frame are one user read.
 */
#define PY_TS_SPAN 256

/*
 * The id field of the thread state at ts (0 if unreadable), and, when both lie within
 * PY_TS_SPAN bytes, its frame field into w->ts_frame (else 0). Uses the window as scratch:
 * the walk empties it before its first frame.
 */
static __always_inline __u64 py_read_ts(struct py_walk_state *w, __u64 ts)
{
	__u32 a = w->l.ts_id, b = w->l.ts_frame, lo = a < b ? a : b, len = (a < b ? b - a : a - b) + 8;

	w->ts_frame = 0;
	if (len > PY_TS_SPAN)
		return py_read_ptr(ts + a);
	if (bpf_probe_read_user(w->win, len, (void *)(ts + lo)))
		return 0;
	w->ts_frame = *(__u64 *)(w->win + ((b - lo) & (PY_TS_SPAN - 1)));
	return *(__u64 *)(w->win + ((a - lo) & (PY_TS_SPAN - 1)));
}

/* The current thread's PyThreadState, from the cache when it still belongs to the thread. */
static __always_inline __u64 py_tstate(struct py_walk_state *w, __u32 *slot, __u32 tid,
					 __u64 now, __u32 by_launch)
{
	const struct xpu_py_layout *l = &w->l;
	struct py_thread *pt = bpf_map_lookup_elem(&py_threads, &tid), n;
	__u64 key = py_thread_key(l, tid);

	if (pt) {
		if (pt->tstate && py_read_ts(w, pt->tstate) == key)
			return pt->tstate;
		if (!pt->tstate && now - pt->checked_ns < PY_NO_THREAD_RETRY_NS &&
		    (pt->by_launch || !by_launch))
			return 0;
	}
	w->ts_frame = 0;
	n.tstate = py_find_tstate(w, slot, key);
	n.checked_ns = now;
	n.by_launch = by_launch;
	n.reserved = 0;
	bpf_map_update_elem(&py_threads, &tid, &n, BPF_ANY);
	return n.tstate;
}

/* The thread's innermost frame, from its frame field (read here unless py_tstate did). */
static __always_inline __u64 py_top_frame(struct py_walk_state *w, __u64 tstate)
{
	const struct xpu_py_layout *l = &w->l;
	__u64 p = w->ts_frame ? w->ts_frame : py_read_ptr(tstate + l->ts_frame);

	if (l->model == XPU_PY_MODEL_311 || l->model == XPU_PY_MODEL_312)
		p = p ? py_read_ptr(p + l->cframe_frame) : 0;
	return p;
}

/*
 * A field of the frame that starts at window offset off, at a layout offset fld: read in place,
 * since a copy of the frame out of the window was a helper call per frame. off + fld stays
 * below 2 * PY_WIN_BYTES (py_read_frame checks it); the mask only tells the verifier so, and
 * win's 8 spare bytes take a field at its very end.
 */
static __always_inline __u64 py_win_u64(struct py_walk_state *w, __u32 off, __u16 fld)
{
	if (fld > XPU_PY_FRAME_READ_MAX - 8)
		return 0;
	return *(__u64 *)(w->win + ((off + fld) & (2 * PY_WIN_BYTES - 1)));
}

static __always_inline __u32 py_win_u32(struct py_walk_state *w, __u32 off, __u16 fld)
{
	if (fld > XPU_PY_FRAME_READ_MAX - 4)
		return 0;
	return *(__u32 *)(w->win + ((off + fld) & (2 * PY_WIN_BYTES - 1)));
}

static __always_inline __u8 py_win_u8(struct py_walk_state *w, __u32 off, __u16 fld)
{
	if (fld > XPU_PY_FRAME_READ_MAX - 1)
		return 0;
	return w->win[(off + fld) & (2 * PY_WIN_BYTES - 1)];
}

/*
 * A frame far from the first window (an entry frame on the C stack, PY_WIN_NEAR): through the
 * second window, refilled from addr up to its page's end (never across it, so that the read
 * cannot fault where the frame itself does not), or the frame alone where it crosses that end.
 * Returns its offset in win, -1 if unreadable.
 */
static __always_inline int py_read_far_frame(struct py_walk_state *w, __u64 addr, __u32 size)
{
	__u64 off = addr - w->cwin_base, len;

	if (w->cwin_len && addr >= w->cwin_base && off + size <= w->cwin_len &&
	    off + size <= PY_WIN_BYTES)
		return PY_WIN_BYTES + (int)off;
	len = 4096 - (addr & 4095);
	if (len > PY_WIN_BYTES)
		len = PY_WIN_BYTES;
	if (len < size)
		len = size;
	w->reads++;
	w->cwin_len = 0;
	if (bpf_probe_read_user(w->win + PY_WIN_BYTES, len, (void *)addr))
		return -1;
	w->cwin_base = addr;
	w->cwin_len = len;
	return PY_WIN_BYTES;
}

/*
 * Makes the window hold the size bytes of the frame at addr and returns their offset in it:
 * as it is when it holds them, else by a read of the window's worth below the frame's end
 * (3.11+; never below addr's page, so that the read cannot fault where the frame itself does
 * not), or of the frame alone at 0 for 3.10, whose frames are separate heap objects; a frame
 * far from it goes through the second window (py_read_far_frame). -1 if unreadable.
 */
static __always_inline int py_read_frame(struct py_walk_state *w, __u64 addr, __u32 size)
{
	__u64 off = addr - w->win_base, start, end = addr + size;

	if (size > XPU_PY_FRAME_READ_MAX)
		return -1;
	if (w->l.model == XPU_PY_MODEL_310) {
		w->reads++;
		w->win_len = 0;
		return bpf_probe_read_user(w->win, size, (void *)addr) ? -1 : 0;
	}
	if (!w->win_len || addr < w->win_base || off + size > w->win_len) {
		if (w->win_len && (addr + PY_WIN_NEAR < w->win_base ||
				   addr > w->win_base + w->win_len + PY_WIN_NEAR))
			return py_read_far_frame(w, addr, size);
		start = end > PY_WIN_BYTES ? end - PY_WIN_BYTES : 0;
		if (start < (addr & ~4095ull))
			start = addr & ~4095ull;
		w->win_len = 0;
		if (end - start > PY_WIN_BYTES ||
		    bpf_probe_read_user(w->win, end - start, (void *)start))
			return -1;
		w->reads++;
		w->win_base = start;
		w->win_len = end - start;
		off = addr - start;
	}
	if (off >= PY_WIN_BYTES || off + size > PY_WIN_BYTES)
		return -1;
	return (int)off;
}

/* The code object's fingerprint: from the cache while fresh, else read (0 if not). */
static __always_inline __u32 py_code_fingerprint(struct py_walk_state *w, __u64 code)
{
	struct py_code_cache_entry *e = &w->codes[(code >> 4 ^ code >> 12) & (PY_CODE_CACHE_SLOTS - 1)];
	__u64 filename = 0;
	__u32 first = 0;

	if (e->code == code && e->tgid == w->tgid && w->now - e->read_ns < PY_CODE_CACHE_NS) {
		w->code_hits++;
		return e->fingerprint;
	}
	if (bpf_probe_read_user(&first, sizeof(first), (void *)(code + w->l.co_firstlineno)) ||
	    bpf_probe_read_user(&filename, sizeof(filename), (void *)(code + w->l.co_filename)))
		return 0;	/* not cached: the next frame of this code tries again */
	e->code = code;
	e->tgid = w->tgid;
	e->read_ns = w->now;
	e->fingerprint = xpu_py_code_fingerprint(first, filename);
	return e->fingerprint;
}

/*
 * One frame, leaf first, into ev->frames: the frame's fields (through the window), and the
 * code object's fingerprint (through the code cache).
 */
static long py_frame_step(__u64 i, void *ctx)
{
	struct py_walk_state *w = bpf_map_lookup_elem(&py_scratch, ctx);
	struct xpu_ev_pystack *ev;
	const struct xpu_py_layout *l;
	__u32 size, instr, nr;
	__u64 code, ip, first;
	int off;

	if (!w || !w->frame)
		return 1;
	ev = &w->ev;
	l = &w->l;
	nr = w->nr;
	if (nr >= XPU_BPF_PY_MAX_FRAMES) {
		ev->flags |= XPU_EV_PY_TRUNCATED;
		return 1;
	}
	size = l->frame_read;
	if (size > XPU_PY_FRAME_READ_MAX)
		size = XPU_PY_FRAME_READ_MAX;
	off = py_read_frame(w, w->frame, size);
	if (off < 0) {
		ev->flags |= XPU_EV_PY_READ_ERROR;
		return 1;
	}
	if (w->frame == w->top_frame)
		w->top_instr = py_win_u64(w, off, l->fr_instr);
	w->frame = py_win_u64(w, off, l->fr_previous);
	if (l->model >= XPU_PY_MODEL_312 &&
	    py_win_u8(w, off, l->fr_marker) == XPU_PY_OWNED_BY_CSTACK) {
		/* the C stack's entry frame: the frame sent before it began its call */
		if (nr > 0 && nr <= XPU_BPF_PY_MAX_FRAMES)
			ev->frames[nr - 1].instr |= XPU_PY_EV_ENTRY;
		return 0;
	}
	code = py_win_u64(w, off, l->fr_code);
	if (!code)
		return 0;
	if (l->model == XPU_PY_MODEL_310) {
		instr = py_win_u32(w, off, l->fr_instr) & 0x7fffffff;
	} else {
		ip = py_win_u64(w, off, l->fr_instr);
		first = code + l->co_code_adaptive;
		instr = ip > first ? (__u32)((ip - first) / 2) & 0x7fffffff : 0;
	}
	if (l->model == XPU_PY_MODEL_310 ||
	    (l->model == XPU_PY_MODEL_311 && py_win_u8(w, off, l->fr_marker)))
		instr |= XPU_PY_EV_ENTRY;
	ev->frames[nr].code = code;
	ev->frames[nr].instr = instr;
	ev->frames[nr].fingerprint = py_code_fingerprint(w, code);
	w->nr = nr + 1;
	return 0;
}

/*
 * Sends the thread's Python frames ahead of the event of type for_type, stamped ts (taken now
 * when 0). Returns the timestamp the event must carry: ts, or the new one when frames went.
 */
static __always_inline __u64 emit_pystack(__u32 slot, __u32 pid, __u32 tid, __u64 ts,
					  __u32 for_type)
{
	const struct xpu_py_layout *l;
	struct py_walk_state *w = bpf_map_lookup_elem(&py_scratch, &slot);
	struct xpu_ev_pystack *ev;
	__u64 now, tstate;
	__u32 nr;

	if (!w)
		return ts;
	w->top_frame = 0;
	w->top_instr = 0;
	l = bpf_map_lookup_elem(&py_procs, &pid);
	if (!l)
		return ts;
	w->l = *l;
	now = ts ? ts : bpf_ktime_get_ns();
	tstate = py_tstate(w, &slot, tid, now, for_type == XPU_EV_GPU_LAUNCH);
	if (!tstate) {
		count(XPU_CNT_PY_NO_THREAD);
		return ts;
	}
	w->frame = py_top_frame(w, tstate);
	if (!w->frame)
		return ts;		/* a thread outside Python code: nothing to add */
	w->top_frame = w->frame;
	ev = &w->ev;
	ev->flags = 0;
	w->nr = 0;
	w->win_len = 0;
	w->cwin_len = 0;
	w->reads = 0;
	w->code_hits = 0;
	w->tgid = pid;
	w->now = now;
	bpf_loop(PY_WALK_STEPS, py_frame_step, &slot, 0);
	count_n(XPU_CNT_PY_FRAME_READS, w->reads);
	count_n(XPU_CNT_PY_CODE_CACHE_HITS, w->code_hits);
	nr = w->nr;
	if (w->frame && nr < XPU_BPF_PY_MAX_FRAMES && !(ev->flags & XPU_EV_PY_READ_ERROR))
		ev->flags |= XPU_EV_PY_TRUNCATED;	/* out of steps */
	if (ev->flags & XPU_EV_PY_TRUNCATED)
		count(XPU_CNT_PY_TRUNCATED);
	if (ev->flags & XPU_EV_PY_READ_ERROR)
		count(XPU_CNT_PY_READ_ERR);
	if (!nr || nr > XPU_BPF_PY_MAX_FRAMES)
		return ts;
	ev->hdr.type = XPU_EV_PYSTACK;
	ev->hdr.pid = pid;
	ev->hdr.tid = tid;
	ev->hdr.cpu = bpf_get_smp_processor_id();
	ev->hdr.ts_ns = now;
	ev->for_type = for_type;
	ev->nr = nr;
	if (bpf_ringbuf_output(&events, ev,
			       offsetof(struct xpu_ev_pystack, frames) +
				       nr * sizeof(struct xpu_py_frame_ev), 0)) {
		count(XPU_CNT_RB_LOST);
		return ts;
	}
	count(XPU_CNT_PY_STACKS);
	return now;
}

#endif
