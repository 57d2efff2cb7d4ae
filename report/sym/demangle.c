// SPDX-License-Identifier: MIT
/*
 * Recursive-descent Itanium demangler. Every production builds strings in a bump arena that
 * is freed as a whole, so a failure anywhere just unwinds. Types are kept as a (left, right)
 * pair so that pointers to functions and arrays print as "void (*)(int)" and "int (*) [3]".
 * Output follows c++filt (binutils) spelling, e.g. "> >" between closing template brackets.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"

/*
 * The arena grows in chunks up to a cap: strings are rebuilt at every nesting level, so a long
 * cutlass kernel name (1.7 KB mangled, 10 KB demangled) needs a few hundred KB, while the
 * cap still bounds what a hostile substitution blow-up can take.
 */
#define DM_CHUNK_BYTES (64 * 1024)
#define DM_ARENA_MAX (4 * 1024 * 1024)
#define DM_MAX_DEPTH 128
#define DM_MAX_SUBS 512
#define DM_MAX_TPARAMS 128
#define DM_MAX_REPARSES 4096

enum { DT_PLAIN, DT_FUNC, DT_ARRAY };

struct dtype {
	const char *l, *r;
	int kind;
	const char **elems;	/* template argument pack: its elements */
	int nelems;		/* -1: not a pack */
	/*
	 * A substitution that uses template parameters is its mangled text, parsed again
	 * where it is used: GCC means "parameter N" there, not the value it had (see
	 * parse_substitution).
	 */
	const char *src;
	int srclen;
};

struct chunk {
	struct chunk *next;
	size_t size, used;
	char data[];
};

struct dm {
	const char *p, *end;
	struct chunk *chunks;	/* newest first */
	size_t arena_total;
	int depth;
	bool fail;
	struct dtype subs[DM_MAX_SUBS];
	int nsubs;
	struct dtype tparams[DM_MAX_TPARAMS];
	int ntparams;
	/* facts about the last name parsed, needed by <encoding> */
	bool name_is_template, name_is_ctor_dtor_conv;
	const char *cv_suffix;		/* " const" from N K ... E */
	const char *last_source;	/* abbreviation's class name: ctor/dtor spelling */
	int type_depth;			/* >0 while inside a <type>: template args there
					   do not define the T_ parameters */
	int pack_index;			/* -1, or the element a Dp expansion is printing */
	int pack_size;			/* size of the first pack met while probing */
	int lambda_args;		/* >0 while in a closure's parameters, where T_ is
					   a generic lambda's own "auto:1" */
	bool encoding_typed;		/* the last <encoding> had parameters or template args */
	int tparam_refs;		/* template parameters looked up so far */
	int reparses;			/* substitutions parsed again (see reparse) */
};

static const struct dtype empty_t = { "", "", DT_PLAIN, NULL, -1, NULL, 0 };

static char *dm_alloc(struct dm *d, size_t n)
{
	struct chunk *c = d->chunks;
	char *r;

	if (d->fail)
		return NULL;
	if (!c || n > c->size - c->used) {
		/* double the chunks as we go: few mallocs for long names, one for short ones */
		size_t size = c ? c->size * 2 : DM_CHUNK_BYTES;

		if (size < n)
			size = n;
		if (size > DM_ARENA_MAX - d->arena_total)
			size = DM_ARENA_MAX - d->arena_total;
		if (size < n) {
			d->fail = true;
			return NULL;
		}
		c = malloc(sizeof(*c) + size);
		if (!c) {
			d->fail = true;
			return NULL;
		}
		c->size = size;
		c->used = 0;
		c->next = d->chunks;
		d->chunks = c;
		d->arena_total += size;
	}
	r = c->data + c->used;
	c->used += n;
	return r;
}

/* Concatenates up to 4 strings (NULL ends the list) into the arena. */
static const char *cat4(struct dm *d, const char *a, const char *b, const char *c, const char *e)
{
	const char *parts[4] = { a, b, c, e };
	size_t len = 0, i;
	char *r, *w;

	for (i = 0; i < 4 && parts[i]; i++)
		len += strlen(parts[i]);
	r = dm_alloc(d, len + 1);
	if (!r)
		return "";
	w = r;
	for (i = 0; i < 4 && parts[i]; i++) {
		size_t l = strlen(parts[i]);

		memcpy(w, parts[i], l);
		w += l;
	}
	*w = '\0';
	return r;
}
#define cat2(d, a, b) cat4(d, a, b, NULL, NULL)
#define cat3(d, a, b, c) cat4(d, a, b, c, NULL)

static const char *copy_n(struct dm *d, const char *s, size_t n)
{
	char *r = dm_alloc(d, n + 1);

	if (!r)
		return "";
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

static inline char peek(struct dm *d)
{
	return d->p < d->end ? *d->p : '\0';
}

static inline char peek2(struct dm *d)
{
	return d->p + 1 < d->end ? d->p[1] : '\0';
}

static inline bool eat(struct dm *d, char c)
{
	if (peek(d) == c) {
		d->p++;
		return true;
	}
	return false;
}

static const char *fmt_t(struct dm *d, struct dtype t)
{
	return t.r[0] ? cat2(d, t.l, t.r) : t.l;
}

static void add_sub(struct dm *d, struct dtype t)
{
	if (d->nsubs >= DM_MAX_SUBS) {
		d->fail = true;
		return;
	}
	d->subs[d->nsubs++] = t;
}

static void add_sub_s(struct dm *d, const char *s)
{
	struct dtype t = { s, "", DT_PLAIN, NULL, -1, NULL, 0 };

	add_sub(d, t);
}

/* <number> ::= [n] <decimal>; returns false when there are no digits. */
static bool parse_number(struct dm *d, long *out, bool allow_neg)
{
	bool neg = false;
	long v = 0;

	if (allow_neg && eat(d, 'n'))
		neg = true;
	if (peek(d) < '0' || peek(d) > '9')
		return false;
	while (peek(d) >= '0' && peek(d) <= '9') {
		if (v > 100000000) {
			d->fail = true;
			return false;
		}
		v = v * 10 + (*d->p++ - '0');
	}
	*out = neg ? -v : v;
	return true;
}

/* <seq-id> in base 36 followed by '_'; S_ is 0, S0_ is 1. */
static int parse_seq_id(struct dm *d)
{
	long v = 0;

	if (eat(d, '_'))
		return 0;
	while (peek(d) != '_') {
		char c = peek(d);

		if (c >= '0' && c <= '9')
			v = v * 36 + (c - '0');
		else if (c >= 'A' && c <= 'Z')
			v = v * 36 + (c - 'A' + 10);
		else
			return -1;
		if (v > 1000000)
			return -1;
		d->p++;
	}
	d->p++;
	return (int)v + 1;
}

static struct dtype parse_type(struct dm *d);
static const char *tparam_text(struct dm *d, int id);
/* How an <encoding> is embedded; see parse_encoding. */
enum { ENC_TOP, ENC_SCOPE, ENC_EXPR };
static const char *parse_encoding(struct dm *d, int mode);
static const char *parse_name(struct dm *d);
static const char *parse_template_args(struct dm *d, bool set_tparams);

static const char *parse_source_name(struct dm *d)
{
	long len;
	const char *s;

	if (!parse_number(d, &len, false) || len <= 0 || len > d->end - d->p) {
		d->fail = true;
		return "";
	}
	/* GCC spells anonymous namespaces _GLOBAL__N_1 */
	if (len >= 10 && !strncmp(d->p, "_GLOBAL__N", 10)) {
		d->p += len;
		return "(anonymous namespace)";
	}
	s = copy_n(d, d->p, len);
	d->p += len;
	return s;
}

struct op {
	const char code[3];
	const char *name;
};

static const struct op ops[] = {
	{ "nw", "new" }, { "na", "new[]" }, { "dl", "delete" }, { "da", "delete[]" },
	{ "ps", "+" }, { "ng", "-" }, { "ad", "&" }, { "de", "*" }, { "co", "~" },
	{ "pl", "+" }, { "mi", "-" }, { "ml", "*" }, { "dv", "/" }, { "rm", "%" },
	{ "an", "&" }, { "or", "|" }, { "eo", "^" }, { "aS", "=" }, { "pL", "+=" },
	{ "mI", "-=" }, { "mL", "*=" }, { "dV", "/=" }, { "rM", "%=" }, { "aN", "&=" },
	{ "oR", "|=" }, { "eO", "^=" }, { "ls", "<<" }, { "rs", ">>" }, { "lS", "<<=" },
	{ "rS", ">>=" }, { "eq", "==" }, { "ne", "!=" }, { "lt", "<" }, { "gt", ">" },
	{ "le", "<=" }, { "ge", ">=" }, { "ss", "<=>" }, { "nt", "!" }, { "aa", "&&" },
	{ "oo", "||" }, { "pp", "++" }, { "mm", "--" }, { "cm", "," }, { "pm", "->*" },
	{ "pt", "->" }, { "cl", "()" }, { "ix", "[]" }, { "qu", "?" },
};

static const char *parse_operator(struct dm *d)
{
	size_t i;

	if (peek(d) == 'c' && peek2(d) == 'v') {
		struct dtype t;

		d->p += 2;
		t = parse_type(d);
		d->name_is_ctor_dtor_conv = true;
		return cat2(d, "operator ", fmt_t(d, t));
	}
	if (peek(d) == 'l' && peek2(d) == 'i') {
		d->p += 2;
		return cat2(d, "operator\"\" ", parse_source_name(d));
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (peek(d) == ops[i].code[0] && peek2(d) == ops[i].code[1]) {
			const char *n = ops[i].name;

			d->p += 2;
			return cat2(d, (n[0] >= 'a' && n[0] <= 'z') ? "operator " : "operator", n);
		}
	}
	d->fail = true;
	return "";
}

static const char *parse_abi_tags(struct dm *d, const char *s)
{
	while (!d->fail && peek(d) == 'B') {
		d->p++;
		s = cat4(d, s, "[abi:", parse_source_name(d), "]");
	}
	return s;
}

static const char *parse_bare_params(struct dm *d, bool stop_at_e);

/* <unnamed-type-name>: lambdas and unnamed types */
static const char *parse_unnamed(struct dm *d)
{
	long n = 0;
	char num[24];

	if (peek(d) == 'U' && peek2(d) == 't') {
		d->p += 2;
		if (!eat(d, '_')) {
			if (!parse_number(d, &n, false) || !eat(d, '_'))
				goto bad;
			n++;
		}
		snprintf(num, sizeof(num), "#%ld}", n + 1);
		return cat2(d, "{unnamed type", num);
	}
	if (peek(d) == 'U' && peek2(d) == 'l') {
		const char *params;

		d->p += 2;
		d->lambda_args++;
		params = parse_bare_params(d, true);
		d->lambda_args--;
		if (!eat(d, 'E'))
			goto bad;
		if (!eat(d, '_')) {
			if (!parse_number(d, &n, false) || !eat(d, '_'))
				goto bad;
			n++;
		}
		snprintf(num, sizeof(num), ")#%ld}", n + 1);
		return cat3(d, "{lambda(", params, num);
	}
bad:
	d->fail = true;
	return "";
}

/* Class name that a ctor/dtor repeats: last component of the prefix, without template args. */
static const char *base_name(struct dm *d, const char *enclosing)
{
	const char *start = enclosing, *p;
	int depth = 0;

	if (!enclosing)
		return "";
	if (d->last_source && !strncmp(enclosing, "std::", 5) && !strchr(enclosing + 5, ':') &&
	    !strchr(enclosing, '<'))
		return d->last_source;
	for (p = enclosing; *p; p++) {
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth > 0)
			depth--;
		else if (!depth && p[0] == ':' && p[1] == ':')
			start = p + 2;
	}
	for (p = start; *p && *p != '<' && *p != '['; p++)
		;
	return copy_n(d, start, p - start);
}

/* <unqualified-name>; enclosing is the prefix so far (for ctor/dtor names). */
static const char *parse_unqualified(struct dm *d, const char *enclosing)
{
	char c = peek(d);
	const char *s;

	d->name_is_ctor_dtor_conv = false;
	if (c >= '0' && c <= '9') {
		s = parse_source_name(d);
	} else if (c == 'C' && (peek2(d) == '1' || peek2(d) == '2' || peek2(d) == '3' ||
				 peek2(d) == '4' || peek2(d) == '5' || peek2(d) == 'I')) {
		d->p += 2;
		if (d->p[-1] == 'I') {	/* inheriting constructor: CI1 <type> */
			if (!(eat(d, '1') || eat(d, '2')))
				d->fail = true;
			parse_type(d);
		}
		d->name_is_ctor_dtor_conv = true;
		return parse_abi_tags(d, base_name(d, enclosing));
	} else if (c == 'D' && (peek2(d) == '0' || peek2(d) == '1' || peek2(d) == '2' ||
				 peek2(d) == '4' || peek2(d) == '5')) {
		d->p += 2;
		d->name_is_ctor_dtor_conv = true;
		s = cat2(d, "~", base_name(d, enclosing));
		return parse_abi_tags(d, s);
	} else if (c == 'U') {
		s = parse_unnamed(d);
	} else if (c == 'L') {	/* internal linkage: L <source-name> */
		d->p++;
		s = parse_source_name(d);
	} else if (c >= 'a' && c <= 'z') {
		s = parse_operator(d);
	} else {
		d->fail = true;
		return "";
	}
	return parse_abi_tags(d, s);
}

/* Standard abbreviations after 'S'; returns NULL if c is not one. */
static const char *std_abbrev(char c, const char **ctor_name)
{
	switch (c) {
	case 'a':
		*ctor_name = "allocator";
		return "std::allocator";
	case 'b':
		*ctor_name = "basic_string";
		return "std::basic_string";
	case 's':
		*ctor_name = "basic_string";
		return "std::string";
	case 'i':
		*ctor_name = "basic_istream";
		return "std::istream";
	case 'o':
		*ctor_name = "basic_ostream";
		return "std::ostream";
	case 'd':
		*ctor_name = "basic_iostream";
		return "std::iostream";
	default:
		return NULL;
	}
}

/*
 * A substitution that uses template parameters means them where it is used, as in GCC and
 * c++filt: in "int call<g()::{lambda(auto:1)#1}>(S0_)" the S0_ is the T_ met inside the
 * lambda, now naming call's argument, and a T_* from a local name's enclosing function
 * reused outside it points to the outer template's argument. So its text is parsed again,
 * in the current scope, adding no candidates. The depth limit bounds the nesting and the
 * arena and a counter the total work of chains of such substitutions.
 */
static struct dtype reparse(struct dm *d, const struct dtype *sub)
{
	const char *saved_p = d->p, *saved_end = d->end;
	int saved_nsubs = d->nsubs;
	struct dtype t;

	if (++d->reparses > DM_MAX_REPARSES) {
		d->fail = true;
		return empty_t;
	}
	d->p = sub->src;
	d->end = sub->src + sub->srclen;
	t = parse_type(d);
	if (d->p != d->end)
		d->fail = true;
	d->p = saved_p;
	d->end = saved_end;
	d->nsubs = saved_nsubs;
	return t;
}

/* <substitution> (after the S). Returns the substituted entity. */
static struct dtype parse_substitution(struct dm *d)
{
	const char *ctor = NULL, *ab;
	int id;

	ab = std_abbrev(peek(d), &ctor);
	if (ab) {
		struct dtype t = { ab, "", DT_PLAIN, NULL, -1, NULL, 0 };

		d->p++;
		d->last_source = ctor;
		return t;
	}
	id = parse_seq_id(d);
	if (id < 0 || id >= d->nsubs) {
		d->fail = true;
		return empty_t;
	}
	if (d->subs[id].src)
		return reparse(d, &d->subs[id]);
	return d->subs[id];
}

/* The text of template parameter id in the current scope. */
static const char *tparam_text(struct dm *d, int id)
{
	const struct dtype *tp;

	d->tparam_refs++;
	/* c++filt spells a generic lambda's parameters by position: "{lambda(auto:1)#1}" */
	if (id >= 0 && d->lambda_args) {
		char buf[24];

		snprintf(buf, sizeof(buf), "auto:%d", id + 1);
		return cat2(d, buf, "");
	}
	if (id < 0 || id >= d->ntparams) {
		d->fail = true;
		return "";
	}
	tp = &d->tparams[id];
	if (tp->nelems >= 0) {
		if (d->pack_size < 0)
			d->pack_size = tp->nelems;
		if (d->pack_index >= 0 && d->pack_index < tp->nelems)
			return tp->elems[d->pack_index];
	}
	return fmt_t(d, *tp);
}

static const char *parse_template_param(struct dm *d)
{
	return tparam_text(d, parse_seq_id(d));
}

static const char *close_tmpl(struct dm *d, const char *s, const char *args)
{
	size_t len = strlen(s);

	/* "operator<" followed by "<int>" must not read as "operator<<" */
	return cat3(d, s, len && s[len - 1] == '<' ? " " : "", args);
}

/*
 * <nested-name> after the N. Every prefix except the whole name is a substitution candidate.
 */
static const char *parse_nested(struct dm *d)
{
	const char *cur = NULL, *cv = "";
	bool tmpl = false, cdc = false;

	if (eat(d, 'r'))
		cv = cat2(d, cv, " restrict");
	if (eat(d, 'V'))
		cv = cat2(d, cv, " volatile");
	if (eat(d, 'K'))
		cv = cat2(d, cv, " const");
	if (eat(d, 'R'))
		cv = cat2(d, cv, " &");
	else if (eat(d, 'O'))
		cv = cat2(d, cv, " &&");

	while (!d->fail && !eat(d, 'E')) {
		char c = peek(d);

		tmpl = false;
		if (c == 'S' && !cur) {
			d->p++;
			if (eat(d, 't')) {
				cur = "std";
				continue;	/* "std" itself is not a candidate */
			}
			{
				const char *full = NULL;

				/* before a ctor/dtor an abbreviation spells its full template-id */
				switch (peek(d)) {
				case 's':
					full = "std::basic_string<char, std::char_traits<char>, std::allocator<char> >";
					break;
				case 'i':
					full = "std::basic_istream<char, std::char_traits<char> >";
					break;
				case 'o':
					full = "std::basic_ostream<char, std::char_traits<char> >";
					break;
				case 'd':
					full = "std::basic_iostream<char, std::char_traits<char> >";
					break;
				}
				cur = fmt_t(d, parse_substitution(d));
				if (full && (peek(d) == 'C' || peek(d) == 'D'))
					cur = full;
			}
			if (peek(d) == 'E')
				d->fail = true;	/* a lone substitution is not a nested name */
			continue;
		} else if (c == 'I' && cur) {
			cur = close_tmpl(d, cur, parse_template_args(d, true));
			tmpl = true;
		} else if (c == 'T' && !cur) {
			d->p++;
			cur = parse_template_param(d);
		} else if (c == 'M') {	/* data-member-prefix of a closure: just a marker */
			d->p++;
			continue;
		} else {
			const char *u = parse_unqualified(d, cur);

			cdc = d->name_is_ctor_dtor_conv;
			cur = cur ? cat3(d, cur, "::", u) : u;
		}
		if (peek(d) != 'E')
			add_sub_s(d, cur);
		if (peek(d) == '\0')
			d->fail = true;
	}
	d->name_is_template = tmpl;
	d->name_is_ctor_dtor_conv = cdc;
	d->cv_suffix = cv;
	return cur ? cur : "";
}

/*
 * <local-name> after the Z: Z <encoding> E <entity> [<discriminator>], Z <encoding> E s, or
 * Z <encoding> E d [<number>] _ <entity> for an entity in a default argument.
 */
static const char *parse_local(struct dm *d)
{
	const char *enc = parse_encoding(d, ENC_SCOPE), *s;
	long n;

	if (!eat(d, 'E')) {
		d->fail = true;
		return "";
	}
	if (eat(d, 's')) {
		s = cat2(d, enc, "::string literal");
		d->name_is_template = false;
	} else {
		if (eat(d, 'd')) {	/* d_ is the last parameter's default, d0_ the one before */
			char num[40];

			n = -1;
			parse_number(d, &n, false);
			if (!eat(d, '_')) {
				d->fail = true;
				return "";
			}
			snprintf(num, sizeof(num), "::{default arg#%ld}", n + 2);
			enc = cat2(d, enc, num);
		}
		s = cat3(d, enc, "::", parse_name(d));
	}
	/* <discriminator> ::= _ <digit> | __ <number> _ */
	if (peek(d) == '_') {
		d->p++;
		if (eat(d, '_')) {
			parse_number(d, &n, false);
			eat(d, '_');
		} else {
			parse_number(d, &n, false);
		}
	}
	return s;
}

static const char *parse_name(struct dm *d)
{
	const char *s;
	char c;

	if (++d->depth > DM_MAX_DEPTH) {
		d->fail = true;
		return "";
	}
	d->name_is_template = false;
	d->cv_suffix = "";
	c = peek(d);
	if (c == 'N') {
		d->p++;
		s = parse_nested(d);
	} else if (c == 'Z') {
		d->p++;
		s = parse_local(d);
	} else {
		bool sub = false;

		if (c == 'S' && peek2(d) == 't') {
			d->p += 2;
			s = cat2(d, "std::", parse_unqualified(d, NULL));
		} else if (c == 'S') {
			d->p++;
			s = fmt_t(d, parse_substitution(d));
			sub = true;
		} else {
			s = parse_unqualified(d, NULL);
		}
		if (peek(d) == 'I') {
			bool cdc = d->name_is_ctor_dtor_conv;

			/* an unscoped template name is a candidate; a substitution already is one */
			if (!sub)
				add_sub_s(d, s);
			s = close_tmpl(d, s, parse_template_args(d, true));
			d->name_is_template = true;
			d->name_is_ctor_dtor_conv = cdc;
		} else if (sub) {
			d->fail = true;	/* a bare substitution cannot name an entity */
		}
	}
	d->depth--;
	return s;
}

static const char *builtin(char c)
{
	switch (c) {
	case 'v': return "void";
	case 'w': return "wchar_t";
	case 'b': return "bool";
	case 'c': return "char";
	case 'a': return "signed char";
	case 'h': return "unsigned char";
	case 's': return "short";
	case 't': return "unsigned short";
	case 'i': return "int";
	case 'j': return "unsigned int";
	case 'l': return "long";
	case 'm': return "unsigned long";
	case 'x': return "long long";
	case 'y': return "unsigned long long";
	case 'n': return "__int128";
	case 'o': return "unsigned __int128";
	case 'f': return "float";
	case 'd': return "double";
	case 'e': return "long double";
	case 'g': return "__float128";
	case 'z': return "...";
	default: return NULL;
	}
}

static const char *builtin_d(char c)
{
	switch (c) {
	case 'n': return "decltype(nullptr)";
	case 'i': return "char32_t";
	case 's': return "char16_t";
	case 'u': return "char8_t";
	case 'a': return "auto";
	case 'c': return "decltype(auto)";
	case 'h': return "half";
	default: return NULL;
	}
}

/* Applies a pointer-like declarator ("*", "&", "&&", "C::*") to t. */
static struct dtype apply_ptr(struct dm *d, struct dtype t, const char *op)
{
	struct dtype r = { 0 };

	r.kind = DT_PLAIN;
	r.nelems = -1;
	if (op[0] == '&' && !t.r[0] && t.kind == DT_PLAIN) {
		size_t len = strlen(t.l);

		/* reference collapsing: T& && is T&, T&& & is T& */
		if (len >= 2 && !strcmp(t.l + len - 2, "&&")) {
			r.l = op[1] ? t.l : copy_n(d, t.l, len - 1);
			r.r = "";
			return r;
		}
		if (len >= 1 && t.l[len - 1] == '&') {
			r.l = t.l;
			r.r = "";
			return r;
		}
	}
	if (t.kind == DT_FUNC) {
		r.l = cat3(d, t.l, "(", op);
		r.r = cat2(d, ")", t.r);
	} else if (t.kind == DT_ARRAY) {
		r.l = cat3(d, t.l, " (", op);
		r.r = cat2(d, ")", t.r);
	} else if (t.r[0]) {
		/* already a pointer to function or array: the declarator goes inside */
		r.l = cat2(d, t.l, op);
		r.r = t.r;
	} else {
		r.l = cat2(d, t.l, op);
		r.r = "";
	}
	return r;
}

static const char *parse_bare_params(struct dm *d, bool stop_at_e)
{
	const char *s = NULL;
	int n = 0;

	while (!d->fail && d->p < d->end && peek(d) != '.' && !(stop_at_e && peek(d) == 'E')) {
		struct dtype t;

		/* ref-qualifier of a function type comes right before its E */
		if (stop_at_e && (peek(d) == 'R' || peek(d) == 'O') && peek2(d) == 'E')
			break;
		t = parse_type(d);
		if (d->fail)
			break;
		if (n == 0 && !strcmp(t.l, "void") && !t.r[0] &&
		    (d->p >= d->end || peek(d) == '.' || (stop_at_e && peek(d) == 'E'))) {
			return "";
		}
		n++;
		if (!t.l[0] && !t.r[0])
			continue;	/* an empty pack expansion */
		s = s ? cat3(d, s, ", ", fmt_t(d, t)) : fmt_t(d, t);
	}
	if (!n && !stop_at_e)
		d->fail = true;
	return s ? s : "";
}

static struct dtype parse_function_type(struct dm *d)
{
	struct dtype ret, t = { 0 };
	const char *params, *refq = "";

	eat(d, 'Y');	/* extern "C" */
	ret = parse_type(d);
	params = parse_bare_params(d, true);
	if (eat(d, 'R'))
		refq = " &";
	else if (eat(d, 'O'))
		refq = " &&";
	if (!eat(d, 'E'))
		d->fail = true;
	t.kind = DT_FUNC;
	t.l = cat2(d, fmt_t(d, ret), " ");
	t.r = cat4(d, "(", params, ")", refq);
	return t;
}

static const char *parse_expr_primary(struct dm *d)
{
	const char *s;

	/* after the L */
	if (peek(d) == '_' && peek2(d) == 'Z') {
		d->p += 2;
		s = parse_encoding(d, ENC_EXPR);
	} else {
		char c = peek(d);
		const char *num_start, *neg = "";
		struct dtype t;

		t = parse_type(d);
		if (d->fail)
			return "";
		if (eat(d, 'n'))
			neg = "-";
		num_start = d->p;
		while (d->p < d->end && peek(d) != 'E')
			d->p++;
		s = copy_n(d, num_start, d->p - num_start);
		if (c == 'b' && !strcmp(s, "0"))
			s = "false";
		else if (c == 'b' && !strcmp(s, "1"))
			s = "true";
		else if (c == 'i')
			s = cat2(d, neg, s);
		else if (c == 'j')
			s = cat3(d, neg, s, "u");
		else if (c == 'l')
			s = cat3(d, neg, s, "l");
		else if (c == 'm')
			s = cat3(d, neg, s, "ul");
		else
			s = cat4(d, "(", fmt_t(d, t), ")", cat2(d, neg, s));
	}
	if (!eat(d, 'E'))
		d->fail = true;
	return s;
}

/*
 * <expression>: only what kernel names need. nvcc's extended __device__ lambdas put the
 * enclosing function's address in a template argument: X ad L _Z <encoding> E E, which
 * c++filt prints as "&(void ns::launch<float>(float*))". Anything else fails.
 */
static const char *parse_expression(struct dm *d)
{
	const char *s;

	if (++d->depth > DM_MAX_DEPTH) {
		d->fail = true;
		return "";
	}
	if (eat(d, 'L')) {
		s = parse_expr_primary(d);
	} else if (peek(d) == 'T') {
		d->p++;
		s = parse_template_param(d);
	} else if (peek(d) == 'a' && peek2(d) == 'd') {
		bool entity;

		d->p += 2;
		entity = peek(d) == 'L' && peek2(d) == '_';
		d->encoding_typed = false;
		s = parse_expression(d);
		/* a function or template operand gets parentheses, a plain (qualified) name none */
		s = entity && d->encoding_typed ? cat3(d, "&(", s, ")") : cat2(d, "&", s);
	} else {
		d->fail = true;
		s = "";
	}
	d->depth--;
	return s;
}

static struct dtype parse_template_arg(struct dm *d)
{
	struct dtype r = empty_t;
	char c = peek(d);

	if (c == 'L') {
		d->p++;
		r.l = parse_expr_primary(d);
		return r;
	}
	if (c == 'J') {	/* argument pack */
		const char *s = NULL, *el[64];
		int n = 0;

		d->p++;
		while (!d->fail && !eat(d, 'E')) {
			struct dtype a = parse_template_arg(d);
			const char *as = fmt_t(d, a);

			if (n >= 64 || d->p >= d->end) {
				d->fail = true;
				break;
			}
			el[n++] = as;
			if (as[0])
				s = s ? cat3(d, s, ", ", as) : as;
		}
		r.l = s ? s : "";
		r.nelems = n;
		r.elems = (const char **)(void *)dm_alloc(d, sizeof(*el) * (n ? n : 1) + 8);
		if (r.elems) {
			/* the arena is byte-aligned: align the pointer array */
			r.elems = (const char **)(((uintptr_t)r.elems + 7) & ~(uintptr_t)7);
			memcpy(r.elems, el, sizeof(*el) * n);
		} else {
			r.nelems = 0;
		}
		return r;
	}
	if (c == 'X') {
		d->p++;
		r.l = parse_expression(d);
		if (!eat(d, 'E'))
			d->fail = true;
		return r;
	}
	r.l = fmt_t(d, parse_type(d));
	return r;
}

static const char *parse_template_args(struct dm *d, bool set_tparams)
{
	struct dtype args[DM_MAX_TPARAMS];
	const char *s = "<";
	int n = 0, i;
	bool empty_last = false;
	size_t len;

	if (!eat(d, 'I') || ++d->depth > DM_MAX_DEPTH) {
		d->fail = true;
		return "";
	}
	while (!d->fail && !eat(d, 'E')) {
		struct dtype a = parse_template_arg(d);

		if (n >= DM_MAX_TPARAMS || d->p >= d->end) {
			d->fail = true;
			break;
		}
		args[n] = a;
		if (a.l[0])
			s = strcmp(s, "<") ? cat3(d, s, ", ", a.l) : cat2(d, s, a.l);
		empty_last = n && !a.l[0];
		n++;
	}
	d->depth--;
	if (d->fail)
		return "";
	/*
	 * c++filt writes ", " before an empty trailing pack and takes it back, but then sees the
	 * space as the last character: "tag<int, 1u>>" without the usual "> >". Match it.
	 */
	len = strlen(s);
	s = cat2(d, s, len && s[len - 1] == '>' && !empty_last ? " >" : ">");
	if (set_tparams && !d->type_depth) {
		for (i = 0; i < n; i++)
			d->tparams[i] = args[i];
		d->ntparams = n;
	}
	return s;
}

/* Adds t, made from the mangled text at start, as a candidate, to parse again if it uses T_. */
static void add_dep_sub(struct dm *d, struct dtype t, const char *start, int refs0)
{
	t.src = d->tparam_refs != refs0 ? start : NULL;
	t.srclen = (int)(d->p - start);
	add_sub(d, t);
}

static struct dtype parse_type_inner(struct dm *d)
{
	struct dtype t = { "", "", DT_PLAIN, NULL, -1, NULL, 0 };
	char c = peek(d);
	const char *b, *start = d->p;
	int refs0 = d->tparam_refs;

	b = builtin(c);
	if (b) {
		d->p++;
		t.l = b;
		return t;
	}
	switch (c) {
	case 'D':
		b = builtin_d(peek2(d));
		if (b) {
			d->p += 2;
			t.l = b;
			return t;
		}
		if (peek2(d) == 'p') {	/* pack expansion: print the pattern once per element */
			const char *pattern, *s = NULL;
			int saved_idx = d->pack_index, saved_size = d->pack_size, saved_nsubs;
			int i, n;

			d->p += 2;
			pattern = d->p;
			saved_nsubs = d->nsubs;
			d->pack_index = -1;
			d->pack_size = -1;
			t = parse_type(d);
			n = d->pack_size;
			if (n < 0) {	/* no pack inside: keep the pattern with "..." */
				t.l = cat2(d, fmt_t(d, t), "...");
				t.r = "";
			} else {
				for (i = 0; i < n && !d->fail; i++) {
					const char *e;

					d->p = pattern;
					d->nsubs = saved_nsubs;
					d->pack_index = i;
					e = fmt_t(d, parse_type(d));
					s = s ? cat3(d, s, ", ", e) : e;
				}
				t.l = s ? s : "";
				t.r = "";
			}
			t.kind = DT_PLAIN;
			t.nelems = -1;
			d->pack_index = saved_idx;
			d->pack_size = saved_size;
			break;
		}
		if (peek2(d) == 'F') {	/* DF <number> _: _FloatN */
			long n;

			d->p += 2;
			if (!parse_number(d, &n, false) || !eat(d, '_')) {
				d->fail = true;
				return t;
			}
			char buf[24];

			snprintf(buf, sizeof(buf), "_Float%ld", n);
			t.l = cat2(d, buf, "");
			return t;
		}
		d->fail = true;
		return t;
	case 'u':	/* vendor extended type */
		d->p++;
		t.l = parse_source_name(d);
		break;
	case 'r':
	case 'V':
	case 'K': {
		const char *q = "";

		while (peek(d) == 'r' || peek(d) == 'V' || peek(d) == 'K') {
			char qc = *d->p++;

			q = cat2(d, q, qc == 'r' ? " restrict" : qc == 'V' ? " volatile" : " const");
		}
		t = parse_type(d);
		if (t.kind == DT_FUNC)
			t.r = cat2(d, t.r, q);
		else if (t.r[0])
			t.l = cat2(d, t.l, q);	/* const pointer to function: "(* const)" */
		else
			t.l = cat2(d, t.l, q);
		break;
	}
	case 'P':
		d->p++;
		t = apply_ptr(d, parse_type(d), "*");
		break;
	case 'R':
		d->p++;
		t = apply_ptr(d, parse_type(d), "&");
		break;
	case 'O':
		d->p++;
		t = apply_ptr(d, parse_type(d), "&&");
		break;
	case 'F':
		d->p++;
		t = parse_function_type(d);
		break;
	case 'A': {
		const char *dim = "";
		long n;
		struct dtype el;

		d->p++;
		if (parse_number(d, &n, false)) {
			char buf[24];

			snprintf(buf, sizeof(buf), "%ld", n);
			dim = cat2(d, buf, "");
		}
		if (!eat(d, '_')) {
			d->fail = true;
			return t;
		}
		el = parse_type(d);
		t.kind = DT_ARRAY;
		t.l = el.l;
		t.r = cat4(d, " [", dim, "]", el.kind == DT_ARRAY ? el.r + 1 : el.r);
		break;
	}
	case 'M': {
		struct dtype cls, mem;
		const char *op;

		d->p++;
		cls = parse_type(d);
		mem = parse_type(d);
		op = cat2(d, fmt_t(d, cls), "::*");
		if (mem.kind == DT_FUNC) {
			t = apply_ptr(d, mem, op);
		} else {
			t.l = cat3(d, fmt_t(d, mem), " ", op);
			t.r = "";
		}
		break;
	}
	case 'T':
		d->p++;
		t.l = parse_template_param(d);
		if (peek(d) == 'I') {	/* template template param */
			add_dep_sub(d, t, start, refs0);
			t.l = cat2(d, t.l, parse_template_args(d, false));
		}
		break;
	case 'S':
		if (peek2(d) == 't') {
			t.l = parse_name(d);
			break;
		}
		d->p++;
		{
			t = parse_substitution(d);
			if (peek(d) == 'I') {
				t.l = cat2(d, fmt_t(d, t), parse_template_args(d, false));
				t.r = "";
				t.kind = DT_PLAIN;
				break;
			}
		}
		/* a plain substitution is not added again */
		return t;
	case 'N':
	case 'Z':
	case '0' ... '9':
		t.l = parse_name(d);
		break;
	default:
		d->fail = true;
		return t;
	}
	add_dep_sub(d, t, start, refs0);
	return t;
}

static struct dtype parse_type(struct dm *d)
{
	struct dtype t;

	if (++d->depth > DM_MAX_DEPTH || d->p >= d->end) {
		d->fail = true;
		return empty_t;
	}
	d->type_depth++;
	t = parse_type_inner(d);
	d->type_depth--;
	d->depth--;
	return t;
}

static const char *parse_special(struct dm *d)
{
	long n;

	/* after the T or G */
	if (d->p[-1] == 'G') {
		if (eat(d, 'V'))
			return cat2(d, "guard variable for ", parse_name(d));
		d->fail = true;
		return "";
	}
	switch (*d->p++) {
	case 'V':
		return cat2(d, "vtable for ", fmt_t(d, parse_type(d)));
	case 'T':
		return cat2(d, "VTT for ", fmt_t(d, parse_type(d)));
	case 'I':
		return cat2(d, "typeinfo for ", fmt_t(d, parse_type(d)));
	case 'S':
		return cat2(d, "typeinfo name for ", fmt_t(d, parse_type(d)));
	case 'H':
		return cat2(d, "TLS init function for ", parse_name(d));
	case 'W':
		return cat2(d, "TLS wrapper function for ", parse_name(d));
	case 'h':
		if (!parse_number(d, &n, true) || !eat(d, '_'))
			break;
		return cat2(d, "non-virtual thunk to ", parse_encoding(d, ENC_SCOPE));
	case 'v':
		if (!parse_number(d, &n, true) || !eat(d, '_') || !parse_number(d, &n, true) ||
		    !eat(d, '_'))
			break;
		return cat2(d, "virtual thunk to ", parse_encoding(d, ENC_SCOPE));
	default:
		break;
	}
	d->fail = true;
	return "";
}

/*
 * ENC_TOP: the whole symbol. ENC_SCOPE: a local name's enclosing function (or a thunk's
 * target), which ends at an E and prints without return type, as c++filt does. ENC_EXPR: an
 * entity in a template argument (L_Z ... E), printed with its return type.
 */
static const char *parse_encoding(struct dm *d, int mode)
{
	const char *name, *params, *ret = NULL, *cv;
	bool tmpl, cdc, top = mode == ENC_TOP;
	int saved_ntp = d->ntparams, saved_td = d->type_depth;
	struct dtype saved_tp[DM_MAX_TPARAMS];

	if (++d->depth > DM_MAX_DEPTH) {
		d->fail = true;
		return "";
	}
	if ((peek(d) == 'T' && peek2(d) != '_' && !(peek2(d) >= '0' && peek2(d) <= '9')) ||
	    (peek(d) == 'G' && peek2(d) == 'V')) {
		d->p++;
		name = parse_special(d);
		d->depth--;
		return name;
	}
	/*
	 * An inner encoding is a whole function even inside a template argument (a kernel's
	 * lambda functor): its own template args define the T_ of its parameters, and the
	 * outer ones come back afterwards.
	 */
	if (!top) {
		memcpy(saved_tp, d->tparams, sizeof(d->tparams[0]) * saved_ntp);
		d->type_depth = 0;
	}
	d->encoding_typed = false;
	name = parse_name(d);
	tmpl = d->name_is_template;
	cdc = d->name_is_ctor_dtor_conv;
	cv = d->cv_suffix;
	if (d->fail || d->p >= d->end || peek(d) == 'E' || peek(d) == '.') {
		/* data object (or a local entity's enclosing name at E, as GCC writes main) */
		params = NULL;
	} else {
		if (tmpl && !cdc) {
			struct dtype r = parse_type(d);

			ret = fmt_t(d, r);
		}
		params = parse_bare_params(d, !top);
	}
	if (!top) {
		memcpy(d->tparams, saved_tp, sizeof(d->tparams[0]) * saved_ntp);
		d->ntparams = saved_ntp;
		d->type_depth = saved_td;
	}
	d->depth--;
	/* tells an enclosing "ad" whether this was a function or template (printed in parens) */
	d->encoding_typed = params || tmpl;
	if (!params)
		return name;
	if (ret && mode != ENC_SCOPE)
		return cat4(d, ret, " ", name, cat4(d, "(", params, ")", cv));
	return cat4(d, name, "(", params, cat2(d, ")", cv));
}

int xpu_demangle(const char *mangled, char *out, size_t outlen)
{
	struct dm *d;
	const char *s;
	size_t inlen, len;
	int ret = -1;

	if (!mangled || !out || !outlen || strncmp(mangled, "_Z", 2))
		return -1;
	inlen = strnlen(mangled, DEMANGLE_MAX_INPUT + 1);
	if (inlen > DEMANGLE_MAX_INPUT)
		return -1;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	d->p = mangled + 2;
	d->end = mangled + inlen;
	d->pack_index = -1;
	d->pack_size = -1;
	s = parse_encoding(d, ENC_TOP);
	/* GCC clone suffixes: .constprop.0, .isra.0, .cold, .part.1 */
	while (!d->fail && peek(d) == '.') {
		const char *start = d->p++;

		while (d->p < d->end && *d->p != '.')
			d->p++;
		while (d->p < d->end && *d->p == '.' && d->p + 1 < d->end && d->p[1] >= '0' &&
		       d->p[1] <= '9') {
			d->p++;
			while (d->p < d->end && *d->p >= '0' && *d->p <= '9')
				d->p++;
		}
		s = cat4(d, s, " [clone ", copy_n(d, start, d->p - start), "]");
	}
	if (d->fail || d->p != d->end)
		goto out;
	len = strlen(s);
	if (len + 1 > outlen)
		goto out;
	memcpy(out, s, len + 1);
	ret = (int)len;
out:
	while (d->chunks) {
		struct chunk *c = d->chunks;

		d->chunks = c->next;
		free(c);
	}
	free(d);
	return ret;
}
