/* SPDX-License-Identifier: MIT */
/* Kernel function symbols from the trace's KSYMS snapshot (/proc/kallsyms text). */
#ifndef XPU_REPORT_SYM_KALLSYMS_H
#define XPU_REPORT_SYM_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksym;

struct kallsyms {
	struct ksym *syms;		/* text symbols, by address */
	size_t nsyms;
	char *text;			/* the text symbols' names, each NUL-terminated */
};

/*
 * Parses len bytes of kallsyms text (copied; the caller's stays untouched). A snapshot taken
 * under kptr_restrict (all addresses 0) gives no symbols. 0 or -ENOMEM.
 */
int kallsyms__load(struct kallsyms *k, const char *text, size_t len);
/* The function holding addr, or NULL (below every symbol, or no symbols). */
const char *kallsyms__find(const struct kallsyms *k, uint64_t addr);
void kallsyms__free(struct kallsyms *k);

#endif
