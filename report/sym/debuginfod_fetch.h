/* SPDX-License-Identifier: MIT */
/*
 * Binaries and debug files by build-id from the debuginfod servers named in DEBUGINFOD_URLS, as
 * perf, gdb and eu-stack fetch them: through elfutils' libdebuginfod, loaded at run time, so a
 * report built or run without it simply finds nothing there. Files land in the client's own
 * cache (DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client) and are checked like any other
 * file (file_lookup.c: the build-id must match). DEBUGINFOD_TIMEOUT bounds each transfer
 * (libdebuginfod's default: 90 s); progress goes to stderr when it is a terminal.
 */
#ifndef XPU_REPORT_SYM_DEBUGINFOD_FETCH_H
#define XPU_REPORT_SYM_DEBUGINFOD_FETCH_H

#include <stddef.h>
#include <stdint.h>

enum debuginfod_kind { DEBUGINFOD_EXECUTABLE, DEBUGINFOD_DEBUGINFO };

struct debuginfod_stats {
	uint64_t asked;			/* lookups sent to the servers */
	uint64_t fetched;		/* files the servers had (or the cache held) */
	uint64_t missing;		/* no server had the file */
	uint64_t failed;		/* errors: unreachable, timed out, refused */
	const char *unavailable;	/* why nothing was asked (NULL when servers were used) */
};

/*
 * The path (in the client's cache; the caller frees it) of the file of that kind whose
 * build-id is given, or NULL: DEBUGINFOD_URLS unset or empty, no libdebuginfod, or no server
 * has it (counted).
 */
char *debuginfod_fetch(enum debuginfod_kind kind, const uint8_t *build_id, size_t len);
/* What was asked so far in this process. */
void debuginfod_fetch__stats(struct debuginfod_stats *st);

#endif
