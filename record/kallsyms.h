/* SPDX-License-Identifier: MIT */
#ifndef XPU_RECORD_KALLSYMS_H
#define XPU_RECORD_KALLSYMS_H

struct writer_thread;

/* Queues /proc/kallsyms as KSYMS chunks. Returns the number of chunks or negative errno. */
int kallsyms__snapshot(struct writer_thread *wt);

#endif
