// SPDX-License-Identifier: MIT
/* Function rows of a profile: self and total weight per key (see func_table.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "model/func_table.h"

static uint32_t frame_dso_id(struct func_table *ft, uint32_t frame)
{
	const char *d;

	if (frame >= ft->nframes)
		return 0;
	if (!ft->frame_dso[frame]) {
		d = strncmp(strpool__str(&ft->p->s->pool, frame), "[gpu] ", 6) ?
			    symbolizer__frame_dso(&ft->p->s->sym, frame) : "[gpu]";
		ft->frame_dso[frame] = strpool__intern(&ft->dsos, d, strlen(d));
	}
	return ft->frame_dso[frame];
}

/* The row of frame k of a stack (f[0] is the process name), or NULL without memory. */
static struct func_row *row_of(struct func_table *ft, const uint32_t *f, uint32_t k)
{
	struct func_row r = { 0 };
	uint32_t *v;
	bool ins;

	r.comm = ft->key[SORT_COMM] ? f[0] : 0;
	r.dso = ft->key[SORT_DSO] || ft->key[SORT_SYM] ? frame_dso_id(ft, f[k]) : 0;
	r.sym = ft->key[SORT_SYM] ? f[k] : 0;
	if (ft->key[SORT_DSO] || ft->key[SORT_SYM]) {
		if (!r.dso)
			return NULL;
	}
	/* without the dso key, a name is one row whichever file it came from */
	v = kmap__put(&ft->idx, (uint64_t)r.comm << 32 | (ft->key[SORT_DSO] ? r.dso : 0), r.sym,
		      ft->n, &ins);
	if (!v || (ins && VEC_PUSH(ft->r, ft->n, ft->cap, r)))
		return NULL;
	return &ft->r[*v];
}

static int fill(struct func_table *ft)
{
	struct profile *p = ft->p;
	size_t i;
	int err;

	for (i = 0; i < p->n; i++) {
		double w = profile__weight(p, p->e[i].samples, p->e[i].gpu_ns);
		const uint32_t *f;
		uint32_t n, k;
		struct func_row *r;

		err = profile__frames(p, &p->e[i], &f, &n);
		if (err)
			return err;
		if (n < 2)
			continue;
		if (profile__dso_match(p, f[n - 1])) {
			r = row_of(ft, f, n - 1);
			if (!r)
				return -ENOMEM;
			r->self += w;
		}
		for (k = 1; k < n; k++) {	/* frame 0 is the process name */
			if (!profile__dso_match(p, f[k]))
				continue;
			r = row_of(ft, f, k);
			if (!r)
				return -ENOMEM;
			if (r->stamp == i + 1)	/* recursion: once per stack */
				continue;
			r->stamp = i + 1;
			r->total += w;
		}
	}
	return 0;
}

/* Symbolizes every stack first, so that every frame name has its id. */
static int prepare(struct func_table *ft)
{
	struct profile *p = ft->p;
	size_t i;
	int err;

	for (i = 0; i < p->n; i++) {
		const uint32_t *f;
		uint32_t n;

		progress__update("naming frames", i, p->n);
		err = profile__frames(p, &p->e[i], &f, &n);
		if (err)
			return err;
	}
	ft->nframes = p->s->pool.n;
	ft->frame_dso = calloc(ft->nframes ? ft->nframes : 1, sizeof(*ft->frame_dso));
	return ft->frame_dso ? 0 : -ENOMEM;
}

int func_table__build(struct func_table *ft, struct profile *p)
{
	const struct report_opts *o = p->s->opts;
	int i, err;

	memset(ft, 0, sizeof(*ft));
	ft->p = p;
	ft->sort[0] = SORT_SYM;
	ft->nsort = 1;
	if (o->nsort) {
		memcpy(ft->sort, o->sort, sizeof(ft->sort));
		ft->nsort = o->nsort;
	}
	for (i = 0; i < ft->nsort; i++)
		ft->key[ft->sort[i]] = true;
	err = prepare(ft);
	if (!err)
		err = fill(ft);
	kmap__free(&ft->idx);	/* rows are final: the outputs sort and cut them */
	return err;
}

void func_table__free(struct func_table *ft)
{
	free(ft->r);
	kmap__free(&ft->idx);
	free(ft->frame_dso);
	strpool__free(&ft->dsos);
	memset(ft, 0, sizeof(*ft));
}
