/* SPDX-License-Identifier: MIT */
/*
 * The recorder's side of the in-process launch walk (common/walk_share.h): the unwind tables
 * and each process's cfi_procs, py_procs and ag_tls values, mirrored into memfds that
 * record/cupti_rx.c passes, read-only, to each process's libxpu-cupti.so. The writers are the
 * very places that write those BPF maps, so BPF and the library see the same values. Thread
 * safe (the cfi workers, the drain and the CUPTI receiver all call it).
 */
#ifndef XPU_RECORD_INPROC_SHARE_H
#define XPU_RECORD_INPROC_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "walk_share.h"

struct walk_share;

struct walk_share_stats {
	uint64_t arena_bytes;		/* table slots written to the arena */
	uint64_t tables;		/* tables in the arena */
	uint64_t tables_over;		/* tables left to BPF only: the arena was full */
	uint64_t procs;			/* processes whose share was created for their library */
	uint64_t errors;		/* memfds or descriptors that could not be made */
};

/*
 * table_bytes: the most table slots the arena will hold (the cfi loader's bound). Creates
 * the arena, sparse. NULL and errno on failure.
 */
struct walk_share *walk_share__new(uint64_t table_bytes);
void walk_share__free(struct walk_share *ws);

/*
 * Table `table` (cfi_tables' index) is loaded with nslots slots, the bytes of its inner map:
 * copied to the arena and marked ready. Each index once; a table over the arena's room stays
 * BPF's only (counted).
 */
void walk_share__table(struct walk_share *ws, uint32_t table, const struct xpu_cfi_row *slots,
		       size_t nslots);

/* pid's latest cfi_procs value; NULL: the key was deleted. Only v->nr maps are read. */
void walk_share__proc_cfi(struct walk_share *ws, uint32_t pid, const struct xpu_cfi_proc *v);
/* pid's py_procs value; NULL: none. */
void walk_share__proc_py(struct walk_share *ws, uint32_t pid, const struct xpu_py_layout *l);
/* pid's ag_tls value; NULL: none. */
void walk_share__proc_ag(struct walk_share *ws, uint32_t pid, const struct xpu_ag_tls *ag);

/*
 * pid's image ended. exec: its values are cleared (the new image's follow), and its share
 * stays for the new image's library, which may have checked in already; exit: all freed.
 */
void walk_share__forget(struct walk_share *ws, uint32_t pid, bool exec);

/*
 * For pid's library: read-only descriptors of the arena and of pid's share (created now,
 * with its current values), and the sizes to map. The caller sends and closes them.
 * 0 or negative errno.
 */
int walk_share__fds(struct walk_share *ws, uint32_t pid, int *arena_fd, uint64_t *arena_bytes,
		    int *proc_fd, uint64_t *proc_bytes);

void walk_share__get_stats(struct walk_share *ws, struct walk_share_stats *st);

#endif
