// SPDX-License-Identifier: MIT
/*
 * The trace file, created as safely as a root process writing into a user's (or a sticky /tmp)
 * directory must: nothing is ever written through a symlink or hard link planted at the path,
 * and the file holds command lines, paths and addresses, so it is 0600 and the sudo user's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

/* Unlinks a regular file at path (refusing anything else) so O_EXCL can create it anew. */
static int clear_path(const char *path, const char *shown)
{
	struct stat sb;

	if (lstat(path, &sb))
		return 0;
	if (!S_ISREG(sb.st_mode)) {
		log_err("cannot write %s: it exists and is not a regular file", shown);
		return -1;
	}
	if (unlink(path) && errno != ENOENT) {
		log_err("cannot replace %s: %s", shown, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_stdout(struct output *o)
{
	int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);

	if (fd < 0) {
		log_err("cannot write the trace to standard output: %s", strerror(errno));
		return -1;
	}
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		log_err("cannot move standard output aside: %s", strerror(errno));
		close(fd);
		return -1;
	}
	o->to_stdout = true;
	o->shown = "standard output";
	return fd;
}

int output__open(struct output *o, const struct record_config *cfg)
{
	struct stat sb;
	int fd;

	o->path = cfg->output;
	o->shown = cfg->output;
	if (!strcmp(cfg->output, "-"))
		return open_stdout(o);
	/* FILE itself is replaced only by the final rename, which never follows a link. */
	if (!lstat(cfg->output, &sb) && !S_ISREG(sb.st_mode)) {
		log_err("cannot write %s: it exists and is not a regular file", cfg->output);
		return -1;
	}
	if (asprintf(&o->partial, "%s" OUTPUT_PARTIAL_SUFFIX, cfg->output) < 0) {
		o->partial = NULL;
		log_err("cannot create %s" OUTPUT_PARTIAL_SUFFIX ": %s", cfg->output,
			strerror(ENOMEM));
		return -1;
	}
	if (!lstat(o->partial, &sb) && S_ISREG(sb.st_mode))
		log_err("replacing %s, left by a recording that did not finish", o->partial);
	if (clear_path(o->partial, o->partial))
		return -1;
	fd = open(o->partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_err("cannot create %s: %s", o->partial, strerror(errno));
		return -1;
	}
	if (cfg->sudo && fchown(fd, cfg->user_uid, cfg->user_gid))
		log_info("cannot give %s to uid %u: %s", o->partial, (unsigned int)cfg->user_uid,
			 strerror(errno));
	return fd;
}

int output__commit(struct output *o)
{
	if (!o->partial)
		return 0;
	if (rename(o->partial, o->path)) {
		log_err("cannot rename %s to %s: %s; the trace is in %s", o->partial, o->path,
			strerror(errno), o->partial);
		return -1;
	}
	free(o->partial);
	o->partial = NULL;
	return 0;
}

void output__discard(struct output *o)
{
	if (o->partial)
		unlink(o->partial);
	free(o->partial);
	o->partial = NULL;
}

void output__free(struct output *o)
{
	free(o->partial);
	o->partial = NULL;
}
