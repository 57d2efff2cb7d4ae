// SPDX-License-Identifier: MIT
/*
 * `xpu-report diff BASE NEW`: two traces reported with the same options, their function rows
 * matched by name (model/func_diff.h), and the change written as a table (text), two-column
 * folded lines or a differential flame graph (cmd/formats.c's diff writers: output/out_diff.c,
 * output/out_svg.c). Each side is
 * one trace today; a side is a func_diff__add() per profile, so a side of several traces
 * needs only more loads here.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/formats.h"
#include "model/func_diff.h"
#include "model/naming.h"

/* `xpu-report diff --help` around its options' lines (cmd/report.c's table, help[1]) */
const char diff_usage_head[] =
	"Usage: xpu-report diff [OPTIONS] BASE.xpu NEW.xpu\n"
	"Compare two traces, as perf diff does: every function's self and total share of its\n"
	"trace's weight, in BASE and NEW, and the change in points (NEW - BASE), largest\n"
	"change first. Shares compare where weights may not (other length, rate or load).\n"
	"\n";
const char diff_usage_tail[] =
	"  --rows=N, --percent-limit=P (rows whose change is under P points go), --sort,\n"
	"  --view, --weight, the filters, --symfs and the other options of xpu-report apply\n"
	"  to both traces alike (xpu-report --help).\n"
	"\n"
	"Example:\n"
	"  xpu-report diff before.xpu after.xpu\n"
	"  xpu-report diff -F svg --view=gpu before.xpu after.xpu > change.svg\n";

struct side {
	struct report_opts o;	/* the command's, with this side's file */
	struct trace t;
	struct session s;
	struct profile p;
	bool loaded, set_up;
};

struct diff_out {
	const struct profile *p[2];
};

static int write_diff(void *arg, FILE *out)
{
	struct diff_out *w = arg;

	return report_format__of(w->p[DIFF_NEW]->s->opts->format)->diff(w->p, out);
}

/*
 * Both sides in one unit: --weight as given, else time where either side holds GPU work in
 * the view (a unit per side would make the headers disagree for nothing: shares compare).
 */
static enum report_weight joint_weight(const struct report_opts *o, const struct side sd[2])
{
	int i;

	if (o->weight != WEIGHT_AUTO || o->view == VIEW_CPU)
		return o->weight == WEIGHT_AUTO ? WEIGHT_SAMPLES : o->weight;
	for (i = 0; i < 2; i++) {
		if (sd[i].t.nkernels || sd[i].t.nmemcpys || sd[i].t.nmemsets)
			return WEIGHT_TIME;
	}
	return WEIGHT_SAMPLES;
}

/* Sets up one side's session and profile; 0, or the exit status (said on stderr). */
static int side_build(struct side *sd)
{
	char prefix[4096 + 3];

	sd->set_up = true;
	if (session__setup(&sd->s, &sd->t, &sd->o) || profile__build(&sd->p, &sd->s) ||
	    session__name(&sd->s, &sd->p, NAME_PROFILE)) {
		fprintf(stderr, "xpu-report: out of memory\n");
		return 1;
	}
	if (!sd->p.cpu_samples && !sd->p.gpu_records) {
		snprintf(prefix, sizeof(prefix), "%s: ", sd->o.input);
		report__explain_empty(&sd->s, prefix);
		return 1;
	}
	return 0;
}

int diff_run(const struct report_opts *o, char *const files[2])
{
	struct side sd[2];
	struct diff_out w = { .p = { &sd[DIFF_BASE].p, &sd[DIFF_NEW].p } };
	const struct dso_table *dsos[2];
	size_t ndsos = 0;
	int ret = 0, i;

	memset(sd, 0, sizeof(sd));
	for (i = 0; i < 2 && !ret; i++) {
		sd[i].o = *o;
		sd[i].o.input = files[i];
		ret = report__load(&sd[i].t, files[i], &sd[i].o);
		sd[i].loaded = !ret;
	}
	if (!ret)
		sd[DIFF_BASE].o.weight = sd[DIFF_NEW].o.weight = joint_weight(o, sd);
	for (i = 0; i < 2 && !ret; i++)
		ret = side_build(&sd[i]);
	if (!ret)
		ret = report__emit(o, write_diff, &w);
	/* a side read in part (--max-records): the output is written, and not the whole diff */
	for (i = 0; i < 2 && !ret; i++)
		ret = sd[i].loaded && sd[i].t.st.end == TRACE_END_LIMIT;
	/* one warning for both sides: a file both traces lack is one file */
	for (i = 0; i < 2; i++) {
		if (sd[i].set_up)
			dsos[ndsos++] = &sd[i].s.dsos;
	}
	dso_table__warn_unresolved(dsos, ndsos);
	for (i = 0; i < 2; i++) {
		if (sd[i].set_up) {
			profile__free(&sd[i].p);
			session__teardown(&sd[i].s);
		}
		if (sd[i].loaded)
			trace__free(&sd[i].t);
	}
	return ret;
}

/* What diff cannot do; one line on stderr and false. */
static bool diff_opts_ok(const struct report_opts *o, int nfiles, char *const *files)
{
	const char *why = NULL;
	char fmt[320] = "";

	if (nfiles != 2)
		why = "expected two traces, BASE and NEW";
	else if (!strcmp(files[0], "-") && !strcmp(files[1], "-"))
		why = "only one of BASE and NEW can be - (standard input)";
	else if (!report_format__of(o->format)->diff)
		snprintf(fmt, sizeof(fmt), "--format: diff writes %s (not %s)",
			 report_format__diff_names(true), report_format__diff_names(false));
	else if (o->callers || o->callees)
		why = "--callers and --callees are not for diff";
	if (fmt[0])
		why = fmt;
	if (why)
		fprintf(stderr, "xpu-report diff: %s (try 'xpu-report diff --help')\n", why);
	return !why;
}

int diff__main(int argc, char **argv)
{
	struct report_opts o = { .diff = true };
	int r;

	r = report__parse_options(argc, argv, &o);
	if (r)
		return r > 0 ? 0 : 2;
	if (!diff_opts_ok(&o, argc - optind, argv + optind))
		return 2;
	return diff_run(&o, argv + optind);
}
