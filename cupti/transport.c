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
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cupti_wire.h"
#include "event_ring.h"
#include "inproc_walk.h"
#include "xpu_cupti.h"

/* Longest wait for room in the socket per message. */
#define SEND_WAIT_MS 500
/*
 * At the final flush of a connection that walked in process: the most the exit waits for the
 * recorder to take the last launches (DONE_ACK), while their Python frames can still be read.
 */
#define DONE_ACK_WAIT_MS 1000
/* Longest string we send; kernel names beyond this are cut (C++ templates can be huge). */
#define STRING_MAX_BYTES (32u << 10)
/* Most messages read per readable poll: a flooding recorder cannot keep the flusher here. */
#define READS_MAX 64
/* Descriptors a message may bring; the kernel discards any beyond (MSG_CTRUNC). */
#define FDS_MAX 8
/* What a SHARE may ask us to map: the arena's capacity is the recording's, the rest is small. */
#define SHARE_ARENA_MAX_BYTES (64ull << 30)
#define SHARE_PROC_MAX_BYTES (256ull << 20)
/* EVENTS messages per drain at most, so that launching threads cannot keep one drain going */
#define EVENTS_MSGS_MAX 1024

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

int xc_inproc;
static bool inproc_allowed;
/* the share mapped for the current connection (kept after it: see map_share()) */
static struct {
	const void *arena, *proc;
	uint64_t arena_bytes, proc_bytes;
} share;
/* one EVENTS payload, under the lock */
static uint8_t evbuf[XPU_CUPTI_BATCH_MAX_BYTES];

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

void transport__inproc_allow(bool allow)
{
	inproc_allowed = allow;
	__atomic_store_n(&xc_inproc, allow ? XC_INPROC_WAIT : XC_INPROC_OFF, __ATOMIC_RELEASE);
}

static void close_fds(int *fds, int n)
{
	while (n > 0)
		close(fds[--n]);
}

/* The descriptors of every SCM_RIGHTS part of m, at most FDS_MAX (the control buffer's room). */
static int collect_fds(struct msghdr *m, int *fds)
{
	struct cmsghdr *c;
	int n = 0;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		for (k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && n < FDS_MAX; k++)
			memcpy(&fds[n++], CMSG_DATA(c) + k * sizeof(int), sizeof(int));
	}
	return n;
}

/*
 * Maps one shared descriptor read-only. A mapping that outlives its file's end faults (SIGBUS)
 * on access: the file must hold the bytes now and be sealed against shrinking for good.
 */
static const char *map_fd(int fd, uint64_t bytes, const void **out)
{
	struct stat st;
	void *p;
	int seals;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return "not a file";
	if ((uint64_t)st.st_size < bytes)
		return "shorter than its size";
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return "not sealed against shrinking (F_SEAL_SHRINK)";
	p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return "mmap failed";
	*out = p;
	return NULL;
}

/* With the lock held: where the autograd slots are, once the share is mapped. */
static void send_inproc(void)
{
	struct xpu_cupti_inproc in = { 0 };

	inproc_walk__ag_slots(&in.ag_slots_addr, &in.ag_nslots);
	send_msg(XPU_CUPTI_MSG_INPROC, &in, sizeof(in));
}

/*
 * With the lock held: a SHARE message, n bytes at h, with its descriptors, which are always
 * closed here (a mapping keeps what it needs). Anything wrong leaves the launches on the
 * marker path, with one line saying why.
 */
static void map_share(const struct xpu_cupti_msg_header *h, size_t n, int msg_flags, int *fds,
		      int nfd)
{
	const struct xpu_cupti_share *s = (const void *)(h + 1);
	const struct xpu_share_arena *arena;
	const struct xpu_share_proc *proc;
	const void *a = NULL, *p = NULL;
	const char *why = NULL;

	if (!inproc_allowed) {
		xc_info("ignoring the recorder's tables: the in-process walk is off");
		close_fds(fds, nfd);
		return;
	}
	if (__atomic_load_n(&xc_inproc, __ATOMIC_RELAXED) == XC_INPROC_ON)
		why = "a second SHARE in one connection";
	else if (h->version != XPU_CUPTI_WIRE_VERSION)
		why = "another wire version";
	else if (h->len != sizeof(*s) || n != sizeof(*h) + sizeof(*s) || (msg_flags & MSG_TRUNC))
		why = "payload size";
	else if (nfd != 2 || (msg_flags & MSG_CTRUNC))
		why = "not two descriptors";
	else if (s->arena_bytes < sizeof(struct xpu_share_arena) ||
		 s->arena_bytes > SHARE_ARENA_MAX_BYTES)
		why = "table arena size";
	else if (s->proc_bytes < sizeof(struct xpu_share_proc) ||
		 s->proc_bytes > SHARE_PROC_MAX_BYTES)
		why = "process share size";
	if (!why)
		why = map_fd(fds[0], s->arena_bytes, &a);
	if (!why)
		why = map_fd(fds[1], s->proc_bytes, &p);
	close_fds(fds, nfd);
	arena = a;
	proc = p;
	if (!why && (arena->magic != XPU_SHARE_MAGIC || arena->version != XPU_SHARE_VERSION ||
		     arena->capacity_bytes > s->arena_bytes))
		why = "table arena header";
	if (!why && (proc->magic != XPU_SHARE_MAGIC || proc->version != XPU_SHARE_VERSION))
		why = "process share header";
	if (why) {
		if (a)
			munmap((void *)a, s->arena_bytes);
		if (p)
			munmap((void *)p, s->proc_bytes);
		xc_err_once("ignoring the recorder's tables (%s): launch stacks stay with BPF", why);
		return;
	}
	inproc_walk__set_share(arena, s->arena_bytes, proc, s->proc_bytes);
	/*
	 * An earlier connection's share (a later xpu-record -p): no walk reads it any more, as
	 * xc_inproc left ON when that connection finished and its callbacks settled.
	 */
	if (share.arena)
		munmap((void *)share.arena, share.arena_bytes);
	if (share.proc)
		munmap((void *)share.proc, share.proc_bytes);
	share.arena = a;
	share.arena_bytes = s->arena_bytes;
	share.proc = p;
	share.proc_bytes = s->proc_bytes;
	__atomic_store_n(&xc_inproc, XC_INPROC_ON, __ATOMIC_RELEASE);
	send_inproc();
	xc_info("pid %d: launch stacks walked in process", (int)xc_pid);
}

/* With the lock held: reads up to max messages, handling each; whether one asked to stop. */
static bool read_msgs(int max)
{
	bool stop = false;
	int i;

	for (i = 0; i < max && !stop && tx.connected; i++) {
		union {
			struct xpu_cupti_msg_header h;
			uint8_t b[sizeof(struct xpu_cupti_msg_header) + sizeof(struct xpu_cupti_share)];
		} in;
		union {
			struct cmsghdr c;
			char b[CMSG_SPACE(FDS_MAX * sizeof(int))];
		} ctl;
		struct iovec iov = { .iov_base = in.b, .iov_len = sizeof(in.b) };
		struct msghdr m = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.b,
			.msg_controllen = sizeof(ctl.b),
		};
		int fds[FDS_MAX], nfd;
		ssize_t n;

		/* close-on-exec at once: a target's fork and exec must not inherit the tables */
		n = recvmsg(tx.fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			stop = errno != EAGAIN;
			break;
		}
		nfd = collect_fds(&m, fds);
		if (n == 0) {
			stop = true;	/* the recorder is gone: nothing left to collect for */
		} else if ((size_t)n >= sizeof(in.h) && in.h.magic == XPU_CUPTI_WIRE_MAGIC) {
			if (in.h.type == XPU_CUPTI_MSG_STOP) {
				stop = true;
			} else if (in.h.type == XPU_CUPTI_MSG_SHARE) {
				map_share(&in.h, (size_t)n, m.msg_flags, fds, nfd);
				nfd = 0;
			}
		}
		/* descriptors that came with anything else are not ours to keep */
		close_fds(fds, nfd);
	}
	return stop;
}

bool transport__stop_requested(void)
{
	bool stop;

	transport__lock();
	stop = read_msgs(READS_MAX);
	transport__unlock();
	return stop;
}

bool transport__await_share(unsigned int wait_ms)
{
	uint64_t deadline = xc_mono_ns() + wait_ms * 1000000ull;
	struct xpu_cupti_msg_header h;

	if (__atomic_load_n(&xc_inproc, __ATOMIC_RELAXED) != XC_INPROC_WAIT)
		return false;
	while (tx.connected) {
		struct pollfd pfd = { .fd = tx.fd, .events = POLLIN };
		uint64_t now = xc_mono_ns();
		ssize_t n;

		if (now >= deadline)
			return false;
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000ull) + 1) <= 0)
			continue;
		/* only a SHARE is taken here; anything else waits for the flusher */
		n = recv(tx.fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(h) || h.magic != XPU_CUPTI_WIRE_MAGIC ||
		    h.type != XPU_CUPTI_MSG_SHARE)
			return false;
		transport__lock();
		read_msgs(1);
		transport__unlock();
		return __atomic_load_n(&xc_inproc, __ATOMIC_RELAXED) == XC_INPROC_ON;
	}
	return false;
}

/* Launch events in an EVENTS payload: what a lost one loses, in records. */
static uint64_t count_launches(const uint8_t *p, size_t len)
{
	uint64_t n = 0;
	size_t off = 0;

	while (off + sizeof(struct xpu_cupti_event_hdr) + sizeof(uint32_t) <= len) {
		struct xpu_cupti_event_hdr eh;
		uint32_t type;

		memcpy(&eh, p + off, sizeof(eh));
		memcpy(&type, p + off + sizeof(eh), sizeof(type));
		n += type == XPU_EV_GPU_LAUNCH;
		off += sizeof(eh) + (((size_t)eh.size + 7) & ~(size_t)7);
	}
	return n;
}

/* With the lock held. */
static void send_events(void)
{
	unsigned int cursor = 0, i;

	for (i = 0; i < EVENTS_MSGS_MAX; i++) {
		size_t n = event_ring__pool_drain(evbuf, sizeof(evbuf), &cursor);

		if (!n)
			break;
		if (!send_msg(XPU_CUPTI_MSG_EVENTS, evbuf, n)) {
			inproc_walk__count(XPU_INPROC_EVENT_BYTES, n);
		} else {
			/* the recorder sees the launches as lost records (DONE, XPU_LOST_CUPTI_TRANSPORT) */
			uint64_t k = count_launches(evbuf, n);

			tx.dropped += k;
			tx.dropped_unreported += k;
		}
	}
}

void transport__send_events(void)
{
	transport__lock();
	send_events();
	transport__unlock();
}

static void send_walk_stats(void)
{
	struct xpu_cupti_walk_stats st;

	memset(&st, 0, sizeof(st));
	inproc_walk__stats(&st);
	send_msg(XPU_CUPTI_MSG_WALK_STATS, &st, sizeof(st));
}

void transport__send_walk_stats(void)
{
	transport__lock();
	if (__atomic_load_n(&xc_inproc, __ATOMIC_RELAXED) == XC_INPROC_ON)
		send_walk_stats();
	transport__unlock();
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
	/* a share is per connection: launches take the marker until this one's arrives */
	__atomic_store_n(&xc_inproc, inproc_allowed ? XC_INPROC_WAIT : XC_INPROC_OFF,
			 __ATOMIC_RELEASE);
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

/*
 * With the lock held, after DONE: waits up to DONE_ACK_WAIT_MS for the recorder's DONE_ACK,
 * which comes once it has taken the launches walked here. Their Python frames are read from
 * this process's memory, so it must not exit before. A STOP that crossed the DONE is passed
 * over; any other message, the end of the connection or an error ends the wait: a recorder
 * that does not know DONE_ACK costs one wait at exit, no more.
 */
static void await_done_ack(void)
{
	uint64_t deadline = xc_mono_ns() + DONE_ACK_WAIT_MS * 1000000ull;

	for (;;) {
		struct pollfd pfd = { .fd = tx.fd, .events = POLLIN };
		struct xpu_cupti_msg_header h;
		union {
			struct cmsghdr c;
			char b[CMSG_SPACE(FDS_MAX * sizeof(int))];
		} ctl;
		struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
		struct msghdr m = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.b,
			.msg_controllen = sizeof(ctl.b),
		};
		int fds[FDS_MAX];
		uint64_t now = xc_mono_ns();
		ssize_t n;
		int r;

		if (now >= deadline)
			return;
		r = poll(&pfd, 1, (int)((deadline - now) / 1000000ull) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		n = recvmsg(tx.fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n > 0)
			close_fds(fds, collect_fds(&m, fds));
		if (n < (ssize_t)sizeof(h) || h.magic != XPU_CUPTI_WIRE_MAGIC)
			return;
		if (h.type != XPU_CUPTI_MSG_STOP)
			return;		/* DONE_ACK, or a message that says no ack comes */
	}
}

void transport__finish(uint64_t cupti_dropped)
{
	struct xpu_cupti_done done;
	bool walked = false;

	transport__lock();
	if (tx.finished || !tx.connected) {
		tx.finished = true;
		transport__unlock();
		return;
	}
	if (__atomic_load_n(&xc_inproc, __ATOMIC_RELAXED) == XC_INPROC_ON) {
		/*
		 * No new in-process launch from here: the last events and counters go before DONE.
		 * A thread already past the check may still queue one that is never sent.
		 */
		__atomic_store_n(&xc_inproc, XC_INPROC_WAIT, __ATOMIC_RELEASE);
		walked = true;
		send_events();
		send_walk_stats();
	}
	transport__process_state(XPU_GPU_PROC_FLUSHED, cupti_dropped, xc_clock_offset_ns);
	transport__flush();
	done = (struct xpu_cupti_done){
		.records_sent = tx.sent,
		.records_dropped = tx.dropped,
		.cupti_dropped = cupti_dropped,
	};
	/* only a connection that walked in process sent launches the recorder reads us for */
	if (!send_msg(XPU_CUPTI_MSG_DONE, &done, sizeof(done)) && walked && tx.connected)
		await_done_ack();
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
	/* the share stays mapped (the mapping is the child's too), unused until a new one comes */
	xc_inproc = inproc_allowed ? XC_INPROC_WAIT : XC_INPROC_OFF;
}
