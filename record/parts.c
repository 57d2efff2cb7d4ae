// SPDX-License-Identifier: MIT
/*
 * The parts of the recorder, in their order. The only file that names them: a new part is a
 * folder (or a file beside the module it adapts), its row, and its counters in xpu_stats.def.
 */
#include "parts.h"

extern const struct rec_part gpu_lib_part;
extern const struct rec_part bpf_part;
extern const struct rec_part writer_part;
extern const struct rec_part kallsyms_part;
extern const struct rec_part procmaps_part;
extern const struct rec_part drain_part;
extern const struct rec_part walk_share_part;
extern const struct rec_part python_part;
extern const struct rec_part autograd_part;
extern const struct rec_part jit_part;
extern const struct rec_part cfi_part;
extern const struct rec_part driver_part;
extern const struct rec_part cupti_rx_part;
extern const struct rec_part symbol_pack_part;
extern const struct rec_part off_cpu_part;

/*
 * Why this order (part.h says which verbs walk it in reverse; every setup runs before the
 * command is forked, so the CUPTI receiver exists, and the command's environment with it,
 * before the fork; start, after the drain thread starts, before the command leaves its gate):
 * - gpu_lib first: BPF uprobes the library, the walk share is wanted only with it, the
 *   receiver injects it. Freed last.
 * - bpf next: the later parts' setup find its maps in c->bpf (the Python layouts, the unwind
 *   tables, the traced tgids the driver tracer shares). Its attach, after the fork, is the
 *   probes'; the unwind tables the cfi part prepares at its setup are built while they attach.
 *   Its quiesce, in reverse, comes after every later part's: the receiver's clients stop while
 *   their launches are still sampled, then sampling stops. Its stop, in reverse, comes after
 *   the drain's: the counters of the whole recording, their last losses written, before any
 *   part collects. Destroyed after every part that holds its maps.
 * - writer: the first part whose setup starts a thread (the signals are blocked before it, and
 *   every thread inherits the mask), and every later part writes through it. Its first records
 *   (SESSION, a CLOCK_SYNC) are the trace's first; its tick comes before BPF's (reverse), so a
 *   write that fails stops sampling in the same turn; its collect, in reverse after every later
 *   part's, writes SESSION_END after their last records; its summary, in reverse after every
 *   later part's, says the last lines with their counts.
 * - kallsyms: among the first records, before the drain thread starts; before procmaps, so the
 *   kernel's symbols come before an attached process's threads and mappings.
 * - procmaps: the drain drives it, and the cfi and symbol_pack parts hear of its files; its
 *   kernel mmap events are opened before the command runs.
 * - rb_drain after every part with first records (from its start on, the drain writes too) and
 *   before every part with a start: those route events to it (driver) and feed it (cupti_rx)
 *   between start and stop, so their stop, in reverse, comes before the drain's.
 * - walk_share before the handlers: the frame readers and the unwind-table builder fill it from
 *   their setup on (the vdso's table is queued as the builder starts) and the receiver hands
 *   it out; freed after the builder's workers and the receiver, its last writer and reader.
 * - python before autograd: the process table calls its handlers in the table's order, and a
 *   launch's Python frames must be joined before autograd keeps its stack for the nodes of
 *   the same op. jit and cfi then: they only read the processes' files.
 * - cfi last of the handlers: its start holds a launched command for its first tables, and
 *   (before cupti_rx's start) CUPTI's start in an attached process for the tables of the files
 *   it maps.
 * - driver before cupti_rx: the tracer is routed to the drain and attached before the receiver
 *   starts CUPTI in attached processes (-p), so the ioctls of CUPTI's start are traced. The
 *   receiver's stop, first in reverse, comes before the drain's: its last launches walked in
 *   process go to the drain's queue.
 * - symbol_pack late: it reads the trace once it is committed; its copies were taken by the
 *   mapping reader through the whole recording, and at its collect.
 * - off_cpu last, so first to collect: the blocks left open are written (as LOST) as soon as
 *   the drain is gone, before the others' last records.
 */
const struct rec_part *const rec_parts[] = {
	&gpu_lib_part,
	&bpf_part,
	&writer_part,
	&kallsyms_part,
	&procmaps_part,
	&drain_part,
	&walk_share_part,
	&python_part,
	&autograd_part,
	&jit_part,
	&cfi_part,
	&driver_part,
	&cupti_rx_part,
	&symbol_pack_part,
	&off_cpu_part,
};

const size_t rec_parts_nr = sizeof(rec_parts) / sizeof(rec_parts[0]);

_Static_assert(sizeof(rec_parts) / sizeof(rec_parts[0]) <= REC_PARTS_MAX,
	       "the recording keeps room for every part");
