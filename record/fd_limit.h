/* SPDX-License-Identifier: MIT */
/*
 * The recorder's file descriptors: what share of the limit (ulimit -n) a module may hold, and
 * running out said once, whoever runs out (a descriptor not had is otherwise a missing file,
 * a failed table or a process "gone", each blamed on something else). Any thread.
 */
#ifndef XPU_RECORD_FD_LIMIT_H
#define XPU_RECORD_FD_LIMIT_H

#include <stdint.h>
#include <sys/resource.h>

/*
 * Raises the soft limit to the hard one for the recorder and its symbol pack (a descriptor a
 * file of the target's, 1,000 libraries ran `ulimit -n 1024` out); *was gets the limit as it
 * was, which the launched command gets back before exec (fd_limit__restore): a profiler must
 * not change what it measures (select() breaks past 1024).
 */
void fd_limit__raise(struct rlimit *was);
/* In a child before exec: the limit as fd_limit__raise found it. System calls only. */
void fd_limit__restore(const struct rlimit *was);
/* The soft limit divided by div, at most max, at least 1. */
unsigned int fd_limit__share(unsigned int div, unsigned int max);
/* err (EMFILE, ENFILE) opening what: the first time, one line saying so; always counted. */
void fd_limit__said(int err, const char *what);
/* How many times descriptors ran out. */
uint64_t fd_limit__count(void);

#endif
