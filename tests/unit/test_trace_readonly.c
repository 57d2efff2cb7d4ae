// SPDX-License-Identifier: MIT
/*
 * The loaded trace is read-only: integrity counts are taken at load (every reference to an
 * unknown id, once), whatever the outputs look up afterwards; the stacks the report derives
 * (Python frames spliced in here) live in the session, and the trace's records keep the ids
 * they were read with. The outputs read the session (const): a stack the naming pass left
 * out fails the output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACE_BUILD_PROG "test_trace_readonly"
#include "../lib/trace_build.h"
#include "cmd/formats.h"
#include "model/profile.h"
#include "model/session.h"
#include "output/out.h"
#include "trace/trace.h"
#include "unit.h"

/* A trace whose records name a string, a stack and a DSO that no record defines. */
static void write_bad_refs(const char *path)
{
	struct trace_writer_opts wo = { 0 };
	struct xpu_rec_dso dso = { .id = 1, .kind = XPU_DSO_ELF, .path_str = 4000 };
	struct xpu_rec_mapping m = { .pid = 10, .start = 0x1000, .end = 0x2000, .dso_id = 77 };
	struct xpu_rec_cpu_sample s = { .ts_ns = 5, .pid = 10, .tid = 10, .stack_id = 999 };
	struct xpu_rec_gpu_kernel k = { .start_ns = 6, .end_ns = 7, .pid = 10, .name_str = 4001 };
	uint64_t ips[1] = { 0x1100 };

	open_trace(path, &wo);
	str("unused");
	rec(XPU_REC_DSO, &dso, sizeof(dso), 0);
	rec(XPU_REC_MAPPING, &m, sizeof(m), 0);
	rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	s.stack_id = stack(ips, 0, 1);
	rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), k.start_ns);
	if (trace_writer__close(w))
		die("close");
}

static void counts_at_load(void)
{
	char path[] = "/tmp/xpu-test-readonly-XXXXXX", err[256];
	struct report_opts o = { .input = path, .no_host_files = true };
	struct session ses;
	struct profile p;
	struct trace t;
	FILE *null;
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	close(fd);
	write_bad_refs(path);
	CHECK(!trace__load(&t, path, err, sizeof(err)), "load: %s", err);
	CHECK(t.bad_string_refs == 2 && t.bad_stack_refs == 1 && t.bad_dso_refs == 1,
	      "at load: strings %llu stacks %llu dsos %llu",
	      (unsigned long long)t.bad_string_refs, (unsigned long long)t.bad_stack_refs,
	      (unsigned long long)t.bad_dso_refs);
	/* every output looks the bad ids up again: the counts stay */
	null = fopen("/dev/null", "w");
	CHECK(null && !session__setup(&ses, &t, &o), "session");
	/* a stack left out of the naming is an error the output returns, never a gap in it */
	CHECK(!profile__build(&p, &ses) && out_folded(&p, null) == -ENOENT,
	      "folded without the naming pass");
	profile__free(&p);
	/* named first, as the formats table asks (cmd/formats.c) */
	CHECK(!session__name(&ses, NULL, report_format__of(FMT_INFO)->names |
					 report_format__of(FMT_CHROME)->names) &&
	      !out_info(&ses, null) && !out_chrome(&ses, null), "info, chrome");
	CHECK(!profile__build(&p, &ses) &&
	      !session__name(&ses, &p, report_format__of(FMT_TEXT)->names) &&
	      !out_text(&p, null) && !out_folded(&p, null), "text, folded");
	profile__free(&p);
	CHECK(t.bad_string_refs == 2 && t.bad_stack_refs == 1 && t.bad_dso_refs == 1,
	      "after the outputs: strings %llu stacks %llu dsos %llu",
	      (unsigned long long)t.bad_string_refs, (unsigned long long)t.bad_stack_refs,
	      (unsigned long long)t.bad_dso_refs);
	session__teardown(&ses);
	fclose(null);
	trace__free(&t);
	unlink(path);
}

/* A real PyTorch trace with Python frames: the splice makes new stacks, the trace keeps its. */
static void derived_in_session(void)
{
	const char *path = "samples/traces/torch-python.xpu";
	struct report_opts o = { .input = path, .no_host_files = true };
	struct xpu_rec_cpu_sample *samples;
	struct xpu_rec_gpu_launch *launches;
	size_t i, nstacks, differ = 0;
	struct session ses;
	struct trace t;
	char err[256];

	if (trace__load(&t, path, err, sizeof(err))) {
		CHECK(0, "%s", err);
		return;
	}
	samples = malloc(t.nsamples * sizeof(*samples) + 1);
	launches = malloc(t.nlaunches * sizeof(*launches) + 1);
	memcpy(samples, t.samples, t.nsamples * sizeof(*samples));
	memcpy(launches, t.launches, t.nlaunches * sizeof(*launches));
	nstacks = t.nstacks;
	CHECK(!session__setup(&ses, &t, &o), "session");
	CHECK(ses.py.samples > 0 && ses.stacks.nstacks > 0, "spliced %llu samples into %zu stacks",
	      (unsigned long long)ses.py.samples, ses.stacks.nstacks);
	for (i = 0; i < t.nsamples; i++)
		differ += session__sample_stack(&ses, i) != t.samples[i].stack_id;
	/* derived: Python frames spliced in, and (a -g cfi trace with autograd) short walks
	 * unwound from their copies and backward samples rewritten under their forward stack */
	CHECK(differ >= ses.py.samples && differ <= ses.py.samples + ses.uw.used + ses.bw.samples,
	      "%zu samples use a derived stack (%llu Python, %llu unwound, %llu backward)", differ,
	      (unsigned long long)ses.py.samples, (unsigned long long)ses.uw.used,
	      (unsigned long long)ses.bw.samples);
	CHECK(!memcmp(samples, t.samples, t.nsamples * sizeof(*samples)) &&
	      !memcmp(launches, t.launches, t.nlaunches * sizeof(*launches)) &&
	      t.nstacks == nstacks, "the trace's samples, launches and stacks are as loaded");
	session__teardown(&ses);
	trace__free(&t);
	free(samples);
	free(launches);
}

int main(void)
{
	counts_at_load();
	derived_in_session();
	return unit_finish();
}
