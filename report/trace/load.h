/* SPDX-License-Identifier: MIT */
/*
 * The steps of a load that trace/'s files share: load.c reads a file's records, merge.c reads
 * several files into one trace with them. Not for the layers above: they call trace.h.
 */
#ifndef XPU_REPORT_TRACE_LOAD_H
#define XPU_REPORT_TRACE_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

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

#endif
