// SPDX-License-Identifier: MIT
/*
 * Checking the in-process walk's events (inproc_events.h). Every field that sizes, counts or
 * indexes anything is proven against what the entry holds; hdr.pid is replaced, the rest of
 * the event (ips, code addresses, timestamps) is data the trace keeps as the target said it.
 */
#include <stddef.h>
#include <string.h>

#include "cupti_wire.h"
#include "inproc_events.h"
#include "inproc_share.h"

#define PYSTACK_HEAD offsetof(struct xpu_ev_pystack, frames)
#define LAUNCH_HEAD offsetof(struct xpu_ev_gpu_launch, uips)

static size_t padded(uint32_t size)
{
	return ((size_t)size + 7) & ~(size_t)7;
}

/* The entry at off: its event's size, or 0 when its header or its bytes do not fit. */
static uint32_t entry_size(const uint8_t *p, size_t len, size_t off)
{
	struct xpu_cupti_event_hdr eh;

	if (len - off < sizeof(eh))
		return 0;
	memcpy(&eh, p + off, sizeof(eh));
	if (eh.reserved || eh.size < sizeof(struct xpu_ev_hdr) ||
	    padded(eh.size) > len - off - sizeof(eh))
		return 0;
	return eh.size;
}

static bool pystack_ok(const uint8_t *ev, uint32_t size)
{
	struct xpu_ev_pystack ps;

	if (size < PYSTACK_HEAD)
		return false;
	memcpy(&ps, ev, PYSTACK_HEAD);
	return ps.for_type == XPU_EV_GPU_LAUNCH && ps.nr <= XPU_BPF_PY_MAX_FRAMES &&
	       size == PYSTACK_HEAD + (size_t)ps.nr * sizeof(ps.frames[0]);
}

static bool launch_ok(const uint8_t *ev, uint32_t size)
{
	struct xpu_ev_gpu_launch gl;

	if (size < LAUNCH_HEAD)
		return false;
	memcpy(&gl, ev, LAUNCH_HEAD);
	/* in process, the walk starts at the launch callback's own frame: no [sp] slot */
	return gl.ustart == 0 && gl.nr_user >= 0 && gl.nr_user <= XPU_BPF_MAX_UFRAMES &&
	       size == LAUNCH_HEAD + (size_t)gl.nr_user * sizeof(gl.uips[0]);
}

void inproc_events__check(void *buf, size_t len, uint32_t pid, struct inproc_check *out)
{
	uint8_t *p = buf;
	size_t off = 0, pending_off = 0;
	struct xpu_ev_hdr pending = { 0 };
	bool have_pending = false;
	uint32_t size;

	memset(out, 0, sizeof(*out));
	while (off < len) {
		struct xpu_ev_hdr h;
		uint8_t *ev = p + off + sizeof(struct xpu_cupti_event_hdr);

		size = entry_size(p, len, off);
		if (!size)
			goto bad;
		memcpy(&h, ev, sizeof(h));
		if (h.type == XPU_EV_PYSTACK) {
			if (have_pending || !pystack_ok(ev, size))
				goto bad;
			pending = h;
			pending_off = off;
			have_pending = true;
		} else if (h.type == XPU_EV_GPU_LAUNCH) {
			if (!launch_ok(ev, size) ||
			    (have_pending && (h.tid != pending.tid || h.ts_ns != pending.ts_ns)))
				goto bad;
			have_pending = false;
			out->launches++;
		} else {
			goto bad;
		}
		h.pid = pid;
		memcpy(ev, &h, sizeof(h));
		off += sizeof(struct xpu_cupti_event_hdr) + padded(size);
		out->events++;
		if (!have_pending)
			out->len = off;
	}
	if (!have_pending)
		return;
	/* the message ended between a PYSTACK and its launch */
	off = len;
bad:
	out->bad = true;
	if (have_pending) {
		/* the PYSTACK goes with its launch */
		out->events--;
		off = pending_off;
	}
	/* what is left, as far as its sizes can be followed: for the count only */
	while (off < len) {
		out->dropped++;
		size = entry_size(p, len, off);
		if (!size)
			break;
		off += sizeof(struct xpu_cupti_event_hdr) + padded(size);
	}
}

size_t inproc_events__next(const void *buf, size_t len, size_t *off, void *ev)
{
	const uint8_t *p = buf;
	struct xpu_ev_hdr h;
	uint32_t size = *off < len ? entry_size(p, len, *off) : 0;

	if (!size || size > INPROC_EV_MAX_BYTES)
		return 0;
	memset(ev, 0, INPROC_EV_MAX_BYTES);
	memcpy(ev, p + *off + sizeof(struct xpu_cupti_event_hdr), size);
	*off += sizeof(struct xpu_cupti_event_hdr) + padded(size);
	memcpy(&h, ev, sizeof(h));
	return h.type == XPU_EV_PYSTACK ? sizeof(struct xpu_ev_pystack) :
					  sizeof(struct xpu_ev_gpu_launch);
}
