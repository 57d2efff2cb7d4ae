/* SPDX-License-Identifier: MIT */
/*
 * The report's base layer: growable vectors, a u128-keyed hash map and a string pool with
 * dense ids (frame names). Includes nothing of the report.
 */
#ifndef XPU_REPORT_BASE_CONTAINERS_H
#define XPU_REPORT_BASE_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- u128-keyed open-addressing map: keys {a, b}, values u32 -------------------------------- */

struct kmap {
	uint64_t *ka, *kb;
	uint32_t *val;
	uint8_t *used;
	size_t cap, n;
};

/* Returns a pointer to the value of {a, b}, or NULL. */
uint32_t *kmap__get(const struct kmap *m, uint64_t a, uint64_t b);
/* Inserts if absent; *inserted says which. NULL on allocation failure. */
uint32_t *kmap__put(struct kmap *m, uint64_t a, uint64_t b, uint32_t val, bool *inserted);
void kmap__free(struct kmap *m);

/* FNV-1a (fnv1a.h) of len bytes from a per-process seed: the maps' and the pool's keys. */
uint64_t hash_bytes(const void *p, size_t len);

/* Grows a vector to hold at least n + 1 elements; returns 0 or -ENOMEM. */
int vec_reserve(void **p, size_t *cap, size_t n, size_t elem);
#define VEC_PUSH(arr, n, cap, val)                                                       \
	({                                                                               \
		int __e = vec_reserve((void **)&(arr), &(cap), (n), sizeof(*(arr)));     \
		if (!__e)                                                                \
			(arr)[(n)++] = (val);                                            \
		__e;                                                                     \
	})

/* ---- string pool: interned, NUL-terminated strings with dense ids from 1 --------------------- */

struct strpool {
	char **strs;		/* strs[0] unused */
	size_t n, cap;
	struct kmap map;	/* hash -> first id with that hash; collisions chain via next */
	uint32_t *next;
	size_t next_cap;
};

uint32_t strpool__intern(struct strpool *sp, const char *s, size_t len);
static inline const char *strpool__str(const struct strpool *sp, uint32_t id)
{
	return id && id < sp->n ? sp->strs[id] : "";
}
void strpool__free(struct strpool *sp);

/* Interns a frame name with ';' and line breaks replaced (folded output separators). */
uint32_t frame_intern(struct strpool *pool, const char *name, size_t len);

/*
 * s when it has at most max bytes, else its head (whole UTF-8 characters) and "..." in buf,
 * which holds max + 4 bytes: how a string of the trace is cut for a message or an output.
 */
const char *str__cut(const char *s, size_t max, char *buf);
/* How many of the len bytes at s to show within max: len, or a cut on a character boundary. */
size_t str__cut_len(const char *s, size_t len, size_t max);

#endif
