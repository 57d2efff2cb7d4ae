// SPDX-License-Identifier: MIT
/*
 * Tables for the in-BPF unwinder. Files are keyed by device and inode (the very file mapped,
 * shared by every process that maps it) and built once by one of a few worker threads (more
 * than one on a machine with CPUs to spare: an import of PyTorch maps dozens of large libraries
 * at once, and until a file's table is loaded its frames are unwound by frame pointer); a file
 * whose build-id equals one built before shares that table (copies of a library in several
 * environments). One mutex guards the file and process lists; workers hold it only to reserve
 * a table and publish.
 */
#include <bpf/bpf.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cfi_build.h"
#include "cfi_cache.h"
#include "cfi_loader.h"
#include "config.h"
#include "elf_buildid.h"
#include "elf_deps.h"
#include "fd_limit.h"
#include "proc_table.h"
#include "inproc_share.h"
#include "xpu_format.h"

#define CL_BUCKETS 1024
#define CL_MAX_WORKERS 4
/*
 * Queued files keep a descriptor at most this many at a time (and an eighth of the
 * descriptor limit at most): past that a file is queued by its /proc/PID/map_files name and
 * opened when built. A descriptor each ran 1,000 libraries out of `ulimit -n 1024`.
 */
#define CL_MAX_QUEUED_FDS 64

/*
 * CL_UNOPENED: queued by name and no process mapped the file any more when its turn came (a
 * target that exits while its tables are queued): not a failure, and queued again by the next
 * process seen to map it.
 */
enum cl_state { CL_PENDING, CL_READY, CL_FAILED, CL_UNOPENED };

struct cl_file {
	struct cl_file *next;		/* hash chain */
	struct cl_file *qnext;		/* build queue */
	struct cl_file *bnext;		/* build-id chain (files built or failed) */
	uint32_t dev;
	uint64_t ino;
	int fd;
	char *reopen;			/* fd -1: the map_files name to open it by when built */
	enum cl_state state;
	uint32_t table, nrows;
	uint32_t page0, npages;		/* the page index after the rows */
	struct cfi_table t;		/* loads only: rows live in the BPF map */
	uint8_t build_id[XPU_BUILD_ID_MAX];
	int build_id_len;
	bool build_id_read;		/* by the drain, for the DSO record: not read again */
	struct cl_map *users;		/* every process's mappings of it */
};

/*
 * A mapping of a file known here, in its process's lists and its file's: a file's state
 * changes only its own mappings' entries, a new mapping only its process's list. pub: in the
 * process's published list, whose entry is o.
 */
struct cl_map {
	uint64_t start, end, pgoff;
	struct cl_file *f;
	struct cl_proc *p;
	struct cl_map *fnext, **fprev;	/* f->users */
	struct xpu_cfi_map o;
	bool pub;
};

/*
 * A process's slot, in the list of every process published. maps: its mappings of known
 * files, in address order (those of p->maps, kept in step by on_mapping's calls, read again
 * after a whole read); pub: those with a table or one to come, in address order, whose first
 * XPU_CFI_MAX_MAPS are the cfi_procs value. dirty: pub changed since it was written.
 */
struct cl_proc {
	struct cl_proc *prev, *next;
	pid_t pid;
	uint32_t whole_reads;		/* the proc's, when maps was last read whole */
	struct cl_map **maps;
	size_t nr, cap;
	struct cl_map **pub;
	size_t npub, pcap;
	bool dirty;
	struct cl_proc *dnext;		/* the loader's dirty list */
};

/*
 * A table in its inner map, not yet in cfi_tables: f stays CL_PENDING until the publisher
 * puts it there; mem (mlen bytes, slots rows) is the map's mapping, for the share.
 */
struct cl_pub {
	struct cl_pub *next;
	struct cl_file *f;
	uint32_t table;
	int fd;
	void *mem;
	size_t mlen, slots, bytes;
	uint64_t rows, unsupported_rows;
	int err;
};

struct cfi_loader {
	struct map_handler h;
	int tables_fd, procs_fd;
	uint64_t mem_bytes;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t idle;		/* the queue became empty */
	pthread_t workers[CL_MAX_WORKERS];
	int nworkers;
	bool stop;
	struct cl_file *files[CL_BUCKETS];
	struct cl_file *by_id[CL_BUCKETS];
	struct cl_proc *procs;		/* every process published */
	struct cl_proc *dirty;		/* those to write again */
	struct cl_file *qhead, **qtail;
	unsigned int busy;		/* workers building a file */
	/* tables loaded and waiting for the publisher (see publisher()); publishing: their count */
	struct cl_pub *pub_head, **pub_tail;
	unsigned int publishing;
	pthread_cond_t pub_cond;
	pthread_t publisher;
	bool has_publisher, pub_stop;	/* pub_stop: after the workers, so that nothing is left */
	bool pub_one_by_one;		/* XPU_CFI_PUBLISH=single: no batch (bench/start_cost.py) */
	unsigned int queued_fds, max_fds;	/* descriptors held by queued files, and the bound */
	struct cl_file *vdso;		/* the kernel's vdso, from our own image */
	uint32_t next_table;
	uint32_t next_gen;		/* xpu_cfi_proc.gen of the next update */
	struct xpu_cfi_proc *buf;	/* one cfi_procs value being assembled */
	struct walk_share *ws;		/* the in-process walk's copy of the maps; may be NULL */
	struct cfi_cache *cache;	/* built tables kept across recordings; may be NULL */
	struct cfi_loader_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct cfi_loader *of(struct map_handler *h)
{
	return (struct cfi_loader *)((char *)h - offsetof(struct cfi_loader, h));
}

static uint32_t file_hash(uint32_t dev, uint64_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ull ^ dev;

	return (uint32_t)(h ^ (h >> 32)) % CL_BUCKETS;
}

static struct cl_file *file_find(struct cfi_loader *cl, uint32_t dev, uint64_t ino)
{
	struct cl_file *f;

	for (f = cl->files[file_hash(dev, ino)]; f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			return f;
	return NULL;
}

/* The first of a[0..n) (address order, none overlapping) that ends above addr, or n. */
static size_t map_bound(struct cfi_loader *cl, struct cl_map *const *a, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		cl->st.map_entries++;
		if (a[mid]->end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* m into *a (of *n, room for *cap) at i; 0 or -ENOMEM. */
static int map_insert(struct cl_map ***a, size_t *n, size_t *cap, size_t i, struct cl_map *m)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct cl_map **t = realloc(*a, c * sizeof(*t));

		if (!t)
			return -ENOMEM;
		*a = t;
		*cap = c;
	}
	memmove(&(*a)[i + 1], &(*a)[i], (*n - i) * sizeof(**a));
	(*a)[i] = m;
	(*n)++;
	return 0;
}

/* a[i..j) out of *a (of *n). */
static void map_cut(struct cl_map **a, size_t *n, size_t i, size_t j)
{
	if (i == j)
		return;
	memmove(&a[i], &a[j], (*n - j) * sizeof(*a));
	*n -= j - i;
}

/* p's published list changed: written at the next publish_dirty(); lock held. */
static void mark_dirty(struct cfi_loader *cl, struct cl_proc *p)
{
	if (p->dirty)
		return;
	p->dirty = true;
	p->dnext = cl->dirty;
	cl->dirty = p;
}

/*
 * m's entry from its file's state: published while the table is to come (the walk counts a
 * frame there as "table not loaded yet") or loaded, else left out; lock held.
 */
static void map_refresh(struct cfi_loader *cl, struct cl_map *m)
{
	struct cl_proc *p = m->p;
	struct xpu_cfi_map o = { .start = m->start, .end = m->end };
	uint64_t bias = 0;
	bool want = true;
	size_t i;

	cl->st.map_entries++;
	if (m->f->state == CL_PENDING) {
		o.table = XPU_CFI_TABLE_PENDING;
	} else if (m->f->state != CL_READY ||
		   cfi_table__bias(&m->f->t, m->start, m->pgoff, &bias)) {
		want = false;
	} else {
		o.bias = bias;
		o.table = m->f->table;
		o.nrows = m->f->nrows;
		o.page0 = m->f->page0;
		o.npages = m->f->npages;
	}
	if (want == m->pub && (!want || !memcmp(&o, &m->o, sizeof(o))))
		return;
	i = map_bound(cl, p->pub, p->npub, m->start);
	if (m->pub && !want)
		map_cut(p->pub, &p->npub, i, i + 1);
	else if (!m->pub && map_insert(&p->pub, &p->npub, &p->pcap, i, m))
		want = false;	/* out of memory: the walk uses frame pointers there */
	m->o = o;
	m->pub = want;
	mark_dirty(cl, p);
}

/* A mapping of f's in p at index i of p->maps; lock held. */
static void map_add(struct cfi_loader *cl, struct cl_proc *p, size_t i, const struct proc_map *pm,
		    struct cl_file *f)
{
	struct cl_map *m = calloc(1, sizeof(*m));

	if (!m || map_insert(&p->maps, &p->nr, &p->cap, i, m)) {
		free(m);
		return;
	}
	m->start = pm->start;
	m->end = pm->end;
	m->pgoff = pm->pgoff;
	m->f = f;
	m->p = p;
	m->fnext = f->users;
	if (f->users)
		f->users->fprev = &m->fnext;
	m->fprev = &f->users;
	f->users = m;
	map_refresh(cl, m);
}

/* m out of its file's list, and freed; lock held. */
static void map_drop(struct cfi_loader *cl, struct cl_map *m)
{
	cl->st.map_entries++;
	*m->fprev = m->fnext;
	if (m->fnext)
		m->fnext->fprev = m->fprev;
	free(m);
}

/* m out of its process's published list too; lock held. */
static void map_free(struct cfi_loader *cl, struct cl_map *m)
{
	struct cl_proc *p = m->p;

	if (m->pub) {
		size_t i = map_bound(cl, p->pub, p->npub, m->start);

		map_cut(p->pub, &p->npub, i, i + 1);
		mark_dirty(cl, p);
	}
	map_drop(cl, m);
}

/* Writes p's published mappings to cfi_procs (and the share); lock held. */
static void publish(struct cfi_loader *cl, struct cl_proc *p)
{
	struct xpu_cfi_proc *v = cl->buf;
	uint32_t key = (uint32_t)p->pid;
	size_t i;

	v->nr = p->npub < XPU_CFI_MAX_MAPS ? (uint32_t)p->npub : XPU_CFI_MAX_MAPS;
	cl->st.maps_dropped += p->npub - v->nr;
	for (i = 0; i < v->nr; i++)
		v->maps[i] = p->pub[i]->o;
	if (!v->nr) {
		bpf_map_delete_elem(cl->procs_fd, &key);
		if (cl->ws)
			walk_share__proc_cfi(cl->ws, key, NULL);
		return;
	}
	/* 0 is skipped: the walk's empty cache entries hold generation 0 */
	if (!++cl->next_gen)
		++cl->next_gen;
	v->gen = cl->next_gen;
	cl->st.proc_updates++;
	if (bpf_map_update_elem(cl->procs_fd, &key, v, BPF_ANY))
		cl->st.update_errors++;
	else if (cl->ws)
		walk_share__proc_cfi(cl->ws, key, v);
}

/* Writes every process whose published list changed, once each; lock held. */
static void publish_dirty(struct cfi_loader *cl)
{
	struct cl_proc *p;

	while ((p = cl->dirty)) {
		cl->dirty = p->dnext;
		p->dirty = false;
		publish(cl, p);
	}
}

/* Array slots of t's rows and of its page index of npages words. */
static size_t table_slots(const struct cfi_table *t, uint32_t npages)
{
	return t->nr + (npages + 1) / 2;
}

/*
 * Copies t's rows and their page index (npages words) into a new inner map for index table:
 * 0 and pub filled (its map and mapping, for the publisher), or negative errno.
 */
static int load_rows(const struct cfi_table *t, const uint32_t *index, uint32_t npages,
		     uint32_t table, struct cl_pub *pub)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	size_t bytes = t->nr * sizeof(*t->rows), ibytes = (npages + 1) / 2 * sizeof(*t->rows);
	size_t mlen = (bytes + ibytes + 4095) & ~4095ul;
	void *mem;
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_rows", sizeof(uint32_t),
			    sizeof(struct xpu_cfi_row), (uint32_t)table_slots(t, npages), &o);
	if (fd < 0)
		return -errno;
	mem = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	memcpy(mem, t->rows, bytes);
	memcpy((char *)mem + bytes, index, ibytes);
	pub->table = table;
	pub->fd = fd;
	pub->mem = mem;
	pub->mlen = mlen;
	pub->slots = table_slots(t, npages);
	return 0;
}

static uint32_t id_hash(const uint8_t *id, int len)
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < len; i++)
		h = (h ^ id[i]) * 16777619u;
	return h % CL_BUCKETS;
}

/* A file built (or failed) before with this build-id; lock held. */
static struct cl_file *built_with_id(struct cfi_loader *cl, const uint8_t *id, int len)
{
	struct cl_file *o;

	if (len <= 0)
		return NULL;
	for (o = cl->by_id[id_hash(id, len)]; o; o = o->bnext)
		if (o->build_id_len == len && !memcmp(o->build_id, id, (size_t)len))
			return o;
	return NULL;
}

static struct cl_file *same_build_id(struct cfi_loader *cl, const struct cl_file *f)
{
	return built_with_id(cl, f->build_id, f->build_id_len);
}

/* f is built (or failed): remember its build-id, publish every process that maps it. */
static void file_done(struct cfi_loader *cl, struct cl_file *f)
{
	struct cl_map *m;

	/* a table to share, or a failure: not one left unopened, which may be queued again */
	if (f->build_id_len > 0 && (f->state == CL_READY || f->state == CL_FAILED) &&
	    !same_build_id(cl, f)) {
		uint32_t b = id_hash(f->build_id, f->build_id_len);

		f->bnext = cl->by_id[b];
		cl->by_id[b] = f;
	}
	if (f->state == CL_PENDING)
		return;
	for (m = f->users; m; m = m->fnext)
		map_refresh(cl, m);
	publish_dirty(cl);
}

/* path opened, if it is still the inode f names (the mapping may have changed since); or -1 */
static int open_mapped(const struct cl_file *f, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && (errno == EMFILE || errno == ENFILE))
		fd_limit__said(errno, "a file's unwind table");
	if (fd >= 0 && (fstat(fd, &st) || st.st_ino != f->ino ||
			((major(st.st_dev) << 20) | minor(st.st_dev)) != f->dev)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The map_files names of up to n mappings of f that processes have now; lock held. */
static int other_names(struct cfi_loader *cl, const struct cl_file *f, char (*names)[64], int n)
{
	const struct cl_map *m;
	int got = 0;

	for (m = f->users; m && got < n; m = m->fnext)
		snprintf(names[got++], 64, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)m->p->pid,
			 m->start, m->end);
	return got;
}

/*
 * A file queued by name: opened now by that name, else through another process that maps it
 * still (the one that queued it may have exited); -1 when none does (files_unopened).
 */
static int reopen(struct cfi_loader *cl, struct cl_file *f)
{
	char names[4][64];
	int fd = open_mapped(f, f->reopen), n = 0, i;

	free(f->reopen);
	f->reopen = NULL;
	if (fd < 0) {
		pthread_mutex_lock(&cl->lock);
		n = other_names(cl, f, names, 4);
		pthread_mutex_unlock(&cl->lock);
	}
	for (i = 0; fd < 0 && i < n; i++)
		fd = open_mapped(f, names[i]);
	pthread_mutex_lock(&cl->lock);
	if (fd >= 0)
		cl->st.files_reopened++;
	else
		cl->st.files_unopened++;
	pthread_mutex_unlock(&cl->lock);
	return fd;
}

/* f, unopened, is mapped by pid at m: queued again by that map_files name; lock held. */
static void requeue(struct cfi_loader *cl, struct cl_file *f, pid_t pid, const struct proc_map *pm)
{
	struct cl_map *m;
	char name[64];

	snprintf(name, sizeof(name), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, pm->start,
		 pm->end);
	f->reopen = strdup(name);
	if (!f->reopen)
		return;
	f->state = CL_PENDING;
	f->qnext = NULL;
	*cl->qtail = f;
	cl->qtail = &f->qnext;
	pthread_cond_signal(&cl->cond);
	for (m = f->users; m; m = m->fnext)
		map_refresh(cl, m);
}

/*
 * Builds the table of the file at f->fd (closed here) into t, or reads it from the table
 * cache, which then gets each table built; 0 or negative errno.
 */
static int build_table(struct cfi_loader *cl, struct cl_file *f, struct cfi_table *t)
{
	int err;

	if (f->fd < 0)
		return -EBADF;
	err = cfi_cache__get(cl->cache, f->fd, f->build_id, f->build_id_len, t);
	if (err) {
		err = cfi_table__build(f->fd, t);
		if (!err && t->nr)
			cfi_cache__put(cl->cache, f->fd, f->build_id, f->build_id_len, t);
	}
	close(f->fd);
	f->fd = -1;
	return err;
}

/* f takes the table (or the failure) of twin, a file with its build-id; lock held. */
static void share_table(struct cfi_loader *cl, struct cl_file *f, const struct cl_file *twin)
{
	f->state = twin->state;
	f->table = twin->table;
	f->nrows = twin->nrows;
	f->page0 = twin->page0;
	f->npages = twin->npages;
	f->t = twin->t;
	cl->st.files_shared++;
	file_done(cl, f);
}

/* Builds and loads one file, or shares the table of a file with its build-id; lock not held. */
static void build_file(struct cfi_loader *cl, struct cl_file *f)
{
	uint64_t t0 = now_ns(), dt;
	struct cfi_table t = { 0 };
	uint32_t *index = NULL, page0 = 0, npages = 0, table = 0;
	struct cl_file *twin;
	size_t bytes = 0;
	bool over = false, reserved = false, held = f->fd >= 0, unopened = false;
	struct cl_pub *pub = NULL;
	int err = 0;

	if (!held && f->reopen) {
		f->fd = reopen(cl, f);
		unopened = f->fd < 0;
	}
	if (f->fd >= 0 && !f->build_id_read)
		f->build_id_len = elf_buildid__read_fd(f->fd, f->build_id, sizeof(f->build_id));
	pthread_mutex_lock(&cl->lock);
	if (held)
		cl->queued_fds--;
	twin = same_build_id(cl, f);
	if (twin) {
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		share_table(cl, f, twin);
		pthread_mutex_unlock(&cl->lock);
		return;
	}
	pthread_mutex_unlock(&cl->lock);
	err = build_table(cl, f, &t);
	if (!err && t.nr)
		err = cfi_table__index(&t, &index, &page0, &npages);
	bytes = table_slots(&t, npages) * sizeof(*t.rows);
	pthread_mutex_lock(&cl->lock);
	over = !err && (cl->st.table_bytes + bytes > cl->mem_bytes ||
			cl->next_table >= XPU_CFI_MAX_TABLES || t.nr > XPU_CFI_MAX_ROWS || !t.nr);
	if (!err && !over) {
		/* reserved before loading, so that parallel builds keep to the bound */
		table = cl->next_table++;
		cl->st.table_bytes += bytes;
		reserved = true;
	}
	pthread_mutex_unlock(&cl->lock);
	if (reserved) {
		pub = calloc(1, sizeof(*pub));
		err = pub ? load_rows(&t, index, npages, table, pub) : -ENOMEM;
	}
	free(index);
	dt = now_ns() - t0;
	pthread_mutex_lock(&cl->lock);
	cl->st.build_ns += dt;
	if (dt > cl->st.build_max_ns)
		cl->st.build_max_ns = dt;
	if (unopened) {
		f->state = CL_UNOPENED;
		log_info("cfi: no table for inode %lu yet: no process maps it now",
			 (unsigned long)f->ino);
	} else if (err || over) {
		if (reserved)
			cl->st.table_bytes -= bytes;
		f->state = CL_FAILED;
		if (over)
			cl->st.files_over_budget++;
		else
			cl->st.files_failed++;
		log_info("cfi: no table for inode %lu: %s", (unsigned long)f->ino,
			 over ? "over the memory bound" : strerror(-err));
	} else {
		/* ready once the publisher has put it in cfi_tables: pending until then */
		f->table = table;
		f->nrows = (uint32_t)t.nr;
		f->page0 = page0;
		f->npages = npages;
		memcpy(f->t.loads, t.loads, sizeof(t.loads));
		f->t.nloads = t.nloads;
		pub->f = f;
		pub->bytes = bytes;
		pub->rows = t.nr;
		pub->unsupported_rows = t.st.unsupported_rows;
		*cl->pub_tail = pub;
		cl->pub_tail = &pub->next;
		cl->publishing++;
		pthread_cond_signal(&cl->pub_cond);
		pub = NULL;
	}
	file_done(cl, f);	/* a table still to publish: nothing yet (the publisher's) */
	pthread_mutex_unlock(&cl->lock);
	free(pub);
	cfi_table__free(&t);
}

/*
 * Puts loaded tables into cfi_tables, as many at a time as are waiting. A write to a map of
 * maps waits for an RCU grace period (the kernel makes sure no BPF program still sees the
 * slot's old map): 7-26 ms each on the 2-CPU VM, so one write a file held a command with 138
 * libraries 1.3 s at its start. A batch write waits once for all of its tables.
 */
#define CL_PUB_BATCH 256

static void publish_tables(struct cfi_loader *cl, struct cl_pub **v, uint32_t n)
{
	uint32_t keys[CL_PUB_BATCH], fds[CL_PUB_BATCH], i, done = n;
	LIBBPF_OPTS(bpf_map_batch_opts, o);

	for (i = 0; i < n; i++) {
		keys[i] = v[i]->table;
		fds[i] = (uint32_t)v[i]->fd;
	}
	/* done: how many the batch wrote, in order; the rest (an older kernel: none) one by one */
	if (cl->pub_one_by_one)
		done = 0;
	else if (bpf_map_update_batch(cl->tables_fd, keys, fds, &done, &o) && done > n)
		done = 0;
	for (i = done; i < n; i++)
		v[i]->err = bpf_map_update_elem(cl->tables_fd, &keys[i], &fds[i], BPF_ANY) ? -errno : 0;
	for (i = 0; i < n; i++) {
		/* the same bytes, from the map: a table the BPF walk lacks is never shared */
		if (!v[i]->err && cl->ws)
			walk_share__table(cl->ws, v[i]->table, v[i]->mem, v[i]->slots);
		munmap(v[i]->mem, v[i]->mlen);
		close(v[i]->fd);
	}
}

static void *publisher(void *arg)
{
	struct cfi_loader *cl = arg;
	struct cl_pub *v[CL_PUB_BATCH];
	uint32_t n, i;

	pthread_mutex_lock(&cl->lock);
	for (;;) {
		while (!cl->pub_head && !cl->pub_stop)
			pthread_cond_wait(&cl->pub_cond, &cl->lock);
		if (!cl->pub_head)
			break;		/* stopping, nothing left */
		for (n = 0; n < CL_PUB_BATCH && cl->pub_head; n++) {
			v[n] = cl->pub_head;
			cl->pub_head = v[n]->next;
		}
		if (!cl->pub_head)
			cl->pub_tail = &cl->pub_head;
		pthread_mutex_unlock(&cl->lock);
		publish_tables(cl, v, n);
		pthread_mutex_lock(&cl->lock);
		for (i = 0; i < n; i++) {
			struct cl_file *f = v[i]->f;

			if (v[i]->err) {
				cl->st.table_bytes -= v[i]->bytes;
				cl->st.files_failed++;
				f->state = CL_FAILED;
				log_info("cfi: no table for inode %lu: %s", (unsigned long)f->ino,
					 strerror(-v[i]->err));
			} else {
				f->state = CL_READY;
				cl->st.files++;
				cl->st.rows += v[i]->rows;
				cl->st.unsupported_rows += v[i]->unsupported_rows;
			}
			file_done(cl, f);
			free(v[i]);
		}
		cl->publishing -= n;
		pthread_cond_broadcast(&cl->idle);
	}
	pthread_mutex_unlock(&cl->lock);
	return NULL;
}

/* The loader's file of a mapping, queued again if it was left unopened; lock held. */
static struct cl_file *map_file(struct cfi_loader *cl, pid_t pid, const struct proc_map *pm)
{
	struct cl_file *f = pm->vdso ? cl->vdso : pm->ino ? file_find(cl, pm->dev, pm->ino) : NULL;

	if (f && f->state == CL_UNOPENED)
		requeue(cl, f, pid, pm);
	return f;
}

/* proc's slot, made if need be; lock held. */
static struct cl_proc *proc_slot(struct cfi_loader *cl, struct proc *proc)
{
	struct cl_proc **slot = (struct cl_proc **)proc__slot(proc, &cl->h), *p = *slot;

	if (!p && (p = calloc(1, sizeof(*p)))) {
		p->pid = proc->pid;
		p->next = cl->procs;
		if (cl->procs)
			cl->procs->prev = p;
		cl->procs = p;
		*slot = p;
	}
	return p;
}

/* Every mapping of p's freed: its lists are empty, to be written so; lock held. */
static void proc_clear(struct cfi_loader *cl, struct cl_proc *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		map_drop(cl, p->maps[i]);
	p->nr = p->npub = 0;
	mark_dirty(cl, p);
}

/*
 * A new mapping of proc's: what it covers goes (unmapped or replaced since), and it comes in
 * if its file is known. Published with the read's on_maps call: a scan's new mappings at once.
 */
static void cfi_on_mapping(struct map_handler *h, struct proc *proc, const struct proc_map *pm,
			   uint64_t ts_ns)
{
	struct cfi_loader *cl = of(h);
	struct cl_proc *p;
	struct cl_file *f;
	size_t i, j;

	(void)ts_ns;
	pthread_mutex_lock(&cl->lock);
	p = proc_slot(cl, proc);
	if (p) {
		i = map_bound(cl, p->maps, p->nr, pm->start);
		for (j = i; j < p->nr && p->maps[j]->start < pm->end; j++)
			map_free(cl, p->maps[j]);
		map_cut(p->maps, &p->nr, i, j);
		f = map_file(cl, proc->pid, pm);
		if (f)
			map_add(cl, p, i, pm, f);
	}
	pthread_mutex_unlock(&cl->lock);
}

/*
 * A process's executable mappings after a read: after a whole read (a scan, a fork's copy)
 * its list is made again from them, else on_mapping kept it in step; then published.
 */
static void cfi_on_maps(struct map_handler *h, struct proc *proc, bool changed)
{
	struct cfi_loader *cl = of(h);
	struct cl_proc *p;
	struct cl_file *f;
	size_t i;

	pthread_mutex_lock(&cl->lock);
	p = changed ? proc_slot(cl, proc) : NULL;
	if (p && p->whole_reads != proc->whole_reads) {
		proc_clear(cl, p);
		for (i = 0; i < proc->nr; i++) {
			cl->st.map_entries++;
			f = map_file(cl, proc->pid, &proc->maps[i]);
			if (f)
				map_add(cl, p, p->nr, &proc->maps[i], f);
		}
		p->whole_reads = proc->whole_reads;
	}
	publish_dirty(cl);
	pthread_mutex_unlock(&cl->lock);
}

static void proc_free(struct cl_proc *p)
{
	free(p->maps);
	free(p->pub);
	free(p);
}

/* The process exited: its entry goes (an exec's new image is published by the next read). */
static void cfi_on_end(struct map_handler *h, struct proc *proc, bool exec)
{
	struct cfi_loader *cl = of(h);
	struct cl_proc **slot = (struct cl_proc **)proc__slot(proc, h), *p = *slot;
	uint32_t key = (uint32_t)proc->pid;
	size_t i;

	/*
	 * The share drops the old image's values as the BPF maps do theirs: an exec's new
	 * mappings replace them at the next read (until then a worker may republish the old).
	 */
	pthread_mutex_lock(&cl->lock);
	if (cl->ws)
		walk_share__forget(cl->ws, key, exec);
	if (exec) {
		pthread_mutex_unlock(&cl->lock);
		return;
	}
	/* p leaves the dirty list (written, then deleted below) */
	publish_dirty(cl);
	if (p) {
		if (p->prev)
			p->prev->next = p->next;
		else
			cl->procs = p->next;
		if (p->next)
			p->next->prev = p->prev;
		for (i = 0; i < p->nr; i++)
			map_drop(cl, p->maps[i]);
		proc_free(p);
		*slot = NULL;
	}
	bpf_map_delete_elem(cl->procs_fd, &key);
	pthread_mutex_unlock(&cl->lock);
}

static struct cl_file *file_new(struct cfi_loader *cl, uint32_t dev, uint64_t ino, int fd);
static struct cl_file *file_add(struct cfi_loader *cl, uint32_t dev, uint64_t ino, int fd);

/*
 * A file mapped for the first time: its table is queued, with a copy of the descriptor while
 * the queue holds fewer than its bound, else by its map_files name. One with the build-id of
 * a file built already takes its table now, with no worker woken (copies of a library).
 */
static void cfi_on_file(struct map_handler *h, struct proc_file *f, const struct proc_file_open *o)
{
	struct cfi_loader *cl = of(h);
	struct cl_file *qf, *twin;
	bool id_read = o->fd >= 0 && o->build_id && o->build_id_len >= 0 &&
		       o->build_id_len <= XPU_BUILD_ID_MAX;
	int fd = -1;

	if (!f->ino)
		return;
	pthread_mutex_lock(&cl->lock);
	if (file_find(cl, f->dev, f->ino)) {
		pthread_mutex_unlock(&cl->lock);
		return;
	}
	twin = id_read ? built_with_id(cl, o->build_id, o->build_id_len) : NULL;
	if (twin && (qf = file_new(cl, f->dev, f->ino, -1))) {
		memcpy(qf->build_id, o->build_id, (size_t)o->build_id_len);
		qf->build_id_len = o->build_id_len;
		share_table(cl, qf, twin);
		pthread_mutex_unlock(&cl->lock);
		return;
	}
	if (o->fd >= 0 && cl->queued_fds < cl->max_fds) {
		fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE))
			fd_limit__said(errno, "a file's unwind table");
	}
	qf = file_add(cl, f->dev, f->ino, fd);
	if (qf && id_read) {
		if (o->build_id_len)
			memcpy(qf->build_id, o->build_id, (size_t)o->build_id_len);
		qf->build_id_len = o->build_id_len;
		qf->build_id_read = true;
	}
	if (qf && fd < 0 && o->map_path)
		qf->reopen = strdup(o->map_path);
	pthread_mutex_unlock(&cl->lock);
}

struct map_handler *cfi_loader__handler(struct cfi_loader *cl)
{
	return &cl->h;
}

static void queue_vdso(struct cfi_loader *cl);

static void *worker(void *arg)
{
	struct cfi_loader *cl = arg;
	struct cl_file *f;

	pthread_mutex_lock(&cl->lock);
	for (;;) {
		while (!cl->qhead && !cl->stop)
			pthread_cond_wait(&cl->cond, &cl->lock);
		if (cl->stop)
			break;
		f = cl->qhead;
		cl->qhead = f->qnext;
		if (!cl->qhead)
			cl->qtail = &cl->qhead;
		cl->busy++;
		pthread_mutex_unlock(&cl->lock);
		build_file(cl, f);
		pthread_mutex_lock(&cl->lock);
		cl->busy--;
		pthread_cond_broadcast(&cl->idle);
	}
	pthread_mutex_unlock(&cl->lock);
	return NULL;
}

struct cfi_loader *cfi_loader__new(int tables_fd, int procs_fd, uint64_t mem_bytes,
				  struct walk_share *ws, struct cfi_cache *cache)
{
	struct cfi_loader *cl = calloc(1, sizeof(*cl));
	int want;

	if (!cl)
		return NULL;
	cl->buf = calloc(1, sizeof(*cl->buf));
	if (!cl->buf) {
		free(cl);
		return NULL;
	}
	cl->h = (struct map_handler){
		.name = "cfi",
		.on_file = cfi_on_file,
		.on_mapping = cfi_on_mapping,
		.on_maps = cfi_on_maps,
		.on_end = cfi_on_end,
	};
	cl->tables_fd = tables_fd;
	cl->procs_fd = procs_fd;
	cl->mem_bytes = mem_bytes;
	cl->ws = ws;
	cl->cache = cache;
	cl->qtail = &cl->qhead;
	cl->max_fds = fd_limit__share(8, CL_MAX_QUEUED_FDS);
	pthread_mutex_init(&cl->lock, NULL);
	pthread_cond_init(&cl->cond, NULL);
	pthread_cond_init(&cl->idle, NULL);
	pthread_cond_init(&cl->pub_cond, NULL);
	cl->pub_tail = &cl->pub_head;
	cl->pub_one_by_one = getenv("XPU_CFI_PUBLISH") && !strcmp(getenv("XPU_CFI_PUBLISH"), "single");
	cl->has_publisher = !pthread_create(&cl->publisher, NULL, publisher, cl);
	want = (int)(sysconf(_SC_NPROCESSORS_ONLN) / 4);
	want = want < 1 ? 1 : want > CL_MAX_WORKERS ? CL_MAX_WORKERS : want;
	while (cl->nworkers < want && !pthread_create(&cl->workers[cl->nworkers], NULL, worker, cl))
		cl->nworkers++;
	if (!cl->nworkers || !cl->has_publisher) {
		cfi_loader__free(cl);
		return NULL;
	}
	queue_vdso(cl);
	return cl;
}

void cfi_loader__free(struct cfi_loader *cl)
{
	size_t i;

	if (!cl)
		return;
	if (cl->nworkers) {
		pthread_mutex_lock(&cl->lock);
		cl->stop = true;
		pthread_cond_broadcast(&cl->cond);
		pthread_mutex_unlock(&cl->lock);
		for (i = 0; i < (size_t)cl->nworkers; i++)
			pthread_join(cl->workers[i], NULL);
	}
	/* after the workers: it publishes what they left, then stops */
	if (cl->has_publisher) {
		pthread_mutex_lock(&cl->lock);
		cl->pub_stop = true;
		pthread_cond_broadcast(&cl->pub_cond);
		pthread_mutex_unlock(&cl->lock);
		pthread_join(cl->publisher, NULL);
	}
	for (i = 0; i < CL_BUCKETS; i++) {
		while (cl->files[i]) {
			struct cl_file *f = cl->files[i];

			cl->files[i] = f->next;
			if (f->fd >= 0)
				close(f->fd);
			free(f->reopen);
			free(f);
		}
	}
	while (cl->procs) {
		struct cl_proc *p = cl->procs;
		size_t k;

		cl->procs = p->next;
		for (k = 0; k < p->nr; k++)
			free(p->maps[k]);
		proc_free(p);
	}
	pthread_mutex_destroy(&cl->lock);
	pthread_cond_destroy(&cl->cond);
	pthread_cond_destroy(&cl->idle);
	pthread_cond_destroy(&cl->pub_cond);
	free(cl->buf);
	free(cl);
}

int cfi_loader__known(struct cfi_loader *cl, uint32_t dev, uint64_t ino)
{
	int known;

	pthread_mutex_lock(&cl->lock);
	known = file_find(cl, dev, ino) != NULL;
	pthread_mutex_unlock(&cl->lock);
	return known;
}

/* A new file dev/ino (pending, fd its descriptor or -1), not queued; NULL: ENOMEM; lock held. */
static struct cl_file *file_new(struct cfi_loader *cl, uint32_t dev, uint64_t ino, int fd)
{
	struct cl_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = ino;
	f->fd = fd;
	f->state = CL_PENDING;
	f->next = cl->files[file_hash(dev, ino)];
	cl->files[file_hash(dev, ino)] = f;
	return f;
}

/* Queues dev/ino for a build unless known (fd is taken over); lock held. */
static struct cl_file *file_add(struct cfi_loader *cl, uint32_t dev, uint64_t ino, int fd)
{
	struct cl_file *f = file_find(cl, dev, ino);

	if (f || !(f = file_new(cl, dev, ino, fd))) {
		if (fd >= 0)
			close(fd);
		return f;
	}
	if (fd >= 0 && ++cl->queued_fds > cl->st.fds_peak)
		cl->st.fds_peak = cl->queued_fds;
	*cl->qtail = f;
	cl->qtail = &f->qnext;
	pthread_cond_signal(&cl->cond);
	return f;
}

void cfi_loader__file(struct cfi_loader *cl, uint32_t dev, uint64_t ino, int fd)
{
	pthread_mutex_lock(&cl->lock);
	file_add(cl, dev, ino, fd);
	pthread_mutex_unlock(&cl->lock);
}

/*
 * Queues a file that is not mapped yet (prepare, vdso), keyed as /proc/PID/maps will show it;
 * lock held.
 */
static struct cl_file *queue_fd(struct cfi_loader *cl, int fd)
{
	struct stat st;

	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	return file_add(cl, (major(st.st_dev) << 20) | minor(st.st_dev), st.st_ino, fd);
}

/* An ELF image's size from its headers: the end of the section or program headers. */
static size_t image_size(const unsigned char *img)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	size_t sh = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	size_t ph = eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize;

	return sh > ph ? sh : ph;
}

/*
 * The vdso has no file: its table is built from xpu-record's own image, which is the one every
 * 64-bit process of this kernel maps, through a memfd (the builder reads descriptors).
 */
static void queue_vdso(struct cfi_loader *cl)
{
	const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	size_t size;
	int fd;

	if (!img || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64)
		return;
	size = image_size(img);
	if (size > (1u << 20))
		return;
	fd = memfd_create("xpu-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, img, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&cl->lock);
	cl->vdso = queue_fd(cl, fd);
	pthread_mutex_unlock(&cl->lock);
}

static void prepare_one(const char *path, int fd, void *arg)
{
	struct cfi_loader *cl = arg;

	(void)path;
	pthread_mutex_lock(&cl->lock);
	queue_fd(cl, fd);
	pthread_mutex_unlock(&cl->lock);
}

int cfi_loader__prepare(struct cfi_loader *cl, const char *cmd)
{
	return elf_deps__collect(cmd, prepare_one, cl);
}

uint64_t cfi_loader__wait(struct cfi_loader *cl, uint64_t timeout_ns)
{
	uint64_t t0 = now_ns(), dt;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(timeout_ns / 1000000000ull);
	until.tv_nsec += (long)(timeout_ns % 1000000000ull);
	if (until.tv_nsec >= 1000000000l) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000l;
	}
	pthread_mutex_lock(&cl->lock);
	while ((cl->qhead || cl->busy || cl->publishing) &&
	       pthread_cond_timedwait(&cl->idle, &cl->lock, &until) != ETIMEDOUT)
		;
	if (cl->qhead || cl->busy || cl->publishing)
		cl->st.start_wait_timeouts++;
	dt = now_ns() - t0;
	cl->st.start_wait_ns += dt;
	pthread_mutex_unlock(&cl->lock);
	return dt;
}

void cfi_loader__get_stats(struct cfi_loader *cl, struct cfi_loader_stats *st)
{
	struct cfi_cache_stats cs;

	pthread_mutex_lock(&cl->lock);
	*st = cl->st;
	pthread_mutex_unlock(&cl->lock);
	cfi_cache__get_stats(cl->cache, &cs);
	st->cache_hits = cs.hits;
	st->cache_misses = cs.misses;
	st->cache_rejected = cs.rejected;
	st->cache_writes = cs.writes;
	st->cache_write_errors = cs.write_errors;
	st->cache_evicted = cs.evicted;
}
