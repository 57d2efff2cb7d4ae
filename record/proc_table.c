// SPDX-License-Identifier: MIT
/*
 * The process table (see proc_table.h). Entries stay after their process exits, for its exit
 * status and for handlers that read a process's files at the end (JIT symbols); what a
 * process mapped goes at its exit. The lock guards what the main thread reads (the chains it
 * walks, states and statuses); the live count is atomic so that the main loop's frequent
 * "anything left?" costs no lock.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_table.h"

#define PT_BUCKETS 1024
/* An IP outside every known mapping has a process's mappings read again at most this often. */
#define PT_REREAD_NS (200ull * 1000 * 1000)

struct proc_table {
	pthread_mutex_t lock;
	struct proc *procs[PT_BUCKETS];
	struct proc_file *files[PT_BUCKETS];
	struct map_handler *handlers[PROC_MAX_HANDLERS];
	unsigned int nhandlers;
	uint32_t next_image;
	_Atomic unsigned int live;
	proc_table_reader_fn read;
	void *read_ctx;
};

struct proc_table *proc_table__new(void)
{
	struct proc_table *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pthread_mutex_init(&pt->lock, NULL);
	pt->next_image = 1;
	return pt;
}

void proc_table__free(struct proc_table *pt)
{
	unsigned int i, k;

	if (!pt)
		return;
	for (i = 0; i < PT_BUCKETS; i++) {
		while (pt->procs[i]) {
			struct proc *p = pt->procs[i];

			pt->procs[i] = p->next;
			for (k = 0; k < pt->nhandlers; k++)
				if (p->slot[k] && pt->handlers[k]->free_proc)
					pt->handlers[k]->free_proc(pt->handlers[k], p->slot[k]);
			free(p->maps);
			free(p);
		}
		while (pt->files[i]) {
			struct proc_file *f = pt->files[i];

			pt->files[i] = f->next;
			for (k = 0; k < pt->nhandlers; k++)
				if (f->slot[k] && pt->handlers[k]->free_file)
					pt->handlers[k]->free_file(pt->handlers[k], f->slot[k]);
			free(f->name);
			free(f);
		}
	}
	pthread_mutex_destroy(&pt->lock);
	free(pt);
}

void proc_table__set_reader(struct proc_table *pt, proc_table_reader_fn fn, void *ctx)
{
	pt->read = fn;
	pt->read_ctx = ctx;
}

int proc_table__add_handler(struct proc_table *pt, struct map_handler *h)
{
	if (pt->nhandlers == PROC_MAX_HANDLERS)
		return -ENOSPC;
	h->pt = pt;
	h->slot = pt->nhandlers;
	pt->handlers[pt->nhandlers++] = h;
	return 0;
}

struct map_handler *proc_table__handler(const struct proc_table *pt, unsigned int i)
{
	return i < pt->nhandlers ? pt->handlers[i] : NULL;
}

/* ---- processes ------------------------------------------------------------------------------ */

static unsigned int pid_bucket(pid_t pid)
{
	return (uint32_t)pid % PT_BUCKETS;
}

struct proc *proc_table__find(const struct proc_table *pt, pid_t pid)
{
	struct proc *p;

	for (p = pt->procs[pid_bucket(pid)]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct proc *proc_table__get(struct proc_table *pt, pid_t pid)
{
	struct proc *p = proc_table__find(pt, pid);

	if (p || !(p = calloc(1, sizeof(*p))))
		return p;
	p->pid = pid;
	p->image = pt->next_image++;
	p->state = PROC_SEEN;
	p->status = -1;
	pthread_mutex_lock(&pt->lock);
	p->next = pt->procs[pid_bucket(pid)];
	pt->procs[pid_bucket(pid)] = p;
	pthread_mutex_unlock(&pt->lock);
	return p;
}

int proc_table__add_live(struct proc_table *pt, pid_t pid)
{
	struct proc *p = proc_table__get(pt, pid);

	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&pt->lock);
	if (p->state != PROC_LIVE) {
		if (p->state == PROC_EXITED)
			p->maps_lost = false;
		p->state = PROC_LIVE;
		p->status = -1;
		atomic_fetch_add(&pt->live, 1);
	}
	pthread_mutex_unlock(&pt->lock);
	return 0;
}

/* p's image ended: the handlers let go of it, its mappings go, the next image is another. */
static void end_image(struct proc_table *pt, struct proc *p, bool exec)
{
	unsigned int k;

	for (k = 0; k < pt->nhandlers; k++)
		if (pt->handlers[k]->on_end)
			pt->handlers[k]->on_end(pt->handlers[k], p, exec);
	free(p->maps);
	p->maps = NULL;
	p->nr = p->cap = 0;
	p->reread_ns = 0;
	p->image = pt->next_image++;
}

void proc_table__exec(struct proc_table *pt, pid_t pid)
{
	struct proc *p = proc_table__get(pt, pid);

	if (p)
		end_image(pt, p, true);
}

void proc_table__exited(struct proc_table *pt, pid_t pid, int status)
{
	struct proc *p = proc_table__find(pt, pid);

	if (!p)
		return;
	end_image(pt, p, false);
	pthread_mutex_lock(&pt->lock);
	if (p->state == PROC_LIVE)
		atomic_fetch_sub(&pt->live, 1);
	if (p->state != PROC_EXITED) {
		p->state = PROC_EXITED;
		p->status = status;
	}
	pthread_mutex_unlock(&pt->lock);
}

void proc_table__thread_exited(struct proc_table *pt, uint32_t tid)
{
	unsigned int k;

	for (k = 0; k < pt->nhandlers; k++)
		if (pt->handlers[k]->on_thread_end)
			pt->handlers[k]->on_thread_end(pt->handlers[k], tid);
}

/* Whether pid still runs: in /proc, and not a zombie (which has run its exit already). */
static bool proc_alive(pid_t pid)
{
	char path[64], buf[512], *s;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	s = strrchr(buf, ')');
	return !(s && s[1] == ' ' && (s[2] == 'Z' || s[2] == 'X'));
}

size_t proc_table__reap_gone(struct proc_table *pt, pid_t *gone, size_t max)
{
	size_t i, n = 0;
	struct proc *p;

	/* only the drain thread changes the chains: no lock needed to walk them here */
	for (i = 0; i < PT_BUCKETS && n < max; i++)
		for (p = pt->procs[i]; p && n < max; p = p->next)
			if (p->state == PROC_LIVE && !proc_alive(p->pid))
				gone[n++] = p->pid;
	for (i = 0; i < n; i++)
		proc_table__exited(pt, gone[i], -1);
	return n;
}

void proc_table__each(struct proc_table *pt, void (*fn)(void *ctx, struct proc *p), void *ctx)
{
	struct proc *p;
	size_t i;

	for (i = 0; i < PT_BUCKETS; i++)
		for (p = pt->procs[i]; p; p = p->next)
			fn(ctx, p);
}

/* ---- mappings ------------------------------------------------------------------------------- */

const struct proc_map *proc_table__mapping_of(const struct proc_table *pt, pid_t pid,
					      uint64_t ip)
{
	const struct proc *p = proc_table__find(pt, pid);
	size_t lo = 0, hi = p ? p->nr : 0;

	/* in address order, none overlapping: the first that ends above ip holds it, or none */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return p && lo < p->nr && ip >= p->maps[lo].start ? &p->maps[lo] : NULL;
}

void proc_table__check_ip(struct proc_table *pt, pid_t pid, uint64_t ip, uint64_t ts_ns)
{
	struct proc *p;

	if (proc_table__mapping_of(pt, pid, ip))
		return;
	p = proc_table__get(pt, pid);
	if (!p || !pt->read || ts_ns - p->reread_ns < PT_REREAD_NS)
		return;
	p->reread_ns = ts_ns;
	pt->read(pt->read_ctx, pid, ts_ns);
}

static uint32_t file_bucket(uint32_t dev, uint64_t ino, const char *name)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ull ^ dev;

	if (!ino && name)
		while (*name)
			h = h * 31 + (unsigned char)*name++;
	return (uint32_t)(h ^ (h >> 32)) % PT_BUCKETS;
}

struct proc_file *proc_table__file(struct proc_table *pt, uint32_t dev, uint64_t ino,
				   const char *name, bool *created)
{
	uint32_t b = file_bucket(dev, ino, name);
	struct proc_file *f;

	*created = false;
	for (f = pt->files[b]; f; f = f->next)
		if (ino ? (f->dev == dev && f->ino == ino) :
			  (!f->ino && f->name && name && !strcmp(f->name, name)))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = ino;
	if (!ino && name && !(f->name = strdup(name))) {
		free(f);
		return NULL;
	}
	f->next = pt->files[b];
	pt->files[b] = f;
	*created = true;
	return f;
}

void proc_table__file_opened(struct proc_table *pt, struct proc_file *f,
			     const struct proc_file_open *o)
{
	unsigned int k;

	for (k = 0; k < pt->nhandlers; k++)
		if (pt->handlers[k]->on_file)
			pt->handlers[k]->on_file(pt->handlers[k], f, o);
}

void proc_table__mapped(struct proc_table *pt, struct proc *p, const struct proc_map *m,
			uint64_t ts_ns)
{
	unsigned int k;

	for (k = 0; k < pt->nhandlers; k++)
		if (pt->handlers[k]->on_mapping)
			pt->handlers[k]->on_mapping(pt->handlers[k], p, m, ts_ns);
}

void proc_table__maps_read(struct proc_table *pt, struct proc *p, bool changed)
{
	unsigned int k;

	for (k = 0; k < pt->nhandlers; k++)
		if (pt->handlers[k]->on_maps)
			pt->handlers[k]->on_maps(pt->handlers[k], p, changed);
}

void proc_table__join(struct proc_table *pt, const struct xpu_ev_hdr *ev, struct wt_rec *r)
{
	unsigned int k;

	for (k = 0; k < pt->nhandlers; k++)
		if (pt->handlers[k]->on_record)
			pt->handlers[k]->on_record(pt->handlers[k], ev, r);
}

/* ---- the live tree -------------------------------------------------------------------------- */

unsigned int proc_table__live(struct proc_table *pt)
{
	return atomic_load(&pt->live);
}

void proc_table__signal(struct proc_table *pt, int sig)
{
	struct proc *p;
	size_t i;

	pthread_mutex_lock(&pt->lock);
	for (i = 0; i < PT_BUCKETS; i++)
		for (p = pt->procs[i]; p; p = p->next)
			if (p->state == PROC_LIVE)
				kill(p->pid, sig);
	pthread_mutex_unlock(&pt->lock);
}

int proc_table__exit_status(struct proc_table *pt, pid_t pid, int *status)
{
	struct proc *p;
	int ret = -ENOENT;

	pthread_mutex_lock(&pt->lock);
	p = proc_table__find(pt, pid);
	if (p && p->state == PROC_EXITED && p->status >= 0) {
		*status = p->status;
		ret = 0;
	}
	pthread_mutex_unlock(&pt->lock);
	return ret;
}
