// SPDX-License-Identifier: MIT
/*
 * Writes a small trace of PyTorch autograd records for the golden tests (backward attribution,
 * report/sym/backward.c), with the golden target's functions as frames:
 *   make_autograd OUT.xpu TARGET main app::Solver::step middle leaf_work
 * Process 400 runs the forward pass on thread 400: node A (class 0xa1) made under
 * main > middle, node B (class 0xb1) under main > app::Solver::step. Its engine thread 401 then
 * evaluates, each for 5 ms of samples (1 ms apart) inside evaluate_function (whose return address
 * into the engine, main+9, is in every such stack):
 *   10 ms  A as MmBackward0           -> under main > middle; one GPU launch and its kernel
 *   20 ms  B but of another class     -> not attributed (the address held a node of another class)
 *   30 ms  a node without a forward record (AccumulateGrad) -> not attributed
 *   40 ms  B as AddBackward0, and at 41 ms nested in it A again (a reentrant backward):
 *          samples at 42-43 ms hold the return address twice (A), at 44-45 ms once (B again)
 * A sample at 26 ms lacks the return address: the engine between two evaluations, unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_buildid.h"
#define TRACE_BUILD_PROG "make_autograd"
#include "../lib/trace_build.h"

#define BASE 0x555555554000ull
#define T0 1000000000ull
#define MS 1000000ull
#define NODE_A 0x7f0000001000ull
#define NODE_B 0x7f0000002000ull
#define CLASS_A 0x7e00000000a1ull
#define CLASS_B 0x7e00000000b1ull

static uint64_t a_main, a_step, a_mid, a_leaf;

static void forward_node(uint64_t ts, uint64_t node, uint64_t cls, uint64_t caller)
{
	/* leaf first: the probed function's entry (not shown), its caller, main */
	uint64_t ips[] = { BASE + a_leaf, BASE + caller + 5, BASE + a_main + 5 };
	struct xpu_rec_autograd_node n = {
		.ts_ns = ts, .pid = 400, .tid = 400, .node_addr = node, .class_addr = cls,
		.stack_id = stack(ips, 0, 3), .flags = XPU_EVENT_USER_OUTERMOST,
	};

	rec(XPU_REC_AUTOGRAD_NODE, &n, sizeof(n), ts);
}

static void eval(uint64_t ts, uint64_t node, uint64_t cls, const char *name, uint16_t depth)
{
	struct xpu_rec_autograd_eval e = {
		.begin_ns = ts, .pid = 400, .tid = 401, .node_addr = node, .class_addr = cls,
		.caller_ip = BASE + a_main + 9, .class_str = str(name), .depth = depth,
	};

	rec(XPU_REC_AUTOGRAD_EVAL, &e, sizeof(e), ts);
}

/* A sample of the engine thread: nested 0 (not in an evaluation), 1 or 2 evaluations deep. */
static void engine_sample(uint64_t ts, int nested)
{
	uint64_t ips[6];
	uint16_t n = 0;
	struct xpu_rec_cpu_sample s = { .ts_ns = ts, .pid = 400, .tid = 401,
					.flags = XPU_EVENT_USER_OUTERMOST };

	ips[n++] = BASE + a_leaf + 2;
	if (nested) {
		ips[n++] = BASE + a_step + 7;		/* the node's own work */
		ips[n++] = BASE + a_main + 9;	/* evaluate_function's return address */
	}
	if (nested > 1) {
		ips[n++] = BASE + a_mid + 9;
		ips[n++] = BASE + a_main + 9;
	}
	ips[n++] = BASE + a_main + 13;		/* the engine's thread main */
	s.stack_id = stack(ips, 0, n);
	rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), ts);
}

static void launch_and_kernel(uint64_t ts)
{
	uint64_t ips[] = { BASE + a_leaf + 3, BASE + a_step + 7, BASE + a_main + 9,
			   BASE + a_main + 13 };
	struct xpu_rec_gpu_launch l = {
		.ts_ns = ts, .pid = 400, .tid = 401, .corr_id = 7, .cbid = 211,
		.domain = XPU_API_RUNTIME, .stack_id = stack(ips, 0, 4),
		.flags = XPU_EVENT_USER_OUTERMOST,
	};
	struct xpu_rec_gpu_kernel k = {
		.start_ns = ts + MS / 10, .end_ns = ts + 3 * MS, .pid = 400, .corr_id = 7,
		.name_str = str("mm_backward_kernel"), .grid_x = 1, .grid_y = 1, .grid_z = 1,
		.block_x = 128, .block_y = 1, .block_z = 1,
	};

	rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), ts);
	rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), k.start_ns);
}

int main(int argc, char **argv)
{
	struct xpu_rec_session ses = { 0 };
	struct xpu_rec_session_end end = { 0 };
	struct xpu_rec_clock_sync cs = { T0, 1700000000000000000ull, T0 + 5, 120 };
	struct xpu_rec_dso dso = { 0 };
	struct xpu_rec_mapping m = { 0 };
	struct xpu_rec_task task = { 0 };
	struct xpu_rec_autograd_probe probe = { T0, 400, 1, XPU_AUTOGRAD_PROBED, 0 };
	struct {
		struct xpu_rec_stats h;
		struct xpu_stat_entry e[2];
	} st = { { 2, 0 }, { { XPU_STAT_AG_NODES, 0, 2 }, { XPU_STAT_AG_EVALS, 0, 5 } } };
	int i, n;

	if (argc != 7) {
		fprintf(stderr, "usage: make_autograd OUT TARGET main step middle leaf\n");
		return 2;
	}
	a_main = strtoull(argv[3], NULL, 16);
	a_step = strtoull(argv[4], NULL, 16);
	a_mid = strtoull(argv[5], NULL, 16);
	a_leaf = strtoull(argv[6], NULL, 16);
	open_trace(argv[1], NULL);

	ses.ncpu = 2;
	ses.page_size_bytes = 4096;
	ses.sample_freq_hz = 1000;
	ses.stack_mode = XPU_STACK_CFI;
	ses.flags = XPU_SESSION_AUTOGRAD | XPU_SESSION_GPU;
	ses.target_pid = 400;
	ses.start_mono_ns = T0;
	ses.start_realtime_ns = 1700000000000000000ull;
	ses.host_str = str("golden-host");
	ses.kernel_str = str("6.1.0-test #1 SMP");
	ses.arch_str = str("x86_64");
	ses.version_str = str("make_autograd");
	ses.cmdline_str = str("trainer");
	ses.options_str = str("xpu-record\0");
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	rec(XPU_REC_CLOCK_SYNC, &cs, sizeof(cs), T0);

	dso.id = 1;
	dso.path_str = str(argv[2]);
	dso.kind = XPU_DSO_ELF;
	n = elf_buildid__read_path(argv[2], dso.build_id, XPU_BUILD_ID_MAX);
	dso.build_id_len = n > 0 ? n : 0;
	rec(XPU_REC_DSO, &dso, sizeof(dso), 0);
	task.ts_ns = T0;
	task.kind = XPU_TASK_EXEC;
	task.pid = task.tid = 400;
	task.comm_str = str("trainer");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	task.kind = XPU_TASK_THREAD;
	task.tid = 401;
	task.comm_str = str("pt_autograd_0");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	m.ts_ns = T0;
	m.pid = 400;
	m.dso_id = 1;
	m.start = BASE;
	m.end = BASE + 0x10000;
	m.prot = 5;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	rec(XPU_REC_AUTOGRAD_PROBE, &probe, sizeof(probe), T0);

	forward_node(T0 + 1 * MS, NODE_A, CLASS_A, a_mid);
	forward_node(T0 + 2 * MS, NODE_B, CLASS_B, a_step);
	eval(T0 + 10 * MS, NODE_A, CLASS_A, "MmBackward0", 0);
	for (i = 1; i <= 5; i++)
		engine_sample(T0 + (10 + i) * MS, 1);
	launch_and_kernel(T0 + 12 * MS + MS / 2);
	eval(T0 + 20 * MS, NODE_B, CLASS_B + 0x100, "MulBackward0", 0);
	for (i = 1; i <= 5; i++)
		engine_sample(T0 + (20 + i) * MS, 1);
	engine_sample(T0 + 26 * MS, 0);
	eval(T0 + 30 * MS, 0x7f0000009000ull, 0x7e00000000c1ull, "AccumulateGrad", 0);
	for (i = 1; i <= 5; i++)
		engine_sample(T0 + (30 + i) * MS, 1);
	eval(T0 + 40 * MS, NODE_B, CLASS_B, "AddBackward0", 0);
	eval(T0 + 41 * MS, NODE_A, CLASS_A, "MmBackward0", 1);
	engine_sample(T0 + 42 * MS, 2);
	engine_sample(T0 + 43 * MS, 2);
	engine_sample(T0 + 44 * MS, 1);
	engine_sample(T0 + 45 * MS, 1);

	rec(XPU_REC_STATS, &st, sizeof(st), 0);
	end.end_mono_ns = T0 + 50 * MS;
	end.reason = XPU_END_TARGET_EXITED;
	rec(XPU_REC_SESSION_END, &end, sizeof(end), end.end_mono_ns);
	if (trace_writer__close(w))
		die("close");
	return 0;
}
