// SPDX-License-Identifier: MIT
/* The report command: loading, and dispatch to one output format (its options: report_opts.c). */
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
#include "cmd/cmd.h"
#include "cmd/formats.h"
#include "model/profile.h"
#include "output/out.h"
#include "trace/merge.h"

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
