// SPDX-License-Identifier: MIT
/*
 * Receiver for libxpu-cupti.so (protocol: common/cupti_wire.h). One thread polls the listening
 * socket and every client, so any number of CUDA processes (DataLoader workers, several ranks)
 * are served at once and a slow client cannot stall the others. Each connection is one source
 * of the writer thread, whose string ids it remaps.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cupti_rx.h"
#include "cupti_wire.h"
#include "inproc_events.h"
#include "mono_clock.h"
#include "inproc_share.h"
#include "writer_thread.h"

/* How long a client's DONE waits for the drain to take its last launches (see ack_done()). */
#define DONE_SYNC_MS 1000
/* Pending connections before the kernel makes clients wait (they retry briefly). */
#define LISTEN_BACKLOG 128

struct rx_client {
	int fd;
	uint32_t pid;
	uint32_t source_id;
	uint32_t next_seq;
	uint32_t out_seq;		/* of the recorder's messages to it: SHARE, STOP, DONE_ACK */
	bool hello;
	bool done;
	bool inproc;			/* its autograd slots were handed to the sink */
	struct xpu_cupti_walk_stats walk;	/* its last WALK_STATS */
};


struct cupti_rx {
	struct writer_thread *wt;
	cupti_rx_is_traced_fn is_traced;
	void *ctx;
	char dir[96];
	int lock_fd;			/* dir/lock, flock'ed while this recorder lives */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int listen_fd;
	int wake_fd;			/* eventfd: stop, or ask_clients, requested */
	_Atomic bool stop_requested;
	_Atomic bool ask_clients;	/* cupti_rx__stop_clients(): STOP to every client */
	bool asked;
	_Atomic int open_clients;	/* checked in, not done: what stop_clients waits for */
	pthread_t thread;
	bool thread_started;
	int stop_timeout_ms;
	struct rx_client *clients;
	size_t nclients;
	size_t cap;
	uint32_t next_source_id;
	uint8_t *buf;
	_Atomic(struct walk_share *) ws;	/* the in-process walk's tables, NULL: BPF only */
	bool said_share_error;
	pthread_mutex_t sink_lock;	/* held while the sink is called: set_sink waits */
	struct cupti_rx_sink sink;
	pthread_mutex_t stats_lock;
	struct cupti_rx_stats stats;
};

static uint64_t now_ms(void)
{
	return clock_mono_ns() / 1000000;
}

#define STAT_ADD(rx, field, n)                                                             \
	do {                                                                               \
		pthread_mutex_lock(&(rx)->stats_lock);                                     \
		(rx)->stats.field += (n);                                                  \
		pthread_mutex_unlock(&(rx)->stats_lock);                                   \
	} while (0)

/* One record of our own into a client's source (no strings, so no ids to define). */
static void submit_one(struct cupti_rx *rx, struct rx_client *c, uint16_t type, const void *body,
		       uint32_t body_size)
{
	uint8_t buf[64];
	struct xpu_record_header h = { .type = type, .size = (sizeof(h) + body_size + 7) & ~7u };

	if (h.size > sizeof(buf))
		return;
	memset(buf, 0, h.size);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, body_size);
	writer_thread__submit_foreign(rx->wt, c->source_id, buf, h.size);
}

/*
 * The recording ends while a client's process may run on (xpu-record -p, -d): STOP makes the
 * library flush, send DONE and turn CUPTI off there, so the process returns to its own speed.
 * A library that does not know STOP ignores it and finishes at its exit, as before.
 */
static void ask_to_stop(struct rx_client *c)
{
	struct xpu_cupti_msg_header h = {
		.magic = XPU_CUPTI_WIRE_MAGIC,
		.type = XPU_CUPTI_MSG_STOP,
		.version = XPU_CUPTI_WIRE_VERSION,
	};

	/* a client that is gone cannot be asked: its end of file comes next */
	if (c->hello && !c->done) {
		h.seq = c->out_seq++;
		(void)!send(c->fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
	}
}

/*
 * DONE: the client's last EVENTS were handed to the sink before it; once the sink has
 * processed them (its process, which waits for this ack, still lives: its Python code objects
 * can be read), DONE_ACK lets the library return to its exit. A sink that takes too long
 * costs the wait, not the ack: the library gives up on its own after a second.
 */
static void ack_done(struct cupti_rx *rx, struct rx_client *c)
{
	struct xpu_cupti_msg_header h = {
		.magic = XPU_CUPTI_WIRE_MAGIC,
		.type = XPU_CUPTI_MSG_DONE_ACK,
		.version = XPU_CUPTI_WIRE_VERSION,
	};
	int err = 0;

	pthread_mutex_lock(&rx->sink_lock);
	if (rx->sink.on_sync)
		err = rx->sink.on_sync(rx->sink.ctx, c->pid, DONE_SYNC_MS);
	pthread_mutex_unlock(&rx->sink_lock);
	if (err)
		log_info("pid %d: its last in-process launches not all taken before its exit: %s",
			 (int)c->pid, strerror(-err));
	h.seq = c->out_seq++;
	(void)!send(c->fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * The in-process walk's tables (common/walk_share.h), to a library whose process sees itself
 * under the pid BPF sees: in another pid namespace its thread ids would not be the ones the
 * launches are joined by. A library that gets none walks nothing itself (BPF takes every
 * launch); a failure is said once and counted.
 */
static void send_share(struct cupti_rx *rx, struct rx_client *c, const struct xpu_cupti_hello *hello)
{
	struct walk_share *ws = atomic_load(&rx->ws);
	struct xpu_cupti_msg_header h = {
		.magic = XPU_CUPTI_WIRE_MAGIC,
		.type = XPU_CUPTI_MSG_SHARE,
		.version = XPU_CUPTI_WIRE_VERSION,
		.len = sizeof(struct xpu_cupti_share),
	};
	struct xpu_cupti_share sh;
	uint8_t msg[sizeof(h) + sizeof(sh)];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(msg) };
	struct msghdr m = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;
	int fds[2], err;

	if (!ws || rx->asked)
		return;
	if (hello->pid != c->pid) {
		STAT_ADD(rx, shares_other_ns, 1);
		return;
	}
	err = walk_share__fds(ws, c->pid, &fds[0], &sh.arena_bytes, &fds[1], &sh.proc_bytes);
	if (!err) {
		h.seq = c->out_seq;
		memcpy(msg, &h, sizeof(h));
		memcpy(msg + sizeof(h), &sh, sizeof(sh));
		memset(&ctl, 0, sizeof(ctl));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
		if (sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(msg))
			err = -errno;
		else
			c->out_seq++;
		close(fds[0]);
		close(fds[1]);
	}
	if (err) {
		STAT_ADD(rx, share_errors, 1);
		if (!rx->said_share_error)
			log_err("pid %u: launch stacks walked in BPF only: cannot share the tables: %s",
				c->pid, strerror(-err));
		rx->said_share_error = true;
		return;
	}
	STAT_ADD(rx, shares, 1);
}

/* Where c's process keeps its autograd slots, or (addr 0) that they are gone. */
static void tell_inproc(struct cupti_rx *rx, struct rx_client *c, uint64_t addr, uint32_t nslots)
{
	pthread_mutex_lock(&rx->sink_lock);
	if (rx->sink.on_inproc)
		rx->sink.on_inproc(rx->sink.ctx, c->pid, addr, nslots);
	pthread_mutex_unlock(&rx->sink_lock);
	c->inproc = addr != 0;
}

static void client_close(struct cupti_rx *rx, size_t i)
{
	struct rx_client *c = &rx->clients[i];

	close(c->fd);
	/* the library is gone: its slots' memory may be anything from now on */
	if (c->inproc)
		tell_inproc(rx, c, 0, 0);
	if (c->hello && !c->done)
		atomic_fetch_sub(&rx->open_clients, 1);
	if (c->hello)
		writer_thread__source_closed(rx->wt, c->source_id);
	rx->clients[i] = rx->clients[--rx->nclients];
}

static void accept_all(struct cupti_rx *rx)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct rx_client *c;
		int fd;

		fd = accept4(rx->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0 ||
		    !rx->is_traced(rx->ctx, cred.pid)) {
			/*
			 * only the traced tree may add records to the trace; a process of it that
			 * already exited counts (a short-lived one can exit before the accept)
			 */
			STAT_ADD(rx, rejected, 1);
			close(fd);
			continue;
		}
		if (rx->nclients == rx->cap) {
			size_t ncap = rx->cap ? rx->cap * 2 : 16;
			struct rx_client *n = realloc(rx->clients, ncap * sizeof(*n));

			if (!n) {
				close(fd);
				continue;
			}
			rx->clients = n;
			rx->cap = ncap;
		}
		c = &rx->clients[rx->nclients++];
		*c = (struct rx_client){
			.fd = fd,
			.pid = (uint32_t)cred.pid,
			.source_id = ++rx->next_source_id,
		};
		STAT_ADD(rx, clients, 1);
	}
}

/*
 * EVENTS: launches walked in the client's process, checked, with its pid, to the sink in one
 * call. A malformed entry costs the rest of its message, counted; the connection stays.
 */
static bool handle_events(struct cupti_rx *rx, struct rx_client *c, uint8_t *payload, size_t len)
{
	struct inproc_check ck;
	int err = -ENOSYS;

	inproc_events__check(payload, len, c->pid, &ck);
	if (ck.len) {
		pthread_mutex_lock(&rx->sink_lock);
		if (rx->sink.on_events)
			err = rx->sink.on_events(rx->sink.ctx, c->pid, payload, ck.len, ck.launches);
		pthread_mutex_unlock(&rx->sink_lock);
	}
	pthread_mutex_lock(&rx->stats_lock);
	if (ck.bad) {
		rx->stats.bad_messages++;
		rx->stats.inproc_dropped += ck.dropped;
	}
	if (ck.len && !err) {
		rx->stats.inproc_messages++;
		rx->stats.inproc_launches += ck.launches;
	} else if (ck.len) {
		rx->stats.inproc_refused += ck.launches;
	}
	pthread_mutex_unlock(&rx->stats_lock);
	return true;
}

/* Handles one message; returns false when the connection should be closed. */
/* The STATS counts of a batch's GPU_GRAPH_NODE records (xpu_cupti_wire_fix_batch checked it). */
static void count_graph_nodes(struct cupti_rx *rx, const uint8_t *p, size_t len)
{
	uint64_t made = 0, no_call = 0, clones = 0, updates = 0;
	size_t off = 0;

	while (off + sizeof(struct xpu_record_header) <= len) {
		struct xpu_record_header h;
		struct xpu_rec_gpu_graph_node g;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			break;
		if (h.type == XPU_REC_GPU_GRAPH_NODE && h.size - sizeof(h) >= sizeof(g)) {
			memcpy(&g, p + off + sizeof(h), sizeof(g));
			made += g.op == XPU_GRAPH_NODE_CREATED;
			no_call += g.op == XPU_GRAPH_NODE_CREATED && !g.corr_id;
			clones += g.op == XPU_GRAPH_NODE_CLONED;
			updates += g.op == XPU_GRAPH_NODE_UPDATED || g.op == XPU_GRAPH_EXEC_UPDATED;
		}
		off += h.size;
	}
	if (made || clones || updates) {
		pthread_mutex_lock(&rx->stats_lock);
		rx->stats.graph_nodes += made;
		rx->stats.graph_nodes_no_call += no_call;
		rx->stats.graph_clones += clones;
		rx->stats.graph_updates += updates;
		pthread_mutex_unlock(&rx->stats_lock);
	}
}

static bool handle_msg(struct cupti_rx *rx, struct rx_client *c, size_t n)
{
	struct xpu_cupti_msg_header h;
	uint8_t *payload = rx->buf + sizeof(h);

	if (n < sizeof(h))
		goto bad;
	memcpy(&h, rx->buf, sizeof(h));
	if (h.magic != XPU_CUPTI_WIRE_MAGIC || h.version != XPU_CUPTI_WIRE_VERSION ||
	    h.len != n - sizeof(h))
		goto bad;
	if (!c->hello && h.type != XPU_CUPTI_MSG_HELLO)
		goto bad;
	if (c->hello && h.seq != c->next_seq) {
		/* the client gave up sending a message (and will report its records as lost) */
		STAT_ADD(rx, lost_messages, h.seq - c->next_seq);
	}
	c->next_seq = h.seq + 1;

	switch (h.type) {
	case XPU_CUPTI_MSG_HELLO: {
		struct xpu_cupti_hello hello;
		struct xpu_rec_gpu_process p = { 0 };

		if (c->hello || h.len < sizeof(hello))
			goto bad;
		memcpy(&hello, payload, sizeof(hello));
		c->hello = true;
		atomic_fetch_add(&rx->open_clients, 1);
		/* checked in after the recording asked its clients to stop: asked now */
		if (rx->asked)
			ask_to_stop(c);
		p.ts_ns = clock_mono_ns();
		p.pid = c->pid;
		p.state = XPU_GPU_PROC_CONNECTED;
		submit_one(rx, c, XPU_REC_GPU_PROCESS, &p, sizeof(p));
		send_share(rx, c, &hello);
		return true;
	}
	case XPU_CUPTI_MSG_BATCH: {
		long nrec;

		if (c->done)
			goto bad;
		nrec = xpu_cupti_wire_fix_batch(payload, h.len, c->pid);
		if (nrec < 0)
			goto bad;
		if (nrec && writer_thread__submit_foreign(rx->wt, c->source_id, payload, h.len) == 0) {
			STAT_ADD(rx, batches, 1);
			STAT_ADD(rx, records, (uint64_t)nrec);
			count_graph_nodes(rx, payload, h.len);
		}
		return true;
	}
	case XPU_CUPTI_MSG_EVENTS:
		if (c->done)
			goto bad;
		return handle_events(rx, c, payload, h.len);
	case XPU_CUPTI_MSG_INPROC: {
		struct xpu_cupti_inproc in;

		if (c->done || h.len != sizeof(in))
			goto bad;
		memcpy(&in, payload, sizeof(in));
		/* a slot index is tid & (nslots - 1): a power of two, and slots that fit */
		if (in.ag_slots_addr &&
		    (!in.ag_nslots || in.ag_nslots > XPU_AG_INPROC_MAX_SLOTS ||
		     (in.ag_nslots & (in.ag_nslots - 1)) || in.reserved ||
		     in.ag_slots_addr % 8 ||
		     in.ag_slots_addr > UINT64_MAX - (uint64_t)in.ag_nslots *
							    sizeof(struct xpu_ag_inproc_slot)))
			goto bad;
		tell_inproc(rx, c, in.ag_slots_addr, in.ag_slots_addr ? in.ag_nslots : 0);
		return true;
	}
	case XPU_CUPTI_MSG_WALK_STATS: {
		struct xpu_cupti_walk_stats w;
		size_t k;

		if (c->done || h.len != sizeof(w))
			goto bad;
		memcpy(&w, payload, sizeof(w));
		/*
		 * running totals: the sum moves by what changed since the client's last, so it
		 * always holds every client's latest, and a client's that left
		 */
		pthread_mutex_lock(&rx->stats_lock);
		for (k = 0; k < XPU_CNT_NR; k++)
			rx->stats.walk.cnt[k] += w.cnt[k] - c->walk.cnt[k];
		for (k = 0; k < XPU_INPROC_NR; k++)
			rx->stats.walk.inproc[k] += w.inproc[k] - c->walk.inproc[k];
		pthread_mutex_unlock(&rx->stats_lock);
		c->walk = w;
		return true;
	}
	case XPU_CUPTI_MSG_DONE:
		if (!c->done) {
			ack_done(rx, c);
			c->done = true;
			atomic_fetch_sub(&rx->open_clients, 1);
			STAT_ADD(rx, clean_exits, 1);
		}
		return true;
	default:
		goto bad;
	}
bad:
	STAT_ADD(rx, bad_messages, 1);
	/* before HELLO nothing is trusted; after it, one bad message costs only itself */
	return c->hello;
}

/* Reads what a client has queued. Returns false when it hung up or must be dropped. */
static bool client_read(struct cupti_rx *rx, struct rx_client *c)
{
	for (;;) {
		struct iovec iov = { .iov_base = rx->buf, .iov_len = XPU_CUPTI_MSG_MAX_BYTES };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		if (n == 0)
			return false;
		if (m.msg_flags & MSG_TRUNC) {
			STAT_ADD(rx, bad_messages, 1);
			continue;
		}
		if (!handle_msg(rx, c, (size_t)n))
			return false;
	}
}

static void *rx_main(void *arg)
{
	struct cupti_rx *rx = arg;
	struct pollfd *pfds = NULL;
	size_t pcap = 0, i;
	uint64_t deadline = 0;
	bool stopping = false;

	for (;;) {
		int timeout = -1, n;

		if (stopping) {
			bool waiting = false;

			for (i = 0; i < rx->nclients; i++)
				waiting |= !rx->clients[i].done;
			if (!waiting || now_ms() >= deadline)
				break;
			timeout = (int)(deadline - now_ms()) + 1;
		}
		if (pcap < rx->nclients + 2) {
			struct pollfd *np = realloc(pfds, (rx->nclients + 16) * sizeof(*np));

			if (!np)
				break;
			pfds = np;
			pcap = rx->nclients + 16;
		}
		pfds[0] = (struct pollfd){ .fd = rx->wake_fd, .events = POLLIN };
		pfds[1] = (struct pollfd){ .fd = rx->listen_fd, .events = POLLIN };
		for (i = 0; i < rx->nclients; i++)
			pfds[i + 2] = (struct pollfd){ .fd = rx->clients[i].fd, .events = POLLIN };
		n = poll(pfds, rx->nclients + 2, timeout);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (pfds[0].revents & POLLIN) {
			uint64_t v;

			if (read(rx->wake_fd, &v, sizeof(v)) < 0)
				v = 0;
			if (!rx->asked && (atomic_load(&rx->ask_clients) ||
					   atomic_load(&rx->stop_requested))) {
				rx->asked = true;
				for (i = 0; i < rx->nclients; i++)
					ask_to_stop(&rx->clients[i]);
			}
			if (!stopping && atomic_load(&rx->stop_requested)) {
				stopping = true;
				deadline = now_ms() +
					   (rx->stop_timeout_ms > 0 ? rx->stop_timeout_ms : 0);
			}
		}
		/* clients first (their indexes match pfds), then new connections */
		for (i = rx->nclients; i-- > 0;) {
			if (!pfds[i + 2].revents)
				continue;
			if (!client_read(rx, &rx->clients[i]))
				client_close(rx, i);
		}
		if (pfds[1].revents & POLLIN)
			accept_all(rx);
	}
	/* whatever is already queued is still worth writing */
	accept_all(rx);
	for (i = rx->nclients; i-- > 0;) {
		client_read(rx, &rx->clients[i]);
		client_close(rx, i);
	}
	free(pfds);
	return NULL;
}

/*
 * The socket directories of recorders that died without cleaning up (SIGKILL, a crash): each
 * live recorder holds an flock on its directory's lock file, released by the kernel when it
 * dies, whatever its pid namespace. A directory whose lock this recorder can take, a file of
 * its own user (so not one another user planted), is removed with its socket. Directories of
 * older recorders, without a lock file, are left as they are: nothing says they are dead.
 */
static void sweep_dead_dirs(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		int dfd, lfd;

		if (strncmp(e->d_name, "xpu-cupti-", 10))
			continue;
		dfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		lfd = openat(dfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (lfd >= 0 && !fstat(lfd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    !flock(lfd, LOCK_EX | LOCK_NB)) {
			unlinkat(dfd, "sock", 0);
			unlinkat(dfd, "lock", 0);
			if (!unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR))
				log_info("removed %s/%s, left by a recorder that died", tmp, e->d_name);
		}
		if (lfd >= 0)
			close(lfd);
		close(dfd);
	}
	closedir(d);
}

struct cupti_rx *cupti_rx__start(struct writer_thread *wt, cupti_rx_is_traced_fn is_traced,
				 void *ctx, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct cupti_rx *rx;
	const char *tmp = getenv("TMPDIR");

	rx = calloc(1, sizeof(*rx));
	if (!rx) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rx->wt = wt;
	rx->is_traced = is_traced;
	rx->ctx = ctx;
	rx->listen_fd = rx->wake_fd = rx->lock_fd = -1;
	pthread_mutex_init(&rx->stats_lock, NULL);
	pthread_mutex_init(&rx->sink_lock, NULL);
	rx->buf = malloc(XPU_CUPTI_MSG_MAX_BYTES);
	if (!rx->buf) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* a socket path must fit sun_path (108 bytes): fall back to /tmp for a long TMPDIR */
	if (!tmp || !*tmp || strlen(tmp) > 64)
		tmp = "/tmp";
	sweep_dead_dirs(tmp);
	snprintf(rx->dir, sizeof(rx->dir), "%s/xpu-cupti-XXXXXX", tmp);
	if (!mkdtemp(rx->dir)) {
		snprintf(err, errlen, "mkdtemp %s: %s", rx->dir, strerror(errno));
		rx->dir[0] = '\0';
		goto fail;
	}
	/* mkdtemp makes it 0700 already; say so explicitly, whatever the umask did */
	chmod(rx->dir, 0700);
	/* held for the recorder's life: a later recorder that can take it knows this one died */
	{
		char lock[sizeof(rx->dir) + 8];

		snprintf(lock, sizeof(lock), "%s/lock", rx->dir);
		rx->lock_fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (rx->lock_fd >= 0 && flock(rx->lock_fd, LOCK_EX | LOCK_NB)) {
			close(rx->lock_fd);
			rx->lock_fd = -1;
		}
	}
	snprintf(rx->path, sizeof(rx->path), "%.90s/sock", rx->dir);
	strcpy(sa.sun_path, rx->path);
	rx->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (rx->listen_fd < 0 || bind(rx->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(rx->listen_fd, LISTEN_BACKLOG)) {
		snprintf(err, errlen, "socket %s: %s", rx->path, strerror(errno));
		goto fail;
	}
	rx->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rx->wake_fd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&rx->thread, NULL, rx_main, rx)) {
		snprintf(err, errlen, "cannot start the CUPTI receiver thread");
		goto fail;
	}
	pthread_setname_np(rx->thread, "xpu-cupti-rx");
	rx->thread_started = true;
	return rx;
fail:
	cupti_rx__stop(rx, 0, NULL);
	return NULL;
}

int cupti_rx__stop_clients(struct cupti_rx *rx, int timeout_ms)
{
	uint64_t one = 1, deadline;
	struct timespec tick = { 0, 10 * 1000000 };

	if (!rx || !rx->thread_started)
		return 0;
	atomic_store(&rx->ask_clients, true);
	if (write(rx->wake_fd, &one, sizeof(one)) < 0)
		return atomic_load(&rx->open_clients);
	deadline = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	while (atomic_load(&rx->open_clients) > 0 && now_ms() < deadline)
		nanosleep(&tick, NULL);
	return atomic_load(&rx->open_clients);
}

const char *cupti_rx__socket_path(const struct cupti_rx *rx)
{
	return rx ? rx->path : NULL;
}

void cupti_rx__set_sink(struct cupti_rx *rx, const struct cupti_rx_sink *sink)
{
	pthread_mutex_lock(&rx->sink_lock);
	if (sink)
		rx->sink = *sink;
	else
		memset(&rx->sink, 0, sizeof(rx->sink));
	pthread_mutex_unlock(&rx->sink_lock);
}

void cupti_rx__set_walk_share(struct cupti_rx *rx, struct walk_share *ws)
{
	atomic_store(&rx->ws, ws);
}

void cupti_rx__get_stats(struct cupti_rx *rx, struct cupti_rx_stats *st)
{
	pthread_mutex_lock(&rx->stats_lock);
	*st = rx->stats;
	pthread_mutex_unlock(&rx->stats_lock);
}

void cupti_rx__stop(struct cupti_rx *rx, int timeout_ms, struct cupti_rx_stats *final_stats)
{
	if (!rx)
		return;
	if (rx->thread_started) {
		uint64_t one = 1;

		rx->stop_timeout_ms = timeout_ms;
		atomic_store(&rx->stop_requested, true);
		if (write(rx->wake_fd, &one, sizeof(one)) < 0)
			one = 0;
		pthread_join(rx->thread, NULL);
	}
	if (atomic_load(&rx->ws))
		log_info("in-process launch walk: tables shared with %llu clients, %llu in another "
			 "pid namespace, %llu failed",
			 (unsigned long long)rx->stats.shares,
			 (unsigned long long)rx->stats.shares_other_ns,
			 (unsigned long long)rx->stats.share_errors);
	if (final_stats)
		*final_stats = rx->stats;
	if (rx->listen_fd >= 0)
		close(rx->listen_fd);
	if (rx->wake_fd >= 0)
		close(rx->wake_fd);
	if (rx->path[0])
		unlink(rx->path);
	if (rx->lock_fd >= 0) {
		char lock[sizeof(rx->dir) + 8];

		snprintf(lock, sizeof(lock), "%s/lock", rx->dir);
		unlink(lock);
		close(rx->lock_fd);
	}
	if (rx->dir[0])
		rmdir(rx->dir);
	free(rx->clients);
	free(rx->buf);
	pthread_mutex_destroy(&rx->sink_lock);
	pthread_mutex_destroy(&rx->stats_lock);
	free(rx);
}
