/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -g cfi: walks a thread's user stack with the unwind rows xpu-record built from each file's
 * .eh_frame (record/cfi_build.c, record/cfi_loader.c) and emits return addresses, as the
 * frame-pointer walk does. Per frame: the process's mapping holding the address (a binary
 * search in cfi_procs), the file's row (a binary search in its cfi_tables array), then the
 * CFA, return address and rbp the row gives. A frame without a usable row takes one
 * frame-pointer step instead, and the reason is counted. Included by xpu.bpf.c.
 */
#ifndef XPU_CFI_WALK_BPF_H
#define XPU_CFI_WALK_BPF_H

/* -g cfi: walk with the tables instead of bpf_get_stack's frame pointers */
const volatile bool cfi_walk = false;

/* Inner maps differ in size (BPF_F_INNER_MAP); user space writes them through mmap. */
struct cfi_rows_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct xpu_cfi_row));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XPU_CFI_MAX_TABLES);
	__type(key, __u32);
	__array(values, struct cfi_rows_map);
} cfi_tables SEC(".maps");

/* tgid -> its executable mappings that have a table; replaced whole on every change */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct xpu_cfi_proc);
} cfi_procs SEC(".maps");

struct cfi_scratch {
	__u64 ips[XPU_BPF_MAX_UFRAMES];
	/*
	 * The rows of the last two addresses looked up in this walk: recursion (an interpreter's
	 * eval loop, deep C++ templates) returns to the same few addresses again and again. Here
	 * and not in struct cfi_walk: values on the stack would multiply the verifier's states.
	 */
	__u64 memo_pc[2];
	struct xpu_cfi_row memo_row[2];
	__u32 memo_next;
};

/* one per XPU_BPF_SLOTS slot */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XPU_BPF_SLOTS);
	__type(key, __u32);
	__type(value, struct cfi_scratch);
} cfi_scratch SEC(".maps");

struct cfi_walk {
	__u64 ip, sp, bp;
	__u32 pid, slot, n;
	__u8 exact;			/* ip is not a return address: look it up as is */
	__u8 fp_only;			/* the process has no tables loaded */
	__u8 outermost;			/* ended where the CFI says there is no caller */
	/*
	 * The mapping of the last frame that had one (end 0: none yet): callers are mostly in
	 * the same file, so most frames skip the process lookup and the search of its mappings.
	 */
	struct xpu_cfi_map last;
};

#define CFI_MAP_STEPS 10		/* 2^10 > XPU_CFI_MAX_MAPS */
#define CFI_ROW_STEPS 25		/* 2^25 > XPU_CFI_MAX_ROWS */

static __always_inline const struct xpu_cfi_map *cfi_find_map(const struct xpu_cfi_proc *p,
								__u64 pc)
{
	__u32 lo = 0, hi = p->nr, mid, i;
	const struct xpu_cfi_map *m;

	if (hi > XPU_CFI_MAX_MAPS || !hi)
		return NULL;
	for (i = 0; i < CFI_MAP_STEPS && hi - lo > 1; i++) {
		mid = (lo + hi) / 2;
		if (p->maps[mid & (XPU_CFI_MAX_MAPS - 1)].start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	m = &p->maps[lo & (XPU_CFI_MAX_MAPS - 1)];
	return pc >= m->start && pc < m->end ? m : NULL;
}

/* Words k and k + 1 of the page index that follows the rows; ~0u where unreadable. */
static __always_inline void cfi_index_words(void *rows, const struct xpu_cfi_map *m, __u32 k,
					    __u32 *a, __u32 *b)
{
	__u32 slot = m->nrows + k / 2;
	__u32 *words = bpf_map_lookup_elem(rows, &slot);

	*a = words ? words[k & 1] : ~0u;
	if (words && !(k & 1)) {
		*b = words[1];
		return;
	}
	slot++;
	words = bpf_map_lookup_elem(rows, &slot);
	*b = words ? words[0] : ~0u;
}

/*
 * The row that holds at table pc: the page index gives the rows of pc's page (the one that
 * holds at its start up to the one that holds at the next page's), searched in a few steps.
 */
static __always_inline struct xpu_cfi_row *cfi_find_row(void *rows, const struct xpu_cfi_map *m,
							__u64 pc)
{
	__u32 lo, hi, mid, i, nr = m->nrows, np = m->npages;
	struct xpu_cfi_row *r;
	__u64 page;

	if (!nr || !np || pc > 0xffffffffull || (pc >> XPU_CFI_PAGE_SHIFT) < m->page0)
		return NULL;
	page = (pc >> XPU_CFI_PAGE_SHIFT) - m->page0;
	if (page + 1 >= np) {
		cfi_index_words(rows, m, np - 1, &lo, &hi);
		hi = nr;
	} else {
		cfi_index_words(rows, m, (__u32)page, &lo, &hi);
		hi++;
	}
	if (lo >= nr || hi > nr || lo >= hi)
		return NULL;
	for (i = 0; i < CFI_ROW_STEPS && hi - lo > 1; i++) {
		mid = (lo + hi) / 2;
		r = bpf_map_lookup_elem(rows, &mid);
		if (!r)
			return NULL;
		if (r->pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	r = bpf_map_lookup_elem(rows, &lo);
	return r && r->pc <= pc ? r : NULL;
}

#define CFI_SCAN_WORDS 8

struct cfi_scan {
	__u64 words[CFI_SCAN_WORDS];
	__u32 pid;
	__u32 found;			/* 1 + the index of the word taken, 0: none */
};

/*
 * One stack word of a scan. A bpf_loop callback rather than an unrolled loop: unrolled, the
 * verifier explored the mapping search once per word, and the scan alone made up 70% of
 * the walk's verification (2 of 2.6 s per program on a 2-CPU machine).
 */
static long cfi_scan_word(__u32 k, struct cfi_scan *c)
{
	const struct xpu_cfi_proc *proc = bpf_map_lookup_elem(&cfi_procs, &c->pid);
	const struct xpu_cfi_map *m;

	if (!proc || k >= CFI_SCAN_WORDS)
		return 1;
	/* keeps the bounded k: clang would index with an unchecked copy of it */
	barrier_var(k);
	m = cfi_find_map(proc, c->words[k & (CFI_SCAN_WORDS - 1)] - 1);
	if (m && m->table != XPU_CFI_TABLE_PENDING) {
		c->found = k + 1;
		return 1;
	}
	return 0;
}

/*
 * Code in no mapping with a table whose frame pointer leads nowhere (a JIT trampoline such as
 * CPython's -X perf ones, which keep neither CFI nor rbp): the first of the next few stack
 * words that is an address in a mapping with a table is taken as the return address, as
 * xpu-report's DWARF walk does. 1 when none is found.
 */
static __always_inline long cfi_scan_step(struct cfi_walk *w)
{
	struct cfi_scan c = { .pid = w->pid };
	__u32 k;

	if (bpf_probe_read_user(c.words, sizeof(c.words), (void *)w->sp))
		return 1;
	bpf_loop(CFI_SCAN_WORDS, cfi_scan_word, &c, 0);
	k = c.found;
	if (!k || k > CFI_SCAN_WORDS)
		return 1;
	count(XPU_CNT_CFI_SCAN);
	w->sp += 8 * k;
	w->ip = c.words[(k - 1) & (CFI_SCAN_WORDS - 1)];
	return 0;
}

/* One frame-pointer step, or a scan where there is no mapping; 1 ends the walk (counted). */
static __always_inline long cfi_fp_step_or_scan(struct cfi_walk *w, bool scan)
{
	__u64 frame[2];

	if (!w->bp || w->bp < w->sp || w->bp & 7 ||
	    bpf_probe_read_user(frame, sizeof(frame), (void *)w->bp) || !frame[1]) {
		if (scan && !cfi_scan_step(w))
			return 0;
		count(XPU_CNT_CFI_END_FP);
		return 1;
	}
	w->sp = w->bp + 16;
	w->bp = frame[0];
	w->ip = frame[1];
	return 0;
}

static __always_inline long cfi_fp_step(struct cfi_walk *w)
{
	return cfi_fp_step_or_scan(w, false);
}

/* x86-64 rt_sigframe at the handler's return: a ucontext, its mcontext 40 bytes in */
#define CFI_UC_RBP 120
#define CFI_UC_RSP 160
#define CFI_UC_RIP 168

static __always_inline long cfi_signal_step(struct cfi_walk *w)
{
	__u64 bp, sp, ip;

	if (bpf_probe_read_user(&bp, 8, (void *)(w->sp + CFI_UC_RBP)) ||
	    bpf_probe_read_user(&sp, 8, (void *)(w->sp + CFI_UC_RSP)) ||
	    bpf_probe_read_user(&ip, 8, (void *)(w->sp + CFI_UC_RIP))) {
		count(XPU_CNT_CFI_END_READ);
		return 1;
	}
	w->bp = bp;
	w->sp = sp;
	w->ip = ip;
	w->exact = 1;
	return 0;
}

static long cfi_step(__u32 i, struct cfi_walk *w)
{
	__u32 key = w->slot;
	struct cfi_scratch *s = bpf_map_lookup_elem(&cfi_scratch, &key);
	const struct xpu_cfi_proc *proc;
	const struct xpu_cfi_map *m;
	struct xpu_cfi_row row, *found;
	__u64 pc, cfa, ra, bp_at_rbp = 0;
	void *rows;

	if (!s)
		return 1;
	if (i >= XPU_BPF_MAX_UFRAMES) {
		count(XPU_CNT_CFI_END_LIMIT);
		return 1;
	}
	s->ips[i & (XPU_BPF_MAX_UFRAMES - 1)] = w->ip;
	w->n = i + 1;
	pc = w->exact ? w->ip : w->ip - 1;
	w->exact = 0;
	if (w->fp_only)
		return cfi_fp_step(w);
	if (pc < w->last.start || pc >= w->last.end) {
		proc = bpf_map_lookup_elem(&cfi_procs, &w->pid);
		m = proc ? cfi_find_map(proc, pc) : NULL;
		if (!m) {
			count(XPU_CNT_CFI_FP_NO_MAP);
			return cfi_fp_step_or_scan(w, proc != NULL);
		}
		w->last = *m;
	}
	if (pc == s->memo_pc[0]) {
		row = s->memo_row[0];
	} else if (pc == s->memo_pc[1]) {
		row = s->memo_row[1];
	} else {
		rows = bpf_map_lookup_elem(&cfi_tables, &w->last.table);
		if (!rows) {
			count(XPU_CNT_CFI_FP_NO_TABLE);
			return cfi_fp_step(w);
		}
		found = cfi_find_row(rows, &w->last, pc - w->last.bias);
		if (!found || found->kind == XPU_CFI_NONE) {
			count(XPU_CNT_CFI_FP_NO_ROW);
			return cfi_fp_step(w);
		}
		row = *found;
		s->memo_next ^= 1;
		s->memo_pc[s->memo_next & 1] = pc;
		s->memo_row[s->memo_next & 1] = row;
	}
	switch (row.kind) {
	case XPU_CFI_RSP:
		cfa = w->sp + row.cfa_off;
		break;
	case XPU_CFI_RBP:
		cfa = w->bp + row.cfa_off;
		break;
	case XPU_CFI_RBP_DEREF:
		if (bpf_probe_read_user(&cfa, 8, (void *)(w->bp + (__s16)row.cfa_off))) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		break;
	case XPU_CFI_RBP_DEREF_AT_RBP:
		if (bpf_probe_read_user(&cfa, 8, (void *)(w->bp + (__s16)row.cfa_off)) ||
		    bpf_probe_read_user(&bp_at_rbp, 8, (void *)(w->bp + 8 * (__s64)row.rbp_off8))) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		break;
	case XPU_CFI_PLT:
		cfa = w->sp + row.cfa_off + ((w->ip & 15) >= (__u8)row.rbp_off8 ? 8 : 0);
		break;
	case XPU_CFI_SIGNAL:
		return cfi_signal_step(w);
	case XPU_CFI_END:
		count(XPU_CNT_CFI_END_OUTERMOST);
		w->outermost = 1;
		return 1;
	default:
		count(XPU_CNT_CFI_FP_UNSUPPORTED);
		return cfi_fp_step(w);
	}
	if (cfa <= w->sp) {
		count(XPU_CNT_CFI_END_BAD_SP);
		return 1;
	}
	if (row.kind == XPU_CFI_RBP_DEREF_AT_RBP) {
		if (bpf_probe_read_user(&ra, 8, (void *)(cfa - 8))) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		w->bp = bp_at_rbp;
	} else if (row.kind != XPU_CFI_PLT && row.rbp_off8 == -2) {
		/* rbp saved just below the return address, as every push %rbp prologue does */
		__u64 pair[2];

		if (bpf_probe_read_user(pair, sizeof(pair), (void *)(cfa - 16))) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		w->bp = pair[0];
		ra = pair[1];
	} else {
		if (bpf_probe_read_user(&ra, 8, (void *)(cfa - 8))) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		if (row.kind != XPU_CFI_PLT && row.rbp_off8 &&
		    bpf_probe_read_user(&w->bp, 8, (void *)(cfa + 8 * (__s64)row.rbp_off8))) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
	}
	if (!ra) {
		count(XPU_CNT_CFI_END_OUTERMOST);
		w->outermost = 1;
		return 1;
	}
	w->sp = cfa;
	w->ip = ra;
	return 0;
}

/*
 * Walks the current thread's user stack from its saved user registers into out (room for
 * XPU_BPF_MAX_UFRAMES addresses), leaf first. Returns the number of addresses, 0 if none;
 * *uflags says whether the walk reached the outermost frame.
 */
static __always_inline __u32 cfi_walk_stack(__u32 slot, __u32 pid, __u64 *out, __u32 *uflags)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct cfi_walk w = { .slot = slot, .pid = pid, .exact = 1 };
	struct cfi_scratch *s;
	__u32 n;

	if (!regs)
		return 0;
	w.ip = BPF_CORE_READ(regs, ip);
	w.sp = BPF_CORE_READ(regs, sp);
	w.bp = BPF_CORE_READ(regs, bp);
	count(XPU_CNT_CFI_WALKS);
	if (!bpf_map_lookup_elem(&cfi_procs, &pid)) {
		count(XPU_CNT_CFI_NO_PROC);
		w.fp_only = 1;
	}
	s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	if (!s)
		return 0;
	s->memo_pc[0] = s->memo_pc[1] = ~0ull;	/* no user address */
	/* one more iteration than frames, so that a walk that fills the array is counted */
	bpf_loop(XPU_BPF_MAX_UFRAMES + 1, cfi_step, &w, 0);
	s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	n = w.n;
	*uflags = w.outermost ? XPU_EV_U_OUTERMOST : 0;
	if (!s || !n)
		return 0;
	if (n > XPU_BPF_MAX_UFRAMES)
		n = XPU_BPF_MAX_UFRAMES;
	bpf_probe_read_kernel(out, n * sizeof(__u64), s->ips);
	count_n(XPU_CNT_CFI_FRAMES, n);
	return n;
}

#endif
