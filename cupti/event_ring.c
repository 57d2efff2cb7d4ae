// SPDX-License-Identifier: MIT
/*
 * Single-producer single-consumer byte rings for the in-process launch events (event_ring.h).
 * The producer publishes head with release semantics after writing a group; the consumer reads
 * up to head (acquire), then publishes tail (release), which is all the producer needs to know
 * of the consumer. A group never wraps: where it would, a wrap marker fills the ring's end.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "event_ring.h"
#include "walk_share.h"

/* hdr.size of a wrap marker: the rest of the ring up to its end is empty */
#define RING_WRAP 0xffffffffu
/* hdr.reserved in the ring: the next entry belongs to the same group */
#define RING_MORE 1u

_Static_assert(sizeof(struct xpu_cupti_event_hdr) == 8, "event hdr size");

/* event_ring__pool_set_wake() */
static void (*ring_wake)(void);

static inline uint64_t entry_bytes(uint32_t len)
{
	return sizeof(struct xpu_cupti_event_hdr) + (((uint64_t)len + 7) & ~7ull);
}

int event_ring__init(struct event_ring *r, void *buf, uint64_t bytes)
{
	if (!buf || bytes < 64 || (bytes & (bytes - 1)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->bytes = bytes;
	return 0;
}

/* Bytes a group of `total` bytes needs from head h on, its wrap marker included. */
static inline uint64_t group_need(const struct event_ring *r, uint64_t h, uint64_t total)
{
	uint64_t to_end = r->bytes - (h & (r->bytes - 1));

	return to_end < total ? to_end + total : total;
}

bool event_ring__fits(const struct event_ring *r, unsigned int n, uint64_t bytes)
{
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t total = n * entry_bytes(0) + bytes + 7 * (uint64_t)n;

	return total <= r->bytes / 2 && h - t + group_need(r, h, total) <= r->bytes;
}

int event_ring__push(struct event_ring *r, unsigned int n, const void *const *ev,
		     const uint32_t *len)
{
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t total = 0, off, to_end, h0 = h;
	void (*wake)(void);
	unsigned int i;

	for (i = 0; i < n; i++)
		total += entry_bytes(len[i]);
	/* half the ring at most, so that a full-size group always fits into an empty ring */
	if (!n || total > r->bytes / 2)
		return -EINVAL;
	if (h - t + group_need(r, h, total) > r->bytes)
		return -ENOSPC;
	off = h & (r->bytes - 1);
	to_end = r->bytes - off;
	if (to_end < total) {
		struct xpu_cupti_event_hdr w = { .size = RING_WRAP };

		memcpy(r->buf + off, &w, sizeof(w));
		h += to_end;
		off = 0;
	}
	for (i = 0; i < n; i++) {
		struct xpu_cupti_event_hdr eh = {
			.size = len[i],
			.reserved = i + 1 < n ? RING_MORE : 0,
		};
		uint64_t eb = entry_bytes(len[i]);
		uint8_t *p = r->buf + off;

		memcpy(p, &eh, sizeof(eh));
		memcpy(p + sizeof(eh), ev[i], len[i]);
		memset(p + sizeof(eh) + len[i], 0, eb - sizeof(eh) - len[i]);
		off += eb;
		h += eb;
	}
	__atomic_store_n(&r->head, h, __ATOMIC_RELEASE);
	/* once per filling, not per push: the flusher's period is what normally drains */
	if (h0 - t < r->bytes / 2 && h - t >= r->bytes / 2 &&
	    (wake = __atomic_load_n(&ring_wake, __ATOMIC_ACQUIRE)))
		wake();
	return 0;
}

bool event_ring__empty(const struct event_ring *r)
{
	return __atomic_load_n(&r->tail, __ATOMIC_RELAXED) ==
	       __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
}

size_t event_ring__read(struct event_ring *r, void *dst, size_t room)
{
	uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint8_t *out = dst;
	size_t copied = 0;

	while (t != h) {
		uint64_t off = t & (r->bytes - 1), g = 0, e;
		struct xpu_cupti_event_hdr eh;

		memcpy(&eh, r->buf + off, sizeof(eh));
		if (eh.size == RING_WRAP) {
			t += r->bytes - off;
			continue;
		}
		/* the group's extent; the producer wrote it contiguously */
		for (;;) {
			if (off + g + sizeof(eh) > r->bytes)
				goto corrupt;
			memcpy(&eh, r->buf + off + g, sizeof(eh));
			e = entry_bytes(eh.size);
			if (eh.size == RING_WRAP || off + g + e > r->bytes || t + g + e > h)
				goto corrupt;
			g += e;
			if (!(eh.reserved & RING_MORE))
				break;
		}
		if (copied + g > room)
			break;
		memcpy(out + copied, r->buf + off, g);
		for (e = 0; e < g; e += entry_bytes(eh.size)) {
			memcpy(&eh, out + copied + e, sizeof(eh));
			memset(out + copied + e + offsetof(struct xpu_cupti_event_hdr, reserved), 0,
			       sizeof(eh.reserved));
		}
		copied += g;
		t += g;
	}
	__atomic_store_n(&r->tail, t, __ATOMIC_RELEASE);
	return copied;

corrupt:
	/* only a bug of ours gets here: drop what is queued rather than send garbage */
	r->bad++;
	__atomic_store_n(&r->tail, h, __ATOMIC_RELEASE);
	return copied;
}

/* ---- the pool ------------------------------------------------------------------------------ */

enum ring_state {
	RING_FREE = 0,
	RING_OWNED = 1,		/* a live thread pushes into it */
	RING_ORPHANED = 2,	/* its thread exited: back to the pool once drained */
};

/* a thread whose claim failed tries again after this many pushes */
#define CLAIM_RETRY 4096

static struct {
	struct event_ring rings[EVENT_RING_POOL_MAX];
	unsigned int n;
	pthread_key_t key;
} pool;

static __thread struct event_ring *mine;
static __thread uint32_t claim_wait;
static __thread bool exiting;

static void ring_thread_exit(void *p)
{
	struct event_ring *r = p;

	/* a ring reset by a fork is no longer this thread's */
	if (r != mine)
		return;
	mine = NULL;
	exiting = true;
	__atomic_store_n(&r->state, RING_ORPHANED, __ATOMIC_RELEASE);
}

int event_ring__pool_init(unsigned int nrings, uint64_t ring_bytes)
{
	uint8_t *mem;
	unsigned int i;

	if (pool.n)
		return 0;
	if (!nrings || nrings > EVENT_RING_POOL_MAX || ring_bytes < 64 ||
	    (ring_bytes & (ring_bytes - 1)))
		return -EINVAL;
	/* the rings, then each one's scratch */
	mem = mmap(NULL, nrings * (ring_bytes + EVENT_RING_SCRATCH_BYTES), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	if (pthread_key_create(&pool.key, ring_thread_exit)) {
		munmap(mem, nrings * (ring_bytes + EVENT_RING_SCRATCH_BYTES));
		return -EAGAIN;
	}
	for (i = 0; i < nrings; i++) {
		event_ring__init(&pool.rings[i], mem + i * ring_bytes, ring_bytes);
		pool.rings[i].scratch = mem + nrings * ring_bytes + i * EVENT_RING_SCRATCH_BYTES;
	}
	__atomic_store_n(&pool.n, nrings, __ATOMIC_RELEASE);
	return 0;
}

void event_ring__pool_set_wake(void (*wake)(void))
{
	__atomic_store_n(&ring_wake, wake, __ATOMIC_RELEASE);
}

struct event_ring *event_ring__mine(void)
{
	unsigned int i, n;

	if (mine)
		return mine;
	n = __atomic_load_n(&pool.n, __ATOMIC_ACQUIRE);
	if (!n || exiting)
		return NULL;
	if (claim_wait) {
		claim_wait--;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct event_ring *r = &pool.rings[i];
		uint32_t want = RING_FREE;

		if (__atomic_load_n(&r->state, __ATOMIC_RELAXED) != RING_FREE ||
		    !__atomic_compare_exchange_n(&r->state, &want, RING_OWNED, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		/* without the key's destructor the ring would never come back: do without it */
		if (pthread_setspecific(pool.key, r)) {
			__atomic_store_n(&r->state, RING_FREE, __ATOMIC_RELEASE);
			break;
		}
		mine = r;
		return r;
	}
	claim_wait = CLAIM_RETRY;
	return NULL;
}

size_t event_ring__pool_drain(void *dst, size_t room, unsigned int *cursor)
{
	unsigned int n = __atomic_load_n(&pool.n, __ATOMIC_ACQUIRE);
	size_t copied = 0;

	for (; *cursor < n; ++*cursor) {
		struct event_ring *r = &pool.rings[*cursor];
		uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
		size_t got;

		if (st == RING_FREE)
			continue;
		got = event_ring__read(r, (uint8_t *)dst + copied, room - copied);
		copied += got;
		if (!event_ring__empty(r))
			return copied;	/* room is spent: this ring again next call */
		if (st == RING_ORPHANED) {
			/* its thread pushes no more (its last push precedes the state's release) */
			r->head = r->tail = 0;
			__atomic_store_n(&r->state, RING_FREE, __ATOMIC_RELEASE);
		}
	}
	return copied;
}

bool event_ring__pool_busy(void)
{
	unsigned int n = __atomic_load_n(&pool.n, __ATOMIC_ACQUIRE), i;

	for (i = 0; i < n; i++) {
		uint32_t st = __atomic_load_n(&pool.rings[i].state, __ATOMIC_RELAXED);

		/* an exited thread's ring, even empty, waits for a drain to go back to the pool */
		if (st == RING_ORPHANED || (st == RING_OWNED && !event_ring__empty(&pool.rings[i])))
			return true;
	}
	return false;
}

void event_ring__pool_atfork_child(void)
{
	unsigned int i;

	for (i = 0; i < pool.n; i++) {
		pool.rings[i].head = pool.rings[i].tail = 0;
		pool.rings[i].state = RING_FREE;
	}
	if (mine && pool.n)
		pthread_setspecific(pool.key, NULL);
	mine = NULL;
	claim_wait = 0;
}
