/* SPDX-License-Identifier: MIT */
/*
 * Which NAMES entry of a symbol pack holds a DSO record's file (format-spec/ARCHIVE.md 2.4,
 * 2.6): the one keyed by its build-id when the trace recorded one; else the one keyed by what
 * the trace recorded of the file, its size, mtime and path, since a file linked without a
 * build-id (-Wl,--build-id=none: XLA's libraries, OpenBLAS, ptxas) has nothing else to be
 * known by. The writer (cmd/archive.c) and the reader (sym/dso.c) both take the key from
 * here, so the two cannot drift apart.
 */
#ifndef XPU_REPORT_SYM_XPA_KEY_H
#define XPU_REPORT_SYM_XPA_KEY_H

#include <stdbool.h>
#include <stdint.h>

#include "sym/xpa.h"
#include "trace/trace.h"

/*
 * The key of DSO record d's file. False when no pack entry can stand for it: not an ELF file,
 * or no build-id and nothing recorded to tell this file from another at the same path (no
 * size: the recorder could not stat it; no path; a path over XPA_KEY_PATH_MAX).
 */
bool xpa_key__of(const struct tr_dso *d, struct xpa_file_key *k);

#endif
