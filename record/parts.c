// SPDX-License-Identifier: MIT
/*
 * The parts of the recorder, in their order. The only file that names them: a new part is a
 * folder (or a file beside the module it adapts), its row, and its counters in xpu_stats.def.
 */
#include "parts.h"

extern const struct rec_part walk_share_part;
extern const struct rec_part python_part;
extern const struct rec_part autograd_part;
extern const struct rec_part jit_part;
extern const struct rec_part cfi_part;
extern const struct rec_part driver_part;
extern const struct rec_part cupti_rx_part;
extern const struct rec_part kallsyms_part;
extern const struct rec_part symbol_pack_part;
extern const struct rec_part off_cpu_part;

/*
 * Why this order:
 * - walk_share first: the frame readers and the unwind-table builder fill it from their setup
 *   on (the vdso's table is queued as the builder starts) and the receiver hands it out; freed
 *   last, after the builder's workers and the receiver, its last writer and reader.
 * - python before autograd: the process table calls its handlers in this order, and a
 *   launch's Python frames must be joined before autograd keeps its stack for the nodes of the
 *   same op.
 * - jit and cfi after them: they only read the process's files; cfi last of the handlers, so
 *   its start, the wait for the command's first tables, is the last thing before the command
 *   runs that takes time.
 * - driver before cupti_rx: none between them, but both start once the drain runs (the
 *   tracer is routed there before its programs attach; the receiver hands the drain the
 *   launches walked in process), and the receiver, started last, is stopped first, before
 *   the drain it feeds.
 * - cupti_rx before the command is forked: its setup writes the environment that injects the
 *   library (every setup runs before the launch).
 * - kallsyms writes among the first records, before the drain thread starts.
 * - symbol_pack late: it reads the trace once it is committed, and its copies were taken by
 *   the mapping reader through the whole recording.
 * - off_cpu last, so first to collect: the blocks left open are written (as LOST) as soon as
 *   the drain is gone, before the others' last records.
 */
const struct rec_part *const rec_parts[] = {
	&walk_share_part,
	&python_part,
	&autograd_part,
	&jit_part,
	&cfi_part,
	&driver_part,
	&cupti_rx_part,
	&kallsyms_part,
	&symbol_pack_part,
	&off_cpu_part,
};

const size_t rec_parts_nr = sizeof(rec_parts) / sizeof(rec_parts[0]);

_Static_assert(sizeof(rec_parts) / sizeof(rec_parts[0]) <= REC_PARTS_MAX,
	       "the session keeps room for every part");
