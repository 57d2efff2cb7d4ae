/* SPDX-License-Identifier: MIT */
/*
 * The trace's DSOs and the files that hold them, owned by the session: each file opened once,
 * on first use, by build-id (file_lookup.h: this machine, debug dirs, --symfs, the archive
 * TRACE.xpa, debuginfod) or named from a symbol pack (xpa_pack.h), the vdso from the image the
 * trace carries. A loaded file holds its PT_LOAD segments, its symbols (PLT stubs included),
 * its .eh_frame functions and its DWARF. Records of one file (one library in every process)
 * share one slot. The symbolizer (symbolize.h) and the unwinder (unwind.h) both read it; it
 * calls neither.
 */
#ifndef XPU_REPORT_SYM_DSO_H
#define XPU_REPORT_SYM_DSO_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#include "sym/fde.h"
#include "sym/maps.h"
#include "sym/plt.h"
#include "sym/xpa.h"
#include "sym/xpa_pack.h"
#include "trace/trace.h"

/* Where files come from. */
struct dso_opts {
	const char *trace_path;		/* TRACE.xpa is looked for next to it */
	const char *const *more_paths;	/* traces merged with it: theirs too */
	size_t nmore_paths;
	const char *symfs;
	bool no_host_files;		/* only --symfs and the archive */
	uint64_t archive_max_bytes;	/* --archive-max (xpa.h); 0: the default */
	bool no_packs;			/* a symbol pack's entries are not used (`archive`) */
	int verbose;
};

enum dso_state {
	DSO_UNTRIED = 0,
	DSO_OK,
	DSO_MISSING,
	DSO_MISMATCH,
	DSO_NOT_ELF,		/* kernel, vdso, anonymous: nothing to open */
	DSO_PACK,		/* named from a symbol pack (names); no local file tried yet */
};

struct dso_sym {
	uint64_t addr, size;
	const char *name;	/* into the ELF string table, or dso_file.plt */
	uint32_t len;		/* of the name without its symbol version (dso.c) */
	uint8_t bind;		/* STB_* */
};

struct dso_seg {
	uint64_t off, vaddr, filesz;
};

struct dso_file {
	enum dso_state state;
	char *path;		/* file used for symbols */
	char *debug_path;	/* separate debug file, if any */
	int fd, dfd;
	int afd;		/* memfd holding the file extracted from the archive */
	bool from_archive;	/* path names afd: report "archive", not the fd number */
	bool from_debuginfod;	/* path or debug_path came from a debuginfod server */
	uint32_t found_by;	/* the DSO record whose recorded path led to the file */
	Elf *elf, *delf;
	Dwarf *dw;
	struct dso_sym *syms;
	size_t nsyms;
	struct dso_seg *segs;
	size_t nsegs;
	struct plt_sym *plt;	/* owns the names of the "sym@plt" entries of syms */
	size_t nplt;
	Dwarf_CFI *cfi;		/* .eh_frame of elf, for code no symbol covers */
	struct fde_table fdes;	/* its functions' starts */
	bool from_trace;	/* elf is the vdso image the trace carries */
	const char *base;	/* basename of the recorded path */
	bool cuda_internal;	/* CUDA's and NVIDIA's libraries, ours: trimmed (dso.c) */
	const struct xpa_names *names;	/* a symbol pack's, held by the archive, or NULL */
	uint64_t stack_frames;	/* frames of it in the stacks named (the unwinder loads more) */
};

struct dso_table {
	const struct trace *t;
	struct dso_opts opts;
	struct maps maps;		/* which mapping (and DSO) holds an address of a process */
	struct dso_file *files;		/* one per trace DSO, loaded on first use */
	uint32_t *file_of;		/* DSO index -> the files slot of its file (shared) */
	uint32_t *file_next;		/* the next DSO record of the same file, or UINT32_MAX */
	struct xpa **archives;		/* TRACE.xpa next to each trace, or NULL */
	size_t narchives;
	struct xpa_budget archive_budget;	/* what their extracted entries hold */
	/* shown by -v */
	uint64_t files_found, files_missing, files_mismatch;
};

/* Opens the archives next to the traces; no file is looked up yet. 0 or negative errno. */
int dso_table__init(struct dso_table *dt, const struct trace *t, const struct dso_opts *opts);
void dso_table__free(struct dso_table *dt);
/* The file of DSO record idx (< t->ndsos), loaded on first use: its shared slot. */
struct dso_file *dso_table__file(struct dso_table *dt, size_t idx);
/* The slot as loaded so far (state DSO_UNTRIED if never asked for). */
const struct dso_file *dso_table__peek(const struct dso_table *dt, size_t idx);
/* A file named from a symbol pack, asked for an address no pack has: this machine's file. */
void dso_table__open_local(struct dso_table *dt, size_t idx);

/* A file offset of f as an ELF virtual address (through the PT_LOAD holding it), and back. */
uint64_t dso_file__vaddr(const struct dso_file *f, uint64_t off);
uint64_t dso_file__off(const struct dso_file *f, uint64_t vaddr);
/* The symbol covering vaddr v, or NULL. */
const struct dso_sym *dso_file__sym(const struct dso_file *f, uint64_t v);
/* The start of the .eh_frame function covering v, for code no symbol covers. */
bool dso_file__fde_start(const struct dso_file *f, uint64_t v, uint64_t *start);
/*
 * A symbol pack's entry for a file offset of DSO record idx: the file's own pack, else any
 * other pack of the same build-id (merged traces: each pack has the addresses its own trace
 * touched). NULL when none has it; *names: the pack it is in.
 */
const struct xpa_names_addr *dso_table__pack_addr(struct dso_table *dt, size_t idx,
						  uint64_t file_off,
						  const struct xpa_names **names);
/* The host's walks of the trace with this uuid, from any symbol pack, or NULL. */
const struct xpa_walks *dso_table__walks(struct dso_table *dt, const uint8_t uuid[16]);

/*
 * For the DWARF unwinder and `archive`: the ELF file found for a DSO (loads it) and an open
 * descriptor of it, or NULL; and the load bias of that file in mapping m (address - bias is
 * an ELF virtual address). -ENOENT when there is no file or no PT_LOAD holds m's offset.
 */
const char *dso_table__elf(struct dso_table *dt, size_t idx, int *fd);
int dso_table__bias(struct dso_table *dt, size_t idx, const struct xpu_rec_mapping *m,
		    uint64_t *bias);
/*
 * The DSO record whose recorded path led to the file of DSO idx (records of one file share
 * it: file_of), or idx itself when no path did.
 */
size_t dso_table__file_record(struct dso_table *dt, size_t idx);
/*
 * Where a DSO's file came from, in words: a path, "archive", "not found", ...; "not looked
 * up" before dso_table__file() asked for it.
 */
const char *dso_table__status(const struct dso_table *dt, size_t idx);
/* The same as a value, for counting (`archive`). */
enum dso_found {
	DSO_FOUND,		/* a file with the recorded build-id, or the trace's vdso image */
	DSO_FOUND_MISSING,	/* no file, or none this report may open */
	DSO_FOUND_MISMATCH,	/* only files with another build-id */
	DSO_FOUND_NO_FILE,	/* kernel, anonymous memory, a vdso without image: none to find */
};
enum dso_found dso_table__found(struct dso_table *dt, size_t idx);
/* Where the files of the frames named so far came from, counted by file. */
struct sym_sources {
	uint32_t pack;		/* a symbol pack's names */
	uint32_t local;		/* this machine's files (debug dirs and --symfs included) */
	uint32_t archive;	/* a whole-file archive (--elf) */
	uint32_t debuginfod;
	uint32_t missing;	/* none, or only another build-id */
};
void dso_table__sources(const struct dso_table *dt, struct sym_sources *src);
/*
 * One warning line (once per process, base/warn.h) for the files that the stacks named so far
 * go through and that gave no symbols here, missing or with another build-id, over the n
 * tables of one run (diff has two): how many, the first few by name, the archive that was
 * looked for and the command that makes it. Nothing when every such file resolved. Files only
 * the unwinder read, which no stack shows, don't count. Each file is named as it is looked
 * up, with -v.
 */
void dso_table__warn_unresolved(const struct dso_table *const *dt, size_t n);

#endif
