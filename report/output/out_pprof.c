// SPDX-License-Identifier: MIT
/*
 * --format=pprof: the profile as Google's profile.proto message, gzipped, for go tool pprof,
 * speedscope, Pyroscope and Parca. It is built from the same aggregation as folded output
 * (profile.h), so views, weights and filters select the same stacks, and each function's
 * share of the default sample type is its share in folded output (--weight=time in the
 * merged view). The process name, which folded output puts at the root of each stack, is a
 * label here, with the pid, the host and the kind of work.
 *
 * A Location is made per address of an ELF file (its file offset; mappings start at 0), its
 * Lines the function and, with --inline, the calls inlined there, leaf first, with DWARF's
 * source lines where the symbolizer found them (its frame sites). Frames without an address
 * (Python, JIT, kernel, unknown code, GPU leaves) get a Location per name, Python's with file
 * and line. A Function is one per frame name, so pprof's per-function view is folded's; the
 * names of frames that are no C++ symbol are written so that pprof shows them whole
 * (pprof_name). The traced program's executable is the first Mapping, pprof's main binary.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "model/user_code.h"
#include "model/view.h"
#include "output/out.h"

#ifdef XPU_HAVE_PPROF
#include <profile.pb-c.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/*
 * label keys, in the order a sample lists them; tid and device only where known, site and op
 * (model/user_code.h) on launch stacks
 */
enum { LK_PID, LK_TID, LK_COMM, LK_HOST, LK_RANK, LK_KIND, LK_DEVICE, LK_SITE, LK_OP, LK_NR };
static const char *const label_keys[LK_NR] = { "pid", "tid", "comm", "host", "rank", "kind",
					       "device", "site", "op" };

struct pp_func {
	uint32_t name, system, file;	/* string table indexes */
};

struct pp_line {
	uint32_t func;		/* index + 1 */
	int64_t line;
};

struct pp_loc {
	uint32_t mapping;	/* index + 1 */
	uint64_t address;	/* the file offset, for frames of an ELF file */
	uint32_t first, n;	/* its lines in pp.lines, leaf first */
};

struct pp_map {
	uint32_t file, build_id;
	uint64_t limit;
	bool python, lines;
};

struct pp {
	const struct profile *p;
	const struct view_def *v;		/* the view's sample types (model/view.h) */
	struct user_code uc;		/* the main binary, launch sites */
	struct strpool strs;		/* the string table: id = index, 0 is "" */
	struct kmap loc_idx;		/* {0, frame id} or {1 << 32 | dso + 1, offset} -> index */
	struct kmap func_idx;		/* {0, frame id} -> function index */
	struct kmap map_idx;		/* {1, dso index} or {2, name string} -> mapping index */
	struct kmap label_idx;		/* {key, value string} -> label index */
	struct kmap kind_idx;		/* {0, GPU leaf frame} -> enum gpu_work_kind */
	struct pp_loc *locs;		size_t nlocs, locs_cap;
	struct pp_func *funcs;		size_t nfuncs, funcs_cap;
	struct pp_line *lines;		size_t nlines, lines_cap;
	uint64_t *run;			size_t nrun, run_cap;	/* one sample's locations */
	struct pp_map *maps;		size_t nmaps, maps_cap;
	struct pp_label { uint32_t key, str; } *labels;	size_t nlabels, labels_cap;
	/*
	 * Samples are not kept: each is packed and compressed as it is written, its locations
	 * found again (they grew as processes times depth, gigabytes for a small trace).
	 */
	uint64_t *ids;			size_t ids_cap;		/* one sample's, leaf first */
	uint8_t *packed;		size_t packed_cap;	/* one sample, tag and size first */
	uint32_t host_label;		/* index + 1, 0 without a host */
};

static uint32_t str_id(struct pp *pp, const char *s)
{
	return *s ? strpool__intern(&pp->strs, s, strlen(s)) : 0;
}

static uint32_t str_idn(struct pp *pp, const char *s, size_t len)
{
	return len ? strpool__intern(&pp->strs, s, len) : 0;
}

static int64_t value_of(const struct pp *pp, enum view_value v, const struct prof_entry *e)
{
	double period_ns = 1e9 / pp->p->s->freq_hz;

	switch (v) {
	case VIEW_VALUE_SAMPLES:
		return e->samples;
	case VIEW_VALUE_CPU_NS:
		return llround(e->samples * period_ns);
	case VIEW_VALUE_GPU_NS:
		return e->gpu_ns;
	case VIEW_VALUE_BYTES:
		return e->bytes;
	case VIEW_VALUE_TIME_NS:
		return llround(e->samples * period_ns) + (int64_t)(e->gpu_ns + e->off_ns);
	case VIEW_VALUE_RECORDS:
		return e->gpu_n;
	case VIEW_VALUE_OFF_NS:
		return e->off_ns;
	case VIEW_VALUE_BLOCKS:
		return e->off_n;
	}
	return 0;
}

static uint32_t label(struct pp *pp, int key, const char *val)
{
	uint32_t k = str_id(pp, label_keys[key]), s = str_id(pp, val), *ix;
	struct pp_label lab = { k, s };
	bool ins;

	if (!k || (!s && *val))
		return 0;
	ix = kmap__put(&pp->label_idx, k, s, pp->nlabels, &ins);
	if (!ix || (ins && VEC_PUSH(pp->labels, pp->nlabels, pp->labels_cap, lab)))
		return 0;
	return *ix + 1;
}

/* The mapping of a file of the trace (path, build-id), or of a pseudo file ("[python]"). */
static uint32_t mapping_of(struct pp *pp, const struct tr_dso *d, const char *name)
{
	struct pp_map m = { 0 };
	uint64_t ka = d ? 1 : 2, kb;
	uint32_t *ix;
	bool ins;

	if (d) {
		char hex[2 * XPU_BUILD_ID_MAX + 1];
		size_t i, n = d->rec.build_id_len < XPU_BUILD_ID_MAX ? d->rec.build_id_len :
								       XPU_BUILD_ID_MAX;

		kb = d - pp->p->s->t->dsos;
		for (i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", d->rec.build_id[i]);
		hex[2 * n] = '\0';
		m.file = str_id(pp, *d->path ? d->path : name);
		m.build_id = str_id(pp, hex);
		m.limit = d->rec.size_bytes;
	} else {
		m.file = str_id(pp, name);
		kb = m.file;
		m.python = !strcmp(name, "[python]");
	}
	ix = kmap__put(&pp->map_idx, ka, kb, pp->nmaps, &ins);
	if (!ix || (ins && VEC_PUSH(pp->maps, pp->nmaps, pp->maps_cap, m)))
		return 0;
	return *ix + 1;
}

/* A file's basename, "[unknown]" without a path (mapping_of's name for it). */
static const char *dso_name(const struct tr_dso *d)
{
	const char *b = strrchr(d->path, '/');

	return b ? b + 1 : *d->path ? d->path : "[unknown]";
}

/* A Python frame, "qualname (file.py)" or with --python-lines "qualname (file.py:42)". */
static void python_file_line(struct pp *pp, const char *name, struct pp_func *fn,
			     struct pp_line *l)
{
	const char *open = strrchr(name, '('), *end = name + strlen(name), *colon;

	if (!open || end - open < 3 || end[-1] != ')')
		return;
	colon = memrchr(open, ':', end - open);
	if (colon && colon + 1 < end - 1 && strspn(colon + 1, "0123456789") == (size_t)(end - colon - 2))
		l->line = strtol(colon + 1, NULL, 10);
	else
		colon = end - 1;
	fn->file = str_idn(pp, open + 1, colon - open - 1);
}

/* What a frame is, for the names of its Function. */
enum pp_frame {
	PF_SYMBOL,	/* an ELF symbol (demangled C++): pprof may simplify it as C++ */
	PF_OTHER,	/* no symbol: JIT code, kernel, pseudo frames ("[off-cpu] sleeping") */
	PF_PYTHON,	/* "qualname (file.py)" */
	PF_GPU,		/* a GPU leaf, "[gpu] " and the kernel's name */
};

/* UTF-8 look-alikes of the characters go tool pprof reads as C++ syntax in a name */
static const struct { char c; const char *as; } pp_brackets[] = {
	{ '<', "\xe2\x80\xb9" }, { '>', "\xe2\x80\xba" },	/* U+2039, U+203A */
	{ '[', "\xe2\x9f\xa6" }, { ']', "\xe2\x9f\xa7" },	/* U+27E6, U+27E7 */
};

/*
 * The name pprof is to show of a frame that is no C++ symbol (its string id, 0 without memory).
 * pprof takes a Function name that equals its system_name and holds <>, [] or :: for demangled
 * C++, and drops every (...) and <...> of it: "<module> (train.py)" would show blank, and
 * kernels that differ only in their template arguments would be one row. It leaves a name that
 * differs from its system_name as it is, so this one has look-alikes for <> (and [] with
 * square: in Python names, not in the "[gpu] " of GPU leaves), and the system_name is exact.
 */
static uint32_t pprof_name(struct pp *pp, const char *name, bool square)
{
	size_t len = strlen(name), i, k, n = 0;
	char *buf = malloc(3 * len + 1);
	uint32_t id;

	if (!buf)
		return 0;
	for (i = 0; i < len; i++) {
		for (k = 0; k < (square ? 4u : 2u) && pp_brackets[k].c != name[i]; k++)
			;
		if (k < (square ? 4u : 2u)) {
			memcpy(buf + n, pp_brackets[k].as, 3);
			n += 3;
		} else {
			buf[n++] = name[i];
		}
	}
	id = str_idn(pp, buf, n);
	free(buf);
	return id;
}

/*
 * The name and system_name of a frame's Function; 0 or -ENOMEM. An empty name (a kernel the
 * trace names "") is string 0, pprof's "": only a non-empty name without an id is a failure.
 */
static int function_names(struct pp *pp, uint32_t frame, enum pp_frame kind, struct pp_func *fn)
{
	const char *name = strpool__str(&pp->p->s->pool, frame), *system = name;

	/* the kernel's own name: never its name in pprof, which has "[gpu] " */
	if (kind == PF_GPU && !strncmp(name, "[gpu] ", 6))
		system = name + 6;
	fn->system = str_id(pp, system);
	fn->name = kind == PF_SYMBOL ? fn->system : pprof_name(pp, name, kind == PF_PYTHON);
	return (fn->name || !*name) && (fn->system || !*system) ? 0 : -ENOMEM;
}

/* Function (index + 1) of a frame name, made on first use with file; 0 when out of memory. */
static uint32_t function_of(struct pp *pp, uint32_t frame, enum pp_frame kind, uint32_t file)
{
	struct pp_func fn = { .file = file };
	uint32_t *ix;
	bool ins;

	ix = kmap__put(&pp->func_idx, 0, frame, pp->nfuncs, &ins);
	if (!ix)
		return 0;
	if (ins && (function_names(pp, frame, kind, &fn) ||
		    VEC_PUSH(pp->funcs, pp->nfuncs, pp->funcs_cap, fn)))
		return 0;
	return *ix + 1;
}

static int push_location(struct pp *pp, struct pp_loc *l, const uint64_t key[2])
{
	bool ins;

	l->first = pp->nlines - l->n;
	if (!kmap__put(&pp->loc_idx, key[0], key[1], pp->nlocs, &ins) ||
	    VEC_PUSH(pp->locs, pp->nlocs, pp->locs_cap, *l))
		return -ENOMEM;
	return 0;
}

/*
 * Location id (index + 1) of the frames f[0..n) of one address of an ELF file: its function
 * and the calls inlined into it, root first, as lines leaf first; 0 when out of memory.
 */
static uint64_t address_location(struct pp *pp, const uint32_t *f, const struct frame_site *st,
				 uint32_t n)
{
	const struct tr_dso *d = &pp->p->s->t->dsos[st[0].dso - 1];
	uint64_t key[2] = { 1ull << 32 | st[0].dso, st[0].off };
	struct pp_loc l = { .address = st[0].off, .n = n };
	const uint32_t *ix = kmap__get(&pp->loc_idx, key[0], key[1]);
	uint32_t i;

	if (ix)
		return *ix + 1;
	l.mapping = mapping_of(pp, d, dso_name(d));
	if (!l.mapping)
		return 0;
	if (pp->maps[l.mapping - 1].limit <= l.address)
		pp->maps[l.mapping - 1].limit = l.address + 1;	/* a file size not recorded */
	for (i = n; i-- > 0;) {
		const char *file = strpool__str(&pp->p->s->pool, st[i].file);
		struct pp_line ln = { function_of(pp, f[i], PF_SYMBOL, str_id(pp, file)),
				      st[i].line };

		if (!ln.func || VEC_PUSH(pp->lines, pp->nlines, pp->lines_cap, ln))
			return 0;
		pp->maps[l.mapping - 1].lines |= st[i].line > 0;
	}
	return push_location(pp, &l, key) ? 0 : pp->nlocs;
}

/*
 * Location id (index + 1) of a frame named without an address (Python, JIT, kernel, unknown
 * code, the GPU leaf): one per name, made on first use; 0 when out of memory.
 */
static uint64_t name_location(struct pp *pp, uint32_t frame, bool gpu_leaf)
{
	const struct session *ses = pp->p->s;
	uint64_t key[2] = { 0, frame };
	const uint32_t *ix = kmap__get(&pp->loc_idx, key[0], key[1]);
	const char *name = strpool__str(&pp->p->s->pool, frame);
	struct pp_func fn = { 0 };
	struct pp_line ln = { 0 };
	struct pp_loc l = { .n = 1 };

	if (ix)
		return *ix + 1;
	l.mapping = gpu_leaf ? mapping_of(pp, NULL, "[gpu]") :
			       mapping_of(pp, session__frame_file_rec(ses, frame),
					  session__frame_file(ses, frame));
	if (!l.mapping)
		return 0;
	if (pp->maps[l.mapping - 1].python) {
		python_file_line(pp, name, &fn, &ln);
		pp->maps[l.mapping - 1].lines |= ln.line > 0;
	}
	ln.func = function_of(pp, frame, gpu_leaf ? PF_GPU : pp->maps[l.mapping - 1].python ?
				  PF_PYTHON : PF_OTHER, fn.file);
	if (!ln.func || VEC_PUSH(pp->lines, pp->nlines, pp->lines_cap, ln))
		return 0;
	return push_location(pp, &l, key) ? 0 : pp->nlocs;
}

static const char *kind_of(struct pp *pp, const struct prof_entry *e)
{
	static const char *const names[GPU_WORK_NR] = { "kernel", "memcpy", "memset" };
	const uint32_t *k;

	if (!e->leaf)
		return "cpu";
	if (e->off_n)
		return "off-cpu";
	if (pp->p->s->opts->view == VIEW_MEMORY)
		return "alloc";
	k = kmap__get(&pp->kind_idx, 0, e->leaf);
	return k && *k < GPU_WORK_NR ? names[*k] : "gpu";
}

/* The labels of an entry's sample (index + 1 each) in l; how many, or -ENOMEM. */
static int sample_labels(struct pp *pp, const struct prof_entry *e, uint32_t l[LK_NR])
{
	char buf[32], num[16];
	int i, n = 0;

	/* merged traces: the pid its host knew, that host, and the rank the process reported */
	const struct session *s = pp->p->s;
	int32_t rank = session__process_rank(s, e->pid);
	const char *host = session__has_places(s) ? session__process_host(s, e->pid) : NULL;

	snprintf(num, sizeof(num), "%u", session__process_pid(s, e->pid));
	l[n++] = label(pp, LK_PID, num);
	if (e->tid) {
		snprintf(num, sizeof(num), "%u", session__process_pid(s, e->tid));
		l[n++] = label(pp, LK_TID, num);
	}
	l[n++] = label(pp, LK_COMM, trace__comm(s->t, e->pid, buf, sizeof(buf)));
	if (host && *host)
		l[n++] = label(pp, LK_HOST, host);
	else if (pp->host_label)
		l[n++] = pp->host_label;
	if (rank >= 0) {
		snprintf(num, sizeof(num), "%d", rank);
		l[n++] = label(pp, LK_RANK, num);
	}
	l[n++] = label(pp, LK_KIND, kind_of(pp, e));
	if (e->device) {
		snprintf(num, sizeof(num), "%u", e->device - 1);
		l[n++] = label(pp, LK_DEVICE, num);
	}
	if (e->trim) {
		struct user_site us;
		int err = user_code__stack(&pp->uc, e->pid, e->ts, e->stack_id, &us);

		if (err && err != -ENOENT)
			return err;
		if (!err && us.site) {
			l[n++] = label(pp, LK_SITE, user_code__site_name(&pp->uc, &us));
			l[n++] = label(pp, LK_OP, strpool__str(&s->pool, us.op));
		}
	}
	for (i = 0; i < n; i++) {
		if (!l[i])
			return -ENOMEM;
	}
	return n;
}

/*
 * An entry's locations in pp->run, root first, without the comm at the root: made on first
 * use, found after. The labels after them, then, in l (how many in *nl).
 */
static int sample_of(struct pp *pp, const struct prof_entry *e, uint32_t l[LK_NR], int *nl)
{
	const struct frame_site *st;
	const uint32_t *f;
	uint32_t n, i, j;
	int err;

	err = profile__frames_sites(pp->p, e, &f, &st, &n);
	if (err)
		return err;
	/* root first: the mappings made first are the program's own (after main_executable) */
	pp->nrun = 0;
	for (i = 1; i < n; i = j) {
		uint64_t id;

		j = i + 1;
		if (st && st[i].dso && st[i].outer) {
			while (j < n && st[j].dso == st[i].dso && st[j].off == st[i].off &&
			       !st[j].outer)
				j++;
			id = address_location(pp, f + i, st + i, j - i);
		} else {
			id = name_location(pp, f[i], e->leaf && i == n - 1);
		}
		if (!id || VEC_PUSH(pp->run, pp->nrun, pp->run_cap, id))
			return -ENOMEM;
	}
	*nl = sample_labels(pp, e, l);
	return *nl < 0 ? *nl : 0;
}

/* Folded output leaves these out too. */
static bool has_weight(const struct prof_entry *e)
{
	return e->samples || prof_entry__measured(e);
}

/* The pid with the most weight in the profile, 0 when it is empty. */
static uint32_t heaviest_pid(const struct profile *p)
{
	struct kmap idx = { 0 };
	double *w = NULL, best = -1;
	size_t i, n = 0, cap = 0;
	uint32_t pid = 0, *v;
	bool ins;

	for (i = 0; i < p->n; i++) {
		v = kmap__put(&idx, p->e[i].pid, 0, n, &ins);
		if (!v || (ins && VEC_PUSH(w, n, cap, 0.0)))
			break;
		w[*v] += profile__weight(p, p->e[i].samples, prof_entry__measured(&p->e[i]));
		if (w[*v] > best) {
			best = w[*v];
			pid = p->e[i].pid;
		}
	}
	kmap__free(&idx);
	free(w);
	return pid;
}

/*
 * The traced program's executable: of the process with the most weight, its main binary in
 * its last address space (model/user_code.h), or NULL. pprof calls the first Mapping the main
 * binary ("File:" in its reports); the first one a stack reaches is often ld.so's, from the
 * samples before the program's own code ran.
 */
static const struct tr_dso *main_executable(struct pp *pp)
{
	const struct trace *t = pp->p->s->t;
	uint32_t pid = heaviest_pid(pp->p);

	return pid ? user_code__main_binary(&pp->uc, pid, trace__generation(t, pid, UINT64_MAX)) :
		     NULL;
}

/* GPU leaf frame -> the kind of work it names, for the "kind" label. */
static int index_kinds(struct pp *pp)
{
	const struct gpu_join *j;
	size_t i;
	bool ins;

	if (pp->p->s->opts->view == VIEW_CPU || pp->p->s->opts->view == VIEW_MEMORY)
		return 0;
	j = session__gpu(pp->p->s);
	if (!j)
		return -ENOMEM;
	for (i = 0; i < j->n; i++) {
		if (!kmap__put(&pp->kind_idx, 0, j->w[i].leaf, j->w[i].kind, &ins))
			return -ENOMEM;
	}
	return 0;
}

/* The time the trace covers: to its end record, else to the last sample or GPU record. */
static uint64_t duration_ns(const struct session *s)
{
	const struct trace *t = s->t;
	uint64_t start = t->has_session ? t->session.start_mono_ns : 0, end = 0;
	const struct gpu_join *j;
	size_t i;

	if (t->has_end)
		end = t->end.end_mono_ns;
	for (i = 0; !t->has_end && i < t->nsamples; i++)
		end = t->samples[i].ts_ns > end ? t->samples[i].ts_ns : end;
	j = !t->has_end && s->gpu_built ? &s->gpu : NULL;
	for (i = 0; j && i < j->n; i++)
		end = j->w[i].end > end ? j->w[i].end : end;
	return end > start && start ? end - start : 0;
}

/* One gzip member written as its bytes come: the message is never whole in memory. */
struct gz {
	z_stream z;
	FILE *out;
	int err;		/* 0, -ENOMEM or -EIO: the first failure, after which nothing is done */
	uint8_t chunk[1 << 16];
};

static int gz_open(struct gz *g, FILE *out)
{
	memset(&g->z, 0, sizeof(g->z));
	g->out = out;
	g->err = 0;
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	return 0;
}

/* Compresses len bytes of buf (finish: and ends the member); the first error stays in g->err. */
static void gz_put(struct gz *g, const uint8_t *buf, size_t len, bool finish)
{
	int zr;

	if (g->err)
		return;
	g->z.next_in = (uint8_t *)buf;
	do {
		/* zlib's avail_in is 32 bits: feed a large piece in parts */
		if (!g->z.avail_in && len) {
			g->z.avail_in = len > (1u << 30) ? 1u << 30 : len;
			len -= g->z.avail_in;
		}
		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		zr = deflate(&g->z, finish && !len ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR) {
			g->err = -ENOMEM;
			return;
		}
		if (fwrite(g->chunk, 1, sizeof(g->chunk) - g->z.avail_out, g->out) !=
		    sizeof(g->chunk) - g->z.avail_out || out__failed(g->out)) {
			g->err = -EIO;
			return;
		}
	} while (finish ? zr != Z_STREAM_END : g->z.avail_in || len || !g->z.avail_out);
}

static void gz_close(struct gz *g)
{
	deflateEnd(&g->z);
}

/* Every array of the message, allocated at once now that nothing grows any more. */
struct pp_msg {
	pb_profile prof;
	pb_value_type types[VIEW_PPROF_TYPES_MAX], *type_ptrs[VIEW_PPROF_TYPES_MAX], period_type;
	pb_label *labels, **label_ptrs;
	pb_mapping *maps, **map_ptrs;
	pb_location *locs, **loc_ptrs;
	pb_line *lines, **line_ptrs;
	pb_function *funcs, **func_ptrs;
	char **strings;
	int64_t comment;
};

static void msg_free(struct pp_msg *m)
{
	free(m->labels);
	free(m->label_ptrs);
	free(m->maps);
	free(m->map_ptrs);
	free(m->locs);
	free(m->loc_ptrs);
	free(m->lines);
	free(m->line_ptrs);
	free(m->funcs);
	free(m->func_ptrs);
	free(m->strings);
}

static int msg_alloc(struct pp_msg *m, const struct pp *pp)
{
	size_t nl = pp->nlocs ? pp->nlocs : 1, nn = pp->nlines ? pp->nlines : 1;
	size_t nf = pp->nfuncs ? pp->nfuncs : 1;

	m->labels = calloc(pp->nlabels ? pp->nlabels : 1, sizeof(*m->labels));
	m->label_ptrs = calloc(pp->nlabels ? pp->nlabels : 1, sizeof(*m->label_ptrs));
	m->maps = calloc(pp->nmaps ? pp->nmaps : 1, sizeof(*m->maps));
	m->map_ptrs = calloc(pp->nmaps ? pp->nmaps : 1, sizeof(*m->map_ptrs));
	m->locs = calloc(nl, sizeof(*m->locs));
	m->loc_ptrs = calloc(nl, sizeof(*m->loc_ptrs));
	m->lines = calloc(nn, sizeof(*m->lines));
	m->line_ptrs = calloc(nn, sizeof(*m->line_ptrs));
	m->funcs = calloc(nf, sizeof(*m->funcs));
	m->func_ptrs = calloc(nf, sizeof(*m->func_ptrs));
	m->strings = calloc(pp->strs.n ? pp->strs.n : 1, sizeof(*m->strings));
	return m->labels && m->label_ptrs && m->maps && m->map_ptrs && m->locs && m->loc_ptrs && m->lines && m->line_ptrs &&
	       m->funcs && m->func_ptrs && m->strings ? 0 : -ENOMEM;
}

static void msg_labels(struct pp_msg *m, const struct pp *pp)
{
	size_t i;

	for (i = 0; i < pp->nlabels; i++) {
		pb_label l = PERFTOOLS__PROFILES__LABEL__INIT;

		l.key = pp->labels[i].key;
		l.str = pp->labels[i].str;
		m->labels[i] = l;
		m->label_ptrs[i] = &m->labels[i];
	}
}

/* Packs a message into pp->packed, behind the tag and size of a field (field) of it. */
static int pack_field(struct pp *pp, const ProtobufCMessage *msg, unsigned field, size_t *len)
{
	size_t size = protobuf_c_message_get_packed_size(msg), n = 0, v = size;

	if (vec_reserve((void **)&pp->packed, &pp->packed_cap, size + 16, 1))
		return -ENOMEM;
	pp->packed[n++] = (uint8_t)(field << 3 | 2);	/* length-delimited */
	do {
		pp->packed[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	*len = n + protobuf_c_message_pack(msg, pp->packed + n);
	return 0;
}

/*
 * The samples, field 2 of the Profile, each packed and compressed in turn: their locations,
 * functions and labels were all made by the first pass, so this one finds them.
 */
static int write_samples(struct pp *pp, const struct pp_msg *m, struct gz *g)
{
	const struct profile *p = pp->p;
	pb_label *lp[LK_NR];
	int64_t values[VIEW_PPROF_TYPES_MAX];
	uint32_t l[LK_NR];
	size_t i, k, len;
	int err, nl, t;

	for (i = 0; i < p->n && !g->err; i++) {
		pb_sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;

		if (!has_weight(&p->e[i]))
			continue;
		progress__update("compressing pprof", i, p->n);
		err = sample_of(pp, &p->e[i], l, &nl);
		if (!err && vec_reserve((void **)&pp->ids, &pp->ids_cap, pp->nrun, sizeof(*pp->ids)))
			err = -ENOMEM;
		if (err)
			return err;
		for (k = 0; k < pp->nrun; k++)
			pp->ids[k] = pp->run[pp->nrun - 1 - k];
		for (t = 0; t < pp->v->npprof; t++)
			values[t] = value_of(pp, pp->v->pprof[t].v, &p->e[i]);
		for (t = 0; t < nl; t++)
			lp[t] = m->label_ptrs[l[t] - 1];
		s.location_id = pp->ids;
		s.n_location_id = pp->nrun;
		s.value = values;
		s.n_value = pp->v->npprof;
		s.label = lp;
		s.n_label = nl;
		err = pack_field(pp, &s.base, 2, &len);
		if (err)
			return err;
		gz_put(g, pp->packed, len, false);
	}
	return g->err;
}

static void msg_locations(struct pp_msg *m, const struct pp *pp)
{
	bool inl = pp->p->s->opts->inline_frames;
	size_t i;

	for (i = 0; i < pp->nmaps; i++) {
		pb_mapping x = PERFTOOLS__PROFILES__MAPPING__INIT;

		x.id = i + 1;
		x.memory_limit = pp->maps[i].limit;	/* addresses are file offsets */
		x.filename = pp->maps[i].file;
		x.build_id = pp->maps[i].build_id;
		x.has_functions = true;
		x.has_filenames = pp->maps[i].lines;
		x.has_line_numbers = pp->maps[i].lines;
		x.has_inline_frames = inl;
		m->maps[i] = x;
		m->map_ptrs[i] = &m->maps[i];
	}
	for (i = 0; i < pp->nfuncs; i++) {
		pb_function f = PERFTOOLS__PROFILES__FUNCTION__INIT;

		f.id = i + 1;
		f.name = pp->funcs[i].name;
		f.system_name = pp->funcs[i].system;
		f.filename = pp->funcs[i].file;
		m->funcs[i] = f;
		m->func_ptrs[i] = &m->funcs[i];
	}
	for (i = 0; i < pp->nlines; i++) {
		pb_line ln = PERFTOOLS__PROFILES__LINE__INIT;

		ln.function_id = pp->lines[i].func;
		ln.line = pp->lines[i].line;
		m->lines[i] = ln;
		m->line_ptrs[i] = &m->lines[i];
	}
	for (i = 0; i < pp->nlocs; i++) {
		pb_location l = PERFTOOLS__PROFILES__LOCATION__INIT;

		l.id = i + 1;
		l.mapping_id = pp->locs[i].mapping;
		l.address = pp->locs[i].address;
		l.n_line = pp->locs[i].n;
		l.line = &m->line_ptrs[pp->locs[i].first];
		m->locs[i] = l;
		m->loc_ptrs[i] = &m->locs[i];
	}
}

/*
 * Assembles the message from what pp collected and writes it gzipped into out, as protobuf-c
 * packs a whole Profile (fields in their order: sample types, samples, the rest) but with
 * the samples packed one at a time.
 */
static int pp_write(struct pp *pp, FILE *out)
{
	const struct session *s = pp->p->s;
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_profile head = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	struct pp_msg m = { 0 };
	struct gz g;
	uint8_t *buf = NULL;
	size_t i, len;
	char unit[160];
	int err, def;

	/* strings first: nothing is interned once the arrays point into the table */
	period.type = str_id(pp, pp->v->pprof_sampled ? "cpu" : pp->v->pprof[0].type);
	period.unit = str_id(pp, pp->v->pprof_sampled ? "nanoseconds" : pp->v->pprof[0].unit);
	for (i = 0; i < (size_t)pp->v->npprof; i++) {
		m.types[i] = (pb_value_type)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		m.types[i].type = str_id(pp, pp->v->pprof[i].type);
		m.types[i].unit = str_id(pp, pp->v->pprof[i].unit);
		m.type_ptrs[i] = &m.types[i];
	}
	def = s->weight == WEIGHT_TIME ? pp->v->pprof_def_time : pp->v->pprof_def_samples;
	m.comment = str_id(pp, session__weight_unit(s, unit, sizeof(unit)));
	err = msg_alloc(&m, pp);
	if (err)
		goto out;
	m.strings[0] = "";
	for (i = 1; i < pp->strs.n; i++)
		m.strings[i] = pp->strs.strs[i];
	msg_labels(&m, pp);
	msg_locations(&m, pp);
	head.sample_type = m.type_ptrs;
	head.n_sample_type = pp->v->npprof;
	prof.mapping = m.map_ptrs;
	prof.n_mapping = pp->nmaps;
	prof.location = m.loc_ptrs;
	prof.n_location = pp->nlocs;
	prof.function = m.func_ptrs;
	prof.n_function = pp->nfuncs;
	prof.string_table = m.strings;
	prof.n_string_table = pp->strs.n ? pp->strs.n : 1;
	prof.time_nanos = s->t->has_session ? (int64_t)s->t->session.start_realtime_ns : 0;
	prof.duration_nanos = duration_ns(pp->p->s);
	prof.period_type = &period;
	prof.period = pp->v->pprof_sampled ? llround(1e9 / s->freq_hz) : 0;
	prof.comment = &m.comment;
	prof.n_comment = m.comment ? 1 : 0;
	prof.default_sample_type = m.types[def].type;
	err = gz_open(&g, out);
	if (err)
		goto out;
	len = protobuf_c_message_get_packed_size(&prof.base);
	if (protobuf_c_message_get_packed_size(&head.base) > len)
		len = protobuf_c_message_get_packed_size(&head.base);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto close;
	}
	/* the sample types: Profile's field 1, whose packing is one message of them alone */
	gz_put(&g, buf, protobuf_c_message_pack(&head.base, buf), false);
	err = write_samples(pp, &m, &g);
	if (!err) {
		gz_put(&g, buf, protobuf_c_message_pack(&prof.base, buf), true);
		err = g.err;
	}
close:
	gz_close(&g);
out:
	free(buf);
	msg_free(&m);
	return err;
}

static void pp_free(struct pp *pp)
{
	strpool__free(&pp->strs);
	kmap__free(&pp->loc_idx);
	kmap__free(&pp->func_idx);
	free(pp->funcs);
	free(pp->lines);
	free(pp->run);
	kmap__free(&pp->map_idx);
	kmap__free(&pp->label_idx);
	kmap__free(&pp->kind_idx);
	user_code__free(&pp->uc);
	free(pp->locs);
	free(pp->maps);
	free(pp->labels);
	free(pp->ids);
	free(pp->packed);
}

int out_pprof(const struct profile *p, FILE *out)
{
	const struct trace *t = p->s->t;
	struct pp pp = { .p = p };
	const struct tr_dso *exe;
	const char *host;
	size_t i;
	int err;

	user_code__init(&pp.uc, p->s);
	pp.v = view__def(p->s->opts->view);
	if (!pp.v->npprof) {
		fprintf(stderr, "xpu-report: --format=pprof has no sample type for this view\n");
		return -ENODATA;
	}
	err = index_kinds(&pp);
	exe = main_executable(&pp);
	if (!err && exe)	/* made first: the main binary */
		err = mapping_of(&pp, exe, dso_name(exe)) ? 0 : -ENOMEM;
	host = t->has_session ? trace__string(t, t->session.host_str) : NULL;
	if (!err && host && *host) {
		pp.host_label = label(&pp, LK_HOST, host);
		err = pp.host_label ? 0 : -ENOMEM;
	}
	/* the first pass makes every location, function and label, in the order they come */
	for (i = 0; !err && i < p->n; i++) {
		uint32_t l[LK_NR];
		int nl;

		progress__update("writing pprof", i, p->n);
		if (has_weight(&p->e[i]))
			err = sample_of(&pp, &p->e[i], l, &nl);
	}
	if (!err)
		err = pp_write(&pp, out);
	pp_free(&pp);
	return err;
}

const char *out_pprof__unavailable(void)
{
	return NULL;
}

#else	/* !XPU_HAVE_PPROF */

int out_pprof(const struct profile *p, FILE *out)
{
	fprintf(stderr, "xpu-report: %s\n", out_pprof__unavailable());
	return -ENOTSUP;
}

const char *out_pprof__unavailable(void)
{
	return "--format=pprof is not in this build: it needs protobuf-c (libprotobuf-c-dev, "
	       "protobuf-c-compiler), zlib and profile.proto (golang-github-google-pprof-dev); "
	       "run scripts/install-deps.sh and rebuild";
}

#endif
