// SPDX-License-Identifier: MIT
/*
 * Unit tests of the report's address -> mapping lookup (report/sym/maps.c) and its hash map
 * and string pool (report/base/containers.c); the ELF side of symbolization is covered by the
 * golden tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/containers.h"
#include "sym/maps.h"

static int passed, failed;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (cond) {                                                           \
			passed++;                                                     \
		} else {                                                              \
			failed++;                                                     \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                     \
	} while (0)

static struct xpu_rec_mapping mk(uint64_t ts, uint32_t pid, uint32_t dso, uint64_t start,
				 uint64_t end)
{
	struct xpu_rec_mapping m = { 0 };

	m.ts_ns = ts;
	m.pid = pid;
	m.dso_id = dso;
	m.start = start;
	m.end = end;
	return m;
}

static void test_maps(void)
{
	struct xpu_rec_mapping in[] = {
		mk(100, 1, 10, 0x1000, 0x5000),		/* first image */
		mk(500, 1, 11, 0x2000, 0x3000),		/* mapped over it later */
		mk(100, 1, 12, 0x100000, 0x200000),	/* big one far away */
		mk(900, 1, 13, 0x8000, 0x9000),		/* only known after the sample */
		mk(100, 2, 20, 0x1000, 0x5000),
		mk(0, 0, 30, 0xffff0000, 0xffff1000),	/* shared (pid 0) */
		mk(100, 1, 99, 0x7000, 0x7000),		/* empty: invalid */
	};
	struct maps ms;
	const struct xpu_rec_mapping *m;

	CHECK(maps__build(&ms, in, sizeof(in) / sizeof(in[0])) == 0);
	CHECK(ms.invalid == 1);
	m = maps__find(&ms, 1, 0x2500, 200);
	CHECK(m && m->dso_id == 10);	/* before the overlay was mapped */
	m = maps__find(&ms, 1, 0x2500, 600);
	CHECK(m && m->dso_id == 11);	/* after: the latest one wins */
	m = maps__find(&ms, 1, 0x4000, 600);
	CHECK(m && m->dso_id == 10);	/* outside the overlay */
	m = maps__find(&ms, 1, 0x150000, 50);
	CHECK(m && m->dso_id == 12);	/* all later than the sample: earliest later one */
	m = maps__find(&ms, 1, 0x8800, 10);
	CHECK(m && m->dso_id == 13);
	CHECK(!maps__find(&ms, 1, 0x9000, 1000));	/* end is exclusive */
	CHECK(!maps__find(&ms, 1, 0x7000, 1000));
	m = maps__find(&ms, 2, 0x1000, 100);
	CHECK(m && m->dso_id == 20);
	m = maps__find(&ms, 3, 0xffff0800, 1);
	CHECK(m && m->dso_id == 30);	/* unknown pid falls back to pid 0 */
	CHECK(!maps__find(&ms, 3, 0x1000, 1));
	maps__free(&ms);

	CHECK(maps__build(&ms, NULL, 0) == 0);
	CHECK(!maps__find(&ms, 1, 0x1000, 1));
	maps__free(&ms);
}

/*
 * The rule of maps.h by brute force over pid's mappings (in the index's order, ties in ts to
 * the later one there): what the interval index must answer.
 */
static const struct xpu_rec_mapping *slow_find(const struct pid_maps *pm, uint64_t addr,
						 uint64_t ts)
{
	const struct xpu_rec_mapping *before = NULL, *after = NULL;
	size_t i;

	for (i = 0; pm && i < pm->n; i++) {
		const struct xpu_rec_mapping *c = &pm->m[i];

		if (addr < c->start || addr >= c->end)
			continue;
		if (c->ts_ns <= ts) {
			if (!before || c->ts_ns >= before->ts_ns)
				before = c;
		} else if (!after || c->ts_ns <= after->ts_ns) {
			after = c;
		}
	}
	return before ? before : after;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Random overlapping mappings (few distinct ends and times, so ties happen): index = brute force */
static void test_maps_random(void)
{
	static struct xpu_rec_mapping in[600];
	uint64_t x = 88172645463325252ull;
	struct maps ms;
	int round, i, bad = 0;

	for (round = 0; round < 20; round++) {
		int n = 1 + (int)(rnd(&x) % 600);

		for (i = 0; i < n; i++) {
			uint64_t a = rnd(&x) % 64 * 0x1000, b = rnd(&x) % 64 * 0x1000;

			in[i] = mk(rnd(&x) % 8 * 100, 1 + (uint32_t)(rnd(&x) % 3), (uint32_t)i,
				   a < b ? a : b, a < b ? b : a);
			if (rnd(&x) % 16 == 0) {	/* one now and then spans everything */
				in[i].start = 0;
				in[i].end = UINT64_MAX;
			}
		}
		CHECK(maps__build(&ms, in, (size_t)n) == 0);
		for (i = 0; i < 2000; i++) {
			uint32_t pid = 1 + (uint32_t)(rnd(&x) % 3);
			uint64_t addr = rnd(&x) % (66 * 0x1000), ts = rnd(&x) % 900;
			const struct xpu_rec_mapping *want;

			want = slow_find(maps__pid(&ms, pid), addr, ts);
			bad += maps__find(&ms, pid, addr, ts) != want;
		}
		maps__free(&ms);
	}
	CHECK(bad == 0);
}

/*
 * Issue 28: one mapping over the whole address space made every lookup walk back over every
 * mapping (a 196 KB trace ran 5 CPU-minutes). 100,000 mappings and lookups: well under a second.
 */
static void test_maps_spanning(void)
{
	size_t n = 100000, i, found = 0;
	struct xpu_rec_mapping *in = calloc(n, sizeof(*in));
	struct maps ms;
	clock_t t0;

	if (!in) {
		CHECK(0);
		return;
	}
	in[0] = mk(1, 7, 1, 0, UINT64_MAX);
	for (i = 1; i < n; i++)
		in[i] = mk(2, 7, 2, 0x10000 * i, 0x10000 * i + 0x1000);
	CHECK(maps__build(&ms, in, n) == 0);
	t0 = clock();
	for (i = 0; i < n; i++) {
		const struct xpu_rec_mapping *m = maps__find(&ms, 7, 0x10000 * (n - i) + 0x800, 5);

		found += m && m->dso_id == (i ? 2u : 1u);
	}
	CHECK(found == n);
	CHECK(clock() - t0 < CLOCKS_PER_SEC);
	maps__free(&ms);
	free(in);
}

static void test_kmap_strpool(void)
{
	struct kmap m = { 0 };
	struct strpool sp = { 0 };
	uint32_t i, a, b, *v;
	bool ins;

	for (i = 0; i < 10000; i++)
		kmap__put(&m, i, i * 7, i, &ins);
	CHECK(m.n == 10000);
	v = kmap__get(&m, 1234, 1234 * 7);
	CHECK(v && *v == 1234);
	CHECK(!kmap__get(&m, 1234, 1));
	v = kmap__put(&m, 5, 35, 99, &ins);
	CHECK(v && !ins && *v == 5);
	kmap__free(&m);

	a = strpool__intern(&sp, "main", 4);
	b = strpool__intern(&sp, "main;x", 4);	/* same first 4 bytes */
	CHECK(a && a == b);
	CHECK(strpool__intern(&sp, "mai", 3) != a);
	CHECK(!strcmp(strpool__str(&sp, a), "main"));
	CHECK(!strcmp(strpool__str(&sp, 0), ""));
	CHECK(!strcmp(strpool__str(&sp, 12345), ""));
	strpool__free(&sp);
}

int main(void)
{
	test_maps();
	test_maps_random();
	test_maps_spanning();
	test_kmap_strpool();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
