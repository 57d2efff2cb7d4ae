// SPDX-License-Identifier: MIT
/*
 * A stand-in for libtorch_cpu.so, for tests/e2e/test_autograd_from_launch.sh: built as
 * libtorch_cpu.so (-fPIC -shared), it exports what xpu-record looks for in PyTorch's file under
 * PyTorch's names: set_gradient_edge() and Engine::evaluate_function() (the two probed
 * functions), at::sequence_number::peek() and get_and_increment() over a file-local
 * thread-local (the node counter, as in tests/unit/fixtures/seq_counter.c), and the vtables of
 * two node classes. fake_op() makes a node the way a PyTorch op does (the node and its number,
 * then the op's kernels, then the node set on the output); fake_backward() evaluates nodes the
 * way the engine does, each evaluation launching its backward kernel.
 */
#include <stdint.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static __thread uint64_t sequence_nr;

/* the Edge set_gradient_edge() gets: its node, the shared_ptr's control block, the output */
struct edge {
	void *node;
	void *ctrl;
	uint32_t input_nr;
};

/* a node object: its first word is its vtable pointer, as for any C++ polymorphic object */
struct node {
	const void *vptr;
	uint64_t payload[3];
};

uint64_t seq_peek(void) __asm__("_ZN2at15sequence_number4peekEv");
uint64_t seq_next(void) __asm__("_ZN2at15sequence_number17get_and_incrementEv");
void set_gradient_edge(void *var, struct edge *e)
	__asm__("_ZN5torch8autograd4impl17set_gradient_edgeERKN2at6TensorENS0_4EdgeE");
/* evaluate_function(graph_task, node, inputs, queue) as a member: the engine first; here the
 * fourth argument (InputBuffer& in PyTorch) is the backward kernel's launch */
void evaluate_function(void *engine, void *task, void *node, void (*launch)(void), void *queue)
	__asm__("_ZN5torch8autograd6Engine17evaluate_functionERKSt10shared_ptrINS0_9GraphTaskEE"
		"PNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE");

/* the vtables: a vtable pointer points 16 bytes in (past offset-to-top and the type info) */
static NOINLINE void mm_apply(void) { __asm__ volatile("" ::: "memory"); }
static NOINLINE void view_apply(void) { __asm__ volatile("" ::: "memory"); }
const void *const mm_vtable[4] __asm__("_ZTVN5torch8autograd9generated11MmBackward0E") = {
	NULL, NULL, (const void *)mm_apply, (const void *)mm_apply,
};
const void *const view_vtable[4] __asm__("_ZTVN5torch8autograd9generated13ViewBackward0E") = {
	NULL, NULL, (const void *)view_apply, (const void *)view_apply,
};

NOINLINE uint64_t seq_peek(void)
{
	return sequence_nr;
}

NOINLINE uint64_t seq_next(void)
{
	return sequence_nr++;
}

/* the output now has its grad_fn */
NOINLINE void set_gradient_edge(void *var, struct edge *e)
{
	*(void *volatile *)var = e->node;
	__asm__ volatile("" ::: "memory");
}

NOINLINE void evaluate_function(void *engine, void *task, void *node, void (*launch)(void),
				void *queue)
{
	__asm__ volatile("" ::: "memory");
	launch();
	__asm__ volatile("" ::: "memory");
}

/*
 * One op: its node (kind 0: a view's ViewBackward0, else MmBackward0) and number, its kernels
 * (launch, NULL for an op that launches nothing), then the node set on its output.
 */
NOINLINE void *fake_op(void (*launch)(void), int kind)
{
	struct node *n = calloc(1, sizeof(*n));
	struct edge e = { .node = n, .ctrl = NULL, .input_nr = 0 };
	void *var = NULL;

	if (!n)
		abort();
	n->vptr = kind ? &mm_vtable[2] : &view_vtable[2];
	seq_next();
	if (launch)
		launch();
	set_gradient_edge(&var, &e);
	__asm__ volatile("" ::: "memory");
	return n;
}

/* The engine: evaluate each node, each evaluation launching its backward kernel. */
NOINLINE void fake_backward(void **nodes, int n, void (*launch)(void))
{
	int engine = 0, task = 0, queue = 0, i;

	for (i = 0; i < n; i++)
		evaluate_function(&engine, &task, nodes[i], launch, &queue);
	__asm__ volatile("" ::: "memory");
}
