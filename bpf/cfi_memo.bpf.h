/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The walk's memo: the outer part of a thread's last complete walk, reused by its next walk
 * when it is proven unchanged. Consecutive launches of a training loop come from the same
 * thread through the same outer frames (the interpreter, the module calls), and a walk spends
 * most of its time there.
 *
 * Why a reuse is exact. From a frame on, a walk made only of plain CFI steps is a function of
 * the frame's registers (ip, sp, and bp where a later step reads it before a row restores it),
 * the unwind rows (fixed for a generation of the process's mappings) and the stack words it
 * reads. A walk records, per frame, those registers and the index of its first word read, and
 * logs every word it reads (address and value). When a new walk of the same thread, in the same
 * generation, reaches a frame whose registers equal a recorded frame's (from which every step
 * was plain), it reads every logged word from that frame on again: if all hold the same values,
 * a walk from there would repeat the same steps and end with the same addresses, which are
 * then copied; if one differs, the walk simply goes on. Only complete walks (ended where the
 * CFI says there is no caller) are recorded; a step through a frame pointer, a scan or a signal
 * frame makes the frames below it unmatchable. Included by cfi_walk.bpf.h.
 */
#ifndef XPU_CFI_MEMO_BPF_H
#define XPU_CFI_MEMO_BPF_H

/* stack words a recorded walk may read (about 3 per 8 frames in PyTorch's launch stacks) */
#define CFI_MEMO_LOG 256

enum {
	CFI_MEMO_USES_BP = 1,		/* the step reads the bp it entered with */
	CFI_MEMO_SETS_BP = 2,		/* the step restores bp from the stack */
	CFI_MEMO_NEEDS_BP = 4,		/* a walk from this frame depends on the bp it has here */
};

struct cfi_memo {
	__u32 pid, tid, gen;
	__u32 n;			/* frames: ips[0..n) */
	__u32 nlog;			/* words in the log */
	__u32 reuse_from;		/* frames from here on were stepped plainly: matchable */
	__u64 ips[XPU_BPF_MAX_UFRAMES];
	__u64 sps[XPU_BPF_MAX_UFRAMES];
	__u64 bps[XPU_BPF_MAX_UFRAMES];
	__u16 first_log[XPU_BPF_MAX_UFRAMES];	/* log index of the frame's first word */
	__u8 flags[XPU_BPF_MAX_UFRAMES];
	__u64 log_addr[CFI_MEMO_LOG];
	__u64 log_val[CFI_MEMO_LOG];
	/*
	 * The check's copy of one stack page (the memo's, while it is checked): the words of a
	 * walk lie on a few pages, and a page read costs little more than a window's.
	 */
	__u64 page_base;		/* 0: none */
	__u8 page[4096];
};

/*
 * Two per slot and CPU: the last complete walk (cfi_scratch.memo_cur) and the one being
 * recorded, which replaces it when it completes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * XPU_BPF_SLOTS);
	__type(key, __u32);
	__type(value, struct cfi_memo);
} cfi_memo SEC(".maps");

static __always_inline struct cfi_memo *cfi_memo_get(struct cfi_scratch *s, __u32 slot, __u32 spare)
{
	__u32 idx = 2 * slot + ((s->memo_cur ^ spare) & 1);

	return bpf_map_lookup_elem(&cfi_memo, &idx);
}

/*
 * The per-frame parts below are global functions (verified once, on their own): inlined into
 * the walk's step at each of its reads, they multiplied the step's states and the verifier
 * took seconds per program.
 */

/* A stack word the walk read: logged while the walk is recorded. */
__attribute__((noinline)) int cfi_memo_log(__u32 slot, __u64 addr, __u64 val)
{
	struct cfi_scratch *s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	struct cfi_memo *rec;
	__u32 k;

	if (!s || !s->w.recording)
		return 0;
	k = s->w.nlog;
	s->w.nlog = k + 1;
	if (k >= CFI_MEMO_LOG)
		return 0;		/* too many: the walk will not be kept */
	rec = cfi_memo_get(s, slot, 1);
	if (!rec)
		return 0;
	barrier_var(k);
	rec->log_addr[k & (CFI_MEMO_LOG - 1)] = addr;
	rec->log_val[k & (CFI_MEMO_LOG - 1)] = val;
	return 0;
}

/* The registers of the frame the walk is at (w->n), before its step: recorded. */
__attribute__((noinline)) int cfi_memo_frame(__u32 slot)
{
	struct cfi_scratch *s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	struct cfi_memo *rec;
	struct cfi_walk *w;
	__u32 i;

	if (!s || !s->w.recording)
		return 0;
	w = &s->w;
	i = w->n;
	rec = cfi_memo_get(s, slot, 1);
	if (!rec || i >= XPU_BPF_MAX_UFRAMES)
		return 0;
	barrier_var(i);
	i &= XPU_BPF_MAX_UFRAMES - 1;
	rec->ips[i] = w->ip;
	rec->sps[i] = w->sp;
	rec->bps[i] = w->bp;
	rec->first_log[i] = w->nlog;
	rec->flags[i] = 0;
	return 0;
}

/* What the plain step of frame i did with bp. */
__attribute__((noinline)) int cfi_memo_bp(__u32 slot, __u32 i, __u32 flags)
{
	struct cfi_scratch *s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	struct cfi_memo *rec;

	if (!s || !s->w.recording || i >= XPU_BPF_MAX_UFRAMES)
		return 0;
	rec = cfi_memo_get(s, slot, 1);
	barrier_var(i);
	if (rec)
		rec->flags[i & (XPU_BPF_MAX_UFRAMES - 1)] = flags;
	return 0;
}

/*
 * Whether the walk, at its frame w->n, stands where the memo's frame k stood, k found by a
 * binary search of the memo's stack pointers (increasing from reuse_from on). k only grows
 * along a walk.
 */
__attribute__((noinline)) int cfi_memo_match(__u32 slot)
{
	struct cfi_scratch *s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	struct cfi_memo *m;
	struct cfi_walk *w;
	__u32 lo, hi, mid, j, k;

	if (!s || !(m = cfi_memo_get(s, slot, 0)))
		return false;
	w = &s->w;
	lo = m->reuse_from > w->memo_k ? m->reuse_from : w->memo_k;
	hi = m->n;
	if (hi > XPU_BPF_MAX_UFRAMES)
		return false;
	for (j = 0; j < 9 && lo < hi; j++) {	/* 2^9 > XPU_BPF_MAX_UFRAMES */
		mid = (lo + hi) / 2;
		if (m->sps[mid & (XPU_BPF_MAX_UFRAMES - 1)] < w->sp)
			lo = mid + 1;
		else
			hi = mid;
	}
	k = lo;
	if (k >= m->n || k >= XPU_BPF_MAX_UFRAMES)
		return false;
	w->memo_k = k;
	barrier_var(k);
	k &= (XPU_BPF_MAX_UFRAMES - 1);
	if (m->sps[k] != w->sp || m->ips[k] != w->ip)
		return false;
	if ((m->flags[k] & CFI_MEMO_NEEDS_BP) && m->bps[k] != w->bp)
		return false;
	w->memo_match = 1;
	return true;
}

#define CFI_MEMO_CHECK_RUN 16		/* logged words a callback of the check compares */

struct cfi_memo_check {
	__u32 slot;
	__u32 from, to;			/* log entries to compare */
	__u32 ok;
};

/*
 * Logged words [from + 16 j, from + 16 j + 16) read again and compared. Runs of 16 per
 * callback: a callback per word (with its two map lookups) cost as much as stepping a frame,
 * and the whole check open-coded took the verifier seconds per program.
 */
static long cfi_memo_check_run(__u32 j, struct cfi_memo_check *c)
{
	struct cfi_scratch *s = bpf_map_lookup_elem(&cfi_scratch, &c->slot);
	struct cfi_memo *m;
	__u64 v, addr;
	__u32 t, e;

	if (!s || !(m = cfi_memo_get(s, c->slot, 0))) {
		c->ok = 0;
		return 1;
	}
	for (t = 0; t < CFI_MEMO_CHECK_RUN; t++) {
		e = c->from + j * CFI_MEMO_CHECK_RUN + t;
		if (e >= c->to)
			return 1;
		barrier_var(e);
		e &= CFI_MEMO_LOG - 1;
		addr = m->log_addr[e];
		if (addr & 7) {
			/* not where a saved register or return address lies: through the window */
			if (cfi_read_word(s, addr, &v) || v != m->log_val[e]) {
				c->ok = 0;
				return 1;
			}
			continue;
		}
		if ((addr & ~4095ull) != m->page_base) {
			m->page_base = 0;
			if (bpf_probe_read_user(m->page, sizeof(m->page), (void *)(addr & ~4095ull))) {
				c->ok = 0;
				return 1;
			}
			m->page_base = addr & ~4095ull;
			s->w.reads++;
		}
		if (*(__u64 *)(m->page + (addr & 4088)) != m->log_val[e]) {
			c->ok = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * After a match: the memo's words from the matched frame on read again and compared, and
 * when all hold, its frames copied after the walk's own. Whether it took them.
 */
static __always_inline bool cfi_memo_reuse(struct cfi_scratch *s, __u32 slot)
{
	struct cfi_walk *w = &s->w;
	struct cfi_memo *m = cfi_memo_get(s, slot, 0);
	struct cfi_memo_check c = { .slot = slot, .ok = 1 };
	__u32 k = w->memo_k, n, at, j, e, off;

	if (!m || k >= XPU_BPF_MAX_UFRAMES || m->n > XPU_BPF_MAX_UFRAMES || m->nlog > CFI_MEMO_LOG)
		return false;
	n = m->n;
	at = w->n;
	if (k >= n || at >= XPU_BPF_MAX_UFRAMES || at + (n - k) > XPU_BPF_MAX_UFRAMES)
		return false;
	barrier_var(k);
	c.from = m->first_log[k & (XPU_BPF_MAX_UFRAMES - 1)];
	c.to = m->nlog;
	w->recording = 0;		/* these reads are the memo's, not a new walk's */
	m->page_base = 0;		/* a page copied for an earlier walk is stale */
	bpf_loop(CFI_MEMO_LOG / CFI_MEMO_CHECK_RUN, cfi_memo_check_run, &c, 0);
	if (!c.ok)
		return false;
	s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	m = s ? cfi_memo_get(s, slot, 0) : NULL;
	if (!m)
		return false;
	for (j = 0; j < XPU_BPF_MAX_UFRAMES / CFI_MEMO_CHUNK; j++) {
		off = j * CFI_MEMO_CHUNK;
		if (off >= n - k)
			break;
		e = k + off;
		off += at;
		barrier_var(e);
		barrier_var(off);
		/* whole chunks: the last may copy past the memo's frames, into ips_pad */
		bpf_probe_read_kernel(&s->ips[off & (XPU_BPF_MAX_UFRAMES - 1)],
				      CFI_MEMO_CHUNK * sizeof(__u64),
				      &m->ips[e & (XPU_BPF_MAX_UFRAMES - 1)]);
	}
	s->w.n = at + (n - k);
	s->w.outermost = 1;
	count_n(XPU_CNT_CFI_MEMO_FRAMES, n - k);
	return true;
}

struct cfi_memo_bp_pass {
	__u32 slot, n, from;
	__u8 need;
};

/* Frames from the outermost in: whether a walk from frame i depends on the bp it has there. */
static long cfi_memo_need_bp(__u32 j, struct cfi_memo_bp_pass *p)
{
	struct cfi_scratch *s = bpf_map_lookup_elem(&cfi_scratch, &p->slot);
	struct cfi_memo *rec;
	__u32 i;
	__u8 f;

	if (j >= p->n || p->n - 1 - j < p->from)
		return 1;
	i = p->n - 1 - j;
	if (i >= XPU_BPF_MAX_UFRAMES || !s || !(rec = cfi_memo_get(s, p->slot, 1)))
		return 1;
	barrier_var(i);
	i &= (XPU_BPF_MAX_UFRAMES - 1);
	f = rec->flags[i];
	p->need = (f & CFI_MEMO_USES_BP) || (!(f & CFI_MEMO_SETS_BP) && p->need);
	if (p->need)
		rec->flags[i] = f | CFI_MEMO_NEEDS_BP;
	return 0;
}

/* A complete walk that was recorded becomes the memo. */
static __always_inline void cfi_memo_keep(struct cfi_scratch *s, __u32 slot, __u32 tid)
{
	struct cfi_walk *w = &s->w;
	struct cfi_memo_bp_pass p = { .slot = slot };
	struct cfi_memo *rec;

	if (!w->recording || !w->outermost || w->nlog > CFI_MEMO_LOG || !w->n ||
	    w->n > XPU_BPF_MAX_UFRAMES || w->impure_to >= w->n)
		return;
	rec = cfi_memo_get(s, slot, 1);
	if (!rec)
		return;
	rec->pid = w->pid;
	rec->tid = tid;
	rec->gen = w->gen;
	rec->n = w->n;
	rec->nlog = w->nlog;
	rec->reuse_from = w->impure_to;
	p.n = w->n;
	p.from = w->impure_to;
	bpf_loop(XPU_BPF_MAX_UFRAMES, cfi_memo_need_bp, &p, 0);
	s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	if (s)
		s->memo_cur ^= 1;
}

/* At a walk's start: whether the memo is this thread's, in this generation. */
static __always_inline void cfi_memo_begin(struct cfi_scratch *s, __u32 slot, __u32 tid)
{
	struct cfi_walk *w = &s->w;
	struct cfi_memo *m = cfi_memo_get(s, slot, 0);

	w->slot = slot;
	w->recording = !w->fp_only;
	w->memo_on = m && m->n && m->pid == w->pid && m->tid == tid && m->gen == w->gen &&
		     !w->fp_only;
}

#endif
