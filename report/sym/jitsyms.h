/* SPDX-License-Identifier: MIT */
/*
 * Names of JIT code from the trace's JIT_SYMBOL records (perf maps and jitdumps read at record
 * time): per process, ranges sorted by start, looked up by binary search. The symbolizer asks
 * for addresses that no ELF file holds (no mapping, or an anonymous one).
 */
#ifndef XPU_REPORT_SYM_JITSYMS_H
#define XPU_REPORT_SYM_JITSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* Frame names of JIT code are cut to this many bytes. */
#define JITSYMS_NAME_MAX 512

struct jitsyms;

/* Indexes t's JIT symbols (t must outlive it). *out is NULL when the trace has none. */
int jitsyms__build(struct jitsyms **out, struct trace *t);
/*
 * The name of the JIT code of pid holding addr, or NULL. Where recorded ranges overlap, the
 * one recorded last wins (code freed and its memory reused).
 */
const char *jitsyms__find(struct jitsyms *js, uint32_t pid, uint64_t addr);
/* Symbols indexed, and records refused (empty or wrapping range, unknown name). */
void jitsyms__counts(const struct jitsyms *js, uint64_t *symbols, uint64_t *invalid);
void jitsyms__free(struct jitsyms *js);

#endif
