/* SPDX-License-Identifier: MIT */
/*
 * Where the trace goes. A file is written under FILE.partial and renamed to FILE only at the
 * end, so a failed or killed recording never replaces a good trace, and a killed one leaves
 * its data under that documented name. "-" streams it to standard output.
 */
#ifndef XPU_RECORD_OUTPUT_H
#define XPU_RECORD_OUTPUT_H

#include <stdbool.h>

#include "config.h"

#define OUTPUT_PARTIAL_SUFFIX ".partial"

struct output {
	const char *path;		/* as given: FILE, or "-" for standard output */
	const char *shown;		/* for messages: FILE, or "standard output" */
	char *partial;			/* FILE.partial while recording; NULL for "-" */
	bool to_stdout;
};

/*
 * Creates the file to write (FILE.partial: O_EXCL|O_NOFOLLOW, mode 0600, given to the sudo
 * user), or for "-" takes over standard output and points fd 1 at stderr, so nothing else
 * (the command included, which inherits it) writes into the stream. Returns the fd, or -1
 * with one line said.
 */
int output__open(struct output *o, const struct record_config *cfg);
/* The recording is over: FILE.partial becomes FILE (atomically). 0, or -1 with a line said. */
int output__commit(struct output *o);
/* Nothing worth keeping was recorded: FILE.partial is removed, an old FILE stays as it was. */
void output__discard(struct output *o);
void output__free(struct output *o);

#endif
