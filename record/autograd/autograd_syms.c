// SPDX-License-Identifier: MIT
/*
 * A PyTorch library's autograd symbols (see autograd_syms.h). The file is the user's, so
 * everything is read through libelf's checks; a file that does not hold the functions is
 * simply not probed.
 */
#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autograd_syms.h"

#define AG_NAME_MAX 128

/* Skips one length-prefixed identifier at *p; false when malformed. */
static bool skip_ident(const char **p, const char **id, size_t *idlen)
{
	const char *q = *p;
	size_t n = 0;

	if (!isdigit((unsigned char)*q))
		return false;
	while (isdigit((unsigned char)*q)) {
		n = n * 10 + (size_t)(*q - '0');
		if (n > 4096)
			return false;
		q++;
	}
	if (strnlen(q, n) < n)
		return false;
	*id = q;
	*idlen = n;
	*p = q + n;
	return true;
}

/* Skips a template argument list "I...E" (nested lists, names and literals inside). */
static bool skip_template_args(const char **p)
{
	const char *q = *p, *id;
	size_t idlen;
	int depth = 0;

	do {
		if (!*q)
			return false;
		if (isdigit((unsigned char)*q)) {
			if (!skip_ident(&q, &id, &idlen))
				return false;
			continue;
		}
		if (*q == 'I' || *q == 'N' || *q == 'L')
			depth++;
		else if (*q == 'E')
			depth--;
		q++;
	} while (depth > 0);
	*p = q;
	return true;
}

int autograd_syms__short_name(const char *mangled, char *out, size_t len)
{
	const char *p = mangled, *last = NULL, *id;
	size_t last_len = 0, idlen;
	bool nested, templ = false;

	if (!len)
		return -EINVAL;
	if (strncmp(p, "_ZTV", 4))
		goto raw;
	p += 4;
	nested = *p == 'N';
	if (nested)
		p++;
	if (!strncmp(p, "St", 2))
		p += 2;
	while (*p && *p != 'E') {
		if (*p == 'I') {
			if (!skip_template_args(&p))
				goto raw;
			templ = true;
			continue;
		}
		if (!skip_ident(&p, &id, &idlen))
			goto raw;
		last = id;
		last_len = idlen;
		templ = false;
		if (!nested)
			break;
	}
	if (!last)
		goto raw;
	snprintf(out, len, "%.*s%s", (int)last_len, last, templ ? "<...>" : "");
	return 0;
raw:
	snprintf(out, len, "%s", mangled);
	return -EINVAL;
}

static void read_segments(struct autograd_syms *s, Elf *elf)
{
	size_t nph, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return;
	for (i = 0; i < nph && s->nexec < AG_MAX_SEGMENTS; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			s->exec[s->nexec].vaddr = ph.p_vaddr;
			s->exec[s->nexec].off = ph.p_offset;
			s->exec[s->nexec++].size = ph.p_filesz;
		}
	}
}

bool autograd_syms__code_off(const struct autograd_syms *s, uint64_t va, uint64_t *off)
{
	unsigned int i;

	for (i = 0; i < s->nexec; i++) {
		if (va >= s->exec[i].vaddr && va - s->exec[i].vaddr < s->exec[i].size) {
			*off = va - s->exec[i].vaddr + s->exec[i].off;
			return true;
		}
	}
	return false;
}

static int add_vtable(struct autograd_syms *s, size_t *cap, const char *sym, uint64_t va,
		      uint64_t size)
{
	char name[AG_NAME_MAX];
	size_t n;

	autograd_syms__short_name(sym, name, sizeof(name));
	n = strlen(name) + 1;
	if (s->nvtables == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct ag_vtable *v = realloc(s->vtables, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->vtables = v;
		*cap = nc;
	}
	{
		char *nn = realloc(s->names, s->names_len + n);

		if (!nn)
			return -ENOMEM;
		s->names = nn;
	}
	memcpy(s->names + s->names_len, name, n);
	s->vtables[s->nvtables].vaddr = va;
	s->vtables[s->nvtables].size = size;
	s->vtables[s->nvtables].name_off = (uint32_t)s->names_len;
	s->names_len += n;
	s->nvtables++;
	return 0;
}

static int cmp_vtable(const void *a, const void *b)
{
	const struct ag_vtable *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/*
 * Only classes of torch::autograd are kept ("_ZTVN5torch8autograd"): every node class lives
 * there (generated::MmBackward0, AccumulateGrad, PyNode, CppNode<T>), and the file holds
 * thousands of other vtables.
 */
static bool node_class_sym(const char *name)
{
	return !strncmp(name, "_ZTVN5torch8autograd", 20);
}

static int scan_dynsym(struct autograd_syms *s, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i, cap = 0;
	GElf_Sym sym;
	int err;

	if (!data || !sh->sh_entsize)
		return -ENOEXEC;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || name[0] != '_')
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
			if (!s->set_edge_vaddr && !strncmp(name, AG_SYM_SET_EDGE, strlen(AG_SYM_SET_EDGE)))
				s->set_edge_vaddr = sym.st_value;
			else if (!s->evaluate_vaddr &&
				 !strncmp(name, AG_SYM_EVALUATE, strlen(AG_SYM_EVALUATE)))
				s->evaluate_vaddr = sym.st_value;
			else if (!s->seq_peek_vaddr && !strcmp(name, AG_SYM_SEQ_PEEK))
				s->seq_peek_vaddr = sym.st_value;
		} else if (GELF_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_size >= 24 &&
			   node_class_sym(name)) {
			err = add_vtable(s, &cap, name, sym.st_value, sym.st_size);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Where the thread's node counter lives, from peek()'s code: lets a launch and the node made
 * by the same op be told apart from others (record/autograd_probe.c). Optional: without it,
 * every node's stack is walked.
 */
static void read_seq_ref(struct autograd_syms *s, int fd)
{
	uint8_t code[64];
	uint64_t off;
	ssize_t n;

	if (!s->seq_peek_vaddr || !autograd_syms__code_off(s, s->seq_peek_vaddr, &off))
		return;
	n = pread(fd, code, sizeof(code), (off_t)off);
	if (n > 0 && !tls_ref__from_code(code, (size_t)n, s->seq_peek_vaddr, &s->seq))
		s->seq_found = true;
}

int autograd_syms__read(struct autograd_syms *s, int fd, char *err, size_t errlen)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *elf;
	int ret = -ENOENT;

	memset(s, 0, sizeof(*s));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "not an ELF file");
		ret = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM) {
			ret = scan_dynsym(s, elf, scn, &sh);
			break;
		}
	}
	if (ret == -ENOENT || (!ret && !s->set_edge_vaddr && !s->evaluate_vaddr && !s->nvtables)) {
		snprintf(err, errlen, "no autograd symbols in its .dynsym");
		ret = -ENOENT;
		goto out;
	}
	if (ret)
		goto out;
	read_segments(s, elf);
	if (s->nvtables)	/* qsort of NULL is undefined even for 0 items */
		qsort(s->vtables, s->nvtables, sizeof(*s->vtables), cmp_vtable);
	if (!s->set_edge_vaddr && !s->evaluate_vaddr) {
		ret = 1;	/* node classes only (libtorch_python's PyNode) */
		goto out;
	}
	if (!s->set_edge_vaddr || !s->evaluate_vaddr) {
		snprintf(err, errlen, "no %s in its .dynsym",
			 s->set_edge_vaddr ? "Engine::evaluate_function" : "impl::set_gradient_edge");
		ret = -ENOENT;
		goto out;
	}
	if (!autograd_syms__code_off(s, s->set_edge_vaddr, &s->set_edge_off) ||
	    !autograd_syms__code_off(s, s->evaluate_vaddr, &s->evaluate_off)) {
		snprintf(err, errlen, "autograd symbols outside its executable segments");
		ret = -ENOEXEC;
		goto out;
	}
	read_seq_ref(s, fd);
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	if (ret < 0)
		autograd_syms__free(s);
	return ret;
}

const char *autograd_syms__class(const struct autograd_syms *s, uint64_t bias, uint64_t vptr)
{
	size_t lo = 0, hi = s->nvtables;
	uint64_t va = vptr - bias;

	/* the last vtable starting at or below va */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->vtables[mid].vaddr <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || va - s->vtables[lo - 1].vaddr >= s->vtables[lo - 1].size)
		return NULL;
	return s->names + s->vtables[lo - 1].name_off;
}

bool autograd_syms__bias(const struct autograd_syms *s, uint64_t start, uint64_t pgoff,
			 uint64_t *bias)
{
	unsigned int i;

	for (i = 0; i < s->nexec; i++) {
		if (pgoff >= s->exec[i].off && pgoff - s->exec[i].off < s->exec[i].size) {
			*bias = start - (pgoff - s->exec[i].off + s->exec[i].vaddr);
			return true;
		}
	}
	return false;
}

void autograd_syms__free(struct autograd_syms *s)
{
	free(s->vtables);
	free(s->names);
	memset(s, 0, sizeof(*s));
}
