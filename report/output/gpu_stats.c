// SPDX-License-Identifier: MIT
/*
 * GPU sections of the text report (see gpu_stats.h). Kernels, copies and memsets are first
 * gathered from the session's GPU join into one array of "activities" that passed
 * --pid/--tid/--comm, and every section reads that.
 * Launch stacks are symbolized with CUDA-internal frames trimmed, so the "site" of a launch
 * is the first frame of the program itself, the same frame the folded output puts above the
 * "[gpu] ..." leaf.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/gpu_interval.h"
#include "output/gpu_stats.h"
#include "output/out.h"
#include "sym/demangle.h"

/* rows per table: --rows, 0 for all */
#define TOP_N (g->ses->opts->rows ? (size_t)g->ses->opts->rows : SIZE_MAX)
#define SITE_PATH_FRAMES 4	/* frames of a launch site's call path shown */
#define SYNC_PATH_FRAMES 6

enum act_type { ACT_KERNEL, ACT_MEMCPY, ACT_MEMSET, ACT_NR };

struct act {
	uint64_t start, end, bytes;
	uint32_t pid, corr, device, name_str;
	uint32_t launch;		/* launch index + 1, 0 without a launch record */
	uint32_t api;			/* API record index + 1, 0 without one */
	uint8_t type, copy_kind;
};

struct gs {
	struct session *ses;
	const struct trace *t;
	const struct gpu_join *j;
	struct act *a;
	size_t n, cap;
	uint64_t total_ns;		/* summed durations of the activities (not a union) */
	struct strpool names;		/* call paths and API names, for display */
	uint32_t *site, *path;		/* per launch: site frame id and path id, when done */
	uint8_t *done;
};

static uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

static struct act act_of(const struct trace *t, const struct gpu_work *w)
{
	struct act a = { .start = w->start, .end = w->end, .pid = w->pid, .corr = w->corr,
			 .device = w->device, .launch = w->launch, .api = w->api };

	switch (w->kind) {
	case GPU_WORK_KERNEL:
		a.type = ACT_KERNEL;
		a.name_str = t->kernels[w->index].name_str;
		break;
	case GPU_WORK_MEMCPY:
		a.type = ACT_MEMCPY;
		a.bytes = t->memcpys[w->index].bytes;
		a.copy_kind = t->memcpys[w->index].copy_kind;
		break;
	default:
		a.type = ACT_MEMSET;
		a.bytes = t->memsets[w->index].bytes;
		break;
	}
	return a;
}

static int gs_init(struct gs *g, struct session *ses)
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
		if (VEC_PUSH(g->a, g->n, g->cap, act_of(t, w)))
			return -ENOMEM;
	}
	if (t->nlaunches) {
		g->site = calloc(t->nlaunches, sizeof(*g->site));
		g->path = calloc(t->nlaunches, sizeof(*g->path));
		g->done = calloc(t->nlaunches, 1);
		if (!g->site || !g->path || !g->done)
			return -ENOMEM;
	}
	return 0;
}

static void gs_free(struct gs *g)
{
	strpool__free(&g->names);
	free(g->a);
	free(g->site);
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

/*
 * Frames nvcc generates around a `kernel<<<...>>>` launch: the host stub named after the kernel,
 * __device_stub__<mangled kernel> and the inline launch helpers of cuda_runtime.h. They are in
 * the program, so the library trimming keeps them, but the launch site a reader wants is the
 * code that wrote the launch.
 */
static bool is_launch_stub(const char *name, const char *below)
{
	static const char *const pfx[] = { "__device_stub_", "__cudaLaunchKernel_helper",
					   "__cudaLaunch", "cudaLaunchKernel<",
					   "cudaLaunchKernelEx<", "cudaLaunchCooperativeKernel<" };
	const char *m;
	size_t i, len;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(name, pfx[i], strlen(pfx[i])))
			return true;
	/* the host stub: "matmul_kernel(...)" above "__device_stub__Z13matmul_kernelPKfS0_Pf" */
	if (!below || strncmp(below, "__device_stub__Z", 16))
		return false;
	len = strtoul(below + 16, (char **)&m, 10);
	return len && strlen(m) >= len && !strncmp(name, m, len) &&
	       (name[len] == '(' || name[len] == '<');
}

/* "libtorch_cuda.so+0x261502d", "[unknown]": a frame without a name here */
static bool unnamed_frame(const char *name)
{
	return !name || name[0] == '[' || strstr(name, "+0x");
}

/*
 * The trimmed stack's innermost frame less launch stubs (*site, a frame id of ses->pool) and
 * its last max frames root first, joined with " > " and followed by leaf when given (*path, an id of g->names).
 */
static int stack_path(struct gs *g, uint32_t pid, uint64_t ts, uint32_t stack_id, uint32_t max,
		      const char *leaf, uint32_t *site, uint32_t *path)
{
	const uint32_t *f;
	uint32_t n, i;
	char buf[2048] = "";
	size_t len = 0;
	int err;

	err = symbolizer__stack(&g->ses->sym, pid, ts, stack_id, true, &f, &n);
	if (err)
		return err;
	for (i = n; i > 1 && is_launch_stub(strpool__str(&g->ses->pool, f[i - 1]),
					    i < n ? strpool__str(&g->ses->pool, f[i]) : NULL); i--)
		;
	n = i;
	*site = n ? f[n - 1] : 0;
	/* a site this machine cannot name: the innermost frame it can (a Python one, say) */
	for (i = n; i > 0 && unnamed_frame(strpool__str(&g->ses->pool, f[i - 1])); i--)
		;
	if (i > 0)
		*site = f[i - 1];
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

static int launch_site(struct gs *g, uint32_t li, uint32_t *site, uint32_t *path)
{
	const struct xpu_rec_gpu_launch *l = &g->t->launches[li];
	int err;

	if (!g->done[li]) {
		err = stack_path(g, l->pid, l->ts_ns, session__launch_stack(g->ses, li),
				 SITE_PATH_FRAMES, NULL, &g->site[li], &g->path[li]);
		if (err)
			return err;
		g->done[li] = 1;
	}
	*site = g->site[li];
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
		return x->total > y->total ? -1 : 1;
	return x->name_str < y->name_str ? -1 : x->name_str > y->name_str;
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
	for (i = 0; i < g->n; i++) {
		const struct act *a = &g->a[i];
		uint64_t d = dur(a->start, a->end);
		uint32_t *v;
		bool ins;

		if (a->type != ACT_KERNEL)
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
		const char *name = trace__string(g->t, ks[i].name_str);
		char dem[DEMANGLE_MAX_OUTPUT];

		if (!name)
			name = "[unknown kernel]";
		else if (xpu_demangle(name, dem, sizeof(dem)) >= 0)
			name = dem;
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
	uint32_t site, path;		/* site 0: no launch record */
	uint32_t npaths;
	uint64_t ns;
	uint64_t cnt[ACT_NR];
};

static struct gs *cmp_g;	/* qsort has no context argument */

static const char *site_name(const struct site_stat *s)
{
	return s->site ? strpool__str(&cmp_g->ses->pool, s->site) : "[no launch record]";
}

/* By site, then time (heaviest path first), then path text. */
static int cmp_site_path(const void *a, const void *b)
{
	const struct site_stat *x = a, *y = b;
	int c = strcmp(site_name(x), site_name(y));

	if (c)
		return c;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(strpool__str(&cmp_g->names, x->path), strpool__str(&cmp_g->names, y->path));
}

static int cmp_site(const void *a, const void *b)
{
	const struct site_stat *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(site_name(x), site_name(y));
}

static int print_sites(struct gs *g, FILE *out)
{
	struct site_stat *ss = NULL, *sites = NULL;
	struct kmap idx = { 0 };
	size_t i, n = 0, cap = 0, nsites = 0;
	int err = 0;

	for (i = 0; i < g->n; i++) {
		const struct act *a = &g->a[i];
		struct site_stat z = { 0 };
		uint32_t site = 0, path = 0, *v;
		bool ins;

		if (a->launch) {
			err = launch_site(g, a->launch - 1, &site, &path);
			if (err)
				goto out;
		}
		v = kmap__put(&idx, site, path, n, &ins);
		if (!v || (ins && VEC_PUSH(ss, n, cap, z))) {
			err = -ENOMEM;
			goto out;
		}
		ss[*v].site = site;
		ss[*v].path = path;
		ss[*v].ns += dur(a->start, a->end);
		ss[*v].cnt[a->type]++;
	}
	if (!n)
		goto out;
	cmp_g = g;
	qsort(ss, n, sizeof(*ss), cmp_site_path);
	/* merge each site's paths into its first (heaviest) entry */
	sites = calloc(n, sizeof(*sites));
	if (!sites) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct site_stat *s;
		int k;

		if (!nsites || sites[nsites - 1].site != ss[i].site) {
			sites[nsites] = ss[i];
			sites[nsites++].npaths = 1;
			continue;
		}
		s = &sites[nsites - 1];
		s->npaths++;
		s->ns += ss[i].ns;
		for (k = 0; k < ACT_NR; k++)
			s->cnt[k] += ss[i].cnt[k];
	}
	qsort(sites, nsites, sizeof(*sites), cmp_site);
	fprintf(out, "# top gpu launch sites (first caller outside the CUDA libraries and nvcc's "
		"launch stubs, else the innermost named frame; share of GPU time)\n%8s %12s %8s %8s %8s  %s\n", "share", "gpu_us", "kernels", "copies",
		"memsets", "site / heaviest call path");
	for (i = 0; i < nsites && i < TOP_N; i++) {
		const struct site_stat *s = &sites[i];
		const char *path = strpool__str(&g->names, s->path);
		bool show_path = s->site && strcmp(path, site_name(s));

		fprintf(out, "%7.2f%% %12.1f %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "  %s\n",
			pct(s->ns, g->total_ns), s->ns / 1e3, s->cnt[ACT_KERNEL], s->cnt[ACT_MEMCPY],
			s->cnt[ACT_MEMSET], site_name(s));
		/* the call path under the site line, when it says more than the site */
		if (show_path || s->npaths > 1) {
			fprintf(out, "%50s", "");
			if (show_path)
				fputs(path, out);
			if (s->npaths > 1)
				fprintf(out, "%s(+%u other call paths)", show_path ? " " : "",
					s->npaths - 1);
			fputc('\n', out);
		}
	}
	if (nsites > TOP_N)
		fprintf(out, "(%zu more sites)\n", nsites - TOP_N);
	fprintf(out, "\n");
out:
	kmap__free(&idx);
	free(ss);
	free(sites);
	return err;
}

/* ---- busy time per device --------------------------------------------------------------- */

static const char *device_name(struct gs *g, uint32_t device)
{
	size_t i;

	for (i = 0; i < g->t->ndevices; i++) {
		const struct xpu_rec_gpu_device *d = &g->t->devices[i];
		const char *s;

		if (d->device == device && filter__process(&g->ses->filter, d->pid) &&
		    (s = trace__string(g->t, d->name_str)) && *s)
			return s;
	}
	return "-";
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
	for (i = 0; i < g->n; i++)
		iv[i] = (struct gpu_interval){ g->a[i].start, g->a[i].end, g->a[i].device };
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

	for (i = 0; i < g->n; i++) {
		const struct act *a = &g->a[i];

		if (a->type == ACT_KERNEL)
			continue;
		/* memsets in the last slot, unknown copy kinds in slot 0 */
		k = a->type == ACT_MEMSET ? NKINDS : a->copy_kind < NKINDS ? a->copy_kind : 0;
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

/* ---- time blocked in synchronization ---------------------------------------------------- */

struct blk {
	uint64_t start, end;
	uint32_t pid, tid, corr;
	uint32_t name;			/* id in g->names */
	uint32_t launch;		/* launch index + 1, or 0 */
};

/*
 * The display name of a blocking synchronize API, or NULL. CUPTI names carry a version
 * ("cudaDeviceSynchronize_v3020") and per-thread stream variants a "_ptsz": both are dropped
 * so that every spelling of one call lands on one line.
 */
static const char *sync_api(const char *name, char *buf, size_t size)
{
	static const char *const calls[] = {
		"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
		"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
	};
	size_t i, n;

	for (i = 0; name && i < sizeof(calls) / sizeof(calls[0]); i++) {
		n = strlen(calls[i]);
		if (strncmp(name, calls[i], n) || (name[n] && name[n] != '_'))
			continue;
		snprintf(buf, size, "%s", calls[i]);
		return buf;
	}
	return NULL;
}

static const char *sync_kind_name(uint32_t kind)
{
	switch (kind) {
	case XPU_SYNC_EVENT: return "[sync] event";
	case XPU_SYNC_STREAM: return "[sync] stream";
	case XPU_SYNC_CONTEXT: return "[sync] context";
	default: return "[sync] unknown";
	}
}

static int cmp_blk(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;	/* the enclosing call first */
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

struct bstat {
	uint32_t key;			/* name or path id in g->names */
	uint64_t count, ns, max;
};

static int cmp_bstat(const void *a, const void *b)
{
	const struct bstat *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(strpool__str(&cmp_g->names, x->key), strpool__str(&cmp_g->names, y->key));
}

static int bstat_add(struct kmap *idx, struct bstat **arr, size_t *n, size_t *cap, uint32_t key,
		     uint64_t ns)
{
	struct bstat z = { .key = key };
	uint32_t *v;
	bool ins;

	v = kmap__put(idx, key, 0, *n, &ins);
	if (!v || (ins && VEC_PUSH(*arr, *n, *cap, z)))
		return -ENOMEM;
	(*arr)[*v].count++;
	(*arr)[*v].ns += ns;
	if (ns > (*arr)[*v].max)
		(*arr)[*v].max = ns;
	return 0;
}

static int collect_blocked(struct gs *g, struct blk **out_b, size_t *out_n)
{
	const struct trace *t = g->t;
	struct blk *b = NULL;
	size_t i, n = 0, cap = 0, kept = 0;
	char buf[64];
	int err = 0;

	for (i = 0; i < t->napis; i++) {
		const struct xpu_rec_gpu_api *a = &t->apis[i];
		const char *name = sync_api(trace__string(t, a->name_str), buf, sizeof(buf));
		long l;
		struct blk x;

		if (!name || !filter__span(&g->ses->filter, a->pid, a->tid, a->start_ns, a->end_ns))
			continue;
		l = gpu_join__launch(g->j, a->pid, a->corr_id);
		x = (struct blk){ a->start_ns, a->end_ns, a->pid, a->tid, a->corr_id,
				  strpool__intern(&g->names, name, strlen(name)), l + 1 };
		if (!x.name || VEC_PUSH(b, n, cap, x)) {
			err = -ENOMEM;
			goto fail;
		}
	}
	for (i = 0; i < t->nsyncs; i++) {
		const struct xpu_rec_gpu_sync *s = &t->syncs[i];
		const char *name = sync_kind_name(s->kind);
		long l = gpu_join__launch(g->j, s->pid, s->corr_id);
		uint32_t tid = l >= 0 ? t->launches[l].tid : 0;
		struct blk x;

		/*
		 * A stream waiting for an event does not block the CPU. A sync activity whose call
		 * has an API record is that call, counted above.
		 */
		if (s->kind == XPU_SYNC_STREAM_WAIT_EVENT || gpu_join__api(g->j, s->pid, s->corr_id) >= 0 ||
		    !filter__span(&g->ses->filter, s->pid, tid, s->start_ns, s->end_ns))
			continue;
		x = (struct blk){ s->start_ns, s->end_ns, s->pid, tid, s->corr_id,
				  strpool__intern(&g->names, name, strlen(name)), l + 1 };
		if (!x.name || VEC_PUSH(b, n, cap, x)) {
			err = -ENOMEM;
			goto fail;
		}
	}
	if (n)
		qsort(b, n, sizeof(*b), cmp_blk);
	/* a driver call made by a runtime call lies inside it on the same thread: count once */
	for (i = 0; i < n; i++) {
		const struct blk *k = kept ? &b[kept - 1] : NULL;

		if (k && k->pid == b[i].pid && k->tid == b[i].tid && b[i].start >= k->start &&
		    b[i].end <= k->end)
			continue;
		b[kept++] = b[i];
	}
	*out_b = b;
	*out_n = kept;
	return 0;
fail:
	free(b);
	return err;
}

static int print_blocked(struct gs *g, FILE *out)
{
	const struct trace *t = g->t;
	struct blk *b = NULL;
	struct bstat *byname = NULL, *bystack = NULL;
	struct kmap iname = { 0 }, istack = { 0 };
	size_t nb = 0, nn = 0, cn = 0, ns = 0, cs = 0, i;
	uint64_t total = 0;
	int err;

	err = collect_blocked(g, &b, &nb);
	if (err || !nb)
		goto out;
	for (i = 0; !err && i < nb; i++) {
		uint64_t d = dur(b[i].start, b[i].end);
		const char *name = strpool__str(&g->names, b[i].name);
		uint32_t path = 0, site;

		if (b[i].launch) {
			const struct xpu_rec_gpu_launch *l = &t->launches[b[i].launch - 1];

			err = stack_path(g, l->pid, l->ts_ns, session__launch_stack(g->ses, b[i].launch - 1),
					 SYNC_PATH_FRAMES, name, &site, &path);
		} else {
			char buf[128];

			snprintf(buf, sizeof(buf), "[no launch record] > %s", name);
			path = strpool__intern(&g->names, buf, strlen(buf));
			err = path ? 0 : -ENOMEM;
		}
		if (!err)
			err = bstat_add(&iname, &byname, &nn, &cn, b[i].name, d);
		if (!err)
			err = bstat_add(&istack, &bystack, &ns, &cs, path, d);
		total += d;
	}
	if (err)
		goto out;
	cmp_g = g;
	qsort(byname, nn, sizeof(*byname), cmp_bstat);
	qsort(bystack, ns, sizeof(*bystack), cmp_bstat);
	fprintf(out, "# time blocked in gpu synchronization: %.1f us in %zu calls", total / 1e3, nb);
	if (t->has_session && t->has_end && t->end.end_mono_ns > t->session.start_mono_ns)
		fprintf(out, ", %.2f%% of the session",
			pct(total, t->end.end_mono_ns - t->session.start_mono_ns));
	fprintf(out, "\n# (CPU time inside synchronize calls; a driver call inside a runtime call "
		"counted once)\n%8s %12s %8s %10s %10s  %s\n", "share", "total_us", "count",
		"mean_us", "max_us", "call");
	for (i = 0; i < nn; i++)
		fprintf(out, "%7.2f%% %12.1f %8" PRIu64 " %10.1f %10.1f  %s\n",
			pct(byname[i].ns, total), byname[i].ns / 1e3, byname[i].count,
			byname[i].ns / 1e3 / byname[i].count, byname[i].max / 1e3,
			strpool__str(&g->names, byname[i].key));
	fprintf(out, "\n# top stacks blocked in gpu synchronization\n%8s %12s %8s  %s\n", "share",
		"total_us", "count", "stack");
	for (i = 0; i < ns && i < TOP_N; i++)
		fprintf(out, "%7.2f%% %12.1f %8" PRIu64 "  %s\n", pct(bystack[i].ns, total),
			bystack[i].ns / 1e3, bystack[i].count, strpool__str(&g->names, bystack[i].key));
	if (ns > TOP_N)
		fprintf(out, "(%zu more stacks)\n", ns - TOP_N);
	fprintf(out, "\n");
out:
	kmap__free(&iname);
	kmap__free(&istack);
	free(byname);
	free(bystack);
	free(b);
	return err;
}

/* ---- launch matching and clocks --------------------------------------------------------- */

static int print_matching(struct gs *g, FILE *out)
{
	static const char *const names[ACT_NR] = { "kernels", "copies", "memsets" };
	uint64_t total[ACT_NR] = { 0 }, stacked[ACT_NR] = { 0 };
	uint64_t matched = 0, before_launch = 0, with_api = 0, before_api = 0;
	size_t i;
	int k;

	if (!g->n)
		return 0;
	for (i = 0; i < g->n; i++) {
		const struct act *a = &g->a[i];
		total[a->type]++;
		if (a->launch) {
			const struct xpu_rec_gpu_launch *l = &g->t->launches[a->launch - 1];

			matched++;
			if (session__launch_stack(g->ses, a->launch - 1))
				stacked[a->type]++;
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
	for (k = 0; k < ACT_NR; k++)
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

/* ---- CUPTI state per process ------------------------------------------------------------ */

struct gproc {
	uint32_t pid;
	uint32_t order[8];		/* states in the order first seen */
	int nstates;
	uint64_t dropped;
	int64_t offset;
	bool fallback;
};

static const char *state_name(uint32_t s)
{
	switch (s) {
	case XPU_GPU_PROC_CONNECTED: return "connected";
	case XPU_GPU_PROC_SUBSCRIBE_FAILED: return "subscribe-failed";
	case XPU_GPU_PROC_CLOCK_FALLBACK: return "clock-fallback";
	case XPU_GPU_PROC_FLUSHED: return "flushed";
	case XPU_GPU_PROC_NO_CUPTI: return "no-cupti";
	case XPU_GPU_PROC_ATTACHED: return "attached mid-run";
	case XPU_GPU_PROC_DETACHED: return "detached";
	default: return "unknown";
	}
}

static int cmp_gproc(const void *a, const void *b)
{
	const struct gproc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* One entry per pid, sorted by pid; states in file order. */
static int collect_procs(const struct trace *t, struct session *ses, struct gproc **out,
			 size_t *nout)
{
	struct gproc *gp;
	struct kmap idx = { 0 };
	size_t i, n = 0;

	gp = calloc(t->ngpu_procs ? t->ngpu_procs : 1, sizeof(*gp));
	if (!gp)
		return -ENOMEM;
	for (i = 0; i < t->ngpu_procs; i++) {
		const struct xpu_rec_gpu_process *r = &t->gpu_procs[i];
		uint32_t st = r->state >= 1 && r->state <= XPU_GPU_PROC_DETACHED ? r->state : 0;
		struct gproc *g;
		uint32_t *v;
		bool ins;
		int k;

		if (ses && !filter__process(&ses->filter, r->pid))
			continue;
		v = kmap__put(&idx, r->pid, 0, n, &ins);
		if (!v) {
			kmap__free(&idx);
			free(gp);
			return -ENOMEM;
		}
		if (ins)
			gp[n++].pid = r->pid;
		g = &gp[*v];
		for (k = 0; k < g->nstates && g->order[k] != st; k++)
			;
		if (k == g->nstates && k < (int)(sizeof(g->order) / sizeof(g->order[0])))
			g->order[g->nstates++] = st;
		/* CUPTI's dropped count is cumulative: the largest is the latest */
		if (r->cupti_dropped > g->dropped)
			g->dropped = r->cupti_dropped;
		if (st == XPU_GPU_PROC_CLOCK_FALLBACK) {
			g->fallback = true;
			g->offset = r->clock_offset_ns;
		}
	}
	kmap__free(&idx);
	if (n > 1)
		qsort(gp, n, sizeof(*gp), cmp_gproc);
	*out = gp;
	*nout = n;
	return 0;
}

static void print_states(const struct gproc *g, FILE *out)
{
	bool connected = false, flushed = false;
	int k;

	for (k = 0; k < g->nstates; k++) {
		fprintf(out, "%s%s", k ? ", " : "", state_name(g->order[k]));
		connected |= g->order[k] == XPU_GPU_PROC_CONNECTED;
		flushed |= g->order[k] == XPU_GPU_PROC_FLUSHED;
	}
	/* records still in CUPTI's buffers at the end are lost without a final flush */
	if (connected && !flushed)
		fprintf(out, " (no final flush)");
}

static int print_procs_text(struct gs *g, FILE *out)
{
	struct gproc *gp;
	size_t n, i;
	char buf[32];
	int err;

	err = collect_procs(g->t, g->ses, &gp, &n);
	if (err)
		return err;
	if (n)
		fprintf(out, "# gpu processes (CUPTI state; clock offset applied in clock-fallback "
			"mode)\n%8s %10s %16s  %-16s  %s\n", "pid", "dropped", "clock_offset_ns",
			"comm", "states");
	for (i = 0; i < n; i++) {
		char off[24] = "-", cut[OUT_NAME_MAX_BYTES + 4];

		if (gp[i].fallback)
			snprintf(off, sizeof(off), "%" PRId64, gp[i].offset);
		fprintf(out, "%8u %10" PRIu64 " %16s  %-16s  ", gp[i].pid, gp[i].dropped, off,
			str__cut(trace__comm(g->t, gp[i].pid, buf, sizeof(buf)), OUT_NAME_MAX_BYTES,
				 cut));
		print_states(&gp[i], out);
		fputc('\n', out);
	}
	if (n)
		fputc('\n', out);
	free(gp);
	return 0;
}

int gpu_stats__print_procs(const struct trace *t, FILE *out)
{
	struct gproc *gp;
	size_t n, i;
	int err;

	err = collect_procs(t, NULL, &gp, &n);
	if (err)
		return err;
	if (n)
		fprintf(out, "gpu processes\n");
	for (i = 0; i < n; i++) {
		fprintf(out, "  pid %-12u ", gp[i].pid);
		print_states(&gp[i], out);
		fprintf(out, "; cupti dropped %" PRIu64, gp[i].dropped);
		if (gp[i].fallback)
			fprintf(out, "; clock offset %" PRId64 " ns", gp[i].offset);
		fputc('\n', out);
	}
	free(gp);
	return 0;
}

int gpu_stats__print_text(struct session *ses, FILE *out)
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
		err = print_blocked(&g, out);
	if (!err)
		err = print_matching(&g, out);
	if (!err)
		err = print_procs_text(&g, out);
	gs_free(&g);
	return err;
}
