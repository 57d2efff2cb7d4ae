// SPDX-License-Identifier: MIT
/* The report command: command line, loading, and dispatch to one output format. */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/term_safe.h"
#include "base/warn.h"
#include "cli_opts.h"
#include "cmd/cmd.h"
#include "cmd/formats.h"
#include "model/profile.h"
#include "output/out.h"
#include "trace/merge.h"

#ifndef XPU_VERSION
#define XPU_VERSION "unknown"
#endif

static const char usage_head[] =
	"Usage: xpu-report [OPTIONS] [FILE.xpu...]\n"
	"Analyze a trace written by xpu-record (default: record.xpu, what xpu-record writes).\n"
	"FILE may be - for stdin. Several files (ranks, processes, hosts) are reported as one,\n"
	"on one CLOCK_REALTIME axis.\n"
	"\n";

enum {
	OPT_VIEW = 256,
	OPT_WEIGHT,
	OPT_SYMFS,
	OPT_NO_HOST_FILES,
	OPT_STRICT,
	OPT_TIME_RANGE,
	OPT_PYTHON_LINES,
	OPT_PYTHON_INTERP,
	OPT_SVG_ROOT,
	OPT_ROWS,
	OPT_PERCENT_LIMIT,
	OPT_DSO,
	OPT_CALLERS,
	OPT_CALLEES,
	OPT_MAX_OUTPUT,
	OPT_ARCHIVE_MAX,
	OPT_MAX_RECORDS,
	OPT_INLINE,
	OPT_NO_INLINE,
	OPT_NO_UNWIND,
	OPT_NO_BACKWARD,
	OPT_CUDA_GRAPHS,
	OPT_DIFF_ORDER,		/* xpu-report diff */
	/* multi-trace: --host, --rank */
	OPT_HOST,
	OPT_RANK,
};

/*
 * The parsers of the options table's rows (opt_*), each setting its field of struct
 * report_opts, or refusing the value (cli_opts__parse says so, with the row's expect).
 */
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

/* PID[,PID...], after those of an earlier -p */
static int opt_pids(void *ctx, const char *arg)
{
	struct report_opts *o = ctx;
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

int report__parse_size(const char *arg, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *arg == '-')
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > UINT64_MAX >> shift)
		return -EINVAL;
	*out = v ? (uint64_t)v << shift : UINT64_MAX;
	return 0;
}

/* "START,END": seconds (decimal) from the session start. */
static int opt_time_range(void *ctx, const char *arg)
{
	struct report_opts *o = ctx;
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

/* "sym,dso": each key once. */
static int opt_sort(void *ctx, const char *arg)
{
	struct report_opts *o = ctx;
	static const char *const names[] = { [SORT_SYM] = "sym", [SORT_DSO] = "dso",
					     [SORT_COMM] = "comm" };
	const char *p = arg;
	int k, i;

	o->nsort = 0;
	while (*p) {
		size_t len = strcspn(p, ",");

		for (k = SORT_SYM; k <= SORT_COMM; k++) {
			if (strlen(names[k]) == len && !strncmp(p, names[k], len))
				break;
		}
		if (k > SORT_COMM || o->nsort == REPORT_MAX_SORT)
			return -EINVAL;
		for (i = 0; i < o->nsort; i++) {
			if (o->sort[i] == k)
				return -EINVAL;
		}
		o->sort[o->nsort++] = k;
		p += len;
		if (*p == ',' && !*++p)
			return -EINVAL;
	}
	return o->nsort ? 0 : -EINVAL;
}

static int parse_percent(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || (*end && strcmp(end, "%")) || !(v >= 0 && v <= 100))
		return -EINVAL;
	*out = v;
	return 0;
}

static int opt_output(void *o, const char *arg)
{
	((struct report_opts *)o)->output = arg;
	return 0;
}

static int opt_tid(void *o, const char *arg)
{
	struct report_opts *ro = o;

	if (parse_u32(arg, &ro->tid))
		return -EINVAL;
	ro->has_tid = true;
	return 0;
}

static int opt_comm(void *o, const char *arg)
{
	if (!comm_list_ok(arg))
		return -EINVAL;
	((struct report_opts *)o)->comm = arg;
	return 0;
}

static int opt_dsos(void *o, const char *arg)
{
	if (!comm_list_ok(arg))
		return -EINVAL;
	((struct report_opts *)o)->dsos = arg;
	return 0;
}

static int opt_hosts(void *o, const char *arg)
{
	if (!comm_list_ok(arg))
		return -EINVAL;
	((struct report_opts *)o)->hosts = arg;
	return 0;
}

static int opt_ranks(void *o, const char *arg)
{
	if (!filter__ranks_ok(arg))
		return -EINVAL;
	((struct report_opts *)o)->ranks = arg;
	return 0;
}

static int opt_symfs(void *o, const char *arg)
{
	((struct report_opts *)o)->symfs = arg;
	return 0;
}

static int opt_rows(void *o, const char *arg)
{
	return parse_u32(arg, &((struct report_opts *)o)->rows);
}

static int opt_percent_limit(void *o, const char *arg)
{
	return parse_percent(arg, &((struct report_opts *)o)->percent_limit);
}

static int opt_max_output(void *o, const char *arg)
{
	return report__parse_size(arg, &((struct report_opts *)o)->max_output_bytes);
}

static int opt_archive_max(void *o, const char *arg)
{
	return report__parse_size(arg, &((struct report_opts *)o)->archive_max_bytes);
}

static int opt_max_records(void *o, const char *arg)
{
	return report__parse_size(arg, &((struct report_opts *)o)->max_records_bytes);
}

#define STR_(x) #x
#define STR(x) STR_(x)	/* the bounds are plain numbers, said in the expect texts */
#define EXPECT_NAMES "NAME[,NAME...] (at most " STR(FILTER_MAX_COMMS) ")"
#define EXPECT_SIZE "bytes, with an optional K, M or G suffix"

/*
 * Every option of xpu-report and xpu-report diff, once: getopt_long's tables and the option
 * lines of both usage texts (help[0] xpu-report's, help[1] diff's) are made from it.
 */
static const struct cli_opt options[] = {
	{ .short_name = 'F', .name = "format", .arg = "FMT",
	  .help[0] = "text (default), folded (flamegraph.pl input), info,\n"
		     "chrome (timeline JSON for Perfetto UI / chrome://tracing)\n"
		     "perfetto (the same timeline as a native Perfetto trace:\n"
		     "interned, a few times the trace's size; ui.perfetto.dev)\n"
		     "svg (interactive flame graph of the folded view) or jsonl\n"
		     "(one JSON object per event, for scripts: format-spec/JSONL.md)\n"
		     "pprof: gzipped profile.proto of the folded view, for go tool\n"
		     "pprof, Pyroscope, Parca (docs/report.md, \"Fleet\")",
	  .help[1] = "text (default), folded (\"stack base new\" lines, for\n"
		     "flamegraph.pl and difffolded-style tools) or svg (a\n"
		     "differential flame graph of NEW: red grew, blue shrank)" },
	/* xpu-report diff (cmd/diff.c) */
	{ .val = OPT_DIFF_ORDER, .name = "order", .arg = "COL",
	  .help[1] = "self (default) or total: the change that sorts the rows" },
	{ .short_name = 'o', .name = "output", .arg = "FILE", .parse = opt_output,
	  .help[0] = "write to FILE instead of stdout" },
	{ .short_name = 'p', .name = "pid", .arg = "PID[,PID]", .parse = opt_pids,
	  .expect = "PID[,PID...] (at most " STR(REPORT_MAX_PIDS) ")",
	  .help[0] = "only these processes" },
	{ .short_name = 't', .name = "tid", .arg = "TID", .parse = opt_tid, .expect = "a number",
	  .help[0] = "only this thread (GPU work: the thread that launched it)" },
	{ .short_name = 'c', .name = "comm", .arg = "NAME[,NAME]", .parse = opt_comm,
	  .expect = EXPECT_NAMES,
	  .help[0] = "only processes or threads with these names" },
	{ .val = OPT_VIEW, .name = "view", .arg = "VIEW",
	  .help[0] = "merged (default: CPU samples plus GPU work under its launch\n"
		     "stack), cpu (samples only), gpu (GPU work only) or memory\n"
		     "(GPU memory held at the peak, bytes, by allocating stack);\n"
		     "with xpu-record --off-cpu traces, off-cpu (time blocked, by\n"
		     "the stack it blocked in, under an [off-cpu] STATE leaf) or\n"
		     "wall (CPU samples at their period plus time blocked)" },
	{ .val = OPT_WEIGHT, .name = "weight", .arg = "W",
	  .help[0] = "samples or time (microseconds); default: time when the view\n"
		     "holds GPU work (exact GPU durations, CPU samples at their\n"
		     "period), else samples; the memory view is always bytes.\n"
		     "Headers, svg title and info say which" },
	{ .val = OPT_TIME_RANGE, .name = "time-range", .arg = "START,END", .parse = opt_time_range,
	  .expect = "START,END in seconds from the session start, 0 <= START < END",
	  .help[0] = "only events in [START, END] seconds from the session\n"
		     "start (e.g. 1.5,3); GPU work and calls that overlap it" },
	{ .val = OPT_DSO, .name = "dso", .arg = "NAME[,NAME]", .parse = opt_dsos,
	  .expect = EXPECT_NAMES,
	  .help[0] = "only stacks with a frame in these files (basename, e.g.\n"
		     "libc.so.6; text, folded, svg), and only their functions" },
	{ .val = OPT_DSO, .name = "dsos", .arg = "NAME[,NAME]" },	/* --dso's row takes it */
	{ .short_name = 's', .name = "sort", .arg = "KEY[,KEY]", .parse = opt_sort,
	  .expect = "KEY[,KEY...] of sym, dso, comm",
	  .help[0] = "rows of the function tables: sym (default), dso, comm" },
	{ .val = OPT_ROWS, .name = "rows", .arg = "N", .parse = opt_rows,
	  .expect = "a number (0: all)",
	  .help[0] = "rows per text table (default 25; 0: all)" },
	{ .val = OPT_PERCENT_LIMIT, .name = "percent-limit", .arg = "P", .parse = opt_percent_limit,
	  .expect = "0 to 100",
	  .help[0] = "leave out text rows under P% of the total" },
	{ .val = OPT_CALLERS, .name = "callers", .arg = "FUNC",
	  .help[0] = "text: the tree of FUNC's callers (who calls it, by weight)" },
	{ .val = OPT_CALLEES, .name = "callees", .arg = "FUNC",
	  .help[0] = "text: the tree of FUNC's callees (what it calls, by weight)" },
	{ .val = OPT_HOST, .name = "host", .arg = "NAME[,NAME]", .parse = opt_hosts,
	  .expect = EXPECT_NAMES,
	  .help[0] = "only the processes of these hosts (the trace's host name)" },
	{ .val = OPT_RANK, .name = "rank", .arg = "N[,N]", .parse = opt_ranks,
	  .expect = "N[,N...] (at most " STR(FILTER_MAX_RANKS) ")",
	  .help[0] = "only processes with these ranks (RANK in their environment)" },
	{ .val = OPT_SYMFS, .name = "symfs", .arg = "DIR", .parse = opt_symfs,
	  .help[0] = "also look for binaries under DIR (a copy of the target's /)" },
	{ .val = OPT_NO_HOST_FILES, .name = "no-host-files",
	  .help[0] = "read no binaries from this machine's paths or debug dirs: only\n"
		     "--symfs and the archive (the same report on every machine)" },
	{ .val = OPT_PYTHON_LINES, .name = "python-lines",
	  .help[0] = "Python frames as qualname (file.py:LINE) rather than one frame\n"
		     "per function, qualname (file.py)" },
	{ .val = OPT_PYTHON_INTERP, .name = "python-interp",
	  .help[0] = "keep the interpreter's own frames (CPython's, e.g. PyObject_Call,\n"
		     "python3.12+0x...) between two Python frames; by default they\n"
		     "are folded away (in every output), extension and framework\n"
		     "frames stay" },
	{ .val = OPT_SVG_ROOT, .name = "svg-root", .arg = "WHERE",
	  .help[0] = "top (default: an icicle graph, the root and the program's\n"
		     "outer frames on the first screen) or bottom (a flame graph,\n"
		     "as flamegraph.pl draws it; it opens scrolled to the root)" },
	{ .val = OPT_INLINE, .name = "inline",
	  .help[0] = "a frame per inlined function (from DWARF); --no-inline\n"
		     "(default) leaves its time to the function it was inlined\n"
		     "into, as perf report --sort sym does" },
	{ .val = OPT_NO_INLINE, .name = "no-inline" },
	{ .val = OPT_NO_UNWIND, .name = "no-unwind",
	  .help[0] = "keep the recorded user stacks, do not unwind stack copies\n"
		     "(compares -g cfi,check's BPF walk with its DWARF copies)" },
	{ .val = OPT_NO_BACKWARD, .name = "no-backward",
	  .help[0] = "leave PyTorch's backward work on the autograd engine's own\n"
		     "stacks (by default it goes under the forward code that created\n"
		     "each node, below a '[backward] NODE' frame)" },
	{ .val = OPT_CUDA_GRAPHS, .name = "cuda-graphs", .arg = "ORDER",
	  .help[0] = "work a CUDA graph replayed: replay-first (default: the replay's\n"
		     "stack, '[graph] captured', the stack that captured its node),\n"
		     "capture-first (capture stack, '[graph] replayed', replay\n"
		     "stack) or replay-only (the replay's stack alone)" },
	{ .val = OPT_STRICT, .name = "strict",
	  .help[0] = "fail (exit 2) when the trace is truncated or corrupt" },
	{ .val = OPT_MAX_OUTPUT, .name = "max-output", .arg = "SIZE", .parse = opt_max_output,
	  .expect = EXPECT_SIZE,
	  .help[0] = "stop (an error) once the output passes SIZE bytes (K, M,\n"
		     "G suffixes; default 1G; 0: no limit)" },
	{ .val = OPT_ARCHIVE_MAX, .name = "archive-max", .arg = "SIZE", .parse = opt_archive_max,
	  .expect = EXPECT_SIZE,
	  .help[0] = "extract archive entries (TRACE.xpa) only while they hold\n"
		     "at most SIZE bytes of memory in all (default 1G; 0: no limit)" },
	{ .val = OPT_MAX_RECORDS, .name = "max-records", .arg = "SIZE", .parse = opt_max_records,
	  .expect = EXPECT_SIZE,
	  .help[0] = "stop reading (an error; the output is of what was read)\n"
		     "once the records kept hold SIZE bytes of memory (default 64\n"
		     "times the traces' size, 32M to 2G; 0: no limit)" },
	{ .short_name = 'v', .name = "verbose",
	  .help[0] = "say where symbols came from" },
	{ .short_name = 'h', .name = "help",
	  .help[0] = "this text" },
	{ .short_name = 'V', .name = "version",
	  .help[0] = "print the version" },
};

#define NOPTS (sizeof(options) / sizeof(options[0]))

static const char usage_tail[] =
	"\n"
	"xpu-report archive [--elf [--debuginfo]] [-o FILE] FILE.xpu writes FILE.xpu.xpa, a symbol\n"
	"pack: the names this host gives each address the stacks touch (xpu-record makes it), used\n"
	"automatically before local files, so the trace reads the same on any machine; --elf packs\n"
	"the binaries instead, used after local files, debug dirs and --symfs. See xpu-report\n"
	"archive --help.\n"
	"xpu-report diff [OPTIONS] BASE.xpu NEW.xpu compares two traces function by function\n"
	"(shares and their change; text, folded or svg); see xpu-report diff --help.\n"
	"\n"
	"Examples:\n"
	"  xpu-report app.xpu                                  # text summary\n"
	"  xpu-report --sort=dso,sym --rows=10 app.xpu         # functions per file, top 10\n"
	"  xpu-report --callers=cudaLaunchKernel app.xpu       # who launches kernels\n"
	"  xpu-report -F folded app.xpu | flamegraph.pl > app.svg\n"
	"  xpu-report -F folded --view=gpu --weight=time app.xpu > gpu.folded\n"
	"  xpu-report -F info app.xpu                          # what the file holds\n"
	"  xpu-report -F chrome --time-range=1,2 app.xpu > app.json  # open in ui.perfetto.dev\n"
	"  xpu-report -F svg --view=gpu app.xpu > gpu.svg      # open in a browser\n"
	"  xpu-report -p 1234,1240 --symfs=/mnt/target app.xpu\n";

static void print_usage(bool diff)
{
	fputs(diff ? diff_usage_head : usage_head, stdout);
	cli_opts__usage(options, NOPTS, diff, 23, 2, stdout);
	fputs(diff ? diff_usage_tail : usage_tail, stdout);
}

int report__parse_options(int argc, char **argv, struct report_opts *o)
{
	struct option long_opts[NOPTS + 1];
	char shorts[CLI_GETOPT_SHORTS(NOPTS)];
	int c;

	cli_opts__getopt(options, NOPTS, "", long_opts, shorts);
	o->rows = REPORT_DEFAULT_ROWS;
	opterr = 0;	/* one line per error, ours: see the default case */
	while ((c = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		const struct cli_opt *row = cli_opts__find(options, NOPTS, c);

		/* a value the table parses; the switch takes the rest */
		if (row && row->parse) {
			if (cli_opts__parse(row, o, optarg, "xpu-report"))
				return -EINVAL;
			continue;
		}
		switch (c) {
		case 'F': {
			const struct report_format_def *fd = report_format__by_name(optarg);

			if (!fd) {
				fprintf(stderr, "xpu-report: unknown format '%s' (%s)\n", optarg,
					report_format__names());
				return -EINVAL;
			}
			if (fd->unavailable && fd->unavailable()) {
				fprintf(stderr, "xpu-report: %s\n", fd->unavailable());
				return -EINVAL;
			}
			o->format = fd->format;
			break;
		}
		case OPT_VIEW:
			if (!strcmp(optarg, "merged"))
				o->view = VIEW_MERGED;
			else if (!strcmp(optarg, "cpu"))
				o->view = VIEW_CPU;
			else if (!strcmp(optarg, "gpu"))
				o->view = VIEW_GPU;
			else if (!strcmp(optarg, "memory"))
				o->view = VIEW_MEMORY;
			/* off-CPU */
			else if (!strcmp(optarg, "off-cpu"))
				o->view = VIEW_OFF_CPU;
			else if (!strcmp(optarg, "wall"))
				o->view = VIEW_WALL;
			else {
				fprintf(stderr, "xpu-report: unknown view '%s' (merged, cpu, gpu, memory, "
					"off-cpu or wall)\n", optarg);
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
		case OPT_NO_HOST_FILES:
			o->no_host_files = true;
			break;
		case OPT_NO_BACKWARD:
			o->no_backward = true;
			break;
		case OPT_CUDA_GRAPHS:
			if (!strcmp(optarg, "replay-first")) {
				o->graphs = GRAPHS_REPLAY_FIRST;
			} else if (!strcmp(optarg, "capture-first")) {
				o->graphs = GRAPHS_CAPTURE_FIRST;
			} else if (!strcmp(optarg, "replay-only")) {
				o->graphs = GRAPHS_REPLAY_ONLY;
			} else {
				fprintf(stderr, "xpu-report: unknown --cuda-graphs '%s' (replay-first, "
					"capture-first or replay-only)\n", optarg);
				return -EINVAL;
			}
			break;
		case OPT_NO_UNWIND:
			o->no_unwind = true;
			break;
		case OPT_PYTHON_LINES:
			o->python_lines = true;
			break;
		case OPT_PYTHON_INTERP:
			o->python_interp = true;
			break;
		case OPT_SVG_ROOT:
			if (strcmp(optarg, "top") && strcmp(optarg, "bottom")) {
				fprintf(stderr, "xpu-report: unknown --svg-root '%s' (top or bottom)\n",
					optarg);
				return -EINVAL;
			}
			o->svg_root_bottom = !strcmp(optarg, "bottom");
			break;
		case OPT_INLINE:
		case OPT_NO_INLINE:
			o->inline_frames = c == OPT_INLINE;
			break;
		case OPT_STRICT:
			o->strict = true;
			break;
		case OPT_CALLERS:
		case OPT_CALLEES:
			if (!*optarg || o->callers || o->callees) {
				fprintf(stderr, "xpu-report: --callers and --callees take one function name, once\n");
				return -EINVAL;
			}
			*(c == OPT_CALLERS ? &o->callers : &o->callees) = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case OPT_DIFF_ORDER:
			if (!o->diff || (strcmp(optarg, "self") && strcmp(optarg, "total"))) {
				fprintf(stderr, "xpu-report: %s\n", o->diff ?
					"bad --order: self or total" : "--order is for xpu-report diff");
				return -EINVAL;
			}
			o->diff_order_total = !strcmp(optarg, "total");
			break;
		case 'h':
			print_usage(o->diff);
			return 1;
		case 'V':
			printf("xpu-report %s\n", XPU_VERSION);
			return 1;
		default:
			/* getopt sets optopt to the option short of its value, 0 if unknown */
			fprintf(stderr, "xpu-report: %s '%s' (try 'xpu-report --help')\n",
				optopt >= 256 || cli_opts__short_takes_value(options, NOPTS, optopt) ?
					"missing value for option" : "unknown option",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	int r = report__parse_options(argc, argv, o);

	if (r)
		return r;
	/* multi-trace: several files are one report, each read twice (so no stdin) */
	if (optind < argc - 1) {
		int i;

		for (i = optind; i < argc; i++) {
			if (!strcmp(argv[i], "-")) {
				fprintf(stderr, "xpu-report: '-' (stdin) cannot be one of several traces: give files\n");
				return -EINVAL;
			}
		}
		o->inputs = (const char *const *)&argv[optind];
		o->ninputs = argc - optind;
	}
	if ((o->callers || o->callees) && o->format != FMT_TEXT) {
		fprintf(stderr, "xpu-report: --callers and --callees are for --format=text\n");
		return -EINVAL;
	}
	/* as perf report reads perf.data: what xpu-record writes without -o */
	o->input = optind < argc ? argv[optind] : "record.xpu";
	return 0;
}

/*
 * What a report that selects nothing says, instead of an empty output with exit 0: whether
 * the trace has nothing of the view or the options left everything out.
 */
void report__explain_empty(const struct session *ses, const char *prefix)
{
	const struct report_opts *o = ses->opts;
	const struct trace *t = ses->t;
	size_t gpu = t->nkernels + t->nmemcpys + t->nmemsets;

	if (o->view == VIEW_OFF_CPU && !t->noffcpus)
		fprintf(stderr, "xpu-report: %snothing to report: the trace has no off-CPU blocks "
			"(--view=off-cpu)\n", prefix);
	else if (o->view == VIEW_OFF_CPU || o->view == VIEW_WALL)
		fprintf(stderr, "xpu-report: %snothing to report: none of the %zu CPU samples and %zu "
			"off-CPU blocks pass the filters\n", prefix, o->view == VIEW_WALL ? t->nsamples : 0,
			t->noffcpus);
	else if (o->view == VIEW_MEMORY && !t->nmemories)
		fprintf(stderr, "xpu-report: %snothing to report: the trace has no GPU memory records "
			"(--view=memory; recorded since format 1.4)\n", prefix);
	else if (o->view == VIEW_GPU && !gpu)
		fprintf(stderr, "xpu-report: %snothing to report: the trace has no GPU work (--view=gpu)\n",
			prefix);
	else if (o->view == VIEW_CPU && !t->nsamples)
		fprintf(stderr, "xpu-report: %snothing to report: the trace has no CPU samples (--view=cpu)\n",
			prefix);
	else if (!t->nsamples && !gpu)
		fprintf(stderr, "xpu-report: %snothing to report: the trace has no CPU samples and no GPU work\n",
			prefix);
	else
		fprintf(stderr, "xpu-report: %snothing to report: none of the %zu CPU samples and %zu GPU "
			"records pass the filters%s\n", prefix, t->nsamples, gpu,
			o->dsos ? " (--dso keeps the stacks with a frame in its files)" : "");
}

/* Folded, svg and text read the aggregation; info, chrome and jsonl the session alone. */
static int write_output(void *arg, FILE *out)
{
	struct session *ses = arg;
	const struct report_opts *o = ses->opts;
	const struct report_format_def *fd = report_format__of(o->format);
	struct profile p;
	int r;

	/* drawn from every event of the session */
	if (fd->from_session) {
		if (fd->needs_selection && !session__selects_any(ses)) {
			report__explain_empty(ses, "");
			return -ENODATA;
		}
		r = session__name(ses, NULL, fd->names);
		return r ? r : fd->from_session(ses, out);
	}
	/* drawn from the profile aggregated for the view */
	if ((o->view == VIEW_OFF_CPU || o->view == VIEW_WALL) && !session__has_off_cpu(ses)) {
		fprintf(stderr, "xpu-report: the trace has no off-CPU data (--view=%s): record it "
			"with xpu-record --off-cpu\n", o->view == VIEW_WALL ? "wall" : "off-cpu");
		return -ENODATA;
	}
	r = profile__build(&p, ses);
	/* a call tree draws the profile alone */
	if (!r)
		r = session__name(ses, &p, o->callers || o->callees ? NAME_PROFILE : fd->names);
	if (r)
		goto out;
	if (!p.cpu_samples && !p.gpu_records && !p.off_blocks) {
		/* the text header still says what the trace holds and lost */
		if (fd->header_when_empty)
			r = fd->from_profile(&p, out);
		report__explain_empty(ses, "");
		r = r ? r : -ENODATA;
		goto out;
	}
	r = o->callers || o->callees ? out_calltree(&p, out) : fd->from_profile(&p, out);
out:
	profile__free(&p);
	return r;
}

/*
 * Where the report goes: --output or standard output. A regular file that failed to be
 * written is removed again (dev, ino: only the file opened), as a half-written report reads
 * as a whole one; a device or a pipe is left alone.
 */
struct output {
	FILE *f;
	const char *path;	/* NULL: standard output */
	bool regular;
	dev_t dev;
	ino_t ino;
	int err;		/* errno of the first failed write, 0 if none */
};

/*
 * The output stream, behind a byte limit (--max-output): a hostile trace can make an output
 * grow with each event that repeats a string, and a stream that only warned went on for
 * gigabytes. A write past the limit fails, so the output stops there.
 */
struct limited {
	struct output *to;
	uint64_t written, max;
	bool over;
	bool escape;			/* a text format: through the terminal escaper */
	struct term_safe ts;
};

/* Writes n bytes within the limit: 0, or -1 past it or failed. */
static int limited_put(void *cookie, const char *buf, size_t n)
{
	struct limited *l = cookie;
	size_t done;

	if (l->over || n > l->max - l->written) {
		l->over = true;
		errno = EFBIG;
		return -1;
	}
	done = fwrite(buf, 1, n, l->to->f);
	l->written += done;
	if (done == n)
		return 0;
	/* the writer only sees a failed stream: the reason is kept for the one message */
	if (!l->to->err)
		l->to->err = errno ? errno : EIO;
	return -1;
}

/* --max-output counts the bytes written, escapes included */
static ssize_t limited_write(void *cookie, const char *buf, size_t n)
{
	struct limited *l = cookie;
	int r = l->escape ? term_safe__write(&l->ts, buf, n, limited_put, l) :
			    limited_put(l, buf, n);

	return r ? -1 : (ssize_t)n;
}

static int limited_close(void *cookie)
{
	struct limited *l = cookie;

	return l->escape ? term_safe__flush(&l->ts, limited_put, l) : 0;
}

static FILE *limited_open(struct limited *l, struct output *to, uint64_t max, bool escape)
{
	cookie_io_functions_t io = { .write = limited_write, .close = limited_close };

	memset(l, 0, sizeof(*l));
	l->to = to;
	l->max = max ? max : REPORT_MAX_OUTPUT_DEFAULT;
	l->escape = escape;
	return fopencookie(l, "w", io);
}

/* Writes the output through the limit; 0, -EFBIG (past it, said here) or negative errno. */
static int write_limited(const struct report_opts *o, struct output *out,
			 int (*write)(void *arg, FILE *f), void *arg)
{
	struct limited lim;
	FILE *f = limited_open(&lim, out, o->max_output_bytes,
			       !report_format__of(o->format)->keeps_bytes);
	int r;

	if (!f)
		return -ENOMEM;
	r = write(arg, f);
	if (fclose(f) && !r)
		r = -EIO;
	if (lim.over) {
		fprintf(stderr, "xpu-report: error: the output passed --max-output=%llu bytes and was cut there: narrow it with --time-range=START,END (seconds) or --pid=PID, or raise --max-output\n",
			(unsigned long long)lim.max);
		return -EFBIG;
	}
	return r;
}

static int output_open(struct output *out, const char *path)
{
	struct stat sb;

	memset(out, 0, sizeof(*out));
	out->f = stdout;
	if (!path)
		return 0;
	out->path = path;
	out->f = fopen(path, "w");
	if (!out->f) {
		int err = errno;

		fprintf(stderr, "xpu-report: cannot write %s: %s\n", path, strerror(err));
		return -err;
	}
	if (!fstat(fileno(out->f), &sb) && S_ISREG(sb.st_mode)) {
		out->regular = true;
		out->dev = sb.st_dev;
		out->ino = sb.st_ino;
	}
	return 0;
}

/* Removes a regular output file that is still the one opened (see struct output). */
static void output_remove(const struct output *out)
{
	struct stat sb;

	if (out->regular && !lstat(out->path, &sb) && S_ISREG(sb.st_mode) &&
	    sb.st_dev == out->dev && sb.st_ino == out->ino)
		unlink(out->path);
}

/*
 * Flushes and closes the output and says, once, what failed: the file and errno of a failed
 * write, or the writer's error r. Returns the exit status, 0 or 1.
 */
static int output_close(struct output *out, int r)
{
	const char *name = out->path ? out->path : "standard output";
	int err;

	errno = 0;
	if ((fflush(out->f) || ferror(out->f)) && !out->err)
		out->err = errno ? errno : EIO;
	if (out->path && fclose(out->f) && !out->err)
		out->err = errno ? errno : EIO;
	/* a failed write makes any writer error (-EIO) a consequence: the write is the news */
	err = out->err ? out->err : r == -ENODATA || r == -ENOENT || r == -EFBIG ? 0 : -r;
	/* -ENODATA, -ENOENT: said already; -EFBIG: write_limited said so, and keeps the cut file */
	if (err == ENOMEM)
		fprintf(stderr, "xpu-report: out of memory\n");
	else if (err)
		fprintf(stderr, "xpu-report: cannot write %s: %s\n", name, strerror(err));
	if (err)
		output_remove(out);
	return r || err ? 1 : 0;
}

int report__emit(const struct report_opts *o, int (*write)(void *arg, FILE *f), void *arg)
{
	struct output out;
	int r;

	if (output_open(&out, o->output))
		return 1;
	r = write_limited(o, &out, write, arg);
	progress__end();
	return output_close(&out, r);
}

void report__say_incomplete(const struct trace *t, const char *path)
{
	warn__once("%s%serror: trace incomplete: %llu records read (%s)", path ? path : "",
		   path ? ": " : "", (unsigned long long)t->st.records, t->st.reason);
}

int report__load(struct trace *t, const char *path, const struct report_opts *o)
{
	/* multi-trace: o->inputs holds the files when there are several, path is the first */
	bool many = !o->diff && o->ninputs > 1;
	char err[256];
	bool truncated;

	progress__init(true);
	if (many ? trace_merge__load(t, o->inputs, (size_t)o->ninputs, o->max_records_bytes, err,
				     sizeof(err)) :
		   trace__load_max(t, path, o->max_records_bytes, err, sizeof(err))) {
		progress__end();
		/* diff reads two traces: say which one (a report's one is known) */
		fprintf(stderr, "xpu-report: %s%s%s\n", o->diff && !strstr(err, path) ? path : "",
			o->diff && !strstr(err, path) ? ": " : "", err);
		return 1;
	}
	progress__end();	/* warnings below start on a clean line */
	truncated = t->st.end != TRACE_END_CLEAN;
	if (!t->st.records) {	/* one line: why there is nothing, and nothing to report */
		fprintf(stderr, "xpu-report: %s hold%s no records: nothing to report%s%s%s\n",
			many ? "the traces" : path, many ? "" : "s",
			truncated ? " (" : "", truncated ? t->st.reason : "", truncated ? ")" : "");
		trace__free(t);
		return 1;
	}
	if (t->st.end == TRACE_END_LIMIT) {
		/* the bound on the records (trace.h): what was read is reported, exit 1 */
		report__say_incomplete(t, o->diff ? path : NULL);
		if (o->strict) {
			trace__free(t);
			return 2;
		}
	} else if (truncated) {
		warn__once("%s%s%s: trace %s after frame %llu: %llu records recovered (%s)",
			   o->diff ? path : "", o->diff ? ": " : "", o->strict ? "error" : "warning",
			   t->st.end == TRACE_END_CORRUPT ? "corrupt" : "truncated",
			   (unsigned long long)(t->st.frames_ok ? t->st.frames_ok - 1 : 0),
			   (unsigned long long)t->st.records,
			   t->st.reason[0] ? t->st.reason : "no reason given");
		if (o->strict) {
			trace__free(t);
			return 2;
		}
	}
	return 0;
}

/* Everything after the command line: load, check, set up the session, write. */
int report_run(const struct report_opts *o)
{
	struct trace t;
	struct session ses;
	int ret;

	ret = report__load(&t, o->input, o);
	if (ret)
		return ret;
	if (session__setup(&ses, &t, o)) {
		fprintf(stderr, "xpu-report: out of memory\n");
		ret = 1;
	} else {
		const struct dso_table *dsos = &ses.dsos;

		ret = report__emit(o, write_output, &ses);
		/* an output from part of the records (--max-records) is not the trace's */
		if (t.st.end == TRACE_END_LIMIT)
			ret = 1;
		dso_table__warn_unresolved(&dsos, 1);
	}
	session__teardown(&ses);
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
