// SPDX-License-Identifier: MIT
/*
 * cupti/transport.c against a fake recorder on a unix SEQPACKET socket: the library maps a good
 * SHARE (sealed memfds with the right headers) and answers INPROC; it survives bad ones (wrong
 * sizes, 0, 1 or 3 descriptors, unsealed or short files, bad headers, descriptors riding on
 * other messages, a second SHARE) without keeping a single descriptor; it sends the event rings
 * as EVENTS and its counters as WALK_STATS, and its final flush sends both before DONE; a
 * SHARE awaited at connect is mapped, and a STOP met while waiting stays for the flusher.
 * The rest of libxpu-cupti.so (and the walk) are stand-ins below.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cupti_wire.h"
#include "event_ring.h"
#include "inproc_walk.h"
#include "unit.h"
#include "xpu_cupti.h"

/* ---- stand-ins for the rest of the library ------------------------------------------------ */
bool xc_verbose;
uint32_t xc_pid;
int64_t xc_clock_offset_ns;
static int logs;

void xc_log(const char *fmt, ...)
{
	va_list ap;

	logs++;
	fprintf(stderr, "  (library) ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

uint64_t xc_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct xpu_share_arena *got_arena;
static const struct xpu_share_proc *got_proc;
static uint64_t got_arena_bytes, got_proc_bytes, counted[XPU_INPROC_NR];
static int set_calls;

int inproc_walk__init(void)
{
	return 0;
}

void inproc_walk__set_share(const struct xpu_share_arena *arena, uint64_t arena_bytes,
			    const struct xpu_share_proc *proc, uint64_t proc_bytes)
{
	got_arena = arena;
	got_arena_bytes = arena_bytes;
	got_proc = proc;
	got_proc_bytes = proc_bytes;
	set_calls++;
}

bool inproc_walk__have_share(void)
{
	return got_arena != NULL;
}

void inproc_walk__count(enum xpu_inproc_counter c, uint64_t n)
{
	counted[c] += n;
}

void inproc_walk__stats(struct xpu_cupti_walk_stats *out)
{
	memcpy(out->inproc, counted, sizeof(counted));
	out->cnt[0] = 4242;
}

void inproc_walk__ag_slots(uint64_t *addr, uint32_t *nslots)
{
	*addr = 0x7f0000001000ull;
	*nslots = 1024;
}

/* ---- the fake recorder --------------------------------------------------------------------- */
static int peer;		/* the recorder's end of the connection */
static uint32_t peer_seq;	/* seq of the next message the library sends */

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

/* a memfd of size bytes, its first 16 bytes magic/version (as both shares start), sealed */
static int share_fd(uint64_t size, uint32_t magic, int seals)
{
	int fd = memfd_create("xpu-test-share", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	uint32_t head[4] = { magic, XPU_SHARE_VERSION, 0, 0 };

	if (fd < 0 || ftruncate(fd, (off_t)size) || pwrite(fd, head, sizeof(head), 0) != sizeof(head))
		abort();
	if (magic == XPU_SHARE_MAGIC && size >= sizeof(struct xpu_share_arena)) {
		/* the arena's capacity_bytes at offset 8 */
		uint64_t cap = size;

		if (pwrite(fd, &cap, sizeof(cap), 8) != sizeof(cap))
			abort();
	}
	if (seals && fcntl(fd, F_ADD_SEALS, seals))
		abort();
	return fd;
}

static void send_with_fds(uint16_t type, uint16_t version, const void *payload, uint32_t len,
			  const int *fds, int nfd)
{
	struct xpu_cupti_msg_header h = {
		.magic = XPU_CUPTI_WIRE_MAGIC,
		.type = type,
		.version = version,
		.len = len,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)payload, len } };
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(8 * sizeof(int))];
	} ctl;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };

	if (nfd) {
		struct cmsghdr *c;

		m.msg_control = ctl.b;
		m.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfd * sizeof(int));
	}
	if (sendmsg(peer, &m, 0) < 0)
		abort();
}

/* one message from the library, type and payload; -1 when none is waiting */
static int recv_msg(void *payload, size_t room, uint32_t *len)
{
	uint8_t b[XPU_CUPTI_MSG_MAX_BYTES];
	struct xpu_cupti_msg_header h;
	ssize_t n = recv(peer, b, sizeof(b), MSG_DONTWAIT);

	if (n < (ssize_t)sizeof(h))
		return -1;
	memcpy(&h, b, sizeof(h));
	CHECK(h.seq == peer_seq, "seq %u, want %u", h.seq, peer_seq);
	peer_seq = h.seq + 1;
	*len = (uint32_t)n - sizeof(h);
	memcpy(payload, b + sizeof(h), *len < room ? *len : room);
	return h.type;
}

struct share_case {
	const char *what;
	uint16_t type, version;
	uint32_t len;			/* payload bytes sent */
	uint64_t arena_bytes, proc_bytes;	/* claimed */
	uint64_t arena_file, proc_file;	/* real sizes */
	uint32_t arena_magic;
	int seals;
	int nfd;
};

#define ARENA (XPU_SHARE_ARENA_DATA + 4096)
#define PROC ((sizeof(struct xpu_share_proc) + 4095) & ~4095ul)
#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static void send_share(const struct share_case *c)
{
	struct {
		struct xpu_cupti_share s;
		uint8_t extra[16];
	} p = { { c->arena_bytes, c->proc_bytes }, { 0 } };
	int fds[3], i;

	fds[0] = share_fd(c->arena_file, c->arena_magic, c->seals);
	fds[1] = share_fd(c->proc_file, XPU_SHARE_MAGIC, c->seals);
	fds[2] = share_fd(4096, XPU_SHARE_MAGIC, c->seals);
	send_with_fds(c->type, c->version, &p, c->len, fds, c->nfd);
	for (i = 0; i < 3; i++)
		close(fds[i]);
}

static void test_shares(void)
{
	const struct share_case good = {
		"good", XPU_CUPTI_MSG_SHARE, XPU_CUPTI_WIRE_VERSION, sizeof(struct xpu_cupti_share),
		ARENA, PROC, ARENA, PROC, XPU_SHARE_MAGIC, SEALS, 2,
	};
	struct share_case bad[] = {
		{ .what = "payload too short" },
		{ .what = "payload too long" },
		{ .what = "no descriptor" },
		{ .what = "one descriptor" },
		{ .what = "three descriptors" },
		{ .what = "arena of 0 bytes" },
		{ .what = "arena over 64 GiB" },
		{ .what = "process share too small" },
		{ .what = "file shorter than claimed" },
		{ .what = "not sealed" },
		{ .what = "arena magic" },
		{ .what = "wire version" },
		{ .what = "two descriptors on a BATCH" },
		{ .what = "descriptors on an unknown type" },
	};
	struct xpu_cupti_inproc in;
	uint8_t buf[256];
	uint32_t len;
	size_t i;
	int before, type;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *w = bad[i].what;

		bad[i] = good;
		bad[i].what = w;
	}
	bad[0].len = 8;
	bad[1].len = sizeof(struct xpu_cupti_share) + 8;
	bad[2].nfd = 0;
	bad[3].nfd = 1;
	bad[4].nfd = 3;
	bad[5].arena_bytes = 0;
	bad[6].arena_bytes = (64ull << 30) + 4096;
	bad[7].proc_bytes = 16;
	bad[8].arena_file = ARENA - 4096;
	bad[9].seals = 0;
	bad[10].arena_magic = 0x12345678;
	bad[11].version = XPU_CUPTI_WIRE_VERSION + 1;
	bad[12].type = XPU_CUPTI_MSG_BATCH;
	bad[13].type = 99;

	before = open_fds();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		send_share(&bad[i]);
		CHECK(!transport__stop_requested(), "%s: no stop", bad[i].what);
		CHECK(xc_inproc == XC_INPROC_WAIT, "%s: still waiting (%d)", bad[i].what, xc_inproc);
		CHECK(!set_calls, "%s: not handed to the walk", bad[i].what);
		CHECK(open_fds() == before, "%s: %d descriptors open, %d before", bad[i].what,
		      open_fds(), before);
		CHECK(recv_msg(buf, sizeof(buf), &len) == -1, "%s: no answer", bad[i].what);
	}
	/* many bad messages at once: one call reads them all (up to its bound) */
	for (i = 0; i < 10; i++)
		send_share(&bad[i % 5]);
	CHECK(!transport__stop_requested() && open_fds() == before, "a burst of bad SHAREs");

	send_share(&good);
	CHECK(!transport__stop_requested(), "good: no stop");
	CHECK(xc_inproc == XC_INPROC_ON, "good: on (%d)", xc_inproc);
	CHECK(set_calls == 1 && got_arena_bytes == ARENA && got_proc_bytes == PROC, "good: handed over");
	CHECK(got_arena && got_arena->magic == XPU_SHARE_MAGIC && got_arena->capacity_bytes == ARENA,
	      "good: the arena reads");
	CHECK(got_proc && got_proc->magic == XPU_SHARE_MAGIC, "good: the process share reads");
	/* two mappings, no descriptor */
	CHECK(open_fds() == before, "good: descriptors closed once mapped");
	type = recv_msg(&in, sizeof(in), &len);
	CHECK(type == XPU_CUPTI_MSG_INPROC && len == sizeof(in) && in.ag_slots_addr == 0x7f0000001000ull &&
	      in.ag_nslots == 1024, "INPROC answers (type %d, len %u)", type, len);

	send_share(&good);
	CHECK(!transport__stop_requested() && set_calls == 1 && open_fds() == before,
	      "a second SHARE is ignored and closed");
}

static void test_events(void)
{
	struct xpu_ev_pystack py = { .hdr = { .type = XPU_EV_PYSTACK, .tid = 7 }, .nr = 1 };
	struct xpu_ev_gpu_launch ev = { .hdr = { .type = XPU_EV_GPU_LAUNCH, .tid = 7 }, .corr_id = 5 };
	uint32_t pyb = offsetof(struct xpu_ev_pystack, frames) + sizeof(py.frames[0]);
	uint32_t evb = offsetof(struct xpu_ev_gpu_launch, uips) + 3 * 8;
	const void *part[2] = { &py, &ev };
	uint32_t lens[2] = { pyb, evb }, len;
	struct event_ring *r = event_ring__mine();
	static uint8_t buf[XPU_CUPTI_MSG_MAX_BYTES];
	struct xpu_cupti_walk_stats st;
	struct xpu_cupti_event_hdr h;
	struct xpu_cupti_done done;
	int i, type, msgs = 0, entries = 0;
	size_t off;

	CHECK(r != NULL, "a ring");
	for (i = 0; i < 1000; i++)
		event_ring__push(r, 2, part, lens);
	transport__send_events();
	while ((type = recv_msg(buf, sizeof(buf), &len)) == XPU_CUPTI_MSG_EVENTS) {
		msgs++;
		CHECK(len <= XPU_CUPTI_BATCH_MAX_BYTES, "EVENTS within the batch limit");
		for (off = 0; off + sizeof(h) <= len; entries++) {
			uint32_t t;

			memcpy(&h, buf + off, sizeof(h));
			memcpy(&t, buf + off + sizeof(h), sizeof(t));
			CHECK(h.size == (entries % 2 ? evb : pyb) && !h.reserved &&
			      t == (entries % 2 ? XPU_EV_GPU_LAUNCH : XPU_EV_PYSTACK), "entry %d", entries);
			off += sizeof(h) + ((h.size + 7) & ~7u);
		}
		CHECK(off == len && entries % 2 == 0, "whole pairs per message");
	}
	CHECK(type == -1, "only EVENTS (%d)", type);
	CHECK(entries == 2000 && msgs >= 2, "%d entries in %d messages", entries, msgs);
	CHECK(counted[XPU_INPROC_EVENT_BYTES] == 1000 * (16 + ((pyb + 7) & ~7u) + ((evb + 7) & ~7u)),
	      "bytes counted (%llu)", (unsigned long long)counted[XPU_INPROC_EVENT_BYTES]);

	transport__send_walk_stats();
	type = recv_msg(&st, sizeof(st), &len);
	CHECK(type == XPU_CUPTI_MSG_WALK_STATS && len == sizeof(st) && st.cnt[0] == 4242,
	      "WALK_STATS (%d)", type);

	/* the final flush: events still queued, the counters, then the batch and DONE */
	event_ring__push(r, 2, part, lens);
	transport__finish(0);
	CHECK(recv_msg(buf, sizeof(buf), &len) == XPU_CUPTI_MSG_EVENTS && len == 16 + ((pyb + 7) & ~7u) + ((evb + 7) & ~7u),
	      "final EVENTS");
	CHECK(recv_msg(&st, sizeof(st), &len) == XPU_CUPTI_MSG_WALK_STATS, "final WALK_STATS");
	CHECK(recv_msg(buf, sizeof(buf), &len) == XPU_CUPTI_MSG_BATCH, "final BATCH");
	CHECK(recv_msg(&done, sizeof(done), &len) == XPU_CUPTI_MSG_DONE, "then DONE");
	CHECK(xc_inproc != XC_INPROC_ON, "off after the finish");
}

int main(void)
{
	char dir[] = "/tmp/xpu-share-XXXXXX", path[108];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t buf[256];
	uint32_t len;
	int lfd;

	xc_pid = (uint32_t)getpid();
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/s", dir);
	strcpy(sa.sun_path, path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 4))
		return 1;
	CHECK(event_ring__pool_init(4, 1 << 20) == 0, "rings");
	transport__set_socket_path(path);

	/* a SHARE while the walk is off is only closed */
	transport__inproc_allow(false);
	CHECK(transport__connect(0, 0) == 0, "connect");
	peer = accept(lfd, NULL, NULL);
	CHECK(recv_msg(buf, sizeof(buf), &len) == XPU_CUPTI_MSG_HELLO, "HELLO");
	{
		int before = open_fds();
		struct share_case c = { "off", XPU_CUPTI_MSG_SHARE, XPU_CUPTI_WIRE_VERSION,
					sizeof(struct xpu_cupti_share), ARENA, PROC, ARENA, PROC,
					XPU_SHARE_MAGIC, SEALS, 2 };

		send_share(&c);
		CHECK(!transport__stop_requested() && xc_inproc == XC_INPROC_OFF && !set_calls &&
		      open_fds() == before, "off: ignored, closed");
	}
	transport__finish(0);
	close(peer);

	/* a new connection with the walk allowed */
	transport__inproc_allow(true);
	peer_seq = 0;
	CHECK(transport__connect(0, 0) == 0, "connect again");
	peer = accept(lfd, NULL, NULL);
	CHECK(recv_msg(buf, sizeof(buf), &len) == XPU_CUPTI_MSG_HELLO, "HELLO again");
	CHECK(xc_inproc == XC_INPROC_WAIT, "waiting for the tables");
	test_shares();
	test_events();
	close(peer);

	/* a later connection: its SHARE, awaited at connect, replaces the first one's */
	peer_seq = 0;
	CHECK(transport__connect(0, 0) == 0, "a third connection");
	peer = accept(lfd, NULL, NULL);
	recv_msg(buf, sizeof(buf), &len);
	{
		struct share_case c = { "again", XPU_CUPTI_MSG_SHARE, XPU_CUPTI_WIRE_VERSION,
					sizeof(struct xpu_cupti_share), ARENA, PROC, ARENA, PROC,
					XPU_SHARE_MAGIC, SEALS, 2 };
		uint64_t t0 = xc_mono_ns();

		CHECK(!transport__await_share(30), "nothing sent: no share");
		CHECK(xc_mono_ns() - t0 >= 30000000ull, "waited its time");
		send_share(&c);
		CHECK(transport__await_share(1000) && set_calls == 2, "awaited SHARE mapped");
		CHECK(recv_msg(buf, sizeof(buf), &len) == XPU_CUPTI_MSG_INPROC, "INPROC again");
	}
	transport__finish(0);
	close(peer);

	/* STOP is still STOP, also when it comes while the library waits for a SHARE */
	peer_seq = 0;
	CHECK(transport__connect(0, 0) == 0, "a fourth connection");
	peer = accept(lfd, NULL, NULL);
	recv_msg(buf, sizeof(buf), &len);
	send_with_fds(XPU_CUPTI_MSG_STOP, XPU_CUPTI_WIRE_VERSION, NULL, 0, NULL, 0);
	CHECK(!transport__await_share(1000), "no share awaited past a STOP");
	CHECK(transport__stop_requested(), "STOP");
	close(peer);
	CHECK(transport__stop_requested(), "gone");
	transport__finish(0);
	unlink(path);
	rmdir(dir);
	return unit_finish();
}
