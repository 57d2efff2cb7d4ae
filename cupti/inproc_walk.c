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

static __always_inline void count(__u32 idx)
{
	struct inproc_thread *t = cur;

	if (idx >= XPU_CNT_NR)
		return;
	t->delta[idx]++;
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
	if (idx < XPU_CNT_NR)
		cur->delta[idx] += n;
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
	    l->co_firstlineno > INPROC_PY_MAX_OFF) {
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
	int err;

	if (done)
		return pool ? 0 : -ENOMEM;
	done = true;
	self_pid = (__u32)getpid();
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

bool inproc_walk__have_share(void)
{
	return __atomic_load_n(&share_cur, __ATOMIC_ACQUIRE) != NULL;
}

static void keep_deltas(struct inproc_thread *t)
{
	int i;

	for (i = 0; i < XPU_CNT_NR; i++)
		if (t->delta[i])
			add_relaxed(&t->cnt[i], t->delta[i]);
	t->delta_kept = true;
	add_relaxed(&t->inproc[XPU_INPROC_WALKS], 1);
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
	uint64_t ts;
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

	memset(t->delta, 0, sizeof(t->delta));
	t->doubt = 0;
	t->phase = INPROC_PHASE_NATIVE;
	t->read_lo = sp;
	t->scratch_lookups = 0;
	t->gen_mix = seq * 0x9e3779b1u;
	t->sh = sh;
	t->py_out = NULL;
	t->py_out_bytes = 0;
	t->rows.nslots = 0;
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
	int i;

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
		for (i = 0; i < XPU_CNT_NR; i++)
			if (t->delta[i])
				add_relaxed(&t->cnt[i], -t->delta[i]);
		add_relaxed(&t->inproc[XPU_INPROC_WALKS], -1ull);
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
