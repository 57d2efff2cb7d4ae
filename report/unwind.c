// SPDX-License-Identifier: MIT
/*
 * DWARF unwinding of stack copies, offline. One Dwfl per (pid, exec generation) holds the
 * process's ELF modules, reported from its MAPPING records with the files the symbolizer
 * found by build-id (local, debug dirs, --symfs, archive). A copy is unwound by libdw from its
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
#include <unistd.h>

#include "profile.h"
#include "unwind.h"

#define UW_MAX_FRAMES 256
/* Ids of stacks made here: above any the writer hands out (it counts up from 1). */
#define UW_FIRST_STACK_ID 0x80000000u

/* x86-64 DWARF register numbers */
enum { DW_X86_RBX = 3, DW_X86_RBP = 6, DW_X86_RSP = 7, DW_X86_R12 = 12 };

struct uw_session {
	Dwfl *dwfl;
	bool ok;
};

struct unwinder {
	struct trace *t;
	struct symbolizer *s;
	struct kmap sess_idx;		/* {pid, gen} -> sessions index */
	struct uw_session *sess;
	size_t nsess, sess_cap;
	struct stack_maker made;	/* the stacks the walks made */
	/* the copy being unwound */
	const struct tr_ucopy *cur;
	uint64_t ips[UW_MAX_FRAMES];
	unsigned int nips;
	bool past_copy;			/* a read since the last frame wanted bytes above the copy */
};

static char *no_debuginfo_path;

/* Separate debug files are the symbolizer's business; CFI comes from the reported files. */
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
	const struct xpu_rec_mapping *m = maps__find(&u->s->maps, c->rec.pid, addr, c->rec.ts_ns);
	uint32_t *didx = m ? kmap__get(&u->t->dso_ids, m->dso_id, 0) : NULL;
	int fd = -1;

	if (!didx || addr + 8 > m->end || !symbolizer__dso_elf(u->s, *didx, &fd) || fd < 0)
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

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	const uint64_t *r = u->cur->rec.regs;
	Dwarf_Word bx = r[XPU_UREG_BX], bpsp[2] = { r[XPU_UREG_BP], r[XPU_UREG_SP] };
	Dwarf_Word r12_15[4] = { r[XPU_UREG_R12], r[XPU_UREG_R13], r[XPU_UREG_R14],
				 r[XPU_UREG_R15] };

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
static struct uw_session *session_get(struct unwinder *u, uint32_t pid, uint64_t ts)
{
	uint32_t gen = trace__generation(u->t, pid, ts), *v;
	struct uw_session ns = { 0 };
	const struct pid_maps *pm = NULL;
	bool ins;
	size_t i;

	v = kmap__put(&u->sess_idx, pid, gen, u->nsess, &ins);
	if (!v)
		return NULL;
	if (!ins)
		return &u->sess[*v];
	if (VEC_PUSH(u->sess, u->nsess, u->sess_cap, ns))
		return NULL;
	for (i = 0; i < u->s->maps.npids; i++) {
		if (u->s->maps.pids[i].pid == pid)
			pm = &u->s->maps.pids[i];
	}
	ns.dwfl = dwfl_begin(&dwfl_cbs);
	if (!ns.dwfl || !pm)
		goto out;
	dwfl_report_begin(ns.dwfl);
	for (i = 0; i < pm->n; i++) {
		const struct xpu_rec_mapping *m = &pm->m[i];
		uint32_t *didx = kmap__get(&u->t->dso_ids, m->dso_id, 0);
		const char *path, *base;
		uint64_t bias;
		int fd;

		if (!didx || trace__generation(u->t, pid, m->ts_ns) != gen)
			continue;
		path = symbolizer__dso_elf(u->s, *didx, &fd);
		if (!path || symbolizer__dso_bias(u->s, *didx, m, &bias))
			continue;
		base = strrchr(u->t->dsos[*didx].path, '/');
		base = base ? base + 1 : u->t->dsos[*didx].path;
		/* the same file twice (several exec mappings) or an overlap just fails: fine */
		dwfl_report_elf(ns.dwfl, base, path, -1, bias, true);
	}
	dwfl_report_end(ns.dwfl, NULL, NULL);
	ns.ok = dwfl_attach_state(ns.dwfl, NULL, (pid_t)pid, &thread_cbs, u);
out:
	u->sess[u->nsess - 1] = ns;
	return &u->sess[u->nsess - 1];
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
	u->ips[u->nips++] = pc;
	return u->nips < UW_MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

enum cfi_rule { CFI_NO_FILE, CFI_NONE, CFI_RA_DEFINED, CFI_RA_UNDEFINED };

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
	const struct tr_stack *old = stack_id ? trace__stack(u->t, stack_id) : NULL;
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
	err = trace__make_stack(u->t, &u->made, old ? old->ips : none, old ? old->nr_kernel : 0, u->ips,
			   (uint16_t)u->nips, out);
	return err ? err : count_stop(st, why, c, *out);
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

bool unwind__fp_too_short(const struct profile *p, uint64_t complete, uint64_t total)
{
	const struct trace *t = p->t;

	return t->has_session && t->session.stack_mode == XPU_STACK_FP && total >= 20 &&
	       complete * 2 < total;
}

const char *unwind__hint(const struct profile *p, uint64_t complete, uint64_t total)
{
	uint32_t mode = p->t->has_session ? p->t->session.stack_mode : 0;

	if (unwind__copy_too_small(&p->uw)) {
		/* -g cfi walks the whole stack; its check copies are the default's size */
		if (mode == XPU_STACK_CFI || !UW_DEFAULT_IS_CFI)
			return "most incomplete walks ran out of copied stack: record with "
			       UW_MAX_COPY_MODE;
		return "most incomplete walks ran out of copied stack: record with "
		       UW_DEFAULT_MODE " (the default: no copy) or " UW_MAX_COPY_MODE;
	}
	if (unwind__fp_too_short(p, complete, total))
		return "most stacks end early (code without frame pointers): record with "
		       UW_DEFAULT_MODE " (the default)";
	/* a BPF walk without copies that fell short: the copies, unwound offline, are the check */
	if (mode == XPU_STACK_CFI && !p->uw.copies && total >= 20 && complete * 2 < total)
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
	memset(st, 0, sizeof(*st));
}

/* A copy's header and bytes; its size is cut to what the record holds (load.c counted it). */
static bool get_copy(const struct trace_record *rec, struct tr_ucopy *c)
{
	uint32_t tail_size = 0;

	c->data = trace_record__get(rec, &c->rec, sizeof(c->rec), &tail_size);
	if (c->rec.size > tail_size)
		c->rec.size = tail_size;
	if (c->rec.size > XPU_STACK_COPY_MAX_BYTES)
		c->rec.size = XPU_STACK_COPY_MAX_BYTES;
	return c->data || !c->rec.size;
}

/* Which sample or launch (launch: index | OWNER_LAUNCH) each copy belongs to. */
#define OWNER_LAUNCH 0x80000000u
#define OWNER_DONE UINT32_MAX

static int map_owners(struct trace *t, struct kmap *owners)
{
	size_t i;

	if (t->nsamples >= OWNER_LAUNCH || t->nlaunches >= OWNER_LAUNCH)
		return -ENOMEM;
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
	struct trace *t = u->t;
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
	if (*v & OWNER_LAUNCH) {
		pid = t->launches[*v & ~OWNER_LAUNCH].pid;
		stack_id = &t->launches[*v & ~OWNER_LAUNCH].stack_id;
	} else {
		pid = t->samples[*v].pid;
		stack_id = &t->samples[*v].stack_id;
	}
	if (pid != c->rec.pid)
		return 0;
	*v = OWNER_DONE;
	st->matched++;
	return unwind_one(u, c, *stack_id, stack_id, st);
}

/* Whether a USER_STACK_TOP record belongs to copy c, and if so attaches its bytes. */
static bool attach_top(const struct trace_record *rec, struct tr_ucopy *c)
{
	struct xpu_rec_user_stack_top top;
	uint32_t tail_size = 0;
	const uint8_t *data = trace_record__get(rec, &top, sizeof(top), &tail_size);

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
 * Streams the copies from a second pass over the trace's bytes, so memory stays bounded by one
 * copy however many there are. The first copy of a (record type, tid, timestamp) is used. A
 * copy waits (its bytes saved) for the USER_STACK_TOP that may follow it.
 */
int unwind__apply(struct trace *t, struct symbolizer *s, struct unwind_stats *st)
{
	struct unwinder u = { .t = t, .s = s, .made.next_id = UW_FIRST_STACK_ID };
	struct tr_ucopy pending = { 0 };
	bool have_pending = false;
	struct kmap owners = { 0 };
	struct trace_reader *r = NULL;
	struct trace_record rec;
	uint8_t *saved = NULL;
	const void *bytes;
	char errbuf[160];
	size_t size, i;
	int err;

	unwind__free(st);
	if (!t->nucopies || !t->reader)
		return 0;
	err = map_owners(t, &owners);
	saved = err ? NULL : malloc(XPU_STACK_COPY_MAX_BYTES);
	if (!err && !saved)
		err = -ENOMEM;
	bytes = trace_reader__bytes(t->reader, &size);
	r = err ? NULL : trace_reader__open_mem(bytes, size, errbuf, sizeof(errbuf));
	if (!err && !r)
		err = -ENOMEM;		/* the same bytes opened once already */
	while (!err && trace_reader__next(r, &rec)) {
		if (rec.type == XPU_REC_USER_STACK_TOP && have_pending) {
			if (attach_top(&rec, &pending)) {
				have_pending = false;
				err = apply_copy(&u, &owners, &pending, st);
			}
			continue;
		}
		if (rec.type != XPU_REC_USER_STACK_COPY)
			continue;
		if (have_pending) {
			have_pending = false;
			err = apply_copy(&u, &owners, &pending, st);
		}
		if (err || !get_copy(&rec, &pending))
			continue;
		/* the reader reuses its buffer: keep the bytes until a top window comes or not */
		if (pending.rec.size)
			memcpy(saved, pending.data, pending.rec.size);
		pending.data = saved;
		pending.top_size = 0;
		have_pending = true;
	}
	if (!err && have_pending)
		err = apply_copy(&u, &owners, &pending, st);
	trace_reader__close(r);
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

static bool is_root_frame(const char *n)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
		"clone", "clone3", "main",
	};
	size_t i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		if (!strcmp(n, roots[i]))
			return true;
	}
	return false;
}

static int stack_complete(struct profile *p, uint32_t pid, uint64_t ts, uint32_t stack_id,
			  uint32_t flags, bool *complete)
{
	const struct tr_stack *st = stack_id ? trace__stack(p->t, stack_id) : NULL;
	const uint32_t *f;
	uint32_t n;
	int err;

	*complete = false;
	if (!st || !st->nr_user)
		return 0;
	err = symbolizer__stack(&p->sym, pid, ts, stack_id, false, &f, &n);
	if (err)
		return err;
	/* root first: f[0] is the outermost user frame */
	/* -g cfi: the BPF walk said so, unless a DWARF walk of a copy replaced its stack */
	*complete = n && (is_root_frame(strpool__str(&p->pool, f[0])) ||
			  unwind__outermost(&p->uw, stack_id) ||
			  ((flags & XPU_EVENT_USER_OUTERMOST) && stack_id < UW_FIRST_STACK_ID));
	return 0;
}

int unwind__complete_rate(struct profile *p, uint64_t *cpu_complete, uint64_t *cpu_total,
			  uint64_t *gpu_complete, uint64_t *gpu_total)
{
	struct trace *t = p->t;
	bool c;
	size_t i;
	int err;

	*cpu_complete = *cpu_total = *gpu_complete = *gpu_total = 0;
	for (i = 0; i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];

		if (!profile__keep(p, s->pid, s->tid))
			continue;
		err = stack_complete(p, s->pid, s->ts_ns, s->stack_id, s->flags, &c);
		if (err)
			return err;
		*cpu_total += 1;
		*cpu_complete += c;
	}
	for (i = 0; i < t->nlaunches; i++) {
		const struct xpu_rec_gpu_launch *l = &t->launches[i];

		if (!profile__keep(p, l->pid, l->tid))
			continue;
		err = stack_complete(p, l->pid, l->ts_ns, l->stack_id, l->flags, &c);
		if (err)
			return err;
		*gpu_total += 1;
		*gpu_complete += c;
	}
	return 0;
}

struct stop_row {
	uint8_t reason;
	uint32_t frame;		/* outermost frame's name id */
	uint64_t count;
};

static int cmp_stop_row(const void *a, const void *b)
{
	const struct stop_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/*
 * Where walks that did not reach the outermost frame ended: counts per reason and per
 * outermost frame, most frequent first, so a user sees which library lacks CFI or whether a
 * bigger copy would help.
 */
int unwind__print_stops(struct profile *p, FILE *out, size_t top)
{
	const struct unwind_stats *st = &p->uw;
	struct stop_row *rows = NULL;
	size_t nrows = 0, cap = 0, i;
	struct kmap idx = { 0 };
	int err = 0, r;

	fprintf(out, "  %-16s", "dwarf stops");
	for (r = 0; r < UW_STOP_N; r++)
		fprintf(out, "%s %s %" PRIu64, r ? "," : "", unwind__stop_name(r), st->stops[r]);
	fprintf(out, "\n");
	for (i = 0; i < st->nstop_recs; i++) {
		const struct unwind_stop_rec *s = &st->stop_recs[i];
		struct stop_row row = { .reason = s->reason };
		const uint32_t *f;
		uint32_t n, *v;
		bool ins;

		if (s->reason == UW_STOP_OUTERMOST)
			continue;
		err = symbolizer__stack(&p->sym, s->pid, s->ts, s->stack_id, false, &f, &n);
		if (err)
			goto out;
		row.frame = n ? f[0] : 0;
		v = kmap__put(&idx, row.reason, row.frame, nrows, &ins);
		if (!v || (ins && VEC_PUSH(rows, nrows, cap, row))) {
			err = -ENOMEM;
			goto out;
		}
		rows[*v].count += s->count;
	}
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), cmp_stop_row);
	for (i = 0; i < nrows && i < top; i++)
		fprintf(out, "    %10" PRIu64 "  %-10s at %s\n", rows[i].count,
			unwind__stop_name(rows[i].reason),
			rows[i].frame ? strpool__str(&p->pool, rows[i].frame) : "?");
	if (nrows > top)
		fprintf(out, "    (%zu more)\n", nrows - top);
out:
	free(rows);
	kmap__free(&idx);
	return err;
}
