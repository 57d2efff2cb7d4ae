/* SPDX-License-Identifier: MIT */
/*
 * Frame writer for .xpu files. One thread owns a writer: it holds the intern tables and the
 * open frame, so a definition (string, stack) is always written before its first use.
 */
#ifndef XPU_TRACE_WRITER_H
#define XPU_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "xpu_format.h"

struct trace_writer;

struct trace_writer_opts {
	int zstd_level;			/* 0: default (3) */
	uint32_t frame_raw_bytes;	/* flush when the open frame reaches this; 0: 1 MiB */
	int no_compress;		/* store frames raw (tests) */
};

/* Takes ownership of fd; writes the file header. Returns NULL and sets errno on failure. */
struct trace_writer *trace_writer__open_fd(int fd, const struct trace_writer_opts *opts);

/*
 * Appends one record; body_size is the body without the record header. ts_ns (monotonic) feeds
 * the frame's time range; pass 0 for records without a time. Returns 0 or negative errno.
 * A write error is sticky: later calls return it too.
 */
int trace_writer__append(struct trace_writer *w, uint16_t type, const void *body,
			 uint32_t body_size, uint64_t ts_ns);
/* Same, with a variable-length tail after a fixed body. */
int trace_writer__append2(struct trace_writer *w, uint16_t type, const void *body,
			  uint32_t body_size, const void *tail, uint32_t tail_size, uint64_t ts_ns);

/* Returns the id of the string (writing a STRING record the first time); 0 on error. */
uint32_t trace_writer__intern_string(struct trace_writer *w, const char *s, size_t len);
uint32_t trace_writer__intern_cstr(struct trace_writer *w, const char *s);
/* Returns the id of the stack (writing a STACK record the first time); 0 on error. */
uint32_t trace_writer__intern_stack(struct trace_writer *w, const uint64_t *ips,
				    uint16_t nr_kernel, uint16_t nr_user);

/* Returns the id of a Python stack (writing a PY_STACK record the first time); 0 on error. */
uint32_t trace_writer__intern_py_stack(struct trace_writer *w, const uint64_t *frames,
				       uint16_t nr, uint16_t flags);

/* Closes the open frame (if any records) and writes it with one write(). */
int trace_writer__flush(struct trace_writer *w);
/* Flushes if the open frame is older than max_age_ns (pass the current monotonic time). */
int trace_writer__flush_if_older(struct trace_writer *w, uint64_t now_mono_ns, uint64_t max_age_ns);

struct trace_writer_stats {
	uint64_t records;
	uint64_t frames;
	uint64_t raw_bytes;
	uint64_t file_bytes;
	uint64_t strings;
	uint64_t stacks;
	uint64_t py_stacks;
	uint64_t frames_fast;		/* frames compressed below opts.zstd_level (set_level) */
};
void trace_writer__get_stats(const struct trace_writer *w, struct trace_writer_stats *st);
/*
 * The zstd level of the frames from the next one on (each frame is compressed on its own, so a
 * reader needs to know nothing of it): a faster one than opts.zstd_level (lower, down to
 * zstd's fastest), never a slower one; 0: opts.zstd_level again.
 */
void trace_writer__set_level(struct trace_writer *w, int level);
/* The first write error seen, as negative errno, or 0. */
int trace_writer__error(const struct trace_writer *w);

/* Flushes, writes the trailer, closes the fd and frees. Returns 0 or the first error. */
int trace_writer__close(struct trace_writer *w);

#endif
