/* SPDX-License-Identifier: MIT */
/*
 * Function starts from unwind tables. A stripped binary's static functions have no symbol, but
 * every one has an .eh_frame FDE (one per function, one more per split-off .cold part), and
 * .eh_frame_hdr lists their start addresses, sorted, for the unwinder's binary search. Code no
 * symbol covers is named after the start of its FDE, so all its addresses are one frame.
 */
#ifndef XPU_REPORT_SYM_FDE_H
#define XPU_REPORT_SYM_FDE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fde_table {
	uint64_t *starts;	/* ELF virtual addresses, sorted */
	size_t n;
};

/*
 * Reads .eh_frame_hdr's search table (the usual datarel/sdata4 encoding; other encodings and
 * files without the section give an empty table). The file is untrusted: counts and sizes are
 * checked against the section. Returns 0 or -ENOMEM.
 */
int fde_table__load(struct fde_table *ft, Elf *e);
/* The greatest FDE start <= v; false when there is none. */
bool fde_table__find(const struct fde_table *ft, uint64_t v, uint64_t *start);
void fde_table__free(struct fde_table *ft);

#endif
