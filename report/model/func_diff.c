// SPDX-License-Identifier: MIT
/* Function rows of two sides matched by name (see func_diff.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/func_diff.h"

static uint32_t intern(struct func_diff *d, const char *s)
{
	return strpool__intern(&d->names, s, strlen(s));
}

/* The row of one function-table row, by name; NULL without memory. */
static struct func_diff_row *row_of(struct func_diff *d, const struct func_table *ft,
				    const struct func_row *fr)
{
	const struct strpool *pool = &ft->p->s->pool;
	struct func_diff_row r = { 0 };
	uint32_t *v;
	bool ins;

	r.comm = fr->comm ? intern(d, strpool__str(pool, fr->comm)) : 0;
	r.dso = fr->dso ? intern(d, func_table__dso(ft, fr)) : 0;
	r.sym = fr->sym ? intern(d, strpool__str(pool, fr->sym)) : 0;
	if ((fr->comm && !r.comm) || (fr->dso && !r.dso) || (fr->sym && !r.sym))
		return NULL;
	/* as in the function table: a row per (file, name), its parts as --sort keys them */
	v = kmap__put(&d->idx, (uint64_t)r.comm << 32 | r.dso, r.sym, d->n, &ins);
	if (!v || (ins && VEC_PUSH(d->r, d->n, d->cap, r)))
		return NULL;
	return &d->r[*v];
}

int func_diff__add(struct func_diff *d, enum diff_side side, const struct profile *p)
{
	struct func_table ft;
	size_t i;
	int err;

	err = func_table__build(&ft, p);
	if (err)
		goto out;
	d->key_dso = ft.key[SORT_DSO];
	d->key_sym = ft.key[SORT_SYM];
	for (i = 0; i < ft.n; i++) {
		struct func_diff_row *r = row_of(d, &ft, &ft.r[i]);

		if (!r) {
			err = -ENOMEM;
			goto out;
		}
		r->self[side] += ft.r[i].self;
		r->total[side] += ft.r[i].total;
		r->seen[side] = true;
	}
	d->total_w[side] += profile__total_weight(p);
out:
	func_table__free(&ft);
	return err;
}

double func_diff__self_share(const struct func_diff *d, const struct func_diff_row *r,
			     enum diff_side side)
{
	return d->total_w[side] > 0 ? 100 * r->self[side] / d->total_w[side] : 0;
}

double func_diff__total_share(const struct func_diff *d, const struct func_diff_row *r,
			      enum diff_side side)
{
	return d->total_w[side] > 0 ? 100 * r->total[side] / d->total_w[side] : 0;
}

void func_diff__free(struct func_diff *d)
{
	strpool__free(&d->names);
	free(d->r);
	kmap__free(&d->idx);
	memset(d, 0, sizeof(*d));
}
