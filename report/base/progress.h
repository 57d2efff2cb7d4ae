/* SPDX-License-Identifier: MIT */
/*
 * Progress on stderr for long reports: "xpu-report: loading 45%" rewritten in place, only when
 * stderr is a terminal and only once the report has run PROGRESS_AFTER_S seconds, so short
 * reports, pipes and logs never see it (XPU_REPORT_PROGRESS_AFTER_S overrides the delay, for
 * tests). One report at a time (process-wide state).
 */
#ifndef XPU_REPORT_BASE_PROGRESS_H
#define XPU_REPORT_BASE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_AFTER_S 2.0

/* Starts the clock; enable false (or stderr not a terminal) keeps everything silent. */
void progress__init(bool enable);
/* Phase what is done of total (any unit); cheap enough to call per record. */
void progress__update(const char *what, uint64_t done, uint64_t total);
/* Erases the progress line, if one was shown (before other stderr output); the clock runs on. */
void progress__end(void);

#endif
