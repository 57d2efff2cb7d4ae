// SPDX-License-Identifier: MIT
/*
 * The in-process launch walk (inproc_walk.h): bpf/cfi_walk.bpf.h and bpf/py_walk.bpf.h,
 * included unchanged after walk_shim.h, run in the launching thread over the tables the
 * recorder shares (common/walk_share.h). This file gives the walkers their maps: the share's
 * process entry and table arena (validated on every use: the other side may be garbage), a
 * process-wide row cache, and one slot per thread (scratch, counters, stack bounds).
 *
 * What a read may touch decides what the walk may do. The native walk reads only the
 * thread's own stack above the entry's sp; anything else (a frame pointer into the heap, the
 * code bytes a return-address check needs) is not attempted: the walk is marked in doubt and
 * the launch goes to the marker, where BPF reads what it must with faults handled. A walk
 * the BPF program would have finished differently is never sent.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "inproc_walk.h"
#include "walk_share.h"
#include "walk_shim.h"
#include "py_walk.bpf.h"
#include "cfi_walk.bpf.h"

/* the probed marker (callbacks.c): the walk starts at its first instruction, as the uprobe */
void xpu_cupti_api_enter(uint32_t corr_id, uint32_t cbid, uint32_t domain);

#define INPROC_THREADS 1024		/* threads that walk in process at once */
#define INPROC_AG_SLOTS 4096		/* a power of two (struct xpu_cupti_inproc) */
/* the walk's scratch slot, as the launch uprobe's (XPU_BPF_SLOTS) */
#define INPROC_SLOT 1
/* the end of x86-64's user half, less the page the kernel never maps */
#define INPROC_USER_END 0x7ffffffff000ull
/*
 * Thread-state and code-object offsets of a layout are read at; every CPython so far keeps
 * them within a few hundred bytes (record/python/py_layout.c). Larger is taken as garbage.
 */
#define INPROC_PY_MAX_OFF 1024

enum inproc_phase {
	INPROC_PHASE_NATIVE,
	INPROC_PHASE_PYTHON,
};

/* what the cfi_tables lookup returns: one table's slots in the arena */
struct inproc_rows {
	const struct xpu_cfi_row *slots;
	__u32 nslots;
};

/* the share as validated by inproc_walk__set_share; never changed once published */
struct inproc_share {
	const struct xpu_share_arena *arena;
	uint64_t arena_limit;		/* bytes from the arena's start that may be read */
	const struct xpu_share_proc *proc;
};

/*
 * The walk memo. A training loop launches from a few call chains again and again, and a
 * launch's outer frames (the interpreter's, the framework's dispatch) are where the last
 * launch's were: the same return addresses at the same stack addresses, the same saved words.
 * Each thread keeps its last exact native walk: every frame's registers as the walk had them
 * and the row it stepped by. A new walk that reaches one of those frames with the same
 * registers checks, step by step to the end, the stack words each step read (its return
 * address, the saved rbp, a realigned frame's CFA) against the frames that followed. All
 * equal, the rest of the walk is the last one's: the same rows (those of the same pcs in the
 * same generation of the same share) applied to the same registers and the same words. Its
 * frames are copied and the table lookups skipped. One differs: the walk goes on from where
 * it was, as it would have without the memo, which a later frame may still match.
 */
struct memo_frame {
	uint64_t ip, sp, bp;		/* at the step's start */
	uint8_t kind;			/* the row's (enum xpu_cfi_kind) */
	int8_t rbp_off8;
	uint16_t cfa_off;
	uint32_t pad;
};

struct walk_memo {
	uint32_t n;			/* frames; 0: none */
	uint32_t gen;			/* the walk's generation (cfi_walk.gen, mixed with seq) */
	const struct inproc_share *sh;
	struct memo_frame f[XPU_BPF_MAX_UFRAMES];
};

/*
 * inproc_thread.noted once a step's row is of a kind memo_check() cannot check (a signal
 * frame, a rule the walk cannot run): this walk does not become the memo
 */
#define MEMO_POISON UINT32_MAX

struct inproc_thread {
	uint32_t owner;			/* the tid that claimed the slot; 0: free (CAS) */
	uint32_t tid;
	uint64_t fsbase;		/* pthread_self(): the thread pointer */
	uint64_t stack_lo, stack_hi;	/* hi 0: unknown */
	bool stack_known;
	/*
	 * Running totals, written by the owner only, read by inproc_walk__stats from the flusher
	 * (relaxed atomics). Kept when the slot changes hands, so the sums never go back.
	 */
	uint64_t cnt[XPU_CNT_NR];
	uint64_t inproc[XPU_INPROC_NR];
	/* the walk in progress: its counters, kept only when the launch is taken here */
	uint64_t delta[XPU_CNT_NR];
	/* delta's entries this walk touched: a walk touches a few, and the lines it leaves alone
	 * stay out of its cache footprint (cleared, added and taken back by this mask) */
	uint64_t delta_mask;
	bool delta_kept;		/* delta went into cnt: a queue-full fallback takes it back */
	int doubt;			/* XPU_INPROC_FB_*, 0: none */
	int phase;			/* enum inproc_phase */
	uint64_t read_lo;		/* the native walk reads [read_lo, stack_hi) */
	uint32_t flags;			/* the share's flags at the walk's start */
	uint32_t cpu;
	uint32_t scratch_lookups;
	uint32_t gen_mix;
	const struct inproc_share *sh;
	struct xpu_ev_pystack *py_out;
	uint32_t py_out_bytes;
	struct inproc_rows rows;
	struct xpu_py_layout py_layout;	/* the share's, copied and checked */
	struct py_thread pt;
	struct task_struct task;
	/* autograd: the TLS reference last checked against its module, and its block */
	uint64_t ag_modid, ag_off, ag_dtv, ag_block;
	int ag_ok;			/* 1 fits the module's TLS, -1 does not, 0 unchecked */
	struct cfi_scratch cfi;
	struct py_walk_state py;
	/* the memo: memo[memo_cur] the last walk's, the other one filled by this walk's notes */
	struct walk_memo memo[2];
	uint32_t memo_cur;
	uint32_t noted;			/* steps noted in order; MEMO_POISON: one the memo cannot check */
	uint32_t memo_pos;		/* memo frames below this one cannot match any more */
	uint32_t memo_at, memo_from;	/* the hit: this walk's step, the memo's frame; at ~0: none */
	uint64_t memo_frames;		/* frames the last taken walk copied from the memo */
} __attribute__((aligned(64)));

/* initial-exec: a walk touches its slot from every helper, and a dynamic TLS access is a call */
static __thread struct inproc_thread *cur __attribute__((tls_model("initial-exec")));

static struct inproc_thread *pool;
static uint32_t pool_used;		/* slots ever claimed: what stats sums */
static struct cfi_cache_entry *row_cache;
static struct xpu_ag_inproc_slot *ag_slots;
static const struct inproc_share *share_cur;
static pthread_key_t thread_key;
static bool key_ok;
static __u32 self_pid;
/* what no slot could count: threads past INPROC_THREADS, launches before init */
static uint64_t global_inproc[XPU_INPROC_NR];
typedef void *(*gil_this_thread_fn)(void);
typedef int (*py_initialized_fn)(void);
static gil_this_thread_fn gil_this_thread;
static py_initialized_fn py_initialized;
static bool memo_on = true;		/* XPU_CUPTI_WALK_MEMO=0: off, for diagnosis */

static inline void add_relaxed(uint64_t *p, uint64_t n)
{
	/* one writer: a load and a store, no locked instruction */
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* ---- the shim's helpers (walk_shim.h) ------------------------------------------------- */

/*
 * A copy of the thread's own stack: under ASan the callers' frames hold poisoned redzones
 * that memcpy's interceptor would report, though the bytes are ours to read.
 */
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address, noinline)) static void stack_copy(void *dst, const void *src,
								     __u32 size)
{
	volatile const unsigned char *s = src;
	unsigned char *d = dst;
	__u32 i;

	for (i = 0; i < size; i++)
		d[i] = s[i];
}
#else
#define stack_copy(dst, src, size) memcpy((dst), (src), (size))
#endif

static __always_inline long shim_probe_read_user(void *dst, __u32 size, const void *src)
{
	struct inproc_thread *t = cur;
	uint64_t a = (uint64_t)(uintptr_t)src;

	if (t->doubt)
		goto fail;
	if (t->phase == INPROC_PHASE_NATIVE) {
		if (a >= t->read_lo && a < t->stack_hi && size <= t->stack_hi - a) {
			stack_copy(dst, src, size);
			return 0;
		}
		/* not attempted: BPF reads it (a fault there is a failed read, here a crash) */
		t->doubt = cfi_find_map(&t->sh->proc->cfi, a) ? XPU_INPROC_FB_CODE_READ :
								 XPU_INPROC_FB_OFF_STACK;
		goto fail;
	}
	/*
	 * The Python walk: the exception to "only the stack". It reads the calling thread's own
	 * interpreter state, which stays alive while the thread runs below it: its PyThreadState
	 * (from PyGILState_GetThisThreadState, checked by the walk's own id test), the frames of
	 * its live chain (the data-stack chunk holding them, or the C stack for 3.12+ entry
	 * frames; a window never leaves the frame's page) and their code objects. The offsets come
	 * from a layout checked in py_procs_lookup. Only the range is checked here: an address in
	 * user space, not wrapping. A thread-state scan, which would read other threads' states,
	 * never runs (count() puts the walk in doubt before its first read).
	 */
	if (a >= 4096 && a < INPROC_USER_END && size <= INPROC_USER_END - a) {
		memcpy(dst, src, size);
		return 0;
	}
fail:
	memset(dst, 0, size);
	return -EFAULT;
}

static __always_inline void doubt(struct inproc_thread *t, int why)
{
	if (!t->doubt)
		t->doubt = why;
}

_Static_assert(XPU_CNT_NR <= 64, "inproc_thread.delta_mask holds a bit per counter");

static __always_inline void count(__u32 idx)
{
	struct inproc_thread *t = cur;

	if (idx >= XPU_CNT_NR)
		return;
	t->delta[idx]++;
	t->delta_mask |= 1ull << idx;
	/* the signals of a walk BPF may finish otherwise; later reads fail, so it ends soon */
	switch (idx) {
	case XPU_CNT_CFI_FP_NO_TABLE:
		doubt(t, XPU_INPROC_FB_NO_TABLE);
		break;
	case XPU_CNT_CFI_NO_PROC:
		doubt(t, XPU_INPROC_FB_NO_SHARE);
		break;
	case XPU_CNT_PY_THREAD_SCANS:
	case XPU_CNT_RB_LOST:
		doubt(t, XPU_INPROC_FB_PYTHON);
		break;
	}
}

static __always_inline void count_n(__u32 idx, __u64 n)
{
	if (idx < XPU_CNT_NR) {
		cur->delta[idx] += n;
		cur->delta_mask |= 1ull << idx;
	}
}

/* cfi_tables' inner map: only a table the arena holds whole, ready, within its bounds */
static __always_inline void *tables_lookup(struct inproc_thread *t, __u32 k)
{
	const struct inproc_share *sh = t->sh;
	const struct xpu_share_table *e;
	uint64_t off, slots;

	if (k >= XPU_CFI_MAX_TABLES)
		return NULL;
	e = &sh->arena->tables[k];
	if (__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) != 1)
		return NULL;
	off = __atomic_load_n(&e->off, __ATOMIC_RELAXED);
	slots = __atomic_load_n(&e->slots, __ATOMIC_RELAXED);
	if ((off & 7) || off < XPU_SHARE_ARENA_DATA || off > sh->arena_limit ||
	    slots > (sh->arena_limit - off) / sizeof(struct xpu_cfi_row))
		return NULL;
	t->rows.slots = (const struct xpu_cfi_row *)((const char *)sh->arena + off);
	t->rows.nslots = (__u32)slots;
	return &t->rows;
}

/* the share's CPython layout, copied (the recorder may rewrite it) and checked */
static __always_inline void *py_procs_lookup(struct inproc_thread *t)
{
	struct xpu_py_layout *l = &t->py_layout;

	memcpy(l, &t->sh->proc->py, sizeof(*l));
	if (l->model < XPU_PY_MODEL_310 || l->model > XPU_PY_MODEL_313 ||
	    l->frame_read > XPU_PY_FRAME_READ_MAX || l->ts_id > INPROC_PY_MAX_OFF ||
	    l->ts_frame > INPROC_PY_MAX_OFF || l->cframe_frame > INPROC_PY_MAX_OFF ||
	    l->co_firstlineno > INPROC_PY_MAX_OFF || l->co_filename > INPROC_PY_MAX_OFF) {
		doubt(t, XPU_INPROC_FB_PYTHON);
		return NULL;
	}
	return l;
}

static __always_inline void *shim_map_lookup(const void *map, const void *key)
{
	struct inproc_thread *t = cur;
	__u32 k;

	memcpy(&k, key, sizeof(k));
	if (map == (const void *)&t->rows)
		return k < t->rows.nslots ? (void *)&t->rows.slots[k] : NULL;
	if (map == (const void *)&cfi_row_cache)
		return k < CFI_CACHE_ENTRIES ? &row_cache[k] : NULL;
	if (map == (const void *)&cfi_scratch) {
		/*
		 * The second lookup is the walk's first step, right after cfi_walk_stack() set
		 * w.gen from the share: the row cache's generation is made the seqlock's too, so
		 * rows a walk found in a half-written share (it is then discarded) are never
		 * found by a walk of a later, whole one.
		 */
		if (++t->scratch_lookups == 2)
			t->cfi.w.gen ^= t->gen_mix;
		return &t->cfi;
	}
	if (map == (const void *)&cfi_tables)
		return tables_lookup(t, k);
	if (map == (const void *)&cfi_procs)
		return k == self_pid && (t->flags & XPU_SHARE_CFI) ?
			       (void *)&t->sh->proc->cfi : NULL;
	if (map == (const void *)&py_scratch)
		return &t->py;
	if (map == (const void *)&py_threads)
		return k == t->tid ? &t->pt : NULL;
	if (map == (const void *)&py_procs)
		return k == self_pid && (t->flags & XPU_SHARE_PY) ? py_procs_lookup(t) : NULL;
	return NULL;
}

static __always_inline long shim_map_update(const void *map, const void *key, const void *value,
					    __u64 flags)
{
	/* py_threads after a scan: the walk is in doubt already, and the slot holds the state */
	return map == (const void *)&py_threads ? 0 : -EINVAL;
}

static __always_inline long shim_ringbuf_output(const void *map, const void *data, __u64 size,
						__u64 flags)
{
	struct inproc_thread *t = cur;

	if (map != (const void *)&events || !t->py_out || size > sizeof(*t->py_out))
		return -E2BIG;
	memcpy(t->py_out, data, size);
	t->py_out_bytes = (uint32_t)size;
	return 0;
}

static __always_inline struct task_struct *shim_current_task(void)
{
	return &cur->task;
}

static __always_inline __u32 shim_cpu(void)
{
	return cur->cpu;
}

static __always_inline __u64 shim_ktime_get_ns(void)
{
	struct timespec ts;

	/* the vDSO's CLOCK_MONOTONIC: bpf_ktime_get_ns()'s clock */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* ---- the walk memo (struct walk_memo) -------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address, noinline))
#endif
static uint64_t stack_word(uint64_t addr)
{
	uint64_t v;

	stack_copy(&v, (const void *)(uintptr_t)addr, sizeof(v));
	return v;
}

/* a word of the stack the walk may read (shim_probe_read_user's native bounds) */
static __always_inline bool memo_read(const struct inproc_thread *t, uint64_t addr, uint64_t *v)
{
	if (addr < t->read_lo || addr >= t->stack_hi || t->stack_hi - addr < 8)
		return false;
	*v = stack_word(addr);
	return true;
}

/*
 * Checks the memo's steps from frame j on against the stack as it is now: the words each step
 * of cfi_step() (bpf/cfi_walk.bpf.h) read for its row's kind, where it read them, must give
 * the next frame's registers, and the last step must end the walk as it did (its row's END,
 * or a zero return address). Returns m->n when all hold, else the step that does not.
 */
static uint32_t memo_check(const struct inproc_thread *t, const struct walk_memo *m, uint32_t j)
{
	uint32_t k;

	for (k = j; k < m->n; k++) {
		const struct memo_frame *f = &m->f[k];
		const struct memo_frame *nx = k + 1 < m->n ? &m->f[k + 1] : NULL;
		uint64_t cfa, ra, bp = f->bp, v;

		switch (f->kind) {
		case XPU_CFI_RSP:
			cfa = f->sp + f->cfa_off;
			break;
		case XPU_CFI_RBP:
			cfa = f->bp + f->cfa_off;
			break;
		case XPU_CFI_PLT:
			cfa = f->sp + f->cfa_off + ((f->ip & 15) >= (uint8_t)f->rbp_off8 ? 8 : 0);
			break;
		case XPU_CFI_RBP_DEREF:
		case XPU_CFI_RBP_DEREF_AT_RBP:
			if (!memo_read(t, f->bp + (int16_t)f->cfa_off, &cfa))
				return k;
			if (f->kind == XPU_CFI_RBP_DEREF_AT_RBP &&
			    !memo_read(t, f->bp + 8 * (int64_t)f->rbp_off8, &bp))
				return k;
			break;
		case XPU_CFI_END:
			return nx ? k : m->n;
		default:
			return k;
		}
		if (cfa <= f->sp || (nx && cfa != nx->sp))
			return k;
		if (f->kind != XPU_CFI_RBP_DEREF_AT_RBP && f->kind != XPU_CFI_PLT && f->rbp_off8) {
			if (!memo_read(t, cfa + 8 * (int64_t)f->rbp_off8, &v))
				return k;
			bp = v;
		}
		if (!memo_read(t, cfa - 8, &ra))
			return k;
		if (nx ? (!ra || ra != nx->ip || bp != nx->bp) : ra != 0)
			return k;
	}
	return k;
}

static __always_inline void shim_cfi_note(const struct cfi_walk *w, __u32 i,
					  const struct xpu_cfi_row *row)
{
	struct inproc_thread *t = cur;
	struct memo_frame *f;

	if (i != t->noted || i >= XPU_BPF_MAX_UFRAMES)
		return;
	switch (row->kind) {
	case XPU_CFI_RSP:
	case XPU_CFI_RBP:
	case XPU_CFI_PLT:
	case XPU_CFI_RBP_DEREF:
	case XPU_CFI_RBP_DEREF_AT_RBP:
	case XPU_CFI_END:
		break;
	default:
		t->noted = MEMO_POISON;		/* a signal frame, a rule the walk cannot run */
		return;
	}
	f = &t->memo[t->memo_cur ^ 1].f[i];
	f->ip = w->ip;
	f->sp = w->sp;
	f->bp = w->bp;
	f->kind = row->kind;
	f->rbp_off8 = row->rbp_off8;
	f->cfa_off = row->cfa_off;
	t->noted = i + 1;
}

static __always_inline int shim_cfi_memo(struct cfi_scratch *s, struct cfi_walk *w, __u32 i)
{
	struct inproc_thread *t = cur;
	const struct walk_memo *m = &t->memo[t->memo_cur];
	uint32_t j = t->memo_pos, k;

	if (!memo_on || !m->n || m->gen != w->gen || m->sh != t->sh || w->fp_only)
		return 0;
	/* both walks go up the stack, sp rising: the candidate only moves up */
	while (j < m->n && m->f[j].sp < w->sp)
		j++;
	t->memo_pos = j;
	if (j >= m->n || m->f[j].sp != w->sp || m->f[j].ip != w->ip || m->f[j].bp != w->bp ||
	    (i == 0) != (j == 0) || i + (m->n - j) > XPU_BPF_MAX_UFRAMES)
		return 0;
	k = memo_check(t, m, j);
	if (k < m->n) {
		/* any frame up to k would check step k again, and fail there */
		t->memo_pos = k + 1;
		return 0;
	}
	for (k = j + 1; k < m->n; k++)
		s->ips[(i + k - j) & (XPU_BPF_MAX_UFRAMES - 1)] = m->f[k].ip;
	w->n = i + (m->n - j);
	w->outermost = 1;
	count(XPU_CNT_CFI_END_OUTERMOST);
	t->memo_at = i;
	t->memo_from = j;
	return 1;
}

/* After an exact walk: it becomes the memo, its noted frames and those it took from the memo. */
static void memo_keep(struct inproc_thread *t, uint32_t n)
{
	struct walk_memo *next = &t->memo[t->memo_cur ^ 1];
	struct walk_memo *last = &t->memo[t->memo_cur];

	t->memo_frames = 0;
	if (!memo_on)
		return;
	if (t->memo_at != UINT32_MAX) {
		uint32_t from = t->memo_from, at = t->memo_at;

		/* counted whether or not this walk can become the memo: its frames came from it */
		t->memo_frames = last->n - from;
		if (t->noted != at || at + (last->n - from) != n)
			return;
		/*
		 * The frames taken stay where they are when this walk reached them at the same
		 * depth (a loop's launches from one place: at = from = 0): only the frames noted
		 * below them move, so a walk copies what changed, not the whole memo each time
		 * (cache lines a framework's work has evicted cost more than the walk's steps).
		 */
		if (at == from) {
			memcpy(last->f, next->f, at * sizeof(last->f[0]));
			last->gen = t->cfi.w.gen;
			last->sh = t->sh;
			return;
		}
		memcpy(&next->f[at], &last->f[from], (last->n - from) * sizeof(next->f[0]));
	} else if (t->noted != n) {
		return;
	}
	next->n = n;
	next->gen = t->cfi.w.gen;
	next->sh = t->sh;
	t->memo_cur ^= 1;
}

/* ---- per-thread slots --------------------------------------------------------------- */

static void thread_release(void *p)
{
	struct inproc_thread *t = p;

	if (cur == t)
		cur = NULL;
	__atomic_store_n(&t->owner, 0, __ATOMIC_RELEASE);
}

static void thread_stack(struct inproc_thread *t)
{
	pthread_attr_t attr;
	size_t size = 0;
	void *lo = NULL;

	t->stack_known = true;
	t->stack_lo = t->stack_hi = 0;
	/* the main thread's is read from /proc/self/maps: once per thread */
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &lo, &size) && lo && size &&
	    (uint64_t)(uintptr_t)lo + size > (uint64_t)(uintptr_t)lo) {
		t->stack_lo = (uint64_t)(uintptr_t)lo;
		t->stack_hi = t->stack_lo + size;
	}
	pthread_attr_destroy(&attr);
}

static struct inproc_thread *thread_claim(void)
{
	uint32_t tid = (uint32_t)gettid(), i, k, used;
	struct inproc_thread *t;

	if (!pool || !key_ok)
		return NULL;
	for (i = 0; i < INPROC_THREADS; i++) {
		uint32_t zero = 0;

		k = (tid + i) & (INPROC_THREADS - 1);
		t = &pool[k];
		if (__atomic_load_n(&t->owner, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&t->owner, &zero, tid, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		used = __atomic_load_n(&pool_used, __ATOMIC_RELAXED);
		while (used < k + 1 &&
		       !__atomic_compare_exchange_n(&pool_used, &used, k + 1, true,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		t->tid = tid;
		t->fsbase = (uint64_t)pthread_self();
		t->ag_ok = 0;
		t->ag_modid = t->ag_off = t->ag_dtv = t->ag_block = 0;
		t->delta_kept = false;
		/* a slot of a thread gone: its py code cache names another thread's code */
		memset(t->py.codes, 0, sizeof(t->py.codes));
		t->memo[0].n = t->memo[1].n = 0;
		thread_stack(t);
		if (pthread_setspecific(thread_key, t)) {
			__atomic_store_n(&t->owner, 0, __ATOMIC_RELEASE);
			return NULL;
		}
		cur = t;
		return t;
	}
	return NULL;
}

static int fallback(struct inproc_thread *t, int why)
{
	if (!t) {
		__atomic_fetch_add(&global_inproc[XPU_INPROC_FALLBACKS], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&global_inproc[why], 1, __ATOMIC_RELAXED);
		return why;
	}
	add_relaxed(&t->inproc[XPU_INPROC_FALLBACKS], 1);
	add_relaxed(&t->inproc[why], 1);
	return why;
}

/* ---- autograd -------------------------------------------------------------------------- */

struct ag_find {
	uint64_t modid, off;
	int ok;
};

static int ag_find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ag_find *f = arg;
	int i;

	if (info->dlpi_tls_modid != f->modid)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_TLS)
			f->ok = info->dlpi_phdr[i].p_memsz >= 8 &&
					f->off <= info->dlpi_phdr[i].p_memsz - 8 ? 1 : -1;
	return 1;
}

/*
 * The thread's node counter, as bpf/autograd.bpf.h ag_seq_now() reads it, from the thread's
 * own TLS: the dtv glibc keeps at the thread pointer, bounded by its count word. The offset
 * comes from the share, so it is checked once (per thread, per value) against the module's
 * TLS segment: dl_iterate_phdr takes the loader's lock, not to be taken per launch.
 */
static bool ag_seq_now(struct inproc_thread *t, const struct xpu_ag_tls *ag, uint64_t *seq)
{
	uint64_t dtv, len, block;

	if (!t->fsbase || !ag->modid)
		return false;
	if (ag->modid != t->ag_modid || ag->off != t->ag_off || !t->ag_ok) {
		struct ag_find f = { .modid = ag->modid, .off = ag->off, .ok = -1 };

		dl_iterate_phdr(ag_find_module, &f);
		t->ag_modid = ag->modid;
		t->ag_off = ag->off;
		t->ag_ok = f.ok;
		t->ag_dtv = t->ag_block = 0;
	}
	if (t->ag_ok != 1)
		return false;
	dtv = *(const uint64_t *)(uintptr_t)(t->fsbase + XPU_TLS_TCB_DTV);
	if (!dtv)
		return false;
	if (dtv == t->ag_dtv && t->ag_block) {
		block = t->ag_block;
	} else {
		len = *(const uint64_t *)(uintptr_t)(dtv - XPU_TLS_DTV_ENTRY);
		if (ag->modid > len)
			return false;
		block = *(const uint64_t *)(uintptr_t)(dtv + ag->modid * XPU_TLS_DTV_ENTRY);
		if (!block || block == XPU_TLS_DTV_UNALLOCATED)
			return false;
		t->ag_dtv = dtv;
		t->ag_block = block;
	}
	*seq = *(const volatile uint64_t *)(uintptr_t)(block + ag->off);
	return true;
}

/* the thread's slot for bpf/autograd.bpf.h: the node probe reads it in the same thread */
static void ag_note(struct inproc_thread *t, const struct xpu_ag_tls *ag, uint64_t ts)
{
	struct xpu_ag_inproc_slot *s = &ag_slots[t->tid & (INPROC_AG_SLOTS - 1)];
	uint64_t seq = 0;
	bool ok = ag_seq_now(t, ag, &seq);

	s->ts = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->tid = t->tid;
	s->seq = seq;
	s->py_frame = t->py.top_frame;
	s->py_instr = t->py.top_instr;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->ts = ok ? ts : 0;
}

/* ---- the interface --------------------------------------------------------------------- */

static void *map_anon(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void resolve_python(void)
{
	if (!gil_this_thread)
		gil_this_thread = (gil_this_thread_fn)dlsym(RTLD_DEFAULT,
							    "PyGILState_GetThisThreadState");
	if (!py_initialized)
		py_initialized = (py_initialized_fn)dlsym(RTLD_DEFAULT, "Py_IsInitialized");
}

/*
 * The child of a fork has one thread, the forking one, under a new pid: the other slots are
 * free, and the parent's share describes the parent (the transport sends the child its own).
 */
static void at_fork_child(void)
{
	uint32_t i, used = __atomic_load_n(&pool_used, __ATOMIC_RELAXED);

	self_pid = (__u32)getpid();
	__atomic_store_n(&share_cur, NULL, __ATOMIC_RELEASE);
	for (i = 0; pool && i < used; i++)
		if (&pool[i] != cur)
			__atomic_store_n(&pool[i].owner, 0, __ATOMIC_RELAXED);
	if (cur) {
		cur->tid = cur->owner = (uint32_t)gettid();
		cur->ag_ok = 0;
	}
}

int inproc_walk__init(void)
{
	static bool done;
	const char *env;
	int err;

	if (done)
		return pool ? 0 : -ENOMEM;
	done = true;
	self_pid = (__u32)getpid();
	env = getenv("XPU_CUPTI_WALK_MEMO");
	if (env && !strcmp(env, "0"))
		memo_on = false;
	resolve_python();
	err = pthread_key_create(&thread_key, thread_release);
	if (err)
		return -err;
	key_ok = true;
	pthread_atfork(NULL, NULL, at_fork_child);
	row_cache = map_anon(CFI_CACHE_ENTRIES * sizeof(*row_cache));
	ag_slots = map_anon(INPROC_AG_SLOTS * sizeof(*ag_slots));
	pool = map_anon(INPROC_THREADS * sizeof(*pool));
	if (!row_cache || !ag_slots || !pool) {
		pool = NULL;		/* every launch takes the marker */
		return -ENOMEM;
	}
	return 0;
}

void inproc_walk__set_share(const struct xpu_share_arena *arena, uint64_t arena_bytes,
			    const struct xpu_share_proc *proc, uint64_t proc_bytes)
{
	struct inproc_share *sh;
	uint64_t limit;

	if (!arena || !proc || arena_bytes < XPU_SHARE_ARENA_DATA ||
	    proc_bytes < sizeof(*proc) || arena->magic != XPU_SHARE_MAGIC ||
	    arena->version != XPU_SHARE_VERSION || proc->magic != XPU_SHARE_MAGIC ||
	    proc->version != XPU_SHARE_VERSION) {
		__atomic_store_n(&share_cur, NULL, __ATOMIC_RELEASE);
		return;
	}
	/* never freed: a walk of another thread may still hold the last one */
	sh = map_anon(sizeof(*sh));
	if (!sh)
		return;
	limit = __atomic_load_n(&arena->capacity_bytes, __ATOMIC_RELAXED);
	sh->arena = arena;
	sh->arena_limit = limit < arena_bytes ? limit : arena_bytes;
	sh->proc = proc;
	resolve_python();
	__atomic_store_n(&share_cur, sh, __ATOMIC_RELEASE);
}

void inproc_walk__set_memo(bool on)
{
	memo_on = on;
}

bool inproc_walk__have_share(void)
{
	return __atomic_load_n(&share_cur, __ATOMIC_ACQUIRE) != NULL;
}

static void keep_deltas(struct inproc_thread *t)
{
	uint64_t m;

	for (m = t->delta_mask; m; m &= m - 1)
		add_relaxed(&t->cnt[__builtin_ctzll(m)], t->delta[__builtin_ctzll(m)]);
	t->delta_kept = true;
	add_relaxed(&t->inproc[XPU_INPROC_WALKS], 1);
	if (t->memo_frames) {
		add_relaxed(&t->inproc[XPU_INPROC_MEMO_WALKS], 1);
		add_relaxed(&t->inproc[XPU_INPROC_MEMO_FRAMES], t->memo_frames);
	}
}

int inproc_walk__launch(uint32_t corr_id, uint32_t cbid, uint32_t domain, uint64_t sp,
			uint64_t bp, struct xpu_ev_pystack *py, uint32_t *py_bytes,
			struct xpu_ev_gpu_launch *ev, uint32_t *ev_bytes)
{
	const struct inproc_share *sh = __atomic_load_n(&share_cur, __ATOMIC_ACQUIRE);
	struct inproc_thread *t = cur;
	const struct xpu_share_proc *proc;
	struct xpu_ag_tls ag = { 0 };
	uint32_t seq, n, uflags = 0;
	struct timespec now;
	uint64_t ts, m;
	int cpu;

	*py_bytes = 0;
	*ev_bytes = 0;
	py->nr = 0;
	if (!t && !(t = thread_claim()))
		return fallback(NULL, XPU_INPROC_FB_NO_THREAD);
	t->delta_kept = false;
	if (!t->stack_known)
		thread_stack(t);
	if (!t->stack_hi)
		return fallback(t, XPU_INPROC_FB_NO_THREAD);
	if (!sh)
		return fallback(t, XPU_INPROC_FB_NO_SHARE);
	/* a sigaltstack, a coroutine's stack: not the one the bounds describe */
	if (sp < t->stack_lo || sp >= t->stack_hi || (sp & 7))
		return fallback(t, XPU_INPROC_FB_OFF_STACK);
	proc = sh->proc;
	seq = __atomic_load_n(&proc->seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return fallback(t, XPU_INPROC_FB_CHANGED);
	t->flags = __atomic_load_n(&proc->flags, __ATOMIC_RELAXED);
	if (!(t->flags & XPU_SHARE_CFI))
		return fallback(t, XPU_INPROC_FB_NO_SHARE);
	if ((t->flags & XPU_SHARE_PY) &&
	    (!gil_this_thread || !py_initialized || !py_initialized()))
		return fallback(t, XPU_INPROC_FB_PYTHON);

	for (m = t->delta_mask; m; m &= m - 1)
		t->delta[__builtin_ctzll(m)] = 0;
	t->delta_mask = 0;
	t->doubt = 0;
	t->phase = INPROC_PHASE_NATIVE;
	t->read_lo = sp;
	t->scratch_lookups = 0;
	t->gen_mix = seq * 0x9e3779b1u;
	t->sh = sh;
	t->py_out = NULL;
	t->py_out_bytes = 0;
	t->rows.nslots = 0;
	t->noted = 0;
	t->memo_pos = 0;
	t->memo_at = UINT32_MAX;
	t->task.thread.fsbase = t->fsbase;
	t->task.regs.ip = (unsigned long)(uintptr_t)&xpu_cupti_api_enter;
	t->task.regs.sp = sp;
	t->task.regs.bp = bp;
	cpu = sched_getcpu();
	t->cpu = cpu >= 0 ? (uint32_t)cpu : 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ts = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	t->py.top_frame = 0;
	t->py.top_instr = 0;

	count(XPU_CNT_GPU_LAUNCHES);
	n = cfi_walk_stack(INPROC_SLOT, self_pid, ev->uips, &uflags);
	if (t->doubt)
		return fallback(t, t->doubt);
	if (!n || !(uflags & XPU_EV_U_OUTERMOST))
		return fallback(t, XPU_INPROC_FB_INCOMPLETE);
	if (!(uflags & XPU_EV_U_COPY_PAYS))
		memo_keep(t, n);
	else
		t->memo_frames = 0;
	if (t->flags & XPU_SHARE_PY) {
		uint64_t tstate = (uint64_t)(uintptr_t)gil_this_thread();

		/*
		 * None: a thread the interpreter does not know (PyTorch's autograd and CUDA
		 * threads, which launch the backward's kernels). BPF's scan of the thread list
		 * finds none for it either, and sends the launch without Python frames, as here.
		 */
		if (!tstate) {
			count(XPU_CNT_PY_NO_THREAD);
			goto native_only;
		}
		t->pt.tstate = tstate;
		t->pt.checked_ns = 0;
		t->phase = INPROC_PHASE_PYTHON;
		t->py_out = py;
		emit_pystack(INPROC_SLOT, self_pid, t->tid, ts, XPU_EV_GPU_LAUNCH);
		t->py_out = NULL;
		if (t->doubt)
			return fallback(t, t->doubt);
	}
native_only:
	if (t->flags & XPU_SHARE_AG)
		memcpy(&ag, &proc->ag, sizeof(ag));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&proc->seq, __ATOMIC_RELAXED) != seq)
		return fallback(t, XPU_INPROC_FB_CHANGED);

	ev->hdr.type = XPU_EV_GPU_LAUNCH;
	ev->hdr.pid = self_pid;
	ev->hdr.tid = t->tid;
	ev->hdr.cpu = t->cpu;
	ev->hdr.ts_ns = ts;
	ev->corr_id = corr_id;
	ev->cbid = cbid;
	ev->domain = domain;
	ev->ustart = 0;
	ev->nr_user = (__s32)n;
	ev->uflags = uflags;
	*ev_bytes = (uint32_t)(offsetof(struct xpu_ev_gpu_launch, uips) + n * sizeof(__u64));
	if (py->nr && t->py_out_bytes)
		*py_bytes = (uint32_t)(offsetof(struct xpu_ev_pystack, frames) +
				       py->nr * sizeof(struct xpu_py_frame_ev));
	else
		py->nr = 0;
	keep_deltas(t);
	if (t->flags & XPU_SHARE_AG)
		ag_note(t, &ag, ts);
	return 0;
}

void inproc_walk__count(enum xpu_inproc_counter c, uint64_t n)
{
	struct inproc_thread *t = cur;
	bool fb = c >= XPU_INPROC_FB_NO_SHARE && c <= XPU_INPROC_FB_INCOMPLETE;

	if ((unsigned int)c >= XPU_INPROC_NR)
		return;
	if (!t) {
		__atomic_fetch_add(&global_inproc[c], n, __ATOMIC_RELAXED);
		if (fb)
			__atomic_fetch_add(&global_inproc[XPU_INPROC_FALLBACKS], n,
					   __ATOMIC_RELAXED);
		return;
	}
	add_relaxed(&t->inproc[c], n);
	if (!fb)
		return;
	add_relaxed(&t->inproc[XPU_INPROC_FALLBACKS], n);
	/*
	 * The thread's last launch, walked here, goes to the marker after all (its queue was
	 * full): BPF counts that walk again, so this one's counts are taken back.
	 */
	if (t->delta_kept) {
		uint64_t m;

		for (m = t->delta_mask; m; m &= m - 1)
			add_relaxed(&t->cnt[__builtin_ctzll(m)], -t->delta[__builtin_ctzll(m)]);
		add_relaxed(&t->inproc[XPU_INPROC_WALKS], -1ull);
		if (t->memo_frames) {
			add_relaxed(&t->inproc[XPU_INPROC_MEMO_WALKS], -1ull);
			add_relaxed(&t->inproc[XPU_INPROC_MEMO_FRAMES], -t->memo_frames);
		}
		t->delta_kept = false;
	}
}

void inproc_walk__stats(struct xpu_cupti_walk_stats *out)
{
	uint32_t i, used = __atomic_load_n(&pool_used, __ATOMIC_RELAXED);
	int k;

	memset(out, 0, sizeof(*out));
	for (k = 0; k < XPU_INPROC_NR; k++)
		out->inproc[k] = __atomic_load_n(&global_inproc[k], __ATOMIC_RELAXED);
	for (i = 0; pool && i < used && i < INPROC_THREADS; i++) {
		for (k = 0; k < XPU_CNT_NR; k++)
			out->cnt[k] += __atomic_load_n(&pool[i].cnt[k], __ATOMIC_RELAXED);
		for (k = 0; k < XPU_INPROC_NR; k++)
			out->inproc[k] += __atomic_load_n(&pool[i].inproc[k], __ATOMIC_RELAXED);
	}
}

void inproc_walk__ag_slots(uint64_t *addr, uint32_t *nslots)
{
	*addr = (uint64_t)(uintptr_t)ag_slots;
	*nslots = ag_slots ? INPROC_AG_SLOTS : 0;
}
