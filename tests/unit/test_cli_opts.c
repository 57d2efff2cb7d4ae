// SPDX-License-Identifier: MIT
/*
 * common/cli_opts.c: a table of options makes getopt_long's tables (short string, values,
 * which take a value) and the usage lines: padded to the column (one space short of it
 * included), two spaces after a head that reaches it, continuation lines indented, an option
 * left out of a usage where its help is NULL.
 */
#include <stdlib.h>
#include <string.h>

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
	return unit_finish();
}
