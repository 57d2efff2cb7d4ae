/* SPDX-License-Identifier: MIT */
/*
 * Unwind tables for -g cfi: turns an ELF file's .eh_frame (or .debug_frame when it has no
 * .eh_frame) into sorted rows of struct xpu_cfi_row that the BPF walk searches. Only the x86-64
 * rules compilers emit in practice are kept; every other rule becomes an UNSUPPORTED row (the
 * walk uses the frame pointer there) and is counted.
 */
#ifndef XPU_RECORD_CFI_BUILD_H
#define XPU_RECORD_CFI_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "xpu_bpf_abi.h"

#define CFI_MAX_LOADS 8

struct cfi_build_stats {
	uint64_t cies, fdes;
	uint64_t fdes_skipped;		/* outside executable segments, or malformed */
	uint64_t bad_insns;		/* opcodes we do not know: the FDE's rest is unsupported */
	uint64_t unsupported_rows;	/* rows the walk cannot evaluate (before merging) */
	uint64_t signal_fdes;
	uint64_t plt_synth;		/* PLT sections without an FDE, given a synthesized rule */
};

/* An executable PT_LOAD: maps file offsets to the virtual addresses rows use. */
struct cfi_load {
	uint64_t offset, vaddr, filesz;
};

struct cfi_table {
	struct xpu_cfi_row *rows;
	size_t nr;
	struct cfi_load loads[CFI_MAX_LOADS];
	int nloads;
	struct cfi_build_stats st;
};

/*
 * Builds t from the ELF file open at fd (not closed). Returns 0, or negative errno: -ENOEXEC
 * for a file that is not an x86-64 ELF, -ENOENT when it has no unwind section. A malformed
 * section yields the rows read before the damage.
 */
int cfi_table__build(int fd, struct cfi_table *t);
void cfi_table__free(struct cfi_table *t);

/* The row that holds at virtual address pc, or NULL when pc is before the first row. */
const struct xpu_cfi_row *cfi_table__find(const struct cfi_table *t, uint64_t pc);

/*
 * The page index the BPF walk searches first (xpu_bpf_abi.h, struct xpu_cfi_map): *npages
 * words from page *page0, in *words (malloc'ed, rounded up to an even count so that they fill
 * whole row slots; free it). Returns 0, or -EINVAL for an empty table, -ENOMEM.
 */
int cfi_table__index(const struct cfi_table *t, uint32_t **words, uint32_t *page0,
		     uint32_t *npages);

/*
 * The bias of a mapping of this file at start with file offset pgoff (address = table pc +
 * bias). Returns 0, or -ENOENT when pgoff is in no executable segment.
 */
int cfi_table__bias(const struct cfi_table *t, uint64_t start, uint64_t pgoff, uint64_t *bias);

#endif
