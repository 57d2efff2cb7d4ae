// SPDX-License-Identifier: MIT
/*
 * Reads every record of a trace into per-type arrays and id tables. The writer does not sort
 * (GPU records arrive seconds late), so time-ordered arrays are sorted here. Ids are global to
 * the file; a duplicate definition keeps the first one and is counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/sort.h"
#include "trace/load.h"
#include "trace/trace.h"

/*
 * A loader gets a record's fixed part (its struct, zero-filled when the body is shorter and
 * remapped when traces are merged) and the bytes after it.
 */
static int load_string(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_string *s = fixed;
	struct tr_string ts = { 0 };
	uint32_t len = s->len;
	bool ins;

	if (len > tail_size) {
		t->bad_records++;
		len = tail_size;
	}
	if (!s->id) {
		t->bad_records++;
		return 0;
	}
	ts.s = malloc(len + 1);
	if (!ts.s)
		return -ENOMEM;
	if (len)
		memcpy(ts.s, tail, len);
	ts.s[len] = '\0';
	ts.len = len;
	if (!kmap__put(&t->string_ids, s->id, 0, t->nstrings, &ins))
		goto nomem;
	if (!ins) {
		t->dup_ids++;
		free(ts.s);
		return 0;
	}
	if (PUSH(t, strings, ts))
		goto nomem;
	return 0;
nomem:
	free(ts.s);
	return -ENOMEM;
}

static int load_stack(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_stack *s = fixed;
	struct tr_stack st = { 0 };
	uint32_t nr = (uint32_t)s->nr_kernel + s->nr_user;
	bool ins;

	if (!s->id || nr > 2 * XPU_STACK_MAX_DEPTH || (uint64_t)nr * 8 > tail_size) {
		t->bad_records++;
		return 0;
	}
	st.nr_kernel = s->nr_kernel;
	st.nr_user = s->nr_user;
	st.ips = malloc(nr ? nr * 8 : 1);
	if (!st.ips)
		return -ENOMEM;
	if (nr)
		memcpy(st.ips, tail, nr * 8);
	if (!kmap__put(&t->stack_ids, s->id, 0, t->nstacks, &ins))
		goto nomem;
	if (!ins) {
		t->dup_ids++;
		free(st.ips);
		return 0;
	}
	if (PUSH(t, stacks, st))
		goto nomem;
	return 0;
nomem:
	free(st.ips);
	return -ENOMEM;
}

static int load_py_code(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_py_code *c = fixed;
	struct tr_py_code pc = { 0 };
	bool ins;

	if (!c->id || c->linetable_size > tail_size) {
		t->bad_records++;
		return 0;
	}
	pc.name_str = c->name_str;
	pc.filename_str = c->filename_str;
	pc.firstlineno = c->firstlineno;
	pc.linetable_kind = c->linetable_kind;
	pc.linetable_size = c->linetable_size;
	if (c->linetable_size) {
		pc.linetable = malloc(c->linetable_size);
		if (!pc.linetable)
			return -ENOMEM;
		memcpy(pc.linetable, tail, c->linetable_size);
	}
	if (!kmap__put(&t->py_code_ids, c->id, 0, t->npy_codes, &ins))
		goto nomem;
	if (!ins) {
		t->dup_ids++;
		free(pc.linetable);
		return 0;
	}
	if (PUSH(t, py_codes, pc))
		goto nomem;
	return 0;
nomem:
	free(pc.linetable);
	return -ENOMEM;
}

static int load_py_stack(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_py_stack *s = fixed;
	struct tr_py_stack ps = { 0 };
	bool ins;

	if (!s->id || s->nr > XPU_PY_MAX_FRAMES || (uint64_t)s->nr * 8 > tail_size) {
		t->bad_records++;
		return 0;
	}
	ps.nr = s->nr;
	ps.flags = s->flags;
	ps.frames = malloc(s->nr ? s->nr * 8u : 1);
	if (!ps.frames)
		return -ENOMEM;
	if (s->nr)
		memcpy(ps.frames, tail, s->nr * 8u);
	for (uint32_t i = 0; t->rm && i < s->nr; i++)
		ps.frames[i] = tr_remap__py_frame(t->rm, ps.frames[i]);
	if (!kmap__put(&t->py_stack_ids, s->id, 0, t->npy_stacks, &ins))
		goto nomem;
	if (!ins) {
		t->dup_ids++;
		free(ps.frames);
		return 0;
	}
	if (PUSH(t, py_stacks, ps))
		goto nomem;
	return 0;
nomem:
	free(ps.frames);
	return -ENOMEM;
}

static int load_dso(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	struct tr_dso d = { .rec = *(const struct xpu_rec_dso *)fixed };
	bool ins;

	if (!d.rec.id) {
		t->bad_records++;
		return 0;
	}
	if (d.rec.build_id_len > XPU_BUILD_ID_MAX) {
		t->bad_records++;
		d.rec.build_id_len = 0;
	}
	if (!kmap__put(&t->dso_ids, d.rec.id, 0, t->ndsos, &ins))
		return -ENOMEM;
	if (!ins) {
		t->dup_ids++;
		return 0;
	}
	return PUSH(t, dsos, d);
}

/* VDSO_IMAGE: kept with its DSO (defined earlier); the first image of a DSO wins. */
static int load_vdso_image(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_vdso_image *vi = fixed;
	struct tr_dso *d;
	uint32_t *idx;

	if (!vi->size || vi->size > XPU_VDSO_IMAGE_MAX_BYTES || vi->size > tail_size) {
		t->bad_records++;
		return 0;
	}
	idx = kmap__get(&t->dso_ids, vi->dso_id, 0);
	if (!idx) {
		t->bad_dso_refs++;
		return 0;
	}
	d = &t->dsos[*idx];
	if (d->rec.kind != XPU_DSO_VDSO) {
		t->bad_records++;
		return 0;
	}
	if (d->image) {
		t->dup_ids++;
		return 0;
	}
	d->image = malloc(vi->size);
	if (!d->image)
		return -ENOMEM;
	memcpy(d->image, tail, vi->size);
	d->image_len = vi->size;
	return 0;
}

static int load_stats(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	uint32_t n = ((const struct xpu_rec_stats *)fixed)->count;

	if ((uint64_t)n * sizeof(struct xpu_stat_entry) > tail_size) {
		t->bad_records++;
		n = tail_size / sizeof(struct xpu_stat_entry);
	}
	free(t->stats);
	t->nstats = 0;
	t->stats = calloc(n ? n : 1, sizeof(*t->stats));
	if (!t->stats)
		return -ENOMEM;
	if (n)
		memcpy(t->stats, tail, n * sizeof(*t->stats));
	t->nstats = n;
	return 0;
}

static int load_ksyms(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_ksyms *k = fixed;
	uint32_t len = k->len > tail_size ? tail_size : k->len;
	char *np;

	if (t->rm && t->rm->skip_ksyms)
		return 0;
	/* chunks are appended in file order; a gap or repeat is counted, not reordered */
	if (k->seq != t->ksyms_next_seq)
		t->ksyms_out_of_order++;
	t->ksyms_next_seq = k->seq + 1;
	if (t->ksyms_len + len + 1 > 1ull << 30) {
		t->bad_records++;
		return 0;
	}
	np = realloc(t->ksyms, t->ksyms_len + len + 1);
	if (!np)
		return -ENOMEM;
	t->ksyms = np;
	if (len)
		memcpy(t->ksyms + t->ksyms_len, tail, len);
	t->ksyms_len += len;
	t->ksyms[t->ksyms_len] = '\0';
	return 0;
}

/*
 * Copies are only counted here, as recorded (unwind.c reads them again, remapped); a short one
 * is a bad record.
 */
static void count_ucopy(struct trace *t, const struct trace_record *rec)
{
	struct xpu_rec_user_stack_copy c;
	uint32_t tail_size = 0;

	trace_record__get(rec, &c, sizeof(c), &tail_size);
	if (c.size > tail_size || c.size > XPU_STACK_COPY_MAX_BYTES)
		t->bad_records++;
	t->nucopies++;
}

/*
 * A block longer than this is a bad record (no recording lasts a year): it keeps every sum of
 * blocked time, and every end time, far from overflowing.
 */
#define OFF_CPU_MAX_DUR_NS (365ull * 24 * 3600 * 1000000000ull)

static int load_off_cpu(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_off_cpu *o = fixed;

	if (o->dur_ns > OFF_CPU_MAX_DUR_NS || o->ts_ns > UINT64_MAX - OFF_CPU_MAX_DUR_NS) {
		t->bad_records++;
		return 0;
	}
	return PUSH(t, offcpus, *o);
}

/* The part being read when several traces are merged, else NULL. */
static struct tr_part *cur_part(struct trace *t)
{
	return t->nparts ? &t->parts[t->cur_part] : NULL;
}

static int load_session(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_session *s = fixed;
	struct tr_part *p = cur_part(t);

	/* a second session record would be a writer bug: keep the first */
	if (p && !p->has_session) {
		p->session = *s;
		p->has_session = true;
	} else if (!p && !t->has_session) {
		t->session = *s;
		t->has_session = true;
	}
	return 0;
}

static int load_session_end(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_session_end *e = fixed;
	struct tr_part *p = cur_part(t);

	if (p) {
		p->end = *e;
		p->has_end = true;
	} else {
		t->end = *e;
		t->has_end = true;
	}
	return 0;
}

/* Clock pairs: a merged trace keeps one part's (its axis), and each part's uncertainty. */
static int load_clock(struct trace *t, void *fixed, const void *tail, uint32_t tail_size)
{
	const struct xpu_rec_clock_sync *c = fixed;
	struct tr_part *p = cur_part(t);

	if (p) {
		if (!p->nclocks || c->uncertainty_ns < p->clock_unc_min_ns)
			p->clock_unc_min_ns = c->uncertainty_ns;
		if (c->uncertainty_ns > p->clock_unc_max_ns)
			p->clock_unc_max_ns = c->uncertainty_ns;
		p->nclocks++;
	}
	if (t->rm && t->rm->drop_clocks)
		return 0;
	return PUSH(t, clocks, *c);
}

/*
 * How each record type is kept: by a loader of its own, or as its struct appended to an array
 * of struct trace. Types without an entry are only counted.
 */
struct keep {
	int (*load)(struct trace *t, void *fixed, const void *tail, uint32_t tail_size);
	size_t arr, n, cap;	/* offsets in struct trace: the array, its count, its capacity */
	size_t elem;		/* sizeof the struct it holds; 0: not an array */
	bool defines_id;	/* a loader's record kept apart, found by its id */
	/*
	 * A loader that keeps each record's struct in an array of its own elements: the array
	 * and its count (arr, n), the element's size and where the struct is in it, so that the
	 * references the table names can be checked there as in an array of the structs.
	 */
	size_t view_elem, view_rec;
};

#define LOADER(fn) { .load = (fn) }
#define LOADER_ID(fn) { .load = (fn), .defines_id = true }
/* t->field holds elements of type el, with the record's struct at el.member */
#define LOADER_VIEW(fn, id, field, el, member)                                             \
	{ .load = (fn), .defines_id = (id), .arr = offsetof(struct trace, field),          \
	  .n = offsetof(struct trace, n##field), .view_elem = sizeof(el),                  \
	  .view_rec = offsetof(el, member) }
/* t->field holds struct xpu_rec_<st> (else this does not build) */
#define IS_ARRAY_OF(field, st) \
	__builtin_types_compatible_p(__typeof__(*((struct trace *)0)->field), struct xpu_rec_##st)
#define ARRAY(st, field)                                                                   \
	{ .arr = offsetof(struct trace, field), .n = offsetof(struct trace, n##field),     \
	  .cap = offsetof(struct trace, field##_cap),                                      \
	  .elem = sizeof(struct xpu_rec_##st) * sizeof(char[IS_ARRAY_OF(field, st) ? 1 : -1]) }
/* a loader that checks a record before it appends its struct to t->field */
#define LOADER_ARRAY(fn, st, field)                                                        \
	{ .load = (fn), .arr = offsetof(struct trace, field),                              \
	  .n = offsetof(struct trace, n##field),                                           \
	  .view_elem = sizeof(struct xpu_rec_##st) * sizeof(char[IS_ARRAY_OF(field, st) ? 1 : -1]) }

static const struct keep keeps[XPU_REC_TYPE_MAX_KNOWN + 1] = {
	[XPU_REC_SESSION] = LOADER(load_session),
	[XPU_REC_SESSION_END] = LOADER(load_session_end),
	[XPU_REC_CLOCK_SYNC] = LOADER(load_clock),
	[XPU_REC_STRING] = LOADER_ID(load_string),
	[XPU_REC_STACK] = LOADER_ID(load_stack),
	[XPU_REC_DSO] = LOADER_VIEW(load_dso, true, dsos, struct tr_dso, rec),
	[XPU_REC_VDSO_IMAGE] = LOADER(load_vdso_image),
	[XPU_REC_STATS] = LOADER(load_stats),
	[XPU_REC_KSYMS] = LOADER(load_ksyms),
	[XPU_REC_PY_CODE] = LOADER_ID(load_py_code),
	[XPU_REC_PY_STACK] = LOADER_ID(load_py_stack),
	[XPU_REC_OFF_CPU] = LOADER_ARRAY(load_off_cpu, off_cpu, offcpus),
	[XPU_REC_PY_RUNTIME] = ARRAY(py_runtime, py_runtimes),
	[XPU_REC_JIT_SYMBOL] = ARRAY(jit_symbol, jit_syms),
	[XPU_REC_MAPPING] = ARRAY(mapping, mappings),
	[XPU_REC_TASK] = ARRAY(task, tasks),
	[XPU_REC_CPU_SAMPLE] = ARRAY(cpu_sample, samples),
	[XPU_REC_LOST] = ARRAY(lost, lost),
	[XPU_REC_GPU_KERNEL] = ARRAY(gpu_kernel, kernels),
	[XPU_REC_GPU_MEMCPY] = ARRAY(gpu_memcpy, memcpys),
	[XPU_REC_GPU_MEMSET] = ARRAY(gpu_memset, memsets),
	[XPU_REC_GPU_LAUNCH] = ARRAY(gpu_launch, launches),
	[XPU_REC_GPU_DEVICE] = ARRAY(gpu_device, devices),
	[XPU_REC_GPU_PROCESS] = ARRAY(gpu_process, gpu_procs),
	[XPU_REC_GPU_SYNC] = ARRAY(gpu_sync, syncs),
	[XPU_REC_GPU_API] = ARRAY(gpu_api, apis),
	[XPU_REC_NVTX] = ARRAY(nvtx, nvtxs),
	[XPU_REC_GPU_MEMORY] = ARRAY(gpu_memory, memories),
	[XPU_REC_DRIVER_IOCTL] = ARRAY(driver_ioctl, ioctls),
	[XPU_REC_PROCESS_ENV] = ARRAY(process_env, penvs),
	[XPU_REC_AUTOGRAD_NODE] = ARRAY(autograd_node, ag_nodes),
	[XPU_REC_AUTOGRAD_EVAL] = ARRAY(autograd_eval, ag_evals),
	[XPU_REC_AUTOGRAD_PROBE] = ARRAY(autograd_probe, ag_probes),
	[XPU_REC_GPU_GRAPH_NODE] = ARRAY(gpu_graph_node, graph_nodes),
};

static int push(struct trace *t, const struct keep *k, const void *fixed)
{
	uint8_t *base = (uint8_t *)t;
	void **arr = (void **)(base + k->arr);
	size_t *n = (size_t *)(base + k->n);

	if (vec_reserve(arr, (size_t *)(base + k->cap), *n, k->elem))
		return -ENOMEM;
	memcpy((uint8_t *)*arr + *n * k->elem, fixed, k->elem);
	(*n)++;
	return 0;
}

/*
 * What a record holds in memory once kept: its struct in an array, or a loader's fixed part
 * and the bytes after it (what it copies at most), and for a record found by its id also its
 * allocation and id-table slot. Charged before the record is looked at, so that a bad or
 * skipped one costs the same and both reads of a merged trace stop at the same record.
 */
#define KEEP_ID_BYTES 64

static uint64_t keep_cost(const struct keep *k, size_t fixed_size, uint32_t tail_size)
{
	if (k->elem)
		return k->elem;
	return fixed_size + tail_size + (k->defines_id ? KEEP_ID_BYTES : 0);
}

/* 0, 1 when the record would take the trace past t->keep_max (not kept), or -ENOMEM. */
static int load_record(struct trace *t, const struct trace_record *rec)
{
	const struct xpu_record_desc *d = xpu_record_desc(rec->type);
	union {
		uint64_t align;
		uint8_t b[XPU_RECORD_FIXED_MAX];
	} fixed;
	const struct keep *k;
	uint32_t tail_size = 0;
	const void *tail;
	uint64_t cost;

	if (rec->type >= 1 && rec->type <= XPU_REC_TYPE_MAX_KNOWN)
		t->type_counts[rec->type]++;
	else
		t->unknown_types++;
	if (rec->type == XPU_REC_USER_STACK_COPY)
		count_ucopy(t, rec);
	k = d ? &keeps[rec->type] : NULL;
	if (!k || (!k->load && !k->elem))
		return 0;
	tail = trace_record__get(rec, fixed.b, d->size, &tail_size);
	cost = keep_cost(k, d->size, tail_size);
	if (cost > t->keep_max - t->kept_bytes)
		return 1;
	t->kept_bytes += cost;
	if (t->rm)
		tr_remap__record(t->rm, rec->type, fixed.b);
	return k->load ? k->load(t, fixed.b, tail, tail_size) : push(t, k, fixed.b);
}

uint64_t trace__keep_bound(uint64_t file_bytes, uint64_t max_records)
{
	if (max_records)
		return max_records;
	if (file_bytes > TRACE_KEEP_MAX_DEFAULT / TRACE_KEEP_PER_FILE_BYTE)
		return TRACE_KEEP_MAX_DEFAULT;
	if (file_bytes < TRACE_KEEP_MIN_DEFAULT / TRACE_KEEP_PER_FILE_BYTE)
		return TRACE_KEEP_MIN_DEFAULT;
	return file_bytes * TRACE_KEEP_PER_FILE_BYTE;
}

/*
 * Reads the records of r into t while they hold at most max_records bytes (0: the default
 * for the file's size) on top of what t holds already; past that, reading stops as at damage.
 */
static int load_records(struct trace *t, struct trace_reader *r, uint64_t max_records)
{
	uint64_t bound = trace__keep_bound(trace_reader__status(r)->file_bytes, max_records);
	struct trace_record rec;
	char why[160];
	int err = 0;

	t->keep_max = bound > UINT64_MAX - t->kept_bytes ? UINT64_MAX : t->kept_bytes + bound;
	while (!err && trace_reader__next(r, &rec)) {
		progress__update("reading the trace", trace_reader__status(r)->bytes_valid,
				 trace_reader__status(r)->file_bytes);
		err = load_record(t, &rec);
	}
	if (err == 1) {
		snprintf(why, sizeof(why), "stopped in frame %llu: more than %llu bytes of records; "
			 "--max-records=SIZE to raise", (unsigned long long)rec.frame_seq,
			 (unsigned long long)bound);
		trace_reader__stop(r, why);
		err = 0;
	}
	return err;
}

static int cmp_ag_node(const void *a, const void *b)
{
	const struct xpu_rec_autograd_node *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return CMP(x->ts_ns, y->ts_ns);
	return CMP(x->tid, y->tid);
}

static int cmp_ag_eval(const void *a, const void *b)
{
	const struct xpu_rec_autograd_eval *x = a, *y = b;

	if (x->begin_ns != y->begin_ns)
		return CMP(x->begin_ns, y->begin_ns);
	if (x->tid != y->tid)
		return CMP(x->tid, y->tid);
	return CMP(x->depth, y->depth);
}

static int cmp_ts_off_cpu(const void *a, const void *b)
{
	const struct xpu_rec_off_cpu *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return CMP(x->ts_ns, y->ts_ns);
	if (x->tid != y->tid)
		return CMP(x->tid, y->tid);
	return CMP(x->dur_ns, y->dur_ns);
}

static int cmp_ts_sample(const void *a, const void *b)
{
	const struct xpu_rec_cpu_sample *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return CMP(x->ts_ns, y->ts_ns);
	return CMP(x->tid, y->tid);
}

static int cmp_ts_task(const void *a, const void *b)
{
	const struct xpu_rec_task *x = a, *y = b;

	return CMP(x->ts_ns, y->ts_ns);
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct xpu_rec_gpu_kernel *x = a, *y = b;

	return CMP(x->start_ns, y->start_ns);
}

size_t load__kept(const struct trace *t, uint16_t type, const uint8_t **recs, size_t *stride)
{
	const struct keep *k = type <= XPU_REC_TYPE_MAX_KNOWN ? &keeps[type] : NULL;
	const uint8_t *base = (const uint8_t *)t;
	size_t n;

	*recs = NULL;
	*stride = k ? (k->elem ? k->elem : k->view_elem) : 0;
	n = *stride ? *(const size_t *)(base + k->n) : 0;
	if (n)
		*recs = *(const uint8_t *const *)(base + k->arr) + (k->elem ? 0 : k->view_rec);
	return n;
}

/* Reads one file's records (see load.h); load_records bounds them. */
int load__file(struct trace *t, const char *path, uint64_t max_records,
	       struct trace_reader **rp, char *err, size_t errlen)
{
	struct trace_reader *r;
	int ret;

	r = trace_reader__open(path, err, errlen);
	if (!r)
		return -EINVAL;
	if (!t->hdr.magic[0])
		t->hdr = *trace_reader__header(r);
	ret = load_records(t, r, max_records);
	*rp = r;
	if (ret)
		snprintf(err, errlen, "%s: out of memory while loading", path);
	if (t->rm && t->rm->nomem) {
		snprintf(err, errlen, "%s: out of memory while loading", path);
		ret = -ENOMEM;
	}
	return ret;
}

/* After every record is in (see load.h). */
int load__finish(struct trace *t, const char *path, char *err, size_t errlen)
{
	size_t i;
	int ret;

	for (i = 0; i < t->ndsos; i++) {
		const char *p = trace__string(t, t->dsos[i].rec.path_str);

		t->dsos[i].path = p ? p : "";
	}
	/* stable order for equal timestamps keeps outputs deterministic */
	if (t->nsamples)
		qsort(t->samples, t->nsamples, sizeof(*t->samples), cmp_ts_sample);
	if (t->noffcpus)
		qsort(t->offcpus, t->noffcpus, sizeof(*t->offcpus), cmp_ts_off_cpu);
	if (t->nag_nodes)
		qsort(t->ag_nodes, t->nag_nodes, sizeof(*t->ag_nodes), cmp_ag_node);
	if (t->nag_evals)
		qsort(t->ag_evals, t->nag_evals, sizeof(*t->ag_evals), cmp_ag_eval);
	if (t->ntasks)
		qsort(t->tasks, t->ntasks, sizeof(*t->tasks), cmp_ts_task);
	if (t->nkernels)
		qsort(t->kernels, t->nkernels, sizeof(*t->kernels), cmp_kernel);
	load__count_bad_refs(t);
	ret = load__tasks(t);
	if (ret)
		snprintf(err, errlen, "%s: out of memory while loading", path);
	return ret;
}

/* One trace, through rm (NULL: none), within max_records bytes of records (0: the default). */
static int load_one(struct trace *t, const char *path, struct tr_remap *rm, uint64_t max_records,
		    char *err, size_t errlen)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->rm = rm;
	ret = load__file(t, path, max_records, &t->reader, err, errlen);	/* trace__free closes */
	if (t->reader)
		t->st = *trace_reader__status(t->reader);
	t->rm = NULL;
	if (!ret)
		ret = load__finish(t, path, err, errlen);
	if (ret)
		trace__free(t);
	return ret;
}

int trace__load_remap(struct trace *t, const char *path, struct tr_remap *rm, char *err,
		      size_t errlen)
{
	return load_one(t, path, rm, rm ? rm->max_records : 0, err, errlen);
}

int trace__load_max(struct trace *t, const char *path, uint64_t max_records, char *err,
		    size_t errlen)
{
	return load_one(t, path, NULL, max_records, err, errlen);
}

int trace__load(struct trace *t, const char *path, char *err, size_t errlen)
{
	return load_one(t, path, NULL, 0, err, errlen);
}

uint64_t trace__stat(const struct trace *t, uint32_t id)
{
	size_t i;

	for (i = 0; i < t->nstats; i++)
		if (t->stats[i].id == id)
			return t->stats[i].value;
	return 0;
}

uint64_t trace__start(const struct trace *t)
{
	uint64_t lo = UINT64_MAX;
	size_t i;

	if (t->has_session && t->session.start_mono_ns)
		return t->session.start_mono_ns;
	if (t->nsamples)
		lo = t->samples[0].ts_ns;
	if (t->nkernels && t->kernels[0].start_ns < lo)
		lo = t->kernels[0].start_ns;
	for (i = 0; i < t->napis; i++)
		lo = t->apis[i].start_ns < lo ? t->apis[i].start_ns : lo;
	for (i = 0; i < t->nmemcpys; i++)
		lo = t->memcpys[i].start_ns < lo ? t->memcpys[i].start_ns : lo;
	return lo == UINT64_MAX ? 0 : lo;
}

void trace__free(struct trace *t)
{
	size_t i;

	for (i = 0; i <= XPU_REC_TYPE_MAX_KNOWN; i++) {
		if (keeps[i].elem)
			free(*(void **)((uint8_t *)t + keeps[i].arr));
	}
	for (i = 0; i < t->nstrings; i++)
		free(t->strings[i].s);
	for (i = 0; i < t->nstacks; i++)
		free(t->stacks[i].ips);
	for (i = 0; i < t->npy_codes; i++)
		free(t->py_codes[i].linetable);
	for (i = 0; i < t->npy_stacks; i++)
		free(t->py_stacks[i].frames);
	free(t->py_codes);
	free(t->py_stacks);
	kmap__free(&t->py_code_ids);
	kmap__free(&t->py_stack_ids);
	for (i = 0; i < t->nprocs; i++)
		free(t->procs[i].exec_ts);
	for (i = 0; i < t->ndsos; i++)
		free(t->dsos[i].image);
	trace_reader__close(t->reader);
	free(t->strings);
	free(t->stacks);
	free(t->dsos);
	free(t->clocks);
	free(t->offcpus);
	kmap__free(&t->penv_ids);
	for (i = 0; i < t->nparts; i++)
		trace_reader__close(t->parts[i].reader);
	free(t->parts);
	kmap__free(&t->part_of_task);
	free(t->stats);
	free(t->ksyms);
	free(t->procs);
	free(t->threads);
	kmap__free(&t->string_ids);
	kmap__free(&t->stack_ids);
	kmap__free(&t->dso_ids);
	kmap__free(&t->proc_ids);
	kmap__free(&t->thread_ids);
	memset(t, 0, sizeof(*t));
}
