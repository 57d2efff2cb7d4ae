/* SPDX-License-Identifier: MIT */
/*
 * Reader for .xpu files. Treats the file as hostile: every size, offset and count is checked.
 * Frames are read in order until the first one that is short, has a bad magic or CRC, or
 * fails to decompress; everything before it is returned, and the status says why it stopped.
 */
#ifndef XPU_TRACE_READER_H
#define XPU_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "record_fields.h"
#include "xpu_format.h"

struct trace_reader;

struct trace_record {
	uint16_t type;
	uint16_t flags;
	uint32_t body_size;
	const void *body;	/* valid until the next trace_reader__next() call */
	uint64_t frame_seq;
};

enum trace_reader_end {
	TRACE_END_NONE = 0,		/* still reading */
	TRACE_END_CLEAN = 1,		/* a valid trailer followed the last frame */
	TRACE_END_NO_TRAILER = 2,	/* frames ended at EOF without a trailer (crash, kill) */
	TRACE_END_TRUNCATED = 3,	/* the file ended inside a frame or the trailer */
	TRACE_END_CORRUPT = 4,		/* bad magic, CRC, size or compressed data */
	TRACE_END_LIMIT = 5,		/* the caller stopped reading (trace_reader__stop) */
};

struct trace_reader_status {
	enum trace_reader_end end;
	char reason[160];		/* human-readable, set when end is not CLEAN */
	uint16_t major, minor;
	uint64_t frames_ok;
	uint64_t records;
	uint64_t bytes_valid;		/* file offset just past the last good frame */
	uint64_t file_bytes;
	uint64_t unknown_records;	/* records of types this reader does not know */
	uint64_t last_ts_ns;		/* ts_max of the last good frame */
};

/*
 * Opens a file, or "-" for standard input (a pipe is first copied into an unlinked file in
 * $TMPDIR or /tmp, or into memory when none can be made). On failure returns NULL and writes
 * one line into err (no newline).
 */
struct trace_reader *trace_reader__open(const char *path, char *err, size_t errlen);
/* Same, over a caller-owned buffer (fuzzing, tests). The buffer must outlive the reader. */
struct trace_reader *trace_reader__open_mem(const void *data, size_t size, char *err,
					    size_t errlen);

/* 1: a record was returned; 0: no more records (see status); never fails hard. */
int trace_reader__next(struct trace_reader *r, struct trace_record *rec);

/*
 * The caller stops reading before the end, without taking the record last returned (it is
 * not counted): the end is TRACE_END_LIMIT, with reason, and next() returns 0 from now on.
 */
void trace_reader__stop(struct trace_reader *r, const char *reason);

const struct trace_reader_status *trace_reader__status(const struct trace_reader *r);
const struct xpu_file_header *trace_reader__header(const struct trace_reader *r);

/*
 * The whole file's bytes, for a second pass with trace_reader__open_mem (xpu-report streams
 * -g dwarf stack copies that way instead of keeping them): valid until close.
 */
const void *trace_reader__bytes(const struct trace_reader *r, size_t *size);

void trace_reader__close(struct trace_reader *r);

/*
 * Copies a record body into a fixed struct: a shorter body is zero-filled (older writer), a
 * longer one is cut (newer writer). Returns the variable tail after dst_size, if any.
 */
const void *trace_record__get(const struct trace_record *rec, void *dst, size_t dst_size,
			      uint32_t *tail_size);

#endif
