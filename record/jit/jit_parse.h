/* SPDX-License-Identifier: MIT */
/*
 * Parsers of the files JIT runtimes write for profilers: perf maps (/tmp/perf-PID.map, one
 * `START SIZE name` line per function, hex) and jitdump files (a header, then JIT_CODE_LOAD /
 * MOVE / DEBUG_INFO / CLOSE / UNWINDING_INFO records). The target writes both: every length is
 * checked, a malformed line or record is counted and skipped, never trusted. No I/O policy
 * here (jit_maps.c opens the files), so the unit tests feed them memory.
 */
#ifndef XPU_RECORD_JIT_PARSE_H
#define XPU_RECORD_JIT_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xpu_format.h"

/* One named range; name is not NUL-terminated and valid only during the callback. */
struct jit_sym {
	uint64_t start, size;
	uint64_t load_ts_ns;		/* jitdump with a CLOCK_MONOTONIC timestamp, else 0 */
	const char *name;
	uint32_t name_len;		/* at most XPU_JIT_NAME_MAX_BYTES (longer names are cut) */
};

/* Returns 0 to go on, non-zero to stop (the caller's symbol cap). */
typedef int (*jit_sym_fn)(void *ctx, const struct jit_sym *s);

struct jit_parse_stats {
	uint64_t symbols;		/* passed to the callback */
	uint64_t malformed;		/* lines or records skipped */
};

/* Longest perf-map line read; a longer one is malformed. */
#define JIT_MAP_LINE_MAX 4096
/* Bytes of a perf map read at most; what lies beyond is one malformed entry. */
#define JIT_MAP_MAX_BYTES (256ull << 20)

/*
 * One perf-map line (without or with its newline): `START SIZE name`, START and SIZE hex
 * with an optional 0x. 0, or -EINVAL for a malformed line (no name, zero size, overflow).
 */
int jit_parse__map_line(const char *line, size_t len, struct jit_sym *out);
/* Every line of f; stops early when fn returns non-zero. */
void jit_parse__perf_map(FILE *f, jit_sym_fn fn, void *ctx, struct jit_parse_stats *st);

/* Reads len bytes at off of a jitdump; 0, or negative when they are not all there. */
typedef int (*jit_read_fn)(void *src, uint64_t off, void *buf, size_t len);

/*
 * A jitdump of size bytes: its JIT_CODE_LOAD records, and JIT_CODE_MOVE records of code loaded
 * earlier in the file, as symbols; other records are skipped by their total_size. A bad header
 * is one malformed entry; a record whose size does not fit ends the parse (counted).
 */
void jit_parse__jitdump(jit_read_fn rd, void *src, uint64_t size, jit_sym_fn fn, void *ctx,
			struct jit_parse_stats *st);

/* jitdump layout (the format perf defines in tools/perf/util/jitdump.h) */
#define JITDUMP_MAGIC 0x4A695444u	/* "JiTD" in the writer's byte order */
#define JITDUMP_FLAGS_ARCH_TIMESTAMP 1ull

enum jitdump_record_id {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

struct jitdump_header {
	uint32_t magic;
	uint32_t version;
	uint32_t total_size;		/* of this header */
	uint32_t elf_mach;
	uint32_t pad1;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;
};

struct jitdump_rec_header {
	uint32_t id;
	uint32_t total_size;		/* of the record, header included */
	uint64_t timestamp;
};

/* JIT_CODE_LOAD body: then the NUL-terminated name, then code_size bytes of code */
struct jitdump_code_load {
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

struct jitdump_code_move {
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

#endif
