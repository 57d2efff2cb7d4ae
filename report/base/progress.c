// SPDX-License-Identifier: MIT
/* Progress on a terminal (see progress.h). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/term_safe.h"

#define PROGRESS_EVERY_S 0.25

static struct {
	bool on, shown;
	double t0, last, after;
	uint32_t calls;
} pg;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress__init(bool enable)
{
	const char *after = getenv("XPU_REPORT_PROGRESS_AFTER_S");	/* for tests */

	pg.on = enable && isatty(STDERR_FILENO);
	pg.shown = false;
	pg.calls = 0;
	pg.after = after && *after ? atof(after) : PROGRESS_AFTER_S;
	pg.t0 = now_s();
	pg.last = pg.t0 - PROGRESS_EVERY_S;
}

void progress__update(const char *what, uint64_t done, uint64_t total)
{
	double t;

	/* the clock is read every 1024th call: callers may call per record */
	if (!pg.on || (++pg.calls & 1023))
		return;
	t = now_s();
	if (t - pg.t0 < pg.after || t - pg.last < PROGRESS_EVERY_S)
		return;
	pg.last = t;
	pg.shown = true;
	if (total)
		fprintf(term_safe__raw_stderr(), "\rxpu-report: %s %3.0f%% (%.0f s)\033[K", what,
			100.0 * (done < total ? done : total) / total, t - pg.t0);
	else
		fprintf(term_safe__raw_stderr(), "\rxpu-report: %s (%.0f s)\033[K", what, t - pg.t0);
}

void progress__end(void)
{
	if (pg.shown)
		fputs("\r\033[K", term_safe__raw_stderr());
	pg.shown = false;
}
