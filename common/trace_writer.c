// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "crc32c.h"
#include "intern.h"
#include "mono_clock.h"
#include "trace_writer.h"

#define DEFAULT_FRAME_RAW_BYTES (1u << 20)

struct trace_writer {
	int fd;
	int err;			/* sticky negative errno */
	struct trace_writer_opts opts;
	ZSTD_CCtx *zctx;
	int level;			/* zctx's level now */

	uint8_t *raw;			/* the open frame's records */
	uint32_t raw_len, raw_cap;
	uint32_t frame_records;
	uint64_t frame_ts_min, frame_ts_max;
	uint64_t frame_opened_ns;	/* monotonic time of the first record in the open frame */

	uint8_t *out;			/* header + compressed payload of one frame */
	size_t out_cap;

	uint64_t seq;
	struct intern_table *strings;
	struct intern_table *stacks;
	struct intern_table *py_stacks;
	struct trace_writer_stats stats;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

struct trace_writer *trace_writer__open_fd(int fd, const struct trace_writer_opts *opts)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	struct xpu_file_header hdr = {0};
	struct timespec ts;
	int err;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->fd = fd;
	if (opts)
		w->opts = *opts;
	if (!w->opts.frame_raw_bytes || w->opts.frame_raw_bytes > XPU_FRAME_MAX_RAW_BYTES / 2)
		w->opts.frame_raw_bytes = DEFAULT_FRAME_RAW_BYTES;
	if (!w->opts.zstd_level)
		w->opts.zstd_level = 3;
	/* Room for a full frame plus one maximal record that pushed it over the threshold. */
	w->raw_cap = w->opts.frame_raw_bytes + XPU_RECORD_MAX_BYTES + 64;
	w->raw = malloc(w->raw_cap);
	w->out_cap = sizeof(struct xpu_frame_header) + ZSTD_compressBound(w->raw_cap);
	w->out = malloc(w->out_cap);
	w->strings = intern_table__new();
	w->stacks = intern_table__new();
	w->py_stacks = intern_table__new();
	w->zctx = ZSTD_createCCtx();
	if (!w->raw || !w->out || !w->strings || !w->stacks || !w->py_stacks || !w->zctx) {
		err = ENOMEM;
		goto fail;
	}
	ZSTD_CCtx_setParameter(w->zctx, ZSTD_c_compressionLevel, w->opts.zstd_level);
	ZSTD_CCtx_setParameter(w->zctx, ZSTD_c_checksumFlag, 1);
	w->level = w->opts.zstd_level;

	memcpy(hdr.magic, XPU_FILE_MAGIC, 8);
	hdr.major = XPU_FORMAT_MAJOR;
	hdr.minor = XPU_FORMAT_MINOR;
	hdr.header_size = sizeof(hdr);
	clock_gettime(CLOCK_REALTIME, &ts);
	hdr.create_realtime_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	{
		/* A uuid only needs to tell two traces apart; /dev/urandom-free for sandboxes. */
		uint64_t a = xpu_hash64(&hdr.create_realtime_ns, 8) ^ (uint64_t)getpid();
		uint64_t b = xpu_hash64(&a, 8) ^ clock_mono_ns();

		memcpy(hdr.uuid, &a, 8);
		memcpy(hdr.uuid + 8, &b, 8);
	}
	hdr.hdr_crc32c = crc32c(0, &hdr, offsetof(struct xpu_file_header, hdr_crc32c));
	err = -write_all(fd, &hdr, sizeof(hdr));
	if (err)
		goto fail;
	w->stats.file_bytes = sizeof(hdr);
	return w;
fail:
	ZSTD_freeCCtx(w->zctx);
	intern_table__free(w->strings);
	intern_table__free(w->stacks);
	intern_table__free(w->py_stacks);
	free(w->raw);
	free(w->out);
	free(w);
	errno = err;
	return NULL;
}

void trace_writer__set_level(struct trace_writer *w, int level)
{
	/* never slower than the trace's own level: a faster one, or that one again */
	if (!level || level > w->opts.zstd_level)
		level = w->opts.zstd_level;
	if (level < ZSTD_minCLevel())
		level = ZSTD_minCLevel();
	if (level > ZSTD_maxCLevel())
		level = ZSTD_maxCLevel();
	if (level == w->level || ZSTD_isError(ZSTD_CCtx_setParameter(w->zctx, ZSTD_c_compressionLevel,
								    level)))
		return;
	w->level = level;
}

int trace_writer__error(const struct trace_writer *w)
{
	return w->err;
}

int trace_writer__flush(struct trace_writer *w)
{
	struct xpu_frame_header *fh = (struct xpu_frame_header *)w->out;
	uint8_t *payload = w->out + sizeof(*fh);
	size_t comp;
	int err;

	if (w->err)
		return w->err;
	if (!w->frame_records)
		return 0;
	memset(fh, 0, sizeof(*fh));
	if (w->opts.no_compress) {
		memcpy(payload, w->raw, w->raw_len);
		comp = w->raw_len;
		fh->codec = XPU_CODEC_NONE;
	} else {
		comp = ZSTD_compress2(w->zctx, payload, w->out_cap - sizeof(*fh), w->raw, w->raw_len);
		if (ZSTD_isError(comp)) {
			w->err = -EIO;
			return w->err;
		}
		fh->codec = XPU_CODEC_ZSTD;
		if (w->level < w->opts.zstd_level)
			w->stats.frames_fast++;
	}
	memcpy(fh->magic, XPU_FRAME_MAGIC, 4);
	fh->seq = w->seq;
	fh->raw_size = w->raw_len;
	fh->comp_size = (uint32_t)comp;
	fh->record_count = w->frame_records;
	fh->payload_crc32c = crc32c(0, payload, comp);
	fh->ts_min_ns = w->frame_ts_min;
	fh->ts_max_ns = w->frame_ts_max;
	fh->hdr_crc32c = crc32c(0, (uint8_t *)fh + 8, sizeof(*fh) - 8);

	/* One write per frame: a crash leaves whole frames plus at most one partial one. */
	err = write_all(w->fd, w->out, sizeof(*fh) + comp);
	if (err) {
		w->err = err;
		return err;
	}
	w->stats.frames++;
	w->stats.file_bytes += sizeof(*fh) + comp;
	w->seq++;
	w->raw_len = 0;
	w->frame_records = 0;
	w->frame_ts_min = w->frame_ts_max = 0;
	return 0;
}

int trace_writer__flush_if_older(struct trace_writer *w, uint64_t now_mono_ns, uint64_t max_age_ns)
{
	if (!w->frame_records || now_mono_ns - w->frame_opened_ns < max_age_ns)
		return w->err;
	return trace_writer__flush(w);
}

int trace_writer__append2(struct trace_writer *w, uint16_t type, const void *body,
			  uint32_t body_size, const void *tail, uint32_t tail_size, uint64_t ts_ns)
{
	struct xpu_record_header rh;
	uint64_t total = sizeof(rh) + (uint64_t)body_size + tail_size;
	uint32_t padded;

	if (w->err)
		return w->err;
	if (total > XPU_RECORD_MAX_BYTES)
		return -E2BIG;
	padded = (uint32_t)((total + 7) & ~7ull);
	if (w->raw_len + padded > w->raw_cap) {
		int err = trace_writer__flush(w);

		if (err)
			return err;
	}
	rh.type = type;
	rh.flags = 0;
	rh.size = padded;
	memcpy(w->raw + w->raw_len, &rh, sizeof(rh));
	if (body_size)
		memcpy(w->raw + w->raw_len + sizeof(rh), body, body_size);
	if (tail_size)
		memcpy(w->raw + w->raw_len + sizeof(rh) + body_size, tail, tail_size);
	memset(w->raw + w->raw_len + total, 0, padded - total);
	if (!w->frame_records)
		w->frame_opened_ns = clock_mono_ns();
	w->raw_len += padded;
	w->frame_records++;
	w->stats.records++;
	w->stats.raw_bytes += padded;
	if (ts_ns) {
		if (!w->frame_ts_min || ts_ns < w->frame_ts_min)
			w->frame_ts_min = ts_ns;
		if (ts_ns > w->frame_ts_max)
			w->frame_ts_max = ts_ns;
	}
	if (w->raw_len >= w->opts.frame_raw_bytes)
		return trace_writer__flush(w);
	return 0;
}

int trace_writer__append(struct trace_writer *w, uint16_t type, const void *body,
			 uint32_t body_size, uint64_t ts_ns)
{
	return trace_writer__append2(w, type, body, body_size, NULL, 0, ts_ns);
}

uint32_t trace_writer__intern_string(struct trace_writer *w, const char *s, size_t len)
{
	struct xpu_rec_string rs;
	int added;
	uint32_t id;

	if (len > XPU_RECORD_MAX_BYTES - 64)
		len = XPU_RECORD_MAX_BYTES - 64;
	id = intern_table__get(w->strings, s, len, &added);
	if (!id || !added)
		return id;
	rs.id = id;
	rs.len = (uint32_t)len;
	if (trace_writer__append2(w, XPU_REC_STRING, &rs, sizeof(rs), s, (uint32_t)len, 0))
		return 0;
	w->stats.strings++;
	return id;
}

uint32_t trace_writer__intern_cstr(struct trace_writer *w, const char *s)
{
	return trace_writer__intern_string(w, s ? s : "", s ? strlen(s) : 0);
}

uint32_t trace_writer__intern_stack(struct trace_writer *w, const uint64_t *ips,
				    uint16_t nr_kernel, uint16_t nr_user)
{
	/* The key is the counts and the addresses, so a kernel/user split is part of identity. */
	uint64_t key[1 + 2 * XPU_STACK_MAX_DEPTH];
	uint32_t nr = (uint32_t)nr_kernel + nr_user;
	struct xpu_rec_stack st;
	int added;
	uint32_t id;

	if (nr > 2 * XPU_STACK_MAX_DEPTH)
		return 0;
	key[0] = ((uint64_t)nr_kernel << 16) | nr_user;
	memcpy(key + 1, ips, nr * sizeof(*ips));
	id = intern_table__get(w->stacks, key, (1 + nr) * sizeof(*key), &added);
	if (!id || !added)
		return id;
	st.id = id;
	st.nr_kernel = nr_kernel;
	st.nr_user = nr_user;
	if (trace_writer__append2(w, XPU_REC_STACK, &st, sizeof(st), ips,
				  nr * (uint32_t)sizeof(*ips), 0))
		return 0;
	w->stats.stacks++;
	return id;
}

uint32_t trace_writer__intern_py_stack(struct trace_writer *w, const uint64_t *frames,
				       uint16_t nr, uint16_t flags)
{
	/* flags are part of identity: a cut walk must not merge with a complete one */
	uint64_t key[1 + XPU_PY_MAX_FRAMES];
	struct xpu_rec_py_stack st;
	int added;
	uint32_t id;

	if (nr > XPU_PY_MAX_FRAMES)
		return 0;
	key[0] = ((uint64_t)flags << 16) | nr;
	memcpy(key + 1, frames, nr * sizeof(*frames));
	id = intern_table__get(w->py_stacks, key, (1 + nr) * sizeof(*key), &added);
	if (!id || !added)
		return id;
	st.id = id;
	st.nr = nr;
	st.flags = flags;
	if (trace_writer__append2(w, XPU_REC_PY_STACK, &st, sizeof(st), frames,
				  nr * (uint32_t)sizeof(*frames), 0))
		return 0;
	w->stats.py_stacks++;
	return id;
}

void trace_writer__get_stats(const struct trace_writer *w, struct trace_writer_stats *st)
{
	*st = w->stats;
}

int trace_writer__close(struct trace_writer *w)
{
	struct xpu_trailer tr = {0};
	int err;

	if (!w)
		return 0;
	err = trace_writer__flush(w);
	if (!err) {
		memcpy(tr.magic, XPU_TRAILER_MAGIC, 8);
		tr.frame_count = w->stats.frames;
		tr.record_count = w->stats.records;
		tr.crc32c = crc32c(0, &tr, offsetof(struct xpu_trailer, crc32c));
		err = write_all(w->fd, &tr, sizeof(tr));
	}
	if (close(w->fd) && !err)
		err = -errno;
	ZSTD_freeCCtx(w->zctx);
	intern_table__free(w->strings);
	intern_table__free(w->stacks);
	intern_table__free(w->py_stacks);
	free(w->raw);
	free(w->out);
	free(w);
	return err;
}
