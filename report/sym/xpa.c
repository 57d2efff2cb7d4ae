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
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/containers.h"
#include "base/sort.h"
#include "base/warn.h"
#include "crc32c.h"
#include "safe_open.h"
#include "sym/xpa.h"
#include "sym/xpa_pack.h"

/* What became of an entry: extracted once, whatever the number of DSO records naming it. */
enum xpa_state {
	XPA_UNTRIED,
	XPA_EXTRACTED,			/* fd holds it */
	XPA_FAILED,			/* damaged, not ELF or over the budget: never tried again */
};

struct xpa_index {
	struct xpa_entry e;
	uint64_t payload_off;
	int fd;				/* content ZEROED: the memfd it was extracted to */
	uint8_t state;			/* enum xpa_state */
	void *buf;			/* NAMES, WALKS: the decompressed entry, checked */
	union {
		struct xpa_names names;
		struct xpa_walks walks;
	} view;
};

struct xpa {
	int fd;
	char *path;
	struct xpa_index *idx;
	size_t n, cap;
	uint32_t *by_id;		/* indexes into idx by (build-id, index): binary search */
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
		struct xpa_index x = { 0 };

		if (off + sizeof(x.e) > size || pread(a->fd, &x.e, sizeof(x.e), (off_t)off) != sizeof(x.e))
			return -EINVAL;
		if (memcmp(x.e.magic, XPA_ENTRY_MAGIC, 4) || x.e.hdr_crc32c != crc32c(0, &x.e, 60) ||
		    x.e.entry_size < sizeof(x.e) || x.e.build_id_len > 20 ||
		    x.e.raw_size > XPA_MAX_RAW_BYTES || x.e.comp_size > size)
			return -EINVAL;
		x.payload_off = off + x.e.entry_size + xpa_pad8(x.e.path_len);
		x.fd = -1;
		x.state = XPA_UNTRIED;
		if (x.payload_off + x.e.comp_size > size)
			return -EINVAL;
		if (VEC_PUSH(a->idx, a->n, a->cap, x))
			return -ENOMEM;
		off = x.payload_off + xpa_pad8(x.e.comp_size);
	}
	return 0;
}

/*
 * Orders entries by (content, key length, key, position): the first of equal ones wins. The
 * key is a build-id, or a trace's uuid for WALKS.
 */
static int cmp_key(const struct xpa_entry *e, uint32_t i, uint8_t content, const uint8_t *bid,
		   unsigned int len, uint32_t j)
{
	int c;

	if (e->content != content)
		return e->content < content ? -1 : 1;
	if (e->build_id_len != len)
		return e->build_id_len < len ? -1 : 1;
	c = memcmp(e->build_id, bid, len);
	if (c)
		return c;
	return i < j ? -1 : i > j;
}

static int cmp_by_id(const void *a, const void *b, void *arg)
{
	const struct xpa *x = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct xpa_entry *y = &x->idx[j].e;

	return cmp_key(&x->idx[i].e, i, y->content, y->build_id, y->build_id_len, j);
}

/* A lookup per DSO record must not walk every entry: 65,536 of each would be 4 billion steps. */
static int index_build_ids(struct xpa *a)
{
	uint32_t i;

	a->by_id = malloc((a->n ? a->n : 1) * sizeof(*a->by_id));
	if (!a->by_id)
		return -ENOMEM;
	for (i = 0; i < a->n; i++)
		a->by_id[i] = i;
	qsort_r(a->by_id, a->n, sizeof(*a->by_id), cmp_by_id, a);
	return 0;
}

struct entry_key {
	const struct xpa *a;
	uint8_t content;
	const uint8_t *bid;
	unsigned int len;
};

static bool entry_below(size_t i, const void *arg)
{
	const struct entry_key *k = arg;
	size_t id = k->a->by_id[i];

	/* position 0 sorts before every equal key's position: a lower bound */
	return cmp_key(&k->a->idx[id].e, id, k->content, k->bid, k->len, 0) < 0;
}

/* The position in by_id of the first entry of this content with this key, or a->n. */
static size_t find_first(const struct xpa *a, uint8_t content, const uint8_t *bid,
			 unsigned int len)
{
	size_t lo = upper_bound(a->n, entry_below, &(struct entry_key){ a, content, bid, len });
	const struct xpa_entry *e;

	if (lo == a->n)
		return a->n;
	e = &a->idx[a->by_id[lo]].e;
	if (e->content != content || e->build_id_len != len || memcmp(e->build_id, bid, len))
		return a->n;
	return lo;
}

/* The first entry of this content with this key, or NULL. */
static struct xpa_index *find_entry(const struct xpa *a, uint8_t content, const uint8_t *bid,
				    unsigned int len)
{
	size_t lo = find_first(a, content, bid, len);

	return lo < a->n ? &a->idx[a->by_id[lo]] : NULL;
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
	if (index_build_ids(a)) {
		xpa__close(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

/*
 * Whether the first bytes of an entry (n of them) start an ELF file whose header and tables
 * fit in raw_size bytes: a payload that is not one is never decompressed further. Entries are
 * the files of x86-64 and arm64 traces: little-endian only.
 */
static bool elf_head_ok(const uint8_t *p, size_t n, uint64_t raw_size)
{
	uint64_t phoff, shoff, phsize, shsize;

	if (n < EI_NIDENT || memcmp(p, ELFMAG, SELFMAG) || p[EI_DATA] != ELFDATA2LSB ||
	    p[EI_VERSION] != EV_CURRENT)
		return false;
	if (p[EI_CLASS] == ELFCLASS64 && n >= sizeof(Elf64_Ehdr)) {
		Elf64_Ehdr h;

		memcpy(&h, p, sizeof(h));
		phoff = h.e_phoff;
		phsize = (uint64_t)h.e_phnum * h.e_phentsize;
		shoff = h.e_shoff;
		shsize = (uint64_t)h.e_shnum * h.e_shentsize;
	} else if (p[EI_CLASS] == ELFCLASS32 && n >= sizeof(Elf32_Ehdr)) {
		Elf32_Ehdr h;

		memcpy(&h, p, sizeof(h));
		phoff = h.e_phoff;
		phsize = (uint64_t)h.e_phnum * h.e_phentsize;
		shoff = h.e_shoff;
		shsize = (uint64_t)h.e_shnum * h.e_shentsize;
	} else {
		return false;
	}
	return phoff <= raw_size && phsize <= raw_size - phoff && shoff <= raw_size &&
	       shsize <= raw_size - shoff;
}

/* One entry's decompression: compressed bytes read in slices, output written when full. */
struct xpa_stream {
	struct xpa *a;
	const struct xpa_index *x;
	struct xpa_budget *budget;
	ZSTD_DStream *ds;
	uint8_t *ibuf, *obuf;
	size_t icap, ocap;
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	uint64_t read;			/* payload bytes read */
	uint64_t written;		/* raw bytes flushed to the memfd (holes included) */
	uint64_t held;			/* non-zero bytes written to the memfd */
	uint32_t crc;
	bool done;			/* the frame ended */
	bool not_elf;			/* said so */
	int fd;				/* the memfd, once the header checked out */
};

/* Decompresses until out is full or the frame ends: 0, -EINVAL (damaged) or -errno. */
static int stream_fill(struct xpa_stream *st)
{
	while (!st->done && st->out.pos < st->out.size) {
		size_t r;

		if (st->in.pos == st->in.size) {
			size_t n = st->x->e.comp_size - st->read < st->icap ?
					   st->x->e.comp_size - st->read : st->icap;

			if (!n)
				return -EINVAL;	/* the payload ended inside the frame */
			if (pread(st->a->fd, st->ibuf, n, (off_t)(st->x->payload_off + st->read)) !=
			    (ssize_t)n)
				return -EINVAL;
			st->crc = crc32c(st->crc, st->ibuf, n);
			st->read += n;
			st->in = (ZSTD_inBuffer){ st->ibuf, n, 0 };
		}
		r = ZSTD_decompressStream(st->ds, &st->out, &st->in);
		if (ZSTD_isError(r))
			return -EINVAL;
		st->done = !r;
	}
	return 0;
}

/*
 * Writes out's bytes to the memfd: 4 KiB blocks of zeros become holes, not memory. Past the
 * budget: -EFBIG. Flushed only when full (or at the end), so offsets stay block-aligned.
 */
static int stream_flush(struct xpa_stream *st)
{
	static const uint8_t zero[4096];
	uint64_t max = st->budget->max_bytes ? st->budget->max_bytes : XPA_DEFAULT_MAX_HELD_BYTES;
	size_t i;

	if (st->written + st->out.pos > st->x->e.raw_size)
		return -EINVAL;
	for (i = 0; i < st->out.pos; i += sizeof(zero)) {
		size_t n = st->out.pos - i < sizeof(zero) ? st->out.pos - i : sizeof(zero);

		if (!memcmp(st->obuf + i, zero, n))
			continue;
		if (st->budget->held_bytes + st->held + n > max)
			return -EFBIG;
		if (pwrite(st->fd, st->obuf + i, n, (off_t)(st->written + i)) != (ssize_t)n)
			return errno ? -errno : -EIO;
		st->held += n;
	}
	st->written += st->out.pos;
	st->out.pos = 0;
	return 0;
}

/* The header first (nothing written before it checks out), then the rest, slice by slice. */
static int stream_run(struct xpa_stream *st)
{
	int err;

	err = stream_fill(st);
	if (err)
		return err;
	if (!elf_head_ok(st->obuf, st->out.pos, st->x->e.raw_size)) {
		warn__once("warning: %s: an entry is not an ELF file: skipped", st->a->path);
		st->not_elf = true;
		return -EINVAL;
	}
	st->fd = memfd_create("xpu-archive", MFD_CLOEXEC);
	if (st->fd < 0 || ftruncate(st->fd, (off_t)st->x->e.raw_size))
		return -errno;
	for (;;) {
		err = stream_flush(st);
		if (err || st->done)
			break;
		err = stream_fill(st);
		if (err)
			break;
	}
	/* one frame, the whole payload, exactly raw_size bytes (ARCHIVE.md 2.2) */
	if (!err && (st->written != st->x->e.raw_size || st->read != st->x->e.comp_size ||
		     st->in.pos != st->in.size || st->crc != st->x->e.payload_crc32c))
		err = -EINVAL;
	return err;
}

static void say_over_budget(struct xpa *a, const struct xpa_budget *b)
{
	uint64_t max = b->max_bytes ? b->max_bytes : XPA_DEFAULT_MAX_HELD_BYTES;

	warn__once("warning: %s: entries not extracted: together they would hold more than "
		   "--archive-max=%llu bytes of memory; raise it to use them", a->path,
		   (unsigned long long)max);
}

/* Decompresses an entry into a sparse memfd: the memfd, or a negative errno (said). */
static int extract_entry(struct xpa *a, const struct xpa_index *x, struct xpa_budget *budget)
{
	struct xpa_stream st = { .a = a, .x = x, .budget = budget, .fd = -1 };
	int err = -ENOMEM;

	st.icap = ZSTD_DStreamInSize();
	st.ocap = ZSTD_DStreamOutSize();
	st.ibuf = malloc(st.icap);
	st.obuf = malloc(st.ocap);
	st.ds = ZSTD_createDStream();
	if (st.ibuf && st.obuf && st.ds) {
		st.out = (ZSTD_outBuffer){ st.obuf, st.ocap, 0 };
		err = stream_run(&st);
	}
	ZSTD_freeDStream(st.ds);
	free(st.ibuf);
	free(st.obuf);
	if (!err) {
		budget->held_bytes += st.held;
		return st.fd;
	}
	if (st.fd >= 0)
		close(st.fd);
	if (err == -EFBIG) {
		if (!budget->said)
			say_over_budget(a, budget);
		budget->said = true;
	} else if (err == -EINVAL && !st.not_elf) {
		warn__once("warning: %s: a damaged entry was skipped", a->path);
	} else if (err != -EINVAL && err != -ENOMEM) {
		warn__once("warning: %s: an entry could not be extracted: %s", a->path,
			   strerror(-err));
	}
	return err;
}

int xpa__extract(struct xpa *a, const uint8_t *build_id, unsigned int len, uint64_t file_size,
		 struct xpa_budget *budget)
{
	struct xpa_index *x = a ? find_entry(a, XPA_CONTENT_ZEROED, build_id, len) : NULL;
	int fd;

	if (!x)
		return -ENOENT;
	/* the trace knows the file's size: an entry that decompresses to more is not that file */
	if (file_size && x->e.raw_size > file_size) {
		warn__once("warning: %s: an entry is larger than the file the trace recorded for "
			   "its build-id: not used", a->path);
		return -EFBIG;
	}
	if (x->state == XPA_UNTRIED) {
		fd = extract_entry(a, x, budget);
		x->state = fd >= 0 ? XPA_EXTRACTED : XPA_FAILED;
		x->fd = fd;
	}
	if (x->state != XPA_EXTRACTED)
		return -EINVAL;
	/* each caller closes its own descriptor; the memory is the entry's, held once */
	fd = fcntl(x->fd, F_DUPFD_CLOEXEC, 0);
	return fd >= 0 ? fd : -errno;
}

/*
 * Decompresses a NAMES or WALKS entry into memory once and checks it (parse): 0, -EINVAL
 * (damaged: said once) or -EFBIG (past the budget: said once).
 */
static int load_pack_entry(struct xpa *a, struct xpa_index *x, struct xpa_budget *budget,
			   bool (*parse)(struct xpa_index *x))
{
	uint64_t max = budget->max_bytes ? budget->max_bytes : XPA_DEFAULT_MAX_HELD_BYTES;
	void *comp = NULL;
	size_t n;
	int err = -EINVAL;

	if (x->state != XPA_UNTRIED)
		return x->state == XPA_EXTRACTED ? 0 : -EINVAL;
	x->state = XPA_FAILED;
	/* the declared size is what is allocated: it must fit the budget before anything */
	if (budget->held_bytes + x->e.raw_size > max) {
		if (!budget->said)
			say_over_budget(a, budget);
		budget->said = true;
		return -EFBIG;
	}
	/* the payload is checked before the entry's declared size is allocated */
	comp = malloc(x->e.comp_size ? x->e.comp_size : 1);
	if (!comp) {
		err = -ENOMEM;
		goto out;
	}
	if (pread(a->fd, comp, x->e.comp_size, (off_t)x->payload_off) != (ssize_t)x->e.comp_size ||
	    crc32c(0, comp, x->e.comp_size) != x->e.payload_crc32c ||
	    ZSTD_getFrameContentSize(comp, x->e.comp_size) != x->e.raw_size)
		goto out;
	x->buf = malloc(x->e.raw_size ? x->e.raw_size : 1);
	if (!x->buf) {
		err = -ENOMEM;
		goto out;
	}
	n = ZSTD_decompress(x->buf, x->e.raw_size, comp, x->e.comp_size);
	if (ZSTD_isError(n) || n != x->e.raw_size || !parse(x))
		goto out;
	budget->held_bytes += x->e.raw_size;
	x->state = XPA_EXTRACTED;
	err = 0;
out:
	free(comp);
	if (err) {
		free(x->buf);
		x->buf = NULL;
		if (err == -EINVAL)
			warn__once("warning: %s: a damaged entry was skipped", a->path);
	}
	return err;
}

static bool parse_names(struct xpa_index *x)
{
	return xpa_names__parse(&x->view.names, x->buf, x->e.raw_size);
}

static bool parse_walks(struct xpa_index *x)
{
	return xpa_walks__parse(&x->view.walks, x->buf, x->e.raw_size);
}

/* Whether entry x holds this path (path_len bytes after its header), byte for byte. */
static bool entry_path_is(const struct xpa *a, const struct xpa_index *x, const char *path,
			  uint16_t len)
{
	char buf[XPA_KEY_PATH_MAX + 1];
	uint64_t off = x->payload_off - xpa_pad8(x->e.path_len);

	if (x->e.path_len != len || len > XPA_KEY_PATH_MAX)
		return false;
	return pread(a->fd, buf, len, (off_t)off) == (ssize_t)len && !memcmp(buf, path, len);
}

/*
 * Entries of one key read for a file without build-id, at most: the key holds a CRC of the
 * path, so two real files share one only by a CRC collision, but a crafted pack can hold
 * 65,536 entries of one key, and each DSO record would read every path.
 */
#define SAME_KEY_TRIED 8

const struct xpa_names *xpa__names(struct xpa *a, const struct xpa_file_key *k,
				   struct xpa_budget *budget)
{
	size_t pos, tried;

	if (!a || !k->len)
		return NULL;
	pos = find_first(a, k->content, k->key, k->len);
	for (tried = 0; pos < a->n && tried < SAME_KEY_TRIED; pos++, tried++) {
		struct xpa_index *x = &a->idx[a->by_id[pos]];

		if (x->e.content != k->content || x->e.build_id_len != k->len ||
		    memcmp(x->e.build_id, k->key, k->len))
			break;
		/* a file known by its path: an entry of another path is another file */
		if (k->path && !entry_path_is(a, x, k->path, k->path_len))
			continue;
		return !load_pack_entry(a, x, budget, parse_names) ? &x->view.names : NULL;
	}
	return NULL;
}

const struct xpa_walks *xpa__walks(struct xpa *a, const uint8_t uuid[16], struct xpa_budget *budget)
{
	struct xpa_index *x = a ? find_entry(a, XPA_CONTENT_WALKS, uuid, 16) : NULL;

	return x && !load_pack_entry(a, x, budget, parse_walks) ? &x->view.walks : NULL;
}

void xpa__close(struct xpa *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->n; i++) {
		if (a->idx[i].fd >= 0)
			close(a->idx[i].fd);
		free(a->idx[i].buf);
	}
	close(a->fd);
	free(a->path);
	free(a->idx);
	free(a->by_id);
	free(a);
}
