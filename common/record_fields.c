// SPDX-License-Identifier: MIT
#include <stddef.h>

#include "record_fields.h"
#include "xpu_format.h"

/* sizeof(struct xpu_rec_NAME), which must fit a reader's XPU_RECORD_FIXED_MAX buffer */
#define SIZE(st) \
	(sizeof(struct xpu_rec_##st) + 0 * sizeof(char[sizeof(struct xpu_rec_##st) <= \
							 XPU_RECORD_FIXED_MAX ? 1 : -1]))
/* A row: the type's name is its struct's; min, where an older body is shorter than it. */
#define ROW_MIN(st, min, cupti, ...) \
	{ .name = #st, .size = SIZE(st), .min_body = (min), .from_cupti = (cupti), \
	  .fields = { __VA_ARGS__ } }
#define ROW(st, cupti, ...) ROW_MIN(st, SIZE(st), cupti, __VA_ARGS__)
/* A field that refers to a time, task or id; DEF: the id the record itself defines. */
#define F(st, kind, f) { offsetof(struct xpu_rec_##st, f), XPU_FIELD_##kind, false }
#define DEF(st, kind, f) { offsetof(struct xpu_rec_##st, f), XPU_FIELD_##kind, true }
#define CUPTI true
#define RECORDER false

static const struct xpu_record_desc rows[XPU_REC_TYPE_MAX_KNOWN + 1] = {
	[XPU_REC_SESSION] = ROW(session, RECORDER,
		F(session, TS, start_mono_ns), F(session, PID, target_pid),
		F(session, STR, host_str), F(session, STR, kernel_str), F(session, STR, arch_str),
		F(session, STR, version_str), F(session, STR, cmdline_str),
		F(session, STR, options_str)),
	[XPU_REC_CLOCK_SYNC] = ROW(clock_sync, RECORDER, F(clock_sync, TS, mono_ns)),
	[XPU_REC_STRING] = ROW(string, CUPTI, DEF(string, STR, id)),
	[XPU_REC_STACK] = ROW(stack, RECORDER, DEF(stack, STACK, id)),
	[XPU_REC_DSO] = ROW(dso, RECORDER, DEF(dso, DSO, id), F(dso, STR, path_str)),
	[XPU_REC_MAPPING] = ROW(mapping, RECORDER,
		F(mapping, TS, ts_ns), F(mapping, PID, pid), F(mapping, DSO, dso_id)),
	[XPU_REC_TASK] = ROW(task, RECORDER,
		F(task, TS, ts_ns), F(task, PID, pid), F(task, TID, tid), F(task, PID, parent_pid),
		F(task, STR, comm_str)),
	/* 1.3 appended py_stack_id: older, shorter bodies stay valid */
	[XPU_REC_CPU_SAMPLE] = ROW_MIN(cpu_sample,
		offsetof(struct xpu_rec_cpu_sample, py_stack_id), RECORDER,
		F(cpu_sample, TS, ts_ns), F(cpu_sample, PID, pid), F(cpu_sample, TID, tid),
		F(cpu_sample, STACK, stack_id), F(cpu_sample, PY_STACK, py_stack_id)),
	[XPU_REC_LOST] = ROW(lost, CUPTI, F(lost, TS, ts_ns), F(lost, PID, pid)),
	[XPU_REC_STATS] = ROW(stats, RECORDER),
	[XPU_REC_KSYMS] = ROW(ksyms, RECORDER),
	[XPU_REC_SESSION_END] = ROW(session_end, RECORDER, F(session_end, TS, end_mono_ns)),
	[XPU_REC_USER_STACK_COPY] = ROW(user_stack_copy, RECORDER,
		F(user_stack_copy, TS, ts_ns), F(user_stack_copy, PID, pid),
		F(user_stack_copy, TID, tid)),
	[XPU_REC_USER_STACK_TOP] = ROW(user_stack_top, RECORDER,
		F(user_stack_top, TS, ts_ns), F(user_stack_top, PID, pid),
		F(user_stack_top, TID, tid)),
	[XPU_REC_PY_RUNTIME] = ROW(py_runtime, RECORDER,
		F(py_runtime, TS, ts_ns), F(py_runtime, PID, pid), F(py_runtime, DSO, dso_id)),
	[XPU_REC_PY_CODE] = ROW(py_code, RECORDER,
		DEF(py_code, PY_CODE, id), F(py_code, STR, name_str),
		F(py_code, STR, filename_str)),
	[XPU_REC_PY_STACK] = ROW(py_stack, RECORDER, DEF(py_stack, PY_STACK, id)),
	[XPU_REC_JIT_SYMBOL] = ROW(jit_symbol, RECORDER,
		F(jit_symbol, TS, load_ts_ns), F(jit_symbol, PID, pid),
		F(jit_symbol, STR, name_str)),
	[XPU_REC_VDSO_IMAGE] = ROW(vdso_image, RECORDER, F(vdso_image, DSO, dso_id)),
	[XPU_REC_GPU_DEVICE] = ROW(gpu_device, CUPTI,
		F(gpu_device, PID, pid), F(gpu_device, DEVICE, device),
		F(gpu_device, STR, name_str)),
	[XPU_REC_GPU_KERNEL] = ROW(gpu_kernel, CUPTI,
		F(gpu_kernel, TS, start_ns), F(gpu_kernel, TS, end_ns), F(gpu_kernel, PID, pid),
		F(gpu_kernel, STR, name_str), F(gpu_kernel, DEVICE, device)),
	/* 1.12 appended graph_node_id to both */
	[XPU_REC_GPU_MEMCPY] = ROW_MIN(gpu_memcpy, offsetof(struct xpu_rec_gpu_memcpy, graph_node_id),
		CUPTI,
		F(gpu_memcpy, TS, start_ns), F(gpu_memcpy, TS, end_ns), F(gpu_memcpy, PID, pid),
		F(gpu_memcpy, DEVICE, device), F(gpu_memcpy, DEVICE, src_device),
		F(gpu_memcpy, DEVICE, dst_device)),
	[XPU_REC_GPU_MEMSET] = ROW_MIN(gpu_memset, offsetof(struct xpu_rec_gpu_memset, graph_node_id),
		CUPTI,
		F(gpu_memset, TS, start_ns), F(gpu_memset, TS, end_ns), F(gpu_memset, PID, pid),
		F(gpu_memset, DEVICE, device)),
	[XPU_REC_GPU_SYNC] = ROW(gpu_sync, CUPTI,
		F(gpu_sync, TS, start_ns), F(gpu_sync, TS, end_ns), F(gpu_sync, PID, pid)),
	[XPU_REC_GPU_API] = ROW(gpu_api, CUPTI,
		F(gpu_api, TS, start_ns), F(gpu_api, TS, end_ns), F(gpu_api, PID, pid),
		F(gpu_api, TID, tid), F(gpu_api, STR, name_str)),
	/* from the BPF uprobe on the launch marker, never from a client */
	[XPU_REC_GPU_LAUNCH] = ROW_MIN(gpu_launch,
		offsetof(struct xpu_rec_gpu_launch, py_stack_id), RECORDER,
		F(gpu_launch, TS, ts_ns), F(gpu_launch, PID, pid), F(gpu_launch, TID, tid),
		F(gpu_launch, STACK, stack_id), F(gpu_launch, PY_STACK, py_stack_id)),
	[XPU_REC_NVTX] = ROW(nvtx, CUPTI,
		F(nvtx, TS, start_ns), F(nvtx, TS, end_ns), F(nvtx, PID, pid), F(nvtx, TID, tid),
		F(nvtx, STR, name_str), F(nvtx, STR, domain_str)),
	[XPU_REC_GPU_OVERHEAD] = ROW(gpu_overhead, CUPTI,
		F(gpu_overhead, TS, start_ns), F(gpu_overhead, TS, end_ns),
		F(gpu_overhead, PID, pid), F(gpu_overhead, TID, tid)),
	[XPU_REC_GPU_PROCESS] = ROW(gpu_process, CUPTI,
		F(gpu_process, TS, ts_ns), F(gpu_process, PID, pid)),
	[XPU_REC_GPU_MEMORY] = ROW(gpu_memory, CUPTI,
		F(gpu_memory, TS, ts_ns), F(gpu_memory, PID, pid), F(gpu_memory, DEVICE, device)),
	[XPU_REC_DRIVER_IOCTL] = ROW(driver_ioctl, RECORDER,
		F(driver_ioctl, TS, start_ns), F(driver_ioctl, TS, end_ns),
		F(driver_ioctl, PID, pid), F(driver_ioctl, TID, tid),
		F(driver_ioctl, STR, file_str)),
	[XPU_REC_PROCESS_ENV] = ROW(process_env, CUPTI,
		F(process_env, TS, ts_ns), F(process_env, PID, pid)),
	[XPU_REC_OFF_CPU] = ROW(off_cpu, RECORDER,
		F(off_cpu, TS, ts_ns), F(off_cpu, PID, pid), F(off_cpu, TID, tid),
		F(off_cpu, TID, waker_tid), F(off_cpu, STACK, stack_id),
		F(off_cpu, PY_STACK, py_stack_id)),
	[XPU_REC_AUTOGRAD_NODE] = ROW(autograd_node, RECORDER,
		F(autograd_node, TS, ts_ns), F(autograd_node, PID, pid),
		F(autograd_node, TID, tid), F(autograd_node, STACK, stack_id),
		F(autograd_node, PY_STACK, py_stack_id)),
	[XPU_REC_AUTOGRAD_EVAL] = ROW(autograd_eval, RECORDER,
		F(autograd_eval, TS, begin_ns), F(autograd_eval, PID, pid),
		F(autograd_eval, TID, tid), F(autograd_eval, STR, class_str)),
	[XPU_REC_AUTOGRAD_PROBE] = ROW(autograd_probe, RECORDER,
		F(autograd_probe, TS, ts_ns), F(autograd_probe, PID, pid),
		F(autograd_probe, DSO, dso_id), F(autograd_probe, STR, reason_str)),
	[XPU_REC_GPU_GRAPH_NODE] = ROW(gpu_graph_node, CUPTI,
		F(gpu_graph_node, TS, ts_ns), F(gpu_graph_node, PID, pid),
		F(gpu_graph_node, TID, tid)),
};

const struct xpu_record_desc *xpu_record_desc(uint16_t type)
{
	return type < sizeof(rows) / sizeof(rows[0]) && rows[type].name ? &rows[type] : NULL;
}

const struct xpu_record_field *xpu_record_field(const struct xpu_record_desc *d,
						enum xpu_field_kind kind)
{
	const struct xpu_record_field *f;

	xpu_record_for_each_field(f, d) {
		if (f->kind == kind)
			return f;
	}
	return NULL;
}

size_t xpu_record_string_fields(uint16_t type, uint32_t *offsets, size_t max)
{
	const struct xpu_record_desc *d = xpu_record_desc(type);
	const struct xpu_record_field *f;
	size_t n = 0;

	if (!d)
		return 0;
	xpu_record_for_each_field(f, d) {
		if (f->kind == XPU_FIELD_STR && !f->defines && n < max)
			offsets[n++] = f->offset;
	}
	return n;
}

uint32_t xpu_record_min_body(uint16_t type)
{
	const struct xpu_record_desc *d = xpu_record_desc(type);

	return d ? d->min_body : 0;
}

const char *xpu_record_type_name(uint16_t type)
{
	const struct xpu_record_desc *d = xpu_record_desc(type);

	return d ? d->name : "unknown";
}
