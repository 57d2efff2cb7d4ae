// SPDX-License-Identifier: MIT
/* Which of several merged traces a pid or GPU came from, and what its host called it. */
#include "trace/trace.h"

uint32_t trace__part_of(const struct trace *t, uint32_t pid)
{
	uint32_t *v = t->nparts ? kmap__get(&t->part_of_task, pid, 0) : NULL;

	return v && *v < t->nparts ? *v : 0;
}

/* The part of a merged pid, NULL for one trace. */
static const struct tr_part *part_of(const struct trace *t, uint32_t pid)
{
	return t->nparts ? &t->parts[trace__part_of(t, pid)] : NULL;
}

const char *trace__host(const struct trace *t, uint32_t pid)
{
	const struct tr_part *p = part_of(t, pid);
	const char *h = p && p->has_session ? trace__string(t, p->session.host_str) : NULL;

	if (!p && t->has_session)
		h = trace__string(t, t->session.host_str);
	return h ? h : "";
}

uint32_t trace__real_pid(const struct trace *t, uint32_t pid)
{
	const struct tr_part *p = part_of(t, pid);

	return p && pid >= p->rm.task_base ? pid - p->rm.task_base : pid;
}

uint32_t trace__real_device(const struct trace *t, uint32_t device, const char **host)
{
	const struct tr_part *best = NULL;
	size_t i;

	for (i = 0; i < t->nparts; i++) {
		const struct tr_part *p = &t->parts[i];

		if (p->rm.device_base <= device && (!best || p->rm.device_base > best->rm.device_base))
			best = p;
	}
	*host = "";
	if (!best)
		return device;
	if (best->has_session && trace__string(t, best->session.host_str))
		*host = trace__string(t, best->session.host_str);
	return device - best->rm.device_base;
}
