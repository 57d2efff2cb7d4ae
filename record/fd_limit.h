/* SPDX-License-Identifier: MIT */
/*
 * The recorder's file descriptors: what share of the limit (ulimit -n) a module may hold, and
 * running out said once, whoever runs out (a descriptor not had is otherwise a missing file,
 * a failed table or a process "gone", each blamed on something else). Any thread.
 */
#ifndef XPU_RECORD_FD_LIMIT_H
#define XPU_RECORD_FD_LIMIT_H

#include <stdint.h>

/* The soft limit divided by div, at most max, at least 1. */
unsigned int fd_limit__share(unsigned int div, unsigned int max);
/* err (EMFILE, ENFILE) opening what: the first time, one line saying so; always counted. */
void fd_limit__said(int err, const char *what);
/* How many times descriptors ran out. */
uint64_t fd_limit__count(void);

#endif
