/* SPDX-License-Identifier: MIT */
#ifndef XPU_RECORD_HUMAN_BYTES_H
#define XPU_RECORD_HUMAN_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* b as the summary lines say sizes: "812 bytes", "3.4 KiB", "1.2 MiB", "38 MiB". */
void human_bytes(char *buf, size_t size, uint64_t b);

#endif
