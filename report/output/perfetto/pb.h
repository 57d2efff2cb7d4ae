/* SPDX-License-Identifier: MIT */
/*
 * A protobuf wire-format writer, just what the perfetto output needs: varints, fixed64,
 * doubles, length-delimited bytes and nested messages.
 *
 * Written here rather than with protobuf-c (which the pprof output uses) because the perfetto
 * output streams: a trace is one repeated field of packets, each packet is encoded into one
 * reused buffer and written at once, so memory stays one packet whatever the trace's length.
 * protobuf-c wants the whole message tree built as C structs first (and the generated code of
 * Perfetto's full schema), which is the opposite of bounded. A nested message's length comes
 * before its bytes, so a nested message is opened at an offset and closed by moving its bytes
 * past the length once known: packets are small, the move is cheap.
 */
#ifndef XPU_REPORT_OUTPUT_PERFETTO_PB_H
#define XPU_REPORT_OUTPUT_PERFETTO_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PB_MAX_DEPTH 8

struct pb {
	uint8_t *b;
	size_t n, cap;
	size_t open[PB_MAX_DEPTH];	/* where each open nested message's bytes start */
	unsigned depth;
	bool oom;			/* an allocation failed: the buffer is unusable until reset */
};

void pb__reset(struct pb *p);
void pb__free(struct pb *p);
void pb__varint(struct pb *p, uint32_t field, uint64_t v);
void pb__sint(struct pb *p, uint32_t field, int64_t v);	/* int32/int64 fields (two's complement) */
void pb__fixed64(struct pb *p, uint32_t field, uint64_t v);
void pb__double(struct pb *p, uint32_t field, double v);
void pb__bytes(struct pb *p, uint32_t field, const void *s, size_t len);
void pb__str(struct pb *p, uint32_t field, const char *s);
/* Opens a nested message (field, length-delimited); pb__end() closes the innermost one. */
void pb__begin(struct pb *p, uint32_t field);
void pb__end(struct pb *p);

#endif
