// SPDX-License-Identifier: MIT
/*
 * The perfetto output's CPU samples: one PerfSample packet per sample, its call stack
 * interned (the frames as the naming pass named them, Python frames among the native ones
 * where the trace holds them). Perfetto draws them on the thread's track and builds its flame
 * graphs from them; the chrome output has to fold them into slices instead (a flame chart).
 */
#include <errno.h>

#include "base/progress.h"
#include "output/perfetto/perfetto.h"

int pf__emit_samples(struct perfetto *pf)
{
	const struct trace *t = pf->t;
	size_t i;
	int err;

	for (i = 0; i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];
		const uint32_t *f;
		uint32_t n;
		uint64_t iid, track;

		progress__update("writing samples", i, t->nsamples);
		if (!filter__at(&pf->ses->filter, s->pid, s->tid, s->ts_ns))
			continue;
		err = session__stack(pf->ses, s->pid, s->ts_ns, session__sample_stack(pf->ses, i), false,
				     &f, &n);
		if (err)
			return err;
		/* the thread's track first: its descriptor names the thread the samples are of */
		track = pf__thread_track(pf, s->pid, s->tid);
		if (!track)
			return -ENOMEM;
		pf__use_machine(pf, pf__track_machine(pf, track));
		pf__packet_begin(pf, s->ts_ns);
		iid = pf__stack_iid(pf, f, n);
		pb__begin(&pf->pkt, PKT_PERF_SAMPLE);
		pb__varint(&pf->pkt, PS_CPU, s->cpu);
		pb__varint(&pf->pkt, PS_PID, s->pid);
		pb__varint(&pf->pkt, PS_TID, s->tid);
		if (iid)
			pb__varint(&pf->pkt, PS_CALLSTACK_IID, iid);
		pb__end(&pf->pkt);
		err = pf__packet_end(pf, true);
		if (err)
			return err;
		pf->n.samples++;
	}
	return 0;
}
