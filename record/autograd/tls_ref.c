// SPDX-License-Identifier: MIT
/*
 * A thread-local's tls_index from a function's code (see tls_ref.h). The shapes are the x86-64
 * psABI's, which linkers must recognise to relax them, so compilers emit them byte for byte.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "tls_ref.h"

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* data16 lea X(%rip),%rdi; data16 data16 rex.W call __tls_get_addr */
static bool general_dynamic(const uint8_t *c, size_t left)
{
	static const uint8_t lea[] = { 0x66, 0x48, 0x8d, 0x3d };
	static const uint8_t call[] = { 0x66, 0x66, 0x48, 0xe8 };

	return left >= 16 && !memcmp(c, lea, 4) && !memcmp(c + 8, call, 4);
}

/* lea X(%rip),%rdi; call __tls_get_addr (then the offset is an immediate, below) */
static bool local_dynamic(const uint8_t *c, size_t left)
{
	return left >= 12 && c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x3d && c[7] == 0xe8;
}

int tls_ref__from_code(const uint8_t *code, size_t len, uint64_t vaddr, struct tls_ref *out)
{
	size_t i, j;

	for (i = 0; i < len; i++) {
		if (general_dynamic(code + i, len - i)) {
			out->index_vaddr = vaddr + i + 8 + (int64_t)le32(code + i + 4);
			out->add = 0;
			return 0;
		}
		if (!local_dynamic(code + i, len - i))
			continue;
		/* the variable: mov D(%rax),%rax or lea D(%rax),%rax after the call */
		for (j = i + 12; j + 7 <= len; j++) {
			if (code[j] == 0x48 && (code[j + 1] == 0x8b || code[j + 1] == 0x8d) &&
			    code[j + 2] == 0x80) {
				out->index_vaddr = vaddr + i + 7 + (int64_t)le32(code + i + 3);
				out->add = (uint64_t)(int64_t)le32(code + j + 3);
				return 0;
			}
		}
	}
	return -ENOENT;
}
