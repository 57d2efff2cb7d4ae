// SPDX-License-Identifier: MIT
/*
 * DWARF unwinding of stack copies, offline. One Dwfl per (pid, exec generation) holds the
 * process's ELF modules, reported from its MAPPING records with the files the DSO table
 * (dso.h) found by build-id (local, debug dirs, --symfs, archive). A copy is unwound by libdw from its
 * saved registers; memory reads are served from the copied stack window, else from the mapped
 * file's bytes (read-only data), else fail, which ends the walk there.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/progress.h"
#include "sym/unwind.h"

#define UW_MAX_FRAMES 256

/* x86-64 DWARF register numbers */
enum { DW_X86_RBX = 3, DW_X86_RBP = 6, DW_X86_RSP = 7, DW_X86_R12 = 12, DW_X86_NREGS = 16 };

/*
 * Code without CFI (JIT code, perf trampolines): the frame-pointer rule, at most this many
 * times per walk, for frames of at most UW_FP_MAX_FRAME bytes.
 */
#define UW_FP_MAX_STEPS 64
#define UW_FP_MAX_FRAME (1u << 20)
/* the callee-saved registers a resumed walk starts from */
#define UW_KEPT_REGS (1u << DW_X86_RBX | 1u << DW_X86_RBP | 1u << DW_X86_RSP | 0xfu << DW_X86_R12)

struct uw_session {
	Dwfl *dwfl;
	bool ok;
	bool evicted;			/* ended to bound the open files: rebuilt on next use */
	uint32_t nfiles;		/* files reported: each holds a descriptor */
};

/* Dwfl sessions kept at once: each holds its process's files open (session_make_room). */
#define UW_LIVE_SESSIONS 64

struct unwinder {
	const struct trace *t;
	struct derived_stacks *d;	/* the stacks the walks made, and who uses them */
	struct dso_table *dt;		/* the session's: the files, opened once */
	struct kmap sess_idx;		/* {pid, gen} -> sessions index */
	struct uw_session *sess;
	size_t nsess, sess_cap;
	uint32_t live[UW_LIVE_SESSIONS];	/* sess indexes with a Dwfl, oldest first (a ring) */
	uint32_t live_head, nlive;
	uint32_t live_files, files_budget;	/* descriptors the live sessions hold, at most */
	struct stack_maker made;
	const struct xpa_walks *pack;	/* the host's walks of the trace being streamed, or NULL */
	/* the copy being unwound */
	const struct tr_ucopy *cur;
	uint64_t ips[UW_MAX_FRAMES];
	unsigned int nips;
	bool past_copy;			/* a read since the last frame wanted bytes above the copy */
	/* registers of the last frame reported (bit r of set: DWARF register r is known) */
	Dwarf_Word regs[DW_X86_NREGS];
	uint32_t regs_set;
	/* a walk resumed past a frame-pointer step starts from these instead of the copy's */
	bool resume;
	Dwarf_Word resume_pc, resume_regs[DW_X86_NREGS];
	uint32_t resume_set;
};

static char *no_debuginfo_path;

/* Separate debug files are the DSO table's business; CFI comes from the reported files. */
static int find_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = find_no_debuginfo,
	.debuginfo_path = &no_debuginfo_path,
};

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	return 0;
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool read_file_word(struct unwinder *u, Dwarf_Addr addr, Dwarf_Word *result)
{
	const struct tr_ucopy *c = u->cur;
	const struct xpu_rec_mapping *m = maps__find(&u->dt->maps, c->rec.pid, addr, c->rec.ts_ns);
	uint32_t *didx = m ? kmap__get(&u->t->dso_ids, m->dso_id, 0) : NULL;
	int fd = -1;

	if (!didx || addr + 8 > m->end || !dso_table__elf(u->dt, *didx, &fd) || fd < 0)
		return false;
	return pread(fd, result, 8, (off_t)(addr - m->start + m->pgoff)) == 8;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;
	const struct tr_ucopy *c = u->cur;
	uint64_t sp = c->rec.regs[XPU_UREG_SP];

	if (addr >= sp && addr - sp <= c->rec.size && c->rec.size - (addr - sp) >= 8) {
		memcpy(result, c->data + (addr - sp), 8);
		return true;
	}
	if (addr >= c->top_addr && addr - c->top_addr <= c->top_size &&
	    c->top_size - (addr - c->top_addr) >= 8) {
		memcpy(result, c->top_data + (addr - c->top_addr), 8);
		return true;
	}
	if (read_file_word(u, addr, result))
		return true;
	/* within 1 MiB above the copy: the stack the copy did not reach */
	if (addr >= sp && addr - sp < c->rec.size + (1u << 20))
		u->past_copy = true;
	return false;
}

static bool set_resume_registers(Dwfl_Thread *thread, const struct unwinder *u)
{
	unsigned int r;

	dwfl_thread_state_register_pc(thread, u->resume_pc);
	for (r = 0; r < DW_X86_NREGS; r++) {
		if ((u->resume_set >> r & 1) &&
		    !dwfl_thread_state_registers(thread, (int)r, 1, &u->resume_regs[r]))
			return false;
	}
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	const uint64_t *r = u->cur->rec.regs;
	Dwarf_Word bx = r[XPU_UREG_BX], bpsp[2] = { r[XPU_UREG_BP], r[XPU_UREG_SP] };
	Dwarf_Word r12_15[4] = { r[XPU_UREG_R12], r[XPU_UREG_R13], r[XPU_UREG_R14],
				 r[XPU_UREG_R15] };

	if (u->resume)
		return set_resume_registers(thread, u);
	dwfl_thread_state_register_pc(thread, r[XPU_UREG_IP]);
	return dwfl_thread_state_registers(thread, DW_X86_RBX, 1, &bx) &&
	       dwfl_thread_state_registers(thread, DW_X86_RBP, 2, bpsp) &&
	       dwfl_thread_state_registers(thread, DW_X86_R12, 4, r12_15);
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

/* Reports every ELF file mapped by pid in generation gen, at its load bias. */
/* The Dwfl of one process generation: its ELF files reported at their biases. */
static void session_build(struct unwinder *u, uint32_t pid, uint32_t gen, struct uw_session *ns)
{
	const struct pid_maps *pm = maps__pid(&u->dt->maps, pid);
	size_t i;

	ns->dwfl = dwfl_begin(&dwfl_cbs);
	ns->ok = false;
	ns->nfiles = 0;
	if (!ns->dwfl || !pm)
		return;
	dwfl_report_begin(ns->dwfl);
	for (i = 0; i < pm->n; i++) {
		const struct xpu_rec_mapping *m = &pm->m[i];
		uint32_t *didx = kmap__get(&u->t->dso_ids, m->dso_id, 0);
		const char *path, *base;
		uint64_t bias;
		int fd;

		if (!didx || trace__generation(u->t, pid, m->ts_ns) != gen)
			continue;
		path = dso_table__elf(u->dt, *didx, &fd);
		if (!path || dso_table__bias(u->dt, *didx, m, &bias))
			continue;
		base = strrchr(u->t->dsos[*didx].path, '/');
		base = base ? base + 1 : u->t->dsos[*didx].path;
		/* the same file twice (several exec mappings) or an overlap just fails: fine */
		if (dwfl_report_elf(ns->dwfl, base, path, -1, bias, true))
			ns->nfiles++;
	}
	dwfl_report_end(ns->dwfl, NULL, NULL);
	ns->ok = dwfl_attach_state(ns->dwfl, NULL, (pid_t)pid, &thread_cbs, u);
}

/*
 * Each Dwfl holds its files open (libdwfl opens a module's file itself), so a trace of many
 * processes held thousands of descriptors, and past the limit walks silently failed. The
 * sessions kept hold at most a share of the descriptor limit (and UW_LIVE_SESSIONS of them);
 * the oldest is ended to make room, and rebuilt if needed again.
 */
static uint32_t files_budget(void)
{
	struct rlimit rl;
	uint64_t b = 1024;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		b = rl.rlim_cur / 2 > 32 ? rl.rlim_cur / 2 - 32 : 8;
	return b > 4096 ? 4096 : b < 8 ? 8 : (uint32_t)b;
}

static void session_evict_oldest(struct unwinder *u)
{
	struct uw_session *old = &u->sess[u->live[u->live_head]];

	if (old->dwfl)
		dwfl_end(old->dwfl);
	old->dwfl = NULL;
	old->evicted = true;
	u->live_files -= old->nfiles;
	u->nlive--;
	u->live_head = (u->live_head + 1) % UW_LIVE_SESSIONS;
}

static struct uw_session *session_get(struct unwinder *u, uint32_t pid, uint64_t ts)
{
	uint32_t gen = trace__generation(u->t, pid, ts), *v;
	struct uw_session ns = { 0 }, *se;
	bool ins;

	v = kmap__put(&u->sess_idx, pid, gen, u->nsess, &ins);
	if (!v)
		return NULL;
	if (!ins && !u->sess[*v].evicted)
		return &u->sess[*v];
	if (ins && VEC_PUSH(u->sess, u->nsess, u->sess_cap, ns))
		return NULL;
	if (u->nlive == UW_LIVE_SESSIONS)
		session_evict_oldest(u);
	se = &u->sess[*v];
	session_build(u, pid, gen, se);
	se->evicted = false;
	u->live[(u->live_head + u->nlive) % UW_LIVE_SESSIONS] = *v;
	u->nlive++;
	u->live_files += se->nfiles;
	/* never the one just built: it is the newest */
	if (!u->files_budget)
		u->files_budget = files_budget();
	while (u->nlive > 1 && u->live_files > u->files_budget)
		session_evict_oldest(u);
	return se;
}

static enum unwind_stop stop_reason(struct unwinder *u, Dwfl *dwfl);

enum cfi_rule { CFI_NO_FILE, CFI_NONE, CFI_RA_DEFINED, CFI_RA_UNDEFINED };
static enum cfi_rule cfi_ra_rule(Dwfl *dwfl, Dwarf_Addr pc);

/*
 * Whether libdw made up the caller at pc: where a function of a known file has no CFI, libdw
 * follows rbp as a frame pointer, unchecked, and in code that keeps none rbp holds any value
 * (a pointer to a local struct gave tv_nsec as a "return address"). A caller in no file of a
 * callee without CFI is such a guess; the walk ends before it, and walk_fp_fallback steps out
 * of the callee with the checks of fp_step instead. (A caller in no file of a callee with CFI
 * is JIT code, which the CFI found: kept.)
 */
static bool made_up_caller(struct unwinder *u, Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwarf_Addr callee = u->ips[u->nips - 1] - (u->nips > 1);

	return !dwfl_addrmodule(dwfl, pc - 1) && dwfl_addrmodule(dwfl, callee) &&
	       cfi_ra_rule(dwfl, callee) == CFI_NONE;
}

static int uw_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	/*
	 * dwfl_frame_pc's activation check unwinds this frame: the reads of that step come
	 * after here, so a walk's last flag is its failing step's.
	 */
	u->past_copy = false;
	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/*
	 * Symbolization looks up return address - 1 for every frame but the leaf. A frame
	 * interrupted by a signal holds an exact pc: store pc + 1 so the lookup gets pc.
	 */
	if (u->nips && activation)
		pc++;
	if (u->nips && !activation &&
	    made_up_caller(u, dwfl_thread_dwfl(dwfl_frame_thread(frame)), pc))
		return DWARF_CB_ABORT;
	u->ips[u->nips++] = pc;
	u->regs_set = 0;
	for (unsigned int r = 0; r < DW_X86_NREGS; r++) {
		if ((UW_KEPT_REGS >> r & 1) && !dwfl_frame_reg(frame, r, &u->regs[r]))
			u->regs_set |= 1u << r;
	}
	return u->nips < UW_MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/*
 * Whether ra is a return address: in an ELF module of the walk, right after a call
 * instruction there (call rel32, or call through a register or memory operand).
 */
static bool is_return_address(struct unwinder *u, Dwfl *dwfl, Dwarf_Word ra)
{
	Dwarf_Word w;
	uint8_t b[8];

	if (ra < 4096 || !dwfl_addrmodule(dwfl, ra - 1) || !read_file_word(u, ra - 8, &w))
		return false;
	memcpy(b, &w, 8);		/* b[8 - k] is the byte at ra - k */
	return b[3] == 0xe8 ||					/* call rel32 */
	       (b[6] == 0xff && (b[7] & 0xf8) == 0xd0) ||		/* call *%reg */
	       (b[5] == 0xff && (b[6] & 0xf8) == 0x50) ||		/* call *d8(%reg) */
	       (b[2] == 0xff && (b[3] == 0x15 || (b[3] & 0xf8) == 0x90));	/* *d32(%rip|%reg) */
}

/*
 * Where the CFI walk stopped at code without CFI (JIT code, perf trampolines), the caller's
 * return address and frame, by two rules tried in order:
 *  - the frame-pointer rule: the frame starts at rbp + 16 (CFA), its return address is at
 *    rbp + 8 and the caller's rbp at rbp (code that keeps frame pointers);
 *  - else the first word of the next UW_SCAN_WORDS above sp that is a return address (code
 *    that keeps none, such as CPython 3.12's trampoline: sub $8,%rsp; call *%rcx; ...): CFA
 *    just above it, rbp unchanged.
 * Both need the return address to follow a call instruction in a file we have. Sets the
 * registers a resumed walk starts from: pc just inside the call (return address - 1, as for
 * any caller), the other callee-saved registers as the frame had them. Returns false when
 * neither applies; *why becomes "copy end" when the frame lies above the copied bytes.
 */
#define UW_SCAN_WORDS 8

static bool fp_step(struct unwinder *u, Dwfl *dwfl, enum unwind_stop *why, bool *scanned)
{
	const uint32_t need = 1u << DW_X86_RBP | 1u << DW_X86_RSP;
	Dwarf_Word bp = u->regs[DW_X86_RBP], sp = u->regs[DW_X86_RSP], ra = 0, caller_bp = 0;
	Dwarf_Word cfa = 0;
	unsigned int i;

	if (!(u->regs_set >> DW_X86_RSP & 1))
		return false;
	u->past_copy = false;
	*scanned = false;
	if ((u->regs_set & need) == need && bp >= sp && bp - sp <= UW_FP_MAX_FRAME && !(bp & 7) &&
	    uw_memory_read(NULL, bp + 8, &ra, u) && uw_memory_read(NULL, bp, &caller_bp, u) &&
	    is_return_address(u, dwfl, ra)) {
		cfa = bp + 16;
	} else {
		caller_bp = bp;
		for (i = 0; i < UW_SCAN_WORDS && !cfa; i++) {
			if (uw_memory_read(NULL, sp + 8 * i, &ra, u) && is_return_address(u, dwfl, ra))
				cfa = sp + 8 * i + 8;
		}
		*scanned = true;
	}
	if (!cfa) {
		if (u->past_copy)
			*why = UW_STOP_COPY_END;
		return false;
	}
	memcpy(u->resume_regs, u->regs, sizeof(u->regs));
	u->resume_set = u->regs_set & UW_KEPT_REGS;
	u->resume_regs[DW_X86_RBP] = caller_bp;
	u->resume_regs[DW_X86_RSP] = cfa;
	u->resume_pc = ra - 1;
	return true;
}

/* The frame-pointer rule where the CFI walk stopped, then CFI again from the caller. */
static enum unwind_stop walk_fp_fallback(struct unwinder *u, Dwfl *dwfl, pid_t tid,
					 enum unwind_stop why, struct unwind_stats *st)
{
	bool used = false, scanned;
	int k;

	for (k = 0; k < UW_FP_MAX_STEPS && u->nips && u->nips < UW_MAX_FRAMES &&
		    (why == UW_STOP_NO_FILE || why == UW_STOP_NO_CFI); k++) {
		unsigned int before = u->nips;

		if (!fp_step(u, dwfl, &why, &scanned))
			break;
		u->resume = true;
		dwfl_getthread_frames(dwfl, tid, uw_frame, u);
		u->resume = false;
		if (u->nips == before)
			break;
		st->fp_frames++;
		st->fp_scanned += scanned;
		used = true;
		why = stop_reason(u, dwfl);
	}
	st->fp_walks += used;
	return why;
}

/* What the CFI (.eh_frame, else .debug_frame) says about the return address at pc. */
static enum cfi_rule cfi_ra_rule(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	enum cfi_rule rule = CFI_NONE;
	int pass;

	if (!mod)
		return CFI_NO_FILE;
	for (pass = 0; pass < 2 && rule == CFI_NONE; pass++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = pass ? dwfl_module_dwarf_cfi(mod, &bias) :
					dwfl_module_eh_cfi(mod, &bias);
		Dwarf_Op ops_mem[3], *ops;
		Dwarf_Frame *frame;
		size_t nops;
		int ra;

		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame))
			continue;
		ra = dwarf_frame_info(frame, NULL, NULL, NULL);
		/* "undefined" is no ops, with ops pointing at ops_mem ("same value" has NULL) */
		rule = ra >= 0 && !dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) &&
		       !nops && ops == ops_mem ? CFI_RA_UNDEFINED : CFI_RA_DEFINED;
		free(frame);
	}
	return rule;
}

/*
 * Why a walk ended; u->ips holds its frames. libdw's return code cannot tell: it also ends
 * "cleanly" when the return address cannot be read, so the last frame's CFI is asked.
 */
static enum unwind_stop stop_reason(struct unwinder *u, Dwfl *dwfl)
{
	enum cfi_rule rule;

	if (u->nips >= UW_MAX_FRAMES)
		return UW_STOP_MAX_FRAMES;
	if (!u->nips)
		return UW_STOP_NO_FILE;
	/* the leaf's pc is exact; callers' are return addresses (see uw_frame) */
	rule = cfi_ra_rule(dwfl, u->ips[u->nips - 1] - (u->nips > 1));
	if (rule == CFI_RA_UNDEFINED)
		return UW_STOP_OUTERMOST;
	if (u->past_copy)
		return UW_STOP_COPY_END;
	if (rule == CFI_NO_FILE)
		return UW_STOP_NO_FILE;
	return rule == CFI_NONE ? UW_STOP_NO_CFI : UW_STOP_BAD_FRAME;
}

/* A walk for a symbol pack, keyed by its event as recorded (the archive reads one trace). */
static int keep_walk(struct xpa_walks_builder *b, const struct tr_ucopy *c, enum unwind_stop why,
		     const uint64_t *ips, unsigned int nips)
{
	struct xpa_walk w = { .ts = c->raw_ts, .pid = c->raw_pid, .tid = c->raw_tid,
			      .for_type = (uint16_t)c->rec.for_type, .reason = (uint8_t)why,
			      .nips = nips };

	return xpa_walks__add(b, &w, ips);
}

static int count_stop(struct unwind_stats *st, enum unwind_stop why, const struct tr_ucopy *c,
		      uint32_t stack_id)
{
	struct unwind_stop_rec r = { .reason = why, .pid = c->rec.pid, .ts = c->rec.ts_ns,
				     .stack_id = stack_id };
	uint32_t *v;
	bool ins;

	st->stops[why]++;
	v = kmap__put(&st->stop_idx, why, stack_id, st->nstop_recs, &ins);
	if (!v || (ins && VEC_PUSH(st->stop_recs, st->nstop_recs, st->stop_recs_cap, r)))
		return -ENOMEM;
	st->stop_recs[*v].count++;
	return 0;
}

/*
 * Unwinds copy c and makes the stack that replaces stack_id: its kernel frames, then the
 * DWARF user frames. Fewer than 2 DWARF frames means the unwind found no CFI to start from:
 * the frame-pointer stack is kept (*out = stack_id).
 */
static int unwind_one(struct unwinder *u, const struct tr_ucopy *c, uint32_t stack_id,
		      uint32_t *out, struct unwind_stats *st)
{
	const struct tr_stack *old = derived_stacks__get(u->d, stack_id);
	struct uw_session *se = session_get(u, c->rec.pid, c->rec.ts_ns);
	static const uint64_t none[1];
	enum unwind_stop why = UW_STOP_NO_FILE;
	int err;

	*out = stack_id;
	if (!se)
		return -ENOMEM;
	u->nips = 0;
	u->past_copy = false;
	if (se->ok) {
		u->cur = c;
		dwfl_getthread_frames(se->dwfl, (pid_t)c->rec.tid, uw_frame, u);
		why = stop_reason(u, se->dwfl);
		why = walk_fp_fallback(u, se->dwfl, (pid_t)c->rec.tid, why, st);
		u->cur = NULL;
	}
	if (u->nips < 2 && old && old->nr_user) {
		st->failed++;
		return 0;
	}
	if (!u->nips) {
		st->failed++;
		return 0;
	}
	st->used++;
	st->frames += u->nips;
	err = derived_stacks__make(u->d, &u->made, old ? old->ips : none, old ? old->nr_kernel : 0,
				   u->ips, (uint16_t)u->nips, out);
	if (!err && st->walks)
		err = keep_walk(st->walks, c, why, u->ips, u->nips);
	return err ? err : count_stop(st, why, c, *out);
}

/*
 * The host's walk of copy c from the symbol pack in place of unwinding it here: the same
 * frames and the same reason it ended, so completeness reads as on the host. A copy the pack
 * has no walk for failed there too.
 */
static int pack_one(struct unwinder *u, const struct tr_ucopy *c, uint32_t stack_id,
		    uint32_t *out, struct unwind_stats *st)
{
	const struct tr_stack *old = derived_stacks__get(u->d, stack_id);
	const struct xpa_walk *w = xpa_walks__find(u->pack, c->rec.for_type, c->raw_pid,
						   c->raw_tid, c->raw_ts);
	static const uint64_t none[1];
	int err;

	*out = stack_id;
	if (!w || w->reason >= UW_STOP_N || w->nips > UW_MAX_FRAMES) {
		st->failed++;
		return 0;
	}
	st->used++;
	st->pack_walks++;
	st->frames += w->nips;
	err = derived_stacks__make(u->d, &u->made, old ? old->ips : none, old ? old->nr_kernel : 0,
				   u->pack->ips + w->first, (uint16_t)w->nips, out);
	/* `archive --add`: the host's walk goes into the new pack as it was */
	if (!err && st->walks)
		err = keep_walk(st->walks, c, (enum unwind_stop)w->reason, u->pack->ips + w->first,
				w->nips);
	return err ? err : count_stop(st, w->reason, c, *out);
}

const char *unwind__stop_name(enum unwind_stop r)
{
	static const char *const names[UW_STOP_N] = {
		[UW_STOP_OUTERMOST] = "outermost", [UW_STOP_COPY_END] = "copy end",
		[UW_STOP_NO_FILE] = "no file", [UW_STOP_NO_CFI] = "no cfi",
		[UW_STOP_BAD_FRAME] = "bad frame", [UW_STOP_MAX_FRAMES] = "max frames",
	};

	return r < UW_STOP_N ? names[r] : "?";
}

bool unwind__fp_too_short(const struct trace *t, uint64_t complete, uint64_t total)
{
	return t->has_session && t->session.stack_mode == XPU_STACK_FP && total >= 20 &&
	       complete * 2 < total;
}

const char *unwind__hint(const struct trace *t, const struct unwind_stats *uw, uint64_t complete,
			 uint64_t total)
{
	uint32_t mode = t->has_session ? t->session.stack_mode : 0;

	if (unwind__copy_too_small(uw)) {
		/* -g cfi walks the whole stack; its copies are of the default's size */
		if (mode == XPU_STACK_CFI)
			return "most incomplete walks ran out of copied stack: record with "
			       UW_MAX_COPY_MODE;
		return "most incomplete walks ran out of copied stack: record with "
		       UW_DEFAULT_MODE " (the default: it walks the whole stack) or " UW_MAX_COPY_MODE;
	}
	if (unwind__fp_too_short(t, complete, total))
		return "most stacks end early (code without frame pointers): record with "
		       UW_DEFAULT_MODE " (the default)";
	/* a BPF walk without copies that fell short: the copies, unwound offline, are the check */
	if (mode == XPU_STACK_CFI && !uw->copies && total >= 20 && complete * 2 < total)
		return "most stacks end early (see cfi_* above): record with -g cfi,check or "
		       "-g dwarf,32768,32768 to compare";
	return NULL;
}

bool unwind__copy_too_small(const struct unwind_stats *st)
{
	uint64_t short_walks = st->used - st->stops[UW_STOP_OUTERMOST];

	/* worth saying when over a tenth of the walks fell short, mostly at the copy's end */
	return (st->max_copy < 60u << 10 || !st->top_bytes) && short_walks * 10 > st->used &&
	       st->stops[UW_STOP_COPY_END] * 2 > short_walks;
}

bool unwind__outermost(const struct unwind_stats *st, uint32_t stack_id)
{
	return kmap__get(&st->stop_idx, UW_STOP_OUTERMOST, stack_id) != NULL;
}

void unwind__free(struct unwind_stats *st)
{
	free(st->stop_recs);
	kmap__free(&st->stop_idx);
	if (st->walks)
		xpa_walks__free(st->walks);
	free(st->walks);
	memset(st, 0, sizeof(*st));
}

/* A copy's header and bytes; its size is cut to what the record holds (load.c counted it). */
static bool get_copy(const struct trace_record *rec, struct tr_remap *rm, struct tr_ucopy *c)
{
	uint32_t tail_size = 0;

	c->data = trace_record__get(rec, &c->rec, sizeof(c->rec), &tail_size);
	c->raw_pid = c->rec.pid;
	c->raw_tid = c->rec.tid;
	c->raw_ts = c->rec.ts_ns;
	if (rm)
		tr_remap__record(rm, rec->type, &c->rec);
	if (c->rec.size > tail_size)
		c->rec.size = tail_size;
	if (c->rec.size > XPU_STACK_COPY_MAX_BYTES)
		c->rec.size = XPU_STACK_COPY_MAX_BYTES;
	return c->data || !c->rec.size;
}

/*
 * Which sample, launch (index | OWNER_LAUNCH), off-CPU block (index | OWNER_OFF_CPU) or
 * autograd node (index | OWNER_AG_NODE, both bits) each copy belongs to.
 */
#define OWNER_LAUNCH 0x80000000u
#define OWNER_OFF_CPU 0x40000000u
#define OWNER_AG_NODE (OWNER_LAUNCH | OWNER_OFF_CPU)
#define OWNER_INDEX 0x3fffffffu
#define OWNER_DONE UINT32_MAX

static int map_owners(const struct trace *t, struct kmap *owners)
{
	size_t i;

	if (t->nsamples > OWNER_INDEX || t->nlaunches > OWNER_INDEX || t->noffcpus > OWNER_INDEX ||
	    t->nag_nodes > OWNER_INDEX)
		return -ENOMEM;
	for (i = 0; i < t->nag_nodes; i++) {
		const struct xpu_rec_autograd_node *n = &t->ag_nodes[i];

		if (!kmap__put(owners, (uint64_t)XPU_REC_AUTOGRAD_NODE << 32 | n->tid, n->ts_ns,
			       (uint32_t)i | OWNER_AG_NODE, NULL))
			return -ENOMEM;
	}
	for (i = 0; i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];

		if (!kmap__put(owners, (uint64_t)XPU_REC_OFF_CPU << 32 | o->tid, o->ts_ns,
			       (uint32_t)i | OWNER_OFF_CPU, NULL))
			return -ENOMEM;
	}
	for (i = 0; i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *smp = &t->samples[i];

		if (!kmap__put(owners, (uint64_t)XPU_REC_CPU_SAMPLE << 32 | smp->tid, smp->ts_ns,
			       (uint32_t)i, NULL))
			return -ENOMEM;
	}
	for (i = 0; i < t->nlaunches; i++) {
		const struct xpu_rec_gpu_launch *l = &t->launches[i];

		if (!kmap__put(owners, (uint64_t)XPU_REC_GPU_LAUNCH << 32 | l->tid, l->ts_ns,
			       (uint32_t)i | OWNER_LAUNCH, NULL))
			return -ENOMEM;
	}
	return 0;
}

/* Unwinds one streamed copy for its owner, if it has one that is still without. */
static int apply_copy(struct unwinder *u, struct kmap *owners, const struct tr_ucopy *c,
		      struct unwind_stats *st)
{
	const struct trace *t = u->t;
	uint32_t *v, *stack_id, pid;

	st->copies++;
	st->copy_bytes += c->rec.size;
	st->top_bytes += c->top_size;
	if (c->rec.size > st->max_copy)
		st->max_copy = c->rec.size;
	if (c->rec.regs_abi != XPU_REGS_X86_64)
		return 0;
	v = kmap__get(owners, (uint64_t)c->rec.for_type << 32 | c->rec.tid, c->rec.ts_ns);
	if (!v || *v == OWNER_DONE)
		return 0;
	if ((*v & OWNER_AG_NODE) == OWNER_AG_NODE) {
		pid = t->ag_nodes[*v & OWNER_INDEX].pid;
		stack_id = &u->d->ag_node_stack[*v & OWNER_INDEX];
	} else if (*v & OWNER_LAUNCH) {
		pid = t->launches[*v & OWNER_INDEX].pid;
		stack_id = &u->d->launch_stack[*v & OWNER_INDEX];
	} else if (*v & OWNER_OFF_CPU) {
		pid = t->offcpus[*v & OWNER_INDEX].pid;
		stack_id = &u->d->offcpu_stack[*v & OWNER_INDEX];
	} else {
		pid = t->samples[*v].pid;
		stack_id = &u->d->sample_stack[*v];
	}
	if (pid != c->rec.pid)
		return 0;
	*v = OWNER_DONE;
	st->matched++;
	if (u->pack)
		return pack_one(u, c, *stack_id, stack_id, st);
	return unwind_one(u, c, *stack_id, stack_id, st);
}

/* Whether a USER_STACK_TOP record belongs to copy c, and if so attaches its bytes. */
static bool attach_top(const struct trace_record *rec, struct tr_remap *rm, struct tr_ucopy *c)
{
	struct xpu_rec_user_stack_top top;
	uint32_t tail_size = 0;
	const uint8_t *data = trace_record__get(rec, &top, sizeof(top), &tail_size);

	if (rm)
		tr_remap__record(rm, rec->type, &top);
	if (!data || top.ts_ns != c->rec.ts_ns || top.tid != c->rec.tid ||
	    top.pid != c->rec.pid || top.for_type != c->rec.for_type)
		return false;
	c->top_addr = top.addr;
	c->top_size = top.size < tail_size ? top.size : tail_size;
	if (c->top_size > XPU_STACK_TOP_MAX_BYTES)
		c->top_size = XPU_STACK_TOP_MAX_BYTES;
	c->top_data = data;
	return true;
}

/*
 * The host's walks of the trace in bytes (by the uuid of its header) from any symbol pack the
 * DSO table opened, or NULL. The frame-pointer counts are the host's too.
 */
static const struct xpa_walks *pack_walks(struct dso_table *dt, const void *bytes, size_t size,
					  struct unwind_stats *st)
{
	const struct xpu_file_header *h = bytes;
	const struct xpa_walks *w;

	if (size < sizeof(*h))
		return NULL;
	w = dso_table__walks(dt, h->uuid);
	if (w) {
		st->fp_frames += w->h->fp_frames;
		st->fp_scanned += w->h->fp_scanned;
		st->fp_walks += w->h->fp_walks;
	}
	return w;
}

/*
 * Streams the copies of one trace file from a second pass over its bytes (through rm: a part
 * of merged traces), so memory stays bounded by one copy however many there are. The first
 * copy of a (record type, tid, timestamp) is used. A copy waits (its bytes saved) for the
 * USER_STACK_TOP that may follow it.
 */
static int stream_copies(struct unwinder *u, struct kmap *owners, const struct trace_reader *src,
			 struct tr_remap *rm, uint8_t *saved, struct unwind_stats *st)
{
	struct tr_ucopy pending = { 0 };
	bool have_pending = false;
	struct trace_reader *r;
	struct trace_record rec;
	const void *bytes;
	char errbuf[160];
	size_t size;
	int err = 0;

	bytes = trace_reader__bytes(src, &size);
	/* as far as the first pass read: past a damage or --max-records nothing was kept */
	if (trace_reader__status(src)->bytes_valid < size)
		size = trace_reader__status(src)->bytes_valid;
	u->pack = pack_walks(u->dt, bytes, size, st);
	r = trace_reader__open_mem(bytes, size, errbuf, sizeof(errbuf));
	if (!r)
		return -ENOMEM;		/* the same bytes opened once already */
	while (!err && trace_reader__next(r, &rec)) {
		progress__update("unwinding stacks", trace_reader__status(r)->bytes_valid, size);
		if (rec.type == XPU_REC_USER_STACK_TOP && have_pending) {
			if (attach_top(&rec, rm, &pending)) {
				have_pending = false;
				err = apply_copy(u, owners, &pending, st);
			}
			continue;
		}
		if (rec.type != XPU_REC_USER_STACK_COPY)
			continue;
		if (have_pending) {
			have_pending = false;
			err = apply_copy(u, owners, &pending, st);
		}
		if (err || !get_copy(&rec, rm, &pending))
			continue;
		/* the reader reuses its buffer: keep the bytes until a top window comes or not */
		if (pending.rec.size)
			memcpy(saved, pending.data, pending.rec.size);
		pending.data = saved;
		pending.top_size = 0;
		have_pending = true;
	}
	if (!err && have_pending)
		err = apply_copy(u, owners, &pending, st);
	trace_reader__close(r);
	return err;
}

/* Unwinds the copies of the trace, or of each trace merged into it. */
int unwind__apply(struct derived_stacks *d, struct dso_table *dt, bool keep_walks,
		  struct unwind_stats *st)
{
	const struct trace *t = d->t;
	struct unwinder u = { .t = t, .d = d, .dt = dt, .made.next_id = UW_FIRST_STACK_ID };
	struct kmap owners = { 0 };
	uint8_t *saved = NULL;
	size_t i;
	int err;

	unwind__free(st);
	if (keep_walks) {
		st->walks = calloc(1, sizeof(*st->walks));
		if (!st->walks)
			return -ENOMEM;
	}
	if (!t->nucopies || (!t->reader && !t->nparts))
		return 0;
	err = map_owners(t, &owners);
	saved = err ? NULL : malloc(XPU_STACK_COPY_MAX_BYTES);
	if (!err && !saved)
		err = -ENOMEM;
	if (!err && t->reader)
		err = stream_copies(&u, &owners, t->reader, NULL, saved, st);
	for (i = 0; !err && i < t->nparts; i++) {
		struct tr_remap rm = t->parts[i].rm;

		if (t->parts[i].reader)
			err = stream_copies(&u, &owners, t->parts[i].reader, &rm, saved, st);
	}
	free(saved);
	for (i = 0; i < u.nsess; i++) {
		if (u.sess[i].dwfl)
			dwfl_end(u.sess[i].dwfl);
	}
	free(u.sess);
	kmap__free(&u.sess_idx);
	kmap__free(&u.made.dedup);
	kmap__free(&owners);
	return err;
}
