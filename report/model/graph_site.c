// SPDX-License-Identifier: MIT
/* The capture site of replayed graph work (see graph_site.h). */
#include <string.h>

#include "model/graph_site.h"

/* "qualname (file.py)" or "qualname (file.py:LINE)": how the symbolizer names Python frames */
static bool python_frame(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && name[len - 1] == ')' && strstr(name, ".py");
}

int graph_site__name(const struct session *s, const struct gpu_work *w, const char **site)
{
	const struct xpu_rec_gpu_launch *l;
	const uint32_t *f;
	uint32_t n, i;
	size_t li;

	*site = NULL;
	if (!w->capture || w->capture > s->t->nlaunches)
		return 0;
	li = w->capture - 1;
	l = &s->t->launches[li];
	if (!session__stack(s, l->pid, l->ts_ns, session__launch_stack(s, li), false, &f, &n)) {
		for (i = n; i-- > 0;) {
			const char *name = strpool__str(&s->pool, f[i]);

			if (python_frame(name)) {
				*site = name;
				return 1;
			}
		}
	}
	if (session__stack(s, l->pid, l->ts_ns, session__launch_stack(s, li), true, &f, &n) || !n)
		return 0;
	*site = strpool__str(&s->pool, f[n - 1]);
	return 1;
}
