// SPDX-License-Identifier: MIT
/*
 * PLT stub names (see plt.h). A stub is found by decoding its `jmp *disp32(%rip)` (ff 25,
 * possibly after endbr64 and a bnd prefix), which gives the GOT slot it jumps through; the
 * relocation of that slot names the symbol. This works the same for lazy .plt entries,
 * IBT's .plt.sec and .plt.got, and does not depend on .rela.plt's order matching the stubs'.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/containers.h"
#include "base/sort.h"
#include "sym/plt.h"

struct got_name {
	uint64_t slot;
	const char *name;	/* in the ELF file's string table */
};

struct plt_ctx {
	Elf *e;
	struct got_name *got;
	size_t ngot, got_cap;
	struct plt_sym *out;
	size_t nout, out_cap;
};

static int cmp_got(const void *a, const void *b)
{
	const struct got_name *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Every relocation of a SHT_RELA section that names a symbol: its slot and the name. */
static int add_relocs(struct plt_ctx *c, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Scn *symscn = elf_getscn(c->e, sh->sh_link);
	Elf_Data *data = elf_getdata(scn, NULL), *symdata;
	GElf_Shdr symsh;
	size_t i, cnt, nsyms;

	if (!data || !symscn || !gelf_getshdr(symscn, &symsh) || !symsh.sh_entsize ||
	    !sh->sh_entsize)
		return 0;
	symdata = elf_getdata(symscn, NULL);
	if (!symdata)
		return 0;
	cnt = data->d_size / sh->sh_entsize;
	nsyms = symdata->d_size / symsh.sh_entsize;
	for (i = 0; i < cnt; i++) {
		size_t symi;
		GElf_Rela r;
		GElf_Sym sym;
		struct got_name g;

		if (!gelf_getrela(data, (int)i, &r))
			break;
		symi = GELF_R_SYM(r.r_info);
		if (!symi || symi >= nsyms || !gelf_getsym(symdata, (int)symi, &sym))
			continue;
		g.slot = r.r_offset;
		g.name = elf_strptr(c->e, symsh.sh_link, sym.st_name);
		if (!g.name || !*g.name)
			continue;
		if (VEC_PUSH(c->got, c->ngot, c->got_cap, g))
			return -ENOMEM;
	}
	return 0;
}

struct got_key {
	const struct plt_ctx *c;
	uint64_t slot;
};

static bool got_below(size_t i, const void *arg)
{
	const struct got_key *k = arg;

	return k->c->got[i].slot < k->slot;
}

static const char *got_lookup(const struct plt_ctx *c, uint64_t slot)
{
	size_t i = upper_bound(c->ngot, got_below, &(struct got_key){ c, slot });

	return i < c->ngot && c->got[i].slot == slot ? c->got[i].name : NULL;
}

/* The GOT slot a stub of len bytes at vaddr jumps through, or 0 when it has no such jump. */
static uint64_t stub_slot(const uint8_t *p, size_t len, uint64_t vaddr)
{
	/* jmp at 0 (classic), 1 (bnd), 4 (endbr64), 5 (endbr64 + bnd) */
	static const size_t at[] = { 0, 1, 4, 5 };
	size_t k;

	for (k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		size_t o = at[k];
		int32_t disp;

		if (o + 6 > len || p[o] != 0xff || p[o + 1] != 0x25)
			continue;
		memcpy(&disp, p + o + 2, sizeof(disp));
		return vaddr + o + 6 + (int64_t)disp;
	}
	return 0;
}

static int add_stubs(struct plt_ctx *c, Elf_Scn *scn, const GElf_Shdr *sh, const char *secname)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	uint64_t ent = sh->sh_entsize;
	size_t off;

	if (!data || !data->d_buf || sh->sh_type == SHT_NOBITS)
		return 0;
	if (ent < 8 || ent > 64)
		ent = strcmp(secname, ".plt.got") ? 16 : 8;
	/* .plt's first entry is the lazy resolver's trampoline, not a stub */
	for (off = strcmp(secname, ".plt") ? 0 : ent; off + ent <= data->d_size; off += ent) {
		uint64_t va = sh->sh_addr + off;
		uint64_t slot = stub_slot((const uint8_t *)data->d_buf + off, ent, va);
		const char *name = slot ? got_lookup(c, slot) : NULL;
		struct plt_sym ps = { .addr = va, .size = ent };
		size_t len;

		if (!name)
			continue;
		len = strlen(name) + sizeof("@plt");
		ps.name = malloc(len);
		if (!ps.name)
			return -ENOMEM;
		snprintf(ps.name, len, "%s@plt", name);
		if (VEC_PUSH(c->out, c->nout, c->out_cap, ps)) {
			free(ps.name);
			return -ENOMEM;
		}
	}
	return 0;
}

/* pass 0 gathers the relocations, pass 1 decodes the stubs */
static int scan_sections(struct plt_ctx *c, size_t shstrndx, int pass)
{
	Elf_Scn *scn = NULL;
	int err = 0;

	while (!err && (scn = elf_nextscn(c->e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(c->e, shstrndx, sh.sh_name);
		if (!n)
			continue;
		if (pass == 0 && sh.sh_type == SHT_RELA &&
		    (!strcmp(n, ".rela.plt") || !strcmp(n, ".rela.dyn")))
			err = add_relocs(c, scn, &sh);
		else if (pass == 1 &&
			 (!strcmp(n, ".plt") || !strcmp(n, ".plt.sec") || !strcmp(n, ".plt.got")))
			err = add_stubs(c, scn, &sh, n);
	}
	return err;
}

int plt__synthesize(Elf *e, struct plt_sym **out, size_t *n)
{
	struct plt_ctx c = { .e = e };
	size_t shstrndx;
	GElf_Ehdr eh;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 || elf_getshdrstrndx(e, &shstrndx))
		return 0;
	err = scan_sections(&c, shstrndx, 0);
	if (err || !c.ngot)
		goto cleanup;
	qsort(c.got, c.ngot, sizeof(*c.got), cmp_got);
	err = scan_sections(&c, shstrndx, 1);
cleanup:
	free(c.got);
	if (err) {
		plt__free(c.out, c.nout);
		return err;
	}
	*out = c.out;
	*n = c.nout;
	return 0;
}

void plt__free(struct plt_sym *syms, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(syms[i].name);
	free(syms);
}
