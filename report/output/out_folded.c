// SPDX-License-Identifier: MIT
/*
 * Folded stacks for flamegraph.pl, inferno and speedscope: "comm;root;...;leaf weight", one
 * line per distinct stack, sorted bytewise so the output is deterministic. Stacks that
 * symbolize to the same text (different addresses in one function) are merged first, and
 * only then is the weight rounded to an integer: GPU time is accumulated in nanoseconds and
 * converted once per line (ns / 1000 us, or ns * freq / 1e9 samples).
 *
 * Rounding never drops GPU work and keeps totals: each line is rounded with the remainder
 * carried over from the lines before it of its kind (CPU or GPU), so the printed weights of a
 * kind add up to its exact total, rounded; a line with any weight prints at least 1, the
 * excess taken back from the lines after it. Only when a kind's exact total is under one
 * unit per line (GPU work counted in samples) is its printed total larger.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/sort.h"
#include "base/term_safe.h"
#include "output/out.h"

/* The stack of frames f[0..n), made on first use: its index, or -1 when out of memory. */
static long stack_of(struct folded *f, const uint32_t *fr, uint32_t n)
{
	uint64_t h = hash_bytes(fr, (size_t)n * sizeof(*fr));
	struct folded_stack st = { .first = f->nframes, .n = n };
	uint32_t *v, k;
	bool ins;

	v = kmap__put(&f->stack_idx, h, n, (uint32_t)f->nstacks, &ins);
	if (!v)
		return -1;
	if (!ins) {
		for (k = *v + 1; k; k = f->stacks[k - 1].next) {
			const struct folded_stack *o = &f->stacks[k - 1];

			if (!memcmp(f->frames + o->first, fr, (size_t)n * sizeof(*fr)))
				return k - 1;
		}
		/* another stack of this hash: chained after the first */
		st.next = f->stacks[*v].next;
		f->stacks[*v].next = (uint32_t)f->nstacks + 1;
	}
	if (vec_reserve((void **)&f->frames, &f->frames_cap, f->nframes + n, sizeof(*fr)))
		return -1;
	memcpy(f->frames + f->nframes, fr, (size_t)n * sizeof(*fr));
	f->nframes += n;
	if (VEC_PUSH(f->stacks, f->nstacks, f->stacks_cap, st))
		return -1;
	return (long)f->nstacks - 1;
}

int folded__cmp(const struct folded *a, size_t i, const struct folded *b, size_t j)
{
	uint32_t na = folded__depth(a, i), nb = folded__depth(b, j), k;
	bool one_pool = a->names == b->names;

	for (k = 0;; k++) {
		uint32_t x = folded__frame(a, i, k), y = folded__frame(b, j, k);

		/* one pool: one id, one name; otherwise the names tell */
		if (x != y || !one_pool) {
			const unsigned char *s = (const unsigned char *)strpool__str(a->names, x);
			const unsigned char *t = (const unsigned char *)strpool__str(b->names, y);
			int cs, ct;

			while (*s && *s == *t)
				s++, t++;
			cs = *s ? *s : k + 1 < na ? ';' : 0;
			ct = *t ? *t : k + 1 < nb ? ';' : 0;
			if (cs != ct)
				return CMP(cs, ct);
		}
		if (k + 1 == na || k + 1 == nb)
			return CMP(na, nb);
	}
}

static int cmp_row(const void *a, const void *b, void *arg)
{
	const struct folded *f = arg;

	return folded__cmp(f, (const struct folded_row *)a - f->rows, f,
			   (const struct folded_row *)b - f->rows);
}

double folded__round(double *carry, double w)
{
	double r = llround(w + *carry);

	if (r < 1)
		r = 1;
	*carry += w - r;
	return r;
}

/* The rows of the profile's entries, one per distinct text, with their summed weights. */
static int collect_rows(const struct profile *p, struct folded *f)
{
	size_t i;
	int err;

	for (i = 0; i < p->n; i++) {
		struct folded_row r = { 0 };
		const uint32_t *fr;
		uint32_t fn, *v;
		long st;
		bool ins;

		progress__update("folding stacks", i, p->n);
		err = profile__frames(p, &p->e[i], &fr, &fn);
		if (err)
			return err;
		st = stack_of(f, fr + 1, fn - 1);	/* fr[0]: the comm, always there */
		if (st < 0)
			return -ENOMEM;
		r.comm = fr[0];
		r.stack = (uint32_t)st;
		v = kmap__put(&f->row_idx, r.comm, r.stack, (uint32_t)f->n, &ins);
		if (!v || (ins && VEC_PUSH(f->rows, f->n, f->rows_cap, r)))
			return -ENOMEM;
		f->rows[*v].samples += p->e[i].samples;
		f->rows[*v].measured += prof_entry__measured(&p->e[i]);
	}
	return 0;
}

int folded__build(const struct profile *p, struct folded *f)
{
	double carry[2] = { 0, 0 };	/* CPU rows, GPU rows */
	size_t i, k = 0;
	int err;

	memset(f, 0, sizeof(*f));
	f->names = &p->s->pool;
	err = collect_rows(p, f);
	kmap__free(&f->stack_idx);
	kmap__free(&f->row_idx);
	if (err)
		return err;
	if (f->n)
		qsort_r(f->rows, f->n, sizeof(*f->rows), cmp_row, f);
	for (i = 0; i < f->n; i++) {
		struct folded_row *r = &f->rows[i];

		if (!r->samples && !r->measured)
			continue;
		r->weight = folded__round(&carry[r->measured > 0],
					  profile__weight(p, r->samples, r->measured));
		f->rows[k++] = *r;
	}
	f->n = k;
	return 0;
}

void folded__release(struct folded *f)
{
	free(f->rows);
	free(f->frames);
	free(f->stacks);
	kmap__free(&f->stack_idx);
	kmap__free(&f->row_idx);
	memset(f, 0, sizeof(*f));
}

void folded__put(const struct folded *f, size_t i, FILE *out)
{
	uint32_t n = folded__depth(f, i), k;

	for (k = 0; k < n; k++) {
		if (k)
			fputc(';', out);
		/* a newline in a name would make two lines of one: escaped (term_safe.h) */
		term_safe__put_name(out, strpool__str(f->names, folded__frame(f, i, k)));
	}
}

/* Each row is written as it comes: the output stops at --max-output, and so does the work. */
int out_folded(const struct profile *p, FILE *out)
{
	struct folded f;
	size_t i;
	int err;

	err = folded__build(p, &f);
	for (i = 0; !err && i < f.n; i++) {
		if (out__failed(out)) {
			err = -EIO;
			break;
		}
		folded__put(&f, i, out);
		fprintf(out, " %.0f\n", f.rows[i].weight);
	}
	folded__release(&f);
	return err;
}
