// SPDX-License-Identifier: MIT
/*
 * Checks a trace recorded on the GPU machine against what the program said it did.
 *
 *   check_trace TRACE.xpu [--expect FILE] [--folded FILE] [--min-match PCT]
 *
 * --expect: the "expect ..." lines a sample printed (samples/cuda_pipeline.cu). Without it only
 * generic checks run (kernels exist, launches exist, match rate, ordering).
 * --folded: `xpu-report -F folded --view=gpu --weight=time` output, to check that each kernel's
 * launch stacks contain the host function that launched it.
 *
 * Prints a summary with figures; exits 1 when a check fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_reader.h"
#include "xpu_format.h"

struct kern {
	uint64_t start_ns, end_ns;
	uint32_t pid, corr, name_str, flags, graph_id;
};

struct launch {
	uint64_t ts_ns;
	uint32_t pid, corr, cbid, domain, stack_id, uses;
};

static char **strs;
static uint32_t nstrs;
static struct kern *kerns;
static size_t nkerns, ckerns;
static struct launch *launches;
static size_t nlaunches, claunches;
/* cbid -> API name, per domain, from the API records */
static uint32_t api_name[3][2048];
static int failures;

#define FAIL(...)                                                                          \
	do {                                                                               \
		failures++;                                                                \
		printf("FAIL: ");                                                          \
		printf(__VA_ARGS__);                                                       \
		printf("\n");                                                              \
	} while (0)

static const char *str(uint32_t id)
{
	return id < nstrs && strs[id] ? strs[id] : "";
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 1024;
	p = realloc(p, *cap * size);
	if (!p) {
		perror("realloc");
		exit(2);
	}
	return p;
}

static int cmp_launch(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static struct launch *find_launch(uint32_t pid, uint32_t corr)
{
	struct launch key = { .pid = pid, .corr = corr };

	return bsearch(&key, launches, nlaunches, sizeof(key), cmp_launch);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t memcpy_count[16], memset_count, nvtx_ranges, nvtx_marks, lost[8], devices;
static uint64_t proc_state[8];
/* when the first process connected (its CUDA initialization) and the session started, mono */
static uint64_t first_connect_ns, session_start_ns;

static int load(const char *path)
{
	char err[256];
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	struct trace_record rec;

	if (!r) {
		fprintf(stderr, "%s: %s\n", path, err);
		return -1;
	}
	while (trace_reader__next(r, &rec) == 1) {
		switch (rec.type) {
		case XPU_REC_STRING: {
			struct xpu_rec_string s;
			uint32_t tail = 0;
			const char *t = trace_record__get(&rec, &s, sizeof(s), &tail);

			if (s.id >= nstrs) {
				uint32_t n = s.id * 2 + 16;

				strs = realloc(strs, n * sizeof(*strs));
				memset(strs + nstrs, 0, (n - nstrs) * sizeof(*strs));
				nstrs = n;
			}
			if (t && s.len <= tail)
				strs[s.id] = strndup(t, s.len);
			break;
		}
		case XPU_REC_GPU_KERNEL: {
			struct xpu_rec_gpu_kernel k;

			trace_record__get(&rec, &k, sizeof(k), NULL);
			kerns = grow(kerns, &ckerns, nkerns, sizeof(*kerns));
			kerns[nkerns++] = (struct kern){ k.start_ns, k.end_ns, k.pid, k.corr_id,
							 k.name_str, k.flags, k.graph_id };
			break;
		}
		case XPU_REC_GPU_LAUNCH: {
			struct xpu_rec_gpu_launch l;

			trace_record__get(&rec, &l, sizeof(l), NULL);
			launches = grow(launches, &claunches, nlaunches, sizeof(*launches));
			launches[nlaunches++] = (struct launch){ l.ts_ns, l.pid, l.corr_id, l.cbid,
								 l.domain, l.stack_id, 0 };
			break;
		}
		case XPU_REC_GPU_API: {
			struct xpu_rec_gpu_api a;

			trace_record__get(&rec, &a, sizeof(a), NULL);
			if (a.domain <= 2 && a.cbid < 2048)
				api_name[a.domain][a.cbid] = a.name_str;
			break;
		}
		case XPU_REC_GPU_MEMCPY: {
			struct xpu_rec_gpu_memcpy m;

			trace_record__get(&rec, &m, sizeof(m), NULL);
			memcpy_count[m.copy_kind & 15]++;
			break;
		}
		case XPU_REC_GPU_MEMSET:
			memset_count++;
			break;
		case XPU_REC_NVTX: {
			struct xpu_rec_nvtx n;

			trace_record__get(&rec, &n, sizeof(n), NULL);
			if (n.kind == XPU_NVTX_MARKER)
				nvtx_marks++;
			else
				nvtx_ranges++;
			break;
		}
		case XPU_REC_LOST: {
			struct xpu_rec_lost l;

			trace_record__get(&rec, &l, sizeof(l), NULL);
			lost[l.source & 7] += l.count;
			break;
		}
		case XPU_REC_GPU_DEVICE:
			devices++;
			break;
		case XPU_REC_GPU_PROCESS: {
			struct xpu_rec_gpu_process p;

			trace_record__get(&rec, &p, sizeof(p), NULL);
			proc_state[p.state & 7]++;
			if (p.state == XPU_GPU_PROC_CONNECTED && !first_connect_ns)
				first_connect_ns = p.ts_ns;
			break;
		}
		case XPU_REC_SESSION: {
			struct xpu_rec_session s;

			trace_record__get(&rec, &s, sizeof(s), NULL);
			session_start_ns = s.start_mono_ns;
			break;
		}
		}
	}
	printf("trace: %s: %s, %llu records\n", path,
	       trace_reader__status(r)->end == TRACE_END_CLEAN ? "clean" : trace_reader__status(r)->reason,
	       (unsigned long long)trace_reader__status(r)->records);
	trace_reader__close(r);
	qsort(launches, nlaunches, sizeof(*launches), cmp_launch);
	return 0;
}

static size_t count_kernels(const char *name, int in_graph)
{
	size_t i, n = 0;

	for (i = 0; i < nkerns; i++)
		if (strstr(str(kerns[i].name_str), name) &&
		    (in_graph < 0 || !!(kerns[i].flags & XPU_GPU_IN_GRAPH) == in_graph))
			n++;
	return n;
}

/* Weight of folded lines ending in a [gpu] leaf naming `kernel`, and of those with `frame`. */
static void folded_weights(const char *path, const char *kernel, const char *frame, double *all,
			   double *with)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;

	*all = *with = 0;
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *sp = strrchr(line, ' '), *leaf;
		double w;

		if (!sp)
			continue;
		w = atof(sp + 1);
		*sp = '\0';
		leaf = strrchr(line, ';');
		leaf = leaf ? leaf + 1 : line;
		if (!strstr(leaf, "[gpu]") || !strstr(leaf, kernel))
			continue;
		*all += w;
		if (strstr(line, frame))
			*with += w;
	}
	free(line);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *trace = NULL, *expect = NULL, *folded = NULL;
	double min_match = 100.0;
	uint64_t *lat = NULL;
	size_t i, nlat = 0, matched = 0, direct = 0, direct_matched = 0, before = 0, dup_launch = 0;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--expect") && i + 1 < (size_t)argc)
			expect = argv[++i];
		else if (!strcmp(argv[i], "--folded") && i + 1 < (size_t)argc)
			folded = argv[++i];
		else if (!strcmp(argv[i], "--min-match") && i + 1 < (size_t)argc)
			min_match = atof(argv[++i]);
		else
			trace = argv[i];
	}
	if (!trace) {
		fprintf(stderr, "usage: %s TRACE [--expect FILE] [--folded FILE] [--min-match PCT]\n",
			argv[0]);
		return 2;
	}
	if (load(trace))
		return 2;

	for (i = 1; i < nlaunches; i++)
		if (launches[i].pid == launches[i - 1].pid && launches[i].corr == launches[i - 1].corr)
			dup_launch++;
	lat = calloc(nkerns + 1, sizeof(*lat));
	for (i = 0; i < nkerns; i++) {
		struct kern *k = &kerns[i];
		struct launch *l = find_launch(k->pid, k->corr);

		if (!(k->flags & XPU_GPU_IN_GRAPH))
			direct++;
		if (!l)
			continue;
		matched++;
		l->uses++;
		if (!(k->flags & XPU_GPU_IN_GRAPH))
			direct_matched++;
		if (l->ts_ns <= k->start_ns)
			lat[nlat++] = k->start_ns - l->ts_ns;
		else
			before++;
	}
	qsort(lat, nlat, sizeof(*lat), cmp_u64);

	printf("gpu: %zu kernels (%zu direct, %zu in graphs), %zu launch records, %llu devices\n",
	       nkerns, direct, nkerns - direct, nlaunches, (unsigned long long)devices);
	printf("gpu: memcpy HtoD %llu DtoH %llu DtoD %llu PtoP %llu, memset %llu, nvtx ranges %llu markers %llu\n",
	       (unsigned long long)memcpy_count[XPU_MEMCPY_HTOD],
	       (unsigned long long)memcpy_count[XPU_MEMCPY_DTOH],
	       (unsigned long long)memcpy_count[XPU_MEMCPY_DTOD],
	       (unsigned long long)memcpy_count[XPU_MEMCPY_PTOP], (unsigned long long)memset_count,
	       (unsigned long long)nvtx_ranges, (unsigned long long)nvtx_marks);
	if (first_connect_ns && nlaunches)
		printf("gpu start: first connection %.0f ms after the session's start, first launch %.0f ms after it\n",
		       ((double)first_connect_ns - (double)session_start_ns) / 1e6,
		       ((double)launches[0].ts_ns - (double)first_connect_ns) / 1e6);
	printf("gpu: lost cupti-records %llu cupti-transport %llu ringbuf %llu; processes connected %llu flushed %llu subscribe-failed %llu clock-fallback %llu\n",
	       (unsigned long long)lost[XPU_LOST_CUPTI_RECORDS],
	       (unsigned long long)lost[XPU_LOST_CUPTI_TRANSPORT],
	       (unsigned long long)lost[XPU_LOST_RINGBUF],
	       (unsigned long long)proc_state[XPU_GPU_PROC_CONNECTED],
	       (unsigned long long)proc_state[XPU_GPU_PROC_FLUSHED],
	       (unsigned long long)proc_state[XPU_GPU_PROC_SUBSCRIBE_FAILED],
	       (unsigned long long)proc_state[XPU_GPU_PROC_CLOCK_FALLBACK]);
	printf("match: %zu/%zu kernels have a launch stack (%.2f%%); direct %zu/%zu (%.2f%%)\n",
	       matched, nkerns, nkerns ? 100.0 * matched / nkerns : 0.0, direct_matched, direct,
	       direct ? 100.0 * direct_matched / direct : 0.0);
	if (nlat)
		printf("latency launch->kernel start (us): min %.1f p50 %.1f p90 %.1f p99 %.1f max %.1f (n=%zu)\n",
		       lat[0] / 1e3, lat[nlat / 2] / 1e3, lat[nlat * 9 / 10] / 1e3,
		       lat[nlat * 99 / 100] / 1e3, lat[nlat - 1] / 1e3, nlat);

	if (!nkerns)
		FAIL("no kernel records");
	if (!nlaunches)
		FAIL("no launch records");
	if (direct && 100.0 * direct_matched / direct < min_match)
		FAIL("only %.2f%% of direct kernels matched a launch (need %.2f%%)",
		     100.0 * direct_matched / direct, min_match);
	if (before)
		FAIL("%zu kernels start before their launch call was entered", before);
	if (dup_launch)
		FAIL("%zu (pid, corr) pairs have more than one launch record", dup_launch);
	if (!proc_state[XPU_GPU_PROC_FLUSHED])
		FAIL("no process finished its CUPTI flush cleanly");

	if (expect) {
		FILE *f = fopen(expect, "r");
		char line[512];

		if (!f) {
			FAIL("cannot open %s", expect);
			return 1;
		}
		while (fgets(line, sizeof(line), f)) {
			char what[32], name[128], launcher[128] = "";
			long want;
			int n = sscanf(line, "expect %31s %127s %ld %127s", what, name, &want, launcher);

			if (n < 2)
				continue;
			if (!strcmp(what, "kernel") || !strcmp(what, "graph_kernel")) {
				int graph = !strcmp(what, "graph_kernel");
				size_t got = count_kernels(name, graph), j;

				printf("expect %-12s %-18s %4ld: got %zu\n", what, name, want, got);
				if ((long)got != want)
					FAIL("%s: %zu kernel records, expected exactly %ld", name, got, want);
				/* graph kernels: attributed to the graph launch call */
				for (j = 0; graph && j < nkerns; j++) {
					struct launch *l;
					const char *api;

					if (!strstr(str(kerns[j].name_str), name))
						continue;
					l = find_launch(kerns[j].pid, kerns[j].corr);
					api = l && l->domain <= 2 && l->cbid < 2048 ?
						      str(api_name[l->domain][l->cbid]) : "";
					if (!l || !strstr(api, "GraphLaunch")) {
						FAIL("%s: graph kernel not attributed to a graph launch (launch api '%s')",
						     name, api);
						break;
					}
				}
				if (folded && *launcher) {
					double all, with;

					folded_weights(folded, name, launcher, &all, &with);
					printf("  stacks: %.1f%% of %s's GPU time is under %s\n",
					       all ? 100.0 * with / all : 0.0, name, launcher);
					if (all <= 0 || with < all * 0.999)
						FAIL("%s: launch stacks without %s (%.1f of %.1f)", name,
						     launcher, with, all);
				}
			} else if (!strcmp(what, "memcpy") && n >= 3) {
				uint64_t got = !strcmp(name, "HtoD") ? memcpy_count[XPU_MEMCPY_HTOD] :
					       !strcmp(name, "DtoH") ? memcpy_count[XPU_MEMCPY_DTOH] : 0;

				printf("expect memcpy %s %ld: got %llu\n", name, want, (unsigned long long)got);
				if ((long)got < want)
					FAIL("memcpy %s: %llu, expected %ld", name, (unsigned long long)got, want);
			} else if (!strcmp(what, "memset")) {
				want = atol(name);
				if ((long)memset_count < want)
					FAIL("memset: %llu, expected %ld", (unsigned long long)memset_count, want);
			}
		}
		fclose(f);
	}
	printf("%s (%d failures)\n", failures ? "CHECKS FAILED" : "all checks passed", failures);
	free(lat);
	return failures ? 1 : 0;
}
