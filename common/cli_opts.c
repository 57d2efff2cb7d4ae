// SPDX-License-Identifier: MIT
/* Command-line option tables (see cli_opts.h). */
#include <errno.h>
#include <string.h>

#include "cli_opts.h"

static int val_of(const struct cli_opt *o)
{
	return o->short_name ? o->short_name : o->val;
}

void cli_opts__getopt(const struct cli_opt *opts, size_t n, const char *prefix,
		      struct option *lo, char *shorts)
{
	size_t i, at = strlen(prefix);

	memcpy(shorts, prefix, at);
	for (i = 0; i < n; i++) {
		lo[i] = (struct option){ opts[i].name, opts[i].arg ? required_argument : no_argument,
					 NULL, val_of(&opts[i]) };
		if (!opts[i].short_name)
			continue;
		shorts[at++] = opts[i].short_name;
		if (opts[i].arg)
			shorts[at++] = ':';
	}
	shorts[at] = '\0';
	lo[n] = (struct option){ 0 };
}

const struct cli_opt *cli_opts__find(const struct cli_opt *opts, size_t n, int c)
{
	size_t i;

	for (i = 0; c && i < n; i++) {
		if (val_of(&opts[i]) == c)
			return &opts[i];
	}
	return NULL;
}

int cli_opts__parse(const struct cli_opt *opt, void *ctx, const char *arg, const char *prog)
{
	if (!opt->parse(ctx, arg))
		return 0;
	fprintf(stderr, "%s: bad --%s '%s': expected %s\n", prog, opt->name, arg ? arg : "",
		opt->expect ? opt->expect : opt->arg ? opt->arg : "no value");
	return -EINVAL;
}

bool cli_opts__short_takes_value(const struct cli_opt *opts, size_t n, int c)
{
	size_t i;

	for (i = 0; c && i < n; i++) {
		if (opts[i].short_name == c)
			return opts[i].arg;
	}
	return false;
}

void cli_opts__usage(const struct cli_opt *opts, size_t n, int which, int col, int gap,
		     FILE *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *h = opts[i].help[which], *nl;
		int len;

		if (!h)
			continue;
		if (opts[i].short_name)
			len = fprintf(out, "  -%c, --%s", opts[i].short_name, opts[i].name);
		else
			len = fprintf(out, "      --%s", opts[i].name);
		if (opts[i].arg)
			len += fprintf(out, "=%s", opts[i].arg);
		fprintf(out, "%*s", len < col ? col - len : gap, "");
		for (; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(out, "%.*s\n%*s", (int)(nl - h), h, col, "");
		fprintf(out, "%s\n", h);
	}
}
