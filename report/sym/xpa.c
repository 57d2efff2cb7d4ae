// SPDX-License-Identifier: MIT
/*
 * TRACE.xpa reader (the writer is the `archive` command, cmd/archive.c). An entry is an ELF file whose section
 * contents the report never reads (code, data) are replaced by zeros: the layout, program
 * headers and offsets stay those of the original, so a mapping's file offsets still apply,
 * and the zeros cost nothing once compressed. Symbol tables, .eh_frame(_hdr), .debug_frame
 * and notes are kept; .debug_* only with --debuginfo.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/containers.h"
#include "base/warn.h"
#include "crc32c.h"
#include "safe_open.h"
#include "sym/xpa.h"

struct xpa_index {
	struct xpa_entry e;
	uint64_t payload_off;
};

struct xpa {
	int fd;
	char *path;
	struct xpa_index *idx;
	size_t n, cap;
};

/* ---- reader ------------------------------------------------------------------------------- */

static int xpa_scan(struct xpa *a)
{
	struct xpa_header h;
	struct stat sb;
	uint64_t off, size;
	uint32_t i;

	if (fstat(a->fd, &sb))
		return -errno;
	size = (uint64_t)sb.st_size;
	if (pread(a->fd, &h, sizeof(h), 0) != sizeof(h) || memcmp(h.magic, XPA_MAGIC, 8))
		return -EINVAL;
	if (h.major != 1 || h.hdr_crc32c != crc32c(0, &h, 28) || h.header_size < sizeof(h) ||
	    h.entry_count > XPA_MAX_ENTRIES)
		return -EINVAL;
	off = h.header_size;
	for (i = 0; i < h.entry_count; i++) {
		struct xpa_index x;

		if (off + sizeof(x.e) > size || pread(a->fd, &x.e, sizeof(x.e), (off_t)off) != sizeof(x.e))
			return -EINVAL;
		if (memcmp(x.e.magic, XPA_ENTRY_MAGIC, 4) || x.e.hdr_crc32c != crc32c(0, &x.e, 60) ||
		    x.e.entry_size < sizeof(x.e) || x.e.build_id_len > 20 ||
		    x.e.raw_size > XPA_MAX_RAW_BYTES || x.e.comp_size > size)
			return -EINVAL;
		x.payload_off = off + x.e.entry_size + xpa_pad8(x.e.path_len);
		if (x.payload_off + x.e.comp_size > size)
			return -EINVAL;
		if (VEC_PUSH(a->idx, a->n, a->cap, x))
			return -ENOMEM;
		off = x.payload_off + xpa_pad8(x.e.comp_size);
	}
	return 0;
}

int xpa__open_for_trace(struct xpa **out, const char *trace_path)
{
	struct xpa *a;
	int err;

	*out = NULL;
	if (!trace_path || !strcmp(trace_path, "-"))
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a || asprintf(&a->path, "%s.xpa", trace_path) < 0) {
		free(a);
		return -ENOMEM;
	}
	/* only a regular file (safe_open.h): TRACE.xpa -> /dev/zero is no archive at all */
	a->fd = safe_open__ro(a->path, NULL);
	if (a->fd < 0) {
		if (a->fd == -EINVAL || a->fd == -EPERM)
			warn__once("warning: %s is not an archive (a device, FIFO, pseudo-file or "
				   "empty file): not read", a->path);
		free(a->path);
		free(a);
		return 0;
	}
	err = xpa_scan(a);
	if (err == -ENOMEM) {
		xpa__close(a);
		return err;
	}
	/* entries before the damage stay usable, as for a damaged trace */
	if (err)
		warn__once("warning: %s is damaged after %zu entries; using those", a->path, a->n);
	*out = a;
	return 0;
}

/* Decompresses an entry into a sparse memfd: runs of zeros become holes, not memory. */
static int extract_entry(struct xpa *a, const struct xpa_index *x)
{
	size_t out_cap = ZSTD_DStreamOutSize(), i;
	uint8_t *comp = NULL, *obuf = NULL;
	ZSTD_DStream *ds = NULL;
	ZSTD_inBuffer in;
	uint64_t written = 0;
	int fd = -1, err = -EINVAL;

	comp = malloc(x->e.comp_size ? x->e.comp_size : 1);
	obuf = malloc(out_cap);
	ds = ZSTD_createDStream();
	if (!comp || !obuf || !ds) {
		err = -ENOMEM;
		goto out;
	}
	if (pread(a->fd, comp, x->e.comp_size, (off_t)x->payload_off) != (ssize_t)x->e.comp_size ||
	    crc32c(0, comp, x->e.comp_size) != x->e.payload_crc32c)
		goto out;
	fd = memfd_create("xpu-archive", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)x->e.raw_size)) {
		err = -errno;
		goto out;
	}
	in = (ZSTD_inBuffer){ comp, x->e.comp_size, 0 };
	while (in.pos < in.size) {
		ZSTD_outBuffer ob = { obuf, out_cap, 0 };
		size_t r = ZSTD_decompressStream(ds, &ob, &in);

		if (ZSTD_isError(r) || written + ob.pos > x->e.raw_size)
			goto out;
		for (i = 0; i < ob.pos; i += 4096) {
			size_t n = ob.pos - i < 4096 ? ob.pos - i : 4096, k;

			for (k = 0; k < n && !obuf[i + k]; k++)
				;
			if (k < n && pwrite(fd, obuf + i, n, (off_t)(written + i)) != (ssize_t)n) {
				err = -errno;
				goto out;
			}
		}
		written += ob.pos;
		if (!r)
			break;
	}
	if (written != x->e.raw_size)
		goto out;
	err = 0;
out:
	ZSTD_freeDStream(ds);
	free(comp);
	free(obuf);
	if (err) {
		if (fd >= 0)
			close(fd);
		warn__once("warning: %s: a damaged entry was skipped", a->path);
		return err;
	}
	return fd;
}

int xpa__extract(struct xpa *a, const uint8_t *build_id, unsigned int len)
{
	size_t i;

	for (i = 0; a && i < a->n; i++) {
		if (a->idx[i].e.build_id_len == len && !memcmp(a->idx[i].e.build_id, build_id, len))
			return extract_entry(a, &a->idx[i]);
	}
	return -ENOENT;
}

void xpa__close(struct xpa *a)
{
	if (!a)
		return;
	close(a->fd);
	free(a->path);
	free(a->idx);
	free(a);
}
