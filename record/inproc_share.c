// SPDX-License-Identifier: MIT
/*
 * The tables and per-process values the in-process launch walk reads (see inproc_share.h).
 *
 * Each memfd is mapped read-write here first, then sealed against resizing and against any
 * later write or writable mapping (F_SEAL_FUTURE_WRITE): a descriptor the target gets, even
 * one it reopens read-write through /proc, can map only read-only, while this mapping keeps
 * writing. The arena is sized once and never grows, so a library's mapping always covers it.
 * One mutex guards the arena's bump pointer and the process list; a table's slots are copied
 * outside it (into room reserved under it) so that parallel cfi workers do not queue there.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "inproc_share.h"

#define WS_BUCKETS 256
#define WS_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)
#define WS_PROC_BYTES ((sizeof(struct xpu_share_proc) + 4095) & ~4095ul)

/* A process's latest values, and its share once its library asked for one. */
struct ws_proc {
	struct ws_proc *next;
	uint32_t pid;
	uint32_t flags;			/* enum xpu_share_proc_flags */
	struct xpu_py_layout py;
	struct xpu_ag_tls ag;
	struct xpu_cfi_proc *cfi;	/* only nr maps meaningful; NULL until the first */
	int fd;				/* the share's memfd, -1: none yet */
	struct xpu_share_proc *map;	/* ... mapped writable here */
};

struct walk_share {
	pthread_mutex_t lock;
	int arena_fd;
	struct xpu_share_arena *arena;
	uint64_t capacity;
	uint64_t next_off;		/* the arena's bump pointer */
	bool said_full;
	bool said_error;
	struct ws_proc *procs[WS_BUCKETS];
	struct walk_share_stats st;
};

/* A sealed memfd of bytes, mapped writable at *map; the descriptor or negative errno. */
static int share_memfd(const char *name, uint64_t bytes, void **map)
{
	void *m = MAP_FAILED;
	int fd, err;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)bytes)) {
		err = -errno;
		goto cleanup;
	}
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	/* after the mapping: F_SEAL_FUTURE_WRITE leaves existing writable mappings be */
	if (fcntl(fd, F_ADD_SEALS, WS_SEALS)) {
		err = -errno;
		goto cleanup;
	}
	*map = m;
	return fd;
cleanup:
	if (m != MAP_FAILED)
		munmap(m, bytes);
	close(fd);
	return err;
}

/* A read-only descriptor of fd's file: what a mapping can never be made writable through. */
static int reopen_ro(int fd)
{
	char path[64];
	int ro;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	return ro < 0 ? -errno : ro;
}

/* Counts a failure, and says the first; lock held. */
static void note_error(struct walk_share *ws, const char *what, int err)
{
	ws->st.errors++;
	if (!ws->said_error)
		log_err("in-process launch walk: %s: %s (those launches take the BPF path)", what,
			strerror(-err));
	ws->said_error = true;
}

struct walk_share *walk_share__new(uint64_t table_bytes)
{
	struct walk_share *ws = calloc(1, sizeof(*ws));
	void *m;
	int fd;

	if (!ws)
		return NULL;
	ws->capacity = XPU_SHARE_ARENA_DATA + ((table_bytes + 4095) & ~4095ull);
	fd = share_memfd("xpu-walk-tables", ws->capacity, &m);
	if (fd < 0) {
		free(ws);
		errno = -fd;
		return NULL;
	}
	ws->arena_fd = fd;
	ws->arena = m;
	ws->arena->magic = XPU_SHARE_MAGIC;
	ws->arena->version = XPU_SHARE_VERSION;
	ws->arena->capacity_bytes = ws->capacity;
	ws->next_off = XPU_SHARE_ARENA_DATA;
	pthread_mutex_init(&ws->lock, NULL);
	return ws;
}

static void proc_unmap(struct ws_proc *p)
{
	if (p->map)
		munmap(p->map, WS_PROC_BYTES);
	if (p->fd >= 0)
		close(p->fd);
	free(p->cfi);
	free(p);
}

void walk_share__free(struct walk_share *ws)
{
	size_t i;

	if (!ws)
		return;
	log_info("in-process launch walk: %llu tables (%llu bytes) shared, %llu left to BPF "
		 "(arena full), %llu processes shared, %llu errors",
		 (unsigned long long)ws->st.tables, (unsigned long long)ws->st.arena_bytes,
		 (unsigned long long)ws->st.tables_over, (unsigned long long)ws->st.procs,
		 (unsigned long long)ws->st.errors);
	for (i = 0; i < WS_BUCKETS; i++) {
		while (ws->procs[i]) {
			struct ws_proc *p = ws->procs[i];

			ws->procs[i] = p->next;
			proc_unmap(p);
		}
	}
	munmap(ws->arena, ws->capacity);
	close(ws->arena_fd);
	pthread_mutex_destroy(&ws->lock);
	free(ws);
}

void walk_share__table(struct walk_share *ws, uint32_t table, const struct xpu_cfi_row *slots,
		       size_t nslots)
{
	struct xpu_share_table *e;
	uint64_t bytes = (uint64_t)nslots * sizeof(*slots), off;

	if (table >= XPU_CFI_MAX_TABLES || !nslots || nslots > UINT32_MAX)
		return;
	e = &ws->arena->tables[table];
	pthread_mutex_lock(&ws->lock);
	off = (ws->next_off + 7) & ~7ull;
	if (e->slots || off + bytes > ws->capacity) {
		/* an index is written once; a full arena leaves the table to the BPF walk */
		if (!e->slots) {
			ws->st.tables_over++;
			if (!ws->said_full)
				log_info("in-process launch walk: table arena full (%llu bytes): "
					 "launches through later files take the BPF path",
					 (unsigned long long)ws->capacity);
			ws->said_full = true;
		}
		pthread_mutex_unlock(&ws->lock);
		return;
	}
	/* reserved: the slots are copied outside the lock, then the entry is made ready */
	ws->next_off = off + bytes;
	e->off = off;
	e->slots = (uint32_t)nslots;
	ws->st.arena_bytes += bytes;
	ws->st.tables++;
	pthread_mutex_unlock(&ws->lock);
	memcpy((char *)ws->arena + off, slots, bytes);
	__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
}

static uint32_t pid_hash(uint32_t pid)
{
	return (pid * 2654435761u) >> 24 & (WS_BUCKETS - 1);
}

/* pid's slot, made if create; lock held. */
static struct ws_proc *proc_get(struct walk_share *ws, uint32_t pid, bool create)
{
	struct ws_proc **b = &ws->procs[pid_hash(pid)], *p;

	for (p = *b; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->fd = -1;
	p->next = *b;
	*b = p;
	return p;
}

/*
 * Copies what mappings a walk may read, never showing more than are written: a walk that
 * reads nr between the two stores bounds its reads by the maps already there (and its seq
 * check discards it anyway).
 */
static void copy_cfi(struct xpu_cfi_proc *dst, const struct xpu_cfi_proc *src)
{
	uint32_t nr = src ? src->nr : 0, old = __atomic_load_n(&dst->nr, __ATOMIC_RELAXED);

	if (nr > XPU_CFI_MAX_MAPS)
		nr = XPU_CFI_MAX_MAPS;
	if (old > nr)
		__atomic_store_n(&dst->nr, nr, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (nr)
		memcpy(dst->maps, src->maps, nr * sizeof(src->maps[0]));
	dst->gen = src ? src->gen : 0;
	__atomic_store_n(&dst->nr, nr, __ATOMIC_RELEASE);
}

/* p's values into its share, if it has one, under the sequence lock; lock held. */
static void write_through(struct ws_proc *p)
{
	struct xpu_share_proc *m = p->map;
	uint32_t seq;

	if (!m)
		return;
	seq = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&m->seq, seq + 1, __ATOMIC_RELAXED);
	/* odd before any field changes: a full barrier, as stores may pass a store-release */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&m->flags, p->flags, __ATOMIC_RELAXED);
	m->py = p->py;
	m->ag = p->ag;
	copy_cfi(&m->cfi, p->cfi);
	__atomic_store_n(&m->seq, seq + 2, __ATOMIC_RELEASE);
}

void walk_share__proc_cfi(struct walk_share *ws, uint32_t pid, const struct xpu_cfi_proc *v)
{
	struct ws_proc *p;

	pthread_mutex_lock(&ws->lock);
	p = proc_get(ws, pid, v != NULL);
	if (p && v && !p->cfi && !(p->cfi = calloc(1, sizeof(*p->cfi)))) {
		/* without a copy the share would go stale: it says no mappings instead */
		note_error(ws, "out of memory", -ENOMEM);
		v = NULL;
	}
	if (p) {
		if (p->cfi)
			copy_cfi(p->cfi, v);
		p->flags = v ? p->flags | XPU_SHARE_CFI : p->flags & ~XPU_SHARE_CFI;
		write_through(p);
	}
	pthread_mutex_unlock(&ws->lock);
}

void walk_share__proc_py(struct walk_share *ws, uint32_t pid, const struct xpu_py_layout *l)
{
	struct ws_proc *p;

	pthread_mutex_lock(&ws->lock);
	p = proc_get(ws, pid, l != NULL);
	if (p) {
		memset(&p->py, 0, sizeof(p->py));
		if (l)
			p->py = *l;
		p->flags = l ? p->flags | XPU_SHARE_PY : p->flags & ~XPU_SHARE_PY;
		write_through(p);
	}
	pthread_mutex_unlock(&ws->lock);
}

void walk_share__proc_ag(struct walk_share *ws, uint32_t pid, const struct xpu_ag_tls *ag)
{
	struct ws_proc *p;

	pthread_mutex_lock(&ws->lock);
	p = proc_get(ws, pid, ag != NULL);
	if (p) {
		memset(&p->ag, 0, sizeof(p->ag));
		if (ag)
			p->ag = *ag;
		p->flags = ag ? p->flags | XPU_SHARE_AG : p->flags & ~XPU_SHARE_AG;
		write_through(p);
	}
	pthread_mutex_unlock(&ws->lock);
}

void walk_share__forget(struct walk_share *ws, uint32_t pid, bool exec)
{
	struct ws_proc **pp, *p;

	pthread_mutex_lock(&ws->lock);
	for (pp = &ws->procs[pid_hash(pid)]; (p = *pp) && p->pid != pid; pp = &p->next)
		;
	if (p && exec) {
		/* nothing of the old image may guide a walk of the new one */
		p->flags = 0;
		memset(&p->py, 0, sizeof(p->py));
		memset(&p->ag, 0, sizeof(p->ag));
		if (p->cfi)
			copy_cfi(p->cfi, NULL);
		write_through(p);
	} else if (p) {
		*pp = p->next;
		/* a library still mapping it (a process that outlives its exit event) falls back */
		p->flags = 0;
		write_through(p);
		proc_unmap(p);
	}
	pthread_mutex_unlock(&ws->lock);
}

/* p's share, made and filled with its current values; 0 or negative errno; lock held. */
static int proc_share(struct walk_share *ws, struct ws_proc *p)
{
	struct xpu_share_proc *m;
	void *map;
	int fd;

	if (p->fd >= 0)
		return 0;
	fd = share_memfd("xpu-walk-proc", WS_PROC_BYTES, &map);
	if (fd < 0)
		return fd;
	m = map;
	m->magic = XPU_SHARE_MAGIC;
	m->version = XPU_SHARE_VERSION;
	p->fd = fd;
	p->map = m;
	write_through(p);
	ws->st.procs++;
	return 0;
}

int walk_share__fds(struct walk_share *ws, uint32_t pid, int *arena_fd, uint64_t *arena_bytes,
		    int *proc_fd, uint64_t *proc_bytes)
{
	struct ws_proc *p;
	int afd = -1, pfd = -1, err;

	pthread_mutex_lock(&ws->lock);
	p = proc_get(ws, pid, true);
	if (!p) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = proc_share(ws, p);
	if (err)
		goto cleanup;
	afd = reopen_ro(ws->arena_fd);
	pfd = reopen_ro(p->fd);
	if (afd < 0 || pfd < 0) {
		err = afd < 0 ? afd : pfd;
		goto cleanup;
	}
	*arena_fd = afd;
	*arena_bytes = ws->capacity;
	*proc_fd = pfd;
	*proc_bytes = WS_PROC_BYTES;
	afd = pfd = -1;
cleanup:
	if (afd >= 0)
		close(afd);
	if (pfd >= 0)
		close(pfd);
	if (err)
		note_error(ws, "cannot share the tables", err);
	pthread_mutex_unlock(&ws->lock);
	return err;
}

void walk_share__get_stats(struct walk_share *ws, struct walk_share_stats *st)
{
	pthread_mutex_lock(&ws->lock);
	*st = ws->st;
	pthread_mutex_unlock(&ws->lock);
}
