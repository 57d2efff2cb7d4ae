/* SPDX-License-Identifier: MIT */
/*
 * The table of record types: for each type of xpu_format.h, its name, its fixed part, the
 * shortest body a reader accepts, whether the injected CUPTI library may send it, and the
 * fields that hold times, tasks and ids. The reader, the CUPTI receiver, the writer's string
 * remapping and xpu-report's loader and merger all read this table: a new record type is its
 * struct in xpu_format.h and a row in record_fields.c.
 */
#ifndef XPU_RECORD_FIELDS_H
#define XPU_RECORD_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xpu_field_kind {
	XPU_FIELD_END = 0,	/* ends a row's fields */
	XPU_FIELD_TS,		/* u64 CLOCK_MONOTONIC ns; 0: none */
	XPU_FIELD_PID,		/* u32 process id; 0: none */
	XPU_FIELD_TID,		/* u32 thread id; 0: none */
	XPU_FIELD_STR,		/* u32 STRING id; 0: none */
	XPU_FIELD_STACK,	/* u32 STACK id; 0: none */
	XPU_FIELD_PY_STACK,	/* u32 PY_STACK id; 0: none */
	XPU_FIELD_PY_CODE,	/* u32 PY_CODE id; 0: none */
	XPU_FIELD_DSO,		/* u32 DSO id; 0: none */
	XPU_FIELD_DEVICE,	/* u32 GPU device number; 0 is a device */
};

struct xpu_record_field {
	uint16_t offset;	/* in the body */
	uint8_t kind;		/* enum xpu_field_kind */
	bool defines;		/* the id this record defines, not a reference to one */
};

#define XPU_RECORD_FIELDS_MAX 8
/* The largest fixed part of any type (GPU_KERNEL, USER_STACK_COPY) */
#define XPU_RECORD_FIXED_MAX 88

struct xpu_record_desc {
	const char *name;	/* "gpu_memset", as `xpu-report --format=info` counts records */
	uint32_t size;		/* its struct: the fixed part, before any variable tail */
	uint32_t min_body;	/* shorter bodies are malformed; longer ones than size are newer */
	bool from_cupti;	/* a client of common/cupti_wire.h may send it */
	struct xpu_record_field fields[XPU_RECORD_FIELDS_MAX];	/* in body order */
};

/* The row of a known type, NULL for an unknown one. */
const struct xpu_record_desc *xpu_record_desc(uint16_t type);
#define xpu_record_for_each_field(f, d) \
	for ((f) = (d)->fields; (f) < (d)->fields + XPU_RECORD_FIELDS_MAX && (f)->kind; (f)++)
/* The first field of kind in d, NULL when it has none. */
const struct xpu_record_field *xpu_record_field(const struct xpu_record_desc *d,
						enum xpu_field_kind kind);

/*
 * Byte offsets, within the body of a record of this type, of the u32 fields that refer to
 * string ids. Returns how many (at most max) were written to offsets. Used to remap string ids
 * of records that another process produced.
 */
size_t xpu_record_string_fields(uint16_t type, uint32_t *offsets, size_t max);
/* Minimum body size of a known record type, or 0 for unknown types. */
uint32_t xpu_record_min_body(uint16_t type);
/* "session", "gpu_kernel", ...; "unknown" for an unknown type. */
const char *xpu_record_type_name(uint16_t type);

#endif
