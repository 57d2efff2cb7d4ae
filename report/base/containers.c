// SPDX-License-Identifier: MIT
/* Containers shared by the report: growable vectors, a u128-keyed hash map, a string pool. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/containers.h"
#include "fnv1a.h"

int vec_reserve(void **p, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *np;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap <= n && ncap < SIZE_MAX / 2)
		ncap *= 2;
	if (ncap <= n || ncap > SIZE_MAX / elem)
		return -ENOMEM;
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

/*
 * A secret of this process in every hash below: the keys come from the trace (addresses, file
 * offsets, names), and through a hash anyone can invert a trace put 60,000 file offsets in
 * one probe chain (10 s of CPU for 1 MB). No output depends on a hash value or a slot's
 * order, so the seed changes nothing else.
 */
static uint64_t hash_seed;

__attribute__((constructor)) static void seed_hashes(void)
{
	if (getrandom(&hash_seed, sizeof(hash_seed), GRND_NONBLOCK) != sizeof(hash_seed))
		hash_seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^
			    (uint64_t)(uintptr_t)&hash_seed;
}

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline size_t kmap_slot(uint64_t a, uint64_t b, size_t cap)
{
	return mix64(a ^ mix64(b + hash_seed)) & (cap - 1);
}

uint32_t *kmap__get(const struct kmap *m, uint64_t a, uint64_t b)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = kmap_slot(a, b, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->ka[i] == a && m->kb[i] == b)
			return &m->val[i];
	}
	return NULL;
}

static int kmap_grow(struct kmap *m)
{
	struct kmap nm = { 0 };
	size_t i, j;

	nm.cap = m->cap ? m->cap * 2 : 64;
	nm.ka = malloc(nm.cap * sizeof(*nm.ka));
	nm.kb = malloc(nm.cap * sizeof(*nm.kb));
	nm.val = malloc(nm.cap * sizeof(*nm.val));
	nm.used = calloc(nm.cap, 1);
	if (!nm.ka || !nm.kb || !nm.val || !nm.used) {
		kmap__free(&nm);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		for (j = kmap_slot(m->ka[i], m->kb[i], nm.cap); nm.used[j]; j = (j + 1) & (nm.cap - 1))
			;
		nm.used[j] = 1;
		nm.ka[j] = m->ka[i];
		nm.kb[j] = m->kb[i];
		nm.val[j] = m->val[i];
	}
	nm.n = m->n;
	kmap__free(m);
	*m = nm;
	return 0;
}

uint32_t *kmap__put(struct kmap *m, uint64_t a, uint64_t b, uint32_t val, bool *inserted)
{
	size_t i;

	/* load factor <= 1/2 keeps probe chains short */
	if ((m->n + 1) * 2 > m->cap && kmap_grow(m))
		return NULL;
	for (i = kmap_slot(a, b, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->ka[i] == a && m->kb[i] == b) {
			if (inserted)
				*inserted = false;
			return &m->val[i];
		}
	}
	m->used[i] = 1;
	m->ka[i] = a;
	m->kb[i] = b;
	m->val[i] = val;
	m->n++;
	if (inserted)
		*inserted = true;
	return &m->val[i];
}

void kmap__free(struct kmap *m)
{
	free(m->ka);
	free(m->kb);
	free(m->val);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

uint64_t hash_bytes(const void *p, size_t len)
{
	return fnv1a64(FNV1A64_OFFSET ^ hash_seed, p, len);
}

uint32_t strpool__intern(struct strpool *sp, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);
	uint32_t *head, id;
	bool ins;
	char *copy;

	head = kmap__get(&sp->map, h, 0);
	for (id = head ? *head : 0; id; id = sp->next[id]) {
		if (!strncmp(sp->strs[id], s, len) && sp->strs[id][len] == '\0')
			return id;
	}
	if (!sp->n)
		sp->n = 1;	/* id 0 means "none" */
	if (vec_reserve((void **)&sp->strs, &sp->cap, sp->n, sizeof(*sp->strs)) ||
	    vec_reserve((void **)&sp->next, &sp->next_cap, sp->n, sizeof(*sp->next)))
		return 0;
	copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	copy[len] = '\0';
	id = sp->n++;
	sp->strs[id] = copy;
	head = kmap__put(&sp->map, h, 0, 0, &ins);
	if (!head) {
		sp->n--;
		free(copy);
		return 0;
	}
	sp->next[id] = ins ? 0 : *head;
	*head = id;
	return id;
}

void strpool__free(struct strpool *sp)
{
	size_t i;

	for (i = 1; i < sp->n; i++)
		free(sp->strs[i]);
	free(sp->strs);
	free(sp->next);
	kmap__free(&sp->map);
	memset(sp, 0, sizeof(*sp));
}

uint32_t frame_intern(struct strpool *pool, const char *name, size_t len)
{
	char buf[1024];
	size_t i;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	for (i = 0; i < len; i++) {
		char c = name[i];

		buf[i] = (c == ';' || c == '\n' || c == '\r' || c == '\0') ? '_' : c;
	}
	buf[len] = '\0';
	return strpool__intern(pool, buf, len);
}

size_t str__cut_len(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	/* not inside a UTF-8 character */
	while (max && ((uint8_t)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

const char *str__cut(const char *s, size_t max, char *buf)
{
	size_t n = strnlen(s, max + 1);

	if (n <= max)
		return s;
	n = str__cut_len(s, n, max);
	memcpy(buf, s, n);
	memcpy(buf + n, "...", 4);
	return buf;
}
