// SPDX-License-Identifier: MIT
/*
 * The CUPTI receiver against fake clients speaking the wire protocol: check-in, batches with
 * pid rewriting, rejection of untraced peers and malformed input, many clients at once, and the
 * stop handshake. The writer thread is a stub that keeps what it is given.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cupti_rx.h"
#include "cupti_wire.h"
#include "inproc_events.h"
#include "mono_clock.h"
#include "unit.h"
#include "writer_thread.h"

static uint64_t now_ms(void)
{
	return clock_mono_ns() / 1000000;
}

/*
 * How long a wait for the receiver's thread may take before the test says what it waited for:
 * that thread runs when the scheduler lets it, so on a loaded machine (parallel tests, other
 * builds) a fixed sleep is not enough; the bound only stops a hang.
 */
#define WAIT_MS 10000
/* polls COND (an expression that may refresh what it reads) until it holds or WAIT_MS pass */
#define WAIT_UNTIL(cond)                                                                   \
	do {                                                                               \
		uint64_t wait_t0_ = now_ms();                                              \
		while (!(cond) && now_ms() - wait_t0_ < WAIT_MS)                           \
			usleep(2000);                                                      \
	} while (0)

/* ---- stub writer thread --------------------------------------------------------------------- */

static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint32_t source;
	uint16_t type;
	uint8_t body[256];
} got[4096];
static int ngot, nclosed;
static int type_count[64];

int writer_thread__submit_foreign(struct writer_thread *wt, uint32_t source_id, const void *records,
				  size_t len)
{
	const uint8_t *p = records;
	size_t off = 0;

	pthread_mutex_lock(&got_lock);
	while (off < len) {
		struct xpu_record_header h;

		memcpy(&h, p + off, sizeof(h));
		type_count[h.type < 64 ? h.type : 0]++;
		if (ngot == 4096) {
			off += h.size;
			continue;
		}
		got[ngot].source = source_id;
		got[ngot].type = h.type;
		memcpy(got[ngot].body, p + off + sizeof(h),
		       h.size - sizeof(h) < sizeof(got[0].body) ? h.size - sizeof(h) : sizeof(got[0].body));
		ngot++;
		off += h.size;
	}
	pthread_mutex_unlock(&got_lock);
	return 0;
}

void writer_thread__source_closed(struct writer_thread *wt, uint32_t source_id)
{
	pthread_mutex_lock(&got_lock);
	nclosed++;
	pthread_mutex_unlock(&got_lock);
}

static int count_type(uint16_t type)
{
	int n;

	pthread_mutex_lock(&got_lock);
	n = type_count[type < 64 ? type : 0];
	pthread_mutex_unlock(&got_lock);
	return n;
}

static void reset_got(void)
{
	pthread_mutex_lock(&got_lock);
	ngot = nclosed = 0;
	memset(type_count, 0, sizeof(type_count));
	pthread_mutex_unlock(&got_lock);
}

static int traced_all(void *ctx, pid_t pid)
{
	return 1;
}

static int traced_none(void *ctx, pid_t pid)
{
	return 0;
}

/* ---- fake client ---------------------------------------------------------------------------- */

static int client_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int client_send(int fd, uint16_t type, uint32_t seq, const void *payload, size_t len)
{
	uint8_t buf[XPU_CUPTI_MSG_MAX_BYTES];
	struct xpu_cupti_msg_header h = {
		.magic = XPU_CUPTI_WIRE_MAGIC,
		.type = type,
		.version = XPU_CUPTI_WIRE_VERSION,
		.len = (uint32_t)len,
		.seq = seq,
	};

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), payload, len);
	return send(fd, buf, sizeof(h) + len, MSG_NOSIGNAL) == (ssize_t)(sizeof(h) + len) ? 0 : -1;
}

static size_t put(uint8_t *buf, size_t off, uint16_t type, const void *body, uint32_t body_size,
		  const void *tail, uint32_t tail_size)
{
	struct xpu_record_header h = { .type = type };

	h.size = (sizeof(h) + body_size + tail_size + 7) & ~7u;
	memset(buf + off, 0, h.size);
	memcpy(buf + off, &h, sizeof(h));
	memcpy(buf + off + sizeof(h), body, body_size);
	if (tail_size)
		memcpy(buf + off + sizeof(h) + body_size, tail, tail_size);
	return off + h.size;
}

/* A whole well-behaved client session: hello, n_kernels kernels, done. */
static int client_session(const char *path, int n_kernels, bool say_done)
{
	struct xpu_cupti_hello hello = { .pid = 12345 };
	static uint8_t batch[XPU_CUPTI_BATCH_MAX_BYTES];
	struct xpu_rec_string s = { .id = 1, .len = 6 };
	struct xpu_cupti_done done = { 0 };
	uint32_t seq = 0;
	size_t len;
	int fd, i;

	fd = client_connect(path);
	if (fd < 0)
		return -1;
	if (client_send(fd, XPU_CUPTI_MSG_HELLO, seq++, &hello, sizeof(hello)))
		goto fail;
	len = put(batch, 0, XPU_REC_STRING, &s, sizeof(s), "kernel", 6);
	for (i = 0; i < n_kernels; i++) {
		struct xpu_rec_gpu_kernel k = { .pid = 999, .corr_id = i + 1, .name_str = 1 };

		len = put(batch, len, XPU_REC_GPU_KERNEL, &k, sizeof(k), NULL, 0);
		if (len + 128 > sizeof(batch) || i == n_kernels - 1) {
			if (client_send(fd, XPU_CUPTI_MSG_BATCH, seq++, batch, len))
				goto fail;
			len = 0;
		}
	}
	if (say_done && client_send(fd, XPU_CUPTI_MSG_DONE, seq++, &done, sizeof(done)))
		goto fail;
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_fix_batch(void)
{
	uint8_t buf[512];
	struct xpu_rec_gpu_kernel k = { .pid = 7 };
	struct xpu_rec_gpu_launch l = { 0 };
	struct xpu_rec_string s = { .id = 3, .len = 100 };
	size_t len;

	len = put(buf, 0, XPU_REC_GPU_KERNEL, &k, sizeof(k), NULL, 0);
	CHECK(xpu_cupti_wire_fix_batch(buf, len, 42) == 1, "one kernel");
	memcpy(&k, buf + 8, sizeof(k));
	CHECK(k.pid == 42, "pid rewritten to %u", k.pid);
	CHECK(xpu_cupti_wire_fix_batch(buf, len - 8, 42) < 0, "truncated record");
	CHECK(xpu_cupti_wire_fix_batch(buf, 4, 42) < 0, "unaligned length");
	len = put(buf, 0, XPU_REC_GPU_LAUNCH, &l, sizeof(l), NULL, 0);
	CHECK(xpu_cupti_wire_fix_batch(buf, len, 42) < 0, "launch records come from BPF only");
	{
		uint8_t zero[64] = { 0 };

		len = put(buf, 0, XPU_REC_SESSION, zero, sizeof(zero), NULL, 0);
	}
	CHECK(xpu_cupti_wire_fix_batch(buf, len, 42) < 0, "session record refused");
	len = put(buf, 0, XPU_REC_STRING, &s, sizeof(s), "abc", 3);
	CHECK(xpu_cupti_wire_fix_batch(buf, len, 42) < 0, "string length beyond its record");
	s.len = 3;
	len = put(buf, 0, XPU_REC_STRING, &s, sizeof(s), "abc", 3);
	CHECK(xpu_cupti_wire_fix_batch(buf, len, 42) == 1, "good string");
	s.id = 0;
	len = put(buf, 0, XPU_REC_STRING, &s, sizeof(s), "abc", 3);
	CHECK(xpu_cupti_wire_fix_batch(buf, len, 42) < 0, "string id 0");
	/* a record claiming size 0 must not loop forever */
	memset(buf, 0, 16);
	((struct xpu_record_header *)buf)->type = XPU_REC_GPU_KERNEL;
	CHECK(xpu_cupti_wire_fix_batch(buf, 16, 42) < 0, "size 0");
}

static void test_one_client(void)
{
	char err[256];
	struct cupti_rx_stats st;
	struct cupti_rx *rx;
	struct stat sb;
	char dir[128];
	int i, pid_ok = 1;

	reset_got();
	rx = cupti_rx__start(NULL, traced_all, NULL, err, sizeof(err));
	CHECK(rx != NULL, "start: %s", err);
	if (!rx)
		return;
	snprintf(dir, sizeof(dir), "%s", cupti_rx__socket_path(rx));
	*strrchr(dir, '/') = '\0';
	CHECK(!stat(dir, &sb) && (sb.st_mode & 0777) == 0700, "private directory mode %o",
	      sb.st_mode & 0777);
	CHECK(client_session(cupti_rx__socket_path(rx), 10, true) == 0, "client session");
	cupti_rx__stop(rx, 2000, NULL);
	CHECK(count_type(XPU_REC_GPU_PROCESS) == 1, "connected record");
	CHECK(count_type(XPU_REC_STRING) == 1, "string");
	CHECK(count_type(XPU_REC_GPU_KERNEL) == 10, "10 kernels, got %d", count_type(XPU_REC_GPU_KERNEL));
	for (i = 0; i < ngot; i++) {
		struct xpu_rec_gpu_kernel k;

		if (got[i].type != XPU_REC_GPU_KERNEL)
			continue;
		memcpy(&k, got[i].body, sizeof(k));
		pid_ok &= k.pid == (uint32_t)getpid();
	}
	CHECK(pid_ok, "kernel pids are the peer's pid from SO_PEERCRED");
	CHECK(nclosed == 1, "source closed once, got %d", nclosed);
	(void)st;
	CHECK(access(dir, F_OK) != 0, "socket directory removed");
}

static void test_rejected(void)
{
	char err[256];
	struct cupti_rx_stats st;
	struct cupti_rx *rx;

	reset_got();
	rx = cupti_rx__start(NULL, traced_none, NULL, err, sizeof(err));
	CHECK(rx != NULL, "start: %s", err);
	if (!rx)
		return;
	client_session(cupti_rx__socket_path(rx), 3, true);
	WAIT_UNTIL((cupti_rx__get_stats(rx, &st), st.rejected >= 1));
	CHECK(st.rejected == 1, "rejected %llu", (unsigned long long)st.rejected);
	cupti_rx__stop(rx, 500, NULL);
	CHECK(ngot == 0, "nothing from an untraced peer, got %d", ngot);
}

static void test_malformed(void)
{
	char err[256];
	struct cupti_rx_stats st;
	struct cupti_rx *rx;
	struct xpu_cupti_hello hello = { 0 };
	uint8_t junk[64];
	int fd;

	reset_got();
	rx = cupti_rx__start(NULL, traced_all, NULL, err, sizeof(err));
	if (!rx)
		return;
	/* batch before hello: connection dropped */
	fd = client_connect(cupti_rx__socket_path(rx));
	memset(junk, 0xab, sizeof(junk));
	client_send(fd, XPU_CUPTI_MSG_BATCH, 0, junk, sizeof(junk));
	usleep(50 * 1000);
	close(fd);
	/* hello, then a bad batch (dropped alone), then a gap in seq, then a good batch */
	fd = client_connect(cupti_rx__socket_path(rx));
	client_send(fd, XPU_CUPTI_MSG_HELLO, 0, &hello, sizeof(hello));
	client_send(fd, XPU_CUPTI_MSG_BATCH, 1, junk, sizeof(junk));
	{
		uint8_t b[128];
		struct xpu_rec_gpu_memcpy m = { .bytes = 5 };
		size_t len = put(b, 0, XPU_REC_GPU_MEMCPY, &m, sizeof(m), NULL, 0);

		client_send(fd, XPU_CUPTI_MSG_BATCH, 5, b, len);
	}
	/* raw garbage, not even a header */
	send(fd, "xx", 2, MSG_NOSIGNAL);
	close(fd);
	WAIT_UNTIL((cupti_rx__get_stats(rx, &st), st.bad_messages >= 3 && st.lost_messages >= 3 &&
		    count_type(XPU_REC_GPU_MEMCPY) >= 1));
	cupti_rx__stop(rx, 500, NULL);
	CHECK(st.bad_messages == 3, "bad messages %llu", (unsigned long long)st.bad_messages);
	CHECK(st.lost_messages == 3, "lost messages %llu", (unsigned long long)st.lost_messages);
	CHECK(count_type(XPU_REC_GPU_MEMCPY) == 1, "good batch after a bad one kept");
	CHECK(count_type(XPU_REC_GPU_PROCESS) == 1, "one connected client");
}

/* Many processes at once, some without DONE; stop waits for them all. */
static void test_many_clients(void)
{
	enum { NPROC = 12, NK = 3000 };
	char err[256];
	struct cupti_rx_stats st;
	struct cupti_rx *rx;
	pid_t kids[NPROC];
	int i, ok = 1;
	uint64_t t0;

	reset_got();
	rx = cupti_rx__start(NULL, traced_all, NULL, err, sizeof(err));
	if (!rx)
		return;
	for (i = 0; i < NPROC; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			usleep(i * 20 * 1000);
			_exit(client_session(cupti_rx__socket_path(rx), i == 0 ? 1 : NK / 3, i % 3 != 0) ? 1 : 0);
		}
	}
	for (i = 0; i < NPROC; i++) {
		int status;

		waitpid(kids[i], &status, 0);
		ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	CHECK(ok, "all clients ran");
	t0 = now_ms();
	cupti_rx__get_stats(rx, &st);
	/* a timeout far above what a stop may take even on a loaded machine: a stop that waited
	 * for clients that are gone would take all of it */
	cupti_rx__stop(rx, 30000, NULL);
	CHECK(now_ms() - t0 < 15000, "stop does not wait for clients that are gone: %llu ms",
	      (unsigned long long)(now_ms() - t0));
	CHECK(count_type(XPU_REC_GPU_KERNEL) == 1 + (NPROC - 1) * (NK / 3), "kernels %d",
	      count_type(XPU_REC_GPU_KERNEL));
	CHECK(count_type(XPU_REC_GPU_PROCESS) == NPROC, "connected records %d",
	      count_type(XPU_REC_GPU_PROCESS));
	CHECK(nclosed == NPROC, "sources closed %d", nclosed);
}

/* A client that stays connected without DONE holds stop only until the timeout. */
static void test_stop_timeout(void)
{
	char err[256];
	struct xpu_cupti_hello hello = { 0 };
	struct cupti_rx *rx;
	uint64_t t0;
	int fd;

	reset_got();
	rx = cupti_rx__start(NULL, traced_all, NULL, err, sizeof(err));
	if (!rx)
		return;
	fd = client_connect(cupti_rx__socket_path(rx));
	client_send(fd, XPU_CUPTI_MSG_HELLO, 0, &hello, sizeof(hello));
	usleep(50 * 1000);
	t0 = now_ms();
	cupti_rx__stop(rx, 300, NULL);
	/* at least the timeout, and not forever: load only makes it later, so the upper bound
	 * is what a hang would cross, not what a busy machine might */
	CHECK(now_ms() - t0 >= 250 && now_ms() - t0 < 300 + WAIT_MS, "stop waited %llu ms",
	      (unsigned long long)(now_ms() - t0));
	close(fd);
}

/* ---- the in-process walk's messages -------------------------------------------------------- */

static struct {
	int event_calls, launches, events, bad_pid, refuse;
	int inproc_calls;
	uint32_t inproc_pid, inproc_nslots;
	uint64_t inproc_addr;
} sink_got;

static int sink_events(void *ctx, uint32_t pid, const void *entries, size_t len, uint32_t launches)
{
	uint64_t ev[(INPROC_EV_MAX_BYTES + 7) / 8];
	size_t off = 0;

	pthread_mutex_lock(&got_lock);
	sink_got.event_calls++;
	sink_got.launches += launches;
	while (inproc_events__next(entries, len, &off, ev)) {
		struct xpu_ev_hdr h;

		memcpy(&h, ev, sizeof(h));
		sink_got.events++;
		if (h.pid != (uint32_t)getpid() || pid != (uint32_t)getpid())
			sink_got.bad_pid++;
	}
	pthread_mutex_unlock(&got_lock);
	return sink_got.refuse ? -ENOBUFS : 0;
}

static void sink_inproc(void *ctx, uint32_t pid, uint64_t addr, uint32_t nslots)
{
	pthread_mutex_lock(&got_lock);
	sink_got.inproc_calls++;
	sink_got.inproc_pid = pid;
	sink_got.inproc_addr = addr;
	sink_got.inproc_nslots = nslots;
	pthread_mutex_unlock(&got_lock);
}

/* A launch event with a Python stack in front of it, as the library sends them. */
static size_t put_walked_launch(uint8_t *buf, size_t off, uint32_t tid, uint64_t ts)
{
	struct xpu_ev_pystack p = {
		.hdr = { .type = XPU_EV_PYSTACK, .pid = 1, .tid = tid, .ts_ns = ts },
		.for_type = XPU_EV_GPU_LAUNCH, .nr = 1,
	};
	struct xpu_ev_gpu_launch l = {
		.hdr = { .type = XPU_EV_GPU_LAUNCH, .pid = 1, .tid = tid, .ts_ns = ts },
		.nr_user = 2, .uips = { 0x401000, 0x402000 },
	};
	struct xpu_cupti_event_hdr eh = { .size = offsetof(struct xpu_ev_pystack, frames) + 16 };

	memcpy(buf + off, &eh, sizeof(eh));
	memcpy(buf + off + sizeof(eh), &p, eh.size);
	off += sizeof(eh) + eh.size;
	eh.size = offsetof(struct xpu_ev_gpu_launch, uips) + 16;
	memcpy(buf + off, &eh, sizeof(eh));
	memcpy(buf + off + sizeof(eh), &l, eh.size);
	return off + sizeof(eh) + eh.size;
}

static bool wait_for(int *what, int want)
{
	uint64_t t0 = now_ms();
	int v;

	do {
		pthread_mutex_lock(&got_lock);
		v = *what;
		pthread_mutex_unlock(&got_lock);
		if (v >= want)
			return true;
		usleep(2000);
	} while (now_ms() - t0 < WAIT_MS);
	return false;
}

static void test_inproc(void)
{
	struct cupti_rx_sink sink = { .on_events = sink_events, .on_inproc = sink_inproc };
	struct xpu_cupti_hello hello = { .pid = 12345 };
	struct xpu_cupti_walk_stats w = { 0 };
	struct xpu_cupti_inproc in = { .ag_slots_addr = 0x7f0000001000ull, .ag_nslots = 64 };
	struct xpu_cupti_done done = { 0 };
	static uint8_t ev[4096];
	struct cupti_rx_stats st;
	struct cupti_rx *rx;
	char err[256];
	uint32_t seq = 0;
	size_t len;
	int fd, fd2;

	reset_got();
	memset(&sink_got, 0, sizeof(sink_got));
	rx = cupti_rx__start(NULL, traced_all, NULL, err, sizeof(err));
	CHECK(rx != NULL, "start: %s", err);
	if (!rx)
		return;
	cupti_rx__set_sink(rx, &sink);
	/* before HELLO: nothing is trusted, the connection goes */
	fd = client_connect(cupti_rx__socket_path(rx));
	len = put_walked_launch(ev, 0, 100, 1000);
	client_send(fd, XPU_CUPTI_MSG_EVENTS, 0, ev, len);
	usleep(50 * 1000);
	close(fd);

	fd = client_connect(cupti_rx__socket_path(rx));
	CHECK(fd >= 0, "connect");
	client_send(fd, XPU_CUPTI_MSG_HELLO, seq++, &hello, sizeof(hello));
	/* two launches in one message, then a message whose second launch is one byte short */
	len = put_walked_launch(ev, put_walked_launch(ev, 0, 100, 1000), 101, 1001);
	client_send(fd, XPU_CUPTI_MSG_EVENTS, seq++, ev, len);
	len = put_walked_launch(ev, 0, 102, 1002);
	len = put_walked_launch(ev, len, 103, 1003);
	client_send(fd, XPU_CUPTI_MSG_EVENTS, seq++, ev, len - 1);
	CHECK(wait_for(&sink_got.event_calls, 2), "two EVENTS handed over");
	CHECK(sink_got.launches == 3 && sink_got.events == 6 && !sink_got.bad_pid,
	      "launches %d events %d bad pids %d", sink_got.launches, sink_got.events,
	      sink_got.bad_pid);
	/* the autograd slots: a power of two up to 65536 only */
	in.ag_nslots = 48;
	client_send(fd, XPU_CUPTI_MSG_INPROC, seq++, &in, sizeof(in));
	in.ag_nslots = 131072;
	client_send(fd, XPU_CUPTI_MSG_INPROC, seq++, &in, sizeof(in));
	client_send(fd, XPU_CUPTI_MSG_INPROC, seq++, &in, sizeof(in) - 4);
	in.ag_nslots = 64;
	client_send(fd, XPU_CUPTI_MSG_INPROC, seq++, &in, sizeof(in));
	CHECK(wait_for(&sink_got.inproc_calls, 1), "INPROC handed over");
	CHECK(sink_got.inproc_calls == 1 && sink_got.inproc_addr == in.ag_slots_addr &&
	      sink_got.inproc_nslots == 64 && sink_got.inproc_pid == (uint32_t)getpid(),
	      "INPROC calls %d addr %llx nslots %u", sink_got.inproc_calls,
	      (unsigned long long)sink_got.inproc_addr, sink_got.inproc_nslots);
	/* running totals: the later message replaces the earlier */
	w.cnt[XPU_CNT_CFI_WALKS] = 5;
	w.inproc[XPU_INPROC_WALKS] = 5;
	client_send(fd, XPU_CUPTI_MSG_WALK_STATS, seq++, &w, sizeof(w));
	w.cnt[XPU_CNT_CFI_WALKS] = 7;
	w.inproc[XPU_INPROC_WALKS] = 7;
	client_send(fd, XPU_CUPTI_MSG_WALK_STATS, seq++, &w, sizeof(w));
	client_send(fd, XPU_CUPTI_MSG_WALK_STATS, seq++, &w, sizeof(w) - 8);
	/* a second client's add to them, and stay when it leaves */
	fd2 = client_connect(cupti_rx__socket_path(rx));
	client_send(fd2, XPU_CUPTI_MSG_HELLO, 0, &hello, sizeof(hello));
	w.cnt[XPU_CNT_CFI_WALKS] = 3;
	w.inproc[XPU_INPROC_WALKS] = 3;
	client_send(fd2, XPU_CUPTI_MSG_WALK_STATS, 1, &w, sizeof(w));
	usleep(50 * 1000);
	close(fd2);
	/* the sink full: counted as refused */
	sink_got.refuse = 1;
	len = put_walked_launch(ev, 0, 104, 1004);
	client_send(fd, XPU_CUPTI_MSG_EVENTS, seq++, ev, len);
	CHECK(wait_for(&sink_got.event_calls, 3), "refused EVENTS handed over");
	/* after DONE, nothing more */
	client_send(fd, XPU_CUPTI_MSG_DONE, seq++, &done, sizeof(done));
	sink_got.refuse = 0;
	client_send(fd, XPU_CUPTI_MSG_EVENTS, seq++, ev, len);
	usleep(50 * 1000);
	close(fd);
	cupti_rx__stop(rx, 2000, &st);
	CHECK(sink_got.event_calls == 3, "no EVENTS after DONE or before HELLO: %d calls",
	      sink_got.event_calls);
	CHECK(sink_got.inproc_calls == 2 && sink_got.inproc_addr == 0,
	      "slots forgotten when the client left: calls %d addr %llx", sink_got.inproc_calls,
	      (unsigned long long)sink_got.inproc_addr);
	CHECK(st.inproc_messages == 2 && st.inproc_launches == 3 && st.inproc_refused == 1,
	      "messages %llu launches %llu refused %llu", (unsigned long long)st.inproc_messages,
	      (unsigned long long)st.inproc_launches, (unsigned long long)st.inproc_refused);
	CHECK(st.inproc_dropped == 2, "dropped %llu: the short launch and its Python stack",
	      (unsigned long long)st.inproc_dropped);
	/* before HELLO, the short EVENTS, 3 bad INPROC, a short WALK_STATS, EVENTS after DONE */
	CHECK(st.bad_messages == 7, "bad messages %llu", (unsigned long long)st.bad_messages);
	CHECK(st.walk.cnt[XPU_CNT_CFI_WALKS] == 10 && st.walk.inproc[XPU_INPROC_WALKS] == 10,
	      "walk totals %llu %llu", (unsigned long long)st.walk.cnt[XPU_CNT_CFI_WALKS],
	      (unsigned long long)st.walk.inproc[XPU_INPROC_WALKS]);
}

/*
 * DONE gets DONE_ACK only after the sink's sync: a fake drain that takes its queue only when
 * synced (after a delay) must have processed every launch handed over before the ack.
 */
static struct {
	_Atomic int queued;
	_Atomic int processed;
	_Atomic int sync_calls;
} drain_got;

static int drain_events(void *ctx, uint32_t pid, const void *entries, size_t len,
			uint32_t launches)
{
	atomic_fetch_add(&drain_got.queued, (int)launches);
	return 0;
}

static int drain_sync(void *ctx, uint32_t pid, int timeout_ms)
{
	atomic_fetch_add(&drain_got.sync_calls, 1);
	/* a drain thread busy elsewhere: the ack must wait for it */
	usleep(100 * 1000);
	atomic_store(&drain_got.processed, atomic_load(&drain_got.queued));
	return timeout_ms > 0 ? 0 : -ETIMEDOUT;
}

/* The next message from the recorder, within WAIT_MS; its header in h. */
static bool recv_header(int fd, struct xpu_cupti_msg_header *h)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, WAIT_MS) == 1 && recv(fd, h, sizeof(*h), 0) == (ssize_t)sizeof(*h);
}

static void test_done_ack(void)
{
	struct cupti_rx_sink sink = { .on_events = drain_events, .on_sync = drain_sync };
	struct cupti_rx_sink no_sync = { .on_events = drain_events };
	struct xpu_cupti_hello hello = { .pid = 12345 };
	struct xpu_cupti_done done = { 0 };
	struct xpu_cupti_msg_header h;
	static uint8_t ev[4096];
	struct cupti_rx_stats st;
	struct cupti_rx *rx;
	char err[256];
	size_t len;
	int fd, round;

	rx = cupti_rx__start(NULL, traced_all, NULL, err, sizeof(err));
	CHECK(rx != NULL, "start: %s", err);
	if (!rx)
		return;
	for (round = 0; round < 2; round++) {
		memset(&drain_got, 0, sizeof(drain_got));
		cupti_rx__set_sink(rx, round ? &no_sync : &sink);
		fd = client_connect(cupti_rx__socket_path(rx));
		CHECK(fd >= 0, "connect");
		client_send(fd, XPU_CUPTI_MSG_HELLO, 0, &hello, sizeof(hello));
		len = put_walked_launch(ev, put_walked_launch(ev, 0, 100, 1000), 101, 1001);
		client_send(fd, XPU_CUPTI_MSG_EVENTS, 1, ev, len);
		len = put_walked_launch(ev, 0, 102, 1002);
		client_send(fd, XPU_CUPTI_MSG_EVENTS, 2, ev, len);
		client_send(fd, XPU_CUPTI_MSG_DONE, 3, &done, sizeof(done));
		/* no walk share: the ack is the recorder's first message, seq 0 */
		CHECK(recv_header(fd, &h) && h.magic == XPU_CUPTI_WIRE_MAGIC &&
		      h.type == XPU_CUPTI_MSG_DONE_ACK && h.len == 0 && h.seq == 0,
		      "round %d: DONE_ACK after DONE (type %u seq %u)", round, h.type, h.seq);
		if (!round)
			CHECK(atomic_load(&drain_got.sync_calls) == 1 &&
			      atomic_load(&drain_got.processed) == 3,
			      "the ack after the sync: %d syncs, %d of 3 launches processed",
			      atomic_load(&drain_got.sync_calls), atomic_load(&drain_got.processed));
		else
			CHECK(atomic_load(&drain_got.queued) == 3, "no sync: %d of 3 launches handed",
			      atomic_load(&drain_got.queued));
		close(fd);
	}
	cupti_rx__stop(rx, 2000, &st);
	CHECK(st.clean_exits == 2 && st.bad_messages == 0, "clean exits %llu bad %llu",
	      (unsigned long long)st.clean_exits, (unsigned long long)st.bad_messages);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_fix_batch();
	test_one_client();
	test_rejected();
	test_malformed();
	test_many_clients();
	test_stop_timeout();
	test_inproc();
	test_done_ack();
	return unit_finish();
}
