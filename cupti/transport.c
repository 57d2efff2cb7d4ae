// SPDX-License-Identifier: MIT
/*
 * Connection to the recorder's receiver (common/cupti_wire.h): record batches in file layout
 * with connection-local string ids. Sends are non-blocking with a bounded wait, so a stalled or
 * vanished recorder costs the target at most that wait per batch, never a hang; whatever cannot
 * be sent is counted and reported as XPU_LOST_CUPTI_TRANSPORT once sending works again.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cupti_wire.h"
#include "xpu_cupti.h"

/* Longest wait for room in the socket per message. */
#define SEND_WAIT_MS 500
/* Longest string we send; kernel names beyond this are cut (C++ templates can be huge). */
#define STRING_MAX_BYTES (32u << 10)

struct str_ent {
	uint64_t hash;
	uint32_t id;
	uint32_t len;
	char *s;
};

static struct {
	pthread_mutex_t lock;
	int fd;
	bool connected;
	bool finished;
	uint32_t seq;
	uint8_t buf[XPU_CUPTI_MSG_MAX_BYTES];
	size_t len;			/* payload bytes in buf after the message header */
	uint64_t nrec;			/* records in the open batch */
	uint64_t sent;
	uint64_t dropped;
	uint64_t dropped_unreported;
	/* string intern table, open addressing, power-of-two capacity */
	struct str_ent *strs;
	uint32_t cap;
	uint32_t count;
	uint32_t next_id;
} tx = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.next_id = 1,
};

void transport__lock(void)
{
	pthread_mutex_lock(&tx.lock);
}

void transport__unlock(void)
{
	pthread_mutex_unlock(&tx.lock);
}

bool transport__connected(void)
{
	return tx.connected;
}

static void disconnect(const char *why, int err)
{
	if (!tx.connected)
		return;
	xc_err_once("lost the connection to xpu-record (%s: %s): GPU data of pid %d is dropped from now on",
		    why, strerror(err), (int)xc_pid);
	close(tx.fd);
	tx.fd = -1;
	tx.connected = false;
}

/* One message, waiting at most SEND_WAIT_MS for room. 0 or negative errno. */
static int send_msg(uint16_t type, const void *payload, size_t len)
{
	struct xpu_cupti_msg_header h = {
		.magic = XPU_CUPTI_WIRE_MAGIC,
		.type = type,
		.version = XPU_CUPTI_WIRE_VERSION,
		.len = (uint32_t)len,
		.seq = tx.seq,
	};
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = (void *)payload, .iov_len = len },
	};
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	uint64_t deadline = xc_mono_ns() + SEND_WAIT_MS * 1000000ull;

	if (!tx.connected)
		return -ENOTCONN;
	for (;;) {
		struct pollfd pfd = { .fd = tx.fd, .events = POLLOUT };
		uint64_t now;
		ssize_t n;

		n = sendmsg(tx.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0) {
			tx.seq++;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != ENOBUFS) {
			int err = errno;

			disconnect("send", err);
			return -err;
		}
		now = xc_mono_ns();
		if (now >= deadline) {
			xc_err_once("xpu-record is not reading fast enough: dropping GPU records");
			/* the message is lost, its seq too: the receiver sees the gap */
			tx.seq++;
			return -EAGAIN;
		}
		poll(&pfd, 1, (int)((deadline - now) / 1000000ull) + 1);
	}
}

static void strings_reset(void);

static char socket_path[108];

void transport__set_socket_path(const char *path)
{
	snprintf(socket_path, sizeof(socket_path), "%s", path ? path : "");
}

int transport__fd(void)
{
	return tx.connected ? tx.fd : -1;
}

bool transport__stop_requested(void)
{
	struct xpu_cupti_msg_header h;
	ssize_t n;
	int fd = transport__fd();

	if (fd < 0)
		return false;
	n = recv(fd, &h, sizeof(h), MSG_DONTWAIT);
	if (n == 0)
		return true;	/* the recorder is gone: nothing left to collect for */
	if (n < 0)
		return errno != EAGAIN && errno != EINTR;
	return (size_t)n >= sizeof(h) && h.magic == XPU_CUPTI_WIRE_MAGIC &&
	       h.type == XPU_CUPTI_MSG_STOP;
}

int transport__connect(uint32_t cupti_version, uint32_t hello_flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct xpu_cupti_hello hello = {
		.pid = xc_pid,
		.cupti_version = cupti_version,
		.flags = hello_flags,
		.mono_ns = xc_mono_ns(),
	};
	const char *path = socket_path[0] ? socket_path : getenv(XPU_CUPTI_SOCKET_ENV);
	int fd, i, err;

	if (!path || !*path) {
		xc_log("%s is not set (not started by xpu-record?): no GPU data for pid %d",
		       XPU_CUPTI_SOCKET_ENV, (int)xc_pid);
		return -ENOENT;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		xc_log("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	if (tx.finished) {
		/* a later attach to the same process: a new connection, counted from zero */
		strings_reset();
		tx.finished = false;
		tx.seq = 0;
		tx.len = tx.nrec = 0;
		tx.sent = tx.dropped = tx.dropped_unreported = 0;
		tx.next_id = 1;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = errno;
		xc_log("socket: %s: no GPU data for pid %d", strerror(err), (int)xc_pid);
		return -err;
	}
	/* a full accept backlog answers EAGAIN on a non-blocking unix connect: retry briefly */
	for (i = 0;; i++) {
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
		err = errno;
		if ((err == EAGAIN || err == EINTR) && i < 200) {
			struct timespec ts = { 0, 10 * 1000000 };

			nanosleep(&ts, NULL);
			continue;
		}
		xc_log("cannot connect to xpu-record at %s: %s: no GPU data for pid %d", path,
		       strerror(err), (int)xc_pid);
		close(fd);
		return -err;
	}
	tx.fd = fd;
	tx.connected = true;
	err = send_msg(XPU_CUPTI_MSG_HELLO, &hello, sizeof(hello));
	if (err)
		return err;
	xc_info("pid %d connected to %s", (int)xc_pid, path);
	return 0;
}

static void strings_reset(void)
{
	uint32_t i;

	for (i = 0; i < tx.cap; i++)
		free(tx.strs[i].s);
	free(tx.strs);
	tx.strs = NULL;
	tx.cap = tx.count = 0;
}

void transport__flush(void)
{
	int err;

	if (!tx.len)
		return;
	/* report earlier losses in the first batch that may get through */
	if (tx.dropped_unreported && tx.connected &&
	    tx.len + sizeof(struct xpu_record_header) + sizeof(struct xpu_rec_lost) <=
		    XPU_CUPTI_BATCH_MAX_BYTES) {
		struct xpu_record_header h = {
			.type = XPU_REC_LOST,
			.size = sizeof(h) + sizeof(struct xpu_rec_lost),
		};
		struct xpu_rec_lost l = {
			.ts_ns = xc_mono_ns(),
			.source = XPU_LOST_CUPTI_TRANSPORT,
			.pid = xc_pid,
			.count = tx.dropped_unreported,
		};
		uint8_t *p = tx.buf + sizeof(struct xpu_cupti_msg_header) + tx.len;

		memcpy(p, &h, sizeof(h));
		memcpy(p + sizeof(h), &l, sizeof(l));
		tx.len += h.size;
		tx.nrec++;
		tx.dropped_unreported = 0;
		err = send_msg(XPU_CUPTI_MSG_BATCH, tx.buf + sizeof(struct xpu_cupti_msg_header), tx.len);
		if (err)
			tx.dropped_unreported = l.count;
		tx.nrec--;	/* the LOST record is not a GPU record */
	} else {
		err = send_msg(XPU_CUPTI_MSG_BATCH, tx.buf + sizeof(struct xpu_cupti_msg_header), tx.len);
	}
	if (err) {
		tx.dropped += tx.nrec;
		tx.dropped_unreported += tx.nrec;
		/* strings defined in the lost batch are unknown to the receiver: define them again */
		strings_reset();
	} else {
		tx.sent += tx.nrec;
	}
	tx.len = 0;
	tx.nrec = 0;
}

void transport__append(uint16_t type, const void *body, uint32_t body_size)
{
	struct xpu_record_header h = { .type = type };
	uint32_t size = (sizeof(h) + body_size + 7) & ~7u;
	uint8_t *p;

	if (tx.finished || size > XPU_CUPTI_BATCH_MAX_BYTES)
		return;
	if (!tx.connected) {
		tx.dropped++;
		return;
	}
	if (tx.len + size > XPU_CUPTI_BATCH_MAX_BYTES)
		transport__flush();
	h.size = size;
	p = tx.buf + sizeof(struct xpu_cupti_msg_header) + tx.len;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), body, body_size);
	memset(p + sizeof(h) + body_size, 0, size - sizeof(h) - body_size);
	tx.len += size;
	tx.nrec++;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h | 1;	/* 0 marks an empty slot */
}

static int strings_grow(void)
{
	uint32_t ncap = tx.cap ? tx.cap * 2 : 1024, i;
	struct str_ent *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < tx.cap; i++) {
		struct str_ent *e = &tx.strs[i];
		uint32_t j;

		if (!e->hash)
			continue;
		for (j = e->hash & (ncap - 1); n[j].hash; j = (j + 1) & (ncap - 1))
			;
		n[j] = *e;
	}
	free(tx.strs);
	tx.strs = n;
	tx.cap = ncap;
	return 0;
}

uint32_t transport__string(const char *s)
{
	struct xpu_rec_string rs;
	uint8_t tmp[sizeof(rs) + 256];
	uint8_t *body = tmp;
	size_t len;
	uint64_t h;
	uint32_t i;
	char *copy;

	if (!s || !*s || !tx.connected)
		return 0;
	len = strnlen(s, STRING_MAX_BYTES);
	h = hash_bytes(s, len);
	for (i = tx.cap ? h & (tx.cap - 1) : 0; tx.cap && tx.strs[i].hash; i = (i + 1) & (tx.cap - 1)) {
		struct str_ent *e = &tx.strs[i];

		if (e->hash == h && e->len == len && !memcmp(e->s, s, len))
			return e->id;
	}
	copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	copy[len] = '\0';

	rs.id = tx.next_id++;
	rs.len = (uint32_t)len;
	if (sizeof(rs) + len > sizeof(tmp)) {
		body = malloc(sizeof(rs) + len);
		if (!body) {
			free(copy);
			return 0;
		}
	}
	memcpy(body, &rs, sizeof(rs));
	memcpy(body + sizeof(rs), s, len);
	/* may flush, and a failed flush resets the table: insert only afterwards */
	transport__append(XPU_REC_STRING, body, sizeof(rs) + len);
	if (body != tmp)
		free(body);
	if ((tx.count + 1) * 2 > tx.cap && strings_grow()) {
		free(copy);
		return rs.id;	/* defined, just not remembered: defined again next time */
	}
	for (i = h & (tx.cap - 1); tx.strs[i].hash; i = (i + 1) & (tx.cap - 1))
		;
	tx.strs[i] = (struct str_ent){ .hash = h, .id = rs.id, .len = (uint32_t)len, .s = copy };
	tx.count++;
	return rs.id;
}

void transport__process_state(uint32_t state, uint64_t cupti_dropped, int64_t offset_ns)
{
	struct xpu_rec_gpu_process p = {
		.ts_ns = xc_mono_ns(),
		.pid = xc_pid,
		.state = state,
		.cupti_dropped = cupti_dropped,
		.clock_offset_ns = offset_ns,
	};

	transport__append(XPU_REC_GPU_PROCESS, &p, sizeof(p));
}

void transport__finish(uint64_t cupti_dropped)
{
	struct xpu_cupti_done done;

	transport__lock();
	if (tx.finished || !tx.connected) {
		tx.finished = true;
		transport__unlock();
		return;
	}
	transport__process_state(XPU_GPU_PROC_FLUSHED, cupti_dropped, xc_clock_offset_ns);
	transport__flush();
	done = (struct xpu_cupti_done){
		.records_sent = tx.sent,
		.records_dropped = tx.dropped,
		.cupti_dropped = cupti_dropped,
	};
	send_msg(XPU_CUPTI_MSG_DONE, &done, sizeof(done));
	xc_info("pid %d done: %llu records sent, %llu dropped, %llu dropped by CUPTI", (int)xc_pid,
		(unsigned long long)tx.sent, (unsigned long long)tx.dropped,
		(unsigned long long)cupti_dropped);
	tx.finished = true;
	if (tx.fd >= 0)
		close(tx.fd);
	tx.fd = -1;
	tx.connected = false;
	transport__unlock();
}

void transport__abandon(void)
{
	/* the parent's lock may have been held by one of its threads when it forked */
	pthread_mutex_init(&tx.lock, NULL);
	if (tx.fd >= 0)
		close(tx.fd);
	tx.fd = -1;
	tx.connected = false;
	tx.finished = true;
	tx.len = 0;
	tx.nrec = 0;
}
