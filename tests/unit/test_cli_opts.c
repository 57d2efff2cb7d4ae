// SPDX-License-Identifier: MIT
/*
 * common/cli_opts.c: a table of options makes getopt_long's tables (short string, values,
 * which take a value) and the usage lines: padded to the column (one space short of it
 * included), two spaces after a head that reaches it, continuation lines indented, an option
 * left out of a usage where its help is NULL; a row found by what getopt_long returns for it,
 * and a value given to its row's parser, a refusal said in the one form.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_opts.h"
#include "unit.h"

enum { OPT_LONG = 256, OPT_ALIAS };

static const struct cli_opt opts[] = {
	{ .short_name = 'F', .name = "format", .arg = "FMT",
	  .help[0] = "text or folded\nsecond line", .help[1] = "text only" },
	{ .val = OPT_LONG, .name = "a-very-long-option", .arg = "VALUE", .help[0] = "long" },
	{ .val = OPT_ALIAS, .name = "alias" },
	{ .short_name = 'v', .name = "verbose", .help[0] = "more" },
};

#define N (sizeof(opts) / sizeof(opts[0]))

static int set_count(void *ctx, const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (!*arg || *end || v < 0)
		return -EINVAL;
	*(long *)ctx = v;
	return 0;
}

static const struct cli_opt parsed[] = {
	{ .short_name = 'n', .name = "count", .arg = "N", .parse = set_count, .expect = "a count" },
	{ .val = OPT_LONG, .name = "plain", .arg = "X" },
	{ .val = OPT_ALIAS, .name = "no-expect", .arg = "N", .parse = set_count },
};

#define NP (sizeof(parsed) / sizeof(parsed[0]))

/* What cli_opts__parse said on stderr for arg, into buf; its return in *ret. */
static void parse_said(const struct cli_opt *o, long *ctx, const char *arg, int *ret, char *buf,
		       size_t size)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n = 0;

	fflush(stderr);
	if (f && saved >= 0 && dup2(fileno(f), STDERR_FILENO) >= 0) {
		*ret = cli_opts__parse(o, ctx, arg, "prog");
		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		rewind(f);
		n = fread(buf, 1, size - 1, f);
	}
	buf[n] = '\0';
	if (saved >= 0)
		close(saved);
	if (f)
		fclose(f);
}

static void parse_tests(void)
{
	char said[256];
	long count = -1;
	int ret = 1;

	CHECK(cli_opts__find(parsed, NP, 'n') == &parsed[0] &&
	      cli_opts__find(parsed, NP, OPT_LONG) == &parsed[1] &&
	      !cli_opts__find(parsed, NP, 'x') && !cli_opts__find(parsed, NP, 0) &&
	      !cli_opts__find(parsed, NP, '?'), "rows found by short name or val");
	parse_said(&parsed[0], &count, "12", &ret, said, sizeof(said));
	CHECK(!ret && count == 12 && !*said, "a good value: %d, %ld, '%s'", ret, count, said);
	parse_said(&parsed[0], &count, "x1", &ret, said, sizeof(said));
	CHECK(ret == -EINVAL && count == 12 &&
	      !strcmp(said, "prog: bad --count 'x1': expected a count\n"),
	      "a refused value: %d, '%s'", ret, said);
	parse_said(&parsed[2], &count, "-3", &ret, said, sizeof(said));
	CHECK(ret == -EINVAL && !strcmp(said, "prog: bad --no-expect '-3': expected N\n"),
	      "no expect: the value's name: '%s'", said);
}

static char *usage(int which)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	cli_opts__usage(opts, N, which, 19, 2, f);
	fclose(f);
	return buf;
}

int main(void)
{
	struct option lo[N + 1];
	char shorts[CLI_GETOPT_SHORTS(N)];
	char *u0 = usage(0), *u1 = usage(1);

	cli_opts__getopt(opts, N, "+", lo, shorts);
	CHECK(!strcmp(shorts, "+F:v"), "shorts '%s'", shorts);
	CHECK(lo[0].val == 'F' && lo[0].has_arg == required_argument && !strcmp(lo[0].name, "format"),
	      "-F's getopt entry");
	CHECK(lo[1].val == OPT_LONG && lo[2].val == OPT_ALIAS && lo[2].has_arg == no_argument,
	      "long-only entries");
	CHECK(!lo[N].name && !lo[N].val, "the table ends with a zero entry");
	CHECK(cli_opts__short_takes_value(opts, N, 'F') && !cli_opts__short_takes_value(opts, N, 'v') &&
	      !cli_opts__short_takes_value(opts, N, 'x') && !cli_opts__short_takes_value(opts, N, 0),
	      "which short options take a value");
	CHECK(u0 && !strcmp(u0, "  -F, --format=FMT text or folded\n"
				"                   second line\n"
				"      --a-very-long-option=VALUE  long\n"
				"  -v, --verbose    more\n"), "usage 0:\n%s", u0 ? u0 : "(none)");
	CHECK(u1 && !strcmp(u1, "  -F, --format=FMT text only\n"), "usage 1:\n%s", u1 ? u1 : "(none)");
	free(u0);
	free(u1);
	parse_tests();
	return unit_finish();
}
