// SPDX-License-Identifier: MIT
/*
 * report/model/view.c: every view has one row, found by its value and by its name; the names
 * listed for a refusal are the rows' in order; each row's pprof defaults name one of its
 * sample types, and the profile it adds holds something.
 */
#include <string.h>

#include "model/view.h"
#include "unit.h"

int main(void)
{
	static const enum report_view all[] = { VIEW_MERGED, VIEW_GPU, VIEW_CPU, VIEW_MEMORY,
						VIEW_OFF_CPU, VIEW_WALL };
	size_t i, j;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const struct view_def *d = view__def(all[i]);

		CHECK(d->view == all[i], "view %d: its own row", (int)all[i]);
		CHECK(view__by_name(d->name) == d, "view %s: found by name", d->name);
		CHECK(strstr(view__names(), d->name), "view %s: listed", d->name);
		CHECK(d->adds, "view %s: adds records", d->name);
		CHECK(d->npprof > 0 && d->npprof <= VIEW_PPROF_TYPES_MAX &&
		      d->pprof_def_samples < d->npprof && d->pprof_def_time < d->npprof,
		      "view %s: pprof types and their defaults", d->name);
		for (j = 0; j < i; j++)
			CHECK(view__def(all[j]) != d, "views %d and %d: one row each", (int)all[j],
			      (int)all[i]);
	}
	CHECK(!strcmp(view__names(), "merged, cpu, gpu, memory, off-cpu or wall"), "names: %s",
	      view__names());
	CHECK(!view__by_name("bogus") && !view__by_name(""), "unknown names");
	CHECK(view__def(VIEW_MERGED)->svg_title == NULL, "the merged view's title is the trace's");
	return unit_finish();
}
