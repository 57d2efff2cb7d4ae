// SPDX-License-Identifier: MIT
/*
 * The GPU labels of the text report on a trace as an attach can leave it: a kernel on a device
 * no GPU_DEVICE record names, and a sync activity with no API record whose call only its
 * launch record (CUPTI's callback id) names. The busy table says the device has no record (not
 * "-"), and the blocked time is cudaDeviceSynchronize's (not "[sync] context").
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "unit.h"
#define TRACE_BUILD_PROG "test_gpu_labels"
#include "../lib/trace_build.h"

#define PID 700
#define T0 1000000000ull
#define MS 1000000ull

static void write_trace(const char *path)
{
	struct xpu_rec_session ses = { .ncpu = 2, .page_size_bytes = 4096, .sample_freq_hz = 1000,
				       .stack_mode = XPU_STACK_FP, .target_pid = PID,
				       .start_mono_ns = T0,
				       .start_realtime_ns = 1700000000000000000ull,
				       .flags = XPU_SESSION_GPU | XPU_SESSION_ATTACHED };
	struct xpu_rec_clock_sync cs = { T0, 1700000000000000000ull, T0 + 5, 120 };
	struct xpu_rec_task task = { .ts_ns = T0, .kind = XPU_TASK_COMM, .pid = PID, .tid = PID };
	uint64_t ips[1] = { 0x401000 };
	uint32_t st;
	struct xpu_rec_gpu_launch kl = { .ts_ns = T0 + MS, .pid = PID, .tid = PID, .corr_id = 4,
					 .cbid = 211, .domain = XPU_API_RUNTIME };
	struct xpu_rec_gpu_launch sl = { .ts_ns = T0 + 3 * MS, .pid = PID, .tid = PID,
					 .corr_id = 5, .cbid = 165, .domain = XPU_API_RUNTIME };
	struct xpu_rec_gpu_kernel k = { .start_ns = T0 + 2 * MS, .end_ns = T0 + 4 * MS, .pid = PID,
					.corr_id = 4, .device = 0, .grid_x = 1, .grid_y = 1,
					.grid_z = 1, .block_x = 1, .block_y = 1, .block_z = 1 };
	struct xpu_rec_gpu_sync sy = { .start_ns = T0 + 3 * MS, .end_ns = T0 + 4 * MS, .pid = PID,
				       .corr_id = 5, .kind = XPU_SYNC_CONTEXT, .stream = UINT32_MAX };
	struct xpu_rec_session_end end = { .end_mono_ns = T0 + 10 * MS,
					   .reason = XPU_END_SIGNAL };

	open_trace(path, NULL);
	ses.host_str = str("unit-host");
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	rec(XPU_REC_CLOCK_SYNC, &cs, sizeof(cs), T0);
	task.comm_str = str("app");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	st = stack(ips, 0, 1);
	kl.stack_id = sl.stack_id = st;
	rec(XPU_REC_GPU_LAUNCH, &kl, sizeof(kl), kl.ts_ns);
	k.name_str = str("_Z6kernelv");
	rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), k.start_ns);
	rec(XPU_REC_GPU_LAUNCH, &sl, sizeof(sl), sl.ts_ns);
	rec(XPU_REC_GPU_SYNC, &sy, sizeof(sy), sy.start_ns);
	rec(XPU_REC_SESSION_END, &end, sizeof(end), end.end_mono_ns);
	if (trace_writer__close(w))
		die("close");
}

static char *text_report(const char *trace)
{
	char path[] = "/tmp/xpu-test-gpu-labels-XXXXXX";
	struct report_opts o = { .format = FMT_TEXT, .view = VIEW_MERGED, .input = trace,
				 .output = path, .no_host_files = true };
	int fd = mkstemp(path), r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (fd < 0)
		return NULL;
	close(fd);
	r = report_run(&o);
	CHECK(r == 0, "report_run: %d", r);
	f = fopen(path, "r");
	if (f && getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	unlink(path);
	return buf;
}

int main(void)
{
	char trace[] = "/tmp/xpu-test-gpu-labels-trace-XXXXXX";
	int fd = mkstemp(trace);
	char *out;

	if (fd < 0)
		return 1;
	close(fd);
	write_trace(trace);
	out = text_report(trace);
	CHECK(out && strstr(out, "[no device record]"), "the device without a record:\n%s",
	      out ? out : "");
	CHECK(out && strstr(out, "cudaDeviceSynchronize\n") && !strstr(out, "[sync] context"),
	      "the sync named by its launch record's call:\n%s", out ? out : "");
	free(out);
	unlink(trace);
	return unit_finish();
}
