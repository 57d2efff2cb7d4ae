// SPDX-License-Identifier: MIT
/*
 * Writes a small --off-cpu trace for the golden tests:
 *   make_offcpu OUT.xpu TARGET main middle leaf_work
 * Process 300 has 50 CPU samples (50 ms at 1000 Hz) in leaf_work, a 50 ms sleep under middle
 * and a 2 ms preemption without a stack; its thread 301 never runs a sample: it sleeps 30 ms
 * in leaf_work (woken by 300) and waits 5 ms in D state under main. The STATS and a LOST
 * record of source 8 say what the recorder did not keep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_buildid.h"
#define TRACE_BUILD_PROG "make_offcpu"
#include "../lib/trace_build.h"

#define BASE 0x555555554000ull
#define T0 1000000000ull
#define MS 1000000ull

static void block(uint64_t ts, uint32_t tid, uint64_t dur, uint16_t state, uint32_t stack_id,
		  uint32_t waker)
{
	struct xpu_rec_off_cpu o = {
		.ts_ns = ts, .dur_ns = dur, .pid = 300, .tid = tid, .stack_id = stack_id,
		.waker_tid = waker, .state = state, .flags = stack_id ? 0 : XPU_OFF_NO_STACK,
	};

	rec(XPU_REC_OFF_CPU, &o, sizeof(o), ts);
}

int main(int argc, char **argv)
{
	struct xpu_rec_session ses = { 0 };
	struct xpu_rec_session_end end = { 0 };
	struct xpu_rec_clock_sync cs = { T0, 1700000000000000000ull, T0 + 5, 120 };
	struct xpu_rec_dso dso = { 0 };
	struct xpu_rec_mapping m = { 0 };
	struct xpu_rec_task task = { 0 };
	struct xpu_rec_lost lost = { 0 };
	struct {
		struct xpu_rec_stats h;
		struct xpu_stat_entry e[6];
	} st = { { 6, 0 }, {
		{ XPU_STAT_OFF_CPU_MIN_NS, 0, MS }, { XPU_STAT_OFF_CPU_BLOCKS, 0, 4 },
		{ XPU_STAT_OFF_CPU_SHORT, 0, 120 }, { XPU_STAT_OFF_CPU_NO_STACK, 0, 1 },
		{ XPU_STAT_OFF_CPU_LOST, 0, 1 }, { XPU_STAT_OFF_CPU_OPEN, 0, 0 } } };
	uint64_t a_main, a_mid, a_leaf;
	uint32_t s_leaf, s_mid, s_main, i;
	int n;

	if (argc != 6) {
		fprintf(stderr, "usage: make_offcpu OUT TARGET main middle leaf\n");
		return 2;
	}
	a_main = strtoull(argv[3], NULL, 16);
	a_mid = strtoull(argv[4], NULL, 16);
	a_leaf = strtoull(argv[5], NULL, 16);
	open_trace(argv[1], NULL);

	ses.ncpu = 2;
	ses.page_size_bytes = 4096;
	ses.sample_freq_hz = 1000;
	ses.stack_mode = XPU_STACK_FP;
	ses.flags = XPU_SESSION_OFF_CPU;
	ses.target_pid = 300;
	ses.start_mono_ns = T0;
	ses.start_realtime_ns = 1700000000000000000ull;
	ses.host_str = str("golden-host");
	ses.kernel_str = str("6.1.0-test #1 SMP");
	ses.arch_str = str("x86_64");
	ses.version_str = str("make_offcpu");
	ses.cmdline_str = str("blocker");
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
	task.pid = task.tid = 300;
	task.comm_str = str("blocker");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	task.kind = XPU_TASK_THREAD;
	task.tid = 301;
	task.comm_str = str("blk-reader");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	m.ts_ns = T0;
	m.pid = 300;
	m.dso_id = 1;
	m.start = BASE;
	m.end = BASE + 0x10000;
	m.prot = 5;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	{
		uint64_t leaf[] = { BASE + a_leaf + 2, BASE + a_mid + 5, BASE + a_main + 5 };
		uint64_t mid[] = { BASE + a_mid + 2, BASE + a_main + 5 };
		uint64_t mn[] = { BASE + a_main + 2 };

		s_leaf = stack(leaf, 0, 3);
		s_mid = stack(mid, 0, 2);
		s_main = stack(mn, 0, 1);
	}
	for (i = 0; i < 50; i++) {
		struct xpu_rec_cpu_sample s = { T0 + (1 + i) * MS, 300, 300, s_leaf, 0, 0, 0, 0 };

		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	}
	block(T0 + 52 * MS, 300, 50 * MS, XPU_OFF_SLEEPING, s_mid, 0);
	block(T0 + 10 * MS, 300, 2 * MS, XPU_OFF_PREEMPTED, 0, 0);
	block(T0 + 5 * MS, 301, 30 * MS, XPU_OFF_SLEEPING, s_leaf, 300);
	block(T0 + 40 * MS, 301, 5 * MS, XPU_OFF_BLOCKED, s_main, 0);
	lost.ts_ns = T0 + 110 * MS;
	lost.source = XPU_LOST_OFF_CPU;
	lost.count = 1;
	rec(XPU_REC_LOST, &lost, sizeof(lost), lost.ts_ns);
	rec(XPU_REC_STATS, &st, sizeof(st), 0);
	end.end_mono_ns = T0 + 110 * MS;
	end.reason = XPU_END_TARGET_EXITED;
	rec(XPU_REC_SESSION_END, &end, sizeof(end), end.end_mono_ns);
	if (trace_writer__close(w))
		die("close");
	return 0;
}
