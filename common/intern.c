// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fnv1a.h"
#include "intern.h"

struct intern_slot {
	uint64_t hash;
	uint32_t id;		/* 0: empty */
	uint32_t len;
	size_t off;		/* into the arena */
};

struct intern_table {
	struct intern_slot *slots;
	size_t cap;		/* power of two */
	size_t count;
	uint8_t *arena;
	size_t arena_len, arena_cap;
};

/*
 * FNV-1a's steps (fnv1a.h) over 8-byte words, each mixed, then over the bytes left, with a
 * final mix: fast, and good enough for a table whose keys are the program's own strings and
 * stacks. Not FNV-1a's values: the words and the mixing make it a hash of its own.
 */
uint64_t xpu_hash64(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = FNV1A64_OFFSET ^ len;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		h = (h ^ w) * FNV1A64_PRIME;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	h = fnv1a64(h, p, len);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

struct intern_table *intern_table__new(void)
{
	struct intern_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 1024;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void intern_table__free(struct intern_table *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t->arena);
	free(t);
}

size_t intern_table__count(const struct intern_table *t)
{
	return t->count;
}

static int intern_table__grow(struct intern_table *t)
{
	size_t ncap = t->cap * 2;
	struct intern_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct intern_slot *s = &t->slots[i];
		size_t j;

		if (!s->id)
			continue;
		for (j = s->hash & (ncap - 1); ns[j].id; j = (j + 1) & (ncap - 1))
			;
		ns[j] = *s;
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

uint32_t intern_table__get(struct intern_table *t, const void *key, size_t len, int *added)
{
	uint64_t h = xpu_hash64(key, len);
	size_t i;

	*added = 0;
	if (len > UINT32_MAX || t->count >= UINT32_MAX - 1)
		return 0;
	/* Keep the load under one half; if growing fails, keep going while a slot is free. */
	if ((t->count + 1) * 2 > t->cap && intern_table__grow(t) && t->count + 1 >= t->cap)
		return 0;
	for (i = h & (t->cap - 1); t->slots[i].id; i = (i + 1) & (t->cap - 1)) {
		struct intern_slot *s = &t->slots[i];

		if (s->hash == h && s->len == len && !memcmp(t->arena + s->off, key, len))
			return s->id;
	}
	if (t->arena_len + len > t->arena_cap) {
		size_t ncap = t->arena_cap ? t->arena_cap : 65536;
		uint8_t *na;

		while (ncap < t->arena_len + len)
			ncap *= 2;
		na = realloc(t->arena, ncap);
		if (!na)
			return 0;
		t->arena = na;
		t->arena_cap = ncap;
	}
	if (len)
		memcpy(t->arena + t->arena_len, key, len);
	t->slots[i] = (struct intern_slot){ .hash = h, .id = (uint32_t)t->count + 1,
					     .len = (uint32_t)len, .off = t->arena_len };
	t->arena_len += len;
	t->count++;
	*added = 1;
	return (uint32_t)t->count;
}
