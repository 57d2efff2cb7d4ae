/* SPDX-License-Identifier: MIT */
/*
 * JIT symbols: remembers every process the recording saw and the jitdump files they mapped,
 * and at the end of the recording reads /tmp/perf-PID.map and those jitdumps into JIT_SYMBOL
 * records, so a report on another machine names JIT code (Python 3.12's perf trampolines,
 * Node, JVM agents). Fed by procmaps (drain thread) while recording; collected once the drain
 * thread has stopped, so one thread at a time owns it.
 */
#ifndef XPU_RECORD_JIT_MAPS_H
#define XPU_RECORD_JIT_MAPS_H

#include <stdint.h>
#include <sys/types.h>

struct jit_maps;
struct writer_thread;

struct jit_maps_stats {
	uint64_t symbols;		/* JIT_SYMBOL records written */
	uint64_t skipped;		/* entries malformed or over the per-process cap */
	uint64_t files;			/* perf maps and jitdumps read */
};

struct jit_maps *jit_maps__new(struct writer_thread *wt);
void jit_maps__free(struct jit_maps *jm);

/* A traced process was scanned: its perf map is read at the end. */
void jit_maps__note_pid(struct jit_maps *jm, pid_t pid);
/*
 * A new executable mapping of pid (range "start-end" as in /proc/PID/maps, the file's inode):
 * a jitdump of that pid (named jit-PID.dump) is opened now, through map_files, and read at
 * the end.
 */
void jit_maps__note_mapping(struct jit_maps *jm, pid_t pid, const char *range, const char *path,
			    uint64_t ino);

/* Reads every file noted and writes their symbols. Call once, before the writer finishes. */
void jit_maps__collect(struct jit_maps *jm, struct jit_maps_stats *st);

#endif
