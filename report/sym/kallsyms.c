// SPDX-License-Identifier: MIT
/* Kernel symbols from the KSYMS snapshot (see kallsyms.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/containers.h"
#include "sym/kallsyms.h"

struct ksym {
	uint64_t addr;
	const char *name;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

int kallsyms__load(struct kallsyms *k, const char *text, size_t len)
{
	size_t cap = 0, n = 0;
	bool nonzero = false;
	char *p, *end;

	memset(k, 0, sizeof(*k));
	if (!text)
		return 0;
	/* parsed in place, so a copy */
	k->text = malloc(len + 1);
	if (!k->text)
		return -ENOMEM;
	memcpy(k->text, text, len);
	k->text[len] = '\0';
	p = k->text;
	end = p + len;
	while (p < end) {
		char *nl = memchr(p, '\n', end - p), *name, *sp;
		uint64_t addr;
		char type;

		if (!nl)
			nl = end;
		*nl = '\0';
		/* "ffffffff81000000 T _stext\t[module]" */
		addr = strtoull(p, &sp, 16);
		if (sp != p && sp[0] == ' ' && sp[1] && sp[2] == ' ') {
			type = sp[1];
			name = sp + 3;
			name[strcspn(name, "\t ")] = '\0';
			if (strchr("TtWw", type) && *name) {
				struct ksym ks = { addr, name };

				if (VEC_PUSH(k->syms, n, cap, ks))
					return -ENOMEM;
				nonzero |= addr != 0;
			}
		}
		p = nl + 1;
	}
	/* kptr_restrict gives all-zero addresses: useless, treat as absent */
	if (!nonzero)
		n = 0;
	if (n)
		qsort(k->syms, n, sizeof(*k->syms), cmp_ksym);
	k->nsyms = n;
	return 0;
}

const char *kallsyms__find(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nsyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? k->syms[lo - 1].name : NULL;
}

void kallsyms__free(struct kallsyms *k)
{
	free(k->syms);
	free(k->text);
	memset(k, 0, sizeof(*k));
}
