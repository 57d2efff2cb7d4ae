/* SPDX-License-Identifier: MIT */
/*
 * The one thread that owns the trace_writer (intern tables, open frame). Producers (ring-buffer
 * drain threads, the CUPTI receiver) hand it records through a bounded queue.
 */
#ifndef XPU_WRITER_THREAD_H
#define XPU_WRITER_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xpu_format.h"

struct writer_thread;
struct trace_writer;

#define WT_MAX_STR_FIXUPS 6

/*
 * One native record to write. Strings and the stack are interned by the writer thread, which
 * stores their ids as u32 at the given byte offsets of the body: a definition is therefore
 * always written before its first use. Everything is copied; the caller keeps ownership.
 */
struct wt_rec {
	uint16_t type;			/* enum xpu_record_type */
	uint64_t ts_ns;			/* monotonic, 0 for untimed records */
	const void *body;
	uint32_t body_size;
	const void *tail;		/* variable part after body, may be NULL */
	uint32_t tail_size;
	unsigned int nr_str;
	struct {
		uint32_t off;
		const char *s;
		uint32_t len;
	} str[WT_MAX_STR_FIXUPS];
	bool has_stack;
	uint32_t stack_off;
	const uint64_t *ips;		/* kernel frames first, then user, leaf first */
	uint16_t nr_kernel;
	uint16_t nr_user;
	/* Python frames (PY_STACK entries), interned likewise; id stored at py_off */
	const uint64_t *py_frames;
	uint16_t nr_py;
	uint16_t py_flags;
	uint32_t py_off;
	bool must_keep;			/* session/clock/end records: never dropped for queue space */
};

/* zstd's "fast" levels go below 0; -5 compresses about twice as fast as level 1 */
#define XPU_WRITER_LEVEL_FASTEST (-5)
/*
 * The zstd level for the frames after the writer took a queue of backlog bytes (of at most
 * max_bytes), now being the level it used until then: 0 for the trace's own, 1 or
 * XPU_WRITER_LEVEL_FASTEST as the backlog grows (writer_thread.c says why).
 */
int writer_thread__level_for_backlog(size_t backlog, size_t max_bytes, int now);

/* Starts the thread; it owns w until writer_thread__finish(). NULL and errno on failure. */
struct writer_thread *writer_thread__start(struct trace_writer *w, size_t max_queued_bytes);
/* Thread-safe. 0, or -EAGAIN when the queue was full (counted, written as XPU_LOST_WRITER). */
int writer_thread__submit(struct writer_thread *wt, const struct wt_rec *r);
/* Records dropped because the queue was full. */
uint64_t writer_thread__dropped(struct writer_thread *wt);
/* The first error writing the file (negative errno; -ENOSPC on a full disk), or 0. */
int writer_thread__error(struct writer_thread *wt);

/* What the trace holds, for xpu-record's closing lines. */
#define WT_LOST_SOURCES 16
struct wt_summary {
	uint64_t lost[WT_LOST_SOURCES];	/* LOST counts written, by source (0: unknown sources) */
	uint64_t samples;		/* CPU_SAMPLE records written */
	uint64_t file_bytes;		/* written, trailer included */
};

/*
 * Writes everything queued, then a STATS record made of extra[] plus the writer's own byte
 * counts, joins the thread and closes the trace_writer. Fills sum (if not NULL). Returns 0 or
 * the first write error.
 */
int writer_thread__finish(struct writer_thread *wt, const struct xpu_stat_entry *extra,
			  unsigned int nr_extra, struct wt_summary *sum);

/*
 * Queues a batch of records produced by another process (the injected CUPTI library of one
 * target process), in file layout: xpu_record_header + body, 8-byte aligned. String fields in
 * those records are ids local to source_id, defined by XPU_REC_STRING records earlier in the
 * same source; the writer thread remaps them to file-global ids (see xpu_record_string_fields()
 * in common/record_fields.h). Thread-safe. Returns 0, or negative errno if the batch was
 * dropped (counted as XPU_LOST_WRITER).
 */
int writer_thread__submit_foreign(struct writer_thread *wt, uint32_t source_id,
				  const void *records, size_t len);
/* Forgets the string map of a source whose connection closed. Thread-safe. */
void writer_thread__source_closed(struct writer_thread *wt, uint32_t source_id);

#endif
