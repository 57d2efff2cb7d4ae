/* SPDX-License-Identifier: MIT */
#ifndef XPU_RECORD_FIELDS_H
#define XPU_RECORD_FIELDS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Byte offsets, within the body of a record of this type, of the u32 fields that hold string
 * ids. Returns how many (at most max) were written to offsets. Used to remap string ids of
 * records that another process produced, and by the reader to validate references.
 */
size_t xpu_record_string_fields(uint16_t type, uint32_t *offsets, size_t max);
/* Minimum body size of a known record type (its fixed struct), or 0 for unknown types. */
uint32_t xpu_record_min_body(uint16_t type);

#endif
