// SPDX-License-Identifier: MIT
/* ioctls on NVIDIA device files, by request code and by the CUDA API call they ran under. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "output/ioctl_names.h"
#include "output/out.h"
#include "output/text/text.h"

#define TOP_N 25
/* API records examined back from an ioctl's start: enough for a driver call nested in a
 * runtime call, and a few short calls ended before it */
#define NEST_SCAN 8

struct row {
	uint64_t key;			/* request code, or API name string id (+1; 0: none) */
	uint32_t file_str;
	uint64_t count, calls, ns, driver_ns, errors;
};

static int cmp_api(const void *a, const void *b, void *apis)
{
	const struct xpu_rec_gpu_api *r = apis;
	const struct xpu_rec_gpu_api *x = &r[*(const uint32_t *)a], *y = &r[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return CMP(x->pid, y->pid);
	if (x->tid != y->tid)
		return CMP(x->tid, y->tid);
	return CMP(x->start_ns, y->start_ns);
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->ns != y->ns)
		return CMP(y->ns, x->ns);
	return CMP(x->key, y->key);
}

struct api_at {
	const struct trace *t;
	const uint32_t *by;		/* API records by (pid, tid, start) */
	const struct xpu_rec_driver_ioctl *io;
};

/* by[i] starts at or before io, by (pid, tid, start) */
static bool api_at_most(size_t i, const void *arg)
{
	const struct api_at *at = arg;
	const struct xpu_rec_gpu_api *a = &at->t->apis[at->by[i]];
	const struct xpu_rec_driver_ioctl *io = at->io;

	return a->pid < io->pid || (a->pid == io->pid && (a->tid < io->tid ||
	       (a->tid == io->tid && a->start_ns <= io->start_ns)));
}

/* The innermost API record of io's thread whose time contains it: its index, or -1. */
static long containing_api(const struct trace *t, const uint32_t *by, size_t n,
			   const struct xpu_rec_driver_ioctl *io)
{
	/* first record after (pid, tid, start) */
	size_t lo = upper_bound(n, api_at_most, &(struct api_at){ t, by, io }), k;

	for (k = 0; k < NEST_SCAN && lo > k; k++) {
		const struct xpu_rec_gpu_api *a = &t->apis[by[lo - 1 - k]];

		if (a->pid != io->pid || a->tid != io->tid)
			break;
		if (a->end_ns >= io->end_ns)
			return by[lo - 1 - k];
	}
	return -1;
}

static struct row *row_of(struct row **rows, size_t *n, size_t *cap, struct kmap *idx,
			  uint64_t key)
{
	uint32_t *v;
	bool ins;

	v = kmap__put(idx, key, 0, (uint32_t)*n, &ins);
	if (!v)
		return NULL;
	if (ins) {
		if (vec_reserve((void **)rows, cap, *n + 1, sizeof(**rows)))
			return NULL;
		(*rows)[(*n)++] = (struct row){ .key = key };
	}
	return &(*rows)[*v];
}

/* A string of the trace, cut as names are (into buf), or none. */
static const char *str_or(const struct trace *t, uint32_t id, const char *none,
			  char buf[OUT_NAME_MAX_BYTES + 4])
{
	const char *s = id ? trace__string(t, id) : NULL;

	return s ? str__cut(s, OUT_NAME_MAX_BYTES, buf) : none;
}

static void print_rows(const struct trace *t, struct row *rows, size_t n, bool by_api, FILE *out)
{
	size_t i;

	if (n)	/* an empty table may be NULL */
		qsort(rows, n, sizeof(*rows), cmp_row);
	for (i = 0; i < n && i < TOP_N; i++) {
		const struct row *r = &rows[i];
		char cut[OUT_NAME_MAX_BYTES + 4];
		const char *name = by_api ? NULL :
			ioctl_request_name((uint32_t)r->key, str_or(t, r->file_str, NULL, cut));

		if (by_api)
			fprintf(out, "  %8" PRIu64 " %8" PRIu64 " %12.1f %12.1f  %s\n", r->calls,
				r->count, r->ns / 1e3, r->driver_ns / 1e3,
				r->key ? str_or(t, (uint32_t)(r->key - 1), "(unnamed call)", cut) :
					 "(outside any recorded CUDA call)");
		else
			fprintf(out, "  %#10" PRIx64 " %8" PRIu64 " %12.1f %12.1f %7" PRIu64 "  %-30s %s\n",
				r->key, r->count, r->ns / 1e3, r->driver_ns / 1e3, r->errors,
				name ? name : "-",
				str_or(t, r->file_str, "?", cut));
	}
}

int text__ioctls(const struct session *s, FILE *out)
{
	const struct trace *t = s->t;
	struct row *req = NULL, *api = NULL;
	size_t nreq = 0, creq = 0, napi = 0, capi = 0, i;
	struct kmap ireq = { 0 }, iapi = { 0 };
	uint32_t *by = NULL;
	uint64_t timed = 0, last_api = (uint64_t)-1;
	int err = -ENOMEM;

	if (!t->nioctls)
		return 0;
	by = calloc(t->napis + 1, sizeof(*by));
	if (!by)
		goto out;
	for (i = 0; i < t->napis; i++)
		by[i] = (uint32_t)i;
	qsort_r(by, t->napis, sizeof(*by), cmp_api, t->apis);
	for (i = 0; i < t->nioctls; i++) {
		const struct xpu_rec_driver_ioctl *io = &t->ioctls[i];
		uint64_t ns = io->end_ns > io->start_ns ? io->end_ns - io->start_ns : 0;
		long a;
		struct row *r;

		if (!filter__span(&s->filter, io->pid, io->tid, io->start_ns, io->end_ns))
			continue;
		timed += !!(io->flags & XPU_IOCTL_DRIVER_TIMED);
		r = row_of(&req, &nreq, &creq, &ireq, io->request);
		if (!r)
			goto out;
		r->file_str = r->file_str ? r->file_str : io->file_str;
		r->count++;
		r->ns += ns;
		r->driver_ns += io->driver_ns;
		r->errors += io->ret < 0;
		a = containing_api(t, by, t->napis, io);
		r = row_of(&api, &napi, &capi, &iapi, a < 0 ? 0 : (uint64_t)t->apis[a].name_str + 1);
		if (!r)
			goto out;
		/* ioctls of one call are consecutive in a thread's file order: count the call once */
		r->calls += a >= 0 && (uint64_t)a != last_api;
		last_api = a < 0 ? (uint64_t)-1 : (uint64_t)a;
		r->count++;
		r->ns += ns;
		r->driver_ns += io->driver_ns;
	}
	fprintf(out, "\n# driver ioctls by request code (NVIDIA device files; us in the syscall and, "
		"%s, inside the driver)\n", timed ? "where timed" : "not timed here: no BTF for the module");
	fprintf(out, "  %10s %8s %12s %12s %7s  %-30s %s\n", "request", "count", "total_us",
		"driver_us", "errors", "name", "file");
	print_rows(t, req, nreq, false, out);
	fprintf(out, "\n# driver ioctls by CUDA API call (the innermost call of the thread that "
		"contains the ioctl)\n");
	fprintf(out, "  %8s %8s %12s %12s  %s\n", "calls", "ioctls", "total_us", "driver_us", "api");
	print_rows(t, api, napi, true, out);
	err = 0;
out:
	free(by);
	free(req);
	free(api);
	kmap__free(&ireq);
	kmap__free(&iapi);
	return err;
}
