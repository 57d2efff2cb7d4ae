/* SPDX-License-Identifier: MIT */
/*
 * The symbol pack (TRACE.xpa) of a trace just written, made by the xpu-report beside
 * xpu-record: the names and stack walks a report needs on a machine without this host's files.
 */
#ifndef XPU_RECORD_SYMBOL_PACK_H
#define XPU_RECORD_SYMBOL_PACK_H

#include <stdint.h>

#include "config.h"

struct symbol_pack_done {
	char path[4096 + 8];
	uint64_t bytes;
	double seconds;
};

/*
 * Writes trace.xpa (what was written: done, for the closing line); on failure says in a line
 * what to run instead. symfs: the copies of files the host cannot reach by their recorded
 * path (host_copy.h), or NULL. 0 or -1.
 */
int symbol_pack__make(const char *trace, const struct record_config *cfg, const char *symfs,
		      struct symbol_pack_done *done);

#endif
