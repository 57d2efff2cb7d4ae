/* SPDX-License-Identifier: MIT */
/*
 * The steps of a load that trace/'s files share: load.c reads a file's records and finishes
 * (refs.c counts the references, tasks.c builds the processes), merge.c reads several files
 * into one trace with them. Not for the layers above: they call trace.h.
 */
#ifndef XPU_REPORT_TRACE_LOAD_H
#define XPU_REPORT_TRACE_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* Appends val to t's array field (with its n<field> and <field>_cap): 0 or -ENOMEM. */
#define PUSH(t, field, val) VEC_PUSH((t)->field, (t)->n##field, (t)->field##_cap, (val))

/*
 * Reads the records of path into t (through t->rm, on top of what t holds), at most
 * max_records bytes of them (0: the default for the file's size); the reader, once open, is
 * returned in *rp (trace__free closes it). 0 or negative errno with a message in err.
 */
int load__file(struct trace *t, const char *path, uint64_t max_records,
	       struct trace_reader **rp, char *err, size_t errlen);
/*
 * After every record is in: paths, time order, reference counts, processes and threads.
 * 0 or -ENOMEM with a message in err (naming path).
 */
int load__finish(struct trace *t, const char *path, char *err, size_t errlen);
/*
 * The records of type that t keeps as their structs (in an array of them or of elements that
 * hold one): their count, the first one's struct in *recs and the step to the next in *stride.
 * 0 for a type kept otherwise, or not at all.
 */
size_t load__kept(const struct trace *t, uint16_t type, const uint8_t **recs, size_t *stride);

/* Of load__finish, in refs.c: counts the references to ids that no record defines. */
void load__count_bad_refs(struct trace *t);
/* Of load__finish, in tasks.c: the processes and threads, each one's PROCESS_ENV; 0 or -ENOMEM. */
int load__tasks(struct trace *t);

#endif
