// SPDX-License-Identifier: MIT
#include <stddef.h>

#include "record_fields.h"
#include "xpu_format.h"

#define FIELD(st, f) ((uint32_t)offsetof(struct st, f))

size_t xpu_record_string_fields(uint16_t type, uint32_t *offsets, size_t max)
{
	uint32_t tmp[8];
	size_t n = 0;

	switch (type) {
	case XPU_REC_SESSION:
		tmp[n++] = FIELD(xpu_rec_session, host_str);
		tmp[n++] = FIELD(xpu_rec_session, kernel_str);
		tmp[n++] = FIELD(xpu_rec_session, arch_str);
		tmp[n++] = FIELD(xpu_rec_session, version_str);
		tmp[n++] = FIELD(xpu_rec_session, cmdline_str);
		tmp[n++] = FIELD(xpu_rec_session, options_str);
		break;
	case XPU_REC_DSO:
		tmp[n++] = FIELD(xpu_rec_dso, path_str);
		break;
	case XPU_REC_TASK:
		tmp[n++] = FIELD(xpu_rec_task, comm_str);
		break;
	case XPU_REC_PY_CODE:
		tmp[n++] = FIELD(xpu_rec_py_code, name_str);
		tmp[n++] = FIELD(xpu_rec_py_code, filename_str);
		break;
	case XPU_REC_JIT_SYMBOL:
		tmp[n++] = FIELD(xpu_rec_jit_symbol, name_str);
		break;
	case XPU_REC_GPU_DEVICE:
		tmp[n++] = FIELD(xpu_rec_gpu_device, name_str);
		break;
	case XPU_REC_GPU_KERNEL:
		tmp[n++] = FIELD(xpu_rec_gpu_kernel, name_str);
		break;
	case XPU_REC_GPU_API:
		tmp[n++] = FIELD(xpu_rec_gpu_api, name_str);
		break;
	case XPU_REC_NVTX:
		tmp[n++] = FIELD(xpu_rec_nvtx, name_str);
		tmp[n++] = FIELD(xpu_rec_nvtx, domain_str);
		break;
	case XPU_REC_DRIVER_IOCTL:
		tmp[n++] = FIELD(xpu_rec_driver_ioctl, file_str);
		break;
	case XPU_REC_AUTOGRAD_EVAL:
		tmp[n++] = FIELD(xpu_rec_autograd_eval, class_str);
		break;
	case XPU_REC_AUTOGRAD_PROBE:
		tmp[n++] = FIELD(xpu_rec_autograd_probe, reason_str);
		break;
	default:
		break;
	}
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		offsets[i] = tmp[i];
	return n;
}

uint32_t xpu_record_min_body(uint16_t type)
{
	switch (type) {
	case XPU_REC_SESSION: return sizeof(struct xpu_rec_session);
	case XPU_REC_CLOCK_SYNC: return sizeof(struct xpu_rec_clock_sync);
	case XPU_REC_STRING: return sizeof(struct xpu_rec_string);
	case XPU_REC_STACK: return sizeof(struct xpu_rec_stack);
	case XPU_REC_DSO: return sizeof(struct xpu_rec_dso);
	case XPU_REC_MAPPING: return sizeof(struct xpu_rec_mapping);
	case XPU_REC_TASK: return sizeof(struct xpu_rec_task);
	/* 1.3 appended py_stack_id: older, shorter bodies stay valid */
	case XPU_REC_CPU_SAMPLE: return offsetof(struct xpu_rec_cpu_sample, py_stack_id);
	case XPU_REC_LOST: return sizeof(struct xpu_rec_lost);
	case XPU_REC_STATS: return sizeof(struct xpu_rec_stats);
	case XPU_REC_KSYMS: return sizeof(struct xpu_rec_ksyms);
	case XPU_REC_SESSION_END: return sizeof(struct xpu_rec_session_end);
	case XPU_REC_USER_STACK_COPY: return sizeof(struct xpu_rec_user_stack_copy);
	case XPU_REC_USER_STACK_TOP: return sizeof(struct xpu_rec_user_stack_top);
	case XPU_REC_PY_RUNTIME: return sizeof(struct xpu_rec_py_runtime);
	case XPU_REC_PY_CODE: return sizeof(struct xpu_rec_py_code);
	case XPU_REC_PY_STACK: return sizeof(struct xpu_rec_py_stack);
	case XPU_REC_JIT_SYMBOL: return sizeof(struct xpu_rec_jit_symbol);
	case XPU_REC_VDSO_IMAGE: return sizeof(struct xpu_rec_vdso_image);
	case XPU_REC_GPU_DEVICE: return sizeof(struct xpu_rec_gpu_device);
	case XPU_REC_GPU_KERNEL: return sizeof(struct xpu_rec_gpu_kernel);
	case XPU_REC_GPU_MEMCPY: return sizeof(struct xpu_rec_gpu_memcpy);
	case XPU_REC_GPU_MEMSET: return sizeof(struct xpu_rec_gpu_memset);
	case XPU_REC_GPU_SYNC: return sizeof(struct xpu_rec_gpu_sync);
	case XPU_REC_GPU_API: return sizeof(struct xpu_rec_gpu_api);
	case XPU_REC_GPU_LAUNCH: return offsetof(struct xpu_rec_gpu_launch, py_stack_id);
	case XPU_REC_NVTX: return sizeof(struct xpu_rec_nvtx);
	case XPU_REC_GPU_OVERHEAD: return sizeof(struct xpu_rec_gpu_overhead);
	case XPU_REC_GPU_PROCESS: return sizeof(struct xpu_rec_gpu_process);
	case XPU_REC_GPU_MEMORY: return sizeof(struct xpu_rec_gpu_memory);
	case XPU_REC_DRIVER_IOCTL: return sizeof(struct xpu_rec_driver_ioctl);
	case XPU_REC_OFF_CPU: return sizeof(struct xpu_rec_off_cpu);
	case XPU_REC_PROCESS_ENV: return sizeof(struct xpu_rec_process_env);
	case XPU_REC_AUTOGRAD_NODE: return sizeof(struct xpu_rec_autograd_node);
	case XPU_REC_AUTOGRAD_EVAL: return sizeof(struct xpu_rec_autograd_eval);
	case XPU_REC_AUTOGRAD_PROBE: return sizeof(struct xpu_rec_autograd_probe);
	default: return 0;
	}
}
