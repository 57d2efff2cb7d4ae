/* SPDX-License-Identifier: MIT */
/*
 * The launch events a target's libxpu-cupti.so walked in process (XPU_CUPTI_MSG_EVENTS,
 * common/walk_share.h), checked before the drain thread takes them as it takes the ring
 * buffer's: the target is hostile input, so every size, count and type is proven first.
 */
#ifndef XPU_RECORD_INPROC_EVENTS_H
#define XPU_RECORD_INPROC_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xpu_bpf_abi.h"

/* The largest event an entry may hold: what the drain copies each one into, zeroed. */
#define INPROC_EV_MAX_BYTES                                                                 \
	(sizeof(struct xpu_ev_gpu_launch) > sizeof(struct xpu_ev_pystack) ?                 \
		 sizeof(struct xpu_ev_gpu_launch) :                                         \
		 sizeof(struct xpu_ev_pystack))

struct inproc_check {
	size_t len;		/* bytes of the entries accepted, from the payload's start */
	uint32_t events;	/* entries accepted */
	uint32_t launches;	/* XPU_EV_GPU_LAUNCH among them */
	uint32_t dropped;	/* entries not accepted: the first bad one and all after it */
	bool bad;		/* an entry was malformed: the rest of the message was dropped */
};

/*
 * Checks an EVENTS payload: entries (struct xpu_cupti_event_hdr, then size bytes of one
 * event, padded to 8) of XPU_EV_PYSTACK, each right before the XPU_EV_GPU_LAUNCH of the same
 * tid and ts_ns it was taken for, and XPU_EV_GPU_LAUNCH, each cut exactly to its frames.
 * Accepts entries up to the first malformed one (a PYSTACK whose launch is not next goes with
 * it, so that nothing can come between the two in the drain) and writes pid into each accepted
 * event's hdr.pid: the peer's, never the client's own claim.
 */
void inproc_events__check(void *buf, size_t len, uint32_t pid, struct inproc_check *out);

/*
 * The next entry of a checked prefix at *off: its event copied into ev (INPROC_EV_MAX_BYTES,
 * zeroed past what the entry holds), *off moved past it. The event's full size, 0 at the end.
 */
size_t inproc_events__next(const void *buf, size_t len, size_t *off, void *ev);

#endif
