// SPDX-License-Identifier: MIT
/*
 * Mapping tracking. The report symbolizes offline, so every executable mapping a sample may
 * fall into must be in the trace with the build-id of its file. Scans happen at exec, at an
 * executable mmap (dlopen), on first sight of a pid and when a sample's IP is unknown; each
 * scan is diffed against what is known, so steady state writes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autograd/autograd_probe.h"
#include "cfi/cfi_loader.h"
#include "elf_buildid.h"
#include "jit/jit_maps.h"
#include "procmaps.h"
#include "python/py_procs.h"
#include "writer_thread.h"

#define PM_BUCKETS 1024
/* An IP outside every known mapping rescans at most this often per process. */
#define PM_LAZY_INTERVAL_NS (200ull * 1000 * 1000)
#define PM_VDSO_MAX_BYTES XPU_VDSO_IMAGE_MAX_BYTES

struct pm_map {
	uint64_t start, end, pgoff, ino;
	uint32_t dev;
	uint32_t prot;
	uint32_t dso_id;
	bool vdso;
};

struct pm_proc {
	struct pm_proc *next;
	pid_t pid;
	struct pm_map *maps;
	size_t nr;
	uint64_t last_lazy_ns;
};

struct pm_dso {
	struct pm_dso *next;
	uint32_t dev;
	uint64_t ino;
	char *name;			/* key for mappings without an inode ([vdso], anon) */
	uint32_t id;
	struct py_elf_info *py;		/* the file holds a CPython runtime */
};

struct procmaps {
	struct writer_thread *wt;
	struct py_procs *py;
	struct cfi_loader *cfi;
	struct jit_maps *jit;
	struct autograd_probe *ag;	/* PyTorch libraries get the autograd probes */
	struct pm_proc *procs[PM_BUCKETS];
	struct pm_dso *dsos[PM_BUCKETS];
	uint32_t next_dso_id;
	struct procmaps_stats st;
};

struct procmaps *procmaps__new(struct writer_thread *wt)
{
	struct procmaps *pm = calloc(1, sizeof(*pm));

	if (pm) {
		pm->wt = wt;
		pm->next_dso_id = 1;
	}
	return pm;
}

void procmaps__free(struct procmaps *pm)
{
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < PM_BUCKETS; i++) {
		while (pm->procs[i]) {
			struct pm_proc *p = pm->procs[i];

			pm->procs[i] = p->next;
			free(p->maps);
			free(p);
		}
		while (pm->dsos[i]) {
			struct pm_dso *d = pm->dsos[i];

			pm->dsos[i] = d->next;
			free(d->py);
			free(d->name);
			free(d);
		}
	}
	free(pm);
}

static struct pm_proc *proc_find(struct procmaps *pm, pid_t pid, bool create)
{
	struct pm_proc **b = &pm->procs[(uint32_t)pid % PM_BUCKETS], *p;

	for (p = *b; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = *b;
	*b = p;
	return p;
}

void procmaps__forget(struct procmaps *pm, pid_t pid)
{
	struct pm_proc **pp = &pm->procs[(uint32_t)pid % PM_BUCKETS], *p;

	if (pm->cfi)
		cfi_loader__forget(pm->cfi, pid);

	for (; (p = *pp); pp = &p->next) {
		if (p->pid == pid) {
			*pp = p->next;
			free(p->maps);
			free(p);
			return;
		}
	}
}

static uint32_t hash_key(uint32_t dev, uint64_t ino, const char *name)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ull ^ dev;

	if (!ino && name)
		while (*name)
			h = h * 31 + (unsigned char)*name++;
	return (uint32_t)(h ^ (h >> 32)) % PM_BUCKETS;
}

static int open_mapped_file(pid_t pid, const char *range, const char *path)
{
	char buf[4200];
	int fd;

	/* map_files/ opens the very inode that is mapped, even if deleted or in another mount ns. */
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%s", pid, range);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(buf, sizeof(buf), "/proc/%d/root%s", pid, path);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	return open(path, O_RDONLY | O_CLOEXEC);
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

/* Keeps what py_layout finds in a file that holds a CPython runtime. */
static void probe_python(struct pm_dso *d, int fd, const char *path)
{
	struct py_elf_info info;

	if (py_layout__probe(fd, path, &info) == 1) {
		d->py = malloc(sizeof(*d->py));
		if (d->py)
			*d->py = info;
	}
}

static uint32_t dso_get(struct procmaps *pm, pid_t pid, const struct pm_map *m,
			const char *range, const char *path, uint64_t ts_ns, struct pm_dso **found)
{
	const char *name = m->ino ? NULL : (*path ? path : "//anon");
	uint32_t b = hash_key(m->dev, m->ino, name);
	struct xpu_rec_dso rec = { 0 };
	uint8_t *vdso = NULL;
	size_t vdso_len = 0;
	struct pm_dso *d;
	struct stat st;
	int fd, ret;

	for (d = pm->dsos[b]; d; d = d->next) {
		if (m->ino ? (d->dev == m->dev && d->ino == m->ino) :
			     (!d->ino && d->name && !strcmp(d->name, name))) {
			*found = d;
			return d->id;
		}
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return 0;
	d->dev = m->dev;
	d->ino = m->ino;
	d->name = name ? strdup(name) : NULL;
	d->id = pm->next_dso_id++;
	d->next = pm->dsos[b];
	pm->dsos[b] = d;
	*found = d;

	rec.id = d->id;
	if (m->ino) {
		rec.kind = XPU_DSO_ELF;
		fd = open_mapped_file(pid, range, path);
		if (fd >= 0) {
			ret = elf_buildid__read_fd(fd, rec.build_id, XPU_BUILD_ID_MAX);
			if (ret > 0)
				rec.build_id_len = (uint8_t)ret;
			if (pm->py)
				probe_python(d, fd, path);
			if (pm->ag) {
				char mp[96];

				snprintf(mp, sizeof(mp), "/proc/%d/map_files/%s", (int)pid, range);
				autograd_probe__file(pm->ag, pid, d->id, fd, path, mp, ts_ns);
			}
			if (!fstat(fd, &st)) {
				rec.size_bytes = (uint64_t)st.st_size;
				rec.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
					       (uint64_t)st.st_mtim.tv_nsec;
			}
			close(fd);
		}
	} else if (!strcmp(name, "[vdso]")) {
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
	{
		const char *p = m->ino ? path : name;
		struct wt_rec r = {
			.type = XPU_REC_DSO,
			.body = &rec,
			.body_size = sizeof(rec),
			.nr_str = 1,
			.str = { { offsetof(struct xpu_rec_dso, path_str), p, strlen(p) } },
			.must_keep = true,
		};

		writer_thread__submit(pm->wt, &r);
	}
	if (vdso)
		submit_vdso_image(pm, d->id, vdso, vdso_len);
	free(vdso);
	pm->st.dsos++;
	return d->id;
}

static bool map_known(const struct pm_proc *p, const struct pm_map *m, uint32_t *dso_id)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		const struct pm_map *k = &p->maps[i];

		if (k->start == m->start && k->end == m->end && k->pgoff == m->pgoff &&
		    k->ino == m->ino && k->dev == m->dev && k->prot == m->prot) {
			*dso_id = k->dso_id;
			return true;
		}
	}
	return false;
}

static void lost_mappings(struct procmaps *pm, pid_t pid, uint64_t ts_ns)
{
	struct xpu_rec_lost lost = {
		.ts_ns = ts_ns, .source = XPU_LOST_MAPPINGS, .pid = (uint32_t)pid, .count = 1,
	};
	/* at most one per process: kept even when the queue is full, so the counts match */
	struct wt_rec r = {
		.type = XPU_REC_LOST, .ts_ns = ts_ns, .body = &lost, .body_size = sizeof(lost),
		.must_keep = true,
	};

	pm->st.scan_failures++;
	writer_thread__submit(pm->wt, &r);
}

static void publish_cfi(struct procmaps *pm, const struct pm_proc *p)
{
	struct cfi_map_in *in = calloc(p->nr ? p->nr : 1, sizeof(*in));
	size_t i;

	if (!in)
		return;
	for (i = 0; i < p->nr; i++)
		in[i] = (struct cfi_map_in){ p->maps[i].start, p->maps[i].end, p->maps[i].pgoff,
					     p->maps[i].ino, p->maps[i].dev, p->maps[i].vdso };
	cfi_loader__set_proc(pm->cfi, p->pid, in, p->nr);
	free(in);
}

int procmaps__scan(struct procmaps *pm, pid_t pid, uint64_t ts_ns, bool reset)
{
	struct pm_map *maps = NULL, *tmp;
	size_t nr = 0, cap = 0;
	struct pm_proc *p;
	char path[64], line[4400];
	int added = 0;
	FILE *f;

	p = proc_find(pm, pid, true);
	if (!p)
		return -ENOMEM;
	if (reset)
		p->nr = 0;
	pm->st.scans++;
	if (pm->jit)
		jit_maps__note_pid(pm->jit, pid);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f) {
		int err = -errno;

		lost_mappings(pm, pid, ts_ns);
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[5], range[64];
		struct pm_map m = { 0 };
		int pos = 0;
		char *file;
		size_t len;

		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &pos) < 7 || perms[2] != 'x')
			continue;
		file = line + pos;
		len = strlen(file);
		while (len && (file[len - 1] == '\n' || file[len - 1] == ' '))
			file[--len] = '\0';
		m.start = start;
		m.end = end;
		m.pgoff = pgoff;
		m.ino = ino;
		m.dev = (maj << 20) | min;
		m.vdso = !ino && !strcmp(file, "[vdso]");
		m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			 PROT_EXEC;
		if (!map_known(p, &m, &m.dso_id)) {
			struct xpu_rec_mapping rec = { 0 };
			struct pm_dso *d = NULL;
			struct wt_rec r = {
				.type = XPU_REC_MAPPING, .ts_ns = ts_ns,
				.body = &rec, .body_size = sizeof(rec), .must_keep = true,
			};

			snprintf(range, sizeof(range), "%llx-%llx", start, end);
			m.dso_id = dso_get(pm, pid, &m, range, file, ts_ns, &d);
			rec.ts_ns = ts_ns;
			rec.pid = (uint32_t)pid;
			rec.dso_id = m.dso_id;
			rec.start = m.start;
			rec.end = m.end;
			rec.pgoff = m.pgoff;
			rec.prot = m.prot;
			writer_thread__submit(pm->wt, &r);
			pm->st.mappings++;
			added++;
			if (d && d->py)
				py_procs__mapping(pm->py, pid, d->id, d->py, m.start, m.pgoff, ts_ns);
			if (pm->jit)
				jit_maps__note_mapping(pm->jit, pid, range, file, m.ino);
			autograd_probe__mapping(pm->ag, pid, m.dso_id, m.start, m.pgoff);
		}
		if (pm->cfi && m.ino && !cfi_loader__known(pm->cfi, m.dev, m.ino)) {
			snprintf(range, sizeof(range), "%llx-%llx", start, end);
			cfi_loader__file(pm->cfi, m.dev, m.ino, open_mapped_file(pid, range, file));
		}
		if (nr == cap) {
			cap = cap ? cap * 2 : 32;
			tmp = realloc(maps, cap * sizeof(*maps));
			if (!tmp)
				break;
			maps = tmp;
		}
		maps[nr++] = m;
	}
	fclose(f);
	/* A process that died between open and read shows no mappings at all. */
	if (!nr && !maps) {
		lost_mappings(pm, pid, ts_ns);
		return -ESRCH;
	}
	free(p->maps);
	p->maps = maps;
	p->nr = nr;
	if (pm->cfi && (added || reset))
		publish_cfi(pm, p);
	return added;
}

void procmaps__check_ip(struct procmaps *pm, pid_t pid, uint64_t ip, uint64_t ts_ns)
{
	struct pm_proc *p = proc_find(pm, pid, false);
	size_t i;

	if (!p) {
		procmaps__scan(pm, pid, ts_ns, false);
		return;
	}
	for (i = 0; i < p->nr; i++)
		if (ip >= p->maps[i].start && ip < p->maps[i].end)
			return;
	if (ts_ns - p->last_lazy_ns < PM_LAZY_INTERVAL_NS)
		return;
	p->last_lazy_ns = ts_ns;
	procmaps__scan(pm, pid, ts_ns, false);
}

bool procmaps__mapping_of(const struct procmaps *pm, pid_t pid, uint64_t ip, uint64_t *start,
			  uint64_t *end)
{
	const struct pm_proc *p;
	size_t i;

	for (p = pm->procs[(uint32_t)pid % PM_BUCKETS]; p && p->pid != pid; p = p->next)
		;
	for (i = 0; p && i < p->nr; i++) {
		if (ip >= p->maps[i].start && ip < p->maps[i].end) {
			*start = p->maps[i].start;
			*end = p->maps[i].end;
			return true;
		}
	}
	return false;
}

void procmaps__set_python(struct procmaps *pm, struct py_procs *py)
{
	pm->py = py;
}

void procmaps__set_cfi(struct procmaps *pm, struct cfi_loader *cl)
{
	pm->cfi = cl;
}

void procmaps__set_autograd(struct procmaps *pm, struct autograd_probe *ap)
{
	pm->ag = ap;
}

void procmaps__set_jit(struct procmaps *pm, struct jit_maps *jit)
{
	pm->jit = jit;
}

void procmaps__get_stats(const struct procmaps *pm, struct procmaps_stats *st)
{
	*st = pm->st;
}
