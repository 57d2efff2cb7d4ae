// SPDX-License-Identifier: MIT
/*
 * The options of xpu-report and xpu-report diff: one table (getopt_long's tables, both usage
 * texts, and the parser of each value, cli_opts.h), and the special cases the table does not
 * take: formats, choices of a word, flags, --callers, --order, --help and --version.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "cmd/cmd.h"
#include "cmd/formats.h"
#include "model/view.h"

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
		case OPT_VIEW: {
			const struct view_def *vd = view__by_name(optarg);

			if (!vd) {
				fprintf(stderr, "xpu-report: unknown view '%s' (%s)\n", optarg,
					view__names());
				return -EINVAL;
			}
			o->view = vd->view;
			break;
		}
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
