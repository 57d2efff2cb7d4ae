/* SPDX-License-Identifier: MIT */
/*
 * Python processes of the traced tree: tells the BPF walk where each interpreter keeps its
 * frames (py_procs map), writes PY_RUNTIME records, turns the code object addresses the walk
 * sends into PY_CODE records (names and line tables read from the live process) and joins each
 * frame list to the sample or launch it was taken for. Owned by the drain thread.
 */
#ifndef XPU_RECORD_PY_PROCS_H
#define XPU_RECORD_PY_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "py_layout.h"
#include "writer_thread.h"

struct py_procs;

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
void py_procs__free(struct py_procs *pp);

/* A new executable mapping of a file that holds a CPython runtime (py_layout__probe). */
void py_procs__mapping(struct py_procs *pp, pid_t pid, uint32_t dso_id,
		       const struct py_elf_info *info, uint64_t start, uint64_t pgoff,
		       uint64_t ts_ns);
/* pid exec'd or exited: its interpreter, if any, is gone. */
void py_procs__forget(struct py_procs *pp, pid_t pid);

/* An XPU_EV_PYSTACK event of size bytes: kept until its sample or launch arrives. */
void py_procs__frames(struct py_procs *pp, const void *ev, size_t size);
/*
 * The sample or launch of tid at ts_ns: when frames were sent for it, r gets them (the writer
 * stores the PY_STACK id at py_off of the body).
 */
void py_procs__attach(struct py_procs *pp, uint32_t tid, uint64_t ts_ns, struct wt_rec *r,
		      uint32_t py_off);
void py_procs__get_stats(const struct py_procs *pp, struct py_procs_stats *st);

#endif
