// SPDX-License-Identifier: MIT
/*
 * Unit tests of the clock alignment of several traces (report/trace/merge.c) and of
 * the per-record remapping (report/trace/remap.c).
 */
#include <string.h>

#include "trace/merge.h"
#include "unit.h"

#define S 1000000000ll

static void align_tests(void)
{
	/* host a: offset 100 s; host b: offset 250 s and starts 1 s after a (in realtime) */
	struct part_clock two_hosts[] = {
		{ .start_mono = 50 * S, .start_real = 150 * S, .offset_ns = 100 * S },
		{ .start_mono = 10 * S, .start_real = 151 * S, .offset_ns = 141 * S },
	};
	const char *hosts_ab[] = { "a", "b" };
	/* one host, one boot: offsets that differ by NTP slew (3 ms) share the first one's */
	struct part_clock one_host[] = {
		{ .start_mono = 20 * S, .start_real = 120 * S + 3000000, .offset_ns = 100 * S + 3000000 },
		{ .start_mono = 10 * S, .start_real = 110 * S, .offset_ns = 100 * S },
	};
	const char *hosts_aa[] = { "a", "a" };
	/* one host name, two boots (offsets hours apart): aligned by realtime */
	struct part_clock reboot[] = {
		{ .start_mono = 5 * S, .start_real = 10005 * S, .offset_ns = 10000 * S },
		{ .start_mono = 10 * S, .start_real = 110 * S, .offset_ns = 100 * S },
	};
	int64_t shift[2];
	size_t ref;

	ref = trace_merge__align(two_hosts, hosts_ab, 2, shift);
	CHECK(ref == 0, "the trace that starts first in realtime is the axis: %zu", ref);
	CHECK(shift[0] == 0 && shift[1] == 41 * S, "b moves by its offset minus a's: %lld",
	      (long long)shift[1]);
	/* b's start lands 1 s after a's on a's axis */
	CHECK((int64_t)two_hosts[1].start_mono + shift[1] == 51 * S, "b starts at a's 51 s");

	ref = trace_merge__align(one_host, hosts_aa, 2, shift);
	CHECK(ref == 1, "the second trace started first: %zu", ref);
	CHECK(shift[0] == 0 && shift[1] == 0, "one monotonic clock: no shift (%lld, %lld)",
	      (long long)shift[0], (long long)shift[1]);

	ref = trace_merge__align(reboot, hosts_aa, 2, shift);
	CHECK(ref == 1 && shift[1] == 0 && shift[0] == 9900 * S,
	      "another boot of the host is aligned by realtime: %lld", (long long)shift[0]);
}

static void remap_tests(void)
{
	struct tr_remap rm = { .collect = true };
	struct xpu_rec_cpu_sample smp = { .ts_ns = 100, .pid = 7, .tid = 8, .stack_id = 3,
					  .py_stack_id = 2 };
	struct xpu_rec_gpu_kernel k = { .start_ns = 10, .end_ns = 20, .pid = 7, .name_str = 5,
					.device = 1 };
	uint64_t frame = XPU_PY_FRAME(9, 42, 1);

	tr_remap__record(&rm, XPU_REC_CPU_SAMPLE, &smp);
	tr_remap__record(&rm, XPU_REC_GPU_KERNEL, &k);
	frame = tr_remap__py_frame(&rm, frame);
	CHECK(smp.pid == 7 && smp.stack_id == 3 && k.device == 1, "collect changes nothing");
	CHECK(rm.max_stack == 3 && rm.max_py_stack == 2 && rm.max_string == 5 &&
	      rm.max_device == 1 && rm.max_py_code == 9, "collect notes the largest ids");
	CHECK(kmap__get(&rm.tasks, 7, 0) && kmap__get(&rm.tasks, 8, 0), "collect notes pids and tids");
	kmap__free(&rm.tasks);

	memset(&rm, 0, sizeof(rm));
	rm.shift_ns = -5;
	rm.task_base = 1u << 22;
	rm.stack_base = 10, rm.py_stack_base = 20, rm.string_base = 30, rm.device_base = 2;
	rm.py_code_base = 40;
	tr_remap__record(&rm, XPU_REC_CPU_SAMPLE, &smp);
	tr_remap__record(&rm, XPU_REC_GPU_KERNEL, &k);
	frame = tr_remap__py_frame(&rm, frame);
	CHECK(smp.ts_ns == 95 && smp.pid == 7 + (1u << 22) && smp.tid == 8 + (1u << 22),
	      "time and task ids move");
	CHECK(smp.stack_id == 13 && smp.py_stack_id == 22, "stack ids follow the earlier traces'");
	CHECK(k.start_ns == 5 && k.end_ns == 15 && k.name_str == 35 && k.device == 3,
	      "kernel: times, name, device");
	CHECK(XPU_PY_FRAME_CODE(frame) == 49 && XPU_PY_FRAME_INSTR(frame) == 42 &&
	      XPU_PY_FRAME_ENTRY(frame), "a Python frame keeps its instruction and entry bit");
	smp.stack_id = 0;
	tr_remap__record(&rm, XPU_REC_CPU_SAMPLE, &smp);
	CHECK(smp.stack_id == 0, "0 (no stack) stays 0");
}

int main(void)
{
	align_tests();
	remap_tests();
	return unit_finish();
}
