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
 * Why this order (every setup runs before the command is forked; start, after the drain
 * thread starts, before the command leaves its gate):
 * - walk_share first: the frame readers and the unwind-table builder fill it from their setup
 *   on (the vdso's table is queued as the builder starts) and the receiver hands it out; freed
 *   last, after the builder's workers and the receiver, its last writer and reader.
 * - python before autograd: the process table calls its handlers in the table's order, and a
 *   launch's Python frames must be joined before autograd keeps its stack for the nodes of
 *   the same op. jit and cfi then: they only read the processes' files.
 * - cfi last of the handlers: its start holds a launched command for its first tables, and
 *   (before cupti_rx's start) CUPTI's start in an attached process for the tables of the files
 *   it maps.
 * - driver before cupti_rx: the tracer is routed to the drain and attached before the receiver
 *   starts CUPTI in attached processes (-p), so the ioctls of CUPTI's start are traced. The
 *   receiver's stop, first in reverse, comes before the drain's (session.c stops the drain
 *   after every part's stop): its last launches walked in process go to the drain's queue.
 * - kallsyms: among the first records, before the drain thread starts; anywhere in the table.
 * - symbol_pack late: it reads the trace once it is committed; its copies were taken by the
 *   mapping reader through the whole recording, and at its collect.
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
