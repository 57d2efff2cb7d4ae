// SPDX-License-Identifier: MIT
/*
 * The check of the in-process walk's EVENTS payloads (record/inproc_events.c) against hostile
 * ones: sizes off by one, counts past their limits, wrong types, truncated entries, a Python
 * stack cut from its launch. Nothing malformed may pass; what is good before it must.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cupti_wire.h"
#include "inproc_events.h"
#include "unit.h"
#include "inproc_share.h"

#define LHEAD offsetof(struct xpu_ev_gpu_launch, uips)
#define PHEAD offsetof(struct xpu_ev_pystack, frames)

static uint8_t buf[1 << 16];

/* Appends an entry declaring size bytes, of which the first copy come from ev. */
static size_t put_raw(size_t off, const void *ev, uint32_t size, size_t copy, uint32_t reserved)
{
	struct xpu_cupti_event_hdr eh = { .size = size, .reserved = reserved };
	size_t pad = ((size_t)size + 7) & ~(size_t)7;

	memcpy(buf + off, &eh, sizeof(eh));
	memset(buf + off + sizeof(eh), 0, pad);
	memcpy(buf + off + sizeof(eh), ev, copy);
	return off + sizeof(eh) + pad;
}

static size_t put_launch(size_t off, uint32_t tid, uint64_t ts, int32_t nr, int32_t size_delta)
{
	struct xpu_ev_gpu_launch l = {
		.hdr = { .type = XPU_EV_GPU_LAUNCH, .pid = 777, .tid = tid, .ts_ns = ts },
		.corr_id = 5, .nr_user = nr,
	};
	uint32_t n = nr > 0 ? (uint32_t)nr : 0, size;
	uint32_t i;

	for (i = 0; i < n && i < XPU_BPF_MAX_UFRAMES + 1; i++)
		l.uips[i] = 0x400000 + i;
	size = (uint32_t)(LHEAD + (size_t)n * 8 + size_delta);
	return put_raw(off, &l, size, size < sizeof(l) ? size : sizeof(l), 0);
}

static size_t put_py(size_t off, uint32_t tid, uint64_t ts, uint16_t nr, int32_t size_delta,
		     uint32_t for_type)
{
	struct xpu_ev_pystack p = {
		.hdr = { .type = XPU_EV_PYSTACK, .pid = 777, .tid = tid, .ts_ns = ts },
		.for_type = for_type, .nr = nr,
	};
	uint32_t size = (uint32_t)(PHEAD + (size_t)nr * 16 + size_delta);

	return put_raw(off, &p, size, size < sizeof(p) ? size : sizeof(p), 0);
}

static struct inproc_check check(size_t len)
{
	struct inproc_check ck;

	inproc_events__check(buf, len, 42, &ck);
	return ck;
}

static void test_good(void)
{
	uint64_t ev[(INPROC_EV_MAX_BYTES + 7) / 8];
	struct inproc_check ck;
	size_t len = 0, off = 0, size;
	int n = 0, launches = 0;

	len = put_py(len, 10, 100, 3, 0, XPU_EV_GPU_LAUNCH);
	len = put_launch(len, 10, 100, 5, 0);
	len = put_launch(len, 11, 101, 0, 0);
	len = put_launch(len, 12, 102, XPU_BPF_MAX_UFRAMES, 0);
	len = put_py(len, 13, 103, XPU_BPF_PY_MAX_FRAMES, 0, XPU_EV_GPU_LAUNCH);
	len = put_launch(len, 13, 103, 1, 0);
	ck = check(len);
	CHECK(!ck.bad && ck.len == len && ck.events == 6 && ck.launches == 4 && !ck.dropped,
	      "all good: bad %d len %zu/%zu events %u launches %u", ck.bad, ck.len, len, ck.events,
	      ck.launches);
	while ((size = inproc_events__next(buf, ck.len, &off, ev))) {
		const struct xpu_ev_hdr *h = (const void *)ev;

		n++;
		CHECK(h->pid == 42, "pid rewritten, got %u", h->pid);
		if (h->type == XPU_EV_GPU_LAUNCH) {
			const struct xpu_ev_gpu_launch *l = (const void *)ev;

			launches++;
			CHECK(size == sizeof(*l), "full-size launch");
			CHECK(l->nr_user == XPU_BPF_MAX_UFRAMES || l->uips[l->nr_user] == 0,
			      "zeroed past its frames");
		} else {
			CHECK(size == sizeof(struct xpu_ev_pystack), "full-size pystack");
		}
	}
	CHECK(n == 6 && launches == 4 && off == len, "walked %d events, %d launches", n, launches);
	ck = check(0);
	CHECK(!ck.bad && !ck.len && !ck.events, "empty payload");
}

/* One bad entry after a good launch: the launch passes, the bad one and the rest do not. */
static void expect_bad(size_t good_len, size_t len, uint32_t dropped, const char *what)
{
	struct inproc_check ck = check(len);

	CHECK(ck.bad && ck.len == good_len && ck.dropped == dropped,
	      "%s: bad %d len %zu (want %zu) dropped %u (want %u)", what, ck.bad, ck.len, good_len,
	      ck.dropped, dropped);
}

static void test_hostile(void)
{
	size_t g = put_launch(0, 1, 1, 2, 0), len;
	struct xpu_ev_gpu_launch l = { .hdr = { .type = XPU_EV_GPU_LAUNCH } };
	struct xpu_ev_hdr h = { .type = XPU_EV_SAMPLE };

	expect_bad(g, put_launch(g, 2, 2, 3, 8), 1, "launch size 8 over its frames");
	expect_bad(g, put_launch(g, 2, 2, 3, -8), 1, "launch size 8 under its frames");
	expect_bad(g, put_launch(g, 2, 2, 3, 1), 1, "launch size 1 over");
	expect_bad(g, put_launch(g, 2, 2, 3, -1), 1, "launch size 1 under");
	expect_bad(g, put_launch(g, 2, 2, XPU_BPF_MAX_UFRAMES + 1, 0), 1, "nr_user over the limit");
	expect_bad(g, put_launch(g, 2, 2, -1, 0), 1, "nr_user negative");
	l.nr_user = 0x7fffffff;
	expect_bad(g, put_raw(g, &l, LHEAD + 24, LHEAD + 24, 0), 1, "nr_user huge");
	l.nr_user = 0;
	expect_bad(g, put_raw(g, &l, LHEAD - 8, LHEAD - 8, 0), 1, "launch shorter than its head");
	l.ustart = 1;
	l.nr_user = 1;
	expect_bad(g, put_raw(g, &l, LHEAD + 8, LHEAD + 8, 0), 1, "ustart 1");
	expect_bad(g, put_py(put_py(g, 2, 2, 1, 0, XPU_EV_GPU_LAUNCH), 2, 2, 1, 0, XPU_EV_GPU_LAUNCH),
		   2, "two pystacks in a row");
	expect_bad(g, put_launch(put_py(g, 2, 2, 4, 8, XPU_EV_GPU_LAUNCH), 2, 2, 1, 0), 2,
		   "pystack size over its frames");
	expect_bad(g, put_launch(put_py(g, 2, 2, 4, -1, XPU_EV_GPU_LAUNCH), 2, 2, 1, 0), 2,
		   "pystack size 1 under");
	expect_bad(g, put_launch(put_py(g, 2, 2, XPU_BPF_PY_MAX_FRAMES + 1, 0, XPU_EV_GPU_LAUNCH),
				 2, 2, 1, 0), 2, "pystack nr over the limit");
	{
		struct xpu_ev_pystack p = {
			.hdr = { .type = XPU_EV_PYSTACK, .tid = 2, .ts_ns = 2 },
			.for_type = XPU_EV_GPU_LAUNCH, .nr = 0xffff,
		};

		expect_bad(g, put_launch(put_raw(g, &p, PHEAD + 32, PHEAD + 32, 0), 2, 2, 1, 0), 2,
			   "pystack nr huge");
	}
	expect_bad(g, put_launch(put_py(g, 2, 2, 1, 0, XPU_EV_SAMPLE), 2, 2, 1, 0), 2,
		   "pystack for a sample");
	expect_bad(g, put_launch(put_py(g, 2, 2, 1, 0, XPU_EV_GPU_LAUNCH), 3, 2, 1, 0), 2,
		   "pystack of another thread's launch");
	expect_bad(g, put_launch(put_py(g, 2, 2, 1, 0, XPU_EV_GPU_LAUNCH), 2, 3, 1, 0), 2,
		   "pystack of another launch");
	expect_bad(g, put_py(g, 2, 2, 1, 0, XPU_EV_GPU_LAUNCH), 1, "pystack at the end, no launch");
	expect_bad(g, put_raw(g, &h, sizeof(h), sizeof(h), 0), 1, "a sample");
	h.type = XPU_EV_AG_NODE;
	expect_bad(g, put_raw(g, &h, sizeof(h), sizeof(h), 0), 1, "a node event");
	h.type = 0xffffffff;
	expect_bad(g, put_raw(g, &h, sizeof(h), sizeof(h), 0), 1, "type huge");
	expect_bad(g, put_raw(g, &h, 0, 0, 0), 1, "size 0");
	expect_bad(g, put_raw(g, &h, 8, 8, 0), 1, "size under the event header");
	/* truncated: the entry claims more than the message holds */
	len = put_launch(g, 2, 2, 3, 0);
	expect_bad(g, len - 8, 1, "launch cut by 8 bytes");
	expect_bad(g, len - 1, 1, "launch cut by 1 byte");
	expect_bad(g, g + 4, 1, "half an entry header");
	memcpy(buf + g, &(struct xpu_cupti_event_hdr){ .size = 0xffffffffu }, 8);
	expect_bad(g, g + 64, 1, "size 4 GiB");
	memcpy(buf + g, &(struct xpu_cupti_event_hdr){ .size = 0xfffffff9u }, 8);
	expect_bad(g, g + 64, 1, "size that wraps when padded");
	len = put_launch(g, 2, 2, 1, 0);
	((struct xpu_cupti_event_hdr *)(buf + g))->reserved = 1;
	expect_bad(g, len, 1, "reserved set");
	/* the rest after a bad entry is dropped and counted as far as it can be followed */
	len = put_launch(g, 2, 2, 1, 1);
	len = put_launch(put_launch(len, 3, 3, 1, 0), 4, 4, 0, 0);
	expect_bad(g, len, 3, "good launches after a bad one");
	/* a good launch's bytes, then a pad the entry does not declare */
	len = put_launch(g, 2, 2, 1, 0);
	memset(buf + len, 0, 8);
	expect_bad(len, len + 8, 1, "8 stray bytes at the end");
	expect_bad(len, len + 3, 1, "3 stray bytes at the end");
	/* the bad entry is not handed to next() */
	{
		uint64_t ev[(INPROC_EV_MAX_BYTES + 7) / 8];
		size_t off = 0;
		int n = 0;

		len = put_launch(put_launch(0, 1, 1, 1, 0), 2, 2, 1, 1);
		while (inproc_events__next(buf, check(len).len, &off, ev))
			n++;
		CHECK(n == 1, "next() stops at the checked prefix, got %d", n);
	}
}

int main(void)
{
	test_good();
	test_hostile();
	return unit_finish();
}
