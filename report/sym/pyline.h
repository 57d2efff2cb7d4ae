/* SPDX-License-Identifier: MIT */
/* Line numbers of Python instructions from a code object's line table (PY_CODE records). */
#ifndef XPU_REPORT_SYM_PYLINE_H
#define XPU_REPORT_SYM_PYLINE_H

#include <stdint.h>

/*
 * The source line of the instruction at code-unit index instr (byte offset 2 * instr) in a
 * line table of the given kind (enum xpu_py_linetable), or -1 when the table gives none or is
 * malformed.
 */
int pyline__line(uint16_t kind, const uint8_t *table, uint32_t len, int32_t firstlineno,
		 uint32_t instr);

#endif
