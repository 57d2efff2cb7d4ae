/* SPDX-License-Identifier: MIT */
/* The traced program: launched behind a start gate, or an existing process to attach to. */
#ifndef XPU_RECORD_TARGET_H
#define XPU_RECORD_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct writer_thread;

struct target {
	pid_t pid;
	int gate_fd;			/* write end of the start pipe, -1 once released */
	int exec_fd;			/* read end of the exec report pipe, -1 when closed */
	char **env_extra;		/* "NAME=value" to set in the child, NULL-terminated */
	/* set before target__launch(): the child becomes this user before exec */
	bool drop_root;
	uid_t uid;
	gid_t gid;
	const char *user;		/* for the supplementary groups; NULL: gid only */
	struct rlimit nofile;		/* its ulimit -n (the recorder's own is raised) */
};

/*
 * Forks the child; it blocks until target__release() so every probe is attached and its pid
 * is traced before the first instruction of the command runs. Signals blocked in the
 * caller are unblocked in the child.
 */
int target__launch(struct target *t, char *const *cmd, char **env_extra);
/* Lets the child exec (go = 1) or makes it exit 127 without running anything (go = 0). */
int target__release(struct target *t, int go);
/*
 * After the child has exited: true if the command never ran (not found, not executable, or
 * the switch to the sudo user failed), so nothing of it was recorded. Closes exec_fd.
 */
bool target__exec_failed(struct target *t);
/* Attach mode: COMM/THREAD records for the threads pid already has. */
int target__describe_threads(pid_t pid, struct writer_thread *wt, uint64_t ts_ns);
/* The command line of pid, NUL-separated, into buf; returns its length. */
size_t target__cmdline(pid_t pid, char *buf, size_t size);

#endif
