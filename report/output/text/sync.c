// SPDX-License-Identifier: MIT
/*
 * Time blocked in GPU synchronization (text.h): the CPU time inside synchronize calls, by call
 * and by the stack of the launch they waited for.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "output/text/gpu.h"

#define SYNC_PATH_FRAMES 6

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

/*
 * The synchronize call a launch record made, by its CUPTI callback id (cupti_runtime_cbid.h,
 * cupti_driver_cbid.h: CUPTI's ABI, values never reused), or NULL. A sync activity without
 * an API record (attached mid-run, XPU_CUPTI_API=none) still has the launch record of its call,
 * which says which call it was where the activity's kind says only what it waited for.
 */
static const char *sync_cbid_name(uint32_t domain, uint32_t cbid)
{
	static const struct { uint32_t domain, cbid; const char *name; } calls[] = {
		{ XPU_API_RUNTIME, 126, "cudaThreadSynchronize" },
		{ XPU_API_RUNTIME, 131, "cudaStreamSynchronize" },
		{ XPU_API_RUNTIME, 137, "cudaEventSynchronize" },
		{ XPU_API_RUNTIME, 165, "cudaDeviceSynchronize" },
		{ XPU_API_RUNTIME, 239, "cudaStreamSynchronize" },	/* _ptsz */
		{ XPU_API_DRIVER, 17, "cuCtxSynchronize" },
		{ XPU_API_DRIVER, 121, "cuEventSynchronize" },
		{ XPU_API_DRIVER, 126, "cuStreamSynchronize" },
		{ XPU_API_DRIVER, 440, "cuStreamSynchronize" },	/* _ptsz */
		{ XPU_API_DRIVER, 800, "cuCtxSynchronize" },		/* _v2 */
	};
	size_t i;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (calls[i].domain == domain && calls[i].cbid == cbid)
			return calls[i].name;
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
		return CMP(x->pid, y->pid);
	if (x->tid != y->tid)
		return CMP(x->tid, y->tid);
	if (x->start != y->start)
		return CMP(x->start, y->start);
	if (x->end != y->end)
		return CMP(y->end, x->end);	/* the enclosing call first */
	return CMP(x->corr, y->corr);
}

struct bstat {
	uint32_t key;			/* name or path id in g->names */
	uint64_t count, ns, max;
};

static int cmp_bstat(const void *a, const void *b, void *names)
{
	const struct bstat *x = a, *y = b;

	if (x->ns != y->ns)
		return CMP(y->ns, x->ns);
	return strcmp(strpool__str(names, x->key), strpool__str(names, y->key));
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
		long l = gpu_join__launch(g->j, s->pid, s->corr_id);
		uint32_t tid = l >= 0 ? t->launches[l].tid : 0;
		const char *name = l < 0 ? NULL :
				   sync_cbid_name(t->launches[l].domain, t->launches[l].cbid);
		struct blk x;

		/*
		 * A stream waiting for an event does not block the CPU. A sync activity whose call
		 * has an API record is that call, counted above.
		 */
		if (s->kind == XPU_SYNC_STREAM_WAIT_EVENT || gpu_join__api(g->j, s->pid, s->corr_id) >= 0 ||
		    !filter__span(&g->ses->filter, s->pid, tid, s->start_ns, s->end_ns))
			continue;
		if (!name)
			name = sync_kind_name(s->kind);
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

int text_gpu__blocked(struct gs *g, FILE *out)
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

			err = text_gpu__stack_path(g, l->pid, l->ts_ns,
						   session__launch_stack(g->ses, b[i].launch - 1),
						   SYNC_PATH_FRAMES, name, &site, &path, NULL);
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
	qsort_r(byname, nn, sizeof(*byname), cmp_bstat, &g->names);
	qsort_r(bystack, ns, sizeof(*bystack), cmp_bstat, &g->names);
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

