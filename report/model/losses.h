/* SPDX-License-Identifier: MIT */
/*
 * The trace's LOST records summed per source, for the text header and `info`. A process that
 * exits before the recorder reads its mappings is an ordinary event for short-lived processes
 * (a shell's, a pyenv shim's): it is a loss only when the process has samples, whose stacks
 * then cannot be named, so the two are counted apart.
 */
#ifndef XPU_REPORT_MODEL_LOSSES_H
#define XPU_REPORT_MODEL_LOSSES_H

#include <stdint.h>

#include "trace/trace.h"

#define LOSS_SOURCES XPU_LOST_SOURCES	/* common/xpu_lost.def's; others count as 0, "other" */

struct losses {
	uint64_t count[LOSS_SOURCES];	/* events lost, per source */
	uint64_t records[LOSS_SOURCES];	/* LOST records, per source */
	/* XPU_LOST_MAPPINGS of processes without a sample: not in count[], nothing was lost */
	uint64_t exited_unseen;
};

void losses__sum(const struct trace *t, struct losses *l);
/* "ringbuf", "mappings", ...; "other" for an unknown source. */
const char *losses__name(uint32_t source);

#endif
