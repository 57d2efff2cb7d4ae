/* SPDX-License-Identifier: MIT */
/*
 * JIT symbols: remembers every process the recording saw and the jitdump files they mapped,
 * and at the end of the recording reads /tmp/perf-PID.map and those jitdumps into JIT_SYMBOL
 * records, so a report on another machine names JIT code (Python 3.12's perf trampolines,
 * Node, JVM agents). A handler of the process table while recording (drain thread); collected
 * once the drain thread has stopped, so one thread at a time owns it.
 */
#ifndef XPU_RECORD_JIT_MAPS_H
#define XPU_RECORD_JIT_MAPS_H

#include <stdint.h>

struct jit_maps;
struct map_handler;
struct writer_thread;

struct jit_maps_stats {
	uint64_t symbols;		/* JIT_SYMBOL records written */
	uint64_t skipped;		/* entries malformed or over the per-process cap */
	uint64_t files;			/* perf maps and jitdumps read */
};

struct jit_maps *jit_maps__new(struct writer_thread *wt);
/* After the process table that it was added to. */
void jit_maps__free(struct jit_maps *jm);
/*
 * The process table's handler: every process whose mappings were read has its perf map read
 * at the end (through a descriptor held from the first maps read that found it, so a map
 * removed before the end is still read); a jitdump a process maps (named jit-PID.dump) is opened then, through
 * /proc/PID/map_files, and read at the end.
 */
struct map_handler *jit_maps__handler(struct jit_maps *jm);

/*
 * Reads every file noted and writes their symbols. Call once, after the drain thread stopped
 * and before the writer finishes.
 */
void jit_maps__collect(struct jit_maps *jm, struct jit_maps_stats *st);

#endif
