// SPDX-License-Identifier: MIT
#include "crc32c.h"

/* Table-driven, byte at a time: frames are at most a few MiB and the CRC is not the bottleneck
 * next to zstd, so a portable implementation beats an SSE4.2 dependency. */
static uint32_t crc32c_table[256];
static int crc32c_ready;

static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc32c_table[i] = c;
	}
	__atomic_store_n(&crc32c_ready, 1, __ATOMIC_RELEASE);
}

uint32_t crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (!__atomic_load_n(&crc32c_ready, __ATOMIC_ACQUIRE))
		crc32c_init();
	crc = ~crc;
	while (len--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
