// SPDX-License-Identifier: MIT
/* Each thread's last complete launch stack, for autograd nodes of the same op (see the header). */
#include <stdlib.h>
#include <string.h>

#include "ag_launch_cache.h"

/* Threads launching at once; a slot's thread is replaced by another hashing to it. */
#define AG_LAUNCH_SLOTS 256

struct ag_launch_slot {
	uint32_t tid;
	uint64_t ts;			/* 0: empty */
	struct ag_stack st;
};

struct ag_launch_cache {
	struct ag_launch_slot *slots;
};

struct ag_launch_cache *ag_launch_cache__new(void)
{
	struct ag_launch_cache *c = calloc(1, sizeof(*c));

	if (c && !(c->slots = calloc(AG_LAUNCH_SLOTS, sizeof(*c->slots)))) {
		free(c);
		c = NULL;
	}
	return c;
}

void ag_launch_cache__free(struct ag_launch_cache *c)
{
	if (c)
		free(c->slots);
	free(c);
}

void ag_launch_cache__put(struct ag_launch_cache *c, uint32_t tid, uint64_t ts, const uint64_t *ips,
			  uint16_t nr_user, const uint64_t *py, uint16_t nr_py, uint16_t py_flags)
{
	struct ag_launch_slot *s;

	if (!c || !nr_user || nr_user > XPU_BPF_MAX_UFRAMES || nr_py > XPU_PY_MAX_FRAMES)
		return;
	s = &c->slots[tid % AG_LAUNCH_SLOTS];
	s->tid = tid;
	s->ts = ts;
	memcpy(s->st.ips, ips, nr_user * sizeof(*ips));
	s->st.nr_user = nr_user;
	if (nr_py)
		memcpy(s->st.py, py, nr_py * sizeof(*py));
	s->st.nr_py = nr_py;
	s->st.py_flags = py_flags;
}

bool ag_launch_cache__node_stack(const struct ag_launch_cache *c, uint32_t tid, uint64_t launch_ts,
				 uint64_t caller, uint64_t lib_start, uint64_t lib_end,
				 struct ag_stack *out)
{
	const struct ag_launch_slot *s;
	uint32_t i, keep, n;
	bool entered = false;

	if (!c)
		return false;
	s = &c->slots[tid % AG_LAUNCH_SLOTS];
	if (!s->ts || s->tid != tid || s->ts != launch_ts)
		return false;
	/*
	 * From the outermost frame in: the op's library is entered (its dispatcher and autograd
	 * kernel) and left where the op's kernels begin (libtorch_cuda, cuBLAS). Without the
	 * library in the stack the whole of it is the op's stack.
	 */
	keep = 0;
	for (i = s->st.nr_user; i-- > 0;) {
		bool in = s->st.ips[i] >= lib_start && s->st.ips[i] < lib_end;

		if (in) {
			entered = true;
			keep = i;
		} else if (entered) {
			break;
		}
	}
	n = s->st.nr_user - keep;
	out->ips[0] = caller;
	memcpy(&out->ips[1], &s->st.ips[keep], n * sizeof(out->ips[0]));
	out->nr_user = (uint16_t)(n + 1);
	memcpy(out->py, s->st.py, s->st.nr_py * sizeof(out->py[0]));
	out->nr_py = s->st.nr_py;
	out->py_flags = s->st.py_flags;
	return true;
}
