// SPDX-License-Identifier: MIT
/*
 * .eh_frame / .debug_frame to xpu_cfi_row tables. Our own interpreter of the CFA instructions
 * (not libdw's): the recorder must build tables for hundreds of MB of code quickly and only
 * needs the rules for CFA, rbp and the return address. Every FDE is run once; each location
 * change emits a row; a gap row (NONE) ends each FDE so addresses between FDEs do not inherit
 * the previous function's rule.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_build.h"

#define DW_REG_RBP 6
#define DW_REG_RSP 7
#define DW_REG_RA 16
#define CFI_STATE_STACK 8

enum cfa_kind { CFA_REG, CFA_DEREF_RBP, CFA_PLT, CFA_BAD };
/* RULE_AT_RBP: saved at the address rbp + rbp_off (DW_CFA_expression DW_OP_breg6 N) */
enum reg_rule { RULE_SAME, RULE_OFFSET, RULE_UNDEF, RULE_BAD, RULE_AT_RBP };

struct cfi_state {
	uint8_t cfa_kind, rbp_rule, ra_rule, plt_thr;
	uint32_t cfa_reg;
	int64_t cfa_off, rbp_off, ra_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_reg;
	uint8_t fde_enc;
	bool has_z, signal;
	const uint8_t *insns, *insns_end;
};

/* a cursor over one section's bytes, with the section's address for pc-relative pointers */
struct cur {
	const uint8_t *p, *end, *base;
	uint64_t addr;
	bool bad;
};

struct rowbuf {
	struct xpu_cfi_row *rows;
	size_t nr, cap;
	bool oom;
};

static uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t rd_sleb(struct cur *c)
{
	int64_t v = 0;
	unsigned int shift = 0;
	uint8_t b = 0;

	while (c->p < c->end) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	c->bad = true;
	return 0;
}

static uint64_t rd_n(struct cur *c, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

/* DW_EH_PE_* pointer: format in the low nibble, pcrel (0x10) the only application we resolve */
static uint64_t rd_ptr(struct cur *c, uint8_t enc)
{
	uint64_t here = c->addr + (uint64_t)(c->p - c->base), v;

	if (enc == 0xff)
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = rd_n(c, 8); break;
	case 0x01: v = rd_uleb(c); break;
	case 0x02: v = rd_n(c, 2); break;
	case 0x03: v = rd_n(c, 4); break;
	case 0x04: v = rd_n(c, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(c); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_n(c, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_n(c, 4); break;
	case 0x0c: v = rd_n(c, 8); break;
	default: c->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: return v;
	case 0x10: return v + here;
	default: c->bad = true; return 0;
	}
}

static void rows_add(struct rowbuf *b, uint64_t pc, const struct xpu_cfi_row *r)
{
	struct xpu_cfi_row *n;

	if (b->oom || pc > UINT32_MAX)
		return;
	if (b->nr == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;

		n = realloc(b->rows, cap * sizeof(*n));
		if (!n) {
			b->oom = true;
			return;
		}
		b->rows = n;
		b->cap = cap;
	}
	b->rows[b->nr] = *r;
	b->rows[b->nr].pc = (uint32_t)pc;
	b->nr++;
}

/* The row the walk evaluates for a state; UNSUPPORTED when it cannot. */
static struct xpu_cfi_row state_row(const struct cfi_state *s, bool signal)
{
	struct xpu_cfi_row r = { .kind = XPU_CFI_UNSUPPORTED };
	bool at_rbp = false;

	if (signal) {
		r.kind = XPU_CFI_SIGNAL;
		return r;
	}
	if (s->ra_rule == RULE_UNDEF) {
		r.kind = XPU_CFI_END;
		return r;
	}
	if (s->ra_rule != RULE_OFFSET || s->ra_off != -8)
		return r;
	if (s->rbp_rule == RULE_OFFSET) {
		if (s->rbp_off % 8 || s->rbp_off < -1024 || s->rbp_off > 1016)
			return r;
		r.rbp_off8 = (int8_t)(s->rbp_off / 8);
	} else if (s->rbp_rule == RULE_AT_RBP) {
		if (s->cfa_kind != CFA_DEREF_RBP || s->rbp_off % 8 || s->rbp_off < -1024 ||
		    s->rbp_off > 1016)
			return r;
		r.rbp_off8 = (int8_t)(s->rbp_off / 8);
		at_rbp = true;
	} else if (s->rbp_rule != RULE_SAME) {
		return r;
	}
	switch (s->cfa_kind) {
	case CFA_REG:
		if ((s->cfa_reg != DW_REG_RSP && s->cfa_reg != DW_REG_RBP) || s->cfa_off < 0 ||
		    s->cfa_off > UINT16_MAX)
			return r;
		r.kind = s->cfa_reg == DW_REG_RSP ? XPU_CFI_RSP : XPU_CFI_RBP;
		r.cfa_off = (uint16_t)s->cfa_off;
		break;
	case CFA_DEREF_RBP:
		if (s->cfa_off < INT16_MIN || s->cfa_off > INT16_MAX)
			return r;
		r.kind = at_rbp ? XPU_CFI_RBP_DEREF_AT_RBP : XPU_CFI_RBP_DEREF;
		r.cfa_off = (uint16_t)(int16_t)s->cfa_off;
		break;
	case CFA_PLT:
		if (s->cfa_off < 0 || s->cfa_off > UINT16_MAX || r.rbp_off8)
			return r;
		r.kind = XPU_CFI_PLT;
		r.cfa_off = (uint16_t)s->cfa_off;
		r.rbp_off8 = (int8_t)s->plt_thr;
		break;
	default:
		return r;
	}
	return r;
}

/* Unsupported rows carry no operands, so that equal rules merge. */
static struct xpu_cfi_row state_row_clean(const struct cfi_state *s, bool signal)
{
	struct xpu_cfi_row r = state_row(s, signal);

	if (r.kind == XPU_CFI_UNSUPPORTED)
		r.cfa_off = r.rbp_off8 = 0;
	return r;
}

/* A register saved at rbp + N: the expression is exactly DW_OP_breg6 N. */
static bool rbp_at_rbp(const uint8_t *e, uint64_t len, int64_t *off)
{
	struct cur c = { .p = e + 1, .end = e + len, .base = e };

	if (!len || e[0] != 0x76)		/* DW_OP_breg6 */
		return false;
	*off = rd_sleb(&c);
	return !c.bad && c.p == c.end;
}

/*
 * The CFA expressions compilers emit on x86-64: DW_OP_breg6 N; DW_OP_deref (a function that
 * realigns its stack saved the CFA below rbp) and the lazy-binding PLT's
 * rsp + N + ((rip & 15) >= T) << 3.
 */
static void cfa_expr(struct cfi_state *s, const uint8_t *e, uint64_t len)
{
	struct cur c = { .p = e, .end = e + len, .base = e };
	int64_t off;

	s->cfa_kind = CFA_BAD;
	if (!len)
		return;
	if (e[0] == 0x76) {			/* DW_OP_breg6 */
		c.p++;
		off = rd_sleb(&c);
		if (!c.bad && c.end - c.p == 1 && *c.p == 0x06) {
			s->cfa_kind = CFA_DEREF_RBP;
			s->cfa_off = off;
		}
		return;
	}
	if (e[0] == 0x77) {			/* DW_OP_breg7 */
		c.p++;
		off = rd_sleb(&c);
		if (c.bad || c.end - c.p != 9)
			return;
		if (c.p[0] == 0x80 && c.p[1] == 0 && c.p[2] == 0x3f && c.p[3] == 0x1a &&
		    c.p[4] >= 0x30 && c.p[4] <= 0x3f && c.p[5] == 0x2a && c.p[6] == 0x33 &&
		    c.p[7] == 0x24 && c.p[8] == 0x22) {
			s->cfa_kind = CFA_PLT;
			s->cfa_off = off;
			s->plt_thr = c.p[4] - 0x30;
		}
	}
}

static void set_offset(struct cfi_state *s, uint64_t reg, int64_t off)
{
	if (reg == DW_REG_RBP) {
		s->rbp_rule = RULE_OFFSET;
		s->rbp_off = off;
	} else if (reg == DW_REG_RA) {
		s->ra_rule = RULE_OFFSET;
		s->ra_off = off;
	}
}

static void set_rule(struct cfi_state *s, uint64_t reg, uint8_t rule)
{
	if (reg == DW_REG_RBP)
		s->rbp_rule = rule;
	else if (reg == DW_REG_RA)
		s->ra_rule = rule;
}

static void restore_reg(struct cfi_state *s, const struct cfi_state *init, uint64_t reg)
{
	if (reg == DW_REG_RBP) {
		s->rbp_rule = init->rbp_rule;
		s->rbp_off = init->rbp_off;
	} else if (reg == DW_REG_RA) {
		s->ra_rule = init->ra_rule;
		s->ra_off = init->ra_off;
	}
}

struct run {
	const struct cie *cie;
	const struct cfi_state *init;	/* after the CIE's instructions; NULL while running them */
	struct rowbuf *out;		/* NULL while running the CIE's instructions */
	struct cfi_build_stats *st;
	uint64_t loc, end;
	bool bad;
};

static void emit(struct run *r, const struct cfi_state *s, uint64_t next)
{
	struct xpu_cfi_row row;

	if (!r->out || next <= r->loc)
		return;
	row = r->bad ? (struct xpu_cfi_row){ .kind = XPU_CFI_UNSUPPORTED } :
		       state_row_clean(s, r->cie->signal);
	if (row.kind == XPU_CFI_UNSUPPORTED)
		r->st->unsupported_rows++;
	rows_add(r->out, r->loc, &row);
}

static void advance(struct run *r, const struct cfi_state *s, uint64_t delta)
{
	uint64_t next = r->loc + delta;

	if (next > r->end)
		next = r->end;
	emit(r, s, next);
	r->loc = next;
}

/* Runs CFA instructions [p, end) over s. Unknown opcodes make the rest unsupported. */
static void run_insns(struct run *r, struct cfi_state *s, const uint8_t *p, const uint8_t *end,
		      uint64_t sec_addr, const uint8_t *sec_base)
{
	struct cfi_state stack[CFI_STATE_STACK];
	int depth = 0;
	struct cur c = { .p = p, .end = end, .base = sec_base, .addr = sec_addr };
	uint64_t reg, len;
	int64_t off;

	while (c.p < c.end && !c.bad && r->loc < r->end) {
		uint8_t op = *c.p++, lo = op & 0x3f;

		switch (op >> 6) {
		case 1:
			advance(r, s, lo * r->cie->code_align);
			continue;
		case 2:
			set_offset(s, lo, (int64_t)rd_uleb(&c) * r->cie->data_align);
			continue;
		case 3:
			if (r->init)
				restore_reg(s, r->init, lo);
			continue;
		}
		switch (op) {
		case 0x00:
			break;
		case 0x01: {			/* set_loc */
			uint64_t to = rd_ptr(&c, r->cie->fde_enc);

			if (to > r->loc)
				advance(r, s, to - r->loc);
			break;
		}
		case 0x02: advance(r, s, rd_n(&c, 1) * r->cie->code_align); break;
		case 0x03: advance(r, s, rd_n(&c, 2) * r->cie->code_align); break;
		case 0x04: advance(r, s, rd_n(&c, 4) * r->cie->code_align); break;
		case 0x05:
			reg = rd_uleb(&c);
			set_offset(s, reg, (int64_t)rd_uleb(&c) * r->cie->data_align);
			break;
		case 0x06:
			reg = rd_uleb(&c);
			if (r->init)
				restore_reg(s, r->init, reg);
			break;
		case 0x07: set_rule(s, rd_uleb(&c), RULE_UNDEF); break;
		case 0x08: set_rule(s, rd_uleb(&c), RULE_SAME); break;
		case 0x09:
			reg = rd_uleb(&c);
			rd_uleb(&c);
			set_rule(s, reg, RULE_BAD);
			break;
		case 0x0a:
			if (depth < CFI_STATE_STACK)
				stack[depth] = *s;
			depth++;
			break;
		case 0x0b:
			if (depth > 0 && --depth < CFI_STATE_STACK) {
				/* the CFA rule is part of the remembered state, as in libgcc */
				*s = stack[depth];
			} else {
				r->bad = true;
			}
			break;
		case 0x0c:
			s->cfa_kind = CFA_REG;
			s->cfa_reg = (uint32_t)rd_uleb(&c);
			s->cfa_off = (int64_t)rd_uleb(&c);
			break;
		case 0x0d:
			if (s->cfa_kind != CFA_REG)
				s->cfa_off = 0;
			s->cfa_kind = CFA_REG;
			s->cfa_reg = (uint32_t)rd_uleb(&c);
			break;
		case 0x0e: s->cfa_off = (int64_t)rd_uleb(&c); break;
		case 0x0f:
			len = rd_uleb(&c);
			if (len > (uint64_t)(c.end - c.p)) {
				c.bad = true;
				break;
			}
			cfa_expr(s, c.p, len);
			c.p += len;
			break;
		case 0x10:
		case 0x16:			/* expression, val_expression */
			reg = rd_uleb(&c);
			len = rd_uleb(&c);
			if (len > (uint64_t)(c.end - c.p)) {
				c.bad = true;
				break;
			}
			if (op == 0x10 && reg == DW_REG_RBP && rbp_at_rbp(c.p, len, &off)) {
				s->rbp_rule = RULE_AT_RBP;
				s->rbp_off = off;
			} else {
				set_rule(s, reg, RULE_BAD);
			}
			c.p += len;
			break;
		case 0x11:
			reg = rd_uleb(&c);
			set_offset(s, reg, rd_sleb(&c) * r->cie->data_align);
			break;
		case 0x12:
			s->cfa_kind = CFA_REG;
			s->cfa_reg = (uint32_t)rd_uleb(&c);
			s->cfa_off = rd_sleb(&c) * r->cie->data_align;
			break;
		case 0x13: s->cfa_off = rd_sleb(&c) * r->cie->data_align; break;
		case 0x14:
		case 0x15:			/* val_offset(_sf): a value, not a saved slot */
			reg = rd_uleb(&c);
			off = op == 0x14 ? (int64_t)rd_uleb(&c) : rd_sleb(&c);
			(void)off;
			set_rule(s, reg, RULE_BAD);
			break;
		case 0x2e: rd_uleb(&c); break;	/* GNU_args_size */
		case 0x2f:			/* GNU_negative_offset_extended */
			reg = rd_uleb(&c);
			set_offset(s, reg, -(int64_t)rd_uleb(&c) * r->cie->data_align);
			break;
		default:
			c.bad = true;
			break;
		}
	}
	if (c.bad) {
		r->st->bad_insns++;
		r->bad = true;
	}
}

static bool in_exec_load(const struct cfi_table *t, uint64_t pc, uint64_t len)
{
	int i;

	for (i = 0; i < t->nloads; i++)
		if (pc >= t->loads[i].vaddr && pc + len <= t->loads[i].vaddr + t->loads[i].filesz)
			return true;
	return false;
}

/* Parses the CIE at off; false if malformed or of a kind we do not read. */
static bool parse_cie(const uint8_t *base, size_t size, uint64_t off, bool eh, struct cie *cie)
{
	struct cur c = { .p = base + off, .end = base + size, .base = base };
	uint64_t len = rd_n(&c, 4), id;
	const char *aug;
	uint8_t version;

	memset(cie, 0, sizeof(*cie));
	if (len == 0xffffffff)
		len = rd_n(&c, 8);
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return false;
	c.end = c.p + len;
	id = eh ? rd_n(&c, 4) : rd_n(&c, 4);
	if (c.bad || id != (eh ? 0 : 0xffffffff))
		return false;
	version = (uint8_t)rd_n(&c, 1);
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p >= c.end)
		return false;
	c.p++;
	if (version >= 4)
		rd_n(&c, 2);		/* address_size, segment_selector_size */
	cie->code_align = rd_uleb(&c);
	cie->data_align = rd_sleb(&c);
	cie->ra_reg = version == 1 ? (uint32_t)rd_n(&c, 1) : (uint32_t)rd_uleb(&c);
	cie->fde_enc = 0;		/* absptr */
	if (*aug == 'z') {
		uint64_t alen = rd_uleb(&c);
		const uint8_t *aend = c.p + alen;

		if (alen > (uint64_t)(c.end - c.p))
			return false;
		cie->has_z = true;
		for (aug++; *aug; aug++) {
			if (*aug == 'R') {
				cie->fde_enc = (uint8_t)rd_n(&c, 1);
			} else if (*aug == 'L') {
				rd_n(&c, 1);
			} else if (*aug == 'P') {
				uint8_t penc = (uint8_t)rd_n(&c, 1);

				rd_ptr(&c, penc & 0x7f);
			} else if (*aug == 'S') {
				cie->signal = true;
			} else if (*aug != 'B') {
				break;		/* unknown: the length lets us skip the rest */
			}
		}
		c.p = aend;
	} else if (*aug) {
		return false;		/* eh, or other augmentations without a size */
	}
	if (c.bad || cie->ra_reg != DW_REG_RA || c.p > c.end)
		return false;
	cie->insns = c.p;
	cie->insns_end = c.end;
	return true;
}

/*
 * Walks every FDE of one section. eh: .eh_frame (CIE pointers relative, pc-relative
 * pointers), else .debug_frame (CIE offsets absolute, 8-byte addresses).
 */
static void parse_section(struct cfi_table *t, struct rowbuf *b, const uint8_t *base,
			  size_t size, uint64_t sec_addr, bool eh)
{
	struct cur c = { .p = base, .end = base + size, .base = base, .addr = sec_addr };
	struct cie cie;
	uint64_t cached_cie = UINT64_MAX;
	bool cie_ok = false;

	while (c.p + 4 <= c.end) {
		const uint8_t *next;
		uint64_t len = rd_n(&c, 4), id, id_pos, pc, range;
		struct cfi_state s, init;
		struct run r;

		if (len == 0) {
			if (eh)
				break;		/* terminator */
			continue;
		}
		if (len == 0xffffffff)
			len = rd_n(&c, 8);
		if (c.bad || len > (uint64_t)(c.end - c.p))
			break;
		next = c.p + len;
		id_pos = (uint64_t)(c.p - base);
		id = rd_n(&c, 4);
		if (eh ? id == 0 : id == 0xffffffff) {
			t->st.cies++;
			c.p = next;
			continue;
		}
		t->st.fdes++;
		id = eh ? id_pos - id : id;
		if (id != cached_cie) {
			cached_cie = id;
			cie_ok = id < size && parse_cie(base, size, id, eh, &cie);
		}
		if (!cie_ok) {
			t->st.fdes_skipped++;
			c.p = next;
			continue;
		}
		c.end = next;
		pc = rd_ptr(&c, eh ? cie.fde_enc : 0);
		range = rd_ptr(&c, eh ? (cie.fde_enc & 0x0f) : 0);
		if (cie.has_z) {
			uint64_t alen = rd_uleb(&c);

			if (alen > (uint64_t)(c.end - c.p))
				c.bad = true;
			else
				c.p += alen;
		}
		c.end = base + size;
		if (c.bad || !range || !in_exec_load(t, pc, range)) {
			t->st.fdes_skipped++;
			c.bad = false;
			c.p = next;
			continue;
		}
		if (cie.signal)
			t->st.signal_fdes++;
		memset(&s, 0, sizeof(s));
		s.cfa_kind = CFA_REG;
		s.ra_rule = RULE_UNDEF;
		r = (struct run){ .cie = &cie, .st = &t->st, .loc = pc, .end = pc + range };
		/* the CIE's instructions set the initial rules; they emit no rows */
		run_insns(&r, &s, cie.insns, cie.insns_end, sec_addr, base);
		init = s;
		r.init = &init;
		r.out = b;
		r.loc = pc;
		run_insns(&r, &s, c.p, next, sec_addr, base);
		emit(&r, &s, r.end);
		rows_add(b, pc + range, &(struct xpu_cfi_row){ .kind = XPU_CFI_NONE });
		c.p = next;
	}
}

static int cmp_row(const void *a, const void *b)
{
	const struct xpu_cfi_row *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	/* at one pc a function's row wins over the previous function's end */
	return (x->kind == XPU_CFI_NONE) - (y->kind == XPU_CFI_NONE);
}

static bool same_rule(const struct xpu_cfi_row *a, const struct xpu_cfi_row *b)
{
	return a->kind == b->kind && a->rbp_off8 == b->rbp_off8 && a->cfa_off == b->cfa_off;
}

/* Sorts, keeps one row per pc and drops rows that repeat the rule before them. */
static void rows_finish(struct rowbuf *b)
{
	size_t i, n = 0;

	qsort(b->rows, b->nr, sizeof(*b->rows), cmp_row);
	for (i = 0; i < b->nr; i++) {
		/* the first row at a pc wins, even when it was merged into the rule before it */
		if (i && b->rows[i - 1].pc == b->rows[i].pc)
			continue;
		if (n && same_rule(&b->rows[n - 1], &b->rows[i]))
			continue;
		b->rows[n++] = b->rows[i];
	}
	b->nr = n;
}

const struct xpu_cfi_row *cfi_table__find(const struct cfi_table *t, uint64_t pc)
{
	size_t lo = 0, hi = t->nr;

	if (!t->nr || pc < t->rows[0].pc || pc > UINT32_MAX)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

/*
 * PLT sections without an FDE (linkers may omit them): .plt entries push a relocation index
 * 11 bytes in (PLT0 pushes at 0 and jumps at 6); .plt.sec and .plt.got entries only jump.
 */
static void synth_plt(struct cfi_table *t, struct rowbuf *b, const char *name, uint64_t addr,
		      uint64_t size)
{
	struct xpu_cfi_row r = { .kind = XPU_CFI_RSP, .cfa_off = 8 };
	struct cfi_table cur = { .rows = b->rows, .nr = b->nr };
	const struct xpu_cfi_row *have = cfi_table__find(&cur, addr);

	if (!size || (have && have->kind != XPU_CFI_NONE) || !in_exec_load(t, addr, size))
		return;
	if (!strcmp(name, ".plt"))
		r = (struct xpu_cfi_row){ .kind = XPU_CFI_PLT, .cfa_off = 8, .rbp_off8 = 11 };
	else if (strcmp(name, ".plt.sec") && strcmp(name, ".plt.got"))
		return;
	t->st.plt_synth++;
	rows_add(b, addr, &r);
	rows_add(b, addr + size, &(struct xpu_cfi_row){ .kind = XPU_CFI_NONE });
}

static int read_loads(Elf *elf, struct cfi_table *t)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n && t->nloads < CFI_MAX_LOADS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		t->loads[t->nloads++] = (struct cfi_load){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	return t->nloads ? 0 : -ENOEXEC;
}

int cfi_table__build(int fd, struct cfi_table *t)
{
	struct rowbuf b = { 0 };
	Elf_Scn *scn = NULL, *eh = NULL, *dbg = NULL;
	GElf_Ehdr eh_hdr;
	size_t shstrndx;
	int err = -ENOEXEC, pass;
	Elf *elf;

	memset(t, 0, sizeof(*t));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh_hdr) ||
	    eh_hdr.e_ident[EI_CLASS] != ELFCLASS64 || eh_hdr.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		goto cleanup;
	err = read_loads(elf, t);
	if (err)
		goto cleanup;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame") &&
		    (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND))
			eh = scn;
		else if (!strcmp(name, ".debug_frame") && sh.sh_type == SHT_PROGBITS)
			dbg = scn;
	}
	if (!eh && !dbg) {
		err = -ENOENT;
		goto cleanup;
	}
	for (pass = 0; pass < 2; pass++) {
		Elf_Scn *s = pass ? dbg : eh;
		Elf_Data *d;
		GElf_Shdr sh;

		/* .debug_frame only for files without .eh_frame: it describes the same code */
		if (!s || (pass && eh) || !gelf_getshdr(s, &sh))
			continue;
		d = elf_getdata(s, NULL);
		if (d && d->d_buf && d->d_size)
			parse_section(t, &b, d->d_buf, d->d_size, sh.sh_addr, !pass);
	}
	rows_finish(&b);
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strncmp(name, ".plt", 4))
			synth_plt(t, &b, name, sh.sh_addr, sh.sh_size);
	}
	if (t->st.plt_synth)
		rows_finish(&b);
	if (b.oom) {
		err = -ENOMEM;
		free(b.rows);
		goto cleanup;
	}
	t->rows = b.rows;
	t->nr = b.nr;
	err = 0;
cleanup:
	elf_end(elf);
	return err;
}

int cfi_table__index(const struct cfi_table *t, uint32_t **words, uint32_t *page0,
		     uint32_t *npages)
{
	uint32_t p0, np, p, *w;
	size_t j = 0;

	if (!t->nr)
		return -EINVAL;
	p0 = t->rows[0].pc >> XPU_CFI_PAGE_SHIFT;
	np = (t->rows[t->nr - 1].pc >> XPU_CFI_PAGE_SHIFT) - p0 + 1;
	w = calloc((np + 1) & ~1u, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (p = 0; p < np; p++) {
		uint64_t addr = (uint64_t)(p0 + p) << XPU_CFI_PAGE_SHIFT;

		while (j + 1 < t->nr && t->rows[j + 1].pc <= addr)
			j++;
		w[p] = (uint32_t)j;
	}
	*words = w;
	*page0 = p0;
	*npages = np;
	return 0;
}

void cfi_table__free(struct cfi_table *t)
{
	free(t->rows);
	t->rows = NULL;
	t->nr = 0;
}

int cfi_table__bias(const struct cfi_table *t, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	int i;

	for (i = 0; i < t->nloads; i++) {
		const struct cfi_load *l = &t->loads[i];

		/* the kernel maps whole pages: pgoff is the segment's offset rounded down */
		if (pgoff <= l->offset + l->filesz && (l->offset & ~4095ull) <= pgoff &&
		    (i + 1 == t->nloads || pgoff < (t->loads[i + 1].offset & ~4095ull))) {
			*bias = start - (pgoff + l->vaddr - l->offset);
			return 0;
		}
	}
	return -ENOENT;
}
