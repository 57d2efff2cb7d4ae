/* SPDX-License-Identifier: MIT */
/*
 * The WHEN column of xpu_stats.def: a macro per value that writes nothing. A part of the
 * recorder that writes counters redefines its own WHENs to write one (id, value) and expands
 * the table through XPU_STAT_WRITE, so that it writes its rows, and in the table's order.
 */
#ifndef XPU_STATS_WHEN_H
#define XPU_STATS_WHEN_H

#define XPU_STATS_ALWAYS(id, value)
#define XPU_STATS_DWARF(id, value)
#define XPU_STATS_DWARF_TOP(id, value)
#define XPU_STATS_PY(id, value)
#define XPU_STATS_JIT(id, value)
#define XPU_STATS_CFI(id, value)
#define XPU_STATS_CFI_SHORT(id, value)
#define XPU_STATS_OFF_CPU(id, value)
#define XPU_STATS_AG(id, value)
#define XPU_STATS_INPROC(id, value)
#define XPU_STATS_DRIVER(id, value)
#define XPU_STATS_WRITER(id, value)
#define XPU_STATS_NONE(id, value)

/* As XPU_STAT for #include "xpu_stats.def": each row through its WHEN's macro. */
#define XPU_STAT_WRITE(name, id, info_name, when, value) XPU_STATS_##when(XPU_STAT_##name, value)

#endif
