// SPDX-License-Identifier: MIT
/* Backward work under the forward code that caused it (see backward.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "sym/backward.h"

/* Above pyframes' ids (0xc0000000 up): a stack made here is never mistaken for another's. */
#define BWF_FIRST_STACK_ID 0xe0000000u
/* A forward stack, its node frame and the backward's own frames stay within a stack's bound. */
#define BW_MAX_FRAMES XPU_STACK_MAX_DEPTH
/*
 * Evaluations looked at per event, walking back: xpu-record writes none nested deeper than 16,
 * so a real trace needs few; a hostile one cannot make the search quadratic.
 */
#define BW_MAX_WALK_BACK 64

struct bw_ctx {
	const struct trace *t;
	struct derived_stacks *d;
	struct backward_stats *st;
	uint32_t *evals;		/* eval indices by (pid, tid, begin, depth) */
	uint32_t *nodes;		/* node indices by (pid, node_addr, ts) */
	int64_t *forward;		/* per eval: its node index, -1 for none */
	struct stack_maker made;
	uint64_t ips[BW_MAX_FRAMES];
};

static int cmp_eval(const void *a, const void *b, void *arg)
{
	const struct trace *t = arg;
	const struct xpu_rec_autograd_eval *x = &t->ag_evals[*(const uint32_t *)a];
	const struct xpu_rec_autograd_eval *y = &t->ag_evals[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->begin_ns != y->begin_ns)
		return x->begin_ns < y->begin_ns ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int cmp_node(const void *a, const void *b, void *arg)
{
	const struct trace *t = arg;
	const struct xpu_rec_autograd_node *x = &t->ag_nodes[*(const uint32_t *)a];
	const struct xpu_rec_autograd_node *y = &t->ag_nodes[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->node_addr != y->node_addr)
		return x->node_addr < y->node_addr ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* (a1, a2, a3) <= (b1, b2, b3) */
static bool key_le(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t b1, uint64_t b2, uint64_t b3)
{
	if (a1 != b1)
		return a1 < b1;
	if (a2 != b2)
		return a2 < b2;
	return a3 <= b3;
}

struct forward_key {
	const struct bw_ctx *c;
	const struct xpu_rec_autograd_eval *e;
};

static bool node_at_most(size_t i, const void *arg)
{
	const struct forward_key *k = arg;
	const struct xpu_rec_autograd_node *n = &k->c->t->ag_nodes[k->c->nodes[i]];

	return key_le(n->pid, n->node_addr, n->ts_ns, k->e->pid, k->e->node_addr, k->e->begin_ns);
}

/* The node whose forward record explains evaluation e: same address, latest before it. */
static int64_t find_forward(struct bw_ctx *c, const struct xpu_rec_autograd_eval *e)
{
	const struct trace *t = c->t;
	size_t lo = upper_bound(t->nag_nodes, node_at_most, &(struct forward_key){ c, e });
	const struct xpu_rec_autograd_node *n;

	if (!lo)
		goto none;
	n = &t->ag_nodes[c->nodes[lo - 1]];
	if (n->pid != e->pid || n->node_addr != e->node_addr)
		goto none;
	if (n->class_addr != e->class_addr) {
		c->st->unmatched[BW_OTHER_CLASS]++;
		return -1;
	}
	c->st->evals_matched++;
	return c->nodes[lo - 1];
none:
	c->st->unmatched[BW_NO_FORWARD]++;
	return -1;
}

/* Times the return address ip is among the user frames of st (a walk may store it less 1). */
static uint32_t count_frame(const struct tr_stack *st, uint64_t ip)
{
	uint32_t i, n = 0;

	for (i = 0; ip && i < st->nr_user; i++) {
		uint64_t f = st->ips[st->nr_kernel + i];

		n += f == ip || f + 1 == ip;
	}
	return n;
}

struct eval_key {
	const struct bw_ctx *c;
	uint32_t pid, tid;
	uint64_t ts;
};

static bool eval_at_most(size_t i, const void *arg)
{
	const struct eval_key *k = arg;
	const struct xpu_rec_autograd_eval *e = &k->c->t->ag_evals[k->c->evals[i]];

	return key_le(e->pid, e->tid, e->begin_ns, k->pid, k->tid, k->ts);
}

/*
 * The innermost evaluation of thread (pid, tid) running when an event with stack st was taken
 * at ts, as an index into t->ag_evals, or -1. An evaluation runs while the thread's stack holds
 * its return address (once more than the evaluations it runs inside). Walking back from the last
 * one begun: one that started before a later evaluation at its depth or shallower has ended.
 */
static int64_t eval_at(struct bw_ctx *c, uint32_t pid, uint32_t tid, uint64_t ts,
		       const struct tr_stack *st)
{
	uint32_t min_depth = UINT32_MAX, steps = 0;
	const struct trace *t = c->t;
	size_t lo = upper_bound(t->nag_evals, eval_at_most, &(struct eval_key){ c, pid, tid, ts });

	while (lo-- > 0) {
		const struct xpu_rec_autograd_eval *e = &t->ag_evals[c->evals[lo]];

		if (e->pid != pid || e->tid != tid)
			return -1;
		if (++steps > BW_MAX_WALK_BACK) {
			c->st->search_cut++;
			return -1;
		}
		if (e->depth >= min_depth)
			continue;
		if (count_frame(st, e->caller_ip) > e->depth)
			return c->evals[lo];
		if (!e->depth)
			return -1;
		min_depth = e->depth;
	}
	return -1;
}

/*
 * The stack of an event in evaluation ei: the event's frames from evaluate_function inwards,
 * the node frame, then the forward stack (or, without one, the engine's outer frames).
 * *attributed says which. 0 or -ENOMEM; *id unchanged when the event has no user stack.
 */
static int rewrite(struct bw_ctx *c, uint32_t *id, int64_t ei, uint32_t flags,
		   bool *attributed)
{
	const struct xpu_rec_autograd_eval *e = &c->t->ag_evals[ei];
	const struct tr_stack *ev = derived_stacks__get(c->d, *id), *fw = NULL;
	uint32_t ev_id = *id;
	uint32_t nk, nu, cut, i, n = 0;
	int64_t ni = c->forward[ei];
	bool outer_complete = flags & XPU_EVENT_USER_OUTERMOST;
	int err;

	*attributed = false;
	if (!ev || !ev->nr_user)
		return 0;
	nk = ev->nr_kernel;
	nu = ev->nr_user;
	/* user frames are leaf first: the caller's return address ends the node's own part */
	for (cut = 0; cut < nu; cut++) {
		uint64_t ip = ev->ips[nk + cut];

		if (ip == e->caller_ip || ip + 1 == e->caller_ip)
			break;
	}
	if (ni >= 0)
		fw = derived_stacks__get(c->d, c->d->ag_node_stack[ni]);
	for (i = 0; i < cut && n < BW_MAX_FRAMES - 1; i++)
		c->ips[n++] = ev->ips[nk + i];
	c->ips[n++] = BWF_MAKE(e->class_str);
	if (fw && fw->nr_user > 1) {
		/* the forward stack's leaf is the probed set_gradient_edge itself: not shown */
		for (i = 1; i < fw->nr_user && n < BW_MAX_FRAMES; i++)
			c->ips[n++] = fw->ips[fw->nr_kernel + i];
		*attributed = true;
		outer_complete = c->t->ag_nodes[ni].flags & XPU_EVENT_USER_OUTERMOST;
	} else {
		for (i = cut; i < nu && n < BW_MAX_FRAMES; i++)
			c->ips[n++] = ev->ips[nk + i];
	}
	err = derived_stacks__make(c->d, &c->made, ev->ips, (uint16_t)nk, c->ips, (uint16_t)n, id);
	if (!err && *id == ev_id) {
		/* past the derived stacks' bound: the event keeps its own stack, unattributed */
		*attributed = false;
		return 0;
	}
	if (!err && outer_complete && !kmap__put(&c->st->outermost, *id, 0, 1, NULL))
		err = -ENOMEM;
	return err;
}

/* One event of thread (pid, tid) at ts with stack *id: rewritten when inside an evaluation. */
static int apply_one(struct bw_ctx *c, uint32_t pid, uint32_t tid, uint64_t ts, uint32_t flags,
		     uint32_t *id, uint64_t *inside, uint64_t *attributed, int64_t *node)
{
	const struct tr_stack *st = derived_stacks__get(c->d, *id);
	int64_t ei;
	bool a;
	int err;

	*node = -1;
	if (!st || !st->nr_user)
		return 0;
	ei = eval_at(c, pid, tid, ts, st);
	if (ei < 0)
		return 0;
	(*inside)++;
	err = rewrite(c, id, ei, flags, &a);
	if (!err && a) {
		(*attributed)++;
		*node = c->forward[ei];
	}
	return err;
}

int backward__apply(struct derived_stacks *d, struct backward_stats *st)
{
	const struct trace *t = d->t;
	struct bw_ctx c = { .t = t, .d = d, .st = st, .made.next_id = BWF_FIRST_STACK_ID };
	int64_t node;
	size_t i;
	int err = 0;

	memset(st, 0, sizeof(*st));
	st->recorded = t->has_session && (t->session.flags & XPU_SESSION_AUTOGRAD);
	if (!t->nag_evals)
		return 0;
	c.evals = malloc(t->nag_evals * sizeof(*c.evals));
	c.nodes = malloc((t->nag_nodes ? t->nag_nodes : 1) * sizeof(*c.nodes));
	c.forward = malloc(t->nag_evals * sizeof(*c.forward));
	st->launch_forward = calloc(t->nlaunches ? t->nlaunches : 1, sizeof(*st->launch_forward));
	st->launch_backward = calloc(t->nlaunches ? t->nlaunches : 1, 1);
	if (!c.evals || !c.nodes || !c.forward || !st->launch_forward || !st->launch_backward) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->nag_evals; i++)
		c.evals[i] = (uint32_t)i;
	for (i = 0; i < t->nag_nodes; i++)
		c.nodes[i] = (uint32_t)i;
	qsort_r(c.evals, t->nag_evals, sizeof(*c.evals), cmp_eval, (void *)t);
	qsort_r(c.nodes, t->nag_nodes, sizeof(*c.nodes), cmp_node, (void *)t);
	for (i = 0; i < t->nag_evals; i++) {
		st->evals++;
		c.forward[i] = find_forward(&c, &t->ag_evals[i]);
	}
	for (i = 0; !err && i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];

		err = apply_one(&c, s->pid, s->tid, s->ts_ns, s->flags, &d->sample_stack[i], &st->samples,
				&st->samples_attributed, &node);
	}
	for (i = 0; !err && i < t->nlaunches; i++) {
		const struct xpu_rec_gpu_launch *l = &t->launches[i];

		uint64_t before = st->launches;

		err = apply_one(&c, l->pid, l->tid, l->ts_ns, l->flags, &d->launch_stack[i], &st->launches,
				&st->launches_attributed, &node);
		st->launch_backward[i] = st->launches != before;
		if (node >= 0)
			st->launch_forward[i] = (uint32_t)node + 1;
	}
	for (i = 0; !err && i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];

		err = apply_one(&c, o->pid, o->tid, o->ts_ns, o->flags, &d->offcpu_stack[i], &st->offcpus,
				&st->offcpus_attributed, &node);
	}
out:
	free(c.evals);
	free(c.nodes);
	free(c.forward);
	kmap__free(&c.made.dedup);
	return err;
}

bool backward__outermost(const struct backward_stats *st, uint32_t stack_id)
{
	return kmap__get(&st->outermost, stack_id, 0) != NULL;
}

int backward__name(const struct trace *t, uint64_t ip, char *buf, size_t len)
{
	const char *cls = BWF_CLASS(ip) ? trace__string(t, BWF_CLASS(ip)) : NULL;

	return snprintf(buf, len, "[backward] %s", cls && *cls ? cls : "node");
}

void backward__free(struct backward_stats *st)
{
	free(st->launch_forward);
	free(st->launch_backward);
	kmap__free(&st->outermost);
	st->launch_forward = NULL;
	st->launch_backward = NULL;
}
