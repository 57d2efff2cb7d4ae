// SPDX-License-Identifier: MIT
/* Kernel symbols from the KSYMS snapshot (see kallsyms.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/containers.h"
#include "base/sort.h"
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

/*
 * One line of the snapshot, "ffffffff81000000 T _stext\t[module]", read in place: whether it
 * is a text symbol, and its address and name (len bytes at *name, not NUL-terminated).
 */
static bool parse_line(const char *p, const char *nl, uint64_t *addr, const char **name,
		       size_t *len)
{
	const char *q = p, *n;
	uint64_t a = 0;
	int digits = 0;

	for (; q < nl && digits < 16; q++, digits++) {
		int v = *q >= '0' && *q <= '9' ? *q - '0' : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 :
			*q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;

		if (v < 0)
			break;
		a = a << 4 | (uint64_t)v;
	}
	if (!digits || nl - q < 4 || q[0] != ' ' || q[2] != ' ' || !strchr("TtWw", q[1]) || !q[1])
		return false;
	n = q + 3;
	for (q = n; q < nl && *q != '\t' && *q != ' '; q++)
		;
	if (q == n)
		return false;
	*addr = a;
	*name = n;
	*len = (size_t)(q - n);
	return true;
}

/*
 * Two passes over the trace's text, which is not copied: the first counts the text symbols
 * and their names' bytes, the second fills an array and a names arena of exactly that size
 * (a snapshot of 1 GiB of short lines cost a copy of itself and a doubling vector before).
 */
int kallsyms__load(struct kallsyms *k, const char *text, size_t len)
{
	const char *end, *p, *name;
	size_t n = 0, bytes = 0, i = 0, at = 0, nlen;
	bool nonzero = false;
	uint64_t addr;
	int pass;

	memset(k, 0, sizeof(*k));
	if (!text)
		return 0;
	end = text + len;
	for (pass = 0; pass < 2; pass++) {
		for (p = text; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));

			if (!nl)
				nl = end;
			if (parse_line(p, nl, &addr, &name, &nlen)) {
				if (!pass) {
					n++;
					bytes += nlen + 1;
				} else {
					memcpy(k->text + at, name, nlen);
					k->text[at + nlen] = '\0';
					k->syms[i++] = (struct ksym){ addr, k->text + at };
					at += nlen + 1;
				}
				nonzero |= addr != 0;
			}
			p = nl + 1;
		}
		/* kptr_restrict gives all-zero addresses: useless, treat as absent */
		if (!n || !nonzero)
			return 0;
		if (!pass) {
			k->syms = malloc(n * sizeof(*k->syms));
			k->text = malloc(bytes);
			if (!k->syms || !k->text) {
				kallsyms__free(k);
				return -ENOMEM;
			}
		}
	}
	qsort(k->syms, n, sizeof(*k->syms), cmp_ksym);
	k->nsyms = n;
	return 0;
}

struct ksym_key {
	const struct ksym *syms;
	uint64_t addr;
};

static bool ksym_at_most(size_t i, const void *arg)
{
	const struct ksym_key *k = arg;

	return k->syms[i].addr <= k->addr;
}

const char *kallsyms__find(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = upper_bound(k->nsyms, ksym_at_most, &(struct ksym_key){ k->syms, addr });

	return lo ? k->syms[lo - 1].name : NULL;
}

void kallsyms__free(struct kallsyms *k)
{
	free(k->syms);
	free(k->text);
	memset(k, 0, sizeof(*k));
}
