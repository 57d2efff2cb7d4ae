// SPDX-License-Identifier: MIT
/* --kernel-stacks as a part of the recorder (part.h): /proc/kallsyms among the first records. */
#include <stdio.h>
#include <string.h>

#include "kallsyms.h"
#include "part.h"

static bool kallsyms_part__wanted(const struct rec_ctx *c)
{
	return c->cfg->kernel_stacks;
}

static void kallsyms_part__first_records(void *state, struct rec_ctx *c)
{
	int e = kallsyms__snapshot(c->wt);

	if (e < 0)
		log_err("kernel symbols not captured: /proc/kallsyms: %s", strerror(-e));
}

const struct rec_part kallsyms_part = {
	.name = "kallsyms",
	.wanted = kallsyms_part__wanted,
	.first_records = kallsyms_part__first_records,
};
