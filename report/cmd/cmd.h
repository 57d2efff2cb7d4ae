/* SPDX-License-Identifier: MIT */
/* The commands of xpu-report: the report itself and `archive`. Neither exits. */
#ifndef XPU_REPORT_CMD_H
#define XPU_REPORT_CMD_H

#include <stdio.h>

#include "model/session.h"

/* Runs a report for parsed options; returns the exit status (tests/fuzz/ loop over it). */
int report_run(const struct report_opts *o);
/* `xpu-report [OPTIONS] FILE`: parses the command line, then report_run(); exit status. */
int report__main(int argc, char **argv);
/* `xpu-report diff [OPTIONS] BASE NEW`: the change between two traces (cmd/diff.c). */
int diff__main(int argc, char **argv);
/* The diff of files[0] (base) and files[1] (new) for parsed options; exit status (fuzz). */
int diff_run(const struct report_opts *o, char *const files[2]);
/* `xpu-report archive TRACE [-o FILE] [--debuginfo] [--symfs DIR] [-v]`: exit status. */
int archive__main(int argc, char **argv);

/* The pieces of a report that diff shares. */
/*
 * Parses the options (not the files) into o, which the caller zeroes (o->diff set for the
 * diff command); the files start at argv[optind]. 0, 1 (--help or --version printed) or
 * -EINVAL (said on stderr).
 */
int report__parse_options(int argc, char **argv, struct report_opts *o);
/*
 * --max-output, --archive-max, --max-records: bytes, with an optional K, M or G suffix, into
 * *out (0: none, UINT64_MAX). 0 or -EINVAL.
 */
int report__parse_size(const char *arg, uint64_t *out);
/* The one line for a trace read only up to --max-records (path: NULL, or the trace to name). */
void report__say_incomplete(const struct trace *t, const char *path);
/*
 * Loads the trace at path and says on stderr what is wrong with it: unreadable, no records,
 * truncated or corrupt (an error only with --strict), or stopped at --max-records (an error:
 * the caller reports what was read and exits 1, see TRACE_END_LIMIT). 0 (trace__free it),
 * else the exit status (nothing to free).
 */
int report__load(struct trace *t, const char *path, const struct report_opts *o);
/*
 * Opens --output (or stdout), runs write(arg, stream) behind --max-output, closes, and says
 * what failed. write returns 0 or negative errno (-ENODATA, -ENOENT: it said why already).
 * Returns the exit status, 0 or 1.
 */
int report__emit(const struct report_opts *o, int (*write)(void *arg, FILE *f), void *arg);
/*
 * Says on stderr why a session selects nothing (no data of the view, or the filters), the
 * prefix ("" or "FILE: ") after "xpu-report: ".
 */
void report__explain_empty(const struct session *ses, const char *prefix);
/* `xpu-report diff --help`: its text before and after the options' lines */
extern const char diff_usage_head[], diff_usage_tail[];

#endif
