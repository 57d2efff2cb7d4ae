// SPDX-License-Identifier: MIT
/* The report command: command line, loading, and dispatch to one output format. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/profile.h"
#include "out/out.h"

#ifndef XPU_VERSION
#define XPU_VERSION "unknown"
#endif

static const char usage_text[] =
	"Usage: xpu-report [OPTIONS] FILE.xpu\n"
	"Analyze a trace written by xpu-record. FILE may be - for stdin.\n"
	"\n"
	"  -F, --format=FMT     text (default), folded (flamegraph.pl input), info,\n"
	"                       chrome (timeline JSON for Perfetto UI / chrome://tracing)\n"
	"                       or svg (interactive flame graph of the folded view)\n"
	"  -o, --output=FILE    write to FILE instead of stdout\n"
	"  -p, --pid=PID[,PID]  only these processes\n"
	"  -t, --tid=TID        only this thread (GPU work: the thread that launched it)\n"
	"  -c, --comm=NAME[,NAME]  only processes or threads with these names\n"
	"      --view=VIEW      merged (default: CPU samples plus GPU work under its launch\n"
	"                       stack), cpu (samples only) or gpu (GPU work only)\n"
	"      --weight=W       samples (default; GPU time converted at the sampling rate)\n"
	"                       or time (microseconds)\n"
	"      --time-range=START,END  only events in [START, END] seconds from the session\n"
	"                       start (e.g. 1.5,3); GPU work and calls that overlap it\n"
	"      --symfs=DIR      also look for binaries under DIR (a copy of the target's /)\n"
	"      --no-host-files  read no binaries from this machine's paths or debug dirs: only\n"
	"                       --symfs and the archive (the same report on every machine)\n"
	"      --python-lines   Python frames as qualname (file.py:LINE) rather than one frame\n"
	"                       per function, qualname (file.py)\n"
	"      --no-unwind      keep the recorded user stacks, do not unwind stack copies\n"
	"                       (compares -g cfi,check's BPF walk with its DWARF copies)\n"
	"      --strict         fail (exit 2) when the trace is truncated or corrupt\n"
	"  -v, --verbose        say where symbols came from\n"
	"  -h, --help           this text\n"
	"  -V, --version        print the version\n"
	"\n"
	"xpu-report archive [--debuginfo] [-o FILE] FILE.xpu packs the binaries the stacks touch\n"
	"into FILE.xpu.xpa, used automatically (after local files, debug dirs and --symfs) so the\n"
	"trace symbolizes on another machine; see xpu-report archive --help.\n"
	"\n"
	"Examples:\n"
	"  xpu-report app.xpu                                  # text summary\n"
	"  xpu-report -F folded app.xpu | flamegraph.pl > app.svg\n"
	"  xpu-report -F folded --view=gpu --weight=time app.xpu > gpu.folded\n"
	"  xpu-report -F info app.xpu                          # what the file holds\n"
	"  xpu-report -F chrome --time-range=1,2 app.xpu > app.json  # open in ui.perfetto.dev\n"
	"  xpu-report -F svg --view=gpu app.xpu > gpu.svg      # open in a browser\n"
	"  xpu-report -p 1234,1240 --symfs=/mnt/target app.xpu\n";

enum {
	OPT_VIEW = 256,
	OPT_WEIGHT,
	OPT_SYMFS,
	OPT_NO_HOST_FILES,
	OPT_STRICT,
	OPT_TIME_RANGE,
	OPT_PYTHON_LINES,
	OPT_NO_UNWIND,
};

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, 'F' },
	{ "output", required_argument, NULL, 'o' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "comm", required_argument, NULL, 'c' },
	{ "view", required_argument, NULL, OPT_VIEW },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "no-host-files", no_argument, NULL, OPT_NO_HOST_FILES },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "time-range", required_argument, NULL, OPT_TIME_RANGE },
	{ "python-lines", no_argument, NULL, OPT_PYTHON_LINES },
	{ "no-unwind", no_argument, NULL, OPT_NO_UNWIND },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int parse_u32(const char *s, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_pids(struct report_opts *o, const char *arg)
{
	char buf[1024], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->npids >= REPORT_MAX_PIDS || parse_u32(tok, &o->pids[o->npids]))
			return -EINVAL;
		o->npids++;
	}
	return o->npids ? 0 : -EINVAL;
}

/* NAME[,NAME...]: no empty name, at most FILTER_MAX_COMMS */
static bool comm_list_ok(const char *arg)
{
	int n = 1;

	if (!*arg || *arg == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		return false;
	for (; *arg; arg++)
		n += *arg == ',';
	return n <= FILTER_MAX_COMMS;
}

/* "START,END": seconds (decimal) from the session start. */
static int parse_time_range(struct report_opts *o, const char *arg)
{
	char *end;
	double a, b;

	errno = 0;
	a = strtod(arg, &end);
	if (errno || end == arg || *end != ',')
		return -EINVAL;
	arg = end + 1;
	b = strtod(arg, &end);
	if (errno || end == arg || *end || !(a >= 0) || !(b > a) || b > 1e9)
		return -EINVAL;
	o->has_range = true;
	o->range_start_s = a;
	o->range_end_s = b;
	return 0;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	int c;

	opterr = 0;	/* one line per error, ours: see the default case */
	while ((c = getopt_long(argc, argv, "F:o:p:t:c:vhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (!strcmp(optarg, "text"))
				o->format = FMT_TEXT;
			else if (!strcmp(optarg, "folded"))
				o->format = FMT_FOLDED;
			else if (!strcmp(optarg, "info"))
				o->format = FMT_INFO;
			else if (!strcmp(optarg, "chrome"))
				o->format = FMT_CHROME;
			else if (!strcmp(optarg, "svg"))
				o->format = FMT_SVG;
			else {
				fprintf(stderr, "xpu-report: unknown format '%s' (text, folded, info, chrome or svg)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'p':
			if (parse_pids(o, optarg)) {
				fprintf(stderr, "xpu-report: bad --pid '%s': expected PID[,PID...] (at most %d)\n",
					optarg, REPORT_MAX_PIDS);
				return -EINVAL;
			}
			break;
		case 't':
			if (parse_u32(optarg, &o->tid)) {
				fprintf(stderr, "xpu-report: bad --tid '%s': expected a number\n", optarg);
				return -EINVAL;
			}
			o->has_tid = true;
			break;
		case 'c':
			if (!comm_list_ok(optarg)) {
				fprintf(stderr, "xpu-report: bad --comm '%s': expected NAME[,NAME...] (at most %d)\n",
					optarg, FILTER_MAX_COMMS);
				return -EINVAL;
			}
			o->comm = optarg;
			break;
		case OPT_VIEW:
			if (!strcmp(optarg, "merged"))
				o->view = VIEW_MERGED;
			else if (!strcmp(optarg, "cpu"))
				o->view = VIEW_CPU;
			else if (!strcmp(optarg, "gpu"))
				o->view = VIEW_GPU;
			else {
				fprintf(stderr, "xpu-report: unknown view '%s' (merged, cpu or gpu)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_WEIGHT:
			if (!strcmp(optarg, "samples"))
				o->weight = WEIGHT_SAMPLES;
			else if (!strcmp(optarg, "time"))
				o->weight = WEIGHT_TIME;
			else {
				fprintf(stderr, "xpu-report: unknown weight '%s' (samples or time)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_SYMFS:
			o->symfs = optarg;
			break;
		case OPT_NO_HOST_FILES:
			o->no_host_files = true;
			break;
		case OPT_NO_UNWIND:
			o->no_unwind = true;
			break;
		case OPT_PYTHON_LINES:
			o->python_lines = true;
			break;
		case OPT_STRICT:
			o->strict = true;
			break;
		case OPT_TIME_RANGE:
			if (parse_time_range(o, optarg)) {
				fprintf(stderr, "xpu-report: bad --time-range '%s': expected START,END in seconds from the session start, 0 <= START < END\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 1;
		case 'V':
			printf("xpu-report %s\n", XPU_VERSION);
			return 1;
		default:
			/* getopt sets optopt to the option short of its value, 0 if unknown */
			fprintf(stderr, "xpu-report: %s '%s' (try 'xpu-report --help')\n",
				optopt >= 256 || (optopt && strchr("Foptc", optopt)) ?
					"missing value for option" : "unknown option",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "xpu-report: %s (try 'xpu-report --help')\n",
			optind >= argc ? "no trace file given" : "more than one trace file given");
		return -EINVAL;
	}
	o->input = argv[optind];
	return 0;
}

/* Folded, svg and text read the aggregation; info and chrome the session alone. */
static int write_output(struct session *ses, const struct report_opts *o, FILE *out)
{
	struct profile p;
	int r;

	if (o->format == FMT_INFO)
		return out_info(ses, out);
	if (o->format == FMT_CHROME)
		return out_chrome(ses, out);
	r = profile__build(&p, ses);
	if (r)
		goto out;
	if (o->format == FMT_FOLDED)
		r = out_folded(&p, out);
	else if (o->format == FMT_SVG)
		r = out_svg(&p, out);
	else
		r = out_text(&p, out);
out:
	profile__free(&p);
	return r;
}

/* Everything after the command line: load, check, set up the session, write. */
int report_run(const struct report_opts *o)
{
	struct trace t;
	struct session ses;
	bool loaded = false, set_up = false, truncated;
	FILE *out = stdout;
	char err[256];
	int ret = 1, r;

	if (trace__load(&t, o->input, err, sizeof(err))) {
		fprintf(stderr, "xpu-report: %s\n", err);
		return 1;
	}
	loaded = true;
	truncated = t.st.end != TRACE_END_CLEAN;
	if (truncated) {
		fprintf(stderr, "xpu-report: %s: trace truncated after frame %llu: %llu records recovered (%s)\n",
			o->strict ? "error" : "warning",
			(unsigned long long)(t.st.frames_ok ? t.st.frames_ok - 1 : 0),
			(unsigned long long)t.st.records, t.st.reason[0] ? t.st.reason : "no reason given");
		if (o->strict) {
			ret = 2;
			goto out;
		}
	}
	set_up = true;
	if (session__setup(&ses, &t, o)) {
		fprintf(stderr, "xpu-report: out of memory\n");
		goto out;
	}
	if (o->output) {
		out = fopen(o->output, "w");
		if (!out) {
			fprintf(stderr, "xpu-report: cannot write %s: %s\n", o->output, strerror(errno));
			out = stdout;
			goto out;
		}
	}
	r = write_output(&ses, o, out);
	if (fflush(out) || ferror(out))
		r = r ? r : -EIO;
	if (r) {
		fprintf(stderr, "xpu-report: %s\n", r == -ENOMEM ? "out of memory" : "write error");
		goto out;
	}
	ret = 0;
out:
	if (out != stdout && fclose(out) && !ret) {
		fprintf(stderr, "xpu-report: cannot write %s: %s\n", o->output, strerror(errno));
		ret = 1;
	}
	if (set_up)
		session__teardown(&ses);
	if (loaded)
		trace__free(&t);
	return ret;
}

int report__main(int argc, char **argv)
{
	struct report_opts opts = { 0 };
	int r;

	r = parse_args(argc, argv, &opts);
	if (r)
		return r > 0 ? 0 : 2;
	return report_run(&opts);
}
