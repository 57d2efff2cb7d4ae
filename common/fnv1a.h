/* SPDX-License-Identifier: MIT */
/*
 * FNV-1a, 64 bits (Fowler, Noll, Vo), byte by byte: the one hash of the project where a simple
 * one will do. A value may be stored (record/cfi/cfi_cache.c's entry checksums), so its
 * constants and its order are fixed. Header-only, as mono_clock.h.
 */
#ifndef XPU_FNV1A_H
#define XPU_FNV1A_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_OFFSET 0xcbf29ce484222325ull	/* the offset basis: where a hash starts */
#define FNV1A64_PRIME 0x100000001b3ull

/* h carried on over n bytes at p: from FNV1A64_OFFSET, or from an earlier result. */
static inline uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * FNV1A64_PRIME;
	return h;
}

/* The same over a NUL-terminated string, its NUL left out. */
static inline uint64_t fnv1a64_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * FNV1A64_PRIME;
	return h;
}

#endif
