// SPDX-License-Identifier: MIT
/* The capture site of replayed graph work (see graph_site.h). */
#include <errno.h>

#include "model/graph_site.h"

int graph_site__name(struct user_code *uc, const struct gpu_work *w, const char **site)
{
	struct user_site us;
	int err;

	*site = NULL;
	if (!w->capture || w->capture > uc->s->t->nlaunches)
		return 0;
	err = user_code__launch(uc, w->capture - 1, &us);
	if (err == -ENOENT || (!err && !us.site))
		return 0;
	if (err)
		return err;
	*site = user_code__site_name(uc, &us);
	return 1;
}
