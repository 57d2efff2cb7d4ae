// SPDX-License-Identifier: MIT
/*
 * Tables for the in-BPF unwinder. Files are keyed by device and inode (the very file mapped,
 * shared by every process that maps it) and built once by one worker thread. One mutex
 * guards the file and process lists; the worker holds it only to publish.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cfi_build.h"
#include "cfi_loader.h"
#include "config.h"

#define CL_BUCKETS 1024

enum cl_state { CL_PENDING, CL_READY, CL_FAILED };

struct cl_file {
	struct cl_file *next;		/* hash chain */
	struct cl_file *qnext;		/* build queue */
	uint32_t dev;
	uint64_t ino;
	int fd;
	enum cl_state state;
	uint32_t table, nrows;
	struct cfi_table t;		/* loads only: rows live in the BPF map */
};

struct cl_map {
	uint64_t start, end, pgoff;
	struct cl_file *f;
};

struct cl_proc {
	struct cl_proc *next;
	pid_t pid;
	struct cl_map *maps;
	size_t nr;
};

struct cfi_loader {
	int tables_fd, procs_fd;
	uint64_t mem_bytes;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t worker;
	bool stop, started;
	struct cl_file *files[CL_BUCKETS];
	struct cl_proc *procs[CL_BUCKETS];
	struct cl_file *qhead, **qtail;
	uint32_t next_table;
	struct xpu_cfi_proc *buf;	/* one cfi_procs value being assembled */
	struct cfi_loader_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

static int cmp_map(const void *a, const void *b)
{
	const struct xpu_cfi_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Writes p's mappings whose files have tables; lock held. */
static void publish(struct cfi_loader *cl, const struct cl_proc *p)
{
	struct xpu_cfi_proc *v = cl->buf;
	uint32_t key = (uint32_t)p->pid;
	size_t i;

	v->nr = 0;
	for (i = 0; i < p->nr; i++) {
		const struct cl_map *m = &p->maps[i];
		struct xpu_cfi_map *o;
		uint64_t bias;

		if (m->f->state != CL_READY || cfi_table__bias(&m->f->t, m->start, m->pgoff, &bias))
			continue;
		if (v->nr == XPU_CFI_MAX_MAPS) {
			cl->st.maps_dropped++;
			continue;
		}
		o = &v->maps[v->nr++];
		*o = (struct xpu_cfi_map){ .start = m->start, .end = m->end, .bias = bias,
					   .table = m->f->table, .nrows = m->f->nrows };
	}
	if (!v->nr) {
		bpf_map_delete_elem(cl->procs_fd, &key);
		return;
	}
	qsort(v->maps, v->nr, sizeof(v->maps[0]), cmp_map);
	cl->st.proc_updates++;
	if (bpf_map_update_elem(cl->procs_fd, &key, v, BPF_ANY))
		cl->st.update_errors++;
}

/* Copies t's rows into a new inner map at index table; 0 or negative errno. */
static int load_rows(struct cfi_loader *cl, const struct cfi_table *t, uint32_t table)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	size_t bytes = t->nr * sizeof(*t->rows), mlen = (bytes + 4095) & ~4095ul;
	void *mem;
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_rows", sizeof(uint32_t),
			    sizeof(struct xpu_cfi_row), (uint32_t)t->nr, &o);
	if (fd < 0)
		return -errno;
	mem = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	memcpy(mem, t->rows, bytes);
	munmap(mem, mlen);
	if (bpf_map_update_elem(cl->tables_fd, &table, &fd, BPF_ANY))
		err = -errno;
cleanup:
	close(fd);
	return err;
}

/* Builds and loads one file; the lock is not held. */
static void build_file(struct cfi_loader *cl, struct cl_file *f)
{
	uint64_t t0 = now_ns(), dt;
	struct cfi_table t;
	bool over;
	int err;

	err = f->fd >= 0 ? cfi_table__build(f->fd, &t) : -EBADF;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	pthread_mutex_lock(&cl->lock);
	over = !err && (cl->st.table_bytes + t.nr * sizeof(*t.rows) > cl->mem_bytes ||
			cl->next_table >= XPU_CFI_MAX_TABLES || t.nr > XPU_CFI_MAX_ROWS || !t.nr);
	pthread_mutex_unlock(&cl->lock);
	if (!err && !over)
		err = load_rows(cl, &t, cl->next_table);
	dt = now_ns() - t0;
	pthread_mutex_lock(&cl->lock);
	cl->st.build_ns += dt;
	if (dt > cl->st.build_max_ns)
		cl->st.build_max_ns = dt;
	if (err || over) {
		f->state = CL_FAILED;
		if (over)
			cl->st.files_over_budget++;
		else
			cl->st.files_failed++;
		log_info("cfi: no table for inode %lu: %s", (unsigned long)f->ino,
			 over ? "over the memory bound" : strerror(-err));
	} else {
		size_t i;

		f->table = cl->next_table++;
		f->nrows = (uint32_t)t.nr;
		memcpy(f->t.loads, t.loads, sizeof(t.loads));
		f->t.nloads = t.nloads;
		f->state = CL_READY;
		cl->st.files++;
		cl->st.rows += t.nr;
		cl->st.table_bytes += t.nr * sizeof(*t.rows);
		cl->st.unsupported_rows += t.st.unsupported_rows;
		for (i = 0; i < CL_BUCKETS; i++) {
			struct cl_proc *p;

			for (p = cl->procs[i]; p; p = p->next) {
				size_t k;

				for (k = 0; k < p->nr && p->maps[k].f != f; k++)
					;
				if (k < p->nr)
					publish(cl, p);
			}
		}
	}
	pthread_mutex_unlock(&cl->lock);
	if (!err)
		cfi_table__free(&t);
}

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
		pthread_mutex_unlock(&cl->lock);
		build_file(cl, f);
		pthread_mutex_lock(&cl->lock);
	}
	pthread_mutex_unlock(&cl->lock);
	return NULL;
}

struct cfi_loader *cfi_loader__new(int tables_fd, int procs_fd, uint64_t mem_bytes)
{
	struct cfi_loader *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->buf = calloc(1, sizeof(*cl->buf));
	if (!cl->buf) {
		free(cl);
		return NULL;
	}
	cl->tables_fd = tables_fd;
	cl->procs_fd = procs_fd;
	cl->mem_bytes = mem_bytes;
	cl->qtail = &cl->qhead;
	pthread_mutex_init(&cl->lock, NULL);
	pthread_cond_init(&cl->cond, NULL);
	if (pthread_create(&cl->worker, NULL, worker, cl)) {
		cfi_loader__free(cl);
		return NULL;
	}
	cl->started = true;
	return cl;
}

void cfi_loader__free(struct cfi_loader *cl)
{
	size_t i;

	if (!cl)
		return;
	if (cl->started) {
		pthread_mutex_lock(&cl->lock);
		cl->stop = true;
		pthread_cond_signal(&cl->cond);
		pthread_mutex_unlock(&cl->lock);
		pthread_join(cl->worker, NULL);
	}
	for (i = 0; i < CL_BUCKETS; i++) {
		while (cl->files[i]) {
			struct cl_file *f = cl->files[i];

			cl->files[i] = f->next;
			if (f->fd >= 0)
				close(f->fd);
			free(f);
		}
		while (cl->procs[i]) {
			struct cl_proc *p = cl->procs[i];

			cl->procs[i] = p->next;
			free(p->maps);
			free(p);
		}
	}
	pthread_mutex_destroy(&cl->lock);
	pthread_cond_destroy(&cl->cond);
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

void cfi_loader__file(struct cfi_loader *cl, uint32_t dev, uint64_t ino, int fd)
{
	struct cl_file *f;

	pthread_mutex_lock(&cl->lock);
	if (file_find(cl, dev, ino) || !(f = calloc(1, sizeof(*f)))) {
		pthread_mutex_unlock(&cl->lock);
		if (fd >= 0)
			close(fd);
		return;
	}
	f->dev = dev;
	f->ino = ino;
	f->fd = fd;
	f->state = CL_PENDING;
	f->next = cl->files[file_hash(dev, ino)];
	cl->files[file_hash(dev, ino)] = f;
	*cl->qtail = f;
	cl->qtail = &f->qnext;
	pthread_cond_signal(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
}

static struct cl_proc **proc_slot(struct cfi_loader *cl, pid_t pid)
{
	struct cl_proc **pp = &cl->procs[(uint32_t)pid % CL_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

void cfi_loader__set_proc(struct cfi_loader *cl, pid_t pid, const struct cfi_map_in *maps,
			  size_t nr)
{
	struct cl_map *nm = calloc(nr ? nr : 1, sizeof(*nm));
	struct cl_proc **pp, *p;
	size_t i, n = 0;

	if (!nm)
		return;
	pthread_mutex_lock(&cl->lock);
	for (i = 0; i < nr; i++) {
		struct cl_file *f = maps[i].ino ? file_find(cl, maps[i].dev, maps[i].ino) : NULL;

		if (f)
			nm[n++] = (struct cl_map){ maps[i].start, maps[i].end, maps[i].pgoff, f };
	}
	pp = proc_slot(cl, pid);
	p = *pp;
	if (!p && (p = calloc(1, sizeof(*p)))) {
		p->pid = pid;
		p->next = cl->procs[(uint32_t)pid % CL_BUCKETS];
		cl->procs[(uint32_t)pid % CL_BUCKETS] = p;
	}
	if (p) {
		free(p->maps);
		p->maps = nm;
		p->nr = n;
		publish(cl, p);
	} else {
		free(nm);
	}
	pthread_mutex_unlock(&cl->lock);
}

void cfi_loader__forget(struct cfi_loader *cl, pid_t pid)
{
	struct cl_proc **pp, *p;
	uint32_t key = (uint32_t)pid;

	pthread_mutex_lock(&cl->lock);
	pp = proc_slot(cl, pid);
	p = *pp;
	if (p) {
		*pp = p->next;
		free(p->maps);
		free(p);
	}
	bpf_map_delete_elem(cl->procs_fd, &key);
	pthread_mutex_unlock(&cl->lock);
}

void cfi_loader__get_stats(struct cfi_loader *cl, struct cfi_loader_stats *st)
{
	pthread_mutex_lock(&cl->lock);
	*st = cl->st;
	pthread_mutex_unlock(&cl->lock);
}
