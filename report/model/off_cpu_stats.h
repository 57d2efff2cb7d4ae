/* SPDX-License-Identifier: MIT */
/*
 * What a --off-cpu trace says about blocked time, filtered as every output is: blocks and time
 * per state, blocks without a stack, the recording's minimum and its counts of what it did
 * not record. For the text header and `info`.
 */
#ifndef XPU_REPORT_MODEL_OFF_CPU_STATS_H
#define XPU_REPORT_MODEL_OFF_CPU_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "model/session.h"

#define OFF_CPU_STATES 5	/* enum xpu_off_cpu_state; 0 and unknown values count as other */

struct off_cpu_stats {
	uint64_t blocks, ns, no_stack;
	uint64_t state_blocks[OFF_CPU_STATES], state_ns[OFF_CPU_STATES];
	uint64_t min_ns;		/* STATS: the recording's minimum, 0 if not said */
	uint64_t short_blocks, open;	/* STATS: under the minimum; still blocked at the end */
};

void off_cpu_stats__sum(const struct session *s, struct off_cpu_stats *st);
/* "# off-cpu:" lines of the text header. */
void off_cpu_stats__header(const struct session *s, FILE *out);
/* The "off-cpu" section of `info`. */
void off_cpu_stats__info(const struct session *s, FILE *out);

#endif
