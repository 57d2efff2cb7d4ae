// SPDX-License-Identifier: MIT
/* Files by build-id from debuginfod servers (see debuginfod_fetch.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/term_safe.h"
#include "sym/debuginfod_fetch.h"

/* libdebuginfod's interface (elfutils/debuginfod.h), declared here: no build dependency */
typedef struct debuginfod_client debuginfod_client;
typedef int (*debuginfod_progressfn_t)(debuginfod_client *c, long a, long b);

static struct {
	pthread_mutex_t lock;
	bool tried;			/* the library and the client were set up (or not) */
	void *lib;
	debuginfod_client *client;
	debuginfod_client *(*begin)(void);
	int (*find_executable)(debuginfod_client *, const unsigned char *, int, char **);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	struct debuginfod_stats st;
	bool progress_shown;
} dbgd = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* On a terminal: one line that the next transfer (or the report) overwrites. */
static int show_progress(debuginfod_client *c, long done, long total)
{
	(void)c;
	if (total > 0)
		fprintf(term_safe__raw_stderr(), "\rdebuginfod: %ld of %ld KiB ", done >> 10, total >> 10);
	else
		fprintf(term_safe__raw_stderr(), "\rdebuginfod: %ld KiB ", done >> 10);
	dbgd.progress_shown = true;
	return 0;
}

static void set_up(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	dbgd.tried = true;
	if (!urls || !*urls) {
		dbgd.st.unavailable = "DEBUGINFOD_URLS is not set";
		return;
	}
	dbgd.lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!dbgd.lib) {
		dbgd.st.unavailable = "libdebuginfod.so.1 is not installed (elfutils)";
		return;
	}
	*(void **)&dbgd.begin = dlsym(dbgd.lib, "debuginfod_begin");
	*(void **)&dbgd.find_executable = dlsym(dbgd.lib, "debuginfod_find_executable");
	*(void **)&dbgd.find_debuginfo = dlsym(dbgd.lib, "debuginfod_find_debuginfo");
	*(void **)&dbgd.set_progressfn = dlsym(dbgd.lib, "debuginfod_set_progressfn");
	if (!dbgd.begin || !dbgd.find_executable || !dbgd.find_debuginfo ||
	    !(dbgd.client = dbgd.begin())) {
		dbgd.st.unavailable = "libdebuginfod could not start a client";
		return;
	}
	if (dbgd.set_progressfn && isatty(STDERR_FILENO))
		dbgd.set_progressfn(dbgd.client, show_progress);
}

char *debuginfod_fetch(enum debuginfod_kind kind, const uint8_t *build_id, size_t len)
{
	char *path = NULL;
	int fd;

	if (!len || len > 64)
		return NULL;
	pthread_mutex_lock(&dbgd.lock);
	if (!dbgd.tried)
		set_up();
	if (!dbgd.client) {
		pthread_mutex_unlock(&dbgd.lock);
		return NULL;
	}
	dbgd.st.asked++;
	fd = (kind == DEBUGINFOD_EXECUTABLE ? dbgd.find_executable : dbgd.find_debuginfo)(
		dbgd.client, build_id, (int)len, &path);
	if (dbgd.progress_shown) {
		fprintf(term_safe__raw_stderr(), "\r\033[K");
		dbgd.progress_shown = false;
	}
	if (fd >= 0) {
		close(fd);
		dbgd.st.fetched++;
	} else {
		/* -ENOENT: no server has it; anything else: the servers could not be asked */
		if (fd == -ENOENT)
			dbgd.st.missing++;
		else
			dbgd.st.failed++;
		free(path);
		path = NULL;
	}
	pthread_mutex_unlock(&dbgd.lock);
	return path;
}

void debuginfod_fetch__stats(struct debuginfod_stats *st)
{
	pthread_mutex_lock(&dbgd.lock);
	*st = dbgd.st;
	if (!dbgd.tried) {
		const char *urls = getenv("DEBUGINFOD_URLS");

		st->unavailable = urls && *urls ? "no file was missing" : "DEBUGINFOD_URLS is not set";
	}
	pthread_mutex_unlock(&dbgd.lock);
}
