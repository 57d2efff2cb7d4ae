// SPDX-License-Identifier: MIT
/*
 * The GPU sections of the text report (text.h, gpu.h): top kernels, launch sites, busy time
 * per device, copies by direction and launch matching, then sync.c's and procs.c's sections.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/gpu_interval.h"
#include "output/out.h"
#include "output/text/gpu.h"

#define SITE_PATH_FRAMES 4	/* frames of a launch site's call path shown */
#define SITE_COL_MAX 48		/* a site wider is cut: the op column stays readable */

static int gs_init(struct gs *g, const struct session *ses)
{
	const struct trace *t = ses->t;
	size_t i;

	memset(g, 0, sizeof(*g));
	g->ses = ses;
	g->t = t;
	g->j = session__gpu(ses);
	if (!g->j)
		return -ENOMEM;
	for (i = 0; i < g->j->n; i++) {
		const struct gpu_work *w = &g->j->w[i];

		if (!w->keep)
			continue;
		g->total_ns += dur(w->start, w->end);
		g->n++;
	}
	user_code__init(&g->uc, ses);
	if (t->nlaunches) {
		g->site = calloc(t->nlaunches, sizeof(*g->site));
		g->op = calloc(t->nlaunches, sizeof(*g->op));
		g->path = calloc(t->nlaunches, sizeof(*g->path));
		g->done = calloc(t->nlaunches, 1);
		if (!g->site || !g->op || !g->path || !g->done)
			return -ENOMEM;
	}
	return 0;
}

static void gs_free(struct gs *g)
{
	strpool__free(&g->names);
	user_code__free(&g->uc);
	free(g->site);
	free(g->op);
	free(g->path);
	free(g->done);
}


/* Appends to a bounded buffer; the text is cut, never overflowed, when a path is huge. */
static void buf_add(char *buf, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + 1 >= size)
		return;
	if (n > size - 1 - *len)
		n = size - 1 - *len;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

int text_gpu__stack_path(struct gs *g, uint32_t pid, uint64_t ts, uint32_t stack_id,
			 uint32_t max, const char *leaf, uint32_t *op, uint32_t *path,
			 uint32_t *site)
{
	struct user_site us;
	const uint32_t *f;
	uint32_t n, i;
	char buf[2048] = "";
	size_t len = 0;
	int err;

	err = user_code__stack(&g->uc, pid, ts, stack_id, &us);
	if (!err)
		err = session__stack(g->ses, pid, ts, stack_id, true, &f, &n);
	if (err)
		return err;
	/* the path ends at the op: the stubs under it are nvcc's */
	n = us.nframes;
	*op = us.op;
	if (site)
		*site = us.site;
	if (n > max)
		buf_add(buf, sizeof(buf), &len, "... > ");
	for (i = n > max ? n - max : 0; i < n; i++) {
		buf_add(buf, sizeof(buf), &len, strpool__str(&g->ses->pool, f[i]));
		if (i + 1 < n)
			buf_add(buf, sizeof(buf), &len, " > ");
	}
	if (leaf) {
		if (len)
			buf_add(buf, sizeof(buf), &len, " > ");
		buf_add(buf, sizeof(buf), &len, leaf);
	}
	*path = strpool__intern(&g->names, buf, len);
	return *path ? 0 : -ENOMEM;
}

/* A launch's site (an id of g->uc.names), op (a frame id) and call path (to the op). */
static int launch_site(struct gs *g, uint32_t li, uint32_t *site, uint32_t *op, uint32_t *path)
{
	const struct xpu_rec_gpu_launch *l = &g->t->launches[li];
	int err;

	if (!g->done[li]) {
		err = text_gpu__stack_path(g, l->pid, l->ts_ns, session__launch_stack(g->ses, li),
					   SITE_PATH_FRAMES, NULL, &g->op[li], &g->path[li],
					   &g->site[li]);
		if (err)
			return err;
		g->done[li] = 1;
	}
	*site = g->site[li];
	*op = g->op[li];
	*path = g->path[li];
	return 0;
}


/* ---- top kernels ------------------------------------------------------------------------ */

struct kstat {
	uint32_t name_str;
	uint64_t count, total, min, max;
};

static int cmp_kstat(const void *a, const void *b)
{
	const struct kstat *x = a, *y = b;

	if (x->total != y->total)
		return CMP(y->total, x->total);
	return CMP(x->name_str, y->name_str);
}

static int print_kernels(struct gs *g, FILE *out)
{
	struct kstat *ks;
	struct kmap idx = { 0 };
	uint64_t all = 0;
	size_t i, n = 0;
	int err = 0;

	ks = calloc(g->n ? g->n : 1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	for (i = 0; i < g->j->n; i++) {
		const struct gpu_work *a = &g->j->w[i];
		uint64_t d = dur(a->start, a->end);
		uint32_t *v;
		bool ins;

		if (!a->keep || a->kind != GPU_WORK_KERNEL)
			continue;
		v = kmap__put(&idx, a->name_str, 0, n, &ins);
		if (!v) {
			err = -ENOMEM;
			goto out;
		}
		if (ins) {
			ks[n].name_str = a->name_str;
			ks[n].min = UINT64_MAX;
			n++;
		}
		ks[*v].count++;
		ks[*v].total += d;
		if (d < ks[*v].min)
			ks[*v].min = d;
		if (d > ks[*v].max)
			ks[*v].max = d;
		all += d;
	}
	if (!n)
		goto out;
	qsort(ks, n, sizeof(*ks), cmp_kstat);
	fprintf(out, "# top gpu kernels (share of kernel time)\n%8s %8s %12s %10s %10s %10s  %s\n",
		"share", "count", "total_us", "mean_us", "min_us", "max_us", "kernel");
	for (i = 0; i < n && i < TOP_N; i++) {
		const char *name = kernel_names__get(&g->ses->kernel_names, ks[i].name_str);

		if (!name)
			name = "[unknown kernel]";
		fprintf(out, "%7.2f%% %8" PRIu64 " %12.1f %10.1f %10.1f %10.1f  %.*s%s\n",
			pct(ks[i].total, all), ks[i].count, ks[i].total / 1e3,
			ks[i].total / 1e3 / ks[i].count, ks[i].min / 1e3, ks[i].max / 1e3,
			OUT_NAME_MAX_BYTES, name, strlen(name) > OUT_NAME_MAX_BYTES ? "..." : "");
	}
	if (n > TOP_N)
		fprintf(out, "(%zu more kernels)\n", n - TOP_N);
	fprintf(out, "\n");
out:
	kmap__free(&idx);
	free(ks);
	return err;
}

/* ---- launch sites ----------------------------------------------------------------------- */

struct site_stat {
	uint32_t site, op, path;	/* site 0: no launch record */
	uint32_t npaths, nops;
	uint64_t ns;
	uint64_t op_ns;			/* of the site's work through this op, all paths */
	uint64_t cnt[GPU_WORK_NR];
};

static const char *site_name(const struct gs *g, const struct site_stat *s)
{
	return s->site ? strpool__str(&g->uc.names, s->site) : "[no launch record]";
}

/* By site, then its ops (heaviest first), then time (heaviest path first), then path text. */
static int cmp_site_path(const void *a, const void *b, void *arg)
{
	const struct site_stat *x = a, *y = b;
	const struct gs *g = arg;
	int c = strcmp(site_name(g, x), site_name(g, y));

	if (c)
		return c;
	if (x->op_ns != y->op_ns)
		return CMP(y->op_ns, x->op_ns);
	if (x->op != y->op)
		return strcmp(strpool__str(&g->ses->pool, x->op),
			      strpool__str(&g->ses->pool, y->op));
	if (x->ns != y->ns)
		return CMP(y->ns, x->ns);
	return strcmp(strpool__str(&g->names, x->path), strpool__str(&g->names, y->path));
}

static int cmp_site(const void *a, const void *b, void *arg)
{
	const struct site_stat *x = a, *y = b;

	if (x->ns != y->ns)
		return CMP(y->ns, x->ns);
	return strcmp(site_name(arg, x), site_name(arg, y));
}

/* The op column: "-" where the op is the site itself (a native program's own launch). */
static const char *op_name(const struct gs *g, const struct site_stat *s)
{
	const char *op = s->op ? strpool__str(&g->ses->pool, s->op) : NULL;

	return !op || !strcmp(op, site_name(g, s)) ? "-" : op;
}

static void print_site_rows(struct gs *g, const struct site_stat *sites, size_t nsites, FILE *out)
{
	char cut[SITE_COL_MAX + 4], cut2[OUT_NAME_MAX_BYTES + 4];
	size_t i, w = strlen("site");

	for (i = 0; i < nsites && i < TOP_N; i++)
		if (strlen(site_name(g, &sites[i])) > w)
			w = strlen(site_name(g, &sites[i]));
	if (w > SITE_COL_MAX)
		w = SITE_COL_MAX;
	fprintf(out, "%8s %12s %8s %8s %8s  %-*s  %s\n", "share", "gpu_us", "kernels", "copies",
		"memsets", (int)w, "site", "op / heaviest call path");
	for (i = 0; i < nsites && i < TOP_N; i++) {
		const struct site_stat *s = &sites[i];
		const char *path = strpool__str(&g->names, s->path);
		bool show_path = s->site && s->op &&
				 strcmp(path, strpool__str(&g->ses->pool, s->op));

		fprintf(out, "%7.2f%% %12.1f %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "  %-*s  %s\n",
			pct(s->ns, g->total_ns), s->ns / 1e3, s->cnt[GPU_WORK_KERNEL],
			s->cnt[GPU_WORK_MEMCPY], s->cnt[GPU_WORK_MEMSET], (int)w,
			str__cut(site_name(g, s), w, cut),
			str__cut(op_name(g, s), OUT_NAME_MAX_BYTES, cut2));
		/* the call path to the op under the row, when it says more than the op */
		if (show_path || s->npaths > 1) {
			fprintf(out, "%50s", "");
			if (show_path)
				fputs(path, out);
			if (s->npaths > 1)
				fprintf(out, "%s(+%u other call paths", show_path ? " " : "",
					s->npaths - 1);
			if (s->nops > 1)
				fprintf(out, "%s%u other ops", s->npaths > 1 ? ", " : " (",
					s->nops - 1);
			if (s->npaths > 1 || s->nops > 1)
				fputc(')', out);
			fputc('\n', out);
		}
	}
}

static int print_sites(struct gs *g, FILE *out)
{
	struct site_stat *ss = NULL, *sites = NULL;
	struct kmap idx = { 0 }, ops = { 0 };
	uint64_t *op_ns = NULL;
	size_t i, n = 0, cap = 0, nsites = 0;
	int err = 0;

	for (i = 0; i < g->j->n; i++) {
		const struct gpu_work *a = &g->j->w[i];
		struct site_stat z = { 0 };
		uint32_t site = 0, op = 0, path = 0, *v;
		bool ins;

		if (!a->keep)
			continue;
		if (a->launch) {
			err = launch_site(g, a->launch - 1, &site, &op, &path);
			if (err)
				goto out;
		}
		/* the path ends at the op: one entry per (site, path) is one per op too */
		v = kmap__put(&idx, site, path, n, &ins);
		if (!v || (ins && VEC_PUSH(ss, n, cap, z))) {
			err = -ENOMEM;
			goto out;
		}
		ss[*v].site = site;
		ss[*v].op = op;
		ss[*v].path = path;
		ss[*v].ns += dur(a->start, a->end);
		ss[*v].cnt[a->kind]++;
	}
	if (!n)
		goto out;
	/* each op's time at its site: the row names the heaviest op, with its heaviest path */
	op_ns = calloc(n, sizeof(*op_ns));
	if (!op_ns) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		uint32_t *v = kmap__put(&ops, ss[i].site, ss[i].op, (uint32_t)i, NULL);

		if (!v) {
			err = -ENOMEM;
			goto out;
		}
		op_ns[*v] += ss[i].ns;
	}
	for (i = 0; i < n; i++)
		ss[i].op_ns = op_ns[*kmap__get(&ops, ss[i].site, ss[i].op)];
	kmap__free(&ops);
	qsort_r(ss, n, sizeof(*ss), cmp_site_path, g);
	/* merge each site's paths into its first (heaviest) entry, and count its ops */
	sites = calloc(n, sizeof(*sites));
	if (!sites) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct site_stat *s;
		bool new_op;
		int k;

		if (!kmap__put(&ops, ss[i].site, ss[i].op, 0, &new_op)) {
			err = -ENOMEM;
			goto out;
		}
		if (!nsites || sites[nsites - 1].site != ss[i].site) {
			sites[nsites] = ss[i];
			sites[nsites].nops = 1;
			sites[nsites++].npaths = 1;
			continue;
		}
		s = &sites[nsites - 1];
		s->npaths++;
		s->nops += new_op;
		s->ns += ss[i].ns;
		for (k = 0; k < GPU_WORK_NR; k++)
			s->cnt[k] += ss[i].cnt[k];
	}
	qsort_r(sites, nsites, sizeof(*sites), cmp_site, g);
	fprintf(out, "# top gpu launch sites (share of GPU time; site: the innermost frame of the "
		"program's own code, its binary and libraries or its Python files outside the "
		"interpreter's and the frameworks' installation, else the op; op: the framework's "
		"operation, the first caller outside the CUDA libraries and nvcc's launch stubs, "
		"else the innermost named frame, '-' where it is the site)\n");
	print_site_rows(g, sites, nsites, out);
	if (nsites > TOP_N)
		fprintf(out, "(%zu more sites)\n", nsites - TOP_N);
	fprintf(out, "\n");
out:
	kmap__free(&idx);
	kmap__free(&ops);
	free(op_ns);
	free(ss);
	free(sites);
	return err;
}

/* ---- busy time per device --------------------------------------------------------------- */

/*
 * A device's name from its GPU_DEVICE record: one of a process the filter keeps, else of any
 * process (one host: device numbers of processes that see the same devices); where the trace
 * has none (CUPTI gives device records as contexts are made, so a process attached to mid-run
 * may have none), it says so rather than showing a blank.
 */
static const char *device_name(struct gs *g, uint32_t device)
{
	const char *any = NULL;
	size_t i;

	for (i = 0; i < g->t->ndevices; i++) {
		const struct xpu_rec_gpu_device *d = &g->t->devices[i];
		const char *s = trace__string(g->t, d->name_str);

		if (d->device != device || !s || !*s)
			continue;
		if (filter__process(&g->ses->filter, d->pid))
			return s;
		if (!any && g->t->nparts <= 1)
			any = s;
	}
	return any ? any : "[no device record]";
}

static int print_busy(struct gs *g, FILE *out)
{
	const struct trace *t = g->t;
	struct gpu_interval *iv;
	uint64_t session = 0;
	size_t i, j;

	if (!g->n)
		return 0;
	iv = calloc(g->n, sizeof(*iv));
	if (!iv)
		return -ENOMEM;
	for (i = j = 0; i < g->j->n; i++) {
		const struct gpu_work *w = &g->j->w[i];

		if (w->keep)
			iv[j++] = (struct gpu_interval){ w->start, w->end, w->device };
	}
	gpu_intervals_sort(iv, g->n);
	if (t->has_session && t->has_end && t->end.end_mono_ns > t->session.start_mono_ns)
		session = t->end.end_mono_ns - t->session.start_mono_ns;
	/*
	 * Device numbers are CUDA ordinals of the reporting process: processes that see different
	 * CUDA_VISIBLE_DEVICES would be merged wrongly, which one trace rarely has.
	 */
	fprintf(out, "# gpu busy per device (union of kernels, copies and memsets; idle: gaps "
		"between the device's first and last activity)\n%8s %12s %12s %12s %8s %10s  %s\n",
		"device", "span_us", "busy_us", "idle_us", "busy", "of_session", "name");
	for (i = 0; i < g->n; i = j) {
		uint64_t first = iv[i].start, last = iv[i].end, busy, span;
		char sess[16] = "-";

		for (j = i; j < g->n && iv[j].key == iv[i].key; j++)
			if (iv[j].end > last)
				last = iv[j].end;
		busy = gpu_intervals_union(iv + i, j - i);
		span = last > first ? last - first : 0;
		const char *host;
		uint32_t dev = trace__real_device(t, iv[i].key, &host);
		char cut[OUT_NAME_MAX_BYTES + 4], cut2[OUT_NAME_MAX_BYTES + 4];

		if (session)
			snprintf(sess, sizeof(sess), "%.2f%%", pct(busy, session));
		/* several traces: a GPU is its host's device number, on that host */
		fprintf(out, "%8u %12.1f %12.1f %12.1f %7.2f%% %10s  %s%s%s\n", dev, span / 1e3,
			busy / 1e3, (span - busy) / 1e3, pct(busy, span), sess,
			str__cut(device_name(g, iv[i].key), OUT_NAME_MAX_BYTES, cut),
			t->nparts > 1 && *host ? " on " : "",
			t->nparts > 1 ? str__cut(host, OUT_NAME_MAX_BYTES, cut2) : "");
	}
	fprintf(out, "\n");
	free(iv);
	return 0;
}

/* ---- copies ----------------------------------------------------------------------------- */

#define NKINDS (XPU_MEMCPY_PTOP + 1)

static void print_copy_row(FILE *out, const char *name, uint64_t count, uint64_t bytes,
			   uint64_t ns)
{
	char bw[24] = "-";

	/* bytes per ns is GB/s (10^9 bytes) */
	if (ns)
		snprintf(bw, sizeof(bw), "%.2f", (double)bytes / ns);
	fprintf(out, "  %-10s %8" PRIu64 " %14" PRIu64 " %12.1f %10s\n", name, count, bytes,
		ns / 1e3, bw);
}

static int print_copies(struct gs *g, FILE *out)
{
	uint64_t count[NKINDS + 1] = { 0 }, bytes[NKINDS + 1] = { 0 }, ns[NKINDS + 1] = { 0 };
	size_t i;
	int k;

	for (i = 0; i < g->j->n; i++) {
		const struct gpu_work *a = &g->j->w[i];

		if (!a->keep || a->kind == GPU_WORK_KERNEL)
			continue;
		/* memsets in the last slot, unknown copy kinds in slot 0 */
		k = a->kind == GPU_WORK_MEMSET ? NKINDS : a->copy_kind < NKINDS ? a->copy_kind : 0;
		count[k]++;
		bytes[k] += a->bytes;
		ns[k] += dur(a->start, a->end);
	}
	for (k = 0; k <= NKINDS && !count[k]; k++)
		;
	if (k > NKINDS)
		return 0;
	fprintf(out, "# gpu copies by direction (GB/s: bytes over the summed copy time)\n"
		"  %-10s %8s %14s %12s %10s\n", "direction", "count", "bytes", "total_us", "GB/s");
	/* the usual directions first, then the rest in enum order */
	static const int order[] = { XPU_MEMCPY_HTOD, XPU_MEMCPY_DTOH, XPU_MEMCPY_DTOD,
				     XPU_MEMCPY_PTOP, XPU_MEMCPY_HTOH, XPU_MEMCPY_HTOA,
				     XPU_MEMCPY_ATOH, XPU_MEMCPY_ATOA, XPU_MEMCPY_ATOD,
				     XPU_MEMCPY_DTOA, XPU_MEMCPY_UNKNOWN, NKINDS };
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *name;

		k = order[i];
		if (!count[k])
			continue;
		name = k == NKINDS ? "memset" : k == XPU_MEMCPY_UNKNOWN ? "unknown" :
			memcpy_kind_name(k) + strlen("memcpy ");
		print_copy_row(out, name, count[k], bytes[k], ns[k]);
	}
	fprintf(out, "\n");
	return 0;
}

/* ---- launch matching and clocks --------------------------------------------------------- */

static int print_matching(struct gs *g, FILE *out)
{
	static const char *const names[GPU_WORK_NR] = { "kernels", "copies", "memsets" };
	uint64_t total[GPU_WORK_NR] = { 0 }, stacked[GPU_WORK_NR] = { 0 };
	uint64_t matched = 0, before_launch = 0, with_api = 0, before_api = 0;
	size_t i;
	int k;

	if (!g->n)
		return 0;
	for (i = 0; i < g->j->n; i++) {
		const struct gpu_work *a = &g->j->w[i];

		if (!a->keep)
			continue;
		total[a->kind]++;
		if (a->launch) {
			const struct xpu_rec_gpu_launch *l = &g->t->launches[a->launch - 1];

			matched++;
			if (session__launch_stack(g->ses, a->launch - 1))
				stacked[a->kind]++;
			/* GPU work cannot start before the call that launched it */
			if (l->ts_ns > a->start)
				before_launch++;
		}
		if (a->api) {
			with_api++;
			if (g->t->apis[a->api - 1].start_ns > a->start)
				before_api++;
		}
	}
	fprintf(out, "# gpu launch matching (GPU records joined to a launch stack by pid and "
		"correlation id)\n  %-10s %8s %10s %8s\n", "type", "records", "with_stack",
		"matched");
	for (k = 0; k < GPU_WORK_NR; k++)
		if (total[k])
			fprintf(out, "  %-10s %8" PRIu64 " %10" PRIu64 " %7.2f%%\n", names[k],
				total[k], stacked[k], pct(stacked[k], total[k]));
	fprintf(out, "# clock sanity: GPU work that starts before the call that launched it\n");
	fprintf(out, "  before its launch stack: %" PRIu64 " of %" PRIu64 " with a launch record\n",
		before_launch, matched);
	fprintf(out, "  before its API call:     %" PRIu64 " of %" PRIu64 " with an API record\n",
		before_api, with_api);
	fprintf(out, "\n");
	return 0;
}


int text__gpu(const struct session *ses, FILE *out)
{
	struct gs g;
	int err;

	err = gs_init(&g, ses);
	if (!err)
		err = print_kernels(&g, out);
	if (!err)
		err = print_sites(&g, out);
	if (!err)
		err = print_busy(&g, out);
	if (!err)
		err = print_copies(&g, out);
	if (!err)
		err = text_gpu__blocked(&g, out);
	if (!err)
		err = print_matching(&g, out);
	if (!err)
		err = text_gpu__procs(&g, out);
	gs_free(&g);
	return err;
}
