// SPDX-License-Identifier: MIT
/*
 * JIT symbols (see jit_maps.h). The files are written by the traced process, which may run as
 * another user than the recorder (root): a perf map is opened only as a regular file (lstat,
 * then O_NOFOLLOW | O_NONBLOCK and the same inode), owned by the process's user or root; a
 * jitdump is opened through /proc/PID/map_files while the process maps it (the very inode),
 * else by path with the same checks. Sizes and counts are capped; parse errors are counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "jit_maps.h"
#include "jit_parse.h"
#include "proc_table.h"
#include "writer_thread.h"

/* jitdumps kept open until the end; more are read by path */
#define JIT_MAX_OPEN_DUMPS 64
/* perf maps held open from when they are first seen; more are read by path at the end */
#define JIT_MAX_OPEN_MAPS 256
#define JIT_DUMP_MAX_BYTES (1ull << 30)
#define JIT_READ_WINDOW (256u << 10)

struct jit_dump {
	struct jit_dump *next;
	char *path;
	uint64_t ino;
	int fd;				/* -1: open by path at the end */
};

/* A process's slot, kept after it exits: its files are read at the end. */
struct jit_proc {
	uid_t uid;			/* owner of /proc/PID when first seen; -1 unknown */
	int map_fd;			/* /tmp/perf-PID.map once seen: read at the end, even unlinked */
	struct jit_dump *dumps;
};

struct jit_maps {
	struct map_handler h;
	struct writer_thread *wt;
	unsigned int open_dumps;
	unsigned int open_maps;
};

/* What one process's files produced so far, for the symbol cap. */
struct emit_ctx {
	struct jit_maps *jm;
	pid_t pid;
	uint16_t source;
	uint64_t written;
	uint64_t over_cap;
};

static struct jit_maps *of(struct map_handler *h)
{
	return (struct jit_maps *)((char *)h - offsetof(struct jit_maps, h));
}

static void jit_free_proc(struct map_handler *h, void *slot)
{
	struct jit_proc *p = slot;

	if (p->map_fd >= 0)
		close(p->map_fd);
	while (p->dumps) {
		struct jit_dump *d = p->dumps;

		p->dumps = d->next;
		if (d->fd >= 0)
			close(d->fd);
		free(d->path);
		free(d);
	}
	free(p);
}

/* pid's slot, made the first time its mappings are read. */
static struct jit_proc *proc_get(struct map_handler *h, struct proc *proc)
{
	struct jit_proc **slot = (struct jit_proc **)proc__slot(proc, h), *p = *slot;
	char path[32];
	struct stat sb;

	if (p || !(p = calloc(1, sizeof(*p))))
		return p;
	snprintf(path, sizeof(path), "/proc/%d", proc->pid);
	p->uid = stat(path, &sb) ? (uid_t)-1 : sb.st_uid;
	p->map_fd = -1;
	*slot = p;
	return p;
}

/* A file the process may have written: regular, and its user's or root's. */
static bool file_ok(const struct jit_proc *p, const struct stat *sb)
{
	return S_ISREG(sb->st_mode) && (sb->st_uid == 0 || sb->st_uid == p->uid);
}

/* Opens path without following a link or blocking on a FIFO; -1 unless file_ok. */
static int open_checked(const struct jit_proc *p, const char *path, uint64_t ino)
{
	struct stat ls, fs;
	int fd;

	if (lstat(path, &ls) || !file_ok(p, &ls) || (ino && ls.st_ino != ino))
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &fs) || fs.st_dev != ls.st_dev || fs.st_ino != ls.st_ino || !file_ok(p, &fs)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A process whose mappings were read (a JIT maps code as it goes): its perf map is read at the
 * end, through the descriptor taken the first time the file is there, so that a JIT that
 * removes its map before it exits (or a tmp cleaner) loses no name. An open that fails
 * costs one lookup a maps read.
 */
static void jit_on_maps(struct map_handler *h, struct proc *proc, bool changed)
{
	struct jit_maps *jm = of(h);
	struct jit_proc *p = proc_get(h, proc);
	char path[64];

	(void)changed;
	if (!p || p->map_fd >= 0 || jm->open_maps >= JIT_MAX_OPEN_MAPS)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", proc->pid);
	p->map_fd = open_checked(p, path, 0);
	if (p->map_fd >= 0)
		jm->open_maps++;
}

static bool is_jitdump_name(pid_t pid, const char *path)
{
	const char *base = strrchr(path, '/');
	char want[32];

	snprintf(want, sizeof(want), "jit-%d.dump", pid);
	return !strcmp(base ? base + 1 : path, want);
}

/*
 * A file mapped for the first time: a jitdump of the process that mapped it (named
 * jit-PID.dump) is opened now, through map_files, and read at the end.
 */
static void jit_on_file(struct map_handler *h, struct proc_file *f, const struct proc_file_open *o)
{
	struct jit_maps *jm = of(h);
	struct proc *proc;
	struct jit_proc *p;
	struct jit_dump *d;
	struct stat sb;

	if (!f->ino || !is_jitdump_name(o->pid, o->path) ||
	    !(proc = proc_table__find(h->pt, o->pid)) || !(p = proc_get(h, proc)))
		return;
	for (d = p->dumps; d; d = d->next)
		if (d->ino == f->ino)
			return;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(o->path))) {
		free(d);
		return;
	}
	d->ino = f->ino;
	d->fd = -1;
	if (jm->open_dumps < JIT_MAX_OPEN_DUMPS) {
		/* a magic link to the mapped inode itself: no path to race */
		d->fd = open(o->map_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (d->fd >= 0 && (fstat(d->fd, &sb) || !file_ok(p, &sb) || sb.st_ino != f->ino)) {
			close(d->fd);
			d->fd = -1;
		}
		jm->open_dumps += d->fd >= 0;
	}
	d->next = p->dumps;
	p->dumps = d;
}

static int emit(void *ctx, const struct jit_sym *s)
{
	struct emit_ctx *e = ctx;
	struct xpu_rec_jit_symbol rec = {
		.start = s->start,
		.size_bytes = s->size,
		.load_ts_ns = s->load_ts_ns,
		.pid = (uint32_t)e->pid,
		.source = e->source,
	};
	struct wt_rec r = {
		.type = XPU_REC_JIT_SYMBOL,
		.body = &rec,
		.body_size = sizeof(rec),
		.nr_str = 1,
		.str = { { offsetof(struct xpu_rec_jit_symbol, name_str), s->name, s->name_len } },
		/* written once, at the end, within the cap: never dropped for queue room */
		.must_keep = true,
	};

	if (e->written >= XPU_JIT_MAX_SYMBOLS) {
		e->over_cap++;
		return 0;
	}
	if (!writer_thread__submit(e->jm->wt, &r))
		e->written++;
	return 0;
}

/* A window of the file in memory: parsing reads small pieces, mostly in order. */
struct dump_src {
	int fd;
	uint64_t base;
	size_t len;
	uint8_t *buf;
};

static int dump_read(void *src, uint64_t off, void *out, size_t len)
{
	struct dump_src *d = src;
	ssize_t n;

	if (len > JIT_READ_WINDOW)
		return -EINVAL;
	if (off < d->base || off + len > d->base + d->len) {
		n = pread(d->fd, d->buf, JIT_READ_WINDOW, (off_t)off);
		if (n < 0)
			return -errno;
		d->base = off;
		d->len = (size_t)n;
		if (len > d->len)
			return -EIO;
	}
	memcpy(out, d->buf + (off - d->base), len);
	return 0;
}

static void read_dump(struct emit_ctx *e, int fd, struct jit_parse_stats *ps)
{
	struct dump_src src = { .fd = fd };
	struct stat sb;
	uint64_t size;

	if (fstat(fd, &sb))
		return;
	size = (uint64_t)sb.st_size;
	if (size > JIT_DUMP_MAX_BYTES) {
		ps->malformed++;	/* the part past the cap */
		size = JIT_DUMP_MAX_BYTES;
	}
	src.buf = malloc(JIT_READ_WINDOW);
	if (!src.buf)
		return;
	jit_parse__jitdump(dump_read, &src, size, emit, e, ps);
	free(src.buf);
}

static void read_perf_map(struct emit_ctx *e, const struct jit_proc *p,
			  struct jit_parse_stats *ps, uint64_t *files)
{
	char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", e->pid);
	/* the held one from its start (the map is appended to: it has every line by now) */
	fd = p->map_fd >= 0 ? dup(p->map_fd) : open_checked(p, path, 0);
	if (fd < 0)
		return;
	if (p->map_fd >= 0 && lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	(*files)++;
	e->source = XPU_JIT_PERF_MAP;
	jit_parse__perf_map(f, emit, e, ps);
	fclose(f);
}

struct collect {
	struct jit_maps *jm;
	struct jit_maps_stats *st;
};

static void collect_proc(void *ctx, struct proc *proc)
{
	struct collect *c = ctx;
	const struct jit_proc *p = *proc__slot(proc, &c->jm->h);
	struct emit_ctx e = { .jm = c->jm, .pid = proc->pid };
	struct jit_parse_stats ps = { 0 };
	struct jit_maps_stats *st = c->st;
	struct jit_dump *d;

	if (!p)
		return;
	read_perf_map(&e, p, &ps, &st->files);
	for (d = p->dumps; d; d = d->next) {
		int fd = d->fd >= 0 ? d->fd : open_checked(p, d->path, d->ino);

		if (fd < 0)
			continue;
		st->files++;
		e.source = XPU_JIT_DUMP;
		read_dump(&e, fd, &ps);
		if (d->fd < 0)
			close(fd);
	}
	if (e.written || ps.malformed || e.over_cap)
		log_info("pid %d: %" PRIu64 " JIT symbols, %" PRIu64 " malformed, %" PRIu64
			 " over the cap", proc->pid, e.written, ps.malformed, e.over_cap);
	st->symbols += e.written;
	st->skipped += ps.malformed + e.over_cap;
}

void jit_maps__collect(struct jit_maps *jm, struct jit_maps_stats *st)
{
	struct collect c = { jm, st };

	if (jm->h.pt)
		proc_table__each(jm->h.pt, collect_proc, &c);
}

struct jit_maps *jit_maps__new(struct writer_thread *wt)
{
	struct jit_maps *jm = calloc(1, sizeof(*jm));

	if (!jm)
		return NULL;
	jm->h = (struct map_handler){
		.name = "jit",
		.on_file = jit_on_file,
		.on_maps = jit_on_maps,
		.free_proc = jit_free_proc,
	};
	jm->wt = wt;
	return jm;
}

void jit_maps__free(struct jit_maps *jm)
{
	free(jm);
}

struct map_handler *jit_maps__handler(struct jit_maps *jm)
{
	return &jm->h;
}
