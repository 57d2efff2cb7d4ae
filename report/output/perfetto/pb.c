// SPDX-License-Identifier: MIT
/* The protobuf wire-format writer of the perfetto output (see pb.h for why it exists). */
#include <stdlib.h>
#include <string.h>

#include "output/perfetto/pb.h"

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2 };

static bool reserve(struct pb *p, size_t more)
{
	size_t cap = p->cap ? p->cap : 256;
	uint8_t *b;

	if (p->oom)
		return false;
	if (p->n + more <= p->cap)
		return true;
	while (cap < p->n + more)
		cap *= 2;
	b = realloc(p->b, cap);
	if (!b) {
		p->oom = true;
		return false;
	}
	p->b = b;
	p->cap = cap;
	return true;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(struct pb *p, uint64_t v)
{
	if (!reserve(p, 10))
		return;
	while (v >= 0x80) {
		p->b[p->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p->b[p->n++] = (uint8_t)v;
}

static void put_tag(struct pb *p, uint32_t field, unsigned wire)
{
	put_varint(p, (uint64_t)field << 3 | wire);
}

void pb__reset(struct pb *p)
{
	p->n = 0;
	p->depth = 0;
	p->oom = false;
}

void pb__free(struct pb *p)
{
	free(p->b);
	memset(p, 0, sizeof(*p));
}

void pb__varint(struct pb *p, uint32_t field, uint64_t v)
{
	put_tag(p, field, WIRE_VARINT);
	put_varint(p, v);
}

void pb__sint(struct pb *p, uint32_t field, int64_t v)
{
	pb__varint(p, field, (uint64_t)v);
}

void pb__fixed64(struct pb *p, uint32_t field, uint64_t v)
{
	int i;

	put_tag(p, field, WIRE_I64);
	if (!reserve(p, 8))
		return;
	for (i = 0; i < 8; i++)
		p->b[p->n++] = (uint8_t)(v >> (8 * i));
}

void pb__double(struct pb *p, uint32_t field, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	pb__fixed64(p, field, u);
}

void pb__bytes(struct pb *p, uint32_t field, const void *s, size_t len)
{
	put_tag(p, field, WIRE_LEN);
	put_varint(p, len);
	if (!len || !reserve(p, len))
		return;
	memcpy(p->b + p->n, s, len);
	p->n += len;
}

void pb__str(struct pb *p, uint32_t field, const char *s)
{
	pb__bytes(p, field, s, strlen(s));
}

void pb__begin(struct pb *p, uint32_t field)
{
	if (p->depth >= PB_MAX_DEPTH) {
		p->oom = true;	/* a bug of the caller: refuse the packet rather than corrupt it */
		return;
	}
	put_tag(p, field, WIRE_LEN);
	p->open[p->depth++] = p->n;
}

void pb__end(struct pb *p)
{
	size_t start, len, ll;
	uint64_t v;

	if (!p->depth || p->oom)
		return;
	start = p->open[--p->depth];
	len = p->n - start;
	ll = varint_len(len);
	if (!reserve(p, ll))
		return;
	memmove(p->b + start + ll, p->b + start, len);
	for (v = len; ll > 1; ll--, v >>= 7)
		p->b[start++] = (uint8_t)(v | 0x80);
	p->b[start] = (uint8_t)v;
	p->n += varint_len(len);
}
