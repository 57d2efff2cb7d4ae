/* SPDX-License-Identifier: MIT */
/*
 * Which CPython an ELF file holds and where its structures keep what the Python walk needs.
 * 3.13+ describe themselves (_Py_DebugOffsets at the start of _PyRuntime); 3.10-3.12 come from
 * a table per minor version, checked against the real builds' headers by
 * tests/unit/test_py_layout.sh.
 */
#ifndef XPU_RECORD_PY_LAYOUT_H
#define XPU_RECORD_PY_LAYOUT_H

#include <stdint.h>

#include "xpu_bpf_abi.h"

/* Where the recorder itself reads code objects and strings (process_vm_readv). */
struct py_code_layout {
	uint16_t co_filename, co_name, co_qualname;	/* co_qualname 0: none (3.10) */
	uint16_t co_linetable, co_firstlineno;
	uint16_t linetable_kind;			/* enum xpu_py_linetable */
	uint16_t ascii_data, compact_data;		/* sizeof(PyASCIIObject), (PyCompactUnicodeObject) */
	uint16_t str_length, str_state;			/* PyASCIIObject.length, .state */
	uint16_t bytes_size, bytes_data;		/* PyVarObject.ob_size, PyBytesObject.ob_sval */
};

#define PY_LAYOUT_MAX_LOADS 8

struct py_elf_info {
	uint32_t status;		/* enum xpu_py_status */
	uint32_t version_hex;
	uint64_t runtime_vaddr;		/* _PyRuntime */
	uint64_t eval_vaddr, eval_size;	/* _PyEval_EvalFrameDefault */
	uint64_t cold_vaddr, cold_size;	/* its .cold part, when the symbol table names it */
	struct xpu_py_layout walk;	/* runtime_addr left 0: it is per process */
	struct py_code_layout code;
	/* PT_LOAD segments, to turn a mapping into the file's load bias */
	unsigned int nloads;
	struct {
		uint64_t offset, vaddr, filesz;
	} loads[PY_LAYOUT_MAX_LOADS];
};

/*
 * Whether the ELF file open at fd (named path) holds a CPython runtime. Returns 1 and fills
 * *info (status says whether its frames can be walked), 0 when it holds none, or a negative
 * errno when it cannot be read. Only files whose name contains "python" are looked at.
 */
int py_layout__probe(int fd, const char *path, struct py_elf_info *info);

/* The file's load bias in a mapping at start of file offset pgoff; 0 and -ENOENT if none. */
int py_layout__bias(const struct py_elf_info *info, uint64_t start, uint64_t pgoff,
		    uint64_t *bias);

/* Fills info for a known version (tests and probe); -ENOTSUP for another. */
int py_layout__for_version(uint32_t version_hex, struct py_elf_info *info);

#endif
