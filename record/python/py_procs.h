/* SPDX-License-Identifier: MIT */
/*
 * Python processes of the traced tree, a handler of the process table: tells the BPF walk
 * where each interpreter keeps its frames (py_procs map), writes PY_RUNTIME records, turns the
 * code object addresses the walk sends into PY_CODE records (names and line tables read from
 * the live process) and joins each frame list to the sample or launch it was taken for.
 */
#ifndef XPU_RECORD_PY_PROCS_H
#define XPU_RECORD_PY_PROCS_H

#include <stdbool.h>
#include <stdint.h>

struct map_handler;
struct py_procs;
struct walk_share;
struct writer_thread;

struct py_procs_stats {
	uint64_t runtimes;		/* interpreters found */
	uint64_t stacks;		/* frame lists joined to their event */
	uint64_t frames;
	uint64_t unjoined;		/* frame lists whose event never came (also a LOST record) */
	uint64_t codes;			/* PY_CODE records */
	uint64_t code_errors;		/* code objects that could not be read */
};

/* layout_map_fd: the BPF py_procs map. enabled false (--no-python): runtimes are only noted. */
struct py_procs *py_procs__new(struct writer_thread *wt, int layout_map_fd, bool enabled);
/* After the process table that it was added to. */
void py_procs__free(struct py_procs *pp);
/*
 * The process table's handler: files are probed for a CPython runtime (py_layout__probe),
 * processes that map one are registered, XPU_EV_PYSTACK events are kept until the sample or
 * launch they were sent for, which they are joined to.
 */
struct map_handler *py_procs__handler(struct py_procs *pp);
/*
 * Each layout written to py_procs is written to ws too (record/inproc_share.h), which forgets
 * a process's at its exec or exit. Before the table's first call.
 */
void py_procs__set_walk_share(struct py_procs *pp, struct walk_share *ws);
void py_procs__get_stats(const struct py_procs *pp, struct py_procs_stats *st);

#endif
