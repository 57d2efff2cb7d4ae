/* SPDX-License-Identifier: MIT */
/*
 * Names for PLT stubs. A symbol table never names them, so a sample in `PyIter_Next`'s stub
 * would otherwise land on whatever symbol precedes .plt (usually `_init`). Like objdump and
 * perf, each stub is named after the symbol whose GOT slot it jumps through: "PyIter_Next@plt".
 */
#ifndef XPU_REPORT_SYM_PLT_H
#define XPU_REPORT_SYM_PLT_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct plt_sym {
	uint64_t addr, size;	/* ELF virtual address and length of the stub */
	char *name;		/* "sym@plt", malloc'd */
};

/*
 * The stubs of .plt, .plt.sec and .plt.got of an x86-64 ELF file whose GOT slot has a named
 * relocation (.rela.plt or .rela.dyn). *out is malloc'd (free it with plt__free); an empty
 * result for other machines or files without a PLT. The file is untrusted: every section
 * size, offset and index is checked. Returns 0 or -ENOMEM.
 */
int plt__synthesize(Elf *e, struct plt_sym **out, size_t *n);
void plt__free(struct plt_sym *syms, size_t n);

#endif
