// SPDX-License-Identifier: MIT
/*
 * The snapshot file (snapshot.h): "XPUWALK1", then little-endian fields in the order of
 * struct snapshot, each map followed by its path and, when kept, its bytes. Only this test
 * reads it, on the machine that wrote it (the mapped files must be the same), so there is no
 * versioning beyond the magic.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot.h"

#define SNAP_MAGIC "XPUWALK1"
#define SNAP_MAX_MAPS 65536
#define SNAP_MAX_FRAMES 4096
#define SNAP_MAX_PATH 4096

static bool put(FILE *f, const void *p, size_t n)
{
	return !n || fwrite(p, 1, n, f) == n;	/* p may be NULL when n is 0 */
}

static bool put64(FILE *f, uint64_t v)
{
	return put(f, &v, sizeof(v));
}

static bool get(FILE *f, void *p, size_t n)
{
	return !n || fread(p, 1, n, f) == n;
}

static bool get64(FILE *f, uint64_t *v)
{
	return get(f, v, sizeof(*v));
}

int snapshot__write(const struct snapshot *s, const char *path)
{
	FILE *f = fopen(path, "wb");
	bool ok;
	size_t i;

	if (!f)
		return -errno;
	ok = put(f, SNAP_MAGIC, 8) && put(f, s->label, sizeof(s->label)) && put64(f, s->pid) &&
	     put64(f, s->tid) && put64(f, s->ip) && put64(f, s->sp) && put64(f, s->bp) &&
	     put64(f, s->fsbase) && put64(f, s->nmaps);
	for (i = 0; ok && i < s->nmaps; i++) {
		const struct snap_map *m = &s->maps[i];
		uint64_t plen = strlen(m->path);

		ok = put64(f, m->start) && put64(f, m->end) && put64(f, m->pgoff) &&
		     put64(f, m->prot) && put64(f, m->file_size) && put64(f, m->file_mtime_ns) &&
		     put64(f, plen) && put(f, m->path, plen) && put64(f, m->data != NULL) &&
		     (!m->data || put(f, m->data, m->end - m->start));
	}
	ok = ok && put64(f, s->nexpect) && put(f, s->expect_pcs, s->nexpect * 8) &&
	     put64(f, (uint64_t)s->expect_outermost) && put64(f, s->npy) &&
	     put(f, s->py, s->npy * sizeof(*s->py));
	if (fclose(f))
		ok = false;
	return ok ? 0 : -EIO;
}

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
}

static int read_map(FILE *f, struct snap_map *m)
{
	uint64_t prot, plen, kept;
	struct stat st;

	m->fd = -1;
	if (!get64(f, &m->start) || !get64(f, &m->end) || !get64(f, &m->pgoff) ||
	    !get64(f, &prot) || !get64(f, &m->file_size) || !get64(f, &m->file_mtime_ns))
		return -EIO;
	m->prot = (uint32_t)prot;
	if (!get64(f, &plen) || plen > SNAP_MAX_PATH || m->end <= m->start)
		return -EIO;
	m->path = calloc(1, plen + 1);
	if (!m->path || !get(f, m->path, plen) || !get64(f, &kept))
		return -EIO;
	if (kept) {
		m->data = malloc(m->end - m->start);
		if (!m->data || !get(f, m->data, m->end - m->start))
			return -EIO;
	}
	if (m->path[0] != '/')
		return 0;
	m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
	/* a file that changed would unwind with other tables than the process had */
	if (m->fd < 0 || fstat(m->fd, &st) || (uint64_t)st.st_size != m->file_size ||
	    mtime_ns(&st) != m->file_mtime_ns)
		return -ESTALE;
	return 0;
}

int snapshot__read(struct snapshot *s, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint64_t v[7], n;
	char magic[8];
	int err = -EIO;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!f)
		return -errno;
	if (!get(f, magic, 8) || memcmp(magic, SNAP_MAGIC, 8) ||
	    !get(f, s->label, sizeof(s->label)))
		goto cleanup;
	s->label[sizeof(s->label) - 1] = 0;
	for (i = 0; i < 7; i++)
		if (!get64(f, &v[i]))
			goto cleanup;
	s->pid = (uint32_t)v[0];
	s->tid = (uint32_t)v[1];
	s->ip = v[2];
	s->sp = v[3];
	s->bp = v[4];
	s->fsbase = v[5];
	if (v[6] > SNAP_MAX_MAPS)
		goto cleanup;
	s->maps = calloc(v[6] ? v[6] : 1, sizeof(*s->maps));
	if (!s->maps)
		goto cleanup;
	for (i = 0; i < v[6]; i++) {
		s->nmaps = i + 1;
		err = read_map(f, &s->maps[i]);
		if (err)
			goto cleanup;
	}
	err = -EIO;
	if (!get64(f, &n) || n > SNAP_MAX_FRAMES)
		goto cleanup;
	s->expect_pcs = calloc(n ? n : 1, 8);
	if (!s->expect_pcs || !get(f, s->expect_pcs, n * 8))
		goto cleanup;
	s->nexpect = n;
	if (!get64(f, &n))
		goto cleanup;
	s->expect_outermost = (int)n;
	if (!get64(f, &n) || n > SNAP_MAX_FRAMES)
		goto cleanup;
	s->py = calloc(n ? n : 1, sizeof(*s->py));
	if (!s->py || !get(f, s->py, n * sizeof(*s->py)))
		goto cleanup;
	s->npy = n;
	for (i = 0; i < n; i++)
		s->py[i].name[sizeof(s->py[i].name) - 1] = 0;
	err = 0;
cleanup:
	fclose(f);
	return err;
}

void snapshot__free(struct snapshot *s)
{
	size_t i;

	for (i = 0; i < s->nmaps; i++) {
		free(s->maps[i].path);
		free(s->maps[i].data);
		if (s->maps[i].fd >= 0)
			close(s->maps[i].fd);
	}
	free(s->maps);
	free(s->expect_pcs);
	free(s->py);
	memset(s, 0, sizeof(*s));
}

const struct snap_map *snapshot__map(const struct snapshot *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmaps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nmaps && s->maps[lo].start <= addr ? &s->maps[lo] : NULL;
}

int snapshot__mem(const struct snapshot *s, uint64_t addr, void *dst, size_t len)
{
	uint8_t *out = dst;

	while (len) {
		const struct snap_map *m = snapshot__map(s, addr);
		uint64_t off, n;

		if (!m || !(m->prot & SNAP_PROT_R))
			return -EFAULT;
		off = addr - m->start;
		n = m->end - addr < len ? m->end - addr : len;
		if (m->data)
			memcpy(out, m->data + off, n);
		else if (m->fd < 0 || pread(m->fd, out, n, (off_t)(m->pgoff + off)) != (ssize_t)n)
			return -ENODATA;
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}
