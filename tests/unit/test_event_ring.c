// SPDX-License-Identifier: MIT
/*
 * cupti/event_ring.c alone: wraparound, groups never split, a full ring refuses and keeps what
 * it holds, a producer and a consumer thread at full speed lose and reorder nothing, and the
 * pool's rings come back once their thread exited and they were drained.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "event_ring.h"
#include "unit.h"
#include "walk_share.h"

static uint64_t ebytes(uint32_t len)
{
	return sizeof(struct xpu_cupti_event_hdr) + ((len + 7) & ~7u);
}

/* an entry of len bytes (len >= 8) whose bytes all derive from seq */
static void fill(uint8_t *p, uint32_t len, uint64_t seq)
{
	uint32_t i;

	memcpy(p, &seq, 8);
	for (i = 8; i < len; i++)
		p[i] = (uint8_t)(seq * 31 + i);
}

/* checks the entry at p (hdr, then bytes); returns its seq, or UINT64_MAX when wrong */
static uint64_t check_entry(const uint8_t *p, uint32_t *len)
{
	struct xpu_cupti_event_hdr h;
	uint64_t seq;
	uint32_t i;

	memcpy(&h, p, sizeof(h));
	*len = h.size;
	if (h.reserved || h.size < 8 || h.size > 4096)
		return UINT64_MAX;
	memcpy(&seq, p + sizeof(h), 8);
	for (i = 8; i < h.size; i++)
		if (p[sizeof(h) + i] != (uint8_t)(seq * 31 + i))
			return UINT64_MAX;
	for (i = h.size; i < ((h.size + 7) & ~7u); i++)
		if (p[sizeof(h) + i])
			return UINT64_MAX;
	return seq;
}

static int push1(struct event_ring *r, uint32_t len, uint64_t seq)
{
	uint8_t b[4096];
	const void *ev[1] = { b };

	fill(b, len, seq);
	return event_ring__push(r, 1, ev, &len);
}

static void test_wrap(void)
{
	static uint8_t mem[256];
	struct event_ring r;
	uint8_t out[256];
	uint64_t seq, bad = 0;
	int i;

	CHECK(event_ring__init(&r, mem, 200) == -EINVAL, "not a power of two");
	CHECK(event_ring__init(&r, mem, sizeof(mem)) == 0, "init");
	/* sizes that do not divide the ring: every position of the wrap is crossed */
	for (seq = 0, i = 0; i < 5000; i++, seq++) {
		uint32_t len = 8 + (uint32_t)(seq * 7 % 90), got_len = 0;
		size_t n;

		if (push1(&r, len, seq)) {
			bad++;
			break;
		}
		n = event_ring__read(&r, out, sizeof(out));
		if (n != ebytes(len) || check_entry(out, &got_len) != seq || got_len != len)
			bad++;
	}
	CHECK(!bad, "%llu entries wrong across the wrap", (unsigned long long)bad);
	CHECK(r.head > 20 * sizeof(mem), "head went round (%llu)", (unsigned long long)r.head);
	CHECK(event_ring__empty(&r), "empty at the end");
	CHECK(!r.bad, "no corrupt entry seen");
}

static void test_groups_and_full(void)
{
	static uint8_t mem[1024];
	struct event_ring r;
	uint8_t a[64], b[200], out[2048];
	const void *ev[2] = { a, b };
	uint32_t len[2] = { 40, 200 }, l;
	uint64_t g = ebytes(40) + ebytes(200);
	int pushed = 0, err;
	size_t n;

	event_ring__init(&r, mem, sizeof(mem));
	fill(a, 40, 1);
	fill(b, 200, 2);
	CHECK(event_ring__push(&r, 2, ev, len) == 0, "group");
	/* room for the first entry alone: the group stays whole in the ring */
	CHECK(event_ring__read(&r, out, ebytes(40) + 8) == 0, "a group is not split");
	CHECK(!event_ring__empty(&r), "still queued");
	n = event_ring__read(&r, out, sizeof(out));
	CHECK(n == g, "whole group read (%zu)", n);
	CHECK(check_entry(out, &l) == 1 && l == 40, "first of the group");
	CHECK(check_entry(out + ebytes(40), &l) == 2 && l == 200, "second of the group, flag cleared");

	/* fill: pushes fail once the ring is full and what it holds stays intact */
	while (!(err = event_ring__push(&r, 2, ev, len)))
		pushed++;
	CHECK(err == -ENOSPC, "full ring refuses (%d)", err);
	CHECK(pushed == 4, "1024 bytes hold 4 groups of %llu (%d)", (unsigned long long)g, pushed);
	CHECK(!event_ring__fits(&r, 2, 240), "fits() agrees");
	n = event_ring__read(&r, out, 2 * g + 10);
	CHECK(n == 2 * g, "two groups fit the room (%zu)", n);
	CHECK(event_ring__fits(&r, 2, 240), "room again");
	CHECK(event_ring__push(&r, 2, ev, len) == 0, "push after read");
	n = event_ring__read(&r, out, sizeof(out));
	CHECK(n == 3 * g, "the rest (%zu)", n);
	CHECK(check_entry(out + 2 * g + ebytes(40), &l) == 2, "content intact after wrap");
	len[1] = 600;
	CHECK(event_ring__push(&r, 2, ev, len) == -EINVAL, "group over half the ring");
}

#define SPSC_N 2000000ull

static struct event_ring spsc;

static void *producer(void *arg)
{
	uint64_t seq = 0, full = 0;
	uint8_t a[512], b[512];

	(void)arg;
	while (seq < SPSC_N) {
		/* groups of one or two entries, lengths from the sequence number */
		uint32_t len[2] = { 8 + (uint32_t)(seq * 13 % 300), 8 + (uint32_t)((seq + 1) * 13 % 300) };
		const void *ev[2] = { a, b };
		unsigned int n = seq % 3 == 0 && seq + 1 < SPSC_N ? 2 : 1;

		fill(a, len[0], seq);
		fill(b, len[1], seq + 1);
		if (event_ring__push(&spsc, n, ev, len)) {
			full++;
			continue;
		}
		seq += n;
	}
	return (void *)(uintptr_t)full;
}

static void test_spsc(void)
{
	static uint8_t mem[1 << 14];
	static uint8_t out[8192];
	uint64_t want = 0, bad = 0;
	pthread_t th;
	void *full;
	unsigned int room = 600;

	event_ring__init(&spsc, mem, sizeof(mem));
	pthread_create(&th, NULL, producer, NULL);
	while (want < SPSC_N && !bad) {
		size_t n = event_ring__read(&spsc, out, room), off = 0;

		room = room * 7 % 7000 + 700;	/* rooms from too small for a pair to many entries */
		while (off < n) {
			uint32_t len;

			if (check_entry(out + off, &len) != want) {
				bad++;
				break;
			}
			want++;
			off += ebytes(len);
		}
		if (off != n)
			bad++;
	}
	pthread_join(th, &full);
	CHECK(!bad && want == SPSC_N, "consumer saw %llu of %llu in order, %llu bad",
	      (unsigned long long)want, SPSC_N, (unsigned long long)bad);
	CHECK(event_ring__empty(&spsc), "drained");
	printf("spsc: %llu entries, producer found the ring full %llu times\n", SPSC_N,
	       (unsigned long long)(uintptr_t)full);
}

static int wakes;
static void wake(void)
{
	__atomic_add_fetch(&wakes, 1, __ATOMIC_RELAXED);
}

static void *pool_thread(void *arg)
{
	struct event_ring *r = event_ring__mine();

	*(struct event_ring **)arg = r;
	if (r)
		push1(r, 100, 7);
	return NULL;
}

static void test_pool(void)
{
	struct event_ring *r, *got[4];
	pthread_t th[4];
	uint8_t out[4096];
	unsigned int cur = 0, i;
	size_t n;
	int k;

	CHECK(event_ring__mine() == NULL, "no pool yet");
	CHECK(event_ring__pool_init(2, 4096) == 0, "pool");
	event_ring__pool_set_wake(wake);
	r = event_ring__mine();
	CHECK(r != NULL, "claimed");
	CHECK(event_ring__mine() == r, "same ring again");
	for (k = 0; k < 30 && !push1(r, 100, (uint64_t)k); k++)
		;
	CHECK(k == 30, "30 pushes (%d)", k);
	CHECK(wakes == 1, "one wake at half full (%d)", wakes);
	/* two threads for one free ring: one of them goes without */
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, pool_thread, &got[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK(!!got[0] + !!got[1] == 1, "exactly one thread got the last ring");
	CHECK(event_ring__pool_busy(), "busy");
	n = 0;
	while ((k = (int)event_ring__pool_drain(out, sizeof(out), &cur)) > 0)
		n += (size_t)k;
	CHECK(n == (size_t)(30 + 1) * ebytes(100), "drained %zu", n);
	CHECK(!event_ring__pool_busy(), "empty after the drain");
	/* the exited thread's ring is free again */
	pthread_create(&th[2], NULL, pool_thread, &got[2]);
	pthread_join(th[2], NULL);
	CHECK(got[2] != NULL, "a ring given back at thread exit is claimed again");
	cur = 0;
	while (event_ring__pool_drain(out, sizeof(out), &cur))
		;
	event_ring__pool_atfork_child();
	CHECK(event_ring__mine() != NULL, "rings claimable again after a fork reset");
}

int main(void)
{
	test_wrap();
	test_groups_and_full();
	test_spsc();
	test_pool();
	return unit_finish();
}
