// SPDX-License-Identifier: MIT
/*
 * Symbolization. The files of each DSO come from file_lookup.c (build-id first, never a
 * mismatched file). An address is taken to a file offset through its mapping (start, pgoff),
 * then to an ELF virtual address through the PT_LOAD that holds that offset. Frames we cannot
 * name keep their module and file offset ("libfoo.so+0x1234"): a stack never loses a frame.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/warn.h"
#include "sym/backward.h"
#include "sym/demangle.h"
#include "sym/fde.h"
#include "sym/file_lookup.h"
#include "sym/jitsyms.h"
#include "sym/kallsyms.h"
#include "sym/plt.h"
#include "sym/pyframes.h"
#include "sym/symbolize.h"
#include "sym/xpa.h"
#include "sym/xpa_pack.h"

/* The unresolved files the symbol warning names; the rest are counted. */
#define UNRESOLVED_NAMED 3

enum {
	SF_UNTRIED = 0,
	SF_OK,
	SF_MISSING,
	SF_MISMATCH,
	SF_NOT_ELF,		/* kernel, vdso, anonymous: nothing to open */
	SF_PACK,		/* named from a symbol pack (names); no local file tried yet */
};

struct sym_entry {
	uint64_t addr, size;
	const char *name;	/* into the ELF string table, or sym_file.plt */
	uint32_t len;		/* of the name without its symbol version (unversioned_len) */
	uint8_t bind;		/* STB_* */
};

struct seg {
	uint64_t off, vaddr, filesz;
};

struct sym_file {
	int state;
	char *path;		/* file used for symbols */
	char *debug_path;	/* separate debug file, if any */
	int fd, dfd;
	int afd;		/* memfd holding the file extracted from the archive */
	bool from_archive;	/* path names afd: report "archive", not the fd number */
	bool from_debuginfod;	/* path or debug_path came from a debuginfod server */
	uint32_t found_by;	/* the DSO record whose recorded path led to the file */
	Elf *elf, *delf;
	Dwarf *dw;
	struct sym_entry *syms;
	size_t nsyms;
	struct seg *segs;
	size_t nsegs;
	struct plt_sym *plt;	/* owns the names of the "sym@plt" entries of syms */
	size_t nplt;
	Dwarf_CFI *cfi;		/* .eh_frame of elf, for code no symbol covers */
	struct fde_table fdes;	/* its functions' starts */
	bool from_trace;	/* elf is the vdso image the trace carries */
	const char *base;	/* basename of the recorded path */
	bool cuda_internal;	/* CUDA's and NVIDIA's libraries, ours: trimmed (is_cuda_internal) */
	const struct xpa_names *names;	/* a symbol pack's, held by the archive, or NULL */
	uint64_t stack_frames;	/* frames of it in the stacks symbolized (the unwinder loads more) */
};

static uint32_t frame_internf(struct strpool *pool, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static uint32_t frame_internf(struct strpool *pool, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	return frame_intern(pool, buf, n);
}

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

/* The frame of name's first len bytes, demangled, with suffix (or NULL) appended. */
static uint32_t intern_symbol(struct strpool *pool, const char *name, size_t len,
			      const char *suffix)
{
	char cut[DEMANGLE_MAX_INPUT + 1], dem[DEMANGLE_MAX_OUTPUT], buf[DEMANGLE_MAX_OUTPUT + 64];
	const char *n = name;
	int dlen;

	/* the demangler reads to the NUL: cut a versioned name (a longer one never demangles) */
	if (name[len] && len < sizeof(cut)) {
		memcpy(cut, name, len);
		cut[len] = '\0';
		n = cut;
	}
	if (!n[len] && !strncmp(n, "_Z", 2) && (dlen = xpu_demangle(n, dem, sizeof(dem))) >= 0) {
		n = dem;
		len = dlen;
	}
	if (!suffix)
		return frame_intern(pool, n, len);
	snprintf(buf, sizeof(buf), "%.*s%s", (int)len, n, suffix);
	return frame_intern(pool, buf, strlen(buf));
}

static uint32_t kernel_frame(struct symbolizer *s, uint64_t addr)
{
	const char *name = kallsyms__find(&s->ksyms, addr);

	if (!name)
		return frame_intern(s->pool, "[kernel.kallsyms]_[k]", 21);
	return intern_symbol(s->pool, name, strlen(name), "_[k]");
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
	const struct sym_entry *x = a, *y = b;

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
static int add_plt(struct sym_file *f, Elf *code_elf, size_t *n, size_t *cap)
{
	size_t i;
	int err;

	if (!code_elf)
		return 0;
	err = plt__synthesize(code_elf, &f->plt, &f->nplt);
	for (i = 0; !err && i < f->nplt; i++) {
		struct sym_entry se = { f->plt[i].addr, f->plt[i].size, f->plt[i].name,
					(uint32_t)strlen(f->plt[i].name), STB_GLOBAL };

		err = VEC_PUSH(f->syms, *n, *cap, se);
	}
	return err;
}

static int load_symtab(struct sym_file *f, Elf *e, Elf *code_elf)
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
				struct sym_entry se;
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

static int load_segs(struct sym_file *f, Elf *e)
{
	size_t phnum, i, cap = 0;

	if (elf_getphdrnum(e, &phnum))
		return 0;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct seg sg;

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

/*
 * The CUDA runtime linked into the program itself (nvcc's default, -cudart static): its entry
 * points (cudaLaunchKernel, cudaMemcpyAsync), the registration calls nvcc emits (__cuda*) and
 * its internals (libcudart_static_<hash>, cudart::, __cudart*) are trimmed by name, as the
 * shared runtime is by file.
 */
static bool is_cudart_symbol(const char *name)
{
	return (!strncmp(name, "cuda", 4) && name[4] >= 'A' && name[4] <= 'Z') ||
	       !strncmp(name, "__cuda", 6) || !strncmp(name, "libcudart_static_", 17) ||
	       !strncmp(name, "cudart::", 8);
}

/* The vdso has no file anywhere: its image comes from the trace (VDSO_IMAGE, since 1.4). */
static void vdso_load(struct symbolizer *s, struct sym_file *f, const struct tr_dso *d)
{
	f->elf = elf_memory((char *)d->image, d->image_len);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || load_symtab(f, f->elf, NULL) ||
	    load_segs(f, f->elf)) {
		f->state = SF_NOT_ELF;
		return;
	}
	if (fde_table__load(&f->fdes, f->elf)) {
		f->state = SF_NOT_ELF;
		return;
	}
	f->cfi = dwarf_getcfi_elf(f->elf);
	f->from_trace = true;
	f->state = SF_OK;
	s->files_found++;
	if (s->opts.verbose)
		fprintf(stderr, "xpu-report: [vdso]: image in the trace, %zu symbols\n", f->nsyms);
}

/*
 * A symbol pack's names for the file, before any local file: they are what the recording
 * host printed, from every source it had (debug files included), so a report reads the same
 * wherever it runs. Whether they were found.
 */
static bool pack_load(struct symbolizer *s, struct sym_file *f, const struct tr_dso *d)
{
	char cut[WARN_STR_MAX + 4];
	size_t i;

	/* `archive` writes what this host gives: never an older pack's names */
	for (i = 0; i < s->narchives && d->rec.build_id_len && !s->opts.no_packs; i++) {
		f->names = xpa__names(s->archives[i], d->rec.build_id, d->rec.build_id_len,
				      &s->archive_budget);
		if (!f->names)
			continue;
		f->state = SF_PACK;
		if (s->opts.verbose)
			fprintf(stderr, "xpu-report: %s: symbol pack, %u addresses\n",
				warn__cut(d->path, cut), f->names->h->naddrs);
		return true;
	}
	return false;
}

static void load_local(struct symbolizer *s, size_t idx);

static void sym_file_load(struct symbolizer *s, size_t idx)
{
	struct sym_file *f = &s->files[idx];
	const struct tr_dso *d = &s->t->dsos[idx];

	f->state = SF_MISSING;
	if (d->rec.kind == XPU_DSO_VDSO && d->image) {
		vdso_load(s, f, d);
		return;
	}
	if (d->rec.kind != XPU_DSO_ELF || !d->path[0]) {
		f->state = SF_NOT_ELF;
		return;
	}
	if (pack_load(s, f, d))
		return;
	load_local(s, idx);
}

/*
 * Looks the file of the records sharing slot idx up by each one's recorded path in turn (one
 * can lead nowhere, or be refused, where another finds it), at most SHARED_PATHS_TRIED of
 * them: the first found, else the last tried, in ff and *d. 0 or -ENOMEM (ff freed).
 */
#define SHARED_PATHS_TRIED 8

static int find_by_any_path(struct symbolizer *s, size_t idx, const struct file_lookup_opts *lo,
			    struct found_file *ff, const struct tr_dso **d)
{
	size_t j = idx, tried = 0;
	bool mismatch = false;

	for (;;) {
		*d = &s->t->dsos[j];
		if (file_lookup__find(*d, lo, ff)) {
			found_file__free(ff);
			return -ENOMEM;
		}
		mismatch |= ff->mismatch;
		if (ff->path || ff->debug_path || ff->from_archive || ++tried == SHARED_PATHS_TRIED ||
		    s->file_next[j] == UINT32_MAX)
			break;
		found_file__free(ff);
		j = s->file_next[j];
	}
	ff->mismatch |= mismatch;
	return 0;
}

/* The file of a DSO record from this machine: local, debug dirs, --symfs, archive, debuginfod. */
static void load_local(struct symbolizer *s, size_t idx)
{
	struct sym_file *f = &s->files[idx];
	const struct tr_dso *d;
	struct file_lookup_opts lo = {
		.symfs = s->opts.symfs,
		.no_host_files = s->opts.no_host_files,
		.archives = s->archives,
		.narchives = s->narchives,
		.archive_budget = &s->archive_budget,
	};
	struct found_file ff;
	Elf *sym_elf = NULL;
	char cut[WARN_STR_MAX + 4], cut2[WARN_STR_MAX + 4];

	f->state = SF_MISSING;
	if (find_by_any_path(s, idx, &lo, &ff, &d))
		return;
	f->found_by = (uint32_t)(d - s->t->dsos);
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
	}
	if (f->debug_path)
		f->delf = file_lookup__open_elf(f->debug_path, &f->dfd);
	if (!f->elf && !f->delf) {
		if (ff.mismatch) {
			f->state = SF_MISMATCH;
			s->files_mismatch++;
			/* one summary for all (symbolizer__warn_unresolved); each with -v */
			if (s->opts.verbose)
				fprintf(stderr, "xpu-report: build-id mismatch for %s: symbols not used\n",
					warn__cut(d->path, cut));
		} else {
			char hex[2 * XPU_BUILD_ID_MAX + 1];

			s->files_missing++;
			file_lookup__hex(d, hex);
			if (s->opts.verbose)
				fprintf(stderr, "xpu-report: no local file for %s (build-id %s)%s\n",
					warn__cut(d->path, cut), hex[0] ? hex : "none", ff.refused ?
					": its path has \"..\", is relative, is in /proc, /sys or "
					"/dev, or leaves --symfs" : "");
		}
		return;
	}
	s->files_found++;
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
	f->state = SF_OK;
	if (s->opts.verbose)
		fprintf(stderr, "xpu-report: %s: %s%s%s, %zu symbols%s\n", warn__cut(d->path, cut),
			f->from_archive ? "archive" : f->path ? warn__cut(f->path, cut2) : "",
			f->path && f->debug_path ? " + " : "",
			f->debug_path ? f->debug_path : "", f->nsyms, f->dw ? ", dwarf" : "");
}

/* The file of a DSO record, loaded on first use: the slot of the first record of its file. */
static struct sym_file *sym_file_get(struct symbolizer *s, size_t idx)
{
	struct sym_file *f;

	idx = s->file_of[idx];
	f = &s->files[idx];
	if (f->state == SF_UNTRIED)
		sym_file_load(s, idx);
	return f;
}

const char *symbolizer__dso_status(struct symbolizer *s, size_t idx)
{
	struct sym_file *f;

	if (idx >= s->t->ndsos)
		return "?";
	f = sym_file_get(s, idx);
	if (f->names)
		return "symbol pack";
	switch (f->state) {
	case SF_OK:
		/* the memfd's number depends on what else is open: never print it */
		if (f->from_archive)
			return "archive";
		if (f->from_trace)
			return "image in the trace";
		return f->path ? f->path : f->debug_path;
	case SF_MISMATCH:
		return "build-id mismatch";
	case SF_NOT_ELF:
		return "-";
	default:
		return "not found";
	}
}

enum sym_dso_found symbolizer__dso_found(struct symbolizer *s, size_t idx)
{
	if (idx >= s->t->ndsos)
		return SYM_DSO_NO_FILE;
	if (sym_file_get(s, idx)->names)
		return SYM_DSO_FOUND;
	switch (s->files[s->file_of[idx]].state) {
	case SF_OK:
		return SYM_DSO_FOUND;
	case SF_MISMATCH:
		return SYM_DSO_MISMATCH;
	case SF_NOT_ELF:
		return SYM_DSO_NO_FILE;
	default:
		return SYM_DSO_MISSING;
	}
}

const char *symbolizer__dso_elf(struct symbolizer *s, size_t idx, int *fd)
{
	struct sym_file *f;

	if (idx >= s->t->ndsos)
		return NULL;
	f = sym_file_get(s, idx);
	if (f->state != SF_OK || f->from_trace)
		return NULL;
	if (f->elf) {
		*fd = f->fd;
		return f->path;
	}
	*fd = f->dfd;
	return f->debug_path;
}

int symbolizer__dso_bias(struct symbolizer *s, size_t idx, const struct xpu_rec_mapping *m,
			 uint64_t *bias)
{
	const struct sym_file *f;
	size_t i;

	if (!symbolizer__dso_elf(s, idx, &(int){ 0 }))
		return -ENOENT;
	f = &s->files[s->file_of[idx]];
	for (i = 0; i < f->nsegs; i++) {
		const struct seg *sg = &f->segs[i];

		/* start maps file offset pgoff, i.e. vaddr sg->vaddr + (pgoff - sg->off) */
		if (m->pgoff >= (sg->off & ~4095ull) && m->pgoff < sg->off + sg->filesz) {
			*bias = m->start - (sg->vaddr + m->pgoff - sg->off);
			return 0;
		}
	}
	return -ENOENT;
}

static uint64_t off_to_vaddr(const struct sym_file *f, uint64_t off)
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

static const struct sym_entry *find_sym(const struct sym_file *f, uint64_t v)
{
	size_t lo = 0, hi = f->nsyms;
	const struct sym_entry *e;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->syms[mid].addr <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &f->syms[lo - 1];
	/* a size-0 symbol (hand-written asm) extends to the next symbol */
	if (e->size && v - e->addr >= e->size)
		return NULL;
	return e;
}

static uint64_t vaddr_to_off(const struct sym_file *f, uint64_t v)
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
static bool fde_start(const struct sym_file *f, uint64_t v, uint64_t *start)
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

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return n;
}

/* Appends a frame of an address to frame_ids, with its file, and its site when sites are kept. */
static int push_frame(struct symbolizer *s, uint32_t id, const struct frame_site *site)
{
	if (s->opts.sites) {
		if (vec_reserve((void **)&s->sites, &s->sites_cap, s->nframe_ids, sizeof(*s->sites)))
			return -ENOMEM;
		s->sites[s->nframe_ids] = *site;
	}
	if (vec_reserve((void **)&s->frame_files, &s->frame_files_cap, s->nframe_ids,
			sizeof(*s->frame_files)))
		return -ENOMEM;
	s->frame_files[s->nframe_ids] = site->dso;
	return VEC_PUSH(s->frame_ids, s->nframe_ids, s->frame_ids_cap, id);
}

static uint32_t intern_file(struct symbolizer *s, const char *file)
{
	return file ? strpool__intern(s->pool, file, strnlen(file, 1024)) : 0;
}

/* The source line of v (the innermost inlined call's, if any), into site. */
static void src_line(struct symbolizer *s, Dwarf_Die *cu, uint64_t v, struct frame_site *site)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, v);
	int line;

	if (!l || dwarf_lineno(l, &line) || line <= 0)
		return;
	site->line = line;
	site->file = intern_file(s, dwarf_linesrc(l, NULL, NULL));
}

/* Where an inlined call was made (the line of the frame around it), into site. */
static void call_site(struct symbolizer *s, Dwarf_Die *inl, Dwarf_Files *files, size_t nfiles,
		      struct frame_site *site)
{
	Dwarf_Attribute a;
	Dwarf_Word line = 0, idx = 0;

	site->line = 0;
	site->file = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &line) || !line || line > INT32_MAX)
		return;
	site->line = line;
	if (files && !dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &idx) && idx < nfiles)
		site->file = intern_file(s, dwarf_filesrc(files, idx, NULL, NULL));
}

/*
 * Walks the inline chain at v, innermost first, excluding the outermost function (the caller
 * names that from the symbol table): with inline_frames appends a frame per inlined call;
 * with sites leaves in site the source line of the outermost function (where it made the
 * outermost inlined call, or v's own line). Returns how many frames were added.
 */
static int add_inlines(struct symbolizer *s, struct sym_file *f, uint64_t v,
		       struct frame_site *site)
{
	Dwarf_Die cudie, *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int n, i, added = 0;

	if (!f->dw || !dwarf_addrdie(f->dw, v, &cudie))
		return 0;
	if (s->opts.sites) {
		src_line(s, &cudie, v, site);
		if (dwarf_getsrcfiles(&cudie, &files, &nfiles))
			files = NULL;
	}
	n = dwarf_getscopes(&cudie, v, &scopes);
	for (i = 0; i < n && i < 64; i++) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name;
		uint32_t id;

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		if (s->opts.inline_frames) {
			name = die_name(&scopes[i]);
			id = name ? intern_symbol(s->pool, name, strlen(name), " (inlined)") : 0;
			if (id && !push_frame(s, id, site))
				added++;
		}
		/* the frame around this call is at the call's line */
		if (s->opts.sites)
			call_site(s, &scopes[i], files, nfiles, site);
	}
	free(scopes);
	return added;
}

/*
 * The frames of a symbol pack's address (leaf first), in the rendering the options ask for.
 * An address the pack does not have is named as in a missing file. Whether it had it.
 */
static int pack_frames(struct symbolizer *s, struct sym_file *f, size_t dso_idx,
		       uint64_t file_off)
{
	const struct tr_dso *d = &s->t->dsos[dso_idx];
	const struct xpa_names *names = f->names;
	const struct xpa_names_addr *a = xpa_names__find(names, file_off);
	uint32_t first, n, i;
	size_t k;

	/* traces read as one: each pack has the addresses its own trace touched */
	for (k = 0; !a && k < s->narchives; k++) {
		names = xpa__names(s->archives[k], d->rec.build_id, d->rec.build_id_len,
				   &s->archive_budget);
		a = names && names != f->names ? xpa_names__find(names, file_off) : NULL;
	}
	if (!a)
		return 0;
	first = a->first + (s->opts.inline_frames ? a->nplain : 0);
	n = s->opts.inline_frames ? a->ninline : a->nplain;
	for (i = 0; i < n; i++) {
		const struct xpa_names_frame *pf = &names->frames[first + i];
		const char *name = xpa_names__str(names, pf->name);
		struct frame_site site = { .dso = dso_idx + 1, .off = file_off, .line = pf->line,
					   .outer = pf->flags & XPA_FRAME_OUTER };
		uint32_t id = frame_intern(s->pool, name, strlen(name));

		if (pf->file)
			site.file = intern_file(s, xpa_names__str(names, pf->file));
		if (!id || (pf->file && !site.file) || push_frame(s, id, &site))
			return -ENOMEM;
		if (pf->flags & XPA_FRAME_OUTER) {
			if (pf->flags & XPA_FRAME_NAMED)
				s->addrs_resolved++;
			else
				s->addrs_unknown++;
		}
	}
	return 1;
}

/*
 * Appends the frames of one user address of a DSO to frame_ids, leaf first; *named: the
 * function's name came from a symbol (not from its address). 0 or -ENOMEM.
 */
static int name_address(struct symbolizer *s, size_t dso_idx, uint64_t file_off, bool *named)
{
	struct sym_file *f = sym_file_get(s, dso_idx);
	struct frame_site site = { .dso = dso_idx + 1, .off = file_off };
	const struct sym_entry *e = NULL;
	uint64_t v = 0, fstart;
	uint32_t id;
	int err;

	*named = false;
	if (f->names) {
		err = pack_frames(s, f, dso_idx, file_off);
		if (err)
			return err < 0 ? err : 0;
		/* an address no pack has: this machine's file, if it has one */
		if (f->state == SF_PACK)
			load_local(s, s->file_of[dso_idx]);
	}
	if (f->state == SF_OK) {
		v = off_to_vaddr(f, file_off);
		e = find_sym(f, v);
		if (s->opts.inline_frames || s->opts.sites)
			add_inlines(s, f, v, &site);
	}
	if (e) {
		id = intern_symbol(s->pool, e->name, e->len, NULL);
		s->addrs_resolved++;
		*named = true;
	} else if (f->state == SF_OK && fde_start(f, v, &fstart)) {
		/* stripped code: one frame per function, as its unwind entry delimits it */
		id = frame_internf(s->pool, "%s+0x%" PRIx64, f->base, vaddr_to_off(f, fstart));
		s->addrs_unknown++;
	} else {
		const char *p = s->t->dsos[dso_idx].path, *b = strrchr(p, '/');

		id = frame_internf(s->pool, "%s+0x%" PRIx64, b ? b + 1 : p, file_off);
		s->addrs_unknown++;
	}
	site.outer = true;
	if (!id || push_frame(s, id, &site))
		return -ENOMEM;
	return 0;
}

/* Resolves one user address of a DSO; returns the refs index of its frames (leaf first). */
static int resolve_user(struct symbolizer *s, size_t dso_idx, uint64_t file_off, uint32_t *ref)
{
	struct frames_ref fr = { .first = s->nframe_ids };
	uint32_t *cached;
	bool ins, named;
	int err;

	cached = kmap__put(&s->addr_cache, dso_idx + 1, file_off, s->nrefs, &ins);
	if (!cached)
		return -ENOMEM;
	if (!ins) {
		*ref = *cached;
		return 0;
	}
	if (s->opts.list_addrs &&
	    VEC_PUSH(s->addr_list, s->naddr_list, s->addr_list_cap,
		     ((struct sym_addr){ .dso = (uint32_t)dso_idx, .off = file_off })))
		return -ENOMEM;
	err = name_address(s, dso_idx, file_off, &named);
	if (err)
		return err;
	fr.n = s->nframe_ids - fr.first;
	if (VEC_PUSH(s->refs, s->nrefs, s->refs_cap, fr))
		return -ENOMEM;
	*ref = *cached;
	return 0;
}

int symbolizer__address(struct symbolizer *s, size_t dso_idx, uint64_t file_off,
			bool inline_frames, const uint32_t **frames, const struct frame_site **sites,
			uint32_t *n, bool *named)
{
	bool saved_inline = s->opts.inline_frames, saved_sites = s->opts.sites;
	size_t first = s->nframe_ids;
	int err;

	if (dso_idx >= s->t->ndsos)
		return -EINVAL;
	s->opts.inline_frames = inline_frames;
	s->opts.sites = true;
	err = name_address(s, dso_idx, file_off, named);
	s->opts.inline_frames = saved_inline;
	s->opts.sites = saved_sites;
	if (err)
		return err;
	/* not kept: the next call writes over them */
	*frames = s->frame_ids + first;
	*sites = s->sites + first;
	*n = (uint32_t)(s->nframe_ids - first);
	s->nframe_ids = first;
	return 0;
}

#define FRAME_DSO_KERNEL UINT32_MAX
#define FRAME_DSO_PYTHON (UINT32_MAX - 1)
#define FRAME_DSO_AUTOGRAD (UINT32_MAX - 2)	/* "[backward] NODE": PyTorch's autograd */

/* Remembers the first file a frame name came from (dso index + 1, or a FRAME_DSO_ code). */
static int note_dso(struct symbolizer *s, uint32_t id, uint32_t code)
{
	size_t old = s->frame_dso_cap;

	if (id >= s->frame_dso_cap) {
		if (vec_reserve((void **)&s->frame_dso, &s->frame_dso_cap, id, sizeof(*s->frame_dso)))
			return -ENOMEM;
		memset(s->frame_dso + old, 0, (s->frame_dso_cap - old) * sizeof(*s->frame_dso));
	}
	if (!s->frame_dso[id])
		s->frame_dso[id] = code;
	return 0;
}

const char *symbolizer__frame_dso(const struct symbolizer *s, uint32_t id)
{
	return symbolizer__file_name(s, id < s->frame_dso_cap ? s->frame_dso[id] : 0);
}

const char *symbolizer__file_name(const struct symbolizer *s, uint32_t code)
{
	const char *p, *b;

	if (code == FRAME_DSO_KERNEL)
		return "[kernel.kallsyms]";
	if (code == FRAME_DSO_PYTHON)
		return "[python]";
	if (code == FRAME_DSO_AUTOGRAD)
		return "[autograd]";
	if (!code || code > s->t->ndsos)
		return "[unknown]";
	p = s->t->dsos[code - 1].path;
	b = strrchr(p, '/');
	return b ? b + 1 : *p ? p : "[unknown]";
}

const struct frame_site *symbolizer__sites(const struct symbolizer *s, const uint32_t *frames)
{
	return s->opts.sites && frames ? s->sites + (frames - s->frame_ids) : NULL;
}

const uint32_t *symbolizer__files(const struct symbolizer *s, const uint32_t *frames)
{
	return frames ? s->frame_files + (frames - s->frame_ids) : NULL;
}

const struct tr_dso *symbolizer__frame_dso_rec(const struct symbolizer *s, uint32_t id)
{
	uint32_t code = id < s->frame_dso_cap ? s->frame_dso[id] : 0;

	if (code == FRAME_DSO_KERNEL || code == FRAME_DSO_PYTHON || code == FRAME_DSO_AUTOGRAD ||
	    !code || code > s->t->ndsos)
		return NULL;
	return &s->t->dsos[code - 1];
}

/*
 * Appends a frame to the stack being assembled, in file (a dso index + 1 or a FRAME_DSO_ code;
 * 0 unknown), which it also notes as the name's file if it is the first; site NULL: not an
 * address of an ELF file.
 */
static int scratch_push(struct symbolizer *s, size_t *n, uint32_t id, const struct frame_site *site,
			uint32_t file)
{
	if (vec_reserve((void **)&s->scratch, &s->scratch_cap, *n, sizeof(*s->scratch)) ||
	    vec_reserve((void **)&s->scratch_files, &s->scratch_files_cap, *n,
			sizeof(*s->scratch_files)) || (file && note_dso(s, id, file)))
		return -ENOMEM;
	if (s->opts.sites) {
		if (vec_reserve((void **)&s->scratch_sites, &s->scratch_sites_cap, *n,
				sizeof(*s->scratch_sites)))
			return -ENOMEM;
		s->scratch_sites[*n] = site ? *site : (struct frame_site){ 0 };
	}
	s->scratch_files[*n] = file;
	s->scratch[(*n)++] = id;
	return 0;
}

/* A Python frame (a tagged address, see pyframes.h); 0 on allocation failure. */
static uint32_t python_frame(struct symbolizer *s, uint64_t ip)
{
	char buf[2 * XPU_PY_NAME_MAX_BYTES + 32];
	int len = pyframes__name(s->t, ip, s->opts.python_lines, buf, sizeof(buf));

	if (len < 0)
		return 0;
	return frame_intern(s->pool, buf, (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
}

/*
 * A frame outside every ELF file, named by the process's JIT symbols; 0 when none covers it.
 * *fold is set for a Python perf trampoline (`py::` from -X perf) right above the Python
 * frames it runs: they name the same call, so the trampoline adds nothing.
 */
static uint32_t jit_frame(struct symbolizer *s, uint32_t pid, uint64_t look, bool before_py,
			  bool *fold)
{
	const char *name = jitsyms__find(s->jit, pid, look);
	size_t len;

	*fold = false;
	if (!name)
		return 0;
	if (before_py && !strncmp(name, "py::", 4)) {
		*fold = true;
		return 0;
	}
	s->jit_named++;
	len = strnlen(name, JITSYMS_NAME_MAX);
	return frame_intern(s->pool, name, len);
}

/*
 * A backward node whose class the recorder could not name (its vtable in no .dynsym it read)
 * takes it from the node's own frames: the first "X::apply(" among the frames inside it is the
 * class's apply, PyNode's or a generated node's.
 */
#define BW_APPLY_LOOKAHEAD 8

static int name_unnamed_nodes(struct symbolizer *s, size_t n)
{
	char unnamed[32], name[160];
	uint32_t unnamed_id;
	size_t i, j;

	backward__name(s->t, BWF_MAKE(0), unnamed, sizeof(unnamed));
	unnamed_id = frame_intern(s->pool, unnamed, strlen(unnamed));
	if (!unnamed_id)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (s->scratch[i] != unnamed_id)
			continue;
		for (j = i + 1; j < n && j <= i + BW_APPLY_LOOKAHEAD; j++) {
			const char *f = strpool__str(s->pool, s->scratch[j]);
			const char *apply = f ? strstr(f, "::apply(") : NULL;
			const char *cls = apply;
			int depth = 0;
			uint32_t id;

			if (!apply)
				continue;
			/* back to the "::" before the class, skipping template arguments */
			while (cls > f && !(depth == 0 && cls - f >= 2 && cls[-1] == ':' && cls[-2] == ':')) {
				cls--;
				depth += *cls == '>' ? 1 : *cls == '<' ? -1 : 0;
			}
			snprintf(name, sizeof(name), "[backward] %.*s", (int)(apply - cls), cls);
			id = frame_intern(s->pool, name, strlen(name));
			if (!id || note_dso(s, id, FRAME_DSO_AUTOGRAD))
				return -ENOMEM;
			s->scratch[i] = id;
			break;
		}
	}
	return 0;
}

static int build_stack(struct symbolizer *s, uint32_t pid, uint64_t ts, const struct tr_stack *st,
		       bool trim, size_t *n)
{
	bool unnamed_node = false;
	uint32_t nk = st->nr_kernel, nu = st->nr_user, i;
	int err;

	*n = 0;
	/* user frames, outermost first; index nk is the user leaf (interrupted pc, exact) */
	for (i = nk + nu; i-- > nk;) {
		uint64_t ip = st->ips[i], look = i == nk ? ip : ip - 1;
		const struct xpu_rec_mapping *m;
		uint32_t *didx;
		const struct tr_dso *d;
		uint32_t ref, j, id, file;

		if (BWF_IS(ip)) {
			char name[160];
			int len = backward__name(s->t, ip, name, sizeof(name));

			unnamed_node |= !BWF_CLASS(ip);
			id = frame_intern(s->pool, name, (size_t)len < sizeof(name) ? (size_t)len :
									     sizeof(name) - 1);
			if (!id || scratch_push(s, n, id, NULL, FRAME_DSO_AUTOGRAD))
				return -ENOMEM;
			continue;
		}
		if (PYF_IS(ip)) {
			id = python_frame(s, ip);
			if (!id || scratch_push(s, n, id, NULL, FRAME_DSO_PYTHON))
				return -ENOMEM;
			continue;
		}
		m = maps__find(&s->maps, pid, look, ts);
		didx = m ? kmap__get(&s->t->dso_ids, m->dso_id, 0) : NULL;
		d = didx ? &s->t->dsos[*didx] : NULL;
		file = didx ? *didx + 1 : 0;
		if (!m || (d && d->rec.kind == XPU_DSO_ANON)) {
			bool fold;

			id = jit_frame(s, pid, look, i > nk && PYF_IS(st->ips[i - 1]), &fold);
			if (fold)
				continue;
			/* JIT code and anonymous memory: the mapping's DSO, if it has one */
			if (!id)
				id = m ? frame_intern(s->pool, "[anon]", 6) :
					 frame_intern(s->pool, "[unknown]", 9);
		} else if (!d) {
			id = frame_internf(s->pool, "[unknown dso %u]", m->dso_id);
		} else if (d->rec.kind == XPU_DSO_VDSO && !d->image) {
			id = frame_intern(s->pool, "[vdso]", 6);
		} else {
			struct sym_file *f = sym_file_get(s, *didx);

			if (trim && f->cuda_internal)
				continue;
			f->stack_frames++;
			err = resolve_user(s, *didx, look - m->start + m->pgoff, &ref);
			if (err)
				return err;
			/* the function (outermost of its inline frames) of a static cudart */
			if (trim && s->refs[ref].n &&
			    is_cudart_symbol(strpool__str(s->pool,
				s->frame_ids[s->refs[ref].first + s->refs[ref].n - 1])))
				continue;
			/* stored leaf first; emit outermost (the function) first */
			for (j = s->refs[ref].n; j-- > 0;) {
				uint32_t at = s->refs[ref].first + j;

				id = s->frame_ids[at];
				err = scratch_push(s, n, id, s->opts.sites ? &s->sites[at] : NULL,
						   file);
				if (err)
					return err;
			}
			continue;
		}
		if (!id || scratch_push(s, n, id, NULL, file))
			return -ENOMEM;
	}
	/* kernel frames, outermost first; index 0 is the kernel leaf */
	for (i = nk; i-- > 0;) {
		uint64_t ip = st->ips[i];
		uint32_t id = kernel_frame(s, i == 0 ? ip : ip - 1);

		if (!id || scratch_push(s, n, id, NULL, FRAME_DSO_KERNEL))
			return -ENOMEM;
	}
	return unnamed_node ? name_unnamed_nodes(s, *n) : 0;
}

/* The assembled stack's frames, files and (with sites) sites, hashed. */
static uint64_t run_hash(const struct symbolizer *s, size_t cnt)
{
	uint64_t h = hash_bytes(s->scratch, cnt * sizeof(*s->scratch));

	h = h * 31 + hash_bytes(s->scratch_files, cnt * sizeof(*s->scratch_files));
	if (s->opts.sites)
		h = h * 31 + hash_bytes(s->scratch_sites, cnt * sizeof(*s->scratch_sites));
	return h;
}

/*
 * Whether a stack just assembled (cnt frames in scratch) equals one kept already: then *cached
 * takes that run. Thousands of processes running one program have the same stacks, and each
 * kept its own copy (8 bytes a frame, 40 with sites). 1, 0, or -ENOMEM.
 */
static int same_run(struct symbolizer *s, size_t cnt, uint32_t *cached)
{
	uint32_t *v = kmap__get(&s->run_ids, run_hash(s, cnt), 0);
	const struct frames_ref *r;

	if (!v)
		return 0;
	/* the first run of this hash; another run of the same hash (rare) keeps its own copy */
	r = &s->refs[*v];
	if (r->n != cnt || memcmp(s->frame_ids + r->first, s->scratch, cnt * sizeof(*s->scratch)) ||
	    memcmp(s->frame_files + r->first, s->scratch_files, cnt * sizeof(*s->scratch_files)) ||
	    (s->opts.sites && memcmp(s->sites + r->first, s->scratch_sites, cnt * sizeof(*s->sites))))
		return 0;
	*cached = *v;
	return 1;
}

int symbolizer__stack(struct symbolizer *s, uint32_t pid, uint64_t ts, uint32_t stack_id,
		      bool trim_gpu, const uint32_t **frames, uint32_t *n)
{
	uint64_t gen = trace__generation(s->t, pid, ts) & 0x7fffffff;
	uint64_t key = (uint64_t)pid << 32 | gen << 1 | trim_gpu;
	const struct tr_stack *st;
	struct frames_ref fr;
	uint32_t *cached;
	size_t cnt = 0;
	bool ins;
	int err;

	cached = kmap__put(&s->stack_cache, key, stack_id, s->nrefs, &ins);
	if (!cached)
		return -ENOMEM;
	if (ins) {
		st = derived_stacks__get(s->stacks, stack_id);
		if (st) {
			err = build_stack(s, pid, ts, st, trim_gpu, &cnt);
			if (err)
				return err;
		}
		if (!cnt) {
			err = scratch_push(s, &cnt, frame_intern(s->pool, stack_id ? "[unknown stack]" :
								 "[no stack]", stack_id ? 15 : 10),
					   NULL, 0);
			if (err)
				return err;
		}
		/* the same frames for another process or generation: one copy, shared */
		err = same_run(s, cnt, cached);
		if (err < 0)
			return err;
		if (err)
			goto done;
		fr.first = s->nframe_ids;
		fr.n = cnt;
		if (vec_reserve((void **)&s->frame_ids, &s->frame_ids_cap, s->nframe_ids + cnt,
				sizeof(*s->frame_ids)))
			return -ENOMEM;
		memcpy(s->frame_ids + s->nframe_ids, s->scratch, cnt * sizeof(*s->scratch));	/* cnt >= 1 */
		if (vec_reserve((void **)&s->frame_files, &s->frame_files_cap, s->nframe_ids + cnt,
				sizeof(*s->frame_files)))
			return -ENOMEM;
		memcpy(s->frame_files + s->nframe_ids, s->scratch_files,
		       cnt * sizeof(*s->frame_files));
		if (s->opts.sites) {
			if (vec_reserve((void **)&s->sites, &s->sites_cap, s->nframe_ids + cnt,
					sizeof(*s->sites)))
				return -ENOMEM;
			memcpy(s->sites + s->nframe_ids, s->scratch_sites, cnt * sizeof(*s->sites));
		}
		s->nframe_ids += cnt;
		if (VEC_PUSH(s->refs, s->nrefs, s->refs_cap, fr))
			return -ENOMEM;
		*cached = s->nrefs - 1;
		if (!kmap__put(&s->run_ids, run_hash(s, cnt), 0, s->nrefs - 1, NULL))
			return -ENOMEM;
	}
done:
	*frames = s->frame_ids + s->refs[*cached].first;
	*n = s->refs[*cached].n;
	return 0;
}

size_t symbolizer__file_record(struct symbolizer *s, size_t idx)
{
	const struct sym_file *f;

	if (idx >= s->t->ndsos)
		return idx;
	f = sym_file_get(s, idx);
	return f->state == SF_OK && !f->from_trace ? f->found_by : idx;
}

/* Whether two DSO records name one file: the same build-id, or without one the same path. */
static bool same_file_rec(const struct tr_dso *a, const struct tr_dso *b)
{
	if (a->rec.kind != b->rec.kind || a->rec.build_id_len != b->rec.build_id_len)
		return false;
	if (a->rec.build_id_len)
		return !memcmp(a->rec.build_id, b->rec.build_id, a->rec.build_id_len);
	return !strcmp(a->path, b->path);
}

/*
 * One file slot per file, not per DSO record: a trace names one library in a record per
 * process (and a hostile one in 20,000), and each would load its symbol table, open its
 * descriptors and hold its memory again. ELF records share by build-id, else by path.
 */
static int share_files(struct symbolizer *s)
{
	const struct trace *t = s->t;
	struct kmap first = { 0 };
	uint32_t *last;
	size_t i;

	s->file_of = malloc((t->ndsos ? t->ndsos : 1) * sizeof(*s->file_of));
	s->file_next = malloc((t->ndsos ? t->ndsos : 1) * sizeof(*s->file_next));
	last = malloc((t->ndsos ? t->ndsos : 1) * sizeof(*last));
	if (!s->file_of || !s->file_next || !last) {
		free(last);
		return -ENOMEM;
	}
	for (i = 0; i < t->ndsos; i++) {
		const struct tr_dso *d = &t->dsos[i];
		uint64_t h = d->rec.build_id_len ? hash_bytes(d->rec.build_id, d->rec.build_id_len) :
						   hash_bytes(d->path, strlen(d->path));
		uint32_t *v;
		bool ins;

		s->file_of[i] = (uint32_t)i;
		s->file_next[i] = UINT32_MAX;
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
			s->file_of[i] = *v;
			s->file_next[last[*v]] = (uint32_t)i;
			last[*v] = (uint32_t)i;
		}
	}
	kmap__free(&first);
	free(last);
	return 0;
}

int symbolizer__init(struct symbolizer *s, const struct derived_stacks *stacks,
		     const struct sym_opts *opts, struct strpool *pool)
{
	const struct trace *t = stacks->t;
	size_t i;
	int err;

	memset(s, 0, sizeof(*s));
	s->t = t;
	s->stacks = stacks;
	s->opts = *opts;
	s->pool = pool;
	elf_version(EV_CURRENT);
	err = maps__build(&s->maps, t->mappings, t->nmappings);
	if (err)
		return err;
	s->files = calloc(t->ndsos ? t->ndsos : 1, sizeof(*s->files));
	if (!s->files)
		return -ENOMEM;
	for (i = 0; i < t->ndsos; i++) {
		const char *b = strrchr(t->dsos[i].path, '/');

		s->files[i].fd = s->files[i].dfd = s->files[i].afd = -1;
		s->files[i].base = b ? b + 1 : t->dsos[i].path;
		s->files[i].cuda_internal = is_cuda_internal(s->files[i].base);
	}
	err = share_files(s);
	if (err)
		return err;
	s->archive_budget.max_bytes = opts->archive_max_bytes;
	s->archives = calloc(1 + opts->nmore_paths, sizeof(*s->archives));
	if (!s->archives)
		return -ENOMEM;
	for (i = 0; i <= opts->nmore_paths; i++) {
		err = xpa__open_for_trace(&s->archives[i], i ? opts->more_paths[i - 1] :
								 opts->trace_path);
		if (err)
			return err;
		s->narchives = i + 1;
	}
	err = jitsyms__build(&s->jit, t);
	if (err)
		return err;
	return kallsyms__load(&s->ksyms, t->ksyms, t->ksyms_len);
}

/* A file the stacks went through that gave no symbols (symbolizer__warn_unresolved). */
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

/* Adds the files s's stacks went through that gave no symbols to *u, each once over all. */
static int collect_unresolved(const struct symbolizer *s, struct unresolved **u, size_t *n,
			      size_t *cap)
{
	size_t i, k;

	for (i = 0; s->files && i < s->t->ndsos; i++) {
		const struct sym_file *f = &s->files[i];
		struct unresolved x = { &s->t->dsos[i], f->stack_frames, *n,
					f->state == SF_MISMATCH };

		if (!f->stack_frames || (f->state != SF_MISSING && f->state != SF_MISMATCH))
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
	size_t i, nmis = 0;

	for (i = 0; i < n; i++)
		nmis += u[i].mismatch;
	appendf(buf, size, "%zu file%s the stacks go through could not be symbolized (", n,
		n == 1 ? "" : "s");
	if (nmis && nmis < n)
		appendf(buf, size, "%zu not found, %zu with another build-id", n - nmis, nmis);
	else
		appendf(buf, size, "%s", nmis ? "another build-id here" : "not found here");
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
static const char *archive_trace(const struct symbolizer *const *s, size_t n, size_t *nmissing)
{
	const char *first = NULL, *without = NULL;
	size_t i, k;

	*nmissing = 0;
	for (i = 0; i < n; i++) {
		for (k = 0; k < s[i]->narchives; k++) {
			const char *p = k ? s[i]->opts.more_paths[k - 1] : s[i]->opts.trace_path;

			first = first ? first : p;
			if (s[i]->archives[k])
				continue;
			without = without ? without : p;
			(*nmissing)++;
		}
	}
	return without ? without : first;
}

/* Which archive was looked for, and the command that makes it. */
static void describe_archive(const struct symbolizer *const *s, size_t n, char *buf, size_t size)
{
	size_t nmissing;
	const char *trace = archive_trace(s, n, &nmissing);

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

void symbolizer__warn_unresolved(const struct symbolizer *const *s, size_t n)
{
	struct unresolved *u = NULL;
	size_t nu = 0, cap = 0, i;
	char line[1536] = "";
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = collect_unresolved(s[i], &u, &nu, &cap);
	if (!err && nu) {
		qsort(u, nu, sizeof(*u), cmp_unresolved);
		describe_unresolved(u, nu, n && s[0]->opts.verbose, line, sizeof(line));
		describe_archive(s, n, line, sizeof(line));
		warn__once("warning: %s", line);
	}
	free(u);
}

void symbolizer__sources(const struct symbolizer *s, struct sym_sources *src)
{
	size_t i;

	memset(src, 0, sizeof(*src));
	for (i = 0; s->files && i < s->t->ndsos; i++) {
		const struct sym_file *f = &s->files[i];

		if (!f->stack_frames || f->from_trace)
			continue;
		if (f->names)
			src->pack++;
		else if (f->state == SF_MISSING || f->state == SF_MISMATCH)
			src->missing++;
		else if (f->state != SF_OK)
			continue;
		else if (f->from_archive)
			src->archive++;
		else if (f->from_debuginfod)
			src->debuginfod++;
		else
			src->local++;
	}
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	for (i = 0; s->files && i < s->t->ndsos; i++) {
		struct sym_file *f = &s->files[i];

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
	free(s->files);
	free(s->file_of);
	free(s->file_next);
	for (i = 0; i < s->narchives; i++)
		xpa__close(s->archives[i]);
	free(s->archives);
	jitsyms__free(s->jit);
	kallsyms__free(&s->ksyms);
	free(s->frame_ids);
	free(s->refs);
	free(s->addr_list);
	free(s->scratch);
	free(s->scratch_sites);
	free(s->scratch_files);
	free(s->sites);
	free(s->frame_files);
	free(s->frame_dso);
	kmap__free(&s->addr_cache);
	kmap__free(&s->stack_cache);
	kmap__free(&s->run_ids);
	maps__free(&s->maps);
	memset(s, 0, sizeof(*s));
}
