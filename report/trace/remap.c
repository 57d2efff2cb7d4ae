// SPDX-License-Identifier: MIT
/*
 * Puts a record of one trace into a merged trace (see struct tr_remap): its ids after those
 * of the traces before it, its pids and tids apart from theirs where they collide, its times
 * on the merged axis, its GPUs apart from another host's. In collect mode it only notes what
 * the record uses, so that the bases can be chosen before the trace is read again.
 */
#include <string.h>

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

static uint32_t u32_of(struct tr_remap *rm, enum xpu_field_kind kind, uint32_t v)
{
	switch (kind) {
	case XPU_FIELD_PID:
	case XPU_FIELD_TID:
		return tr_remap__task(rm, v);
	case XPU_FIELD_STR:
		return id_of(rm, v, &rm->max_string, rm->string_base);
	case XPU_FIELD_STACK:
		return id_of(rm, v, &rm->max_stack, rm->stack_base);
	case XPU_FIELD_PY_STACK:
		return id_of(rm, v, &rm->max_py_stack, rm->py_stack_base);
	case XPU_FIELD_PY_CODE:
		return id_of(rm, v, &rm->max_py_code, rm->py_code_base);
	case XPU_FIELD_DSO:
		return id_of(rm, v, &rm->max_dso, rm->dso_base);
	case XPU_FIELD_DEVICE:
		return dev_of(rm, v);
	default:
		return v;
	}
}

/* Every time, task and id the table of record types names in this type's struct. */
void tr_remap__record(struct tr_remap *rm, uint16_t type, void *rec)
{
	const struct xpu_record_desc *d = xpu_record_desc(type);
	const struct xpu_record_field *f;

	if (!d)
		return;
	xpu_record_for_each_field(f, d) {
		uint8_t *p = (uint8_t *)rec + f->offset;
		uint64_t ts;
		uint32_t v;

		if (f->kind == XPU_FIELD_TS) {
			memcpy(&ts, p, sizeof(ts));
			ts = tr_remap__ts(rm, ts);
			memcpy(p, &ts, sizeof(ts));
		} else {
			memcpy(&v, p, sizeof(v));
			v = u32_of(rm, f->kind, v);
			memcpy(p, &v, sizeof(v));
		}
	}
}

/* A PY_STACK entry: its code id after the earlier traces' (the instruction and flag kept). */
uint64_t tr_remap__py_frame(struct tr_remap *rm, uint64_t e)
{
	uint32_t code = id_of(rm, XPU_PY_FRAME_CODE(e), &rm->max_py_code, rm->py_code_base);

	return (e & ~(uint64_t)UINT32_MAX) | code;
}
