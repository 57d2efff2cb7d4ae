// SPDX-License-Identifier: MIT
/*
 * GPU work under the CPU stack that launched it. Kernels, copies and memsets carry the
 * correlation id of their launching API call; the launch record carries the CPU stack taken
 * at that call. Correlation ids are per process, so the join key is (pid, corr_id); a graph
 * launch has one id and many kernels, which all land under the same stack. Work without a
 * launch record (probe lost, injection without uprobe) is kept under "[no stack]".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model/profile.h"
#include "sym/demangle.h"

const char *memcpy_kind_name(uint8_t kind)
{
	static const char *const names[] = {
		[XPU_MEMCPY_UNKNOWN] = "memcpy", [XPU_MEMCPY_HTOD] = "memcpy HtoD",
		[XPU_MEMCPY_DTOH] = "memcpy DtoH", [XPU_MEMCPY_HTOA] = "memcpy HtoA",
		[XPU_MEMCPY_ATOH] = "memcpy AtoH", [XPU_MEMCPY_ATOA] = "memcpy AtoA",
		[XPU_MEMCPY_ATOD] = "memcpy AtoD", [XPU_MEMCPY_DTOA] = "memcpy DtoA",
		[XPU_MEMCPY_DTOD] = "memcpy DtoD", [XPU_MEMCPY_HTOH] = "memcpy HtoH",
		[XPU_MEMCPY_PTOP] = "memcpy PtoP",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "memcpy";
}

struct corr_ctx {
	struct profile *p;
	struct kmap launch;	/* {pid, corr_id} -> launch index */
};

static int add_one(struct corr_ctx *c, uint32_t pid, uint32_t corr, uint64_t start,
		   uint64_t end, uint32_t leaf)
{
	const struct xpu_rec_gpu_launch *l = NULL;
	uint32_t *v = kmap__get(&c->launch, pid, corr);
	uint32_t tid = 0;

	if (v) {
		l = &c->p->t->launches[*v];
		tid = l->tid;
	}
	if (!profile__keep(c->p, pid, tid)) {
		c->p->filtered_out++;
		return 0;
	}
	if (!l)
		c->p->gpu_unmatched++;
	c->p->gpu_records++;
	return profile__add(c->p, pid, l ? l->ts_ns : start, l ? l->stack_id : 0, leaf, true, 0,
			    end > start ? end - start : 0);
}

static uint32_t kernel_leaf(struct profile *p, uint32_t name_str)
{
	const char *n = trace__string(p->t, name_str);
	char dem[DEMANGLE_MAX_OUTPUT], buf[DEMANGLE_MAX_OUTPUT + 8];

	if (!n)
		n = "[unknown kernel]";
	else if (xpu_demangle(n, dem, sizeof(dem)) >= 0)
		n = dem;
	snprintf(buf, sizeof(buf), "[gpu] %s", n);
	return frame_intern(&p->pool, buf, strlen(buf));
}

int correlate__add(struct profile *p)
{
	struct trace *t = p->t;
	struct corr_ctx c = { .p = p };
	size_t i;
	int err = 0;

	for (i = 0; i < t->nlaunches; i++) {
		/* a repeated id keeps the first launch: ids are unique within a process */
		if (!kmap__put(&c.launch, t->launches[i].pid, t->launches[i].corr_id, i, NULL)) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; !err && i < t->nkernels; i++) {
		const struct xpu_rec_gpu_kernel *k = &t->kernels[i];
		uint32_t leaf = kernel_leaf(p, k->name_str);

		err = leaf ? add_one(&c, k->pid, k->corr_id, k->start_ns, k->end_ns, leaf) : -ENOMEM;
	}
	for (i = 0; !err && i < t->nmemcpys; i++) {
		const struct xpu_rec_gpu_memcpy *m = &t->memcpys[i];
		char buf[64];
		uint32_t leaf;

		snprintf(buf, sizeof(buf), "[gpu] %s", memcpy_kind_name(m->copy_kind));
		leaf = frame_intern(&p->pool, buf, strlen(buf));
		err = leaf ? add_one(&c, m->pid, m->corr_id, m->start_ns, m->end_ns, leaf) : -ENOMEM;
	}
	for (i = 0; !err && i < t->nmemsets; i++) {
		const struct xpu_rec_gpu_memset *m = &t->memsets[i];
		uint32_t leaf = frame_intern(&p->pool, "[gpu] memset", 12);

		err = leaf ? add_one(&c, m->pid, m->corr_id, m->start_ns, m->end_ns, leaf) : -ENOMEM;
	}
out:
	kmap__free(&c.launch);
	return err;
}
