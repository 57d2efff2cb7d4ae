/* SPDX-License-Identifier: MIT */
#ifndef XPU_CRC32C_H
#define XPU_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C (Castagnoli), as in iSCSI and ext4; crc is 0 for a fresh computation. */
uint32_t crc32c(uint32_t crc, const void *data, size_t len);

#endif
