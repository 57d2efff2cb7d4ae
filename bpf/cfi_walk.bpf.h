/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -g cfi: walks a thread's user stack with the unwind rows xpu-record built from each file's
 * .eh_frame (record/cfi_build.c, record/cfi_loader.c) and emits return addresses, as the
 * frame-pointer walk does. Per frame: the row from the per-CPU row cache, else the process's
 * mapping holding the address (a binary search in cfi_procs) and the file's row (through its
 * page index in its cfi_tables array); then the CFA, return address and rbp the row gives,
 * read through a window on the stack. A frame without a usable row takes a frame-pointer
 * step or a scan instead (cfi_fallback_step), and the reason is counted. Included by
 * xpu.bpf.c.
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

/*
 * The row cache: the row found for a return address, as of the generation of its process's
 * mappings (xpu_cfi_proc.gen, unique across processes: a mapping came or went, a table was
 * loaded, and the process's entries no longer match). The launches of a training loop walk
 * the same few thousand return addresses again and again; a hit costs a few loads where the
 * mapping and row searches cost up to a dozen helper calls. One cache for every CPU and
 * thread: per-CPU caches were warmed again on each CPU a launching thread moved to, and 1024
 * direct-mapped entries (all a per-CPU value could hold) evicted each other
 * (5-7% of frames missed on the H200's PyTorch loop, each miss a dozen helper calls).
 *
 * Entries are written and read without a lock, from any CPU and from NMI (a sample inside a
 * launch's walk), so a read may see one entry's first word with another's second. An entry is
 * val = gen << 32 | the row packed in 32 bits, and check = pc ^ cfi_mix(val): a hit needs
 * check ^ cfi_mix(val) == pc and val's gen == the walk's, which a torn pair of two different
 * vals passes with odds of 2^-64. Rows with no usable rule (XPU_CFI_NONE, no FDE) are cached
 * too: the frame goes straight to its fallback step.
 */
#ifndef CFI_CACHE_ENTRIES
#define CFI_CACHE_ENTRIES (1u << 16)
#endif
/* one load or store of the word, never split or repeated by the compiler */
#define CFI_ONCE(x) (*(volatile __u64 *)&(x))

struct cfi_cache_entry {
	__u64 check;
	__u64 val;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CFI_CACHE_ENTRIES);
	__type(key, __u32);
	__type(value, struct cfi_cache_entry);
} cfi_row_cache SEC(".maps");

/*
 * The walk's window on the stack: each read copies from the address up to its page's end, and
 * the frames above it (the walk goes up the stack) are served from the copy until one falls
 * outside it. A user read costs more than a frame's arithmetic and lookups together: reads to
 * the page's end took 4.7 reads a walk on the H200's PyTorch loop where 512-byte ones took 17,
 * and the launch's BPF time went down by a fifth.
 */
#ifndef CFI_WIN_BYTES
#define CFI_WIN_BYTES 4096
#endif

struct cfi_walk {
	__u64 ip, sp, bp;
	__u32 pid, n;
	__u32 gen;			/* the process's xpu_cfi_proc.gen when the walk began */
	__u32 cache_hits, reads;	/* counted once per walk, not per frame */
	__u8 exact;			/* ip is not a return address: look it up as is */
	__u8 fp_only;			/* the process has no tables loaded */
	__u8 outermost;			/* ended where the CFI says there is no caller */
	/*
	 * A frame was stepped past without its file's table (not loaded yet, no process entry,
	 * a rule the walk cannot run, a pc in no known mapping) or the frame bound was hit: the
	 * report's own walk of a stack copy can do better. A walk that ended on a frame whose
	 * file has no CFI row for it, and whose frame-pointer and scan guesses failed, is not
	 * one: the report has the same CFI and the same guesses (x264's hand-written assembly:
	 * 2,243 copies, 2.3 MB, for 1.1 points of complete stacks).
	 */
	__u8 copy_pays;
	/*
	 * The mapping of the last frame that had one (end 0: none yet): callers are mostly in
	 * the same file, so most frames skip the process lookup and the search of its mappings.
	 */
	struct xpu_cfi_map last;
};

struct cfi_scratch {
	/*
	 * The walk in progress. In the map and not on the stack: the verifier tracks values on
	 * the stack, and the walk's changing fields kept the loop's states from converging. On
	 * the stack, the sampler took 228k instructions to verify; here 21k.
	 */
	struct cfi_walk w;
	__u64 ips[XPU_BPF_MAX_UFRAMES];
	/* the window (CFI_WIN_BYTES) */
	__u64 win_base;
	__u32 win_len;
	__u8 win[CFI_WIN_BYTES];
};

/* one per XPU_BPF_SLOTS slot */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XPU_BPF_SLOTS);
	__type(key, __u32);
	__type(value, struct cfi_scratch);
} cfi_scratch SEC(".maps");

static __always_inline __u32 cfi_cache_index(__u64 pc, __u32 gen)
{
	/* Fibonacci hashing: return addresses of one file differ mostly in their low bits */
	return (__u32)(((pc ^ (__u64)gen << 40) * 0x9e3779b97f4a7c15ull) >> 48) &
	       (CFI_CACHE_ENTRIES - 1);
}

/* splitmix64's finalizer: every bit of v moves about half of the result's */
static __always_inline __u64 cfi_mix(__u64 v)
{
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
	return v ^ (v >> 31);
}

/* The row cached for pc in generation gen into *row; false if none (see cfi_row_cache). */
static __always_inline bool cfi_cache_get(__u64 pc, __u32 gen, struct xpu_cfi_row *row)
{
	__u32 k = cfi_cache_index(pc, gen);
	struct cfi_cache_entry *e = bpf_map_lookup_elem(&cfi_row_cache, &k);
	__u64 val, check;

	if (!e)
		return false;
	val = CFI_ONCE(e->val);
	check = CFI_ONCE(e->check);
	if ((__u32)(val >> 32) != gen || (check ^ cfi_mix(val)) != pc)
		return false;
	row->kind = (__u8)val;
	row->rbp_off8 = (__s8)(val >> 8);
	row->cfa_off = (__u16)(val >> 16);
	return true;
}

static __always_inline void cfi_cache_put(__u64 pc, __u32 gen, const struct xpu_cfi_row *row)
{
	__u32 k = cfi_cache_index(pc, gen);
	struct cfi_cache_entry *e = bpf_map_lookup_elem(&cfi_row_cache, &k);
	__u64 val = (__u64)gen << 32 | (__u32)row->cfa_off << 16 | (__u32)(__u8)row->rbp_off8 << 8 |
		    row->kind;

	if (!e)
		return;
	CFI_ONCE(e->val) = val;
	CFI_ONCE(e->check) = pc ^ cfi_mix(val);
}

#define CFI_MAP_STEPS 10		/* 2^10 > XPU_CFI_MAX_MAPS */
/*
 * Rows have distinct pcs (record/cfi_build.c), so the rows searched for one page of
 * 2^XPU_CFI_PAGE_SHIFT bytes are at most that many plus the two that bound it: 2^11 > 1026.
 * Unrolled steps are what the verifier pays for, per program.
 */
#define CFI_ROW_STEPS (XPU_CFI_PAGE_SHIFT + 1)

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
	if (hi - lo > 1)
		return NULL;	/* a malformed index: counted as no row */
	r = bpf_map_lookup_elem(rows, &lo);
	return r && r->pc <= pc ? r : NULL;
}

/*
 * The stack word at addr, through the window; -1 if unreadable. A refill stops at addr's page
 * end, so that it never fails on the unmapped page above a stack's top.
 */
static __always_inline int cfi_read(struct cfi_scratch *s, __u64 addr, __u64 *val)
{
	__u64 off, len;

	if (!s || !val)
		return -1;
	off = addr - s->win_base;
	if (s->win_len < 8 || addr < s->win_base || off > s->win_len - 8) {
		len = 4096 - (addr & 4095);
		if (len > CFI_WIN_BYTES)
			len = CFI_WIN_BYTES;
		if (len < 8)
			len = 8;	/* a misaligned word across pages: one read, as before */
		if (bpf_probe_read_user(s->win, len, (void *)addr)) {
			s->win_len = 0;
			return -1;
		}
		s->win_base = addr;
		s->win_len = len;
		s->w.reads++;
		off = 0;
	}
	if (off > CFI_WIN_BYTES - 8)
		return -1;
	*val = *(__u64 *)(s->win + off);
	return 0;
}

#define CFI_SCAN_WORDS 8
/* a frame-pointer step to a frame larger than this is not believed (as xpu-report's) */
#define CFI_FP_MAX_FRAME (1u << 20)

/*
 * Whether the code before ra ends with a call (call rel32, or through a register or memory
 * operand): what tells a return address from any other pointer into code. The same test as
 * xpu-report's offline walk; one read of the 8 code bytes before ra.
 */
static __always_inline bool cfi_after_call(__u64 ra)
{
	__u8 b[8];			/* b[8 - k] is the byte at ra - k */

	if (ra < 4096 || bpf_probe_read_user(b, sizeof(b), (void *)(ra - 8)))
		return false;
	return b[3] == 0xe8 || (b[6] == 0xff && (b[7] & 0xf8) == 0xd0) ||
	       (b[5] == 0xff && (b[6] & 0xf8) == 0x50) ||
	       (b[2] == 0xff && (b[3] == 0x15 || (b[3] & 0xf8) == 0x90));
}

/* Whether ra is a return address into a mapping of the process that has a table. */
static __always_inline bool cfi_is_return_address(__u32 pid, __u64 ra)
{
	const struct xpu_cfi_proc *proc = bpf_map_lookup_elem(&cfi_procs, &pid);
	const struct xpu_cfi_map *m = proc ? cfi_find_map(proc, ra - 1) : NULL;

	return m && m->table != XPU_CFI_TABLE_PENDING && cfi_after_call(ra);
}

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
	if (k >= CFI_SCAN_WORDS)
		return 1;
	/* keeps the bounded k: clang would index with an unchecked copy of it */
	barrier_var(k);
	if (cfi_is_return_address(c->pid, c->words[k & (CFI_SCAN_WORDS - 1)])) {
		c->found = k + 1;
		return 1;
	}
	return 0;
}

/*
 * Code without CFI whose frame pointer leads nowhere (a JIT trampoline such as CPython's
 * -X perf ones, a function built without unwind tables that keeps no frame): the first of the
 * next few stack words that is a return address (see cfi_is_return_address) is taken as the
 * caller's, as xpu-report's DWARF walk does. 1 when none is found.
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

/* How a frame without a usable row is stepped out of. */
enum cfi_fallback {
	CFI_FALLBACK_FP,		/* frame pointer (its file's table is not loaded yet) */
	CFI_FALLBACK_FP_OR_SCAN,	/* frame pointer, else a scan (code in no known file) */
	/*
	 * A frame pointer that leads to a return address, else a scan: a function of a known
	 * file without an FDE, or with a rule the walk does not evaluate. Such code often keeps no frame pointer either, and rbp is then any
	 * value the function or its callers left, which led to made-up callers.
	 */
	CFI_FALLBACK_CHECKED,
};

/* Steps out of a frame without a usable row; 1 ends the walk (counted). */
static __always_inline long cfi_fallback_step(struct cfi_scratch *s, struct cfi_walk *w,
					      enum cfi_fallback how)
{
	__u64 frame[2];

	if (w->bp && w->bp >= w->sp && !(w->bp & 7) && !cfi_read(s, w->bp, &frame[0]) &&
	    !cfi_read(s, w->bp + 8, &frame[1]) && frame[1] &&
	    (how != CFI_FALLBACK_CHECKED ||
	     (w->bp - w->sp <= CFI_FP_MAX_FRAME && cfi_is_return_address(w->pid, frame[1])))) {
		w->sp = w->bp + 16;
		w->bp = frame[0];
		w->ip = frame[1];
		return 0;
	}
	if (how != CFI_FALLBACK_FP && !cfi_scan_step(w))
		return 0;
	count(XPU_CNT_CFI_END_FP);
	return 1;
}

static __always_inline long cfi_fp_step(struct cfi_scratch *s, struct cfi_walk *w)
{
	return cfi_fallback_step(s, w, CFI_FALLBACK_FP);
}

/* x86-64 rt_sigframe at the handler's return: a ucontext, its mcontext 40 bytes in */
#define CFI_UC_RBP 120
#define CFI_UC_RSP 160
#define CFI_UC_RIP 168

static __always_inline long cfi_signal_step(struct cfi_scratch *s, struct cfi_walk *w)
{
	__u64 bp, sp, ip;

	if (cfi_read(s, w->sp + CFI_UC_RBP, &bp) || cfi_read(s, w->sp + CFI_UC_RSP, &sp) ||
	    cfi_read(s, w->sp + CFI_UC_RIP, &ip)) {
		count(XPU_CNT_CFI_END_READ);
		return 1;
	}
	w->bp = bp;
	w->sp = sp;
	w->ip = ip;
	w->exact = 1;
	return 0;
}

static long cfi_step(__u32 i, __u32 *slot)
{
	struct cfi_scratch *s = bpf_map_lookup_elem(&cfi_scratch, slot);
	const struct xpu_cfi_proc *proc;
	const struct xpu_cfi_map *m;
	struct xpu_cfi_row row = {}, *found;
	__u64 pc, cfa, ra, bp_at_rbp = 0, bp_saved = 0;
	struct cfi_walk *w;
	void *rows;

	if (!s)
		return 1;
	w = &s->w;
	if (i >= XPU_BPF_MAX_UFRAMES) {
		count(XPU_CNT_CFI_END_LIMIT);
		w->copy_pays = 1;
		return 1;
	}
	s->ips[i & (XPU_BPF_MAX_UFRAMES - 1)] = w->ip;
	w->n = i + 1;
#ifdef CFI_STEP_MEMO
	/*
	 * User space only (cupti/walk_shim.h): the walk has reached a frame of the thread's last
	 * walk whose stack words it checked unchanged, and took that walk's frames from here on.
	 */
	if (CFI_STEP_MEMO(s, w, i))
		return 1;
#endif
	pc = w->exact ? w->ip : w->ip - 1;
	w->exact = 0;
	if (w->fp_only) {
		w->copy_pays = 1;
		return cfi_fp_step(s, w);
	}
	if (cfi_cache_get(pc, w->gen, &row)) {
		w->cache_hits++;
	} else {
		if (pc < w->last.start || pc >= w->last.end) {
			proc = bpf_map_lookup_elem(&cfi_procs, &w->pid);
			m = proc ? cfi_find_map(proc, pc) : NULL;
			if (!m) {
				count(XPU_CNT_CFI_FP_NO_MAP);
				w->copy_pays = 1;
				return cfi_fallback_step(s, w, proc ? CFI_FALLBACK_FP_OR_SCAN :
							 CFI_FALLBACK_FP);
			}
			w->last = *m;
		}
		rows = bpf_map_lookup_elem(&cfi_tables, &w->last.table);
		if (!rows) {
			count(XPU_CNT_CFI_FP_NO_TABLE);
			w->copy_pays = 1;
			return cfi_fp_step(s, w);
		}
		found = cfi_find_row(rows, &w->last, pc - w->last.bias);
		if (found)
			row = *found;
		else
			row.kind = XPU_CFI_NONE;
		cfi_cache_put(pc, w->gen, &row);
	}
	if (row.kind == XPU_CFI_NONE) {
		count(XPU_CNT_CFI_FP_NO_ROW);
		return cfi_fallback_step(s, w, CFI_FALLBACK_CHECKED);
	}
#ifdef CFI_ROW_NOTE
	CFI_ROW_NOTE(w, i, &row);	/* user space only: what the memo above checks next time */
#endif
	switch (row.kind) {
	case XPU_CFI_RSP:
		cfa = w->sp + row.cfa_off;
		break;
	case XPU_CFI_RBP:
		cfa = w->bp + row.cfa_off;
		break;
	case XPU_CFI_RBP_DEREF:
		if (cfi_read(s, w->bp + (__s16)row.cfa_off, &cfa)) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		break;
	case XPU_CFI_RBP_DEREF_AT_RBP:
		if (cfi_read(s, w->bp + (__s16)row.cfa_off, &cfa) ||
		    cfi_read(s, w->bp + 8 * (__s64)row.rbp_off8, &bp_at_rbp)) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		break;
	case XPU_CFI_PLT:
		cfa = w->sp + row.cfa_off + ((w->ip & 15) >= (__u8)row.rbp_off8 ? 8 : 0);
		break;
	case XPU_CFI_SIGNAL:
		return cfi_signal_step(s, w);
	case XPU_CFI_END:
		count(XPU_CNT_CFI_END_OUTERMOST);
		w->outermost = 1;
		return 1;
	default:
		count(XPU_CNT_CFI_FP_UNSUPPORTED);
		w->copy_pays = 1;
		return cfi_fallback_step(s, w, CFI_FALLBACK_CHECKED);
	}
	if (cfa <= w->sp) {
		count(XPU_CNT_CFI_END_BAD_SP);
		return 1;
	}
	if (row.kind == XPU_CFI_RBP_DEREF_AT_RBP) {
		if (cfi_read(s, cfa - 8, &ra)) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		w->bp = bp_at_rbp;
	} else {
		/* the saved rbp first: it sits below the return address, as the window runs up */
		if (row.kind != XPU_CFI_PLT && row.rbp_off8 &&
		    cfi_read(s, cfa + 8 * (__s64)row.rbp_off8, &bp_saved)) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		if (cfi_read(s, cfa - 8, &ra)) {
			count(XPU_CNT_CFI_END_READ);
			return 1;
		}
		if (row.kind != XPU_CFI_PLT && row.rbp_off8)
			w->bp = bp_saved;
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
	const struct xpu_cfi_proc *proc;
	struct cfi_scratch *s;
	struct cfi_walk *w;
	__u32 n;

	if (!regs)
		return 0;
	s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	if (!s)
		return 0;
	w = &s->w;
	__builtin_memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->exact = 1;
	/* direct loads: regs is a trusted pointer, and a helper call per register cost more */
	w->ip = regs->ip;
	w->sp = regs->sp;
	w->bp = regs->bp;
	count(XPU_CNT_CFI_WALKS);
	proc = bpf_map_lookup_elem(&cfi_procs, &pid);
	if (proc) {
		w->gen = proc->gen;
	} else {
		count(XPU_CNT_CFI_NO_PROC);
		w->fp_only = 1;
	}
	s->win_len = 0;		/* the window of the last walk is another thread's stack */
	/* one more iteration than frames, so that a walk that fills the array is counted */
	bpf_loop(XPU_BPF_MAX_UFRAMES + 1, cfi_step, &slot, 0);
	s = bpf_map_lookup_elem(&cfi_scratch, &slot);
	if (!s)
		return 0;
	n = s->w.n;
	*uflags = (s->w.outermost ? XPU_EV_U_OUTERMOST : 0) |
		  (s->w.copy_pays ? XPU_EV_U_COPY_PAYS : 0);
	if (!n)
		return 0;
	if (n > XPU_BPF_MAX_UFRAMES)
		n = XPU_BPF_MAX_UFRAMES;
	bpf_probe_read_kernel(out, n * sizeof(__u64), s->ips);
	count_n(XPU_CNT_CFI_FRAMES, n);
	count_n(XPU_CNT_CFI_CACHE_HITS, s->w.cache_hits);
	count_n(XPU_CNT_CFI_STACK_READS, s->w.reads);
	return n;
}

#endif
