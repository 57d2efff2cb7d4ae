// SPDX-License-Identifier: MIT
/*
 * record/parts.c: the table keeps the order its comment gives reasons for, and every row is
 * whole (a name of its own; a part whose failure stops the recording has a setup to fail).
 */
#include <string.h>

#include "parts.h"
#include "unit.h"

/* The row of the part named name, or -1. */
static int row(const char *name)
{
	size_t i;

	for (i = 0; i < rec_parts_nr; i++) {
		if (!strcmp(rec_parts[i]->name, name))
			return (int)i;
	}
	return -1;
}

int main(void)
{
	static const char *const known[] = { "walk_share", "python", "autograd", "jit", "cfi",
					     "driver", "cupti_rx", "kallsyms", "symbol_pack",
					     "off_cpu" };
	size_t i, j;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		CHECK(row(known[i]) >= 0, "no part %s", known[i]);
	for (i = 0; i < rec_parts_nr; i++) {
		const struct rec_part *p = rec_parts[i];

		CHECK(p->name && *p->name, "row %zu has no name", i);
		CHECK(!p->required || p->setup, "%s is required but has no setup", p->name);
		for (j = 0; j < i; j++)
			CHECK(strcmp(p->name, rec_parts[j]->name), "%s twice", p->name);
	}
	CHECK(row("walk_share") == 0, "walk_share first: the others fill it from their setup on");
	CHECK(row("python") < row("autograd"), "python's handler before autograd's");
	CHECK(row("autograd") < row("cfi") && row("jit") < row("cfi"),
	      "cfi the last handler: its start holds the command for its tables");
	CHECK(row("driver") < row("cupti_rx"), "the driver tracer attached before CUPTI starts");
	CHECK(row("off_cpu") == (int)rec_parts_nr - 1, "off_cpu last: first to collect");
	return unit_finish();
}
