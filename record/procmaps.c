// SPDX-License-Identifier: MIT
/*
 * Mapping tracking. The report symbolizes offline, so every executable mapping a sample may
 * fall into must be in the trace with the build-id of its file. Scans (all of a process's
 * mappings) happen at exec, on first sight of a pid and when a sample's IP is unknown; each
 * scan is diffed against what is known, so steady state writes nothing. An executable mmap
 * (dlopen) asks the kernel for that one mapping instead: a process that makes N mappings
 * costs the recorder N lookups, not N scans of up to N mappings each (4,000 dlopens took
 * 19.9 CPU-s that way).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf_buildid.h"
#include "fd_limit.h"
#include "host_copy.h"
#include "kernel_mmaps.h"
#include "maps_file.h"
#include "proc_table.h"
#include "procmaps.h"
#include "writer_thread.h"

#define PM_VDSO_MAX_BYTES XPU_VDSO_IMAGE_MAX_BYTES

struct procmaps {
	struct writer_thread *wt;
	struct proc_table *pt;
	uint32_t next_dso_id;
	struct host_copy *copies;	/* may be NULL */
	struct kernel_mmaps *km;	/* the kernel's mmap events; NULL without them */
	bool no_query;			/* the kernel has no PROCMAP_QUERY: every read is a scan */
	struct procmaps_stats st;
};

static int read_for_table(void *ctx, pid_t pid, uint64_t ts_ns)
{
	return procmaps__scan(ctx, pid, ts_ns);
}

struct procmaps *procmaps__new(struct writer_thread *wt, struct proc_table *pt)
{
	struct procmaps *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->wt = wt;
	pm->pt = pt;
	pm->next_dso_id = 1;
	proc_table__set_reader(pt, read_for_table, pm);
	return pm;
}

void procmaps__use_kernel_events(struct procmaps *pm)
{
	if (!pm->km)
		pm->km = kernel_mmaps__open(pm->pt);
}

void procmaps__poll_events(struct procmaps *pm)
{
	kernel_mmaps__poll(pm->km);
}

void procmaps__free(struct procmaps *pm)
{
	if (!pm)
		return;
	kernel_mmaps__free(pm->km);
	free(pm);
}

void procmaps__set_copies(struct procmaps *pm, struct host_copy *hc)
{
	pm->copies = hc;
}

/* Whether fd is the file of the mapping: maps gives its device as major << 20 | minor. */
static bool is_mapped_inode(int fd, const struct proc_map *m)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == m->ino &&
	       ((uint64_t)major(st.st_dev) << 20 | minor(st.st_dev)) == m->dev;
}

static int open_checked(const char *path, const struct proc_map *m)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd >= 0 && !is_mapped_inode(fd, m)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * map_files/ opens the very inode that is mapped, even if deleted or in another mount ns. The
 * paths after it (the process gone, or map_files refused without CAP_SYS_ADMIN) are the
 * process's to change: a file found there counts only if it is the mapped inode, so a symlink
 * swapped in cannot make the recorder (root) read another file for the process's user.
 */
static int open_mapped_file(pid_t pid, const struct proc_map *m, const char *range,
			    const char *path)
{
	char buf[4200];
	int fd;

	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%s", pid, range);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (*path != '/')
		return -1;
	snprintf(buf, sizeof(buf), "/proc/%d/root%s", pid, path);
	fd = open_checked(buf, m);
	if (fd >= 0)
		return fd;
	return open_checked(path, m);
}

/* The vdso's bytes as mapped in pid (malloc'd, *len bytes), or NULL. */
static uint8_t *read_vdso(pid_t pid, uint64_t start, uint64_t end, size_t *len)
{
	size_t size = end - start;
	char path[64];
	uint8_t *img;
	ssize_t n;
	int fd;

	if (size > PM_VDSO_MAX_BYTES)
		size = PM_VDSO_MAX_BYTES;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	img = malloc(size);
	n = img ? pread(fd, img, size, (off_t)start) : -1;
	close(fd);
	if (n <= 0) {
		free(img);
		return NULL;
	}
	*len = (size_t)n;
	return img;
}

/* Since 1.4 the image travels in the trace, after its DSO: the report reads its symbols. */
static void submit_vdso_image(struct procmaps *pm, uint32_t dso_id, const uint8_t *img,
			      size_t len)
{
	struct xpu_rec_vdso_image vi = { .dso_id = dso_id, .size = (uint32_t)len };
	struct wt_rec r = {
		.type = XPU_REC_VDSO_IMAGE,
		.body = &vi,
		.body_size = sizeof(vi),
		.tail = img,
		.tail_size = (uint32_t)len,
		.must_keep = true,
	};

	writer_thread__submit(pm->wt, &r);
}

/* The DSO record of a file seen for the first time; its handlers hear of it after. */
static void new_file(struct procmaps *pm, pid_t pid, struct proc_file *f, const struct proc_map *m,
		     const struct maps_entry *e, uint64_t ts_ns)
{
	struct xpu_rec_dso rec = { .id = f->dso_id };
	struct proc_file_open o = { .pid = pid, .path = e->path, .fd = -1, .ts_ns = ts_ns };
	const char *path = m->ino ? e->path : f->name;
	struct wt_rec r = {
		.type = XPU_REC_DSO,
		.body = &rec,
		.body_size = sizeof(rec),
		.nr_str = 1,
		.str = { { offsetof(struct xpu_rec_dso, path_str), path, strlen(path) } },
		.must_keep = true,
	};
	char map_path[96];
	uint8_t *vdso = NULL;
	size_t vdso_len = 0;
	struct stat st;
	int ret;

	if (m->ino) {
		rec.kind = XPU_DSO_ELF;
		o.fd = open_mapped_file(pid, m, e->range, e->path);
		if (o.fd < 0)
			fd_limit__said(errno, "a mapped file");
		if (o.fd >= 0) {
			ret = elf_buildid__read_fd(o.fd, rec.build_id, XPU_BUILD_ID_MAX);
			if (ret > 0)
				rec.build_id_len = (uint8_t)ret;
			o.build_id = rec.build_id;
			o.build_id_len = rec.build_id_len;
			if (!fstat(o.fd, &st)) {
				rec.size_bytes = (uint64_t)st.st_size;
				rec.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
					       (uint64_t)st.st_mtim.tv_nsec;
			}
			/* deleted, a memfd, another mount ns: only now, through the process */
			host_copy__add(pm->copies, o.fd, e->path, m->dev, m->ino);
		}
	} else if (m->vdso) {
		rec.kind = XPU_DSO_VDSO;
		vdso = read_vdso(pid, m->start, m->end, &vdso_len);
		ret = vdso ? elf_buildid__read_mem(vdso, vdso_len, rec.build_id, XPU_BUILD_ID_MAX) :
			     -EIO;
		if (ret > 0)
			rec.build_id_len = (uint8_t)ret;
		rec.size_bytes = m->end - m->start;
	} else {
		rec.kind = XPU_DSO_ANON;
	}
	writer_thread__submit(pm->wt, &r);
	if (vdso)
		submit_vdso_image(pm, f->dso_id, vdso, vdso_len);
	free(vdso);
	pm->st.dsos++;
	if (m->ino) {
		snprintf(map_path, sizeof(map_path), "/proc/%d/map_files/%s", (int)pid, e->range);
		o.map_path = map_path;
		proc_table__file_opened(pm->pt, f, &o);
	}
	if (o.fd >= 0)
		close(o.fd);
}

/* A read of pid's mappings failed: said once a process (LOST), however many reads fail. */
static void lost_mappings(struct procmaps *pm, struct proc *p, int err, uint64_t ts_ns)
{
	struct xpu_rec_lost lost = {
		.ts_ns = ts_ns, .source = XPU_LOST_MAPPINGS, .pid = (uint32_t)p->pid, .count = 1,
	};
	/* at most one per process: kept even when the queue is full, so the counts match */
	struct wt_rec r = {
		.type = XPU_REC_LOST, .ts_ns = ts_ns, .body = &lost, .body_size = sizeof(lost),
		.must_keep = true,
	};

	pm->st.read_failures++;
	fd_limit__said(-err, "a process's mappings");
	if (p->maps_lost)
		return;
	p->maps_lost = true;
	pm->st.scan_failures++;
	writer_thread__submit(pm->wt, &r);
}

static bool same_map(const struct proc_map *k, const struct proc_map *m)
{
	return k->start == m->start && k->end == m->end && k->pgoff == m->pgoff &&
	       k->ino == m->ino && k->dev == m->dev && k->prot == m->prot;
}

static struct proc_map map_of(const struct maps_entry *e)
{
	return (struct proc_map){
		.start = e->start,
		.end = e->end,
		.pgoff = e->pgoff,
		.ino = e->ino,
		.dev = e->dev,
		.prot = (e->read ? PROT_READ : 0) | (e->write ? PROT_WRITE : 0) | PROT_EXEC,
		.vdso = !e->ino && !strcmp(e->path, "[vdso]"),
	};
}

/* A new mapping: its file (a DSO record the first time), its MAPPING record, the handlers. */
static void new_mapping(struct procmaps *pm, struct proc *p, uint64_t ts_ns, struct proc_map *m,
			const struct maps_entry *e)
{
	const char *name = m->ino ? NULL : (*e->path ? e->path : "//anon");
	struct xpu_rec_mapping rec = {
		.ts_ns = ts_ns,
		.pid = (uint32_t)p->pid,
		.start = m->start,
		.end = m->end,
		.pgoff = m->pgoff,
		.prot = m->prot,
	};
	struct wt_rec r = {
		.type = XPU_REC_MAPPING, .ts_ns = ts_ns,
		.body = &rec, .body_size = sizeof(rec), .must_keep = true,
	};
	bool created;

	m->file = proc_table__file(pm->pt, m->dev, m->ino, name, &created);
	if (m->file && created) {
		m->file->dso_id = pm->next_dso_id++;
		new_file(pm, p->pid, m->file, m, e, ts_ns);
	}
	rec.dso_id = m->file ? m->file->dso_id : 0;
	writer_thread__submit(pm->wt, &r);
	pm->st.mappings++;
	proc_table__mapped(pm->pt, p, m, ts_ns);
}

/*
 * One read of a process's maps: the executable mappings found, diffed against p's. Both are in
 * address order, so the diff is one merge: every entry read and every known mapping passed is
 * looked at once (pm->st.entries counts them).
 */
struct scan {
	struct procmaps *pm;
	struct proc *p;
	uint64_t ts_ns;
	struct proc_map *maps;
	size_t nr, cap;
	size_t known;			/* p->maps before this index start below the entry */
	int added;
};

static int scan_entry(void *ctx, const struct maps_entry *e)
{
	struct scan *s = ctx;
	struct proc_map m = map_of(e);
	const struct proc *p = s->p;
	struct proc_map *tmp;

	s->pm->st.entries++;
	if (!e->exec)
		return 0;
	while (s->known < p->nr && p->maps[s->known].start < m.start) {
		s->known++;
		s->pm->st.entries++;
	}
	if (s->known < p->nr && same_map(&p->maps[s->known], &m)) {
		m.file = p->maps[s->known].file;
	} else {
		new_mapping(s->pm, s->p, s->ts_ns, &m, e);
		s->added++;
	}
	if (s->nr == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		tmp = realloc(s->maps, s->cap * sizeof(*s->maps));
		if (!tmp)
			return 1;
		s->maps = tmp;
	}
	s->maps[s->nr++] = m;
	return 0;
}

int procmaps__scan(struct procmaps *pm, pid_t pid, uint64_t ts_ns)
{
	struct scan s = { .pm = pm, .ts_ns = ts_ns };
	int ret;

	s.p = proc_table__get(pm->pt, pid);
	if (!s.p)
		return -ENOMEM;
	pm->st.scans++;
	ret = maps_file__each(pid, scan_entry, &s);
	/*
	 * Gone before we looked (a shell's or a build's short-lived process): what the kernel
	 * wrote when it mapped them, if the events are on. Everything they carry is here by now:
	 * the kernel writes its record at mmap time, before the BPF event that brought us.
	 */
	if ((ret < 0 || !s.maps) && pm->km && !s.nr) {
		kernel_mmaps__poll(pm->km);
		s.known = 0;
		s.added = 0;
		if (kernel_mmaps__each(pm->km, pid, scan_entry, &s) > 0 && s.maps) {
			pm->st.from_events++;
			ret = 0;
		}
	}
	/* a process that died between open and read shows no mappings at all */
	if (ret < 0 || !s.maps) {
		free(s.maps);
		lost_mappings(pm, s.p, ret, ts_ns);
		proc_table__maps_read(pm->pt, s.p, false);
		return ret < 0 ? ret : -ESRCH;
	}
	free(s.p->maps);
	s.p->maps = s.maps;
	s.p->nr = s.nr;
	s.p->cap = s.cap;
	s.p->whole_reads++;
	proc_table__maps_read(pm->pt, s.p, s.added > 0);
	return s.added;
}

/* The mapping asked for by address, merged into p's known ones (kept in address order). */
struct one {
	struct procmaps *pm;
	struct proc *p;
	uint64_t ts_ns;
	int added;
};

/* The first of p's mappings that ends above addr (p->nr if none), by binary search. */
static size_t first_above(struct procmaps *pm, const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		pm->st.entries++;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int one_entry(void *ctx, const struct maps_entry *e)
{
	struct one *o = ctx;
	struct proc *p = o->p;
	struct proc_map m = map_of(e);
	size_t i, j;

	o->pm->st.entries++;
	if (!e->exec)
		return 0;
	i = first_above(o->pm, p, m.start);
	if (i < p->nr && same_map(&p->maps[i], &m))
		return 0;
	/* what the new mapping covers was unmapped or replaced (MAP_FIXED) since it was read */
	for (j = i; j < p->nr && p->maps[j].start < m.end; j++)
		o->pm->st.entries++;
	if (j == i && p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		struct proc_map *tmp = realloc(p->maps, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		p->maps = tmp;
		p->cap = cap;
	}
	new_mapping(o->pm, p, o->ts_ns, &m, e);
	o->added++;
	/* the stale ones out, the new one in their place */
	memmove(&p->maps[i + 1], &p->maps[j], (p->nr - j) * sizeof(*p->maps));
	p->maps[i] = m;
	p->nr = p->nr - (j - i) + 1;
	return 0;
}

int procmaps__mapped(struct procmaps *pm, pid_t pid, uint64_t addr, uint64_t ts_ns)
{
	struct one o = { .pm = pm, .ts_ns = ts_ns };
	int ret;

	o.p = proc_table__get(pm->pt, pid);
	if (!o.p)
		return -ENOMEM;
	/* first sight, or a kernel that cannot be asked for one mapping: read them all */
	if (!o.p->maps || pm->no_query)
		return procmaps__scan(pm, pid, ts_ns);
	pm->st.queries++;
	ret = maps_file__at(pid, addr, one_entry, &o);
	if (ret == -EOPNOTSUPP) {
		pm->no_query = true;
		return procmaps__scan(pm, pid, ts_ns);
	}
	/* unmapped again before we looked: nothing of it to record */
	if (ret == -ENOENT)
		return 0;
	/* the process is gone: a scan takes its mappings from the kernel's events */
	if (ret == -ESRCH && pm->km)
		return procmaps__scan(pm, pid, ts_ns);
	if (ret < 0) {
		lost_mappings(pm, o.p, ret, ts_ns);
		return ret;
	}
	if (o.added)
		proc_table__maps_read(pm->pt, o.p, true);
	return o.added;
}

/* One MAPPING record of p's for m, known already (its file's DSO record is written). */
static void inherit_mapping(struct procmaps *pm, struct proc *p, const struct proc_map *m,
			    uint64_t ts_ns)
{
	struct xpu_rec_mapping rec = {
		.ts_ns = ts_ns,
		.pid = (uint32_t)p->pid,
		.start = m->start,
		.end = m->end,
		.pgoff = m->pgoff,
		.prot = m->prot,
		.dso_id = m->file ? m->file->dso_id : 0,
	};
	struct wt_rec r = {
		.type = XPU_REC_MAPPING, .ts_ns = ts_ns,
		.body = &rec, .body_size = sizeof(rec), .must_keep = true,
	};

	writer_thread__submit(pm->wt, &r);
	pm->st.mappings++;
	pm->st.inherited++;
	proc_table__mapped(pm->pt, p, m, ts_ns);
}

int procmaps__forked(struct procmaps *pm, pid_t pid, pid_t parent, uint64_t ts_ns)
{
	const struct proc *pp = proc_table__find(pm->pt, parent);
	struct proc *p = proc_table__get(pm->pt, pid);
	size_t i;

	if (!p)
		return -ENOMEM;
	if (!pp || !pp->maps || p->maps || pp == p)
		return procmaps__scan(pm, pid, ts_ns);
	p->maps = malloc((pp->nr ? pp->nr : 1) * sizeof(*p->maps));
	if (!p->maps)
		return procmaps__scan(pm, pid, ts_ns);
	memcpy(p->maps, pp->maps, pp->nr * sizeof(*p->maps));
	p->nr = p->cap = pp->nr;
	p->whole_reads++;
	for (i = 0; i < p->nr; i++)
		inherit_mapping(pm, p, &p->maps[i], ts_ns);
	proc_table__maps_read(pm->pt, p, true);
	return (int)p->nr;
}

void procmaps__get_stats(const struct procmaps *pm, struct procmaps_stats *st)
{
	struct kernel_mmaps_stats ks;

	kernel_mmaps__get_stats(pm->km, &ks);
	*st = pm->st;
	st->events_lost = ks.lost;
	st->events_dropped = ks.dropped;
}
