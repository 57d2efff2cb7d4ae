/* SPDX-License-Identifier: MIT */
/*
 * The report's output formats as one table: each format's name on the command line and what
 * it is drawn from, the session itself (info, chrome, jsonl: every event) or the profile
 * aggregated from it (text, folded, svg, pprof), and what `xpu-report diff` writes in it, if
 * anything (text, folded, svg). A new format is a writer and a row.
 */
#ifndef XPU_REPORT_CMD_FORMATS_H
#define XPU_REPORT_CMD_FORMATS_H

#include <stdbool.h>
#include <stdio.h>

#include "model/naming.h"
#include "model/profile.h"
#include "model/session.h"

struct report_format_def {
	const char *name;			/* -F NAME */
	enum report_format format;
	int (*from_session)(const struct session *ses, FILE *out);
	int (*from_profile)(const struct profile *p, FILE *out);
	/* xpu-report diff's writer, side[0] the base (NULL: diff does not write this format) */
	int (*diff)(const struct profile *const side[2], FILE *out);
	bool needs_selection;		/* nothing selected is said and is an error */
	bool header_when_empty;		/* an empty profile still prints what the trace holds */
	const char *(*unavailable)(void);	/* why this build lacks it, or NULL */
	unsigned int names;		/* the stacks it prints (model/naming.h), named before it */
	/*
	 * A machine format that escapes trace strings its own way (JSON, XML, protobuf) and
	 * keeps their bytes; the others are text, read on a terminal: written through the
	 * terminal escaper (base/term_safe.h), folded included (a line format for tools, whose
	 * lines a control character would break or a terminal would act on).
	 */
	bool keeps_bytes;
};

/* The format named name (NULL: unknown). */
const struct report_format_def *report_format__by_name(const char *name);
/* The format f's row (never NULL for a value of the enum). */
const struct report_format_def *report_format__of(enum report_format f);
/* "text, folded, ... or pprof", for the message about an unknown format. */
const char *report_format__names(void);
/* The formats diff writes (writes) or not (!writes), listed the same way. */
const char *report_format__diff_names(bool writes);

#endif
