/* SPDX-License-Identifier: MIT */
/*
 * The recorder's parts (part.h), in the order every verb of the recording walks them (reversed
 * for stop, collect and free); record/parts.c says why that order.
 */
#ifndef XPU_RECORD_PARTS_H
#define XPU_RECORD_PARTS_H

#include <stddef.h>

#include "part.h"

/* Room the recording keeps for each part's state */
#define REC_PARTS_MAX 16

extern const struct rec_part *const rec_parts[];
extern const size_t rec_parts_nr;

#endif
