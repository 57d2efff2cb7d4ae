// SPDX-License-Identifier: MIT
/*
 * Writes a synthetic trace for the timeline tests: two threads with CPU samples, CUDA API
 * calls (runtime calls with nested driver calls), NVTX ranges and markers, kernels on two
 * streams of two devices, a graph launch, copies and a memset, a launch known only from its
 * GPU_LAUNCH record, and names that JSON and XML must escape (quotes, backslashes, control
 * bytes, invalid UTF-8, a 4-byte character).
 *   make_gpu_trace OUT.xpu
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_BUILD_PROG "make_gpu_trace"
#include "../lib/trace_build.h"

#define T0 5000000000ull
#define US 1000ull
#define MS 1000000ull

static void api(uint64_t s, uint64_t e, uint32_t tid, uint32_t corr, uint32_t domain,
		const char *name)
{
	struct xpu_rec_gpu_api a = { s, e, 300, tid, corr, 13, domain, str(name), 0, 0 };

	rec(XPU_REC_GPU_API, &a, sizeof(a), s);
}

static void kernel(uint64_t s, uint64_t e, uint32_t corr, uint32_t dev, uint32_t stream,
		   const char *name, uint16_t flags)
{
	struct xpu_rec_gpu_kernel k = { s, e, 300, corr, str(name), dev, 1, stream, 128, 2, 1,
					256, 1, 1, 4096, 1024, 32, flags, flags ? 5 : 0, 0 };

	rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), s);
}

static void nvtx(uint64_t s, uint64_t e, uint32_t tid, const char *name, uint32_t kind,
		 uint32_t color)
{
	struct xpu_rec_nvtx n = { s, e, 300, tid, str(name), kind == XPU_NVTX_RANGE ? str("app") : 0,
				  kind, color };

	rec(XPU_REC_NVTX, &n, sizeof(n), s);
}

int main(int argc, char **argv)
{
	static const uint64_t ips[][4] = {
		{ 0x401000, 0x402000, 0x403000, 0x404000 },
		{ 0x401000, 0x402000, 0x405000, 0 },
		{ 0x401000, 0x406000, 0, 0 },
	};
	static const char cmdline[] = "gpu_app\0--size\0" "1<<20";
	struct trace_writer_opts wo = { 0 };
	struct xpu_rec_session ses = { 0 };
	struct xpu_rec_session_end end = { 0 };
	struct xpu_rec_clock_sync cs[2] = {
		{ T0, 1750000000000000000ull, T0, 100 },
		/* realtime ran 20 us fast over the second */
		{ T0 + 1000 * MS, 1750000000000000000ull + 1000 * MS + 20 * US, T0 + 1000 * MS, 100 },
	};
	struct xpu_rec_task task = { 0 };
	struct xpu_rec_gpu_device dev = { 300, 0, 0, 9, 0, 132, 80ull << 30 };
	struct xpu_rec_gpu_memcpy m = { 0 };
	struct xpu_rec_gpu_memset ms = { 0 };
	struct xpu_rec_gpu_launch l = { 0 };
	uint32_t stacks[3], i;

	if (argc != 2) {
		fprintf(stderr, "usage: make_gpu_trace OUT.xpu\n");
		return 2;
	}
	open_trace(argv[1], &wo);
	ses.ncpu = 8;
	ses.page_size_bytes = 4096;
	ses.sample_freq_hz = 1000;
	ses.stack_mode = XPU_STACK_FP;
	ses.flags = XPU_SESSION_GPU;
	ses.target_pid = 300;
	ses.start_mono_ns = T0;
	ses.start_realtime_ns = cs[0].realtime_ns;
	ses.host_str = str("viewer-host");
	ses.kernel_str = str("6.1.0-test");
	ses.arch_str = str("x86_64");
	ses.version_str = str("synthetic");
	ses.cmdline_str = trace_writer__intern_string(w, cmdline, sizeof(cmdline));
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	rec(XPU_REC_CLOCK_SYNC, &cs[0], sizeof(cs[0]), T0);

	task.ts_ns = T0;
	task.kind = XPU_TASK_EXEC;
	task.pid = task.tid = 300;
	task.comm_str = str("gpu\"app\\\x01\xff");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	task.kind = XPU_TASK_THREAD;
	task.tid = 301;
	task.comm_str = str("worker \xf0\x9f\x9a\x80");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	dev.name_str = str("Synthetic GPU \"H\"");
	rec(XPU_REC_GPU_DEVICE, &dev, sizeof(dev), T0);
	dev.device = 1;
	rec(XPU_REC_GPU_DEVICE, &dev, sizeof(dev), T0);

	for (i = 0; i < 3; i++) {
		stacks[i] = trace_writer__intern_stack(w, ips[i], 0, i == 0 ? 4 : i == 1 ? 3 : 2);
		if (!stacks[i])
			die("stack");
	}
	/* 400 samples per thread at 1 kHz with a gap: stacks change every 10 samples */
	for (i = 0; i < 400; i++) {
		struct xpu_rec_cpu_sample s = { T0 + 10 * MS + i * MS, 300, 300,
						stacks[(i / 10) % 3], 0, 0 };

		if (i >= 200 && i < 220)
			continue;
		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
		s.tid = 301;
		s.stack_id = stacks[(i / 7) % 3];
		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	}

	/* 50 iterations on thread 300, each 8 ms: an NVTX range around launch, copy, memset */
	for (i = 0; i < 50; i++) {
		uint64_t b = T0 + 20 * MS + i * 8 * MS;
		uint32_t corr = 100 + i * 10;
		static const char *const names[] = {
			"_ZN6thrust8cuda_cub4core13_kernel_agentINS_6detail5saxpyEEEvT_",
			"quote\"back\\slash\ttab\x01\x1f ctrl",
			"bad utf8 \xc3\x28 \xe2\x82 \xed\xa0\x80 \xf8\x88\x80\x80\x80 end\xc3",
			"rocket \xf0\x9f\x9a\x80 caf\xc3\xa9 \xe2\x82\xac",
		};

		nvtx(b, b + 6 * MS, 300, i % 5 ? "step" : "step <&'\">", XPU_NVTX_RANGE,
		     0xff00ff00);
		api(b + 10 * US, b + 60 * US, 300, corr, XPU_API_RUNTIME, "cudaLaunchKernel_v7000");
		api(b + 20 * US, b + 50 * US, 300, corr + 1, XPU_API_DRIVER, "cuLaunchKernel");
		kernel(b + 100 * US, b + 2 * MS, corr, i % 2, 7 + i % 2, names[i % 4], 0);

		api(b + 100 * US, b + 3 * MS, 300, corr + 2, XPU_API_RUNTIME, "cudaMemcpy_v3020");
		memset(&m, 0, sizeof(m));
		m.start_ns = b + 2100 * US;
		m.end_ns = b + 2900 * US;
		m.bytes = 8 << 20;
		m.pid = 300;
		m.corr_id = corr + 2;
		m.device = i % 2;
		m.context = 1;
		m.stream = 7 + i % 2;
		m.copy_kind = i % 3 == 2 ? XPU_MEMCPY_PTOP : XPU_MEMCPY_HTOD + i % 2;
		m.src_kind = XPU_MEM_PINNED;
		m.dst_kind = XPU_MEM_DEVICE;
		m.src_device = 0;
		m.dst_device = 1;
		rec(XPU_REC_GPU_MEMCPY, &m, sizeof(m), m.start_ns);

		api(b + 3100 * US, b + 3150 * US, 300, corr + 3, XPU_API_RUNTIME, "cudaMemsetAsync");
		memset(&ms, 0, sizeof(ms));
		ms.start_ns = b + 3200 * US;
		ms.end_ns = b + 3300 * US;
		ms.bytes = 1 << 20;
		ms.pid = 300;
		ms.corr_id = corr + 3;
		ms.device = i % 2;
		ms.context = 1;
		ms.stream = 7 + i % 2;
		ms.mem_kind = XPU_MEM_DEVICE;
		rec(XPU_REC_GPU_MEMSET, &ms, sizeof(ms), ms.start_ns);
		nvtx(b + 3500 * US, b + 3500 * US, 300, "marker", XPU_NVTX_MARKER, 0);
	}
	/* thread 301: a graph launch of three kernels on stream 9, and a launch-record-only one */
	api(T0 + 100 * MS, T0 + 101 * MS, 301, 5000, XPU_API_RUNTIME, "cudaGraphLaunch_v10000");
	for (i = 0; i < 3; i++)
		kernel(T0 + 102 * MS + i * MS, T0 + 102 * MS + i * MS + 900 * US, 5000, 0, 9,
		       "graph_node_kernel", XPU_GPU_IN_GRAPH);
	l = (struct xpu_rec_gpu_launch){ T0 + 200 * MS, 300, 301, 6000, 13, XPU_API_RUNTIME, 0 };
	rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);
	kernel(T0 + 201 * MS, T0 + 205 * MS, 6000, 0, 9, "launch_record_only", 0);
	kernel(T0 + 300 * MS, T0 + 301 * MS, 7777, 0, 9, "no_launch_at_all", 0);
	nvtx(T0 + 100 * MS, T0 + 110 * MS, 301, "graph", XPU_NVTX_RANGE, 0);

	rec(XPU_REC_CLOCK_SYNC, &cs[1], sizeof(cs[1]), cs[1].mono_ns);
	end.end_mono_ns = T0 + 1000 * MS;
	end.reason = XPU_END_TARGET_EXITED;
	rec(XPU_REC_SESSION_END, &end, sizeof(end), end.end_mono_ns);
	if (trace_writer__close(w))
		die("close");
	return 0;
}
