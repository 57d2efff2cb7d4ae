// SPDX-License-Identifier: MIT
/*
 * Splices Python frames into native stacks (see pyframes.h).
 *
 * The walk in BPF marks the first frame each evaluator call ran (bit 63 of an entry), so the
 * Python frames fall into groups, one per native activation of _PyEval_EvalFrameDefault, leaf
 * first like the native stack. Matching them leaf to leaf puts each group where its activation
 * is. When the native stack ends before its activations do (frame pointers missing, the copy
 * too short), the groups left are put above the outermost native frame, so Python callers still
 * come above their callees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "sym/pyframes.h"
#include "sym/pyline.h"

#define PYF_MAX_OUT (XPU_STACK_MAX_DEPTH * 2)

struct splicer {
	const struct trace *t;
	struct derived_stacks *d;
	bool lines;
	bool instr;			/* this event's frames keep their instruction */
	bool count;			/* the stats count this splice (its first) */
	struct kmap counted;		/* {stack id, py stack id}, runtime index: spliced */
	struct stack_maker made;
	struct kmap cache;		/* {stack id, py stack id}, runtime index -> new stack id */
	struct pyframes_stats *st;
	uint64_t out[PYF_MAX_OUT];
	/* t->py_runtimes by pid, time and record: a walk over all of them per event was
	   events times runtimes (50,000 of each: 2.9 s) */
	uint32_t *rt;
};

static int cmp_runtime(const void *a, const void *b, void *arg)
{
	const struct xpu_rec_py_runtime *r = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = CMP(r[i].pid, r[j].pid);

	if (!c)
		c = CMP(r[i].ts_ns, r[j].ts_ns);
	return c ? c : CMP(i, j);
}

struct rt_key {
	const struct splicer *sp;
	uint32_t pid;
	uint64_t ts;
};

static bool rt_at_most(size_t i, const void *arg)
{
	const struct rt_key *k = arg;
	const struct xpu_rec_py_runtime *r = &k->sp->t->py_runtimes[k->sp->rt[i]];

	return r->pid < k->pid || (r->pid == k->pid && r->ts_ns <= k->ts);
}

/*
 * The PY_RUNTIME of pid at ts: the latest one seen at or before ts (exec changes it), of
 * several at that time the last recorded.
 */
static const struct xpu_rec_py_runtime *runtime_of(const struct splicer *sp, uint32_t pid,
						   uint64_t ts)
{
	struct rt_key k = { .sp = sp, .pid = pid, .ts = ts };
	size_t i = upper_bound(sp->t->npy_runtimes, rt_at_most, &k);
	const struct xpu_rec_py_runtime *r = i ? &sp->t->py_runtimes[sp->rt[i - 1]] : NULL;

	return r && r->pid == pid ? r : NULL;
}

static bool in_evaluator(const struct xpu_rec_py_runtime *r, uint64_t pc)
{
	return r && ((pc >= r->eval_start && pc < r->eval_end) ||
		     (pc >= r->eval_cold_start && pc < r->eval_cold_end));
}

/* Appends Python frames [from, to) of ps as tagged addresses; returns the new count. */
static size_t put_group(struct splicer *sp, const struct tr_py_stack *ps, size_t from, size_t to,
			size_t n)
{
	size_t i;

	for (i = from; i < to && n < PYF_MAX_OUT; i++) {
		uint64_t e = ps->frames[i];
		uint32_t code = XPU_PY_FRAME_CODE(e);

		sp->out[n++] = PYF_MAKE(code <= PYF_CODE_MAX ? code : 0,
					sp->instr ? XPU_PY_FRAME_INSTR(e) : 0);
	}
	return n;
}

/* Index after the group that starts at i: just past the next frame marked as an entry. */
static size_t group_end(const struct tr_py_stack *ps, size_t i)
{
	while (i < ps->nr && !XPU_PY_FRAME_ENTRY(ps->frames[i]))
		i++;
	return i < ps->nr ? i + 1 : i;
}

static int splice(struct splicer *sp, const struct xpu_rec_py_runtime *rt, uint32_t stack_id,
		  const struct tr_py_stack *ps, uint32_t *out_id)
{
	const struct tr_stack *st = derived_stacks__get(sp->d, stack_id);
	uint16_t nk = st ? st->nr_kernel : 0, nu = st ? st->nr_user : 0;
	size_t n = 0, py = 0, i;

	if (!rt)
		sp->st->no_runtime += sp->count;
	for (i = 0; i < nu && n < PYF_MAX_OUT; i++) {
		uint64_t ip = st->ips[nk + i];

		/* a return address may sit just past a call that ends the function */
		if (py < ps->nr && in_evaluator(rt, i ? ip - 1 : ip)) {
			size_t end = group_end(ps, py);

			n = put_group(sp, ps, py, end, n);
			py = end;
			sp->st->activations += sp->count;
			continue;
		}
		sp->out[n++] = ip;
	}
	while (py < ps->nr) {
		size_t end = group_end(ps, py);

		n = put_group(sp, ps, py, end, n);
		py = end;
		sp->st->outer_groups += sp->count;
	}
	if (n > UINT16_MAX)
		n = UINT16_MAX;
	return derived_stacks__make(sp->d, &sp->made, st ? st->ips : NULL, nk, sp->out, (uint16_t)n,
				    out_id);
}

/*
 * The stack id an event gets: spliced once per {stack, Python stack, runtime, instr}. With
 * instr the frames keep the instruction they ran whatever sp->lines says: a launch's site is
 * a line of the script (model/user_code.h). Frames are named by the symbolizer's own option,
 * so that costs stacks (equal launch stacks are one Python stack record already), not names.
 */
static int rewrite(struct splicer *sp, uint32_t pid, uint64_t ts, uint32_t *stack_id,
		   uint32_t py_stack_id, bool instr)
{
	const struct tr_py_stack *ps = trace__py_stack(sp->t, py_stack_id);
	const struct xpu_rec_py_runtime *rt;
	uint64_t rt_key;
	uint32_t *v, id;
	bool ins;
	int err;

	if (!ps || !ps->nr)
		return 0;
	rt = runtime_of(sp, pid, ts);
	rt_key = (rt ? (uint64_t)(rt - sp->t->py_runtimes) + 1 : 0) | (uint64_t)instr << 63;
	sp->instr = sp->lines || instr;
	v = kmap__put(&sp->cache, (uint64_t)*stack_id << 32 | py_stack_id, rt_key, 0, &ins);
	if (!v)
		return -ENOMEM;
	if (ins) {
		id = *stack_id;	/* kept when the derived stacks are past their bound */
		/* a launch's splice and a sample's of the same stacks count once, as before */
		if (!kmap__put(&sp->counted, (uint64_t)*stack_id << 32 | py_stack_id,
			       rt_key & ~(1ull << 63), 0, &sp->count))
			return -ENOMEM;
		err = splice(sp, rt, *stack_id, ps, &id);
		if (err)
			return err;
		*v = id;
	}
	*stack_id = *v;
	return 1;
}

/* Above the DWARF unwinder's ids (0x80000000 up), below the top. */
#define PYF_FIRST_STACK_ID 0xc0000000u

int pyframes__apply(struct derived_stacks *d, bool lines, struct pyframes_stats *st)
{
	const struct trace *t = d->t;
	struct splicer sp = { .t = t, .d = d, .lines = lines, .st = st,
			      .made.next_id = PYF_FIRST_STACK_ID };
	size_t i;
	int r = 0;

	memset(st, 0, sizeof(*st));
	sp.rt = malloc((t->npy_runtimes ? t->npy_runtimes : 1) * sizeof(*sp.rt));
	if (!sp.rt)
		return -ENOMEM;
	for (i = 0; i < t->npy_runtimes; i++)
		sp.rt[i] = (uint32_t)i;
	qsort_r(sp.rt, t->npy_runtimes, sizeof(*sp.rt), cmp_runtime, (void *)t->py_runtimes);
	for (i = 0; r >= 0 && i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];

		r = rewrite(&sp, s->pid, s->ts_ns, &d->sample_stack[i], s->py_stack_id, false);
		st->samples += r > 0;
	}
	for (i = 0; r >= 0 && i < t->nlaunches; i++) {
		const struct xpu_rec_gpu_launch *l = &t->launches[i];

		r = rewrite(&sp, l->pid, l->ts_ns, &d->launch_stack[i], l->py_stack_id, true);
		st->launches += r > 0;
	}
	for (i = 0; r >= 0 && i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];

		r = rewrite(&sp, o->pid, o->ts_ns, &d->offcpu_stack[i], o->py_stack_id, false);
	}
	for (i = 0; r >= 0 && i < t->nag_nodes; i++) {
		const struct xpu_rec_autograd_node *n = &t->ag_nodes[i];

		r = rewrite(&sp, n->pid, n->ts_ns, &d->ag_node_stack[i], n->py_stack_id, true);
	}
	kmap__free(&sp.cache);
	kmap__free(&sp.counted);
	kmap__free(&sp.made.dedup);
	free(sp.rt);
	return r < 0 ? r : 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

int pyframes__name(const struct trace *t, uint64_t ip, bool lines, char *buf, size_t len)
{
	const struct tr_py_code *c = trace__py_code(t, PYF_CODE(ip));
	const char *name, *file;

	if (!c)
		return snprintf(buf, len, "[python]");
	name = trace__string(t, c->name_str);
	file = trace__string(t, c->filename_str);
	name = name && *name ? name : "[python]";
	file = base_name(file ? file : "");
	if (lines) {
		int line = pyline__line(c->linetable_kind, c->linetable, c->linetable_size,
					c->firstlineno, PYF_INSTR(ip));

		if (line >= 0)
			return snprintf(buf, len, "%s (%s:%d)", name, file, line);
	}
	return snprintf(buf, len, "%s (%s)", name, file);
}

static void version_str(uint32_t hex, char *buf, size_t len)
{
	if (hex & 0xffff)
		snprintf(buf, len, "%u.%u.%u", hex >> 24, hex >> 16 & 0xff, hex >> 8 & 0xff);
	else if (hex)
		snprintf(buf, len, "%u.%u", hex >> 24, hex >> 16 & 0xff);
	else
		snprintf(buf, len, "(unknown version)");
}

static const char *status_text(uint32_t status)
{
	switch (status) {
	case XPU_PY_SUPPORTED: return "Python frames recorded";
	case XPU_PY_UNSUPPORTED_VERSION: return "no Python frames: CPython 3.10-3.13 are supported";
	case XPU_PY_FREE_THREADED: return "no Python frames: free-threaded builds are not supported";
	case XPU_PY_DISABLED: return "no Python frames: recorded with --no-python";
	case XPU_PY_NO_ROOM: return "no Python frames: too many Python processes";
	default: return "unknown status";
	}
}

/* By kind (version, status), then pid, then record: a kind's records and a pid's adjacent. */
static int cmp_kind(const void *a, const void *b, void *arg)
{
	const struct xpu_rec_py_runtime *r = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = CMP(r[i].version_hex, r[j].version_hex);

	if (!c)
		c = CMP(r[i].status, r[j].status);
	if (!c)
		c = CMP(r[i].pid, r[j].pid);
	return c ? c : CMP(i, j);
}

/*
 * A kind of runtime: its first record in a process that kept it, and how many processes have
 * one of that kind; and those that exec'd another program after theirs was found (a fork of
 * Python that runs ptxas, a compiler's workers): the interpreter was in them only between the
 * fork and the exec, so they are named apart, not counted as Python processes.
 */
struct rt_kind {
	uint32_t first;
	size_t procs;
	uint32_t first_gone;		/* UINT32_MAX: none */
	size_t gone;
};

static int cmp_first(const void *a, const void *b)
{
	const struct rt_kind *x = a, *y = b;

	return CMP(x->procs ? x->first : x->first_gone, y->procs ? y->first : y->first_gone);
}

/* Whether pid still ran the image its runtime record r was found in when the trace ended. */
static bool kept(const struct trace *t, const struct xpu_rec_py_runtime *r)
{
	return trace__generation(t, r->pid, r->ts_ns) == trace__generation(t, r->pid, UINT64_MAX);
}

/*
 * Lines listed at most: four supported versions and a few statuses make a handful, so more
 * come from a hostile trace, which would otherwise print a line per record.
 */
#define PY_KINDS_LISTED 32

/* Ends the run of one pid's records [from, to) of kind k: counted as kept or gone. */
static void end_pid(const struct trace *t, const uint32_t *o, size_t from, size_t to,
		    struct rt_kind *k)
{
	size_t i;

	for (i = from; i < to && !kept(t, &t->py_runtimes[o[i]]); i++)
		;
	if (i < to) {
		if (!k->procs || o[i] < k->first)
			k->first = o[i];
		k->procs++;
	} else {
		if (k->first_gone == UINT32_MAX || o[from] < k->first_gone)
			k->first_gone = o[from];
		k->gone++;
	}
}

static void print_kind(const struct trace *t, const struct rt_kind *k, FILE *out,
		       const char *prefix)
{
	const struct xpu_rec_py_runtime *f = &t->py_runtimes[k->procs ? k->first : k->first_gone];
	char v[32], comm[32];

	version_str(f->version_hex, v, sizeof(v));
	if (k->procs)
		fprintf(out, "%sCPython %s in %zu process%s (pid %u): %s", prefix, v, k->procs,
			k->procs == 1 ? "" : "es", f->pid, status_text(f->status));
	else
		fprintf(out, "%sCPython %s in no process that kept it: %s", prefix, v,
			status_text(f->status));
	if (k->gone) {
		const struct xpu_rec_py_runtime *g = &t->py_runtimes[k->first_gone];

		fprintf(out, "; %zu other%s exec'd another program after it was found (%s, pid %u)",
			k->gone, k->gone == 1 ? "" : "s", trace__comm(t, g->pid, comm, sizeof(comm)),
			g->pid);
	}
	fputc('\n', out);
}

/*
 * One line per distinct (version, status), in the order each first comes, with how many
 * processes (each pid once: the recorder finds the interpreter again after an exec or a later
 * library load) and the first one's pid: a shell loop that starts 300 interpreters says so
 * once. Sorted, not compared pair by pair (50,000 kinds: 1.7 s). Past PY_KINDS_LISTED, a line
 * says how many more.
 */
void pyframes__print_runtimes(const struct trace *t, FILE *out, const char *prefix)
{
	const struct xpu_rec_py_runtime *r = t->py_runtimes;
	size_t n = t->npy_runtimes, i, from = 0, nk = 0;
	uint32_t *o = malloc((n ? n : 1) * sizeof(*o));
	struct rt_kind *k = malloc((n ? n : 1) * sizeof(*k));

	if (!o || !k) {
		fprintf(out, "%sCPython: %zu runtime records (out of memory to list them)\n", prefix,
			n);
		goto out;
	}
	for (i = 0; i < n; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, n, sizeof(*o), cmp_kind, (void *)r);
	for (i = 0; i < n; i++) {
		const struct xpu_rec_py_runtime *a = &r[o[i]], *b = i ? &r[o[i - 1]] : NULL;

		if (b && a->version_hex == b->version_hex && a->status == b->status &&
		    a->pid == b->pid)
			continue;
		if (b)
			end_pid(t, o, from, i, &k[nk - 1]);
		from = i;
		if (!b || a->version_hex != b->version_hex || a->status != b->status)
			k[nk++] = (struct rt_kind){ .first_gone = UINT32_MAX };
	}
	if (n)
		end_pid(t, o, from, n, &k[nk - 1]);
	qsort(k, nk, sizeof(*k), cmp_first);
	for (i = 0; i < nk && i < PY_KINDS_LISTED; i++)
		print_kind(t, &k[i], out, prefix);
	if (nk > PY_KINDS_LISTED)
		fprintf(out, "%sCPython: %zu more (version, status) pairs not listed\n", prefix,
			nk - PY_KINDS_LISTED);
out:
	free(o);
	free(k);
}
