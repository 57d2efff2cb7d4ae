// SPDX-License-Identifier: MIT
/*
 * The CUPTI receiver against fake clients speaking the wire protocol: check-in, batches with
 * pid rewriting, rejection of untraced peers and malformed input, many clients at once, and the
 * stop handshake. The writer thread is a stub that keeps what it is given.
 */
#include <pthread.h>
#include <signal.h>
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
#include "mono_clock.h"
#include "unit.h"
#include "writer_thread.h"

static uint64_t now_ms(void)
{
	return clock_mono_ns() / 1000000;
}

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
	usleep(100 * 1000);
	cupti_rx__get_stats(rx, &st);
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
	usleep(100 * 1000);
	cupti_rx__get_stats(rx, &st);
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
	cupti_rx__stop(rx, 3000, NULL);
	CHECK(now_ms() - t0 < 2000, "stop does not wait for clients that are gone");
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
	CHECK(now_ms() - t0 >= 250 && now_ms() - t0 < 1500, "stop waited %llu ms",
	      (unsigned long long)(now_ms() - t0));
	close(fd);
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
	return unit_finish();
}
