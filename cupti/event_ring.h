/* SPDX-License-Identifier: MIT */
/*
 * Per-thread queues of in-process launch events (common/walk_share.h) from the launching
 * threads to the flusher: single-producer single-consumer byte rings whose entries are already
 * in XPU_CUPTI_MSG_EVENTS layout (struct xpu_cupti_event_hdr, the event, padding to 8), so that
 * draining is a copy into the message. Entries pushed together (a PYSTACK and its launch) form
 * a group that is read whole or not at all, so a message never separates them.
 *
 * The rings come from one pool mapped at init and are claimed by a thread at its first push;
 * a push takes no lock, allocates nothing and makes no system call (but once, when it fills its
 * ring past half, it calls the wake hook so that the flusher drains early). Only this file and
 * libc: tests/unit/test_event_ring.c links it alone.
 */
#ifndef XPU_CUPTI_EVENT_RING_H
#define XPU_CUPTI_EVENT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_ring {
	_Alignas(64) uint64_t head;	/* bytes ever committed by the producer */
	_Alignas(64) uint64_t tail;	/* bytes ever consumed */
	_Alignas(64) uint8_t *buf;
	uint64_t bytes;			/* a power of two */
	uint32_t state;			/* pool: enum in event_ring.c */
	uint32_t launches;		/* producer: launches it queued (one in 16 is timed) */
	uint64_t bad;			/* entries the consumer found corrupt (0 unless a bug) */
	void *scratch;			/* pool rings: EVENT_RING_SCRATCH_BYTES for the producer */
};

/* One ring over buf (bytes: a power of two, at least 64). 0 or -EINVAL. */
int event_ring__init(struct event_ring *r, void *buf, uint64_t bytes);
/*
 * Producer: appends n entries as one group, entry i being len[i] bytes at ev[i]; all of them
 * or none. 0, -ENOSPC (full: nothing written) or -EINVAL (a group over half the ring).
 */
int event_ring__push(struct event_ring *r, unsigned int n, const void *const *ev,
		     const uint32_t *len);
/* Producer: whether a group of entries of `bytes` event bytes in all, n entries, fits now. */
bool event_ring__fits(const struct event_ring *r, unsigned int n, uint64_t bytes);
/*
 * Consumer: copies whole groups into dst while they fit in room; returns the bytes copied
 * (0: empty, or the next group does not fit). Each copied entry's reserved field is 0.
 */
size_t event_ring__read(struct event_ring *r, void *dst, size_t room);
bool event_ring__empty(const struct event_ring *r);

/* ---- the pool ------------------------------------------------------------------------------ */

#define EVENT_RING_POOL_MAX 256
/*
 * Per pool ring, the producer's own room to build its events in: neither on the stack the walk
 * reads nor in thread-local storage (a dlopen'd library has little static TLS to spare).
 */
#define EVENT_RING_SCRATCH_BYTES (8u << 10)

/* nrings rings of ring_bytes each, mapped once (MAP_NORESERVE). 0 or negative errno. */
int event_ring__pool_init(unsigned int nrings, uint64_t ring_bytes);
/* Called (from the producer) when a ring fills past half: wake the consumer. */
void event_ring__pool_set_wake(void (*wake)(void));
/*
 * The calling thread's ring, claimed at its first call; NULL when the pool is not set up, the
 * thread is exiting, or every ring is taken (then later calls try again only now and then).
 */
struct event_ring *event_ring__mine(void);
/*
 * Consumer: whole groups of every ring in use, from the ring *cursor names on (keep it
 * between calls of one drain, start it at 0), into dst up to room. Returns the bytes copied;
 * 0 once every ring is empty. A ring whose thread exited goes back to the pool once empty.
 */
size_t event_ring__pool_drain(void *dst, size_t room, unsigned int *cursor);
/* Whether a drain has work: a ring holds an entry, or an exited thread's waits to go back. */
bool event_ring__pool_busy(void);
/* Forked child: the parent's threads are gone, their rings with them; empties every ring. */
void event_ring__pool_atfork_child(void);

#endif
