/* SPDX-License-Identifier: MIT */
/*
 * Trace archives (TRACE.xpa, format-spec/ARCHIVE.md): the ELF files a trace's stacks touch,
 * keyed by build-id and zstd-compressed, so a trace symbolizes and unwinds on a machine that
 * lacks the recording host's binaries.
 */
#ifndef XPU_REPORT_ARCHIVE_H
#define XPU_REPORT_ARCHIVE_H

#include <stdint.h>

struct xpa;

/* Opens TRACE.xpa next to trace_path if it exists (*out NULL otherwise). 0 or -ENOMEM. */
int xpa__open_for_trace(struct xpa **out, const char *trace_path);
/* A memfd holding the file with this build-id, or a negative errno (-ENOENT: not there). */
int xpa__extract(struct xpa *a, const uint8_t *build_id, unsigned int len);
void xpa__close(struct xpa *a);

/* `xpu-report archive TRACE [-o FILE] [--debuginfo] [--symfs DIR] [-v]` */
int archive__main(int argc, char **argv);

#endif
