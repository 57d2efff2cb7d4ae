// SPDX-License-Identifier: MIT
/*
 * `xpu-report diff BASE NEW`, text and folded, in the manner of `perf diff`: every function's
 * self and total share on both sides and the change in points (new - base), largest change
 * first; a function on one side only is marked so. Shares, not weights, are compared: two
 * recordings differ in length, rate and load, and a share means the same in both. The folded
 * form is the two-column "stack base new" that difffolded.pl writes and flamegraph.pl reads.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/func_diff.h"
#include "output/out.h"

static const char *const side_name[2] = { "base:", "new:" };

/* ---- header ------------------------------------------------------------------------------- */

static bool has_gpu_work(const struct profile *p)
{
	return p->gpu_records && p->s->opts->view != VIEW_MEMORY;
}

static void print_side(const struct profile *p, enum diff_side side, FILE *out)
{
	fprintf(out, "# %-5s      %s: %llu CPU samples at %u Hz", side_name[side], p->s->opts->input,
		(unsigned long long)p->cpu_samples, p->s->freq_hz);
	if (p->gpu_records)
		fprintf(out, ", %llu GPU records", (unsigned long long)p->gpu_records);
	if (p->filtered_out)
		fprintf(out, " (%llu left out by the filters)", (unsigned long long)p->filtered_out);
	fputc('\n', out);
}

/*
 * What makes the two sides' weights differ in meaning, one note each: shares compare anyway,
 * which is why the tables show shares.
 */
static void print_comparability(const struct profile *const side[2], FILE *out)
{
	const struct session *b = side[DIFF_BASE]->s, *n = side[DIFF_NEW]->s;
	bool gb = has_gpu_work(side[DIFF_BASE]), gn = has_gpu_work(side[DIFF_NEW]);

	if (b->freq_hz != n->freq_hz)
		fprintf(out, "# note:      the sampling rates differ (base %u Hz, new %u Hz): %s; "
			"shares compare\n", b->freq_hz, n->freq_hz, b->weight == WEIGHT_TIME ?
			"a sample stands for a different time on each side" :
			"sample counts do not compare");
	if (gb != gn)
		fprintf(out, "# note:      only %s holds GPU work: its shares are of CPU and GPU "
			"weight together, the other's of CPU samples alone\n",
			gb ? "base" : "new");
}

static void print_header(const struct func_diff *d, const struct profile *const side[2], FILE *out)
{
	char ub[160], un[160];

	fprintf(out, "# xpu-report diff\n");
	print_side(side[DIFF_BASE], DIFF_BASE, out);
	print_side(side[DIFF_NEW], DIFF_NEW, out);
	session__weight_unit(side[DIFF_BASE]->s, ub, sizeof(ub));
	session__weight_unit(side[DIFF_NEW]->s, un, sizeof(un));
	if (strcmp(ub, un))
		fprintf(out, "# weight:    base %s\n#            new %s\n", ub, un);
	else
		fprintf(out, "# weight:    %s\n", un);
	fprintf(out, "# totals:    base %.0f, new %.0f; every figure below is a share of its "
		"side's total (%%), every delta new - base (points)\n", d->total_w[DIFF_BASE],
		d->total_w[DIFF_NEW]);
	print_comparability(side, out);
	fprintf(out, "#\n");
}

/* ---- the table ---------------------------------------------------------------------------- */

struct drow {
	const struct func_diff_row *r;
	double self[2], total[2];	/* shares */
	double key;			/* |delta| of the --order column */
};

static double delta_self(const struct drow *x)
{
	return x->self[DIFF_NEW] - x->self[DIFF_BASE];
}

static double delta_total(const struct drow *x)
{
	return x->total[DIFF_NEW] - x->total[DIFF_BASE];
}

static int cmp_drow(const void *a, const void *b, void *arg)
{
	const struct drow *x = a, *y = b;
	const struct func_diff *d = arg;
	double mx = fmax(x->total[0], x->total[1]), my = fmax(y->total[0], y->total[1]);
	int c;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (mx != my)
		return mx > my ? -1 : 1;
	c = strcmp(strpool__str(&d->names, x->r->sym), strpool__str(&d->names, y->r->sym));
	if (!c)
		c = strcmp(strpool__str(&d->names, x->r->dso), strpool__str(&d->names, y->r->dso));
	if (!c)
		c = strcmp(strpool__str(&d->names, x->r->comm), strpool__str(&d->names, y->r->comm));
	return c;
}

static void put_share(FILE *out, bool seen, double share)
{
	if (seen)
		fprintf(out, " %7.2f%%", share);
	else
		fprintf(out, " %8s", "-");
}

/* A change that prints as zero has no sign: no "-0.00" for a rounding residue. */
static void put_delta(FILE *out, double delta)
{
	if (fabs(delta) < 0.005)
		fprintf(out, " %8s", "0.00");
	else
		fprintf(out, " %+8.2f", delta);
}

static const char *row_in(const struct func_diff_row *r)
{
	return r->seen[DIFF_BASE] && r->seen[DIFF_NEW] ? "both" : r->seen[DIFF_NEW] ? "new" :
		"base";
}

static void print_row(const struct func_diff *d, const struct drow *x, int dw, FILE *out)
{
	const struct func_diff_row *r = x->r;
	char fit[OUT_DSO_WIDTH_MAX + 1];

	fputs(" ", out);
	put_share(out, r->seen[DIFF_BASE], x->self[DIFF_BASE]);
	put_share(out, r->seen[DIFF_NEW], x->self[DIFF_NEW]);
	put_delta(out, delta_self(x));
	put_share(out, r->seen[DIFF_BASE], x->total[DIFF_BASE]);
	put_share(out, r->seen[DIFF_NEW], x->total[DIFF_NEW]);
	put_delta(out, delta_total(x));
	fprintf(out, "  %-4s", row_in(r));
	if (r->comm)
		fprintf(out, "  %-16s", out__fit(strpool__str(&d->names, r->comm), 16, fit));
	if (r->dso)
		fprintf(out, "  %-*s", r->sym ? dw : 0,
			out__fit(strpool__str(&d->names, r->dso), r->sym ? dw : 0, fit));
	if (r->sym)
		fprintf(out, "  %s", strpool__str(&d->names, r->sym));
	fputc('\n', out);
}

static void print_titles(const struct func_diff *d, const struct drow *x, int dw, FILE *out)
{
	const struct func_diff_row *r = x ? x->r : NULL;

	fprintf(out, "  %8s %8s %8s %8s %8s %8s\n", "base", "new", "delta", "base", "new",
		"delta");
	fprintf(out, "  %8s %8s %8s %8s %8s %8s  %-4s", "self", "self", "self", "total", "total",
		"total", "in");
	if (r && r->comm)
		fprintf(out, "  %-16s", "comm");
	if (r && r->dso)
		fprintf(out, "  %-*s", r->sym ? dw : 0, "dso");
	if (r && r->sym)
		fprintf(out, "  function");
	fputc('\n', out);
}

static int print_table(const struct func_diff *d, const struct report_opts *o, FILE *out)
{
	struct drow *x = calloc(d->n ? d->n : 1, sizeof(*x));
	double *key = calloc(d->n ? d->n : 1, sizeof(*key));
	size_t i, nshow;
	int dw = 3, s;

	if (!x || !key) {
		free(x);
		free(key);
		return -ENOMEM;
	}
	for (i = 0; i < d->n; i++) {
		x[i].r = &d->r[i];
		for (s = DIFF_BASE; s <= DIFF_NEW; s++) {
			x[i].self[s] = func_diff__self_share(d, &d->r[i], s);
			x[i].total[s] = func_diff__total_share(d, &d->r[i], s);
		}
		x[i].key = fabs(o->diff_order_total ? delta_total(&x[i]) : delta_self(&x[i]));
	}
	if (d->n)
		qsort_r(x, d->n, sizeof(*x), cmp_drow, (void *)d);
	for (i = 0; i < d->n; i++)
		key[i] = x[i].key;
	nshow = out__shown_rows(o, d->n, key);
	for (i = 0; i < nshow; i++) {
		int l = (int)strlen(strpool__str(&d->names, x[i].r->dso));

		dw = l > dw ? l : dw;
	}
	dw = dw > OUT_DSO_WIDTH_MAX ? OUT_DSO_WIDTH_MAX : dw;
	/* as the text tables say: what a row is follows --sort */
	fprintf(out, "# %s by change of %s share (new - base)\n", d->key_sym ? "functions" :
		d->key_dso ? "files" : "processes", o->diff_order_total ? "total" : "self");
	print_titles(d, d->n ? &x[0] : NULL, dw, out);
	for (i = 0; i < nshow; i++)
		print_row(d, &x[i], dw, out);
	out__print_more(out, d->n - nshow, d->key_sym ? "function" : d->key_dso ? "file" :
			"process", d->key_sym ? "functions" : d->key_dso ? "files" : "processes", o);
	free(x);
	free(key);
	return 0;
}

int out_diff_text(const struct profile *const side[2], FILE *out)
{
	struct func_diff d = { 0 };
	int err = 0, s;

	for (s = DIFF_BASE; s <= DIFF_NEW && !err; s++)
		err = func_diff__add(&d, s, side[s]);
	if (!err) {
		print_header(&d, side, out);
		err = print_table(&d, side[DIFF_NEW]->s->opts, out);
	}
	if (!err && ferror(out))
		err = -EIO;
	func_diff__free(&d);
	return err;
}

/* ---- folded: "stack base new" --------------------------------------------------------------- */

/* Each line is written as it comes: the output stops at --max-output, and so does the work. */
int out_diff_folded(const struct profile *const side[2], FILE *out)
{
	struct folded f[2] = { 0 };
	size_t i = 0, j = 0;
	int err;

	err = folded__build(side[DIFF_BASE], &f[0]);
	if (!err)
		err = folded__build(side[DIFF_NEW], &f[1]);
	/* both sorted bytewise: one merge pass gives the union */
	while (!err && (i < f[0].n || j < f[1].n)) {
		int c = i == f[0].n ? 1 : j == f[1].n ? -1 : folded__cmp(&f[0], i, &f[1], j);

		if (out__failed(out)) {
			err = -EIO;
			break;
		}
		folded__put(c <= 0 ? &f[0] : &f[1], c <= 0 ? i : j, out);
		fprintf(out, " %.0f %.0f\n", c <= 0 ? f[0].rows[i].weight : 0,
			c >= 0 ? f[1].rows[j].weight : 0);
		i += c <= 0;
		j += c >= 0;
	}
	folded__release(&f[0]);
	folded__release(&f[1]);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}
