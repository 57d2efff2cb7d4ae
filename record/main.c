// SPDX-License-Identifier: MIT
/* xpu-record: command line. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cli_opts.h"
#include "config.h"
#include "fd_limit.h"
#include "recording.h"

static const char usage_head[] =
"Usage: xpu-record [OPTION...] -- COMMAND [ARG...]\n"
"       xpu-record [OPTION...] -p PID[,PID...]\n"
"Record CPU samples (and, with libxpu-cupti.so next to xpu-record, GPU activity and the\n"
"CPU stacks that launched it) of a process tree into a .xpu trace.\n"
"\n";

enum {
	OPT_KERNEL_STACKS = 256,
	OPT_NO_GPU,
	OPT_NO_LAUNCH_STACKS,
	OPT_LAUNCH_WALK,
	OPT_NO_PACK,
	OPT_PACK_DEBUGINFOD,
	OPT_RINGBUF_MB,
	OPT_KEEP_ROOT,
	OPT_CUDA_GRAPHS,
	OPT_NO_PYTHON,
	OPT_NO_AUTOGRAD,
	OPT_DRIVER,
	OPT_CACHE_DIR,
	OPT_NO_CACHE,
	/* off-CPU */
	OPT_OFF_CPU,
	OPT_OFF_CPU_MIN,
};

/* the defaults in the help, as written in config.h (plain numbers) */
#define STR_(x) #x
#define STR(x) STR_(x)

/* Every option, once: getopt_long's tables and the option lines of the usage. */
static const struct cli_opt options[] = {
	{ .short_name = 'F', .name = "freq", .arg = "HZ",
	  .help[0] = "sampling frequency per CPU (default " STR(XPU_DEFAULT_FREQ_HZ) ")" },
	{ .short_name = 'o', .name = "output", .arg = "FILE",
	  .help[0] = "trace file to write (default " XPU_DEFAULT_OUTPUT "), written as\n"
		     "FILE.partial and renamed at the end; - streams the trace to\n"
		     "standard output (the command's output then goes to stderr)" },
	{ .short_name = 'g', .name = "call-graph", .arg = "MODE",
	  .help[0] = "user stack unwinding, for CPU samples and GPU launches. cfi (the\n"
		     "default) walks the stack in BPF with tables built from each\n"
		     "file's .eh_frame, so stacks are complete through code built\n"
		     "without frame pointers (distro binaries, Python, PyTorch,\n"
		     "libcudart, wheels) at 1.1-1.3x the trace size of fp and\n"
		     "2/3 of the cost of dwarf; the few walks that fall short also\n"
		     "copy the stack, as dwarf,32768,32768 does, for xpu-report to\n"
		     "unwind (cfi,nocopy: never).\n"
		     "fp (frame pointers) is the cheapest mode, complete only where\n"
		     "every frame has a frame pointer. dwarf[,SIZE[,TOP]] copies the\n"
		     "top SIZE bytes of the user stack (at most 65536) with the\n"
		     "registers, and TOP bytes (at most 32768) below the thread's\n"
		     "stack top when SIZE does not reach it; xpu-report unwinds them\n"
		     "offline (about 10x the trace of cfi; plain dwarf is\n"
		     "dwarf,8192). cfi,check walks and copies dwarf,32768,32768 on\n"
		     "the same events (xpu-report --no-unwind shows the BPF walk's\n"
		     "stacks, plain xpu-report the copies', so the two compare)" },
	{ .val = OPT_KERNEL_STACKS, .name = "kernel-stacks",
	  .help[0] = "also record kernel stacks (and /proc/kallsyms)" },
	{ .short_name = 'p', .name = "pid", .arg = "PID[,PID...]",
	  .help[0] = "attach to running processes (and follow their new children);\n"
		     "one that uses CUDA gets its GPU work recorded from now on" },
	{ .val = OPT_NO_PYTHON, .name = "no-python",
	  .help[0] = "do not read Python frames (CPython 3.10-3.13 processes of the\n"
		     "traced tree get them by default, with no change to the target)" },
	{ .val = OPT_NO_AUTOGRAD, .name = "no-autograd",
	  .help[0] = "do not probe PyTorch's autograd (by default the forward code\n"
		     "that created each backward node is recorded, so xpu-report\n"
		     "puts backward work under it)" },
	{ .val = OPT_NO_GPU, .name = "no-gpu",
	  .help[0] = "record CPU samples only: do not inject the CUPTI library\n"
		     "into the target (no kernels, copies or launch stacks)" },
	{ .val = OPT_NO_LAUNCH_STACKS, .name = "no-launch-stacks",
	  .help[0] = "GPU activity only (kernels, copies, memsets, syncs, memory,\n"
		     "NVTX), without the launch callbacks, their API records and\n"
		     "the launches' CPU stacks: the cheapest GPU mode, at the cost of\n"
		     "a bare CUPTI client (BENCHMARKS.md); not with -p" },
	{ .val = OPT_LAUNCH_WALK, .name = "launch-walk", .arg = "MODE",
	  .help[0] = "who walks each launch's CPU stack with -g cfi: inproc (the\n"
		     "default): the launching thread, inside the injected library,\n"
		     "over the recorder's tables shared read-only with it (BPF takes\n"
		     "the launches it cannot finish); bpf: the BPF probe, on every\n"
		     "launch (costlier: BENCHMARKS.md); check: both, on every launch\n"
		     "walked in process (diagnosis: the trace holds both stacks of\n"
		     "each launch, to compare). cfi,check is always bpf" },
	{ .val = OPT_CACHE_DIR, .name = "cache-dir", .arg = "DIR",
	  .help[0] = "where built unwind tables are kept, so that the next recording\n"
		     "of the same files starts at once (default $XPU_CACHE_DIR/cfi,\n"
		     "$XDG_CACHE_HOME/xpu-perf/cfi or ~/.cache/xpu-perf/cfi; at most\n"
		     "1 GiB, least recently used removed first; delete it to clear)" },
	{ .val = OPT_NO_CACHE, .name = "no-cache",
	  .help[0] = "build every unwind table afresh, reading and writing no cache" },
	{ .val = OPT_NO_PACK, .name = "no-pack",
	  .help[0] = "do not write the symbol pack FILE.xpa at the end (the names\n"
		     "and stack walks that make the trace read the same elsewhere)" },
	{ .val = OPT_PACK_DEBUGINFOD, .name = "pack-debuginfod",
	  .help[0] = "let the symbol pack fetch missing files from the debuginfod\n"
		     "servers of DEBUGINFOD_URLS (by default it uses this host's\n"
		     "files only: the end of a recording never waits on a network)" },
	{ .val = OPT_DRIVER, .name = "driver",
	  .help[0] = "also record the ioctls of the traced tree on NVIDIA device files\n"
		     "(/dev/nvidia*), with the time inside the driver where the\n"
		     "nvidia modules have BTF" },
	{ .val = OPT_OFF_CPU, .name = "off-cpu",
	  .help[0] = "also record where the traced threads block (off their CPU),\n"
		     "with the user stack they blocked in, for xpu-report\n"
		     "--view=off-cpu and --view=wall" },
	{ .val = OPT_OFF_CPU_MIN, .name = "off-cpu-min", .arg = "TIME",
	  .help[0] = "shortest block recorded (default 1ms; units ns, us, ms, s; a\n"
		     "bare number is ms): shorter ones are only counted;\n"
		     "implies --off-cpu" },
	{ .val = OPT_CUDA_GRAPHS, .name = "cuda-graphs", .arg = "MODE",
	  .help[0] = "how CUDA graph launches are recorded: node (default; every\n"
		     "kernel, copy and memset of the graph, under the replay's\n"
		     "stack and the stack that captured its node), replay (the\n"
		     "same, without capture sites: no graph node callbacks) or\n"
		     "graph (one record per graph launch, cheaper for large graphs)" },
	{ .short_name = 'd', .name = "duration", .arg = "SECS",
	  .help[0] = "stop after SECS seconds (decimals allowed): the command gets\n"
		     "SIGINT, as from ^C, and SIGTERM 5 s later if still running;\n"
		     "with -p, recording just stops and the process runs on" },
	{ .val = OPT_RINGBUF_MB, .name = "ringbuf-mb", .arg = "N",
	  .help[0] = "BPF ring buffer size in MiB, a power of two (default "
		     STR(XPU_CFI_RINGBUF_MB) " with\n"
		     "the default -g cfi, whose copies are few; "
		     STR(XPU_DEFAULT_RINGBUF_MB) " with -g fp or\n"
		     "-g cfi,nocopy; with -g dwarf, room for 1024 stack copies, up\n"
		     "to " STR(XPU_DWARF_RINGBUF_MAX_MB) ")" },
	{ .val = OPT_KEEP_ROOT, .name = "keep-root",
	  .help[0] = "under sudo, run the command as root too (by default it runs as\n"
		     "the user who ran sudo, and the trace belongs to that user)" },
	{ .short_name = 'v', .name = "verbose",
	  .help[0] = "print progress and libbpf messages; -vv: libbpf's debug messages\n"
		     "(a refused program's verifier log); -vvv: verifier statistics" },
	{ .short_name = 'h', .name = "help",
	  .help[0] = "print this help" },
	{ .short_name = 'V', .name = "version",
	  .help[0] = "print the version" },
};

#define NOPTS (sizeof(options) / sizeof(options[0]))

static const char usage_tail[] =
"\n"
"The traced tree is the command (or PID) and every process it forks or executes. Recording\n"
"stops when the last of them exits, or on SIGINT/SIGTERM/SIGHUP (^C), which are passed on to\n"
"the command first; a tree still running 5 s later gets SIGTERM, and 5 s after that it is\n"
"left running and recording stops. A second ^C stops recording at once.\n"
"\n"
"Exit status: the command's (128+N if signal N killed it: 130 after ^C, 143 if it took the\n"
"SIGTERM); 130 when a second ^C or a command outliving SIGTERM ended the recording; 0 when\n"
"-d ended the command with its SIGINT or SIGTERM; with -p, 0 or 128+N for stop signal N;\n"
"1 for a recording error, 2 for a usage error, 126/127 if the command cannot run or is\n"
"not found.\n"
"\n"
"Examples:\n"
"  xpu-record -- ./train --epochs 1          # writes " XPU_DEFAULT_OUTPUT "\n"
"  xpu-record -F 4999 -o app.xpu -- ./app    # finer sampling, named output\n"
"  xpu-record --kernel-stacks -p 1234        # attach; stop with ^C\n"
"  xpu-record -p 1234 -d 30 -o prod.xpu      # attach for 30 seconds\n"
"  xpu-record -o - -- ./app | xpu-report -   # stream the trace into the report\n"
"  ssh gpu1 xpu-record -o - -d 10 -- ./app > app.xpu\n"
"  xpu-report --format=folded app.xpu | flamegraph.pl > app.svg\n";

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && xpu_verbose < 2)
		return 0;
	if (!xpu_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* One line naming the problem, and exit status 2 as for any usage error. */
__attribute__((format(printf, 1, 2))) static int bad_arg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xpu-record: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see xpu-record --help)\n");
	return 2;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max || *s == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

/* Positive decimal seconds, at most a year, as nanoseconds ("1.5" is 1500000000). */
static int parse_seconds(const char *s, uint64_t *ns)
{
	char *end;
	double v;

	if (!*s || *s == '-' || *s == '+' || strspn(s, "0123456789.") != strlen(s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 31536000.0)
		return -EINVAL;
	*ns = (uint64_t)(v * 1e9);
	return *ns ? 0 : -EINVAL;
}

/* --off-cpu-min: "500us", "1ms", "0.5" (ms), "2s"; from 1 us to 60 s. */
static int parse_off_cpu_min(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e6 },
	};
	size_t num = strspn(s, "0123456789."), i;
	char *end;
	double v;

	if (!num || num > 32)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end != s + num)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			v *= units[i].ns;
			if (!(v >= 1e3) || v > 60e9)
				return -ERANGE;
			*ns = (uint64_t)v;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * Root only for the BPF side: under sudo the command runs as the user who typed it (a
 * profiler must not change what it measures, nor hand root to a build script), and the
 * trace is theirs. SUDO_* come from the environment, which only root can start us with here.
 */
static int sudo_user(struct record_config *cfg, bool keep_root)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long uid, gid;

	if (geteuid() != 0 || !su || !*su)
		return 0;
	if (parse_uint(su, 0, UINT_MAX - 1, &uid) || !sg || parse_uint(sg, 0, UINT_MAX - 1, &gid)) {
		bad_arg("invalid SUDO_UID/SUDO_GID in the environment ('%s', '%s')", su,
			sg ? sg : "");
		return -EINVAL;
	}
	if (uid == 0)
		return 0;
	cfg->sudo = true;
	cfg->user_uid = (uid_t)uid;
	cfg->user_gid = (gid_t)gid;
	cfg->user_name = getenv("SUDO_USER");
	cfg->drop_root = !keep_root && !cfg->attach_pid;
	return 0;
}

/*
 * 8 MiB, or with -g dwarf room for about 1024 stack copies, up to XPU_DWARF_RINGBUF_MAX_MB. A
 * copy event is 8 to 96 KiB, so 8 MiB held under 1000 of them (a few ms of a launch loop),
 * and a burst overran it whenever the drain thread, woken at a quarter full, was not scheduled
 * at once on a busy host. Events lost that way are counted; this makes them rarer.
 */
static unsigned int default_ringbuf_mb(const struct record_config *cfg)
{
	uint64_t want = 1024ull * ((uint64_t)cfg->dwarf_bytes + cfg->dwarf_top_bytes + 1024);
	unsigned int mb = XPU_DEFAULT_RINGBUF_MB;

	if (!cfg->dwarf_bytes)
		return mb;
	/* -g cfi copies only where a walk fell short: in bursts at a library's first moments */
	if (cfg->copy_short_walks)
		return XPU_CFI_RINGBUF_MB;
	while (((uint64_t)mb << 20) < want && mb < XPU_DWARF_RINGBUF_MAX_MB)
		mb *= 2;
	return mb;
}

int main(int argc, char **argv)
{
	struct record_config cfg = {
		.output = XPU_DEFAULT_OUTPUT,
		.freq_hz = XPU_DEFAULT_FREQ_HZ,
		/* the default mode, -g cfi */
		.cfi = true,
		.copy_short_walks = true,
		.dwarf_bytes = XPU_CFI_COPY_BYTES,
		.dwarf_top_bytes = XPU_CFI_COPY_TOP_BYTES,
		.off_cpu_min_ns = XPU_DEFAULT_OFF_CPU_MIN_NS,
		.argc = argc,
		.argv = argv,
	};
	struct option long_opts[NOPTS + 1];
	char shorts[CLI_GETOPT_SHORTS(NOPTS)];
	unsigned long v;
	bool keep_root = false, launch_walk_bpf = false;
	int c;

	/* '+': stop at the first non-option, so the command's own options stay its own. */
	opterr = 0;	/* one line per error, ours: see the default case */
	cli_opts__getopt(options, NOPTS, "+", long_opts, shorts);
	while ((c = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (parse_uint(optarg, 1, 100000, &v))
				return bad_arg("invalid frequency '%s': expected 1..100000 Hz", optarg);
			cfg.freq_hz = (unsigned int)v;
			break;
		case 'o':
			if (!*optarg)
				return bad_arg("empty output file name");
			cfg.output = optarg;
			break;
		case 'g':
			cfg.cfi = false;
			cfg.copy_short_walks = false;
			if (!strcmp(optarg, "fp")) {
				cfg.dwarf_bytes = 0;
				cfg.dwarf_top_bytes = 0;
			} else if (!strcmp(optarg, "cfi")) {
				cfg.cfi = true;
				cfg.copy_short_walks = true;
				cfg.dwarf_bytes = XPU_CFI_COPY_BYTES;
				cfg.dwarf_top_bytes = XPU_CFI_COPY_TOP_BYTES;
			} else if (!strcmp(optarg, "cfi,nocopy")) {
				cfg.cfi = true;
				cfg.dwarf_bytes = 0;
				cfg.dwarf_top_bytes = 0;
			} else if (!strcmp(optarg, "cfi,check")) {
				/* the BPF walk plus the copies that -g dwarf unwinds: both on one run */
				cfg.cfi = true;
				cfg.dwarf_bytes = XPU_CFI_COPY_BYTES;
				cfg.dwarf_top_bytes = XPU_CFI_COPY_TOP_BYTES;
			} else if (!strcmp(optarg, "dwarf")) {
				/* as documented: plain dwarf is dwarf,8192, no stack-top window */
				cfg.dwarf_bytes = XPU_DEFAULT_DWARF_BYTES;
				cfg.dwarf_top_bytes = 0;
			} else if (!strncmp(optarg, "dwarf,", 6)) {
				char size[16], *top = strchr(optarg + 6, ',');
				size_t n = top ? (size_t)(top - optarg - 6) : strlen(optarg + 6);

				/* multiples of 8 keep the record body aligned without padding */
				snprintf(size, sizeof(size), "%.*s", n < sizeof(size) ? (int)n : 0,
					 optarg + 6);
				if (parse_uint(size, 8, 65536, &v) || (v & 7))
					return bad_arg("invalid dwarf stack size '%s': a multiple of 8, "
						       "8..65536 bytes", optarg + 6);
				cfg.dwarf_bytes = (unsigned int)v;
				if (top && (parse_uint(top + 1, 8, 32768, &v) || (v & 7)))
					return bad_arg("invalid dwarf stack-top size '%s': a multiple of "
						       "8, 8..32768 bytes", top + 1);
				cfg.dwarf_top_bytes = top ? (unsigned int)v : 0;
			} else {
				return bad_arg("unsupported call-graph mode '%s': cfi[,nocopy|,check], "
					       "fp or dwarf[,SIZE[,TOP]]",
					       optarg);
			}
			break;
		case OPT_KERNEL_STACKS:
			cfg.kernel_stacks = true;
			break;
		case 'p': {
			char *list = strdup(optarg), *tok, *save = NULL;

			if (!list)
				return bad_arg("out of memory");
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (parse_uint(tok, 1, INT_MAX, &v)) {
					free(list);
					return bad_arg("invalid pid '%s'", optarg);
				}
				if (cfg.nattach == XPU_MAX_ATTACH) {
					free(list);
					return bad_arg("more than %d pids in -p", XPU_MAX_ATTACH);
				}
				cfg.attach_pids[cfg.nattach++] = (pid_t)v;
			}
			free(list);
			if (!cfg.nattach)
				return bad_arg("invalid pid '%s'", optarg);
			cfg.attach_pid = cfg.attach_pids[0];
			break;
		}
		case 'd':
			if (parse_seconds(optarg, &cfg.duration_ns))
				return bad_arg("invalid duration '%s': expected seconds, more than 0 "
					       "and at most 31536000", optarg);
			break;
		case OPT_CACHE_DIR:
			if (!*optarg)
				return bad_arg("--cache-dir: an empty directory name");
			cfg.cache_dir = optarg;
			break;
		case OPT_NO_CACHE:
			cfg.no_cache = true;
			break;
		case OPT_NO_PACK:
			cfg.no_pack = true;
			break;
		case OPT_PACK_DEBUGINFOD:
			cfg.pack_debuginfod = true;
			break;
		case OPT_NO_GPU:
			cfg.no_gpu = true;
			break;
		case OPT_NO_LAUNCH_STACKS:
			cfg.no_launch_stacks = true;
			break;
		case OPT_LAUNCH_WALK:
			if (strcmp(optarg, "inproc") && strcmp(optarg, "bpf") &&
			    strcmp(optarg, "check"))
				return bad_arg("invalid --launch-walk '%s': expected inproc, bpf or "
					       "check", optarg);
			launch_walk_bpf = !strcmp(optarg, "bpf");
			cfg.launch_walk_check = !strcmp(optarg, "check");
			break;
		case OPT_NO_PYTHON:
			cfg.no_python = true;
			break;
		case OPT_NO_AUTOGRAD:
			cfg.no_autograd = true;
			break;
		case OPT_OFF_CPU:
			cfg.off_cpu = true;
			break;
		case OPT_OFF_CPU_MIN:
			if (parse_off_cpu_min(optarg, &cfg.off_cpu_min_ns))
				return bad_arg("invalid --off-cpu-min '%s': expected a time from 1us "
					       "to 60s, such as 500us or 2ms", optarg);
			cfg.off_cpu = true;
			break;
		case OPT_DRIVER:
			cfg.driver = true;
			break;
		case OPT_CUDA_GRAPHS:
			/* checked here: the injected library only logs and falls back to node */
			if (strcmp(optarg, "node") && strcmp(optarg, "graph") && strcmp(optarg, "replay"))
				return bad_arg("invalid --cuda-graphs mode '%s': expected node, replay or graph",
					       optarg);
			cfg.cuda_graphs = optarg;
			break;
		case OPT_RINGBUF_MB:
			if (parse_uint(optarg, 1, 1024, &v) || (v & (v - 1)))
				return bad_arg("invalid ring buffer size '%s': a power of two, 1..1024",
					       optarg);
			cfg.ringbuf_mb = (unsigned int)v;
			break;
		case OPT_KEEP_ROOT:
			keep_root = true;
			break;
		case 'v':
			xpu_verbose++;
			break;
		case 'h':
			fputs(usage_head, stdout);
			cli_opts__usage(options, NOPTS, 0, 25, 2, stdout);
			fputs(usage_tail, stdout);
			return 0;
		case 'V':
			printf("xpu-record %s\n", XPU_VERSION);
			return 0;
		default:
			/* getopt sets optopt to the option short of its value, 0 if unknown */
			if (optopt >= 256 || cli_opts__short_takes_value(options, NOPTS, optopt))
				return bad_arg("option '%s' needs a value", argv[optind - 1]);
			return bad_arg("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		cfg.cmd = &argv[optind];
	if (cfg.attach_pid && cfg.cmd)
		return bad_arg("give either -p PID or a command, not both");
	if (!cfg.attach_pid && !cfg.cmd)
		return bad_arg("no command to record: xpu-record [OPTION...] -- COMMAND");
	/* the injected library reads its mode from the environment, which -p cannot give it */
	if (cfg.attach_pid && cfg.no_launch_stacks)
		return bad_arg("--no-launch-stacks works on a launched command, not with -p: "
			       "an attached process's library keeps its launch stacks");
	/*
	 * The library walks with the cfi tables only; cfi,check compares the BPF walk with its
	 * copies on the same events, so its launches stay BPF's.
	 */
	cfg.launch_walk_inproc = !launch_walk_bpf && cfg.cfi &&
				 !(cfg.dwarf_bytes && !cfg.copy_short_walks) && !cfg.no_gpu &&
				 !cfg.no_launch_stacks;
	if (cfg.launch_walk_check && !cfg.launch_walk_inproc)
		return bad_arg("--launch-walk=check compares the in-process walk with BPF's: it "
			       "needs -g cfi (or cfi,nocopy) and launch stacks");
	if (!cfg.ringbuf_mb)
		cfg.ringbuf_mb = default_ringbuf_mb(&cfg);
	if (!strcmp(cfg.output, "-") && isatty(STDOUT_FILENO))
		return bad_arg("-o -: standard output is a terminal; redirect it or pipe it to "
			       "xpu-report -");
	if (sudo_user(&cfg, keep_root))
		return 2;
	fd_limit__raise(&cfg.nofile);
	/* a closed pipe (-o - | head) is a write error to report, not a reason to die */
	signal(SIGPIPE, SIG_IGN);
	libbpf_set_print(libbpf_print);
	return recording__run(&cfg);
}
