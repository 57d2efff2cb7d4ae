/* SPDX-License-Identifier: MIT */
/*
 * The live traced process tree: which processes of the traced tree still run, and how each
 * exited. The ring-buffer drain thread changes it in event order; the session reads it and
 * signals it from the main thread.
 */
#ifndef XPU_RECORD_PROC_TREE_H
#define XPU_RECORD_PROC_TREE_H

#include <stddef.h>
#include <sys/types.h>

struct proc_tree;

/* seed (the launched child or the attached pid) counts as live until it exits. NULL: ENOMEM. */
struct proc_tree *proc_tree__new(pid_t seed);
void proc_tree__free(struct proc_tree *t);
/* A new process of the tree (a fork event); a reused pid counts as live again. */
void proc_tree__add(struct proc_tree *t, pid_t pid);
/* pid exited with wait status (or -1 when unknown). */
void proc_tree__exited(struct proc_tree *t, pid_t pid, int status);
/*
 * Marks as exited the live processes that are gone from /proc or zombies (their exit event
 * was lost to a full ring buffer); stores up to max of their pids in gone. Returns how many.
 */
size_t proc_tree__reap_gone(struct proc_tree *t, pid_t *gone, size_t max);
/* Number of live processes. Thread-safe, lock-free. */
unsigned int proc_tree__live(struct proc_tree *t);
/* Sends sig to every live process (as a terminal's ^C reaches a whole process group). */
void proc_tree__signal(struct proc_tree *t, int sig);
/* Wait status of pid's exit, if one was seen: 0 when found, else -ENOENT. Thread-safe. */
int proc_tree__exit_status(struct proc_tree *t, pid_t pid, int *status);

#endif
