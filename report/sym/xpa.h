/* SPDX-License-Identifier: MIT */
/*
 * Trace archives (TRACE.xpa, format-spec/ARCHIVE.md): the ELF files a trace's stacks touch,
 * keyed by build-id and zstd-compressed, so a trace symbolizes and unwinds on a machine that
 * lacks the recording host's binaries.
 */
#ifndef XPU_REPORT_SYM_XPA_H
#define XPU_REPORT_SYM_XPA_H

#include <stdbool.h>
#include <stdint.h>

#define XPA_MAGIC "XPUARCH\0"
#define XPA_ENTRY_MAGIC "XPAE"
#define XPA_MAX_ENTRIES 65536
/* Larger files are refused: nothing that size is a real shared library. */
#define XPA_MAX_RAW_BYTES (8ull << 30)

enum xpa_content {
	XPA_CONTENT_ZEROED = 1,		/* unneeded section contents zeroed */
	XPA_CONTENT_NAMES = 2,		/* since 1.1: the host's frame names of a file's addresses */
	XPA_CONTENT_WALKS = 3,		/* since 1.1: the host's walks of a trace's stack copies */
	XPA_CONTENT_NAMES_BY_FILE = 4,	/* since 1.2: NAMES of a file without build-id (xpa_key.h) */
};

/* The minor version written: 2 since files without build-id are packed (ARCHIVE.md 5). */
#define XPA_MINOR 2

enum xpa_entry_flags {
	XPA_ENTRY_DEBUGINFO = 1u << 0,	/* .debug_* sections kept */
};

struct xpa_header {
	char magic[8];
	uint16_t major;
	uint16_t minor;
	uint32_t header_size;
	uint32_t entry_count;
	uint32_t flags;
	uint32_t reserved;
	uint32_t hdr_crc32c;		/* of bytes 0..27 */
};
_Static_assert(sizeof(struct xpa_header) == 32, "xpa header");

struct xpa_entry {
	char magic[4];
	uint32_t entry_size;		/* 64 */
	uint8_t build_id_len;
	uint8_t content;		/* enum xpa_content */
	uint16_t path_len;
	uint8_t build_id[20];
	uint64_t raw_size;
	uint64_t comp_size;
	uint32_t flags;			/* enum xpa_entry_flags */
	uint32_t payload_crc32c;
	uint32_t reserved;
	uint32_t hdr_crc32c;		/* of bytes 0..59 */
};
_Static_assert(sizeof(struct xpa_entry) == 64, "xpa entry");

/* Entries and names are padded to 8 bytes. */
static inline uint64_t xpa_pad8(uint64_t n)
{
	return (n + 7) & ~7ull;
}

struct xpa;

/*
 * What the entries extracted for one report may hold in memory, in all (--archive-max): the
 * bytes of their memfds that are not zero (zeroed sections are holes and cost nothing). An
 * archive of kilobytes can decompress to gigabytes; the cap keeps that out of memory.
 */
#define XPA_DEFAULT_MAX_HELD_BYTES (1ull << 30)

struct xpa_budget {
	uint64_t max_bytes;		/* 0: XPA_DEFAULT_MAX_HELD_BYTES */
	uint64_t held_bytes;		/* by the entries extracted so far */
	bool said;			/* the cap stopped an entry, and that was said */
};

/* Opens TRACE.xpa next to trace_path if it exists (*out NULL otherwise). 0 or -ENOMEM. */
int xpa__open_for_trace(struct xpa **out, const char *trace_path);
/*
 * A memfd holding the file with this build-id (the caller's own descriptor: close it), or a
 * negative errno: -ENOENT (not there), -EINVAL (damaged or not an ELF file), -EFBIG (larger
 * than file_size, the size the trace recorded for the file when not 0, or past the budget).
 * An entry is decompressed once, however many DSO records name its build-id, and only after
 * its ELF header checks out.
 */
int xpa__extract(struct xpa *a, const uint8_t *build_id, unsigned int len, uint64_t file_size,
		 struct xpa_budget *budget);
/*
 * A symbol pack's entries (sym/xpa_pack.h), decompressed and checked on first use, held by the
 * archive until xpa__close: the names of the file with this key (sym/xpa_key.h: by build-id,
 * or for a file without one by its recorded size, mtime and path, the path compared byte for
 * byte), the walks of the trace with this uuid; NULL when there are none or the entry is
 * damaged or past the budget (said once).
 */
struct xpa_names;
struct xpa_walks;

/* A recorded path longer than this is not packed by identity (an entry's path_len is a u16). */
#define XPA_KEY_PATH_MAX 4095

/* Which NAMES entry holds a file: made from its DSO record by sym/xpa_key.h. */
struct xpa_file_key {
	uint8_t content;		/* XPA_CONTENT_NAMES or XPA_CONTENT_NAMES_BY_FILE */
	uint8_t len;			/* bytes of key */
	uint8_t key[20];
	const char *path;		/* BY_FILE: the path the entry must hold, byte for byte */
	uint16_t path_len;		/* of path; 0 for NAMES */
};

const struct xpa_names *xpa__names(struct xpa *a, const struct xpa_file_key *key,
				   struct xpa_budget *budget);
const struct xpa_walks *xpa__walks(struct xpa *a, const uint8_t uuid[16], struct xpa_budget *budget);
void xpa__close(struct xpa *a);

#endif
