/* SPDX-License-Identifier: MIT */
/*
 * A command's options as one table, each option written once: getopt_long's option array and
 * short-option string, and the option lines of the usage text, are made from it.
 */
#ifndef XPU_CLI_OPTS_H
#define XPU_CLI_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Usage texts an option can be listed in: its command's, and one subcommand's. */
#define CLI_USAGES 2

struct cli_opt {
	char short_name;	/* -X, 0 for none; getopt_long returns it */
	int val;		/* without a short name: what getopt_long returns for it */
	const char *name;	/* --NAME */
	const char *arg;	/* the value's name (--NAME=ARG); NULL: the option takes none */
	/* its lines in each usage, '\n' between them; NULL: not listed there (an alias, say) */
	const char *help[CLI_USAGES];
	/*
	 * The value's parser, where the table takes the option (cli_opts__parse): it sets the
	 * command's options ctx from the value, or returns negative errno for a value it refuses,
	 * and expect says what the option takes, so that every refusal reads the same:
	 * "PROG: bad --NAME 'VALUE': expected EXPECT". NULL: the command's own code takes it.
	 */
	int (*parse)(void *ctx, const char *arg);
	const char *expect;
};

/* Room for the getopt tables of n options. */
#define CLI_GETOPT_SHORTS(n) (3 * (n) + 2)

/*
 * getopt_long's tables of opts[0..n): lo (n + 1 entries, the last zero) and shorts
 * (CLI_GETOPT_SHORTS(n) bytes), which begins with prefix ("+", or "").
 */
void cli_opts__getopt(const struct cli_opt *opts, size_t n, const char *prefix,
		      struct option *lo, char *shorts);
/* The option getopt_long returns c for (its short name, else its val); NULL if none. */
const struct cli_opt *cli_opts__find(const struct cli_opt *opts, size_t n, int c);
/*
 * Gives arg to opt's parser, for ctx: 0, or -EINVAL after one line on stderr that says what
 * the option expects (see struct cli_opt).
 */
int cli_opts__parse(const struct cli_opt *opt, void *ctx, const char *arg, const char *prog);
/* Whether c is the short name of an option that takes a value. */
bool cli_opts__short_takes_value(const struct cli_opt *opts, size_t n, int c);
/*
 * The lines of usage which (< CLI_USAGES) of the options listed there, in table order:
 * "  -X, --NAME=ARG" (or "      --NAME=ARG") padded to column col, or gap spaces after one
 * that reaches it, then the help's lines, each further line indented to col.
 */
void cli_opts__usage(const struct cli_opt *opts, size_t n, int which, int col, int gap,
		     FILE *out);

#endif
