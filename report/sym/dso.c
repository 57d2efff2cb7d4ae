// SPDX-License-Identifier: MIT
/*
 * The DSO table (see dso.h). A file is looked up by build-id, never a mismatched one
 * (file_lookup.c), the first time a stack, the unwinder or `archive` asks for it; its symbols,
 * segments and unwind tables are read then, once for every record of the same file.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sort.h"
#include "base/warn.h"
#include "sym/dso.h"
#include "sym/file_lookup.h"
#include "sym/xpa_key.h"

/* The unresolved files the symbol warning names; the rest are counted. */
#define UNRESOLVED_NAMED 3

/*
 * How much of a symbol table's name is the function's: a static symbol table names a versioned
 * symbol with its version ("memcpy@GLIBC_2.2.5", "__libc_start_main@@GLIBC_2.34"), which no
 * report should show and which keeps a C++ name from demangling. No symbol name holds an '@'
 * otherwise (the "@plt" of PLT stubs is ours, added after this).
 */
static size_t unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at > name ? (size_t)(at - name) : strlen(name);
}

/* ---- ELF files ------------------------------------------------------------------------------ */

static bool has_section(Elf *e, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (type && sh.sh_type == type)
			return true;
		n = name ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		if (n && !strcmp(n, name) && sh.sh_type != SHT_NOBITS)
			return true;
	}
	return false;
}

static int bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct dso_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/*
	 * Among aliases, as perf: a sized symbol, then a global over a weak one over a local one
	 * (the vdso's __vdso_clock_gettime over its weak clock_gettime), then fewer leading
	 * underscores, then the shorter (usually public) name.
	 */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	if (bind_rank(x->bind) != bind_rank(y->bind))
		return bind_rank(x->bind) - bind_rank(y->bind);
	if (strspn(x->name, "_") != strspn(y->name, "_"))
		return strspn(x->name, "_") < strspn(y->name, "_") ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Stubs of code_elf's PLT join the symbols: a symbol table never names them. */
static int add_plt(struct dso_file *f, Elf *code_elf, size_t *n, size_t *cap)
{
	size_t i;
	int err;

	if (!code_elf)
		return 0;
	err = plt__synthesize(code_elf, &f->plt, &f->nplt);
	for (i = 0; !err && i < f->nplt; i++) {
		struct dso_sym se = { f->plt[i].addr, f->plt[i].size, f->plt[i].name,
					(uint32_t)strlen(f->plt[i].name), STB_GLOBAL };

		err = VEC_PUSH(f->syms, *n, *cap, se);
	}
	return err;
}

static int load_symtab(struct dso_file *f, Elf *e, Elf *code_elf)
{
	Elf64_Word want[2] = { SHT_SYMTAB, SHT_DYNSYM };
	size_t cap = 0, n = 0, i, k, out;
	int w;

	for (w = 0; w < 2 && !n; w++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t cnt;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want[w] || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			cnt = sh.sh_size / sh.sh_entsize;
			for (i = 0; i < cnt; i++) {
				struct dso_sym se;
				GElf_Sym sym;
				const char *name;
				int type;

				if (!gelf_getsym(data, i, &sym))
					break;
				type = GELF_ST_TYPE(sym.st_info);
				if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
					continue;
				if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
				    !sym.st_value)
					continue;
				if (type == STT_NOTYPE) {
					/* untyped labels count only inside code sections */
					GElf_Shdr ssh;
					Elf_Scn *ss = elf_getscn(e, sym.st_shndx);

					if (!ss || !gelf_getshdr(ss, &ssh) ||
					    !(ssh.sh_flags & SHF_EXECINSTR))
						continue;
				}
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				if (!name || !*name)
					continue;
				se.addr = sym.st_value;
				se.size = sym.st_size;
				se.name = name;
				se.len = unversioned_len(name);
				se.bind = GELF_ST_BIND(sym.st_info);
				if (VEC_PUSH(f->syms, n, cap, se))
					return -ENOMEM;
			}
		}
	}
	if (add_plt(f, code_elf, &n, &cap))
		return -ENOMEM;
	if (n)
		qsort(f->syms, n, sizeof(*f->syms), cmp_sym);
	for (k = 0, out = 0; k < n; k++) {
		if (out && f->syms[out - 1].addr == f->syms[k].addr)
			continue;
		f->syms[out++] = f->syms[k];
	}
	f->nsyms = out;
	return 0;
}

static int load_segs(struct dso_file *f, Elf *e)
{
	size_t phnum, i, cap = 0;

	if (elf_getphdrnum(e, &phnum))
		return 0;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct dso_seg sg;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		sg.off = ph.p_offset;
		sg.vaddr = ph.p_vaddr;
		sg.filesz = ph.p_filesz;
		if (VEC_PUSH(f->segs, f->nsegs, cap, sg))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Files whose frames a launch site is never in: the CUDA runtime and driver, CUPTI and our
 * library, and NVIDIA's libraries (cuBLAS and cuBLASLt, cuDNN, cuFFT, cuSPARSE, cuRAND,
 * cuSOLVER, NCCL, NVTX, NVRTC, nvJitLink): the site is the first caller outside them.
 */
static bool is_cuda_internal(const char *base)
{
	static const char *const pfx[] = {
		"libcuda", "libcudart", "libcupti", "libxpu-cupti", "libcublas", "libcudnn",
		"libcufft", "libcusparse", "libcurand", "libcusolver", "libnccl", "libnvToolsExt",
		"libnvtx", "libnvrtc", "libnvJitLink",
	};
	size_t i;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++) {
		if (!strncmp(base, pfx[i], strlen(pfx[i])))
			return true;
	}
	return false;
}


/* The vdso has no file anywhere: its image comes from the trace (VDSO_IMAGE, since 1.4). */
static void vdso_load(struct dso_table *dt, struct dso_file *f, const struct tr_dso *d)
{
	f->elf = elf_memory((char *)d->image, d->image_len);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || load_symtab(f, f->elf, NULL) ||
	    load_segs(f, f->elf)) {
		f->state = DSO_NOT_ELF;
		return;
	}
	if (fde_table__load(&f->fdes, f->elf)) {
		f->state = DSO_NOT_ELF;
		return;
	}
	f->cfi = dwarf_getcfi_elf(f->elf);
	f->from_trace = true;
	f->state = DSO_OK;
	dt->files_found++;
	if (dt->opts.verbose)
		fprintf(stderr, "xpu-report: [vdso]: image in the trace, %zu symbols\n", f->nsyms);
}

/*
 * A symbol pack's names for the file, before any local file: they are what the recording
 * host printed, from every source it had (debug files included), so a report reads the same
 * wherever it runs. Whether they were found.
 */
static bool pack_load(struct dso_table *dt, struct dso_file *f, const struct tr_dso *d)
{
	char cut[WARN_STR_MAX + 4];
	struct xpa_file_key key;
	size_t i;

	/* `archive` writes what this host gives: never an older pack's names */
	if (dt->opts.no_packs || !xpa_key__of(d, &key))
		return false;
	for (i = 0; i < dt->narchives; i++) {
		f->names = xpa__names(dt->archives[i], &key, &dt->archive_budget);
		if (!f->names)
			continue;
		f->state = DSO_PACK;
		if (dt->opts.verbose)
			fprintf(stderr, "xpu-report: %s: symbol pack, %u addresses\n",
				warn__cut(d->path, cut), f->names->h->naddrs);
		return true;
	}
	return false;
}

static void load_local(struct dso_table *dt, size_t idx);

static void file_load(struct dso_table *dt, size_t idx)
{
	struct dso_file *f = &dt->files[idx];
	const struct tr_dso *d = &dt->t->dsos[idx];

	f->state = DSO_MISSING;
	if (d->rec.kind == XPU_DSO_VDSO && d->image) {
		vdso_load(dt, f, d);
		return;
	}
	if (d->rec.kind != XPU_DSO_ELF || !d->path[0]) {
		f->state = DSO_NOT_ELF;
		return;
	}
	if (pack_load(dt, f, d))
		return;
	load_local(dt, idx);
}

/*
 * Looks the file of the records sharing slot idx up by each one's recorded path in turn (one
 * can lead nowhere, or be refused, where another finds it), at most SHARED_PATHS_TRIED of
 * them: the first found, else the last tried, in ff and *d. 0 or -ENOMEM (ff freed).
 */
#define SHARED_PATHS_TRIED 8

static int find_by_any_path(struct dso_table *dt, size_t idx, const struct file_lookup_opts *lo,
			    struct found_file *ff, const struct tr_dso **d)
{
	size_t j = idx, tried = 0;
	bool mismatch = false;

	for (;;) {
		*d = &dt->t->dsos[j];
		if (file_lookup__find(*d, lo, ff)) {
			found_file__free(ff);
			return -ENOMEM;
		}
		mismatch |= ff->mismatch;
		if (ff->path || ff->debug_path || ff->from_archive || ++tried == SHARED_PATHS_TRIED ||
		    dt->file_next[j] == UINT32_MAX)
			break;
		found_file__free(ff);
		j = dt->file_next[j];
	}
	ff->mismatch |= mismatch;
	return 0;
}

/* The file of a DSO record from this machine: local, debug dirs, --symfs, archive, debuginfod. */
static void load_local(struct dso_table *dt, size_t idx)
{
	struct dso_file *f = &dt->files[idx];
	const struct tr_dso *d;
	struct file_lookup_opts lo = {
		.symfs = dt->opts.symfs,
		.no_host_files = dt->opts.no_host_files,
		.archives = dt->archives,
		.narchives = dt->narchives,
		.archive_budget = &dt->archive_budget,
	};
	struct found_file ff;
	Elf *sym_elf = NULL;
	char cut[WARN_STR_MAX + 4], cut2[WARN_STR_MAX + 4];

	f->state = DSO_MISSING;
	if (find_by_any_path(dt, idx, &lo, &ff, &d))
		return;
	f->found_by = (uint32_t)(d - dt->t->dsos);
	f->path = ff.path;
	f->debug_path = ff.debug_path;
	f->afd = ff.afd;
	f->from_debuginfod = ff.from_debuginfod;
	f->from_archive = ff.from_archive;
	if (f->from_archive) {
		/* the archive's memfd, not its /proc path: nothing under /proc is opened */
		f->fd = fcntl(f->afd, F_DUPFD_CLOEXEC, 0);
		f->elf = file_lookup__elf_fd(&f->fd);
	} else if (f->path) {
		f->elf = file_lookup__open_elf(f->path, &f->fd);
		/* swapped since it was checked: symbols from it would be another file's */
		if (f->elf && !file_lookup__is_recorded(d, f->fd)) {
			elf_end(f->elf);
			f->elf = NULL;
			close(f->fd);
			f->fd = -1;
			ff.mismatch = true;
		}
	}
	if (f->debug_path)
		f->delf = file_lookup__open_elf(f->debug_path, &f->dfd);
	if (!f->elf && !f->delf) {
		if (ff.mismatch) {
			f->state = DSO_MISMATCH;
			dt->files_mismatch++;
			/* one summary for all (dso_table__warn_unresolved); each with -v */
			if (dt->opts.verbose && d->rec.build_id_len)
				fprintf(stderr, "xpu-report: build-id mismatch for %s: symbols not used\n",
					warn__cut(d->path, cut));
			else if (dt->opts.verbose)
				fprintf(stderr, "xpu-report: %s has no build-id, and the file at its path "
					"is not the recorded size and mtime: symbols not used\n",
					warn__cut(d->path, cut));
		} else {
			char hex[2 * XPU_BUILD_ID_MAX + 1];

			dt->files_missing++;
			file_lookup__hex(d, hex);
			if (dt->opts.verbose)
				fprintf(stderr, "xpu-report: no local file for %s (build-id %s)%s\n",
					warn__cut(d->path, cut), hex[0] ? hex : "none", ff.refused ?
					": its path has \"..\", is relative, is in /proc, /sys or "
					"/dev, or leaves --symfs" : "");
		}
		return;
	}
	dt->files_found++;
	/* symbols: the main file's .symtab, else the debug file's, else .dynsym */
	if (f->elf && has_section(f->elf, SHT_SYMTAB, NULL))
		sym_elf = f->elf;
	else if (f->delf && has_section(f->delf, SHT_SYMTAB, NULL))
		sym_elf = f->delf;
	else
		sym_elf = f->elf ? f->elf : f->delf;
	if (load_symtab(f, sym_elf, f->elf) || load_segs(f, f->elf ? f->elf : f->delf))
		return;
	if (f->elf && fde_table__load(&f->fdes, f->elf))
		return;
	if (f->elf)
		f->cfi = dwarf_getcfi_elf(f->elf);
	if (f->elf && has_section(f->elf, 0, ".debug_info"))
		f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	else if (f->delf && has_section(f->delf, 0, ".debug_info"))
		f->dw = dwarf_begin_elf(f->delf, DWARF_C_READ, NULL);
	f->state = DSO_OK;
	if (dt->opts.verbose)
		fprintf(stderr, "xpu-report: %s: %s%s%s, %zu symbols%s\n", warn__cut(d->path, cut),
			f->from_archive ? "archive" : f->path ? warn__cut(f->path, cut2) : "",
			f->path && f->debug_path ? " + " : "",
			f->debug_path ? f->debug_path : "", f->nsyms, f->dw ? ", dwarf" : "");
}

/* The file of a DSO record, loaded on first use: the slot of the first record of its file. */
struct dso_file *dso_table__file(struct dso_table *dt, size_t idx)
{
	struct dso_file *f;

	idx = dt->file_of[idx];
	f = &dt->files[idx];
	if (f->state == DSO_UNTRIED)
		file_load(dt, idx);
	return f;
}

const struct dso_file *dso_table__peek(const struct dso_table *dt, size_t idx)
{
	return &dt->files[dt->file_of[idx]];
}

void dso_table__open_local(struct dso_table *dt, size_t idx)
{
	idx = dt->file_of[idx];
	if (dt->files[idx].state == DSO_PACK)
		load_local(dt, idx);
}

const char *dso_table__status(const struct dso_table *dt, size_t idx)
{
	const struct dso_file *f;

	if (idx >= dt->t->ndsos)
		return "?";
	f = dso_table__peek(dt, idx);
	if (f->state == DSO_UNTRIED)
		return "not looked up";
	if (f->names)
		return "symbol pack";
	switch (f->state) {
	case DSO_OK:
		/* the memfd's number depends on what else is open: never print it */
		if (f->from_archive)
			return "archive";
		if (f->from_trace)
			return "image in the trace";
		return f->path ? f->path : f->debug_path;
	case DSO_MISMATCH:
		/* without a build-id, the file at its path has another size or mtime */
		return dt->t->dsos[idx].rec.build_id_len ? "build-id mismatch" :
							   "changed since recorded";
	case DSO_NOT_ELF:
		return "-";
	default:
		return "not found";
	}
}

enum dso_found dso_table__found(struct dso_table *dt, size_t idx)
{
	if (idx >= dt->t->ndsos)
		return DSO_FOUND_NO_FILE;
	if (dso_table__file(dt, idx)->names)
		return DSO_FOUND;
	switch (dt->files[dt->file_of[idx]].state) {
	case DSO_OK:
		return DSO_FOUND;
	case DSO_MISMATCH:
		return DSO_FOUND_MISMATCH;
	case DSO_NOT_ELF:
		return DSO_FOUND_NO_FILE;
	default:
		return DSO_FOUND_MISSING;
	}
}

const char *dso_table__elf(struct dso_table *dt, size_t idx, int *fd)
{
	struct dso_file *f;

	if (idx >= dt->t->ndsos)
		return NULL;
	f = dso_table__file(dt, idx);
	if (f->state != DSO_OK || f->from_trace)
		return NULL;
	if (f->elf) {
		*fd = f->fd;
		return f->path;
	}
	*fd = f->dfd;
	return f->debug_path;
}

int dso_table__bias(struct dso_table *dt, size_t idx, const struct xpu_rec_mapping *m,
		    uint64_t *bias)
{
	const struct dso_file *f;
	size_t i;

	if (!dso_table__elf(dt, idx, &(int){ 0 }))
		return -ENOENT;
	f = &dt->files[dt->file_of[idx]];
	for (i = 0; i < f->nsegs; i++) {
		const struct dso_seg *sg = &f->segs[i];

		/* start maps file offset pgoff, i.e. vaddr sg->vaddr + (pgoff - sg->off) */
		if (m->pgoff >= (sg->off & ~4095ull) && m->pgoff < sg->off + sg->filesz) {
			*bias = m->start - (sg->vaddr + m->pgoff - sg->off);
			return 0;
		}
	}
	return -ENOENT;
}

uint64_t dso_file__vaddr(const struct dso_file *f, uint64_t off)
{
	size_t i;

	for (i = 0; i < f->nsegs; i++) {
		if (off >= f->segs[i].off && off - f->segs[i].off < f->segs[i].filesz)
			return off - f->segs[i].off + f->segs[i].vaddr;
	}
	/* no segment holds it (odd mapping): assume the first segment's bias */
	if (f->nsegs)
		return off - f->segs[0].off + f->segs[0].vaddr;
	return off;
}

struct sym_key {
	const struct dso_sym *syms;
	uint64_t v;
};

static bool sym_at_most(size_t i, const void *arg)
{
	const struct sym_key *k = arg;

	return k->syms[i].addr <= k->v;
}

const struct dso_sym *dso_file__sym(const struct dso_file *f, uint64_t v)
{
	struct sym_key key = { .syms = f->syms, .v = v };
	size_t lo = upper_bound(f->nsyms, sym_at_most, &key);
	const struct dso_sym *e;

	if (!lo)
		return NULL;
	e = &f->syms[lo - 1];
	/* a size-0 symbol (hand-written asm) extends to the next symbol */
	if (e->size && v - e->addr >= e->size)
		return NULL;
	return e;
}

uint64_t dso_file__off(const struct dso_file *f, uint64_t v)
{
	size_t i;

	for (i = 0; i < f->nsegs; i++) {
		if (v >= f->segs[i].vaddr && v - f->segs[i].vaddr < f->segs[i].filesz)
			return v - f->segs[i].vaddr + f->segs[i].off;
	}
	return v;
}

/*
 * The start of the .eh_frame FDE that covers v (see fde.h). libdw says whether an FDE covers v
 * at all (its row range is only part of the FDE); the header's table says where it starts.
 */
bool dso_file__fde_start(const struct dso_file *f, uint64_t v, uint64_t *start)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr lo, hi;
	bool ok;

	if (!f->cfi || !f->fdes.n || dwarf_cfi_addrframe(f->cfi, v, &fr) || !fr)
		return false;
	ok = dwarf_frame_info(fr, &lo, &hi, NULL) >= 0 && lo <= v && v < hi;
	free(fr);
	return ok && fde_table__find(&f->fdes, v, start) && *start <= lo;
}


size_t dso_table__file_record(struct dso_table *dt, size_t idx)
{
	const struct dso_file *f;

	if (idx >= dt->t->ndsos)
		return idx;
	f = dso_table__file(dt, idx);
	return f->state == DSO_OK && !f->from_trace ? f->found_by : idx;
}

/*
 * Whether two DSO records name one file: the same build-id, or without one the same path,
 * size and mtime (a library rebuilt at its path between two runs of a trace is another file,
 * and a symbol pack holds each under its own key: xpa_key.h).
 */
static bool same_file_rec(const struct tr_dso *a, const struct tr_dso *b)
{
	if (a->rec.kind != b->rec.kind || a->rec.build_id_len != b->rec.build_id_len)
		return false;
	if (a->rec.build_id_len)
		return !memcmp(a->rec.build_id, b->rec.build_id, a->rec.build_id_len);
	return a->rec.size_bytes == b->rec.size_bytes && a->rec.mtime_ns == b->rec.mtime_ns &&
	       !strcmp(a->path, b->path);
}

/*
 * One file slot per file, not per DSO record: a trace names one library in a record per
 * process (and a hostile one in 20,000), and each would load its symbol table, open its
 * descriptors and hold its memory again. ELF records share by build-id, else by path.
 */
static int share_files(struct dso_table *dt)
{
	const struct trace *t = dt->t;
	struct kmap first = { 0 };
	uint32_t *last;
	size_t i;

	dt->file_of = malloc((t->ndsos ? t->ndsos : 1) * sizeof(*dt->file_of));
	dt->file_next = malloc((t->ndsos ? t->ndsos : 1) * sizeof(*dt->file_next));
	last = malloc((t->ndsos ? t->ndsos : 1) * sizeof(*last));
	if (!dt->file_of || !dt->file_next || !last) {
		free(last);
		return -ENOMEM;
	}
	for (i = 0; i < t->ndsos; i++) {
		const struct tr_dso *d = &t->dsos[i];
		uint64_t h = d->rec.build_id_len ? hash_bytes(d->rec.build_id, d->rec.build_id_len) :
						   hash_bytes(d->path, strlen(d->path));
		uint32_t *v;
		bool ins;

		dt->file_of[i] = (uint32_t)i;
		dt->file_next[i] = UINT32_MAX;
		last[i] = (uint32_t)i;
		if (d->rec.kind != XPU_DSO_ELF || (!d->rec.build_id_len && !d->path[0]))
			continue;
		v = kmap__put(&first, h, d->rec.build_id_len, (uint32_t)i, &ins);
		if (!v) {
			kmap__free(&first);
			free(last);
			return -ENOMEM;
		}
		/* a hash shared by two files (crafted build-ids): the later keeps its own slot */
		if (!ins && same_file_rec(&t->dsos[*v], d)) {
			dt->file_of[i] = *v;
			dt->file_next[last[*v]] = (uint32_t)i;
			last[*v] = (uint32_t)i;
		}
	}
	kmap__free(&first);
	free(last);
	return 0;
}


/* A file the stacks went through that gave no symbols (dso_table__warn_unresolved). */
struct unresolved {
	const struct tr_dso *d;
	uint64_t frames;	/* in the stacks: the files that matter most are named */
	size_t order;		/* of collection: ties keep the trace's order */
	bool mismatch;
};

static bool same_file(const struct tr_dso *a, const struct tr_dso *b)
{
	return a->rec.build_id_len == b->rec.build_id_len &&
	       !memcmp(a->rec.build_id, b->rec.build_id, a->rec.build_id_len) &&
	       !strcmp(a->path, b->path);
}

/* Adds the files dt's stacks went through that gave no symbols to *u, each once over all. */
static int collect_unresolved(const struct dso_table *dt, struct unresolved **u, size_t *n,
			      size_t *cap)
{
	size_t i, k;

	for (i = 0; dt->files && i < dt->t->ndsos; i++) {
		const struct dso_file *f = &dt->files[i];
		struct unresolved x = { &dt->t->dsos[i], f->stack_frames, *n,
					f->state == DSO_MISMATCH };

		if (!f->stack_frames || (f->state != DSO_MISSING && f->state != DSO_MISMATCH))
			continue;
		for (k = 0; k < *n && !same_file((*u)[k].d, x.d); k++)
			;
		if (k < *n)
			(*u)[k].frames += x.frames;
		else if (VEC_PUSH(*u, *n, *cap, x))
			return -ENOMEM;
	}
	return 0;
}

/* Most frames first (qsort is not stable: order breaks ties). */
static int cmp_unresolved(const void *a, const void *b)
{
	const struct unresolved *x = a, *y = b;

	if (x->frames != y->frames)
		return x->frames > y->frames ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Appends to the string in buf, as far as it fits. */
static void appendf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* How many, missing and mismatched, and the first few by name. */
static void describe_unresolved(const struct unresolved *u, size_t n, bool verbose, char *buf,
				size_t size)
{
	size_t i, nmis = 0, nchg = 0;

	/* a file without build-id that mismatched is one of another size or mtime at its path */
	for (i = 0; i < n; i++) {
		nmis += u[i].mismatch && u[i].d->rec.build_id_len;
		nchg += u[i].mismatch && !u[i].d->rec.build_id_len;
	}
	appendf(buf, size, "%zu file%s the stacks go through could not be symbolized (", n,
		n == 1 ? "" : "s");
	if (nmis == n) {
		appendf(buf, size, "another build-id here");
	} else if (nchg == n) {
		appendf(buf, size, "changed since recorded: size or mtime");
	} else if (!nmis && !nchg) {
		appendf(buf, size, "not found here");
	} else {
		const char *sep = "";

		if (n - nmis - nchg) {
			appendf(buf, size, "%zu not found", n - nmis - nchg);
			sep = ", ";
		}
		if (nmis) {
			appendf(buf, size, "%s%zu with another build-id", sep, nmis);
			sep = ", ";
		}
		if (nchg)
			appendf(buf, size, "%s%zu changed since recorded", sep, nchg);
	}
	appendf(buf, size, "): ");
	for (i = 0; i < n && i < UNRESOLVED_NAMED; i++) {
		const char *b = strrchr(u[i].d->path, '/');

		appendf(buf, size, "%s%s", i ? ", " : "", b ? b + 1 : u[i].d->path);
	}
	if (n > UNRESOLVED_NAMED)
		appendf(buf, size, " and %zu more%s", n - UNRESOLVED_NAMED,
			verbose ? "" : " (-v lists them)");
}

/* The trace whose archive was looked for: the first one without an archive, else the first. */
static const char *archive_trace(const struct dso_table *const *dts, size_t n, size_t *nmissing)
{
	const char *first = NULL, *without = NULL;
	size_t i, k;

	*nmissing = 0;
	for (i = 0; i < n; i++) {
		for (k = 0; k < dts[i]->narchives; k++) {
			const char *p = k ? dts[i]->opts.more_paths[k - 1] : dts[i]->opts.trace_path;

			first = first ? first : p;
			if (dts[i]->archives[k])
				continue;
			without = without ? without : p;
			(*nmissing)++;
		}
	}
	return without ? without : first;
}

/* Which archive was looked for, and the command that makes it. */
static void describe_archive(const struct dso_table *const *dts, size_t n, char *buf,
			     size_t size)
{
	size_t nmissing;
	const char *trace = archive_trace(dts, n, &nmissing);

	if (!trace || !strcmp(trace, "-")) {
		appendf(buf, size, "; no archive for a trace read from standard input: save it "
			"as TRACE and run 'xpu-report archive TRACE' on the recording host");
		return;
	}
	if (!nmissing) {
		appendf(buf, size, "; not in the archive %s.xpa either: remake it with "
			"'xpu-report archive %s' on the recording host", trace, trace);
		return;
	}
	appendf(buf, size, "; no archive %s.xpa", trace);
	if (nmissing > 1)
		appendf(buf, size, " (nor beside %zu other trace%s)", nmissing - 1,
			nmissing > 2 ? "s" : "");
	appendf(buf, size, ": make it with 'xpu-report archive %s' on the recording host", trace);
}

void dso_table__warn_unresolved(const struct dso_table *const *dts, size_t n)
{
	struct unresolved *u = NULL;
	size_t nu = 0, cap = 0, i;
	char line[1536] = "";
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = collect_unresolved(dts[i], &u, &nu, &cap);
	if (!err && nu) {
		qsort(u, nu, sizeof(*u), cmp_unresolved);
		describe_unresolved(u, nu, n && dts[0]->opts.verbose, line, sizeof(line));
		describe_archive(dts, n, line, sizeof(line));
		warn__once("warning: %s", line);
	}
	free(u);
}

void dso_table__sources(const struct dso_table *dt, struct sym_sources *src)
{
	size_t i;

	memset(src, 0, sizeof(*src));
	for (i = 0; dt->files && i < dt->t->ndsos; i++) {
		const struct dso_file *f = &dt->files[i];

		if (!f->stack_frames || f->from_trace)
			continue;
		if (f->names)
			src->pack++;
		else if (f->state == DSO_MISSING || f->state == DSO_MISMATCH)
			src->missing++;
		else if (f->state != DSO_OK)
			continue;
		else if (f->from_archive)
			src->archive++;
		else if (f->from_debuginfod)
			src->debuginfod++;
		else
			src->local++;
	}
}

const struct xpa_names_addr *dso_table__pack_addr(struct dso_table *dt, size_t idx,
						  uint64_t file_off,
						  const struct xpa_names **names)
{
	const struct dso_file *f = dso_table__file(dt, idx);
	const struct tr_dso *d = &dt->t->dsos[idx];
	const struct xpa_names_addr *a = NULL;
	struct xpa_file_key key;
	size_t k;

	*names = f->names;
	if (f->names)
		a = xpa_names__find(f->names, file_off);
	/* traces read as one: each pack has the addresses its own trace touched */
	for (k = 0; f->names && !a && k < dt->narchives && xpa_key__of(d, &key); k++) {
		*names = xpa__names(dt->archives[k], &key, &dt->archive_budget);
		a = *names && *names != f->names ? xpa_names__find(*names, file_off) : NULL;
	}
	return a;
}

const struct xpa_walks *dso_table__walks(struct dso_table *dt, const uint8_t uuid[16])
{
	const struct xpa_walks *w = NULL;
	size_t i;

	if (dt->opts.no_packs)
		return NULL;
	for (i = 0; i < dt->narchives && !w; i++)
		w = xpa__walks(dt->archives[i], uuid, &dt->archive_budget);
	return w;
}

int dso_table__init(struct dso_table *dt, const struct trace *t, const struct dso_opts *opts)
{
	size_t i;
	int err;

	memset(dt, 0, sizeof(*dt));
	dt->t = t;
	dt->opts = *opts;
	elf_version(EV_CURRENT);
	err = maps__build(&dt->maps, t->mappings, t->nmappings);
	if (err)
		return err;
	dt->files = calloc(t->ndsos ? t->ndsos : 1, sizeof(*dt->files));
	if (!dt->files)
		return -ENOMEM;
	for (i = 0; i < t->ndsos; i++) {
		const char *b = strrchr(t->dsos[i].path, '/');

		dt->files[i].fd = dt->files[i].dfd = dt->files[i].afd = -1;
		dt->files[i].base = b ? b + 1 : t->dsos[i].path;
		dt->files[i].cuda_internal = is_cuda_internal(dt->files[i].base);
	}
	err = share_files(dt);
	if (err)
		return err;
	dt->archive_budget.max_bytes = opts->archive_max_bytes;
	dt->archives = calloc(1 + opts->nmore_paths, sizeof(*dt->archives));
	if (!dt->archives)
		return -ENOMEM;
	for (i = 0; i <= opts->nmore_paths; i++) {
		err = xpa__open_for_trace(&dt->archives[i], i ? opts->more_paths[i - 1] :
								  opts->trace_path);
		if (err)
			return err;
		dt->narchives = i + 1;
	}
	return 0;
}

void dso_table__free(struct dso_table *dt)
{
	size_t i;

	for (i = 0; dt->files && i < dt->t->ndsos; i++) {
		struct dso_file *f = &dt->files[i];

		if (f->cfi)
			dwarf_cfi_end(f->cfi);
		if (f->dw)
			dwarf_end(f->dw);
		if (f->elf)
			elf_end(f->elf);
		if (f->delf)
			elf_end(f->delf);
		if (f->fd >= 0)
			close(f->fd);
		if (f->dfd >= 0)
			close(f->dfd);
		if (f->afd >= 0)
			close(f->afd);
		free(f->path);
		free(f->debug_path);
		free(f->syms);
		free(f->segs);
		plt__free(f->plt, f->nplt);
		fde_table__free(&f->fdes);
	}
	free(dt->files);
	free(dt->file_of);
	free(dt->file_next);
	for (i = 0; i < dt->narchives; i++)
		xpa__close(dt->archives[i]);
	free(dt->archives);
	maps__free(&dt->maps);
	memset(dt, 0, sizeof(*dt));
}
