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
#include "writer_thread.h"

#define JIT_PID_BUCKETS 256
/* jitdumps kept open until the end; more are read by path */
#define JIT_MAX_OPEN_DUMPS 64
#define JIT_DUMP_MAX_BYTES (1ull << 30)
#define JIT_READ_WINDOW (256u << 10)

struct jit_dump {
	struct jit_dump *next;
	char *path;
	uint64_t ino;
	int fd;				/* -1: open by path at the end */
};

struct jit_proc {
	struct jit_proc *next;
	pid_t pid;
	uid_t uid;			/* owner of /proc/PID when first seen; -1 unknown */
	struct jit_dump *dumps;
};

struct jit_maps {
	struct writer_thread *wt;
	struct jit_proc *procs[JIT_PID_BUCKETS];
	unsigned int open_dumps;
};

/* What one process's files produced so far, for the symbol cap. */
struct emit_ctx {
	struct jit_maps *jm;
	pid_t pid;
	uint16_t source;
	uint64_t written;
	uint64_t over_cap;
};

struct jit_maps *jit_maps__new(struct writer_thread *wt)
{
	struct jit_maps *jm = calloc(1, sizeof(*jm));

	if (jm)
		jm->wt = wt;
	return jm;
}

void jit_maps__free(struct jit_maps *jm)
{
	size_t i;

	if (!jm)
		return;
	for (i = 0; i < JIT_PID_BUCKETS; i++) {
		while (jm->procs[i]) {
			struct jit_proc *p = jm->procs[i];

			jm->procs[i] = p->next;
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
	}
	free(jm);
}

static struct jit_proc *proc_get(struct jit_maps *jm, pid_t pid)
{
	struct jit_proc **b = &jm->procs[(uint32_t)pid % JIT_PID_BUCKETS], *p;
	char path[32];
	struct stat sb;

	for (p = *b; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	p->uid = stat(path, &sb) ? (uid_t)-1 : sb.st_uid;
	p->next = *b;
	*b = p;
	return p;
}

void jit_maps__note_pid(struct jit_maps *jm, pid_t pid)
{
	proc_get(jm, pid);
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

static bool is_jitdump_name(pid_t pid, const char *path)
{
	const char *base = strrchr(path, '/');
	char want[32];

	snprintf(want, sizeof(want), "jit-%d.dump", pid);
	return !strcmp(base ? base + 1 : path, want);
}

void jit_maps__note_mapping(struct jit_maps *jm, pid_t pid, const char *range, const char *path,
			    uint64_t ino)
{
	struct jit_proc *p;
	struct jit_dump *d;
	char buf[96];
	struct stat sb;

	if (!ino || !is_jitdump_name(pid, path) || !(p = proc_get(jm, pid)))
		return;
	for (d = p->dumps; d; d = d->next)
		if (d->ino == ino)
			return;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(path))) {
		free(d);
		return;
	}
	d->ino = ino;
	d->fd = -1;
	if (jm->open_dumps < JIT_MAX_OPEN_DUMPS) {
		/* a magic link to the mapped inode itself: no path to race */
		snprintf(buf, sizeof(buf), "/proc/%d/map_files/%s", pid, range);
		d->fd = open(buf, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (d->fd >= 0 && (fstat(d->fd, &sb) || !file_ok(p, &sb) || sb.st_ino != ino)) {
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

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", p->pid);
	fd = open_checked(p, path, 0);
	if (fd < 0)
		return;
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

static void collect_proc(struct jit_maps *jm, struct jit_proc *p, struct jit_maps_stats *st)
{
	struct emit_ctx e = { .jm = jm, .pid = p->pid };
	struct jit_parse_stats ps = { 0 };
	struct jit_dump *d;

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
			 " over the cap", p->pid, e.written, ps.malformed, e.over_cap);
	st->symbols += e.written;
	st->skipped += ps.malformed + e.over_cap;
}

void jit_maps__collect(struct jit_maps *jm, struct jit_maps_stats *st)
{
	size_t i;
	struct jit_proc *p;

	for (i = 0; i < JIT_PID_BUCKETS; i++)
		for (p = jm->procs[i]; p; p = p->next)
			collect_proc(jm, p, st);
}
