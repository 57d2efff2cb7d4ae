// SPDX-License-Identifier: MIT
/*
 * The kernel's mmap and exec records (see kernel_mmaps.h): one dummy software event a CPU,
 * its ring buffer read without wakeups, each record bounds-checked (the ring is the kernel's,
 * but a wrong size would walk us off the buffer), kept per process in a small hash table, and
 * the processes that keep mappings in a list by their last mapping, oldest first: at the bound
 * the oldest goes, unlinked from its bucket's short chain, and a burst of mappings past it
 * costs no scan of the table (which took 1 ms a mapping at the bound).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "kernel_mmaps.h"
#include "maps_file.h"
#include "mono_clock.h"
#include "proc_table.h"

/* 64 KiB a CPU: exec mmaps are rare (a few per library), and the drain reads every turn */
#define KM_RING_PAGES 16u
#define KM_BUCKETS 1024u
#define KM_PRUNE_NS (500ull * 1000000ull)
/* the longest record read: a header, the mmap2 fields and a path */
#define KM_MAX_RECORD 8192u

struct km_map {
	uint64_t start, end, pgoff, ino, ts_ns;
	uint32_t dev, prot;
	char *path;
};

struct km_proc {
	struct km_proc *next;
	/* in kernel_mmaps.lru while it keeps mappings (nr > 0), by its last one, oldest first */
	struct km_proc *lru_prev, *lru_next;
	pid_t pid;
	uint64_t exec_ns;		/* the image's exec; mappings stamped before it are the old one's */
	uint64_t last_ns;
	struct km_map *maps;
	size_t nr, cap;
};

struct km_ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;			/* of data, a power of two */
};

struct kernel_mmaps {
	const struct proc_table *pt;
	struct km_ring *rings;
	unsigned int nr_rings;
	size_t page;
	struct km_proc *buckets[KM_BUCKETS];
	/* the list's head: lru.lru_next the oldest, lru.lru_prev the newest */
	struct km_proc lru;
	size_t entries;
	uint64_t last_prune_ns;
	uint8_t rec[KM_MAX_RECORD];	/* a record that wraps the ring's end, made whole */
	struct kernel_mmaps_stats st;
};

/* ---- the per-process store ---------------------------------------------------------------- */

static struct km_proc **bucket_of(struct kernel_mmaps *km, pid_t pid)
{
	return &km->buckets[(uint32_t)pid % KM_BUCKETS];
}

static struct km_proc *find(struct kernel_mmaps *km, pid_t pid)
{
	struct km_proc *p;

	for (p = *bucket_of(km, pid); p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static void lru_unlink(struct km_proc *p)
{
	if (!p->lru_next)
		return;
	p->lru_prev->lru_next = p->lru_next;
	p->lru_next->lru_prev = p->lru_prev;
	p->lru_prev = p->lru_next = NULL;
}

/* p mapped last of all: the newest, last to go. */
static void lru_touch(struct kernel_mmaps *km, struct km_proc *p)
{
	lru_unlink(p);
	p->lru_prev = km->lru.lru_prev;
	p->lru_next = &km->lru;
	km->lru.lru_prev->lru_next = p;
	km->lru.lru_prev = p;
}

static void clear_maps(struct kernel_mmaps *km, struct km_proc *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free(p->maps[i].path);
	km->entries -= p->nr;
	p->nr = 0;
	lru_unlink(p);
}

static void drop(struct kernel_mmaps *km, struct km_proc **link)
{
	struct km_proc *p = *link;

	clear_maps(km, p);
	*link = p->next;
	free(p->maps);
	free(p);
}

static struct km_proc *get(struct kernel_mmaps *km, pid_t pid)
{
	struct km_proc **b = bucket_of(km, pid), *p = find(km, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = *b;
	*b = p;
	return p;
}

/*
 * Past the bound: the process mapped least recently goes (counted), the head of the list.
 * "Least recently" in the order the records were read: the rings are read a CPU at a time, so
 * two processes that mapped within one turn of the drain may go in either order.
 */
static void make_room(struct kernel_mmaps *km)
{
	while (km->entries >= KERNEL_MMAPS_MAX_ENTRIES && km->lru.lru_next != &km->lru) {
		struct km_proc *oldest = km->lru.lru_next, **link = bucket_of(km, oldest->pid);

		while (*link != oldest)
			link = &(*link)->next;
		km->st.dropped += oldest->nr;
		drop(km, link);
	}
}

static void add_map(struct kernel_mmaps *km, pid_t pid, const struct km_map *m, const char *path)
{
	struct km_proc *p;
	struct km_map *tmp;

	make_room(km);
	p = get(km, pid);
	if (!p || m->ts_ns < p->exec_ns)
		return;
	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;

		tmp = realloc(p->maps, cap * sizeof(*tmp));
		if (!tmp)
			return;
		p->maps = tmp;
		p->cap = cap;
	}
	p->maps[p->nr] = *m;
	p->maps[p->nr].path = strdup(path);
	if (!p->maps[p->nr].path)
		return;
	p->nr++;
	km->entries++;
	p->last_ns = m->ts_ns;
	lru_touch(km, p);
}

/* An exec: what pid mapped before belongs to the image it left. */
static void new_image(struct kernel_mmaps *km, pid_t pid, uint64_t ts_ns)
{
	struct km_proc *p = get(km, pid);

	if (!p)
		return;
	clear_maps(km, p);
	p->exec_ns = ts_ns;
	p->last_ns = ts_ns;
}

/*
 * Processes that are not ours (the table never heard of them, a grace after their last
 * mapping) or whose exit the table has seen: dropped, so the store holds the traced tree.
 */
static void prune(struct kernel_mmaps *km, uint64_t now_ns)
{
	unsigned int b;

	if (now_ns - km->last_prune_ns < KM_PRUNE_NS)
		return;
	km->last_prune_ns = now_ns;
	for (b = 0; b < KM_BUCKETS; b++) {
		struct km_proc **link = &km->buckets[b];

		while (*link) {
			const struct proc *tp = proc_table__find(km->pt, (*link)->pid);
			bool old = now_ns > (*link)->last_ns + KERNEL_MMAPS_GRACE_NS;

			if (old && (!tp || tp->state == PROC_EXITED))
				drop(km, link);
			else
				link = &(*link)->next;
		}
	}
}

/* ---- the rings ------------------------------------------------------------------------------ */

/* The sample_id every record ends with (sample_id_all, TID | TIME): its time. */
static uint64_t record_time(const uint8_t *rec, size_t size)
{
	uint64_t t;

	memcpy(&t, rec + size - sizeof(t), sizeof(t));
	return t;
}

static void take_mmap2(struct kernel_mmaps *km, const uint8_t *rec, size_t size)
{
	const size_t head = sizeof(struct perf_event_header), tail = 16;
	struct kernel_mmap2_body b;
	struct km_map m;
	const char *path;
	size_t room;

	if (size < head + sizeof(b) + tail)
		return;
	memcpy(&b, rec + head, sizeof(b));
	if (!(b.prot & PROT_EXEC) || b.len == 0 || b.addr + b.len < b.addr)
		return;
	/* the path: NUL-terminated within the record, before the sample_id */
	path = (const char *)rec + head + sizeof(b);
	room = size - head - sizeof(b) - tail;
	if (!memchr(path, '\0', room))
		return;
	km->st.events++;
	m = (struct km_map){
		.start = b.addr, .end = b.addr + b.len, .pgoff = b.pgoff, .ino = b.ino,
		.dev = (b.maj << 20) | (b.min & 0xfffff), .prot = b.prot,
		.ts_ns = record_time(rec, size),
	};
	add_map(km, (pid_t)b.pid, &m, path);
}

static void take_record(struct kernel_mmaps *km, const uint8_t *rec, size_t size, uint16_t type,
			uint16_t misc)
{
	uint64_t lost;
	uint32_t pid;

	switch (type) {
	case PERF_RECORD_MMAP2:
		take_mmap2(km, rec, size);
		break;
	case PERF_RECORD_COMM:
		if ((misc & PERF_RECORD_MISC_COMM_EXEC) &&
		    size >= sizeof(struct perf_event_header) + 8 + 16) {
			memcpy(&pid, rec + sizeof(struct perf_event_header), sizeof(pid));
			new_image(km, (pid_t)pid, record_time(rec, size));
		}
		break;
	case PERF_RECORD_LOST:
		if (size >= sizeof(struct perf_event_header) + 16) {
			memcpy(&lost, rec + sizeof(struct perf_event_header) + 8, sizeof(lost));
			km->st.lost += lost;
		}
		break;
	default:
		break;
	}
}

static void poll_ring(struct kernel_mmaps *km, struct km_ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;

	/* a head behind the tail or more than a ring ahead is not a ring we can read: skip it */
	if (head - tail > r->size)
		tail = head;
	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint64_t off = tail & (r->size - 1);
		const uint8_t *rec;

		if (off + sizeof(h) <= r->size) {
			memcpy(&h, r->data + off, sizeof(h));
		} else {
			size_t first = (size_t)(r->size - off);

			memcpy(&h, r->data + off, first);
			memcpy((uint8_t *)&h + first, r->data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail) {
			tail = head;
			break;
		}
		if (h.size <= KM_MAX_RECORD) {
			if (off + h.size <= r->size) {
				rec = r->data + off;
			} else {
				size_t first = (size_t)(r->size - off);

				memcpy(km->rec, r->data + off, first);
				memcpy(km->rec + first, r->data, h.size - first);
				rec = km->rec;
			}
			take_record(km, rec, h.size, (uint16_t)h.type, h.misc);
		}
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

void kernel_mmaps__take(struct kernel_mmaps *km, const void *rec, size_t size)
{
	struct perf_event_header h;

	if (size < sizeof(h) || size > KM_MAX_RECORD)
		return;
	memcpy(&h, rec, sizeof(h));
	if (h.size != size)
		return;
	take_record(km, rec, size, (uint16_t)h.type, h.misc);
}

void kernel_mmaps__poll(struct kernel_mmaps *km)
{
	unsigned int i;

	if (!km)
		return;
	for (i = 0; i < km->nr_rings; i++)
		poll_ring(km, &km->rings[i]);
	prune(km, clock_mono_ns());
}

static int open_ring(struct kernel_mmaps *km, struct km_ring *r, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		/* mmap too: the kernel counts mmap listeners by it alone (mmap2 picks the format) */
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.sample_id_all = 1,
		/* the clock of the BPF events and the trace */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	void *base;

	r->fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->size = (uint64_t)KM_RING_PAGES * km->page;
	base = mmap(NULL, km->page + r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (base == MAP_FAILED) {
		int e = errno;

		close(r->fd);
		r->fd = -1;
		return -e;
	}
	r->meta = base;
	r->data = (uint8_t *)base + km->page;
	return 0;
}

struct kernel_mmaps *kernel_mmaps__new(const struct proc_table *pt)
{
	struct kernel_mmaps *km = calloc(1, sizeof(*km));

	if (!km)
		return NULL;
	km->pt = pt;
	km->page = (size_t)sysconf(_SC_PAGESIZE);
	km->lru.lru_next = km->lru.lru_prev = &km->lru;
	return km;
}

struct kernel_mmaps *kernel_mmaps__open(const struct proc_table *pt)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct kernel_mmaps *km;
	int cpu, err = 0, e;

	if (ncpu < 1)
		return NULL;
	km = kernel_mmaps__new(pt);
	if (!km)
		return NULL;
	km->rings = calloc((size_t)ncpu, sizeof(*km->rings));
	if (!km->rings) {
		free(km);
		return NULL;
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		e = open_ring(km, &km->rings[km->nr_rings], cpu);
		if (!e)
			km->nr_rings++;
		else if (e != -ENODEV && !err)	/* an offline CPU has no event */
			err = e;
	}
	if (!km->nr_rings) {
		log_info("the kernel's mmap events: %s (mappings are read from /proc only)",
			 strerror(err ? -err : ENODEV));
		kernel_mmaps__free(km);
		return NULL;
	}
	return km;
}

void kernel_mmaps__free(struct kernel_mmaps *km)
{
	unsigned int i, b;

	if (!km)
		return;
	for (i = 0; i < km->nr_rings; i++) {
		munmap(km->rings[i].meta, km->page + km->rings[i].size);
		close(km->rings[i].fd);
	}
	for (b = 0; b < KM_BUCKETS; b++)
		while (km->buckets[b])
			drop(km, &km->buckets[b]);
	free(km->rings);
	free(km);
}

/* ---- one process's image ---------------------------------------------------------------- */

static int by_start(const void *a, const void *b)
{
	const struct km_map *x = *(const struct km_map *const *)a;
	const struct km_map *y = *(const struct km_map *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

int kernel_mmaps__each(struct kernel_mmaps *km, pid_t pid,
		       int (*fn)(void *ctx, const struct maps_entry *e), void *ctx)
{
	struct km_proc *p = km ? find(km, pid) : NULL;
	const struct km_map **v, *keep;
	char range[48];
	size_t i, n = 0;
	int given = 0;

	if (!p || !p->nr)
		return 0;
	v = malloc(p->nr * sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < p->nr; i++)
		v[i] = &p->maps[i];
	qsort(v, p->nr, sizeof(*v), by_start);
	/* of mappings that overlap (MAP_FIXED over an earlier one), the later one stands */
	for (i = 0; i < p->nr; i++) {
		if (n && v[i]->start < v[n - 1]->end) {
			if (v[i]->ts_ns >= v[n - 1]->ts_ns)
				v[n - 1] = v[i];
			continue;
		}
		v[n++] = v[i];
	}
	for (i = 0; i < n; i++) {
		struct maps_entry e;

		keep = v[i];
		snprintf(range, sizeof(range), "%" PRIx64 "-%" PRIx64, keep->start, keep->end);
		e = (struct maps_entry){
			.start = keep->start, .end = keep->end, .pgoff = keep->pgoff,
			.ino = keep->ino, .dev = keep->dev,
			.read = keep->prot & PROT_READ, .write = keep->prot & PROT_WRITE,
			.exec = true, .path = keep->path, .range = range,
		};
		given++;
		if (fn(ctx, &e))
			break;
	}
	free(v);
	return given;
}

void kernel_mmaps__get_stats(const struct kernel_mmaps *km, struct kernel_mmaps_stats *st)
{
	*st = km ? km->st : (struct kernel_mmaps_stats){ 0 };
}
