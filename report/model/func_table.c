// SPDX-License-Identifier: MIT
/* Function rows of a profile: self and total weight per key (see func_table.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/func_table.h"

/* The id in ft->dsos of the file of a frame (file: its symbolizer code), 0 without memory. */
static uint32_t dso_id(struct func_table *ft, uint32_t frame, uint32_t file)
{
	const char *name = strpool__str(&ft->p->s->pool, frame), *d;
	uint32_t *v;
	bool ins;

	/* leaves the profile adds are in no file: say what they are */
	if (!strncmp(name, "[gpu] ", 6))
		return strpool__intern(&ft->dsos, "[gpu]", 5);
	if (!strncmp(name, "[off-cpu] ", 10))
		return strpool__intern(&ft->dsos, "[off-cpu]", 9);
	/* the marker between a replay's stack and its capture's (profile.c) */
	if (!strncmp(name, "[graph] ", 8))
		return strpool__intern(&ft->dsos, "[graph]", 7);
	v = kmap__put(&ft->file_idx, file, 0, 0, &ins);
	if (v && ins) {
		d = session__file_name(ft->p->s, file);
		*v = strpool__intern(&ft->dsos, d, strlen(d));
	}
	return v ? *v : 0;
}

/*
 * The row of frame k of a stack (f[0] is the process name; files[k] the file of f[k]), or
 * NULL without memory. A name is a row per file it is in: _start of the program is not ld.so's.
 */
static struct func_row *row_of(struct func_table *ft, const uint32_t *f, const uint32_t *files,
			       uint32_t k)
{
	struct func_row r = { 0 };
	uint32_t *v;
	bool ins;

	r.comm = ft->key[SORT_COMM] ? f[0] : 0;
	r.dso = ft->key[SORT_DSO] || ft->key[SORT_SYM] ? dso_id(ft, f[k], files[k]) : 0;
	r.sym = ft->key[SORT_SYM] ? f[k] : 0;
	if (ft->key[SORT_DSO] || ft->key[SORT_SYM]) {
		if (!r.dso)
			return NULL;
	}
	v = kmap__put(&ft->idx, (uint64_t)r.comm << 32 | r.dso, r.sym, ft->n, &ins);
	if (!v || (ins && VEC_PUSH(ft->r, ft->n, ft->cap, r)))
		return NULL;
	return &ft->r[*v];
}

static int fill(struct func_table *ft)
{
	const struct profile *p = ft->p;
	size_t i;
	int err;

	for (i = 0; i < p->n; i++) {
		double w = profile__weight(p, p->e[i].samples, prof_entry__measured(&p->e[i]));
		const uint32_t *f, *files;
		uint32_t n, k, self;
		struct func_row *r;

		err = profile__frames_files(p, &p->e[i], &f, &files, &n);
		if (err)
			return err;
		if (n < 2)
			continue;
		/*
		 * Blocked time is the self time of the frame that blocked, not of the state leaf
		 * under it ("[off-cpu] sleeping"), which only says how: it counts in totals.
		 */
		self = p->e[i].off_n && n > 2 ? n - 2 : n - 1;
		if (profile__dso_match(p, files[self])) {
			r = row_of(ft, f, files, self);
			if (!r)
				return -ENOMEM;
			r->self += w;
		}
		for (k = 1; k < n; k++) {	/* frame 0 is the process name */
			if (!profile__dso_match(p, files[k]))
				continue;
			r = row_of(ft, f, files, k);
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

int func_table__build(struct func_table *ft, const struct profile *p)
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
	err = fill(ft);
	kmap__free(&ft->idx);	/* rows are final: the outputs sort and cut them */
	kmap__free(&ft->file_idx);
	return err;
}

void func_table__free(struct func_table *ft)
{
	free(ft->r);
	kmap__free(&ft->idx);
	kmap__free(&ft->file_idx);
	strpool__free(&ft->dsos);
	memset(ft, 0, sizeof(*ft));
}
