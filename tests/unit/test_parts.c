// SPDX-License-Identifier: MIT
/*
 * record/parts.c: the table keeps the order its comment gives reasons for, and every row is
 * whole (a name of its own; a part whose failure stops the recording, or that starts
 * threads, has a setup to do it).
 */
#include <stddef.h>
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

/* The first row whose hook at offset off is set, or rec_parts_nr. */
static int first_with(size_t off)
{
	size_t i;
	const void *fn;

	for (i = 0; i < rec_parts_nr; i++) {
		memcpy(&fn, (const char *)rec_parts[i] + off, sizeof(fn));
		if (fn)
			return (int)i;
	}
	return (int)rec_parts_nr;
}

int main(void)
{
	static const char *const known[] = { "gpu_lib", "bpf", "writer", "kallsyms", "procmaps",
					     "rb_drain", "walk_share", "python", "autograd",
					     "jit", "cfi", "driver", "cupti_rx", "symbol_pack",
					     "off_cpu" };
	int threads = (int)rec_parts_nr;
	size_t i, j;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		CHECK(row(known[i]) >= 0, "no part %s", known[i]);
	for (i = 0; i < rec_parts_nr; i++) {
		const struct rec_part *p = rec_parts[i];

		CHECK(p->name && *p->name, "row %zu has no name", i);
		CHECK(!p->required || p->setup, "%s is required but has no setup", p->name);
		CHECK(!p->threads || p->setup, "%s starts threads but has no setup", p->name);
		if (p->threads && threads == (int)rec_parts_nr)
			threads = (int)i;
		for (j = 0; j < i; j++)
			CHECK(strcmp(p->name, rec_parts[j]->name), "%s twice", p->name);
	}
	CHECK(row("gpu_lib") == 0, "gpu_lib first: BPF uprobes it, the others inject it");
	CHECK(row("bpf") == 1, "bpf next: the later parts' setup find its maps");
	CHECK(threads == row("writer"), "the writer the first part that starts threads");
	CHECK(first_with(offsetof(struct rec_part, first_records)) == row("writer"),
	      "the trace's SESSION record first of the first records");
	CHECK(row("writer") < row("kallsyms") && row("kallsyms") < row("procmaps"),
	      "kernel symbols before an attached process's threads and mappings");
	CHECK(row("procmaps") < row("rb_drain"), "the mapping reader before the drain drives it");
	for (i = row("rb_drain") + 1; i < rec_parts_nr; i++)
		CHECK(!rec_parts[i]->first_records, "%s's first records after the drain starts",
		      rec_parts[i]->name);
	CHECK(first_with(offsetof(struct rec_part, start)) == row("rb_drain"),
	      "the drain started before every other part's start");
	CHECK(first_with(offsetof(struct rec_part, quiesce)) == row("bpf"),
	      "sampling stopped after every other part's quiesce (reverse)");
	CHECK(first_with(offsetof(struct rec_part, collect)) == row("writer"),
	      "SESSION_END after every other part's last records (reverse)");
	CHECK(first_with(offsetof(struct rec_part, summary)) == row("writer"),
	      "the last lines said after every part added its share (reverse)");
	CHECK(row("walk_share") < row("python") && row("walk_share") < row("cupti_rx"),
	      "walk_share before the parts that fill it and hand it out");
	CHECK(row("python") < row("autograd"), "python's handler before autograd's");
	CHECK(row("autograd") < row("cfi") && row("jit") < row("cfi"),
	      "cfi the last handler: its start holds the command for its tables");
	CHECK(row("driver") < row("cupti_rx"), "the driver tracer attached before CUPTI starts");
	CHECK(row("rb_drain") < row("driver") && row("rb_drain") < row("cupti_rx"),
	      "the parts that feed the drain stop before it (reverse)");
	CHECK(row("off_cpu") == (int)rec_parts_nr - 1, "off_cpu last: first to collect");
	return unit_finish();
}
