// SPDX-License-Identifier: MIT
/*
 * Writes a small synthetic trace for the golden tests, before real recorded traces exist:
 *   make_synthetic OUT.xpu TARGET main cxx_method middle leaf_work
 * TARGET is a binary built from target.c; the four ELF addresses (hex, from nm) become stack
 * frames in a mapping of TARGET at a PIE-like base. It also holds an unresolvable library
 * (frames must stay "libfoo.so+0x..."), kernel frames with a kallsyms snapshot, a second
 * process, GPU kernels/copies/memsets joined to launch stacks, and one kernel without one.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_buildid.h"
#define TRACE_BUILD_PROG "make_synthetic"
#include "../lib/trace_build.h"

#define BASE 0x555555554000ull
#define LIBFOO 0x7f0000000000ull
#define T0 1000000000ull

static void sample(uint64_t ts, uint32_t pid, uint32_t tid, uint32_t stack_id)
{
	struct xpu_rec_cpu_sample s = { ts, pid, tid, stack_id, 0, 0 };

	rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), ts);
}

int main(int argc, char **argv)
{
	/* small frames, so that a cut file still has complete frames before the cut */
	struct trace_writer_opts wo = { .frame_raw_bytes = 1024 };
	uint64_t a_main, a_cxx, a_mid, a_leaf;
	static const char ksyms[] = "ffffffff81000000 T entry_SYSCALL_64\n"
				    "ffffffff81001000 T do_syscall_64\n"
				    "ffffffff81002000 t __x64_sys_write\n"
				    "ffffffff81003000 D some_data\n";
	static const char cmdline[] = "synthetic\0--iterations\0" "3";
	struct xpu_rec_session ses = { 0 };
	struct xpu_rec_session_end end = { 0 };
	struct xpu_rec_clock_sync cs = { T0, 1700000000000000000ull, T0 + 5, 120 };
	struct xpu_rec_dso dso = { 0 };
	struct xpu_rec_mapping m = { 0 };
	struct xpu_rec_task task = { 0 };
	struct xpu_rec_lost lost = { 0 };
	struct xpu_rec_ksyms ks = { 0, sizeof(ksyms) - 1 };
	uint32_t s_user, s_kern, s_lib, s_launch, s_leafonly, s_anon, s_nofile, i;
	int n;

	if (argc != 7) {
		fprintf(stderr, "usage: make_synthetic OUT TARGET main cxx middle leaf\n");
		return 2;
	}
	a_main = strtoull(argv[3], NULL, 16);
	a_cxx = strtoull(argv[4], NULL, 16);
	a_mid = strtoull(argv[5], NULL, 16);
	a_leaf = strtoull(argv[6], NULL, 16);
	open_trace(argv[1], &wo);

	ses.ncpu = 2;
	ses.page_size_bytes = 4096;
	ses.sample_freq_hz = 99;
	ses.stack_mode = XPU_STACK_FP;
	ses.flags = XPU_SESSION_KERNEL_STACKS | XPU_SESSION_GPU;
	ses.target_pid = 100;
	ses.start_mono_ns = T0;
	ses.start_realtime_ns = 1700000000000000000ull;
	ses.host_str = str("golden-host");
	ses.kernel_str = str("6.1.0-test #1 SMP");
	ses.arch_str = str("x86_64");
	ses.version_str = str("synthetic");
	ses.cmdline_str = trace_writer__intern_string(w, cmdline, sizeof(cmdline));
	ses.options_str = str("xpu-record\0");
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	rec(XPU_REC_CLOCK_SYNC, &cs, sizeof(cs), T0);
	if (trace_writer__append2(w, XPU_REC_KSYMS, &ks, sizeof(ks), ksyms, ks.len, 0))
		die("ksyms");

	/* DSO 1: the target binary with its real build-id; DSO 2: a library nobody has */
	dso.id = 1;
	dso.path_str = str(argv[2]);
	dso.kind = XPU_DSO_ELF;
	n = elf_buildid__read_path(argv[2], dso.build_id, XPU_BUILD_ID_MAX);
	dso.build_id_len = n > 0 ? n : 0;
	rec(XPU_REC_DSO, &dso, sizeof(dso), 0);
	memset(&dso, 0, sizeof(dso));
	dso.id = 2;
	dso.path_str = str("/opt/missing/libfoo.so.1");
	dso.kind = XPU_DSO_ELF;
	dso.build_id_len = 20;
	memset(dso.build_id, 0xab, 20);
	rec(XPU_REC_DSO, &dso, sizeof(dso), 0);
	memset(&dso, 0, sizeof(dso));
	/* DSO 4: anonymous memory (JIT code without symbols); mapped DSO 9 has no DSO record */
	dso.id = 4;
	dso.path_str = str("//anon");
	dso.kind = XPU_DSO_ANON;
	rec(XPU_REC_DSO, &dso, sizeof(dso), 0);
	memset(&dso, 0, sizeof(dso));
	dso.id = 3;
	dso.path_str = str("/usr/local/cuda/lib64/libcudart.so.12");
	dso.kind = XPU_DSO_ELF;
	rec(XPU_REC_DSO, &dso, sizeof(dso), 0);

	/* processes 100 (two threads) and 200, both mapping the target */
	task.ts_ns = T0;
	task.kind = XPU_TASK_EXEC;
	task.pid = task.tid = 100;
	task.comm_str = str("synth");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	task.kind = XPU_TASK_THREAD;
	task.tid = 101;
	task.comm_str = str("synth-worker");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	task.kind = XPU_TASK_COMM;
	task.pid = task.tid = 200;
	task.comm_str = str("helper");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	for (i = 0; i < 2; i++) {
		m.ts_ns = T0;
		m.pid = i ? 200 : 100;
		m.dso_id = 1;
		m.start = BASE;
		m.end = BASE + 0x10000;
		m.pgoff = 0;
		m.prot = 5;
		rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	}
	m.pid = 100;
	m.dso_id = 2;
	m.start = LIBFOO;
	m.end = LIBFOO + 0x20000;
	m.pgoff = 0x1000;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	m.dso_id = 3;
	m.start = LIBFOO + 0x100000;
	m.end = LIBFOO + 0x180000;
	m.pgoff = 0;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	m.dso_id = 4;
	m.start = LIBFOO + 0x200000;
	m.end = LIBFOO + 0x210000;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	m.dso_id = 9;
	m.start = LIBFOO + 0x300000;
	m.end = LIBFOO + 0x310000;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);

	{
		/* return addresses point just past a call: +5 keeps them inside the caller */
		uint64_t user[] = { BASE + a_leaf + 2, BASE + a_mid + 5, BASE + a_cxx + 5,
				    BASE + a_main + 5 };
		uint64_t kern[] = { 0xffffffff81002010ull, 0xffffffff81001020ull,
				    0xffffffff81000030ull, BASE + a_mid + 1, BASE + a_cxx + 5,
				    BASE + a_main + 5 };
		uint64_t lib[] = { LIBFOO + 0x1234, LIBFOO + 0x5679, BASE + a_main + 5 };
		uint64_t launch[] = { LIBFOO + 0x100100, LIBFOO + 0x100205, BASE + a_cxx + 5,
				      BASE + a_main + 5 };
		uint64_t leafonly[] = { 0x1000 };	/* in no mapping */
		/* outermost in anonymous memory; in a mapping whose file the trace lacks */
		uint64_t anon[] = { BASE + a_leaf + 2, LIBFOO + 0x200040 };
		uint64_t nofile[] = { BASE + a_leaf + 2, LIBFOO + 0x300010 };

		s_user = stack(user, 0, 4);
		s_kern = stack(kern, 3, 3);
		s_lib = stack(lib, 0, 3);
		s_launch = stack(launch, 0, 4);
		s_leafonly = stack(leafonly, 0, 1);
		s_anon = stack(anon, 0, 2);
		s_nofile = stack(nofile, 0, 2);
	}
	{
		/* since 1.4: JIT code of pid 200 names its leaf-only stack; a zero-size one is refused */
		struct xpu_rec_jit_symbol js = { .start = 0xff0, .size_bytes = 0x20, .pid = 200,
						 .source = XPU_JIT_PERF_MAP };

		js.name_str = str("py::hot_loop:/srv/app.py");
		rec(XPU_REC_JIT_SYMBOL, &js, sizeof(js), 0);
		js.size_bytes = 0;
		js.name_str = str("empty");
		rec(XPU_REC_JIT_SYMBOL, &js, sizeof(js), 0);
	}
	for (i = 0; i < 40; i++)
		sample(T0 + 1000000 * (i + 1), 100, 100, s_user);
	/* SYNTH_SAMPLES=N adds N more samples: a load for timing the report */
	if (getenv("SYNTH_SAMPLES")) {
		uint32_t extra = strtoul(getenv("SYNTH_SAMPLES"), NULL, 10), st[] = { s_user, s_kern, s_lib };

		for (i = 0; i < extra; i++)
			sample(T0 + 2000000000ull + i * 1000ull, 100, 100 + i % 7, st[i % 3]);
	}
	for (i = 0; i < 15; i++)
		sample(T0 + 1000000 * (i + 1) + 7, 100, 101, s_kern);
	for (i = 0; i < 7; i++)
		sample(T0 + 1000000 * (i + 1) + 9, 100, 101, s_lib);
	for (i = 0; i < 5; i++)
		sample(T0 + 1000000 * (i + 1) + 3, 200, 200, s_user);
	sample(T0 + 77, 200, 200, s_leafonly);
	sample(T0 + 78, 200, 200, 0);
	sample(T0 + 79, 200, 200, 999999);	/* a stack id never defined */
	for (i = 0; i < 3; i++)
		sample(T0 + 1000000 * (i + 1) + 11, 100, 101, s_anon);
	for (i = 0; i < 2; i++)
		sample(T0 + 1000000 * (i + 1) + 13, 100, 101, s_nofile);

	/* GPU: two launches; launch 7 is a graph with two kernels */
	{
		struct xpu_rec_gpu_launch l = { T0 + 500, 100, 100, 7, 0, XPU_API_RUNTIME, s_launch };
		struct xpu_rec_gpu_kernel k = { 0 };
		struct xpu_rec_gpu_memcpy mc = { 0 };
		struct xpu_rec_gpu_memset ms = { 0 };

		rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);
		l.corr_id = 8;
		l.ts_ns += 100;
		rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);
		k.pid = 100;
		k.corr_id = 7;
		k.name_str = str("_Z5saxpyifPfS_");
		k.start_ns = T0 + 1000;
		k.end_ns = k.start_ns + 30000000;	/* 30 ms: ~2.97 samples at 99 Hz */
		rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), k.start_ns);
		k.name_str = str("_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE");
		k.start_ns += 40000000;
		k.end_ns = k.start_ns + 12000000;
		k.flags = XPU_GPU_IN_GRAPH;
		rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), k.start_ns);
		k.corr_id = 12345;	/* no launch record */
		k.name_str = str("reduce_kernel");
		k.start_ns += 20000000;
		k.end_ns = k.start_ns + 25000000;
		rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), k.start_ns);
		mc.pid = 100;
		mc.corr_id = 8;
		mc.copy_kind = XPU_MEMCPY_HTOD;
		mc.bytes = 1 << 20;
		mc.start_ns = T0 + 2000;
		mc.end_ns = mc.start_ns + 10100000;
		rec(XPU_REC_GPU_MEMCPY, &mc, sizeof(mc), mc.start_ns);
		ms.pid = 100;
		ms.corr_id = 8;
		ms.start_ns = T0 + 3000;
		ms.end_ns = ms.start_ns + 1000;	/* 1 us, 1e-4 of a sample: must still show */
		rec(XPU_REC_GPU_MEMSET, &ms, sizeof(ms), ms.start_ns);
	}

	/*
	 * GPU report sections: a device name, a copy the other way, a kernel on device 1 that
	 * starts before its launch stack and its API call (clock sanity), a synchronize call
	 * with a launch stack and the driver call nested in it (counted once), sync activities
	 * (one duplicating the call, one alone), and CUPTI process states.
	 */
	{
		struct xpu_rec_gpu_device d = { 100, 0, str("Synthetic GPU"), 9, 0, 132, 80ull << 30 };
		struct xpu_rec_gpu_launch l = { T0 + 50000000, 100, 100, 9, 0, XPU_API_RUNTIME,
						s_launch };
		struct xpu_rec_gpu_memcpy mc = { 0 };
		struct xpu_rec_gpu_kernel k = { 0 };
		struct xpu_rec_gpu_api api = { 0 };
		struct xpu_rec_gpu_sync sy = { 0 };
		struct xpu_rec_gpu_process gp = { 0 };

		rec(XPU_REC_GPU_DEVICE, &d, sizeof(d), 0);
		rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);
		mc.pid = 100;
		mc.corr_id = 9;
		mc.copy_kind = XPU_MEMCPY_DTOH;
		mc.bytes = 4 << 20;
		mc.start_ns = T0 + 50100000;
		mc.end_ns = mc.start_ns + 2000000;
		rec(XPU_REC_GPU_MEMCPY, &mc, sizeof(mc), mc.start_ns);

		l = (struct xpu_rec_gpu_launch){ T0 + 60000000, 100, 101, 13, 0, XPU_API_RUNTIME,
						 s_user };
		rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);
		api = (struct xpu_rec_gpu_api){ T0 + 60000000 - 200, T0 + 60000000 + 3000, 100, 101,
						13, 0, XPU_API_RUNTIME,
						str("cudaLaunchKernel_v7000"), 0, 0 };
		rec(XPU_REC_GPU_API, &api, sizeof(api), api.start_ns);
		k.pid = 100;
		k.corr_id = 13;
		k.device = 1;
		k.name_str = str("_Z5saxpyifPfS_");
		k.start_ns = T0 + 60000000 - 500;	/* before the launch and its API call */
		k.end_ns = k.start_ns + 4000000;
		rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), k.start_ns);

		l = (struct xpu_rec_gpu_launch){ T0 + 70000000, 100, 100, 10, 0, XPU_API_RUNTIME,
						 s_launch };
		rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);
		api = (struct xpu_rec_gpu_api){ T0 + 70000000, T0 + 78000000, 100, 100, 10, 0,
						XPU_API_RUNTIME,
						str("cudaDeviceSynchronize_v3020"), 0, 0 };
		rec(XPU_REC_GPU_API, &api, sizeof(api), api.start_ns);
		api = (struct xpu_rec_gpu_api){ T0 + 70001000, T0 + 77999000, 100, 100, 11, 0,
						XPU_API_DRIVER, str("cuCtxSynchronize"), 0, 0 };
		rec(XPU_REC_GPU_API, &api, sizeof(api), api.start_ns);
		sy = (struct xpu_rec_gpu_sync){ T0 + 70001000, T0 + 77999000, 100, 10,
						XPU_SYNC_CONTEXT, 1, 0xffffffffu, 0 };
		rec(XPU_REC_GPU_SYNC, &sy, sizeof(sy), sy.start_ns);
		sy = (struct xpu_rec_gpu_sync){ T0 + 80000000, T0 + 81500000, 100, 20,
						XPU_SYNC_STREAM, 1, 7, 0 };
		rec(XPU_REC_GPU_SYNC, &sy, sizeof(sy), sy.start_ns);
		sy = (struct xpu_rec_gpu_sync){ T0 + 82000000, T0 + 83000000, 100, 21,
						XPU_SYNC_STREAM_WAIT_EVENT, 1, 7, 0 };
		rec(XPU_REC_GPU_SYNC, &sy, sizeof(sy), sy.start_ns);

		gp = (struct xpu_rec_gpu_process){ T0 + 100, 100, XPU_GPU_PROC_CONNECTED, 0, 0 };
		rec(XPU_REC_GPU_PROCESS, &gp, sizeof(gp), gp.ts_ns);
		gp = (struct xpu_rec_gpu_process){ T0 + 200, 100, XPU_GPU_PROC_CLOCK_FALLBACK, 0,
						   -1234 };
		rec(XPU_REC_GPU_PROCESS, &gp, sizeof(gp), gp.ts_ns);
		gp = (struct xpu_rec_gpu_process){ T0 + 300, 200, XPU_GPU_PROC_NO_CUPTI, 0, 0 };
		rec(XPU_REC_GPU_PROCESS, &gp, sizeof(gp), gp.ts_ns);
		gp = (struct xpu_rec_gpu_process){ T0 + 95000000, 100, XPU_GPU_PROC_FLUSHED, 5, 0 };
		rec(XPU_REC_GPU_PROCESS, &gp, sizeof(gp), gp.ts_ns);
	}

	lost.ts_ns = T0 + 90000000;
	lost.source = XPU_LOST_RINGBUF;
	lost.count = 3;
	rec(XPU_REC_LOST, &lost, sizeof(lost), lost.ts_ns);
	/*
	 * Processes that exited before their mappings were read: three short-lived ones without
	 * a sample (nothing lost: one summary line) and pid 200, whose samples lose their names.
	 */
	lost.source = XPU_LOST_MAPPINGS;
	lost.count = 1;
	for (i = 0; i < 4; i++) {
		lost.pid = i < 3 ? 300 + i : 200;
		rec(XPU_REC_LOST, &lost, sizeof(lost), lost.ts_ns);
	}
	lost.pid = 0;
	end.end_mono_ns = T0 + 100000000;
	end.reason = XPU_END_TARGET_EXITED;
	end.exit_code = 0;
	rec(XPU_REC_SESSION_END, &end, sizeof(end), end.end_mono_ns);
	if (trace_writer__close(w))
		die("close");
	return 0;
}
