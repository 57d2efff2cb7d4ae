/* SPDX-License-Identifier: MIT */
/* The timeline (out_chrome.c) and flame graph (out_svg.c) outputs. */
#ifndef XPU_REPORT_PICTURES_H
#define XPU_REPORT_PICTURES_H

#include "profile.h"

/* Trace Event JSON for Perfetto UI and chrome://tracing; reads the trace, not the profile. */
int out_chrome(struct profile *p, FILE *out);
/* One self-contained interactive SVG flame graph of the folded view. */
int out_svg(struct profile *p, FILE *out);

#endif
