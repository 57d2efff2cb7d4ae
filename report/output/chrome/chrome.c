// SPDX-License-Identifier: MIT
/*
 * --format=chrome: the timeline as Trace Event JSON, for Perfetto UI and chrome://tracing.
 *
 * Tracks:
 *   - per traced thread: CUDA API calls ("X", cat cuda_api) and NVTX ranges/markers (cat nvtx),
 *     which nest because NVTX push/pop brackets the calls made inside it, and the blocks of
 *     --off-cpu traces (cat off_cpu), which nest in both: a thread opens and closes calls and
 *     ranges only while it runs;
 *   - per traced thread with samples, a sibling track "<name> samples": the CPU samples drawn
 *     as a flame chart (consecutive samples sharing a stack prefix merge into one slice per
 *     frame). A separate track, because sampled frames do not nest with API call slices;
 *   - per GPU device a pseudo-process "GPU N" with one track per (process, context, stream)
 *     holding kernels, copies and memsets, and a counter of busy % (kernels, copies);
 *   - flow arrows ("s" on the launching API call, "f" with bp "e" on the GPU work).
 * Timestamps are CLOCK_REALTIME microseconds with three decimals (exact ns), mapped from
 * CLOCK_MONOTONIC through the CLOCK_SYNC pairs, so traces of several hosts line up.
 * Events are written as they are produced; viewers sort, so file order is not time order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/chrome/chrome.h"

/* ---- the file's header ---------------------------------------------------------------------- */

/* A string record with its length (cmdlines hold NULs between arguments). */
static const struct tr_string *string_rec(const struct trace *t, uint32_t id)
{
	uint32_t *v = id ? kmap__get(&t->string_ids, id, 0) : NULL;

	return v ? &t->strings[*v] : NULL;
}

static void other_str(struct chrome *c, const char *key, uint32_t id, bool argv)
{
	const struct tr_string *s = string_rec(c->t, id);
	char *tmp;
	uint32_t i, len;

	if (!s)
		return;
	len = s->len;
	tmp = malloc(len + 1);
	if (!tmp)
		return;
	memcpy(tmp, s->s, len);
	/* argv: arguments joined with spaces, the last NUL dropped */
	while (argv && len && !tmp[len - 1])
		len--;
	for (i = 0; argv && i < len; i++) {
		if (!tmp[i])
			tmp[i] = ' ';
	}
	chrome__put(c, ",\"%s\":", key);
	chrome__str(c, tmp, len);
	free(tmp);
}

/*
 * Multi-trace: each trace's file, host, start on the shared axis and clock-sync uncertainty.
 * Traces of one host share its monotonic clock; across hosts only the realtime clocks align
 * them, as well as the hosts' clocks agree (NTP), which the trace cannot know.
 */
static void emit_parts(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i;

	if (t->nparts < 2)
		return;
	chrome__put(c, ",\"cross_host_alignment\":\"each host's CLOCK_REALTIME, assumed synchronized "
		    "(NTP/PTP); traces of one host share its CLOCK_MONOTONIC exactly\",\"traces\":[");
	for (i = 0; i < t->nparts; i++) {
		const struct tr_part *p = &t->parts[i];

		chrome__put(c, "%s{\"file\":", i ? "," : "");
		chrome__cstr(c, p->path);
		if (p->has_session) {
			other_str(c, "host", p->session.host_str, false);
			chrome__put(c, ",\"start_realtime_ns\":%llu",
				    (unsigned long long)chrome__realtime(c, p->session.start_mono_ns));
		}
		chrome__put(c, ",\"clock_sync_pairs\":%zu,\"clock_uncertainty_ns\":%llu,"
			    "\"monotonic_shift_ns\":%lld}", p->nclocks,
			    (unsigned long long)p->clock_unc_max_ns, (long long)p->rm.shift_ns);
	}
	chrome__put(c, "]");
}

static void emit_other(struct chrome *c)
{
	const struct trace *t = c->t;
	uint64_t unc = 0;
	size_t i;

	chrome__put(c, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"xpu-report\"");
	chrome__put(c, ",\"clock\":\"CLOCK_REALTIME, mapped from CLOCK_MONOTONIC by %zu clock_sync pairs\"",
		    c->clk->n);
	for (i = 0; i < t->nclocks; i++)
		unc = t->clocks[i].uncertainty_ns > unc ? t->clocks[i].uncertainty_ns : unc;
	chrome__put(c, ",\"clock_uncertainty_ns\":%llu", (unsigned long long)unc);
	if (t->has_session) {
		const struct xpu_rec_session *s = &t->session;

		other_str(c, "host", s->host_str, false);
		other_str(c, "kernel", s->kernel_str, false);
		other_str(c, "arch", s->arch_str, false);
		other_str(c, "recorder", s->version_str, false);
		other_str(c, "command", s->cmdline_str, true);
		chrome__put(c, ",\"target_pid\":%u,\"cpus\":%u,\"sample_freq_hz\":%u", s->target_pid, s->ncpu,
			    s->sample_freq_hz);
		chrome__put(c, ",\"start_realtime_ns\":%llu,\"start_monotonic_ns\":%llu",
			    (unsigned long long)chrome__realtime(c, s->start_mono_ns),
			    (unsigned long long)s->start_mono_ns);
	}
	if (t->has_end)
		chrome__put(c, ",\"end_monotonic_ns\":%llu", (unsigned long long)t->end.end_mono_ns);
	if (c->f->has_range)
		chrome__put(c, ",\"time_range_s\":\"%g,%g\"", c->ses->opts->range_start_s,
			    c->ses->opts->range_end_s);
	if (t->st.end != TRACE_END_CLEAN)
		chrome__put(c, ",\"truncated\":true");
	emit_parts(c);
	chrome__put(c, "},\n\"traceEvents\":[");
}

/* ---- the file ------------------------------------------------------------------------------- */

/* Session start (monotonic) for --time-range: the SESSION record, else the first event. */
static int build_maps(struct chrome *c)
{
	c->j = session__gpu(c->ses);
	if (!c->j)
		return -ENOMEM;
	c->launch_marked = calloc(c->t->nlaunches ? c->t->nlaunches : 1, 1);
	return c->launch_marked ? 0 : -ENOMEM;
}

int out_chrome(const struct session *ses, FILE *out)
{
	const struct report_opts *o = ses->opts;
	struct chrome c = { .ses = ses, .t = ses->t, .clk = &ses->clk, .f = &ses->filter,
			    .out = out };
	uint64_t data_events;
	size_t i;
	int err;

	/* the tests lower the threshold rather than write 256 MB */
	c.warn_bytes = getenv("XPU_REPORT_CHROME_WARN_BYTES") ?
			       strtoull(getenv("XPU_REPORT_CHROME_WARN_BYTES"), NULL, 10) :
			       SIZE_WARN_BYTES;
	c.period_ns = 1000000000ull / (ses->freq_hz ? ses->freq_hz : 1000);
	user_code__init(&c.uc, ses);
	err = build_maps(&c);
	if (err)
		goto out;
	emit_other(&c);
	err = chrome__emit_apis(&c);
	if (!err)
		err = chrome__emit_nvtx(&c);
	if (!err)
		err = chrome__emit_gpu(&c);
	if (!err)
		err = chrome__emit_counters(&c);
	if (!err)
		err = chrome__emit_samples(&c);
	if (!err)
		err = chrome__emit_ioctls(&c);
	if (!err)
		err = chrome__emit_memory(&c);
	if (!err)
		err = chrome__emit_off_cpu(&c);
	if (err)
		goto out;
	data_events = c.events;
	err = chrome__emit_meta(&c);
	if (err)
		goto out;
	chrome__put(&c, "\n]}\n");
	if (!data_events) {
		double dur = c.t->has_session && c.t->has_end &&
					     c.t->end.end_mono_ns > c.t->session.start_mono_ns ?
				     (c.t->end.end_mono_ns - c.t->session.start_mono_ns) / 1e9 :
				     0;

		if (c.f->has_range && dur > 0)
			fprintf(stderr, "xpu-report: warning: no events in the time range (the session lasted %.3f s)\n",
				dur);
		else
			fprintf(stderr, "xpu-report: warning: no events to show%s\n",
				c.f->has_range ? " in the time range" : "");
	}
	if (o->verbose)
		fprintf(stderr, "xpu-report: chrome: %llu events, %llu bytes, %llu flows\n",
			(unsigned long long)c.events, (unsigned long long)c.bytes,
			(unsigned long long)c.next_flow);
out:
	user_code__free(&c.uc);
	for (i = 0; i < c.nth; i++)
		free(c.th[i].runs);
	free(c.th);
	free(c.pids);
	free(c.st);
	free(c.devs);
	free(c.launch_marked);
	free(c.iv);
	kmap__free(&c.th_idx);
	kmap__free(&c.pid_idx);
	kmap__free(&c.st_idx);
	kmap__free(&c.dev_idx);
	kmap__free(&c.gpu_pids);
	return err;
}
