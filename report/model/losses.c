// SPDX-License-Identifier: MIT
/* LOST records summed per source (see losses.h). */
#include <string.h>

#include "model/losses.h"

void losses__sum(const struct trace *t, struct losses *l)
{
	size_t i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < t->nlost; i++) {
		const struct xpu_rec_lost *r = &t->lost[i];
		uint32_t src = r->source < LOSS_SOURCES ? r->source : 0;
		const struct tr_proc *p;

		l->records[src]++;
		if (src == XPU_LOST_MAPPINGS) {
			p = r->pid ? trace__proc(t, r->pid) : NULL;
			if (r->pid && (!p || !p->samples)) {
				l->exited_unseen += r->count;
				continue;
			}
		}
		l->count[src] += r->count;
	}
}

const char *losses__name(uint32_t s)
{
	static const char *const names[LOSS_SOURCES] = {
		[0] = "other",
#define XPU_LOST(name, id, report_name, what) [id] = report_name,
#include "xpu_lost.def"
#undef XPU_LOST
	};

	return s < LOSS_SOURCES ? names[s] : names[0];
}
