// SPDX-License-Identifier: MIT
/*
 * --format=perfetto: the timeline as a native Perfetto trace (perfetto.protos.Trace), the
 * chrome output's view (output/chrome/chrome.c) in Perfetto's own format: interned names and
 * call stacks, typed tracks, PerfSample packets that Perfetto's flame graphs read. Written as
 * a stream of packets, each encoded and written at once, on one packet sequence whose
 * interning tables are reset when they fill (intern.c): memory stays bounded whatever the
 * trace's length, and the file stays a few times the trace's size.
 *
 * Time: packets carry the trace's CLOCK_MONOTONIC nanoseconds, exact, and the first packets
 * are clock snapshots that make CLOCK_MONOTONIC the trace's primary clock and pair it with
 * CLOCK_REALTIME (the trace's CLOCK_SYNC pairs), so a viewer can show wall time too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/perfetto/perfetto.h"

static int snapshot(struct perfetto *pf, uint64_t mono)
{
	struct pb *p = &pf->pkt;

	pf__packet_begin(pf, 0);
	pb__begin(p, PKT_CLOCK_SNAPSHOT);
	pb__begin(p, CLOCK_SNAPSHOT_CLOCKS);
	pb__varint(p, CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	pb__varint(p, CLOCK_TIMESTAMP, mono);
	pb__end(p);
	pb__begin(p, CLOCK_SNAPSHOT_CLOCKS);
	pb__varint(p, CLOCK_ID, BUILTIN_CLOCK_REALTIME);
	pb__varint(p, CLOCK_TIMESTAMP, clock_map__realtime(pf->clk, mono));
	pb__end(p);
	pb__varint(p, CLOCK_SNAPSHOT_PRIMARY, BUILTIN_CLOCK_MONOTONIC);
	pb__end(p);
	return pf__packet_end(pf, false);
}

/*
 * A snapshot at the session's start (or at 1 ns), then one per clock-sync pair; for each
 * machine (each has its own clocks in the trace processor; the merged trace one axis).
 */
static int emit_clocks(struct perfetto *pf)
{
	size_t i, m;
	int err = 0;

	for (m = 0; !err && m < (pf->hosts ? pf->nhosts : 1); m++) {
		pf__use_machine(pf, (uint32_t)m);
		err = snapshot(pf, pf->t->has_session && pf->t->session.start_mono_ns ?
					   pf->t->session.start_mono_ns : 1);
		for (i = 0; !err && i < pf->clk->n; i++)
			err = pf->clk->p[i].mono ? snapshot(pf, pf->clk->p[i].mono) : 0;
	}
	return err;
}

/* The traces' distinct hosts, when there are several: each a machine (perfetto.h). */
static int find_hosts(struct perfetto *pf)
{
	const struct trace *t = pf->t;
	size_t i, k;

	if (t->nparts < 2)
		return 0;
	pf->hosts = calloc(t->nparts, sizeof(*pf->hosts));
	if (!pf->hosts)
		return -ENOMEM;
	for (i = 0; i < t->nparts; i++) {
		const char *h = t->parts[i].has_session ?
					trace__string(t, t->parts[i].session.host_str) : NULL;

		for (k = 0; h && k < pf->nhosts && strcmp(pf->hosts[k], h); k++)
			;
		if (h && k == pf->nhosts)
			pf->hosts[pf->nhosts++] = h;
	}
	if (pf->nhosts < 2) {
		free(pf->hosts);
		pf->hosts = NULL;
		pf->nhosts = 0;
	}
	return 0;
}

/* Whether GPU work of several processes is drawn: then a stream's name says whose. */
static int count_gpu_pids(struct perfetto *pf)
{
	struct kmap pids = { 0 };
	size_t i;

	for (i = 0; i < pf->j->n; i++) {
		if (pf->j->w[i].keep && !kmap__put(&pids, pf->j->w[i].pid, 0, 0, NULL)) {
			kmap__free(&pids);
			return -ENOMEM;
		}
	}
	pf->gpu_pids_many = pids.n > 1;
	kmap__free(&pids);
	return 0;
}

static int init(struct perfetto *pf)
{
	pf->j = session__gpu(pf->ses);
	if (!pf->j)
		return -ENOMEM;
	pf->launch_marked = calloc(pf->t->nlaunches ? pf->t->nlaunches : 1, 1);
	if (!pf->launch_marked || find_hosts(pf))
		return -ENOMEM;
	/* iid 1 is the one mapping's (and its path's); the others count from 2 */
	pf->next_iid = PF_MAPPING_IID;
	pf->cleared = true;
	/* the tests lower it to see resets in a small trace */
	pf->intern_max = getenv("XPU_REPORT_PERFETTO_INTERN_MAX") ?
				 strtoull(getenv("XPU_REPORT_PERFETTO_INTERN_MAX"), NULL, 10) :
				 PF_INTERN_MAX;
	return count_gpu_pids(pf);
}

int out_perfetto(const struct session *ses, FILE *out)
{
	struct perfetto pf = { .ses = ses, .t = ses->t, .clk = &ses->clk, .out = out };
	int err;

	pf__chunk_init(&pf);
	err = init(&pf);

	if (!err)
		err = emit_clocks(&pf);
	/*
	 * Parents before children: the trace processor sorts by time, and of a begin of a range
	 * and a begin of a call inside it at one instant, the one written first is the parent.
	 * NVTX ranges bracket API calls; ioctls and off-CPU blocks happen inside calls.
	 */
	if (!err)
		err = pf__emit_nvtx(&pf);
	if (!err)
		err = pf__emit_apis(&pf);
	if (!err)
		err = pf__emit_gpu(&pf);
	if (!err)
		err = pf__emit_counters(&pf);
	if (!err)
		err = pf__emit_samples(&pf);
	if (!err)
		err = pf__emit_ioctls(&pf);
	if (!err)
		err = pf__emit_memory(&pf);
	if (!err)
		err = pf__emit_off_cpu(&pf);
	if (!err)
		err = pf__chunk_flush(&pf);
	if (!err && ses->opts->verbose)
		fprintf(stderr, "xpu-report: perfetto: %llu packets, %llu bytes: %llu slices, %llu instants, %llu flows, %llu samples, %llu counter values; %llu kernels, %llu copies, %llu memsets\n",
			(unsigned long long)pf.packets, (unsigned long long)pf.bytes,
			(unsigned long long)pf.n.slices, (unsigned long long)pf.n.instants,
			(unsigned long long)pf.n.flows, (unsigned long long)pf.n.samples,
			(unsigned long long)pf.n.counters, (unsigned long long)pf.n.kernels,
			(unsigned long long)pf.n.copies, (unsigned long long)pf.n.memsets);
	if (!err && !pf.n.slices && !pf.n.instants && !pf.n.samples && !pf.n.counters)
		fprintf(stderr, "xpu-report: warning: no events to show%s\n",
			ses->filter.has_range ? " in the time range" : "");
	pf__chunk_free(&pf);
	pb__free(&pf.pkt);
	pb__free(&pf.interned);
	pb__free(&pf.desc);
	pf__intern_free(&pf);
	kmap__free(&pf.tracks);
	kmap__free(&pf.streams);
	free(pf.launch_marked);
	free(pf.hosts);
	free(pf.track_machine);
	free(pf.iv);
	free(pf.devs);
	kmap__free(&pf.dev_idx);
	return err;
}
