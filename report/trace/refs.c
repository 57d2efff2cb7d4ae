// SPDX-License-Identifier: MIT
/*
 * The trace's ids: lookups (an unknown id answers NULL) and the integrity count taken once at
 * load, of every reference to an id that no record defines.
 */
#include <string.h>

#include "trace/load.h"
#include "trace/trace.h"

const char *trace__string(const struct trace *t, uint32_t id)
{
	uint32_t *v = id ? kmap__get(&t->string_ids, id, 0) : NULL;

	return v ? t->strings[*v].s : NULL;
}

const struct tr_stack *trace__stack(const struct trace *t, uint32_t id)
{
	uint32_t *v = id ? kmap__get(&t->stack_ids, id, 0) : NULL;

	return v ? &t->stacks[*v] : NULL;
}

const struct tr_py_stack *trace__py_stack(const struct trace *t, uint32_t id)
{
	uint32_t *v = id ? kmap__get(&t->py_stack_ids, id, 0) : NULL;

	return v ? &t->py_stacks[*v] : NULL;
}

const struct tr_py_code *trace__py_code(const struct trace *t, uint32_t id)
{
	uint32_t *v = id ? kmap__get(&t->py_code_ids, id, 0) : NULL;

	return v ? &t->py_codes[*v] : NULL;
}

const struct tr_dso *trace__dso(const struct trace *t, uint32_t id)
{
	uint32_t *v = id ? kmap__get(&t->dso_ids, id, 0) : NULL;

	return v ? &t->dsos[*v] : NULL;
}

/* 1 when id is set but names no string (a reference to count), else 0 */
static int bad_str(const struct trace *t, uint32_t id)
{
	return id && !kmap__get(&t->string_ids, id, 0);
}

/* The fields of d that refer to ids of a table (strings, stacks, files), at most max. */
static size_t ref_fields(const struct xpu_record_desc *d, const struct xpu_record_field **refs,
			 size_t max)
{
	const struct xpu_record_field *f;
	size_t n = 0;

	xpu_record_for_each_field(f, d) {
		if (!f->defines && n < max &&
		    (f->kind == XPU_FIELD_STR || f->kind == XPU_FIELD_STACK ||
		     f->kind == XPU_FIELD_PY_STACK || f->kind == XPU_FIELD_DSO))
			refs[n++] = f;
	}
	return n;
}

/*
 * The references of one record's struct (refs: its row's reference fields) to ids nothing
 * defines. A mapping's file is never 0: there id 0 is a reference to nothing, elsewhere none.
 */
static void count_record_refs(struct trace *t, const struct xpu_record_field *const *refs,
			      size_t nrefs, bool zero_dso_is_ref, const uint8_t *r)
{
	size_t k;

	for (k = 0; k < nrefs; k++) {
		uint32_t id;

		memcpy(&id, r + refs[k]->offset, sizeof(id));
		if (refs[k]->kind == XPU_FIELD_STR)
			t->bad_string_refs += bad_str(t, id);
		else if (refs[k]->kind == XPU_FIELD_STACK)
			t->bad_stack_refs += id && !kmap__get(&t->stack_ids, id, 0);
		else if (refs[k]->kind == XPU_FIELD_PY_STACK)
			t->bad_stack_refs += id && !kmap__get(&t->py_stack_ids, id, 0);
		else
			t->bad_dso_refs += (id || zero_dso_is_ref) && !kmap__get(&t->dso_ids, id, 0);
	}
}

/*
 * Counts every reference to an id no record defines, once, by the table of record types over
 * the records kept as their structs (load__kept); lookups then only answer. The SESSION record
 * is kept alone, and a PY_CODE as struct tr_py_code (its two strings).
 */
void load__count_bad_refs(struct trace *t)
{
	const struct xpu_record_field *refs[XPU_RECORD_FIELDS_MAX];
	unsigned int type;
	size_t i, nrefs;

	if (t->has_session) {
		nrefs = ref_fields(xpu_record_desc(XPU_REC_SESSION), refs, XPU_RECORD_FIELDS_MAX);
		count_record_refs(t, refs, nrefs, false, (const uint8_t *)&t->session);
	}
	for (i = 0; i < t->npy_codes; i++)
		t->bad_string_refs += bad_str(t, t->py_codes[i].name_str) +
				      bad_str(t, t->py_codes[i].filename_str);
	for (type = 1; type <= XPU_REC_TYPE_MAX_KNOWN; type++) {
		const struct xpu_record_desc *d = xpu_record_desc(type);
		const uint8_t *recs;
		size_t n, stride;

		if (!d || !(n = load__kept(t, (uint16_t)type, &recs, &stride)) ||
		    !(nrefs = ref_fields(d, refs, XPU_RECORD_FIELDS_MAX)))
			continue;
		for (i = 0; i < n; i++)
			count_record_refs(t, refs, nrefs, type == XPU_REC_MAPPING, recs + i * stride);
	}
}
