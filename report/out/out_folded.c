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
#include "out/out.h"

#define line folded_line

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static char *join_frames(struct profile *p, const uint32_t *f, uint32_t n)
{
	size_t len = 0, off = 0;
	uint32_t i;
	char *s;

	for (i = 0; i < n; i++)
		len += strlen(strpool__str(&p->s->pool, f[i])) + 1;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *fr = strpool__str(&p->s->pool, f[i]);
		size_t l = strlen(fr);

		if (i)
			s[off++] = ';';
		memcpy(s + off, fr, l);
		off += l;
	}
	s[off] = '\0';
	return s;
}

double folded__round(double *carry, double w)
{
	double r = llround(w + *carry);

	if (r < 1)
		r = 1;
	*carry += w - r;
	return r;
}

int folded__collect(struct profile *p, struct folded_line **out_lines, size_t *out_n)
{
	struct line *lines;
	size_t i, j, n = 0, k = 0;
	double carry[2] = { 0, 0 };	/* CPU lines, GPU lines */
	int err = 0;

	*out_lines = NULL;
	*out_n = 0;
	lines = calloc(p->n ? p->n : 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	*out_lines = lines;
	for (i = 0; i < p->n; i++) {
		const uint32_t *f;
		uint32_t fn;

		progress__update("naming frames", i, p->n);
		err = profile__frames(p, &p->e[i], &f, &fn);
		if (err)
			goto out;
		lines[n].text = join_frames(p, f, fn);
		if (!lines[n].text) {
			err = -ENOMEM;
			goto out;
		}
		lines[n].samples = p->e[i].samples;
		lines[n].gpu_ns = p->e[i].gpu_ns;
		n++;
	}
	if (n)
		qsort(lines, n, sizeof(*lines), cmp_line);
	/* merge runs of equal text in place into lines[0..k) */
	for (i = 0; i < n; i = j) {
		uint64_t samples = lines[i].samples, gpu_ns = lines[i].gpu_ns;
		char *text = lines[i].text;
		double w;

		for (j = i + 1; j < n && !strcmp(lines[j].text, text); j++) {
			samples += lines[j].samples;
			gpu_ns += lines[j].gpu_ns;
			free(lines[j].text);
			lines[j].text = NULL;
		}
		lines[i].text = NULL;
		if (!samples && !gpu_ns) {
			free(text);
			continue;
		}
		w = profile__weight(p, samples, gpu_ns);
		lines[k].text = text;
		lines[k].samples = samples;
		lines[k].gpu_ns = gpu_ns;
		lines[k].weight = folded__round(&carry[gpu_ns > 0], w);
		k++;
	}
	n = k;
out:
	*out_n = n;
	return err;
}

void folded__free(struct folded_line *lines, size_t n)
{
	size_t i;

	for (i = 0; lines && i < n; i++)
		free(lines[i].text);
	free(lines);
}

int out_folded(struct profile *p, FILE *out)
{
	struct line *lines;
	size_t i, n;
	int err;

	err = folded__collect(p, &lines, &n);
	for (i = 0; !err && i < n; i++) {
		if (out__failed(out))
			err = -EIO;
		else
			fprintf(out, "%s %.0f\n", lines[i].text, lines[i].weight);
	}
	folded__free(lines, n);
	return err;
}
