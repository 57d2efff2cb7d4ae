// SPDX-License-Identifier: MIT
/*
 * Unit tests of the report's address -> mapping lookup (report/sym/maps.c) and its hash map
 * and string pool (report/base/containers.c); the ELF side of symbolization is covered by the
 * golden tests.
 */
#include <stdio.h>
#include <string.h>

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
	test_kmap_strpool();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
