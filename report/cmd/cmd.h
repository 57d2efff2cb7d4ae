/* SPDX-License-Identifier: MIT */
/* The commands of xpu-report: the report itself and `archive`. Neither exits. */
#ifndef XPU_REPORT_CMD_H
#define XPU_REPORT_CMD_H

#include "model/opts.h"

/* Runs a report for parsed options; returns the exit status (tests/fuzz/ loop over it). */
int report_run(const struct report_opts *o);
/* `xpu-report [OPTIONS] FILE`: parses the command line, then report_run(); exit status. */
int report__main(int argc, char **argv);
/* `xpu-report archive TRACE [-o FILE] [--debuginfo] [--symfs DIR] [-v]`: exit status. */
int archive__main(int argc, char **argv);

#endif
