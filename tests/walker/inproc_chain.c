// SPDX-License-Identifier: MIT
/*
 * tests/walker/test_inproc_walk.c's chain: ipc_a -> ipc_b -> ipc_c -> ipc_leaf -> the walk,
 * built without frame pointers (-fomit-frame-pointer) so that only .eh_frame describes these
 * frames, and ipc_b leaves a garbage rbp behind it: a walk that followed frame pointers would
 * leave the stack there. Each level is noinline and calls the next in a non-tail position.
 */
#define NOINLINE __attribute__((noinline))

typedef void (*ipc_walk_fn)(void *arg);

volatile unsigned long ipc_sink;

NOINLINE void ipc_leaf(ipc_walk_fn fn, void *arg)
{
	volatile char pad[40];

	pad[0] = 1;
	fn(arg);
	ipc_sink += pad[0];
}

NOINLINE void ipc_c(ipc_walk_fn fn, void *arg)
{
	volatile unsigned long pad[9];

	pad[3] = 3;
	ipc_leaf(fn, arg);
	ipc_sink += pad[3];
}

NOINLINE void ipc_b(ipc_walk_fn fn, void *arg)
{
	/* rbp is callee-saved: the prologue saves it, its CFI says where */
	__asm__ volatile("movabs $0x4141414141414141, %%rbp" : : : "rbp");
	ipc_c(fn, arg);
	ipc_sink++;
}

NOINLINE void ipc_a(ipc_walk_fn fn, void *arg)
{
	volatile char pad[300];

	pad[7] = 7;
	ipc_b(fn, arg);
	ipc_sink += pad[7];
}

/*
 * The chain under a caller that leaves rbp = bp: ipc_b's prologue saves it, so the walk's rbp
 * above ipc_b is bp (the walk memo's saved-rbp check, tests/walker/test_inproc_walk.c).
 */
NOINLINE void ipc_with_rbp(ipc_walk_fn fn, void *arg, unsigned long bp)
{
	__asm__ volatile("mov %0, %%rbp" : : "r"(bp) : "rbp");
	ipc_a(fn, arg);
	ipc_sink++;
}
