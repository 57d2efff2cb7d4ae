// SPDX-License-Identifier: MIT
/*
 * The perfetto output's interning: event names, categories, annotation names, frames and call
 * stacks are written once (InternedData of the packet that first uses them) and referred to by
 * iid after. Interning is what makes the file a few times the trace's size rather than the
 * JSON's thirty: a kernel's name, often a kilobyte of C++ template, is written once.
 *
 * The tables grow with the distinct values seen; past PF_INTERN_MAX entries they are cleared
 * and the next packet starts the sequence's incremental state again, so a trace of any length
 * is written in bounded memory. iids keep counting up across a reset: Perfetto forbids giving
 * one iid two values in one trace, even after a reset.
 */
#include <stdlib.h>
#include <string.h>

#include "output/perfetto/perfetto.h"

static const char *const arg_names[ARG_NAMES] = {
	[ARG_CORRELATION_ID] = "correlation_id", [ARG_CBID] = "cbid",
	[ARG_RETURN_CODE] = "return_code", [ARG_BYTES] = "bytes", [ARG_DOMAIN] = "domain",
	[ARG_STATE] = "state", [ARG_WAKER_TID] = "waker_tid", [ARG_REQUEST] = "request",
	[ARG_FD] = "fd", [ARG_RET] = "ret", [ARG_GRID] = "grid", [ARG_BLOCK] = "block",
	[ARG_REGISTERS] = "registers_per_thread", [ARG_STREAM] = "stream", [ARG_SRC] = "src",
	[ARG_DST] = "dst", [ARG_GBPS] = "GB/s", [ARG_VALUE] = "value", [ARG_MEMORY] = "memory",
	[ARG_GRAPH_ID] = "graph_id", [ARG_BACKWARD_NODE] = "backward_node",
	[ARG_FORWARD_SITE] = "forward_site", [ARG_GRAPH_NODE_ID] = "graph_node_id",
	[ARG_SRC_DEVICE] = "src_device", [ARG_DST_DEVICE] = "dst_device", [ARG_FILE] = "file",
	[ARG_DRIVER_US] = "driver_us", [ARG_COLOR] = "color",
};

enum { STR_NAME, STR_CATEGORY };

void pf__intern_maybe_reset(struct perfetto *pf)
{
	if (pf->ninterned < pf->intern_max && pf->arena_n < PF_ARENA_MAX)
		return;
	pf__intern_reset(pf);
}

void pf__intern_reset(struct perfetto *pf)
{
	kmap__free(&pf->strs);
	kmap__free(&pf->frames);
	kmap__free(&pf->stacks);
	memset(&pf->strs, 0, sizeof(pf->strs));
	memset(&pf->frames, 0, sizeof(pf->frames));
	memset(&pf->stacks, 0, sizeof(pf->stacks));
	memset(pf->arg_iid, 0, sizeof(pf->arg_iid));
	pf->arena_n = 0;
	pf->nstrs = 0;
	pf->ninterned = 0;
	pf->mapping_sent = false;
	pf->cleared = true;
}

void pf__intern_free(struct perfetto *pf)
{
	kmap__free(&pf->strs);
	kmap__free(&pf->frames);
	kmap__free(&pf->stacks);
	free(pf->arena);
	free(pf->strs_at);
}

/* One entry {iid, name} of an InternedData field. */
static void put_entry(struct perfetto *pf, uint32_t field, uint64_t iid, const char *s, size_t len)
{
	pb__begin(&pf->interned, field);
	pb__varint(&pf->interned, INTERNED_IID, iid);
	pf__str(&pf->interned, INTERNED_NAME, s, len);
	pb__end(&pf->interned);
	pf->ninterned++;
}

static uint64_t str_iid(struct perfetto *pf, unsigned kind, const char *s, size_t len)
{
	uint64_t h, key;
	uint32_t *v;
	bool ins;

	/*
	 * Names past OUT_NAME_MAX_BYTES are written cut, so they are kept cut (one byte more, for
	 * pf__str to mark the cut): a hostile trace of megabyte names cannot fill the arena.
	 */
	len = len > OUT_NAME_MAX_BYTES ? OUT_NAME_MAX_BYTES + 1 : len;
	h = hash_bytes(s, len);
	key = (uint64_t)kind << 32 | len;
	v = kmap__get(&pf->strs, h, key);

	if (v) {
		const char *at = pf->arena + pf->strs_at[*v].off;

		if (pf->strs_at[*v].len == len && !memcmp(at, s, len))
			return pf->strs_at[*v].iid;
		return 0;	/* two strings of one hash: the caller writes the name inline */
	}
	if (vec_reserve((void **)&pf->arena, &pf->arena_cap, pf->arena_n + len, 1) ||
	    vec_reserve((void **)&pf->strs_at, &pf->strs_cap, pf->nstrs, sizeof(*pf->strs_at)))
		return 0;
	v = kmap__put(&pf->strs, h, key, (uint32_t)pf->nstrs, &ins);
	if (!v)
		return 0;
	memcpy(pf->arena + pf->arena_n, s, len);
	pf->strs_at[pf->nstrs].off = pf->arena_n;
	pf->strs_at[pf->nstrs].len = len;
	pf->strs_at[pf->nstrs].iid = ++pf->next_iid;
	pf->arena_n += len;
	put_entry(pf, kind == STR_NAME ? ID_EVENT_NAMES : ID_EVENT_CATEGORIES, pf->next_iid, s, len);
	return pf->strs_at[pf->nstrs++].iid;
}

uint64_t pf__name_iid(struct perfetto *pf, const char *s, size_t len)
{
	return str_iid(pf, STR_NAME, s, len);
}

uint64_t pf__cat_iid(struct perfetto *pf, const char *s)
{
	return str_iid(pf, STR_CATEGORY, s, strlen(s));
}

uint64_t pf__arg_iid(struct perfetto *pf, enum pf_arg_name a)
{
	if (!pf->arg_iid[a]) {
		pf->arg_iid[a] = ++pf->next_iid;
		put_entry(pf, ID_ANNOTATION_NAMES, pf->arg_iid[a], arg_names[a], strlen(arg_names[a]));
	}
	return pf->arg_iid[a];
}

/*
 * Frames are placed in one mapping of their own: the report has already symbolized them, and
 * Perfetto tells frames of one mapping apart by their rel_pc, so each frame's rel_pc is its id.
 */
static void put_mapping(struct perfetto *pf)
{
	static const char path[] = "[xpu-report symbolized]";

	if (pf->mapping_sent)
		return;
	put_entry(pf, ID_MAPPING_PATHS, PF_MAPPING_IID, path, sizeof(path) - 1);
	pb__begin(&pf->interned, ID_MAPPINGS);
	pb__varint(&pf->interned, INTERNED_IID, PF_MAPPING_IID);
	pb__varint(&pf->interned, MAPPING_PATH_IDS, PF_MAPPING_IID);
	pb__end(&pf->interned);
	pf->mapping_sent = true;
}

static uint64_t frame_iid(struct perfetto *pf, uint32_t frame)
{
	const char *name = strpool__str(&pf->ses->pool, frame);
	size_t len = strlen(name);
	uint32_t *v = kmap__get(&pf->frames, frame, 0);
	bool ins;

	if (v)
		return *v;
	v = kmap__put(&pf->frames, frame, 0, 0, &ins);
	if (!v || pf->next_frame_iid >= UINT32_MAX - 1)
		return 0;
	*v = (uint32_t)++pf->next_frame_iid;
	put_mapping(pf);
	/* the function name shares the frame's iid: two tables, one key */
	put_entry(pf, ID_FUNCTION_NAMES, *v, name, len);
	pb__begin(&pf->interned, ID_FRAMES);
	pb__varint(&pf->interned, INTERNED_IID, *v);
	pb__varint(&pf->interned, FRAME_FUNCTION_NAME, *v);
	pb__varint(&pf->interned, FRAME_MAPPING, PF_MAPPING_IID);
	pb__varint(&pf->interned, FRAME_REL_PC, frame);
	pb__end(&pf->interned);
	return *v;
}

uint64_t pf__stack_iid(struct perfetto *pf, const uint32_t *frames, uint32_t n)
{
	uint64_t h, ids[64], *fid = ids;
	uint32_t *v, i;
	bool ins;

	if (!n)
		return 0;
	h = hash_bytes(frames, (size_t)n * sizeof(*frames));
	v = kmap__get(&pf->stacks, h, n);
	if (v)
		return *v;
	if (n > 64 && !(fid = malloc((size_t)n * sizeof(*fid))))
		return 0;
	for (i = 0; i < n; i++) {
		fid[i] = frame_iid(pf, frames[i]);
		if (!fid[i])
			goto fail;
	}
	v = kmap__put(&pf->stacks, h, n, 0, &ins);
	if (!v || pf->next_stack_iid >= UINT32_MAX - 1)
		goto fail;
	*v = (uint32_t)++pf->next_stack_iid;
	pb__begin(&pf->interned, ID_CALLSTACKS);
	pb__varint(&pf->interned, INTERNED_IID, *v);
	/* root first, as Perfetto's Callstack wants */
	for (i = 0; i < n; i++)
		pb__varint(&pf->interned, CALLSTACK_FRAME_IDS, fid[i]);
	pb__end(&pf->interned);
	pf->ninterned++;
	if (fid != ids)
		free(fid);
	return *v;
fail:
	if (fid != ids)
		free(fid);
	return 0;
}
