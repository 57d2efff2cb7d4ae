// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "crc32c.h"
#include "trace_reader.h"

struct trace_reader {
	const uint8_t *data;
	size_t size;
	void *mapped;			/* munmap on close */
	size_t mapped_size;
	uint8_t *owned;			/* free on close (stdin) */

	struct xpu_file_header hdr;
	size_t pos;			/* next frame header */
	uint8_t *raw;			/* current frame, decompressed */
	size_t raw_cap;
	uint32_t raw_len, raw_pos, frame_left;
	uint64_t frame_seq;
	ZSTD_DCtx *zctx;
	struct trace_reader_status st;
};

static void set_end(struct trace_reader *r, enum trace_reader_end end, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_end(struct trace_reader *r, enum trace_reader_end end, const char *fmt, ...)
{
	va_list ap;

	r->st.end = end;
	va_start(ap, fmt);
	vsnprintf(r->st.reason, sizeof(r->st.reason), fmt, ap);
	va_end(ap);
}

/*
 * reader_init's reason, after the file's name: with several traces on a command line (or one
 * given as a shell variable) "bad magic" alone does not say which file is not a trace.
 */
static void name_reason(const char *name, char *err, size_t errlen)
{
	char reason[256];

	snprintf(reason, sizeof(reason), "%s", err);
	snprintf(err, errlen, "%s: %s", name, reason);
}

static struct trace_reader *reader_init(const void *data, size_t size, char *err, size_t errlen)
{
	struct trace_reader *r;
	struct xpu_file_header hdr;

	if (size < sizeof(hdr)) {
		snprintf(err, errlen, "not an xpu trace: file is %zu bytes, shorter than its header",
			 size);
		return NULL;
	}
	memcpy(&hdr, data, sizeof(hdr));
	if (memcmp(hdr.magic, XPU_FILE_MAGIC, 8)) {
		snprintf(err, errlen, "not an xpu trace: bad magic");
		return NULL;
	}
	if (hdr.hdr_crc32c != crc32c(0, &hdr, offsetof(struct xpu_file_header, hdr_crc32c))) {
		snprintf(err, errlen, "corrupt trace: file header CRC mismatch");
		return NULL;
	}
	if (hdr.major != XPU_FORMAT_MAJOR) {
		snprintf(err, errlen, "unsupported trace format version %u.%u (this reader reads %u.x)",
			 hdr.major, hdr.minor, XPU_FORMAT_MAJOR);
		return NULL;
	}
	if (hdr.header_size < sizeof(hdr) || hdr.header_size > size || hdr.header_size > 4096) {
		snprintf(err, errlen, "corrupt trace: header size %u", hdr.header_size);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->zctx = ZSTD_createDCtx();
	if (!r->zctx) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->data = data;
	r->size = size;
	r->hdr = hdr;
	r->pos = hdr.header_size;
	r->st.major = hdr.major;
	r->st.minor = hdr.minor;
	r->st.file_bytes = size;
	r->st.bytes_valid = r->pos;
	return r;
}

struct trace_reader *trace_reader__open_mem(const void *data, size_t size, char *err,
					    size_t errlen)
{
	return reader_init(data, size, err, errlen);
}

static uint8_t *read_stream(int fd, size_t *size)
{
	size_t cap = 1 << 20, len = 0;
	uint8_t *buf = malloc(cap);

	while (buf) {
		ssize_t n;

		if (len == cap) {
			uint8_t *nb = cap > (SIZE_MAX >> 2) ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*size = len;
	return buf;
}

/* Maps a regular file's fd (left open for the caller to close) and reads it. */
static struct trace_reader *open_fd(int fd, const char *name, char *err, size_t errlen)
{
	struct trace_reader *r;
	struct stat sb;
	void *map;

	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "cannot read %s: not a regular file", name);
		return NULL;
	}
	if (sb.st_size == 0) {
		snprintf(err, errlen, "not an xpu trace: %s is empty", name);
		return NULL;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map %s: %s", name, strerror(errno));
		return NULL;
	}
	r = reader_init(map, (size_t)sb.st_size, err, errlen);
	if (!r) {
		name_reason(name, err, errlen);
		munmap(map, (size_t)sb.st_size);
		return NULL;
	}
	r->mapped = map;
	r->mapped_size = (size_t)sb.st_size;
	return r;
}

/*
 * A pipe cannot be mapped and the report reads the trace twice: copy it into a file nobody
 * can open (O_TMPFILE, or unlinked at once), which the page cache can evict, rather than into
 * memory. -1 when no such file can be made; the caller then reads it into memory.
 */
static int spool_stdin(void)
{
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char buf[1 << 16], path[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0) {
		snprintf(path, sizeof(path), "%s/xpu-report.XXXXXX", dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd < 0)
			return -1;
		unlink(path);
	}
	for (;;) {
		n = read(0, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (write(fd, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	}
	if (n < 0) {
		close(fd);
		errno = EIO;
		return -2;
	}
	return fd;
}

/* A pipe read to its end, into memory: the reader owns the bytes. */
static struct trace_reader *open_stream(int fd, const char *name, char *err, size_t errlen)
{
	struct trace_reader *r;
	size_t size = 0;
	uint8_t *buf = read_stream(fd, &size);

	if (!buf) {
		snprintf(err, errlen, "cannot read %s: %s", name, strerror(errno));
		return NULL;
	}
	r = reader_init(buf, size, err, errlen);
	if (!r) {
		name_reason(name, err, errlen);
		free(buf);
	} else {
		r->owned = buf;
	}
	return r;
}

struct trace_reader *trace_reader__open(const char *path, char *err, size_t errlen)
{
	struct trace_reader *r;
	struct stat sb;
	int fd;

	if (!strcmp(path, "-")) {
		if (!fstat(0, &sb) && S_ISREG(sb.st_mode))
			return open_fd(0, "standard input", err, errlen);
		fd = spool_stdin();
		if (fd >= 0) {
			r = open_fd(fd, "standard input", err, errlen);
			close(fd);
			return r;
		}
		if (fd == -2) {
			snprintf(err, errlen, "cannot read standard input: %s", strerror(errno));
			return NULL;
		}
		return open_stream(0, "standard input", err, errlen);
	}
	/*
	 * O_NONBLOCK: a FIFO without a writer would block open() for ever; a device is not read at
	 * all. A pipe (a FIFO, bash's <(...)) is read to its end like standard input.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) || (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode)) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		snprintf(err, errlen, "cannot read %s: not a regular file or a pipe", path);
		close(fd);
		return NULL;
	}
	r = S_ISFIFO(sb.st_mode) ? open_stream(fd, path, err, errlen) : open_fd(fd, path, err, errlen);
	close(fd);
	return r;
}

static int check_trailer(struct trace_reader *r)
{
	struct xpu_trailer tr;

	if (r->size - r->pos != sizeof(tr))
		return 0;
	memcpy(&tr, r->data + r->pos, sizeof(tr));
	if (memcmp(tr.magic, XPU_TRAILER_MAGIC, 8))
		return 0;
	if (tr.crc32c != crc32c(0, &tr, offsetof(struct xpu_trailer, crc32c)))
		return 0;
	return tr.frame_count == r->st.frames_ok;
}

/* Whether the n bytes at p are how magic begins (all of it when n is longer). */
static bool begins_as(const uint8_t *p, size_t n, const char *magic, size_t magic_len)
{
	return !memcmp(p, magic, n < magic_len ? n : magic_len);
}

/*
 * The end of the file came inside the trailer or a frame header: truncated, as a crash or a
 * full disk leaves it, when the bytes there begin as that structure does; anything else there
 * is damage. Returns 1 when it did (status set), 0 when a whole trailer or frame header may
 * follow.
 */
static int short_tail(struct trace_reader *r, size_t left)
{
	const uint8_t *p = r->data + r->pos;

	if (begins_as(p, left, XPU_TRAILER_MAGIC, 8)) {
		if (left >= sizeof(struct xpu_trailer))
			return 0;
		set_end(r, TRACE_END_TRUNCATED, "end-of-trace trailer cut short (%zu of %zu bytes)",
			left, sizeof(struct xpu_trailer));
		return 1;
	}
	if (left >= sizeof(struct xpu_frame_header))
		return 0;
	if (begins_as(p, left, XPU_FRAME_MAGIC, 4))
		set_end(r, TRACE_END_TRUNCATED, "frame %llu header cut short (%zu of %zu bytes)",
			(unsigned long long)r->st.frames_ok, left, sizeof(struct xpu_frame_header));
	else
		set_end(r, TRACE_END_CORRUPT, "bad frame magic at offset %zu", r->pos);
	return 1;
}

/* Loads the next frame into r->raw. Returns 1 on success, 0 at the end (status set). */
static int load_frame(struct trace_reader *r)
{
	struct xpu_frame_header fh;
	const uint8_t *payload;
	size_t left = r->size - r->pos;

	if (left == 0) {
		set_end(r, TRACE_END_NO_TRAILER,
			"no end-of-trace trailer after frame %llu: recording did not finish cleanly",
			(unsigned long long)r->st.frames_ok);
		return 0;
	}
	if (short_tail(r, left))
		return 0;
	if (!memcmp(r->data + r->pos, XPU_TRAILER_MAGIC, 8)) {
		if (check_trailer(r)) {
			r->st.end = TRACE_END_CLEAN;
			r->st.reason[0] = 0;
		} else {
			set_end(r, TRACE_END_CORRUPT, "bad trailer after frame %llu",
				(unsigned long long)r->st.frames_ok);
		}
		return 0;
	}
	memcpy(&fh, r->data + r->pos, sizeof(fh));
	if (memcmp(fh.magic, XPU_FRAME_MAGIC, 4)) {
		set_end(r, TRACE_END_CORRUPT, "bad frame magic at offset %zu", r->pos);
		return 0;
	}
	if (fh.hdr_crc32c != crc32c(0, (const uint8_t *)&fh + 8, sizeof(fh) - 8)) {
		set_end(r, TRACE_END_CORRUPT, "frame %llu header CRC mismatch at offset %zu",
			(unsigned long long)r->st.frames_ok, r->pos);
		return 0;
	}
	if (fh.seq != r->st.frames_ok || fh.raw_size > XPU_FRAME_MAX_RAW_BYTES ||
	    (fh.codec != XPU_CODEC_NONE && fh.codec != XPU_CODEC_ZSTD) ||
	    (fh.codec == XPU_CODEC_NONE && fh.comp_size != fh.raw_size) || fh.raw_size % 8) {
		set_end(r, TRACE_END_CORRUPT, "frame %llu header invalid (seq %llu, size %u, codec %u)",
			(unsigned long long)r->st.frames_ok, (unsigned long long)fh.seq,
			fh.raw_size, fh.codec);
		return 0;
	}
	if (fh.comp_size > left - sizeof(fh)) {
		set_end(r, TRACE_END_TRUNCATED, "frame %llu cut short (%zu of %u payload bytes)",
			(unsigned long long)r->st.frames_ok, left - sizeof(fh), fh.comp_size);
		return 0;
	}
	payload = r->data + r->pos + sizeof(fh);
	if (fh.payload_crc32c != crc32c(0, payload, fh.comp_size)) {
		set_end(r, TRACE_END_CORRUPT, "frame %llu payload CRC mismatch",
			(unsigned long long)r->st.frames_ok);
		return 0;
	}
	if (fh.raw_size > r->raw_cap) {
		uint8_t *nr = realloc(r->raw, fh.raw_size);

		if (!nr) {
			set_end(r, TRACE_END_CORRUPT, "out of memory for frame of %u bytes",
				fh.raw_size);
			return 0;
		}
		r->raw = nr;
		r->raw_cap = fh.raw_size;
	}
	if (fh.codec == XPU_CODEC_NONE) {
		memcpy(r->raw, payload, fh.raw_size);
	} else {
		unsigned long long content = ZSTD_getFrameContentSize(payload, fh.comp_size);
		size_t n;

		if (content != fh.raw_size) {
			set_end(r, TRACE_END_CORRUPT, "frame %llu: compressed size field disagrees",
				(unsigned long long)r->st.frames_ok);
			return 0;
		}
		n = ZSTD_decompressDCtx(r->zctx, r->raw, fh.raw_size, payload, fh.comp_size);
		if (ZSTD_isError(n) || n != fh.raw_size) {
			set_end(r, TRACE_END_CORRUPT, "frame %llu does not decompress: %s",
				(unsigned long long)r->st.frames_ok,
				ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output");
			return 0;
		}
	}
	r->raw_len = fh.raw_size;
	r->raw_pos = 0;
	r->frame_left = fh.record_count;
	r->frame_seq = fh.seq;
	r->pos += sizeof(fh) + fh.comp_size;
	r->st.frames_ok++;
	r->st.bytes_valid = r->pos;
	if (fh.ts_max_ns)
		r->st.last_ts_ns = fh.ts_max_ns;
	return 1;
}

int trace_reader__next(struct trace_reader *r, struct trace_record *rec)
{
	for (;;) {
		struct xpu_record_header rh;

		if (r->st.end != TRACE_END_NONE)
			return 0;
		if (r->raw_pos >= r->raw_len || !r->frame_left) {
			/* A frame whose count and length disagree is corrupt at its end only: the
			 * records already returned were checked one by one. */
			if (r->raw_pos != r->raw_len || r->frame_left) {
				set_end(r, TRACE_END_CORRUPT, "frame %llu record count mismatch",
					(unsigned long long)r->frame_seq);
				return 0;
			}
			if (!load_frame(r))
				return 0;
			continue;
		}
		if (r->raw_len - r->raw_pos < sizeof(rh)) {
			set_end(r, TRACE_END_CORRUPT, "frame %llu: record header cut short",
				(unsigned long long)r->frame_seq);
			return 0;
		}
		memcpy(&rh, r->raw + r->raw_pos, sizeof(rh));
		if (rh.size < sizeof(rh) || rh.size % 8 || rh.size > r->raw_len - r->raw_pos) {
			set_end(r, TRACE_END_CORRUPT, "frame %llu: bad record size %u",
				(unsigned long long)r->frame_seq, rh.size);
			return 0;
		}
		rec->type = rh.type;
		rec->flags = rh.flags;
		rec->body_size = rh.size - (uint32_t)sizeof(rh);
		rec->body = r->raw + r->raw_pos + sizeof(rh);
		rec->frame_seq = r->frame_seq;
		r->raw_pos += rh.size;
		r->frame_left--;
		r->st.records++;
		if (!xpu_record_min_body(rh.type))
			r->st.unknown_records++;
		return 1;
	}
}

void trace_reader__stop(struct trace_reader *r, const char *reason)
{
	if (r->st.end != TRACE_END_NONE)
		return;
	if (r->st.records)
		r->st.records--;
	set_end(r, TRACE_END_LIMIT, "%s", reason);
}

const struct trace_reader_status *trace_reader__status(const struct trace_reader *r)
{
	return &r->st;
}

const struct xpu_file_header *trace_reader__header(const struct trace_reader *r)
{
	return &r->hdr;
}

const void *trace_reader__bytes(const struct trace_reader *r, size_t *size)
{
	*size = r->size;
	return r->data;
}

void trace_reader__close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		munmap(r->mapped, r->mapped_size);
	free(r->owned);
	free(r->raw);
	ZSTD_freeDCtx(r->zctx);
	free(r);
}

const void *trace_record__get(const struct trace_record *rec, void *dst, size_t dst_size,
			      uint32_t *tail_size)
{
	size_t n = rec->body_size < dst_size ? rec->body_size : dst_size;

	memcpy(dst, rec->body, n);
	if (n < dst_size)
		memset((uint8_t *)dst + n, 0, dst_size - n);
	if (tail_size)
		*tail_size = rec->body_size > dst_size ? rec->body_size - (uint32_t)dst_size : 0;
	return rec->body_size > dst_size ? (const uint8_t *)rec->body + dst_size : NULL;
}
