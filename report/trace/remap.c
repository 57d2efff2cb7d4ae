// SPDX-License-Identifier: MIT
/*
 * Puts a record of one trace into a merged trace (see struct tr_remap): its ids after those
 * of the traces before it, its pids and tids apart from theirs where they collide, its times
 * on the merged axis, its GPUs apart from another host's. In collect mode it only notes what
 * the record uses, so that the bases can be chosen before the trace is read again.
 */
#include "trace/trace.h"

uint32_t tr_remap__task(struct tr_remap *rm, uint32_t id)
{
	bool ins;

	if (!id)
		return 0;
	if (rm->collect) {
		if (!kmap__put(&rm->tasks, id, 0, 0, &ins))
			rm->nomem = true;
		return id;
	}
	return id + rm->task_base;
}

uint64_t tr_remap__ts(const struct tr_remap *rm, uint64_t ts)
{
	/* unsigned wrap-around: a hostile time stays a (meaningless) time, never a fault */
	return ts ? ts + (uint64_t)rm->shift_ns : 0;
}

/* An id of kind: noted (max) in collect mode, else moved past the earlier traces' ids. */
static uint32_t id_of(struct tr_remap *rm, uint32_t id, uint32_t *max, uint32_t base)
{
	if (!id)
		return 0;
	if (rm->collect) {
		if (id > *max)
			*max = id;
		return id;
	}
	return id + base;
}

#define TASK(x) ((x) = tr_remap__task(rm, (x)))
#define TS(x) ((x) = tr_remap__ts(rm, (x)))
#define STR(x) ((x) = id_of(rm, (x), &rm->max_string, rm->string_base))
#define STACK(x) ((x) = id_of(rm, (x), &rm->max_stack, rm->stack_base))
#define PYSTACK(x) ((x) = id_of(rm, (x), &rm->max_py_stack, rm->py_stack_base))
#define DSO(x) ((x) = id_of(rm, (x), &rm->max_dso, rm->dso_base))
/* A device number (0 is a device): noted in collect mode, else moved past another host's. */
static uint32_t dev_of(struct tr_remap *rm, uint32_t dev)
{
	if (rm->collect) {
		if (dev > rm->max_device)
			rm->max_device = dev;
		return dev;
	}
	return dev + rm->device_base;
}

#define DEV(x) ((x) = dev_of(rm, (x)))

static void remap_gpu(struct tr_remap *rm, uint16_t type, void *rec)
{
	switch (type) {
	case XPU_REC_GPU_DEVICE: {
		struct xpu_rec_gpu_device *r = rec;

		TASK(r->pid), DEV(r->device), STR(r->name_str);
		break;
	}
	case XPU_REC_GPU_KERNEL: {
		struct xpu_rec_gpu_kernel *r = rec;

		TS(r->start_ns), TS(r->end_ns), TASK(r->pid), STR(r->name_str), DEV(r->device);
		break;
	}
	case XPU_REC_GPU_MEMCPY: {
		struct xpu_rec_gpu_memcpy *r = rec;

		TS(r->start_ns), TS(r->end_ns), TASK(r->pid);
		DEV(r->device), DEV(r->src_device), DEV(r->dst_device);
		break;
	}
	case XPU_REC_GPU_MEMSET: {
		struct xpu_rec_gpu_memset *r = rec;

		TS(r->start_ns), TS(r->end_ns), TASK(r->pid), DEV(r->device);
		break;
	}
	case XPU_REC_GPU_SYNC: {
		struct xpu_rec_gpu_sync *r = rec;

		TS(r->start_ns), TS(r->end_ns), TASK(r->pid);
		break;
	}
	case XPU_REC_GPU_API: {
		struct xpu_rec_gpu_api *r = rec;

		TS(r->start_ns), TS(r->end_ns), TASK(r->pid), TASK(r->tid), STR(r->name_str);
		break;
	}
	case XPU_REC_GPU_LAUNCH: {
		struct xpu_rec_gpu_launch *r = rec;

		TS(r->ts_ns), TASK(r->pid), TASK(r->tid), STACK(r->stack_id);
		PYSTACK(r->py_stack_id);
		break;
	}
	case XPU_REC_NVTX: {
		struct xpu_rec_nvtx *r = rec;

		TS(r->start_ns), TS(r->end_ns), TASK(r->pid), TASK(r->tid);
		STR(r->name_str), STR(r->domain_str);
		break;
	}
	case XPU_REC_GPU_PROCESS: {
		struct xpu_rec_gpu_process *r = rec;

		TS(r->ts_ns), TASK(r->pid);
		break;
	}
	case XPU_REC_GPU_MEMORY: {
		struct xpu_rec_gpu_memory *r = rec;

		TS(r->ts_ns), TASK(r->pid), DEV(r->device);
		break;
	}
	case XPU_REC_DRIVER_IOCTL: {
		struct xpu_rec_driver_ioctl *r = rec;

		TS(r->start_ns), TS(r->end_ns), TASK(r->pid), TASK(r->tid), STR(r->file_str);
		break;
	}
	case XPU_REC_PROCESS_ENV: {
		struct xpu_rec_process_env *r = rec;

		TS(r->ts_ns), TASK(r->pid);
		break;
	}
	default:
		break;
	}
}

void tr_remap__record(struct tr_remap *rm, uint16_t type, void *rec)
{
	switch (type) {
	case XPU_REC_SESSION: {
		struct xpu_rec_session *r = rec;

		TS(r->start_mono_ns), TASK(r->target_pid);
		STR(r->host_str), STR(r->kernel_str), STR(r->arch_str), STR(r->version_str);
		STR(r->cmdline_str), STR(r->options_str);
		break;
	}
	case XPU_REC_SESSION_END:
		TS(((struct xpu_rec_session_end *)rec)->end_mono_ns);
		break;
	case XPU_REC_CLOCK_SYNC:
		TS(((struct xpu_rec_clock_sync *)rec)->mono_ns);
		break;
	case XPU_REC_STRING:
		STR(((struct xpu_rec_string *)rec)->id);
		break;
	case XPU_REC_STACK:
		STACK(((struct xpu_rec_stack *)rec)->id);
		break;
	case XPU_REC_DSO: {
		struct xpu_rec_dso *r = rec;

		DSO(r->id), STR(r->path_str);
		break;
	}
	case XPU_REC_VDSO_IMAGE:
		DSO(((struct xpu_rec_vdso_image *)rec)->dso_id);
		break;
	case XPU_REC_MAPPING: {
		struct xpu_rec_mapping *r = rec;

		TS(r->ts_ns), TASK(r->pid), DSO(r->dso_id);
		break;
	}
	case XPU_REC_TASK: {
		struct xpu_rec_task *r = rec;

		TS(r->ts_ns), TASK(r->pid), TASK(r->tid), TASK(r->parent_pid), STR(r->comm_str);
		break;
	}
	case XPU_REC_CPU_SAMPLE: {
		struct xpu_rec_cpu_sample *r = rec;

		TS(r->ts_ns), TASK(r->pid), TASK(r->tid), STACK(r->stack_id);
		PYSTACK(r->py_stack_id);
		break;
	}
	case XPU_REC_LOST: {
		struct xpu_rec_lost *r = rec;

		TS(r->ts_ns), TASK(r->pid);
		break;
	}
	case XPU_REC_USER_STACK_COPY: {
		struct xpu_rec_user_stack_copy *r = rec;

		TS(r->ts_ns), TASK(r->pid), TASK(r->tid);
		break;
	}
	case XPU_REC_USER_STACK_TOP: {
		struct xpu_rec_user_stack_top *r = rec;

		TS(r->ts_ns), TASK(r->pid), TASK(r->tid);
		break;
	}
	case XPU_REC_PY_RUNTIME: {
		struct xpu_rec_py_runtime *r = rec;

		TS(r->ts_ns), TASK(r->pid), DSO(r->dso_id);
		break;
	}
	case XPU_REC_PY_CODE: {
		struct xpu_rec_py_code *r = rec;

		r->id = id_of(rm, r->id, &rm->max_py_code, rm->py_code_base);
		STR(r->name_str), STR(r->filename_str);
		break;
	}
	case XPU_REC_PY_STACK:
		PYSTACK(((struct xpu_rec_py_stack *)rec)->id);
		break;
	case XPU_REC_OFF_CPU: {
		struct xpu_rec_off_cpu *r = rec;

		TS(r->ts_ns), TASK(r->pid), TASK(r->tid), TASK(r->waker_tid), STACK(r->stack_id);
		PYSTACK(r->py_stack_id);
		break;
	}
	case XPU_REC_AUTOGRAD_NODE: {
		struct xpu_rec_autograd_node *r = rec;

		TS(r->ts_ns), TASK(r->pid), TASK(r->tid), STACK(r->stack_id);
		PYSTACK(r->py_stack_id);
		break;
	}
	case XPU_REC_AUTOGRAD_EVAL: {
		struct xpu_rec_autograd_eval *r = rec;

		TS(r->begin_ns), TASK(r->pid), TASK(r->tid), STR(r->class_str);
		break;
	}
	case XPU_REC_AUTOGRAD_PROBE: {
		struct xpu_rec_autograd_probe *r = rec;

		TS(r->ts_ns), TASK(r->pid), DSO(r->dso_id), STR(r->reason_str);
		break;
	}
	case XPU_REC_JIT_SYMBOL: {
		struct xpu_rec_jit_symbol *r = rec;

		TS(r->load_ts_ns), TASK(r->pid), STR(r->name_str);
		break;
	}
	default:
		remap_gpu(rm, type, rec);
		break;
	}
}

/* A PY_STACK entry: its code id after the earlier traces' (the instruction and flag kept). */
uint64_t tr_remap__py_frame(struct tr_remap *rm, uint64_t e)
{
	uint32_t code = id_of(rm, XPU_PY_FRAME_CODE(e), &rm->max_py_code, rm->py_code_base);

	return (e & ~(uint64_t)UINT32_MAX) | code;
}
