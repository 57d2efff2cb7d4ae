/* SPDX-License-Identifier: MIT */
/*
 * The one thread that owns the trace_writer (intern tables, open frame). Producers (ring-buffer
 * drain threads, the CUPTI receiver) hand it records through a bounded queue.
 */
#ifndef XPU_WRITER_THREAD_H
#define XPU_WRITER_THREAD_H

#include <stddef.h>
#include <stdint.h>

struct writer_thread;

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
