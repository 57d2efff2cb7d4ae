// SPDX-License-Identifier: MIT
/* Backward work's attributed share (see backward_share.h). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "model/backward_share.h"

int backward_share__compute(const struct session *s, struct backward_share *b)
{
	const struct backward_stats *bw = &s->bw;
	const struct gpu_join *j;
	size_t i;

	memset(b, 0, sizeof(*b));
	if (!bw->launch_backward)
		return 0;
	j = session__gpu(s);
	if (!j)
		return -ENOMEM;
	for (i = 0; i < j->n; i++) {
		const struct gpu_work *w = &j->w[i];
		uint64_t d = w->end > w->start ? w->end - w->start : 0;

		if (!w->keep || !w->launch || !bw->launch_backward[w->launch - 1])
			continue;
		b->gpu_ns += d;
		if (bw->launch_forward[w->launch - 1])
			b->gpu_attributed_ns += d;
	}
	return 0;
}

int backward_share__site(const struct session *s, size_t launch, const char **node,
			 const char **site)
{
	const struct xpu_rec_gpu_launch *l = &s->t->launches[launch];
	const uint32_t *f;
	uint32_t n, i, b;
	int err;

	*node = *site = NULL;
	if (!s->bw.launch_forward || launch >= s->t->nlaunches || !s->bw.launch_forward[launch])
		return 0;
	err = session__stack(s, l->pid, l->ts_ns, session__launch_stack(s, launch), false, &f, &n);
	if (err)
		return err;
	/* root first: the node's frame, then the forward stack's frames before it */
	for (b = 0; b < n; b++)
		if (!strncmp(strpool__str(&s->pool, f[b]), "[backward] ", 11))
			break;
	if (b == n || !b)
		return 0;
	*node = strpool__str(&s->pool, f[b]);
	*site = strpool__str(&s->pool, f[b - 1]);
	for (i = b; i-- > 0;) {
		const char *name = strpool__str(&s->pool, f[i]);
		size_t len = strlen(name);

		/* a Python frame: "qualname (file.py)" */
		if (len > 5 && name[len - 1] == ')' && strstr(name, ".py")) {
			*site = name;
			break;
		}
	}
	return 1;
}

int backward_share__print(const struct session *s, FILE *out, const char *prefix, const char *cont)
{
	const struct backward_stats *bw = &s->bw;
	const struct trace *t = s->t;
	struct backward_share b;
	size_t i;
	int err;

	for (i = 0; i < t->nag_probes; i++) {
		const struct xpu_rec_autograd_probe *p = &t->ag_probes[i];
		const uint32_t *di = kmap__get(&t->dso_ids, p->dso_id, 0);
		const char *why = trace__string(t, p->reason_str);

		if (p->status != XPU_AUTOGRAD_UNAVAILABLE)
			continue;
		fprintf(out, "%sbackward attribution unavailable for %.200s: %.200s\n", prefix,
			di ? t->dsos[*di].path : "a PyTorch library", why ? why : "no reason given");
		prefix = cont;
	}
	if (s->opts->no_backward) {
		if (t->nag_evals)
			fprintf(out, "%sbackward work left on the autograd engine's stacks "
				"(--no-backward)\n", prefix);
		return 0;
	}
	if (!bw->evals)
		return 0;
	err = backward_share__compute(s, &b);
	if (err)
		return err;
	fprintf(out, "%s%" PRIu64 " node evaluations, %" PRIu64 " with their forward stack",
		prefix, bw->evals, bw->evals_matched);
	if (b.gpu_ns)
		fprintf(out, "; %.1f%% of backward GPU time", 100.0 * b.gpu_attributed_ns / b.gpu_ns);
	if (bw->samples)
		fprintf(out, "; %.1f%% of backward samples",
			100.0 * bw->samples_attributed / bw->samples);
	fprintf(out, " under the forward code that created the node\n");
	if (bw->unmatched[BW_NO_FORWARD] || bw->unmatched[BW_OTHER_CLASS])
		fprintf(out, "%s%" PRIu64 " without a forward record (AccumulateGrad, GraphRoot, "
			"nodes made before recording), %" PRIu64 " whose address held another "
			"class: kept on the engine's stack below '[backward] NODE'\n", cont,
			bw->unmatched[BW_NO_FORWARD], bw->unmatched[BW_OTHER_CLASS]);
	return 0;
}
