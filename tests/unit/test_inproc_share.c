// SPDX-License-Identifier: MIT
/*
 * record/inproc_share.h as the injected library sees it: the descriptors it hands out are
 * mapped read-only here, as libxpu-cupti.so maps them, and checked for the layouts of
 * common/walk_share.h, the tables' ready flags, the process share's sequence lock (against a
 * reader running while values change) and that no descriptor can be made to write; and the
 * CUPTI receiver's SHARE message after a client's HELLO (its descriptors in SCM_RIGHTS, none
 * to a client whose own pid is not its peer pid). The writer thread is a stub.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "inproc_share.h"
#include "cupti_rx.h"
#include "cupti_wire.h"
#include "unit.h"

#define PID 4242

static void fill_cfi(struct xpu_cfi_proc *v, uint32_t nr, uint32_t gen)
{
	uint32_t i;

	v->nr = nr;
	v->gen = gen;
	for (i = 0; i < nr; i++)
		v->maps[i] = (struct xpu_cfi_map){ .start = (uint64_t)gen * 100000 + i,
						   .end = (uint64_t)gen * 100000 + i + 1,
						   .table = gen };
}

static void *map_ro(int fd, uint64_t bytes)
{
	void *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

/* Nothing a holder of the descriptor can do makes the memory writable or resizes it. */
static void check_read_only(int fd, uint64_t bytes, void *ro_map, const char *what)
{
	char path[64], byte = 1;
	void *m;
	int rw;

	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m == MAP_FAILED, "%s: writable mapping of the descriptor", what);
	if (m != MAP_FAILED)
		munmap(m, bytes);
	CHECK(mprotect(ro_map, 4096, PROT_READ | PROT_WRITE) != 0, "%s: mprotect to writable", what);
	CHECK(write(fd, &byte, 1) < 0, "%s: write()", what);
	/* a memfd's /proc link opens read-write for anyone: the seals are what stop that */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rw = open(path, O_RDWR);
	if (rw >= 0) {
		m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
		CHECK(m == MAP_FAILED, "%s: writable mapping through a reopened descriptor", what);
		if (m != MAP_FAILED)
			munmap(m, bytes);
		CHECK(pwrite(rw, &byte, 1, 0) < 0, "%s: pwrite through a reopened descriptor", what);
		CHECK(ftruncate(rw, 0) != 0, "%s: shrink", what);
		CHECK(ftruncate(rw, (off_t)bytes * 2) != 0, "%s: grow", what);
		CHECK(fallocate(rw, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) != 0,
		      "%s: punch a hole", what);
		CHECK(fcntl(rw, F_ADD_SEALS, F_SEAL_WRITE) != 0, "%s: more seals", what);
		close(rw);
	}
}

static void test_tables(void)
{
	struct walk_share *ws = walk_share__new(64 << 10);
	struct xpu_cfi_row a[10], b[3], *big;
	const struct xpu_share_arena *ar;
	struct walk_share_stats st;
	uint64_t abytes = 0, pbytes = 0;
	size_t nbig = (64 << 10) / sizeof(*big);
	int afd = -1, pfd = -1, i;
	struct stat sb;

	CHECK(ws != NULL, "new: %s", strerror(errno));
	if (!ws)
		return;
	for (i = 0; i < 10; i++)
		a[i] = (struct xpu_cfi_row){ .pc = 0x1000 + (uint32_t)i, .kind = 1, .cfa_off = 8 };
	for (i = 0; i < 3; i++)
		b[i] = (struct xpu_cfi_row){ .pc = 0x9000 + (uint32_t)i, .kind = 2, .cfa_off = 16 };
	big = calloc(nbig, sizeof(*big));
	walk_share__table(ws, 0, a, 10);
	walk_share__table(ws, 7, b, 3);
	walk_share__table(ws, 0, b, 3);		/* written once: ignored */
	walk_share__table(ws, 9, big, nbig);	/* past the room left */
	walk_share__table(ws, XPU_CFI_MAX_TABLES, a, 1);
	free(big);

	CHECK(!walk_share__fds(ws, PID, &afd, &abytes, &pfd, &pbytes), "fds");
	CHECK(!fstat(afd, &sb) && (uint64_t)sb.st_size == abytes, "arena size %llu",
	      (unsigned long long)abytes);
	CHECK(abytes >= XPU_SHARE_ARENA_DATA + (64 << 10), "arena holds the bound");
	CHECK((fcntl(afd, F_GETFL) & O_ACCMODE) == O_RDONLY, "arena descriptor read-only");
	ar = map_ro(afd, abytes);
	CHECK(ar != NULL, "map the arena");
	if (!ar)
		goto cleanup;
	CHECK(ar->magic == XPU_SHARE_MAGIC && ar->version == XPU_SHARE_VERSION, "arena header");
	CHECK(ar->capacity_bytes == abytes, "capacity %llu", (unsigned long long)ar->capacity_bytes);
	CHECK(ar->tables[0].ready == 1 && ar->tables[0].slots == 10, "table 0 ready");
	CHECK(ar->tables[0].off >= XPU_SHARE_ARENA_DATA && !(ar->tables[0].off & 7), "table 0 off");
	CHECK(!memcmp((const char *)ar + ar->tables[0].off, a, sizeof(a)), "table 0 slots");
	CHECK(ar->tables[7].ready == 1 && ar->tables[7].slots == 3 && !(ar->tables[7].off & 7),
	      "table 7 ready");
	CHECK(!memcmp((const char *)ar + ar->tables[7].off, b, sizeof(b)), "table 7 slots");
	CHECK(ar->tables[7].off >= ar->tables[0].off + sizeof(a), "tables do not overlap");
	CHECK(!ar->tables[9].ready && !ar->tables[1].ready, "no table over the room");
	check_read_only(afd, abytes, (void *)ar, "arena");
	munmap((void *)ar, abytes);
	walk_share__get_stats(ws, &st);
	CHECK(st.tables == 2 && st.tables_over == 1, "tables %llu, over %llu",
	      (unsigned long long)st.tables, (unsigned long long)st.tables_over);
	CHECK(st.arena_bytes == sizeof(a) + sizeof(b), "arena bytes %llu",
	      (unsigned long long)st.arena_bytes);
cleanup:
	if (afd >= 0)
		close(afd);
	if (pfd >= 0)
		close(pfd);
	walk_share__free(ws);
}

static void test_proc(void)
{
	struct walk_share *ws = walk_share__new(4096);
	struct xpu_cfi_proc *v = calloc(1, sizeof(*v));
	struct xpu_py_layout py = { .runtime_addr = 0x7f0000001000, .model = 2, .ts_next = 24 };
	struct xpu_ag_tls ag = { .modid = 3, .off = 0x40 };
	const struct xpu_share_proc *sp = NULL;
	struct walk_share_stats st;
	uint64_t abytes, pbytes = 0;
	int afd = -1, pfd = -1, afd2 = -1, pfd2 = -1;
	struct stat s1, s2;
	uint32_t seq;

	if (!ws || !v)
		goto cleanup;
	/* values before any library asks are kept for it; NULL on an unknown pid adds none */
	fill_cfi(v, 2, 7);
	walk_share__proc_cfi(ws, PID, v);
	walk_share__proc_py(ws, PID, &py);
	walk_share__proc_ag(ws, PID, &ag);
	walk_share__proc_py(ws, PID + 1, NULL);
	CHECK(!walk_share__fds(ws, PID, &afd, &abytes, &pfd, &pbytes), "fds");
	CHECK(pbytes >= sizeof(struct xpu_share_proc) && !(pbytes & 4095), "proc bytes %llu",
	      (unsigned long long)pbytes);
	CHECK((fcntl(pfd, F_GETFL) & O_ACCMODE) == O_RDONLY, "share descriptor read-only");
	sp = map_ro(pfd, pbytes);
	CHECK(sp != NULL, "map the share");
	if (!sp)
		goto cleanup;
	CHECK(sp->magic == XPU_SHARE_MAGIC && sp->version == XPU_SHARE_VERSION, "share header");
	CHECK(!(sp->seq & 1), "seq even: %u", sp->seq);
	CHECK(sp->flags == (XPU_SHARE_CFI | XPU_SHARE_PY | XPU_SHARE_AG), "flags %x", sp->flags);
	CHECK(sp->cfi.nr == 2 && sp->cfi.gen == 7 && !memcmp(sp->cfi.maps, v->maps, 2 * sizeof(v->maps[0])),
	      "cfi value");
	CHECK(!memcmp(&sp->py, &py, sizeof(py)), "py layout");
	CHECK(sp->ag.modid == 3 && sp->ag.off == 0x40, "ag tls");
	check_read_only(pfd, pbytes, (void *)sp, "share");

	/* later updates write through, each under the lock */
	seq = sp->seq;
	fill_cfi(v, 3, 8);
	walk_share__proc_cfi(ws, PID, v);
	CHECK(sp->seq == seq + 2, "seq %u after one update from %u", sp->seq, seq);
	CHECK(sp->cfi.nr == 3 && sp->cfi.gen == 8 && sp->cfi.maps[2].start == 800002, "update seen");
	walk_share__proc_py(ws, PID, NULL);
	CHECK(sp->flags == (XPU_SHARE_CFI | XPU_SHARE_AG), "py gone: flags %x", sp->flags);
	walk_share__proc_cfi(ws, PID, NULL);
	CHECK(!(sp->flags & XPU_SHARE_CFI) && sp->cfi.nr == 0, "cfi gone");
	walk_share__proc_cfi(ws, PID, v);

	/* an exec clears the old image's values; the same share serves the new image */
	walk_share__forget(ws, PID, true);
	CHECK(sp->flags == 0 && sp->cfi.nr == 0 && !(sp->seq & 1), "exec clears");
	fill_cfi(v, 1, 9);
	walk_share__proc_cfi(ws, PID, v);
	CHECK(sp->flags == XPU_SHARE_CFI && sp->cfi.nr == 1, "new image's value");
	CHECK(!walk_share__fds(ws, PID, &afd2, &abytes, &pfd2, &pbytes), "fds again");
	CHECK(!fstat(pfd, &s1) && !fstat(pfd2, &s2) && s1.st_ino == s2.st_ino, "one share per pid");

	/* an exit frees it; a mapping left says nothing to walk with */
	walk_share__forget(ws, PID, false);
	CHECK(sp->flags == 0 && !(sp->seq & 1), "exit clears");
	walk_share__get_stats(ws, &st);
	CHECK(st.procs == 1 && st.errors == 0, "procs %llu, errors %llu",
	      (unsigned long long)st.procs, (unsigned long long)st.errors);
cleanup:
	if (sp)
		munmap((void *)sp, pbytes);
	if (afd >= 0)
		close(afd);
	if (pfd >= 0)
		close(pfd);
	if (afd2 >= 0)
		close(afd2);
	if (pfd2 >= 0)
		close(pfd2);
	free(v);
	walk_share__free(ws);
}

/* ---- a reader racing the writer, as the library's walk does ------------------------------ */

static atomic_bool reader_stop;
static uint64_t reads_ok, reads_torn;

static void *reader(void *arg)
{
	const struct xpu_share_proc *sp = arg;

	while (!atomic_load(&reader_stop)) {
		uint32_t s1 = __atomic_load_n(&sp->seq, __ATOMIC_ACQUIRE), s2, nr, gen, i;
		uint64_t first, last;
		bool flags;

		if (s1 & 1)
			continue;
		nr = __atomic_load_n(&sp->cfi.nr, __ATOMIC_ACQUIRE);
		gen = sp->cfi.gen;
		flags = sp->flags & XPU_SHARE_CFI;
		i = nr < XPU_CFI_MAX_MAPS ? nr : XPU_CFI_MAX_MAPS;
		first = i ? sp->cfi.maps[0].start : 0;
		last = i ? sp->cfi.maps[i - 1].start : 0;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&sp->seq, __ATOMIC_RELAXED);
		if (s1 != s2) {
			reads_torn++;
			continue;
		}
		/* each value written has nr == gen, maps start at gen * 100000 */
		if (!flags || nr != gen || (nr && (first != (uint64_t)gen * 100000 ||
						  last != (uint64_t)gen * 100000 + nr - 1))) {
			CHECK(0, "inconsistent read: seq %u nr %u gen %u first %llu last %llu", s1, nr,
			      gen, (unsigned long long)first, (unsigned long long)last);
			break;
		}
		reads_ok++;
	}
	return NULL;
}

static void test_seqlock(void)
{
	struct walk_share *ws = walk_share__new(4096);
	struct xpu_cfi_proc *v = calloc(2, sizeof(*v));
	const struct xpu_share_proc *sp = NULL;
	uint64_t abytes, pbytes = 0;
	int afd = -1, pfd = -1, i;
	pthread_t t;

	if (!ws || !v)
		goto cleanup;
	fill_cfi(&v[0], 5, 5);
	fill_cfi(&v[1], 500, 500);
	walk_share__proc_cfi(ws, PID, &v[0]);
	if (walk_share__fds(ws, PID, &afd, &abytes, &pfd, &pbytes) || !(sp = map_ro(pfd, pbytes)))
		goto cleanup;
	atomic_store(&reader_stop, false);
	pthread_create(&t, NULL, reader, (void *)sp);
	for (i = 0; i < 200000; i++)
		walk_share__proc_cfi(ws, PID, &v[i & 1]);
	atomic_store(&reader_stop, true);
	pthread_join(t, NULL);
	CHECK(reads_ok > 0, "reads %llu ok, %llu discarded", (unsigned long long)reads_ok,
	      (unsigned long long)reads_torn);
	CHECK(sp->seq == 2 * (200000 + 1), "seq %u", sp->seq);
cleanup:
	CHECK(sp != NULL, "share mapped");
	if (sp)
		munmap((void *)sp, pbytes);
	if (afd >= 0)
		close(afd);
	if (pfd >= 0)
		close(pfd);
	free(v);
	walk_share__free(ws);
}

/* ---- the receiver's SHARE ------------------------------------------------------------------ */

int writer_thread__submit_foreign(struct writer_thread *wt, uint32_t source_id, const void *records,
				  size_t len)
{
	return 0;
}

void writer_thread__source_closed(struct writer_thread *wt, uint32_t source_id)
{
}

static int traced_all(void *ctx, pid_t pid)
{
	return 1;
}

/* Connects and checks in as pid; the socket or -1. */
static int hello_as(const char *path, uint32_t pid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct {
		struct xpu_cupti_msg_header h;
		struct xpu_cupti_hello hello;
	} msg = {
		.h = { .magic = XPU_CUPTI_WIRE_MAGIC, .type = XPU_CUPTI_MSG_HELLO,
		       .version = XPU_CUPTI_WIRE_VERSION, .len = sizeof(struct xpu_cupti_hello) },
		.hello = { .pid = pid },
	};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, &msg, sizeof(msg), MSG_NOSIGNAL) != sizeof(msg)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The next message within ms, with up to 2 descriptors; its length, 0 on none. */
static ssize_t receive(int fd, void *buf, size_t size, int fds[2], int *nfd, int ms)
{
	union {
		struct cmsghdr align;
		char b[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			    .msg_controllen = sizeof(ctl.b) };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;

	*nfd = 0;
	if (poll(&p, 1, ms) != 1)
		return 0;
	n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			*nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (*nfd > 2)
				*nfd = 2;
			memcpy(fds, CMSG_DATA(c), (size_t)*nfd * sizeof(int));
		}
	}
	return n;
}

static void test_rx_share(void)
{
	struct walk_share *ws = walk_share__new(4096);
	struct xpu_cfi_proc *v = calloc(1, sizeof(*v));
	struct cupti_rx_stats st;
	struct cupti_rx *rx;
	struct {
		struct xpu_cupti_msg_header h;
		struct xpu_cupti_share sh;
		uint8_t more[16];
	} in;
	const struct xpu_share_proc *sp;
	const struct xpu_share_arena *ar;
	char err[256] = "";
	int fd, other, fds[2], nfd, i;
	ssize_t n;

	if (!ws || !v)
		goto cleanup;
	fill_cfi(v, 4, 4);
	walk_share__proc_cfi(ws, (uint32_t)getpid(), v);
	rx = cupti_rx__start(NULL, traced_all, NULL, err, sizeof(err));
	CHECK(rx != NULL, "rx start: %s", err);
	if (!rx)
		goto cleanup;
	cupti_rx__set_walk_share(rx, ws);
	fd = hello_as(cupti_rx__socket_path(rx), (uint32_t)getpid());
	CHECK(fd >= 0, "connect");
	n = receive(fd, &in, sizeof(in), fds, &nfd, 2000);
	CHECK(n == sizeof(in.h) + sizeof(in.sh), "SHARE size %zd", n);
	CHECK(in.h.magic == XPU_CUPTI_WIRE_MAGIC && in.h.type == XPU_CUPTI_MSG_SHARE &&
	      in.h.version == XPU_CUPTI_WIRE_VERSION && in.h.len == sizeof(in.sh) && in.h.seq == 0,
	      "SHARE header: type %u len %u seq %u", in.h.type, in.h.len, in.h.seq);
	CHECK(nfd == 2, "two descriptors, got %d", nfd);
	if (nfd == 2) {
		CHECK((fcntl(fds[0], F_GETFL) & O_ACCMODE) == O_RDONLY &&
		      (fcntl(fds[1], F_GETFL) & O_ACCMODE) == O_RDONLY, "read-only descriptors");
		sp = map_ro(fds[1], in.sh.proc_bytes);
		CHECK(sp && sp->magic == XPU_SHARE_MAGIC && sp->cfi.nr == 4 &&
		      sp->flags == XPU_SHARE_CFI, "the process's share");
		if (sp)
			munmap((void *)sp, in.sh.proc_bytes);
		ar = map_ro(fds[0], in.sh.arena_bytes);
		CHECK(ar && ar->magic == XPU_SHARE_MAGIC && ar->capacity_bytes == in.sh.arena_bytes,
		      "the arena");
		if (ar) {
			check_read_only(fds[0], in.sh.arena_bytes, (void *)ar, "received arena");
			munmap((void *)ar, in.sh.arena_bytes);
		}
	}
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	/* a process that names itself otherwise is in another pid namespace: nothing for it */
	other = hello_as(cupti_rx__socket_path(rx), (uint32_t)getpid() + 1);
	CHECK(other >= 0, "connect the other");
	n = receive(other, &in, sizeof(in), fds, &nfd, 300);
	CHECK(n == 0 && nfd == 0, "no SHARE across pid namespaces: %zd bytes, %d fds", n, nfd);
	if (fd >= 0)
		close(fd);
	if (other >= 0)
		close(other);
	cupti_rx__stop(rx, 100, &st);
	CHECK(st.shares == 1 && st.shares_other_ns == 1 && st.share_errors == 0,
	      "shares %llu, other ns %llu, errors %llu", (unsigned long long)st.shares,
	      (unsigned long long)st.shares_other_ns, (unsigned long long)st.share_errors);
cleanup:
	free(v);
	walk_share__free(ws);
}

int main(void)
{
	test_tables();
	test_proc();
	test_seqlock();
	test_rx_share();
	return unit_finish();
}
