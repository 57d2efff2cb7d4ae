// SPDX-License-Identifier: MIT
/*
 * CUPTI state per process (text.h): the states each traced process went through, its dropped
 * records and clock offset; a table in the text report, a list in `info`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "base/sort.h"
#include "output/out.h"
#include "output/text/gpu.h"

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

	return CMP(x->pid, y->pid);
}

/* One entry per pid, sorted by pid; states in file order. */
static int collect_procs(const struct trace *t, const struct session *ses, struct gproc **out,
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

int text_gpu__procs(struct gs *g, FILE *out)
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

int text__gpu_procs(const struct trace *t, FILE *out)
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
