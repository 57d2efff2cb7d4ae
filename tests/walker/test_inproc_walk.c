// SPDX-License-Identifier: MIT
/*
 * cupti/inproc_walk.c in this very process: tables built by record/cfi/cfi_build.c for its
 * own executable mappings, laid out in an arena and a process share as common/walk_share.h
 * says, then walks from a chain without frame pointers (inproc_chain.c) through an entry stub
 * that captures sp and bp as callbacks.c's does. Also walks that must fall back (a stack
 * pointer off the stack, garbage on the stack, garbage in the share), which must never crash.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cfi/cfi_build.h"
#include "inproc_walk.h"

typedef void (*ipc_walk_fn)(void *arg);
void xpu_cupti_api_enter(uint32_t corr_id, uint32_t cbid, uint32_t domain);
void ipc_a(ipc_walk_fn fn, void *arg);
void ipc_with_rbp(ipc_walk_fn fn, void *arg, unsigned long bp);

static int failures;
#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
			fprintf(stderr, __VA_ARGS__);                                      \
			fprintf(stderr, "\n");                                             \
			failures++;                                                        \
		}                                                                          \
	} while (0)

/* a test copy of callbacks.c's marker: its FDE gives CFA = sp + 8, as the probed one's */
__asm__(".text\n"
	".globl xpu_cupti_api_enter\n"
	".type xpu_cupti_api_enter, @function\n"
	".p2align 4\n"
	"xpu_cupti_api_enter:\n"
	"\t.cfi_startproc\n"
	"\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size xpu_cupti_api_enter, .-xpu_cupti_api_enter\n");

struct walk_req {
	int rc;
	uint32_t py_bytes, ev_bytes;
	struct xpu_ev_pystack py;
	struct xpu_ev_gpu_launch ev;
};

/*
 * The entry stub: sp at its entry (the return address into its caller at [sp]) and rbp as the
 * caller left it, then a tail jump, so the walk sees the stub's caller as the first frame.
 */
void walk_entry(void *req);
void walk_here(struct walk_req *r, uint64_t sp, uint64_t bp);
__asm__(".text\n"
	".globl walk_entry\n"
	".type walk_entry, @function\n"
	"walk_entry:\n"
	"\t.cfi_startproc\n"
	"\tmov %rsp, %rsi\n"
	"\tmov %rbp, %rdx\n"
	"\tjmp walk_here\n"
	"\t.cfi_endproc\n"
	".size walk_entry, .-walk_entry\n");

__attribute__((noinline)) void walk_here(struct walk_req *r, uint64_t sp, uint64_t bp)
{
	r->rc = inproc_walk__launch(77, 13, 1, sp, bp, &r->py, &r->py_bytes, &r->ev,
				    &r->ev_bytes);
}

/* ---- the share ---------------------------------------------------------------------------- */

#define ARENA_BYTES (256ull << 20)
static struct xpu_share_arena *arena;
static struct xpu_share_proc *proc;
static uint64_t arena_used = XPU_SHARE_ARENA_DATA;

static int add_table(uint32_t idx, const struct cfi_table *t, uint64_t start, uint64_t end,
		     uint64_t bias)
{
	uint32_t *index = NULL, page0, npages;
	uint64_t slots, bytes;
	int err = cfi_table__index(t, &index, &page0, &npages);

	if (err)
		return err;
	slots = t->nr + (npages + 1) / 2;
	bytes = slots * sizeof(struct xpu_cfi_row);
	if (arena_used + bytes > ARENA_BYTES) {
		free(index);
		return -ENOSPC;
	}
	memcpy((char *)arena + arena_used, t->rows, t->nr * sizeof(*t->rows));
	memcpy((char *)arena + arena_used + t->nr * sizeof(*t->rows), index,
	       (npages + 1) / 2 * sizeof(*t->rows));
	free(index);
	arena->tables[idx].off = arena_used;
	arena->tables[idx].slots = (uint32_t)slots;
	__atomic_store_n(&arena->tables[idx].ready, 1, __ATOMIC_RELEASE);
	arena_used += (bytes + 7) & ~7ull;
	proc->cfi.maps[proc->cfi.nr] = (struct xpu_cfi_map){
		.start = start, .end = end, .bias = bias, .table = idx,
		.nrows = (uint32_t)t->nr, .page0 = page0, .npages = npages };
	proc->cfi.nr++;
	return 0;
}

/* one table per executable file mapping of this process, as the recorder would */
static int build_share(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096], perm[8], path[4096];
	unsigned long start, end, pgoff;
	uint32_t idx = 0;

	arena = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	proc = calloc(1, sizeof(*proc));
	if (!f || arena == MAP_FAILED || !proc)
		return -ENOMEM;
	arena->magic = proc->magic = XPU_SHARE_MAGIC;
	arena->version = proc->version = XPU_SHARE_VERSION;
	arena->capacity_bytes = ARENA_BYTES;
	proc->cfi.gen = 1;
	while (fgets(line, sizeof(line), f) && proc->cfi.nr < XPU_CFI_MAX_MAPS) {
		struct cfi_table t = { 0 };
		uint64_t bias;
		int fd;

		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &start, &end, perm, &pgoff,
			   path) < 4 || perm[2] != 'x' || path[0] != '/')
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!cfi_table__build(fd, &t) && t.nr && !cfi_table__bias(&t, start, pgoff, &bias) &&
		    !add_table(idx, &t, start, end, bias))
			idx++;
		cfi_table__free(&t);
		close(fd);
	}
	fclose(f);
	proc->flags = XPU_SHARE_CFI;
	return proc->cfi.nr ? 0 : -ENOENT;
}

/* ---- checks ------------------------------------------------------------------------------- */

static const char *sym(uint64_t ip)
{
	Dl_info info;

	if (!dladdr((void *)(uintptr_t)(ip - 1), &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

static void print_stack(const struct walk_req *r)
{
	int i;

	for (i = 0; i < r->ev.nr_user; i++)
		fprintf(stderr, "  #%d %#lx %s\n", i, (unsigned long)r->ev.uips[i],
			sym(r->ev.uips[i]));
}

__attribute__((noinline)) static void run_chain(struct walk_req *r)
{
	memset(r, 0, sizeof(*r));
	r->rc = -1;
	ipc_a(walk_entry, r);
	__asm__ volatile("" : : : "memory");
}

/* 40 more frames under the chain, for a launch as deep as a PyTorch one's native stack */
__attribute__((noinline)) static void deep_chain(struct walk_req *r, int n)
{
	if (n)
		deep_chain(r, n - 1);
	else
		ipc_a(walk_entry, r);
	__asm__ volatile("" : : : "memory");
}

/* the walk memo's paths: depth frames over the chain, rbp = bp above ipc_b, two call sites */
__attribute__((noinline)) static void memo_deep(struct walk_req *r, int n, uint64_t bp)
{
	if (n)
		memo_deep(r, n - 1, bp);
	else
		ipc_with_rbp(walk_entry, r, bp);
	__asm__ volatile("" : : : "memory");
}

static volatile int memo_sink;

__attribute__((noinline)) static void memo_path(struct walk_req *r, int depth, int site,
						uint64_t bp)
{
	memset(r, 0, sizeof(*r));
	r->rc = -1;
	/* the same frame under both calls, another return address: the nop keeps them apart */
	if (site) {
		__asm__ volatile("nop");
		memo_deep(r, depth, bp);
		memo_sink += 1;
	} else {
		memo_deep(r, depth, bp);
		memo_sink += 2;
	}
	__asm__ volatile("" : : : "memory");
}

/*
 * One path walked with the memo, then without it, from the same call site (a loop): what the
 * first took from the memo in *memo_frames.
 */
__attribute__((noinline)) static void memo_twice(struct walk_req *m, int depth, int site,
						 uint64_t bp, uint64_t *memo_frames)
{
	struct xpu_cupti_walk_stats a, b;
	static volatile int twice = 2;	/* a loop the compiler cannot unroll into two call sites */
	int k;

	for (k = 0; k < twice; k++) {
		inproc_walk__set_memo(k == 0);
		inproc_walk__stats(&a);
		memo_path(&m[k], depth, site, bp);
		inproc_walk__stats(&b);
		if (k == 0)
			*memo_frames = b.inproc[XPU_INPROC_MEMO_FRAMES] -
				       a.inproc[XPU_INPROC_MEMO_FRAMES];
	}
	inproc_walk__set_memo(true);
}

/* the chain, marker first, in order, up to main, outermost */
static void check_chain(const struct walk_req *r, const char *what, bool want_main,
			uint32_t tid)
{
	static const char *const want[] = { "ipc_leaf", "ipc_c", "ipc_b", "ipc_a" };
	int i, ok = 1, saw_main = 0;

	CHECK(r->rc == 0, "%s: rc %d", what, r->rc);
	if (r->rc)
		return;
	CHECK(r->ev.nr_user >= 6, "%s: %d frames", what, r->ev.nr_user);
	CHECK(r->ev.uflags & XPU_EV_U_OUTERMOST, "%s: not outermost", what);
	CHECK(r->ev.uips[0] == (uint64_t)(uintptr_t)&xpu_cupti_api_enter, "%s: first %#lx", what,
	      (unsigned long)r->ev.uips[0]);
	for (i = 0; i < 4 && i + 1 < r->ev.nr_user; i++)
		if (strcmp(sym(r->ev.uips[i + 1]), want[i]))
			ok = 0;
	CHECK(ok, "%s: chain out of order", what);
	for (i = 0; i < r->ev.nr_user; i++)
		saw_main |= !strcmp(sym(r->ev.uips[i]), "main");
	if (want_main)
		CHECK(saw_main, "%s: no main", what);
	CHECK(r->ev.hdr.type == XPU_EV_GPU_LAUNCH && r->ev.hdr.pid == (uint32_t)getpid() &&
		      r->ev.hdr.tid == tid && r->ev.hdr.ts_ns,
	      "%s: header", what);
	CHECK(r->ev.corr_id == 77 && r->ev.cbid == 13 && r->ev.domain == 1 && !r->ev.ustart,
	      "%s: ids", what);
	CHECK(r->ev_bytes == offsetof(struct xpu_ev_gpu_launch, uips) + r->ev.nr_user * 8,
	      "%s: ev_bytes %u", what, r->ev_bytes);
	CHECK(r->py_bytes == 0 && r->py.nr == 0, "%s: python frames", what);
	if (failures)
		print_stack(r);
}

static bool is_fallback(int rc)
{
	return rc >= XPU_INPROC_FB_NO_SHARE && rc <= XPU_INPROC_FB_INCOMPLETE;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* a launch whose stack is garbage: words that are code addresses, stack addresses, zeros */
__attribute__((noinline)) static int garbage_walk(uint64_t code_lo, uint64_t code_hi)
{
	uint64_t fake[96];
	struct walk_req r;
	int i;

	for (i = 0; i < 96; i++) {
		switch (rnd() % 5) {
		case 0:
			fake[i] = code_lo + rnd() % (code_hi - code_lo);
			break;
		case 1:
			fake[i] = (uint64_t)(uintptr_t)&fake[rnd() % 96];
			break;
		case 2:
			fake[i] = 0;
			break;
		default:
			fake[i] = rnd();
		}
	}
	r.rc = inproc_walk__launch(1, 2, 3, (uint64_t)(uintptr_t)fake, fake[rnd() % 96],
				   &r.py, &r.py_bytes, &r.ev, &r.ev_bytes);
	if (!r.rc)
		CHECK(r.ev.nr_user > 0 && (r.ev.uflags & XPU_EV_U_OUTERMOST), "garbage: success");
	return r.rc;
}

static void *thread_walk(void *arg)
{
	struct walk_req *r = arg;

	run_chain(r);
	return NULL;
}

static __thread uint64_t my_counter = 41;

struct tls_find {
	uint64_t modid;
	void *data;
};

static int find_main_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct tls_find *f = arg;

	f->modid = info->dlpi_tls_modid;
	f->data = info->dlpi_tls_data;
	return 1;		/* the first is the program */
}

int main(void)
{
	struct xpu_cupti_walk_stats st;
	struct xpu_share_proc saved;
	struct xpu_share_table saved_dir[1], *dir;
	struct walk_req r, r2;
	uint64_t code_lo = 0, code_hi = 0, fb = 0, hits;
	struct timespec t0, t1;
	pthread_t th;
	uint32_t me = (uint32_t)gettid();
	int i, rc, k;

	CHECK(inproc_walk__init() == 0, "init");
	run_chain(&r);
	CHECK(r.rc == XPU_INPROC_FB_NO_SHARE, "no share yet: %d", r.rc);
	if (build_share()) {
		fprintf(stderr, "FAIL: no tables for this process\n");
		return 1;
	}
	for (i = 0; i < (int)proc->cfi.nr; i++)
		if ((uint64_t)(uintptr_t)&ipc_a >= proc->cfi.maps[i].start &&
		    (uint64_t)(uintptr_t)&ipc_a < proc->cfi.maps[i].end) {
			code_lo = proc->cfi.maps[i].start;
			code_hi = proc->cfi.maps[i].end;
		}
	CHECK(code_hi, "the test's own code has a table");

	/* a share that is not this build's is refused */
	proc->magic = 0;
	inproc_walk__set_share(arena, ARENA_BYTES, proc, sizeof(*proc));
	CHECK(!inproc_walk__have_share(), "bad magic accepted");
	proc->magic = XPU_SHARE_MAGIC;
	inproc_walk__set_share(arena, ARENA_BYTES, proc, sizeof(*proc) - 1);
	CHECK(!inproc_walk__have_share(), "short share accepted");
	inproc_walk__set_share(arena, ARENA_BYTES, proc, sizeof(*proc));
	CHECK(inproc_walk__have_share(), "share");

	run_chain(&r);
	check_chain(&r, "first walk", true, me);
	inproc_walk__stats(&st);
	hits = st.cnt[XPU_CNT_CFI_CACHE_HITS];
	run_chain(&r2);
	check_chain(&r2, "cached walk", true, me);
	inproc_walk__stats(&st);
	/* main's frame differs (another call site): from the frame above it, the memo's */
	CHECK(st.inproc[XPU_INPROC_MEMO_WALKS] == 1 &&
		      st.inproc[XPU_INPROC_MEMO_FRAMES] + 7 == (uint64_t)r2.ev.nr_user,
	      "second walk: memo walks %lu, frames %lu of %d",
	      (unsigned long)st.inproc[XPU_INPROC_MEMO_WALKS],
	      (unsigned long)st.inproc[XPU_INPROC_MEMO_FRAMES], r2.ev.nr_user);
	CHECK(st.cnt[XPU_CNT_CFI_CACHE_HITS] - hits + 1 >= 7, "second walk: %lu cache hits",
	      (unsigned long)(st.cnt[XPU_CNT_CFI_CACHE_HITS] - hits));
	/* all but main's return address, which is another call site of run_chain */
	CHECK(r.ev.nr_user == r2.ev.nr_user && r.ev.nr_user > 7 &&
		      !memcmp(r.ev.uips, r2.ev.uips, 6 * 8) &&
		      !memcmp(r.ev.uips + 7, r2.ev.uips + 7, (r.ev.nr_user - 7) * 8),
	      "the cached walk differs");

	/*
	 * The memo against walks without it, from paths that differ below (depth), in a return
	 * address (the call site) and in a saved rbp: the same frames every time, and the memo
	 * taken whole, in part and not at all.
	 */
	{
		struct walk_req m[2];
		uint64_t whole = 0, part = 0, memo_frames = 0;
		int same = 1;

		for (i = 0; i < 3000 && same; i++) {
			int depth = (int)(rnd() % 6), site = (int)(rnd() % 2);
			uint64_t bp = 0x5000 + rnd() % 3;

			memo_twice(m, depth, site, bp, &memo_frames);
			same = m[0].rc == 0 && m[1].rc == 0 && m[0].ev.nr_user == m[1].ev.nr_user &&
			       m[0].ev.uflags == m[1].ev.uflags &&
			       !memcmp(m[0].ev.uips, m[1].ev.uips, m[0].ev.nr_user * 8);
			if (memo_frames == (uint64_t)m[0].ev.nr_user)
				whole++;
			else if (memo_frames)
				part++;
		}
		CHECK(same, "walk %d with the memo differs from the walk without: rc %d/%d, %d/%d frames",
		      i, m[0].rc, m[1].rc, m[0].ev.nr_user, m[1].ev.nr_user);
		if (!same) {
			print_stack(&m[0]);
			print_stack(&m[1]);
		}
		CHECK(whole > 30 && part > 1000, "memo taken whole %lu, in part %lu of 3000 walks",
		      (unsigned long)whole, (unsigned long)part);
		printf("test_inproc_walk: memo whole in %lu walks, in part in %lu, of 3000\n",
		       (unsigned long)whole, (unsigned long)part);
	}

	/* another thread: its own stack bounds and slot, its walk ends at the thread's start */
	pthread_create(&th, NULL, thread_walk, &r2);
	pthread_join(th, NULL);
	check_chain(&r2, "thread", false, r2.ev.hdr.tid);
	CHECK(r2.ev.hdr.tid != me, "the thread's tid");
	/* more threads than slots, one after the other: slots are given back at exit */
	for (i = 0; i < 1100; i++) {
		pthread_create(&th, NULL, thread_walk, &r2);
		pthread_join(th, NULL);
		if (r2.rc)
			break;
	}
	CHECK(r2.rc == 0, "thread %d of 1100: rc %d", i, r2.rc);

	/* a stack pointer off the thread's stack (a sigaltstack, say) */
	{
		uint64_t *heap = calloc(64, 8);

		heap[0] = r.ev.uips[1];
		rc = inproc_walk__launch(1, 2, 3, (uint64_t)(uintptr_t)heap, 0, &r2.py,
					 &r2.py_bytes, &r2.ev, &r2.ev_bytes);
		CHECK(rc == XPU_INPROC_FB_OFF_STACK, "heap sp: %d", rc);
		free(heap);
	}
	/* garbage on the stack: never a crash, only fallbacks or whole walks */
	for (i = 0; i < 20000; i++) {
		rc = garbage_walk(code_lo, code_hi);
		CHECK(rc == 0 || is_fallback(rc), "garbage rc %d", rc);
		fb += rc != 0;
	}
	CHECK(fb > 0, "garbage walks never fell back");

	/* the share changing under the walk */
	proc->seq = 1;
	run_chain(&r2);
	CHECK(r2.rc == XPU_INPROC_FB_CHANGED, "odd seq: %d", r2.rc);
	proc->seq = 2;
	inproc_walk__stats(&st);
	hits = st.cnt[XPU_CNT_CFI_CACHE_HITS];
	run_chain(&r2);
	check_chain(&r2, "seq 2", true, me);
	/* rows cached under another seq are not used: a torn share's may be wrong */
	inproc_walk__stats(&st);
	CHECK(st.cnt[XPU_CNT_CFI_CACHE_HITS] == hits, "seq 2: %lu cache hits",
	      (unsigned long)(st.cnt[XPU_CNT_CFI_CACHE_HITS] - hits));
	proc->flags = 0;
	run_chain(&r2);
	CHECK(r2.rc == XPU_INPROC_FB_NO_SHARE, "no CFI flag: %d", r2.rc);
	proc->flags = XPU_SHARE_CFI | XPU_SHARE_PY;
	run_chain(&r2);
	CHECK(r2.rc == XPU_INPROC_FB_PYTHON, "Python without an interpreter: %d", r2.rc);
	proc->flags = XPU_SHARE_CFI;

	/* tables not ready or out of bounds: a new generation, so no cached row helps */
	memcpy(&saved, proc, sizeof(saved));
	for (k = 0; k < 4; k++) {
		uint32_t tb = 0;

		for (i = 0; i < (int)proc->cfi.nr; i++)
			if (proc->cfi.maps[i].start == code_lo)
				tb = proc->cfi.maps[i].table;
		saved_dir[0] = arena->tables[tb];
		if (k == 0)
			arena->tables[tb].ready = 0;
		else if (k == 1)
			arena->tables[tb].off = ARENA_BYTES - 8;
		else if (k == 2)
			arena->tables[tb].off += 4;
		else
			arena->tables[tb].slots = 0xffffffffu;
		proc->cfi.gen += 10;
		run_chain(&r2);
		CHECK(r2.rc == XPU_INPROC_FB_NO_TABLE || (k == 3 && is_fallback(r2.rc)),
		      "table case %d: rc %d", k, r2.rc);
		arena->tables[tb] = saved_dir[0];
	}
	for (i = 0; i < (int)proc->cfi.nr; i++)
		if (proc->cfi.maps[i].start == code_lo)
			proc->cfi.maps[i].table = XPU_CFI_TABLE_PENDING;
	proc->cfi.gen += 10;
	run_chain(&r2);
	CHECK(r2.rc == XPU_INPROC_FB_NO_TABLE, "pending table: %d", r2.rc);
	memcpy(proc, &saved, sizeof(saved));
	proc->cfi.nr = 0xffffffffu;
	proc->cfi.gen += 10;
	run_chain(&r2);
	CHECK(is_fallback(r2.rc), "huge nr: %d", r2.rc);
	/* garbage everywhere in the maps and the directory */
	dir = malloc(saved.cfi.nr * sizeof(*dir));
	memcpy(dir, arena->tables, saved.cfi.nr * sizeof(*dir));
	for (k = 0; k < 300; k++) {
		memcpy(proc, &saved, sizeof(saved));
		proc->cfi.gen = 1000 + k;
		for (i = 0; i < 40; i++) {
			uint8_t *p = (uint8_t *)&proc->cfi.maps[rnd() % saved.cfi.nr];

			p[rnd() % sizeof(struct xpu_cfi_map)] = (uint8_t)rnd();
		}
		if (k & 1)
			for (i = 0; i < 8; i++) {
				struct xpu_share_table *e = &arena->tables[rnd() % saved.cfi.nr];

				e->off = rnd() % (2 * ARENA_BYTES);
				e->slots = (uint32_t)rnd();
			}
		run_chain(&r2);
		CHECK(r2.rc == 0 || is_fallback(r2.rc), "garbage maps rc %d", r2.rc);
		memcpy(arena->tables, dir, saved.cfi.nr * sizeof(*dir));
	}
	free(dir);
	memcpy(proc, &saved, sizeof(saved));
	proc->cfi.gen = 5000;
	run_chain(&r2);
	check_chain(&r2, "after garbage", true, me);

	/* autograd: the node counter of this thread, through its dtv */
	{
		struct tls_find f = { 0 };
		uint64_t addr;
		uint32_t nslots;
		struct xpu_ag_inproc_slot *s;

		dl_iterate_phdr(find_main_tls, &f);
		inproc_walk__ag_slots(&addr, &nslots);
		CHECK(addr && nslots == 4096, "ag slots");
		s = (struct xpu_ag_inproc_slot *)(uintptr_t)addr + (gettid() & (nslots - 1));
		proc->ag.modid = f.modid;
		proc->ag.off = (uint64_t)((char *)&my_counter - (char *)f.data);
		proc->flags = XPU_SHARE_CFI | XPU_SHARE_AG;
		my_counter = 12345;
		run_chain(&r2);
		check_chain(&r2, "autograd", true, me);
		CHECK(s->tid == (uint32_t)gettid() && s->seq == 12345 && s->ts == r2.ev.hdr.ts_ns,
		      "ag slot: tid %u seq %lu ts %lu", s->tid, (unsigned long)s->seq,
		      (unsigned long)s->ts);
		proc->ag.off = 1ull << 40;
		run_chain(&r2);
		CHECK(r2.rc == 0 && s->ts == 0, "ag garbage offset: rc %d ts %lu", r2.rc,
		      (unsigned long)s->ts);
		proc->ag.modid = 1ull << 50;
		run_chain(&r2);
		CHECK(r2.rc == 0 && s->ts == 0, "ag garbage module: rc %d", r2.rc);
		proc->flags = XPU_SHARE_CFI;
	}

	/* the counters: every launch once, walks counted only when taken here */
	inproc_walk__stats(&st);
	{
		uint64_t sum = 0;

		for (k = XPU_INPROC_FB_NO_SHARE; k <= XPU_INPROC_FB_INCOMPLETE; k++)
			sum += st.inproc[k];
		CHECK(sum == st.inproc[XPU_INPROC_FALLBACKS], "fallbacks %lu vs %lu",
		      (unsigned long)sum, (unsigned long)st.inproc[XPU_INPROC_FALLBACKS]);
		CHECK(st.cnt[XPU_CNT_CFI_WALKS] == st.inproc[XPU_INPROC_WALKS] &&
			      st.cnt[XPU_CNT_GPU_LAUNCHES] == st.inproc[XPU_INPROC_WALKS],
		      "walks %lu, cfi walks %lu", (unsigned long)st.inproc[XPU_INPROC_WALKS],
		      (unsigned long)st.cnt[XPU_CNT_CFI_WALKS]);
		CHECK(st.cnt[XPU_CNT_CFI_END_OUTERMOST] == st.inproc[XPU_INPROC_WALKS],
		      "outermost %lu", (unsigned long)st.cnt[XPU_CNT_CFI_END_OUTERMOST]);
	}
	/* a walked launch that the queue could not take goes to BPF: its counts go back */
	run_chain(&r2);
	check_chain(&r2, "before ring full", true, me);
	inproc_walk__stats(&st);
	inproc_walk__count(XPU_INPROC_FB_RING_FULL, 1);
	{
		struct xpu_cupti_walk_stats st2;

		inproc_walk__stats(&st2);
		CHECK(st2.inproc[XPU_INPROC_WALKS] + 1 == st.inproc[XPU_INPROC_WALKS] &&
			      st2.inproc[XPU_INPROC_FB_RING_FULL] ==
				      st.inproc[XPU_INPROC_FB_RING_FULL] + 1 &&
			      st2.cnt[XPU_CNT_CFI_WALKS] + 1 == st.cnt[XPU_CNT_CFI_WALKS],
		      "ring full not taken back");
	}

	/* what a launch costs */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 100000; i++)
		run_chain(&r2);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(r2.rc == 0, "timed walks: rc %d", r2.rc);
	printf("test_inproc_walk: %d frames, %.0f ns a launch\n", r2.ev.nr_user,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 100000);
	r2.rc = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 100000; i++)
		deep_chain(&r2, 40);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(r2.rc == 0 && r2.ev.nr_user >= 50, "deep walks: rc %d, %d frames", r2.rc,
	      r2.ev.nr_user);
	printf("test_inproc_walk: %d frames, %.0f ns a launch\n", r2.ev.nr_user,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 100000);

	if (failures) {
		fprintf(stderr, "test_inproc_walk: %d failures\n", failures);
		return 1;
	}
	printf("test_inproc_walk: ok\n");
	return 0;
}
