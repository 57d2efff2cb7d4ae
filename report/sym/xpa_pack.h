/* SPDX-License-Identifier: MIT */
/*
 * The two entry kinds of a symbol pack (format-spec/ARCHIVE.md 2.4, 2.5): the frame names the
 * recording host gave each address of a file that the trace's stacks touch (NAMES, keyed by
 * build-id), and the host's DWARF walks of the trace's stack copies (WALKS, keyed by the
 * trace's uuid). The writer (cmd/archive.c) builds them with the encoders below; the reader
 * checks every count and offset against the entry's size before anything uses it, since a
 * pack comes from another machine.
 */
#ifndef XPU_REPORT_SYM_XPA_PACK_H
#define XPU_REPORT_SYM_XPA_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/containers.h"

#define XPA_NAMES_MAGIC "XPAN"
#define XPA_WALKS_MAGIC "XPAW"

struct xpa_names_header {
	char magic[4];
	uint32_t naddrs;
	uint32_t nframes;
	uint32_t strings_size;		/* bytes; the last one is NUL, offset 0 is "" */
	uint32_t flags;			/* 0 */
	uint32_t reserved[3];
};
_Static_assert(sizeof(struct xpa_names_header) == 32, "names header");

/* One address (a file offset), sorted, each once; its frames are leaf first. */
struct xpa_names_addr {
	uint64_t off;
	uint32_t first;			/* into the frames */
	uint16_t nplain;		/* the frames without --inline: frames[first, +nplain) */
	uint16_t ninline;		/* with --inline: the next ninline frames */
};
_Static_assert(sizeof(struct xpa_names_addr) == 16, "names addr");

enum xpa_frame_flags {
	XPA_FRAME_OUTER = 1u << 0,	/* the function, not a call inlined into it */
	XPA_FRAME_NAMED = 1u << 1,	/* named by a symbol, not by its address */
};

struct xpa_names_frame {
	uint32_t name;			/* string offset */
	uint32_t file;			/* source file's string offset, 0: unknown */
	uint32_t line;			/* 0: unknown */
	uint32_t flags;			/* enum xpa_frame_flags */
};
_Static_assert(sizeof(struct xpa_names_frame) == 16, "names frame");

struct xpa_walks_header {
	char magic[4];
	uint32_t nwalks;
	uint32_t nips;
	uint32_t reserved;
	uint64_t copies;		/* USER_STACK_COPY records of the trace: a sanity check */
	uint64_t fp_frames, fp_scanned, fp_walks;	/* the walks' frame-pointer fallbacks */
};
_Static_assert(sizeof(struct xpa_walks_header) == 48, "walks header");

/* One walk that replaced its event's stack: the event by (for_type, pid, tid, ts). */
struct xpa_walk {
	uint64_t ts;
	uint32_t pid, tid;
	uint16_t for_type;		/* the owner's record type, as USER_STACK_COPY's */
	uint8_t reason;			/* why it ended (unwind.h enum unwind_stop) */
	uint8_t reserved;
	uint32_t first;			/* into the ips: user frames, leaf first */
	uint32_t nips;
	uint32_t reserved2;
};
_Static_assert(sizeof(struct xpa_walk) == 32, "walk");

/* The most frames one address or one walk may have: the unwinder's own limit (unwind.c). */
#define XPA_MAX_ADDR_FRAMES 256
#define XPA_MAX_WALK_IPS 256

/* ---- reading: a checked view of an entry's decompressed bytes (owned by the caller) -------- */

struct xpa_names {
	const struct xpa_names_header *h;
	const struct xpa_names_addr *addrs;
	const struct xpa_names_frame *frames;
	const char *strings;
};

struct xpa_walks {
	const struct xpa_walks_header *h;
	const struct xpa_walk *walks;
	const uint64_t *ips;
};

/* Whether buf (size bytes, 8-aligned) is a well-formed entry; fills the view. */
bool xpa_names__parse(struct xpa_names *n, const void *buf, size_t size);
bool xpa_walks__parse(struct xpa_walks *w, const void *buf, size_t size);
/* The address at off, or NULL. */
const struct xpa_names_addr *xpa_names__find(const struct xpa_names *n, uint64_t off);
static inline const char *xpa_names__str(const struct xpa_names *n, uint32_t off)
{
	return n->strings + off;
}

/* ---- writing ------------------------------------------------------------------------------- */

struct xpa_names_builder {
	struct xpa_names_addr *addrs;
	size_t naddrs, addrs_cap;
	struct xpa_names_frame *frames;
	size_t nframes, frames_cap;
	struct strpool strs;		/* names and files; ids become offsets at the end */
};

/* Frames of one rendering, leaf first. */
struct xpa_frame_in {
	const char *name, *file;
	uint32_t line;
	uint32_t flags;
};

/* Adds an address with its two renderings; addresses may come in any order. 0 or -ENOMEM. */
int xpa_names__add(struct xpa_names_builder *b, uint64_t off, const struct xpa_frame_in *plain,
		   uint16_t nplain, const struct xpa_frame_in *inl, uint16_t ninline);
/* The entry's bytes (malloc'd, *size of them), addresses sorted. 0 or -ENOMEM. */
int xpa_names__finish(struct xpa_names_builder *b, void **out, size_t *size);
void xpa_names__free(struct xpa_names_builder *b);

struct xpa_walks_builder {
	struct xpa_walks_header h;
	struct xpa_walk *walks;
	size_t nwalks, walks_cap;
	uint64_t *ips;
	size_t nips, ips_cap;
};

int xpa_walks__add(struct xpa_walks_builder *b, const struct xpa_walk *w, const uint64_t *ips);
/* Walks sorted by (for_type, tid, ts, pid). 0 or -ENOMEM. */
int xpa_walks__finish(struct xpa_walks_builder *b, void **out, size_t *size);
void xpa_walks__free(struct xpa_walks_builder *b);
/* The walk of an event, or NULL: walks sorted as xpa_walks__finish leaves them. */
const struct xpa_walk *xpa_walks__find(const struct xpa_walks *w, uint16_t for_type, uint32_t pid,
				       uint32_t tid, uint64_t ts);

#endif
