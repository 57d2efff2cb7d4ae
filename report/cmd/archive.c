// SPDX-License-Identifier: MIT
/*
 * `xpu-report archive`: writes TRACE.xpa (format-spec/ARCHIVE.md; read by sym/xpa.c). By
 * default a symbol pack: the names this machine gives every address the trace's stacks touch
 * (NAMES, one entry per build-id, both renderings: with and without inline frames) and the
 * DWARF walks of its stack copies (WALKS): what the report prints, made where the files are,
 * so it prints the same anywhere. With --elf, the files themselves: ELF files whose section
 * contents the report never reads (code, data) are zeroed, symbol and unwind tables kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/warn.h"
#include "cli_opts.h"
#include "cmd/cmd.h"
#include "crc32c.h"
#include "model/naming.h"
#include "model/session.h"
#include "sym/file_lookup.h"
#include "sym/xpa.h"
#include "sym/xpa_key.h"
#include "sym/xpa_pack.h"

static bool keep_section(const GElf_Shdr *sh, const char *name, bool debuginfo)
{
	static const char *const names[] = {
		".eh_frame", ".eh_frame_hdr", ".debug_frame", ".gnu_debugdata", ".gnu_debuglink",
		".gnu_debugaltlink", ".plt", ".plt.sec", ".rela.plt",	/* "sym@plt" names */
	};
	size_t i;

	switch (sh->sh_type) {
	case SHT_SYMTAB:
	case SHT_DYNSYM:
	case SHT_STRTAB:
	case SHT_NOTE:
	case SHT_DYNAMIC:
	case SHT_HASH:
	case SHT_GNU_HASH:
	case SHT_GNU_versym:
	case SHT_GNU_verdef:
	case SHT_GNU_verneed:
		return true;
	default:
		break;
	}
	if (!name)
		return false;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(name, names[i]))
			return true;
	}
	return debuginfo && (!strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8));
}

/*
 * Reads the file the symbolizer opened (fd: it chose and checked it, see file_lookup.h) and
 * zeroes the contents of the sections the report does not need.
 */
static int load_zeroed(int fd, bool debuginfo, uint8_t **out, size_t *len)
{
	struct stat sb;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint8_t *buf = NULL;
	int err = -EINVAL;

	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || !sb.st_size ||
	    (uint64_t)sb.st_size > XPA_MAX_RAW_BYTES)
		goto out;
	buf = malloc(sb.st_size ? sb.st_size : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (pread(fd, buf, sb.st_size, 0) != sb.st_size)
		goto out;
	e = elf_memory((char *)buf, sb.st_size);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	/* first decide, then zero: libelf reads section names from buf itself */
	{
		uint64_t (*zero)[2] = NULL;
		size_t nz = 0, cap = 0, i;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			uint64_t r[2];

			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
				continue;
			if (keep_section(&sh, elf_strptr(e, shstrndx, sh.sh_name), debuginfo))
				continue;
			if (sh.sh_offset > (uint64_t)sb.st_size ||
			    sh.sh_size > (uint64_t)sb.st_size - sh.sh_offset)
				continue;
			r[0] = sh.sh_offset;
			r[1] = sh.sh_size;
			if (vec_reserve((void **)&zero, &cap, nz, sizeof(*zero))) {
				free(zero);
				err = -ENOMEM;
				goto out;
			}
			memcpy(zero[nz++], r, sizeof(r));
		}
		elf_end(e);
		e = NULL;
		for (i = 0; i < nz; i++)
			memset(buf + zero[i][0], 0, zero[i][1]);
		free(zero);
	}
	*out = buf;
	*len = sb.st_size;
	buf = NULL;
	err = 0;
out:
	if (e)
		elf_end(e);
	free(buf);
	return err;
}

static int write_all(FILE *f, const void *p, size_t n)
{
	static const uint8_t zeros[8];
	size_t pad = xpa_pad8(n) - n;

	if (fwrite(p, 1, n, f) != n || fwrite(zeros, 1, pad, f) != pad)
		return -EIO;
	return 0;
}

/* The recorded path cleaned of "//" and "." (one with "..": its base name), into clean. */
static const char *entry_path(const struct tr_dso *d, char *clean, size_t size)
{
	const char *name = clean;

	if (file_lookup__clean_path(d->path, clean, size)) {
		name = strrchr(d->path, '/') ? strrchr(d->path, '/') + 1 : d->path;
		if (!strcmp(name, "..") || !strcmp(name, "."))
			name = "";
	}
	return name;
}

/* One entry: raw (raw_len bytes) compressed under its content kind and key, with a path. */
static int write_payload(FILE *f, uint8_t content, const uint8_t *key, uint8_t key_len,
			 const char *path, uint32_t flags, const void *raw, size_t raw_len,
			 uint64_t *raw_total, uint64_t *comp_total)
{
	struct xpa_entry e = { .magic = XPA_ENTRY_MAGIC, .entry_size = sizeof(e),
			       .content = content, .build_id_len = key_len, .flags = flags };
	size_t cap = ZSTD_compressBound(raw_len), n;
	uint8_t *comp = malloc(cap);
	int err;

	if (!comp)
		return -ENOMEM;
	n = ZSTD_compress(comp, cap, raw, raw_len, 9);
	if (ZSTD_isError(n)) {
		free(comp);
		return -EIO;
	}
	memcpy(e.build_id, key, key_len);
	e.path_len = (uint16_t)(strlen(path) > 4096 ? 4096 : strlen(path));
	e.raw_size = raw_len;
	e.comp_size = n;
	e.payload_crc32c = crc32c(0, comp, n);
	e.hdr_crc32c = crc32c(0, &e, 60);
	err = write_all(f, &e, sizeof(e));
	if (!err)
		err = write_all(f, path, e.path_len);
	if (!err)
		err = write_all(f, comp, n);
	*raw_total += raw_len;
	*comp_total += n;
	free(comp);
	return err;
}

/* A whole-file entry (--elf): the file (fd) under the DSO's build-id and its recorded path. */
static int write_entry(FILE *f, const struct tr_dso *d, int fd, bool debuginfo,
		       uint64_t *raw_total, uint64_t *comp_total)
{
	char clean[4096];
	const char *name = entry_path(d, clean, sizeof(clean));
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	int err;

	err = load_zeroed(fd, debuginfo, &raw, &raw_len);
	if (err)
		return err;
	/* a reader refuses an entry larger than the file the trace recorded (sym/xpa.h) */
	if (d->rec.size_bytes && raw_len > d->rec.size_bytes)
		err = -EFBIG;
	else
		err = write_payload(f, XPA_CONTENT_ZEROED, d->rec.build_id, d->rec.build_id_len,
				    name, debuginfo ? XPA_ENTRY_DEBUGINFO : 0, raw, raw_len,
				    raw_total, comp_total);
	free(raw);
	return err;
}

/*
 * Every stack the trace's events use, named as the outputs name them (the symbolizer lists each
 * address it names): what a pack must hold is exactly what this touches. archive takes no
 * filter, so the naming phase's sets are every event of each kind.
 */
#define ARCHIVE_NAMING (NAME_SAMPLES | NAME_LAUNCHES | NAME_OFF_CPU | NAME_AG_NODES)

/*
 * A file of the archive is a build-id (without one, a recorded path, size and mtime, as
 * sym/xpa_key.h keys it): a trace can name one file in any number of DSO records, and one
 * entry serves them all.
 */
static int cmp_file_key(const struct xpu_rec_dso *x, const struct xpu_rec_dso *y)
{
	if (x->build_id_len != y->build_id_len)
		return x->build_id_len < y->build_id_len ? -1 : 1;
	if (x->build_id_len)
		return memcmp(x->build_id, y->build_id, x->build_id_len);
	if (x->path_str != y->path_str)
		return x->path_str < y->path_str ? -1 : 1;
	if (x->size_bytes != y->size_bytes)
		return x->size_bytes < y->size_bytes ? -1 : 1;
	return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
}

/* DSO indexes by file, then by index */
static int cmp_file(const void *a, const void *b, void *arg)
{
	const struct trace *t = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = cmp_file_key(&t->dsos[i].rec, &t->dsos[j].rec);

	return c ? c : (i > j) - (i < j);
}

/*
 * For each used ELF DSO record, the one record of its file that stands for it (keep[i];
 * SIZE_MAX: not used): the one whose path found the file here (records of one build-id can
 * name it by paths that lead nowhere, or that are refused), else the first. used[] keeps
 * only those.
 */
static int pick_files(struct session *ses, bool *used, size_t *keep_of)
{
	const struct trace *t = ses->t;
	size_t *ix = malloc((t->ndsos ? t->ndsos : 1) * sizeof(*ix)), n = 0, i, j, k, keep;

	if (!ix)
		return -ENOMEM;
	for (i = 0; i < t->ndsos; i++) {
		keep_of[i] = SIZE_MAX;
		if (used[i] && t->dsos[i].rec.kind == XPU_DSO_ELF)
			ix[n++] = i;
		else
			used[i] = false;
	}
	qsort_r(ix, n, sizeof(*ix), cmp_file, (void *)t);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && !cmp_file_key(&t->dsos[ix[i]].rec, &t->dsos[ix[j]].rec); j++)
			;
		/* records of one file share its slot: the one whose path found it names the entry */
		keep = dso_table__file_record(&ses->dsos, ix[i]);
		if (keep >= t->ndsos || cmp_file_key(&t->dsos[ix[i]].rec, &t->dsos[keep].rec))
			keep = ix[i];
		for (k = i; k < j; k++) {
			used[ix[k]] = ix[k] == keep;
			keep_of[ix[k]] = keep;
		}
	}
	free(ix);
	return 0;
}

/* What the stacks need and what this machine has of it, before anything is written. */
struct archive_plan {
	size_t needed;		/* ELF files the stacks go through */
	size_t found, missing, mismatch;
	size_t changed;		/* without build-id, another size or mtime at the path */
};

/* elf: whole files, which are keyed by build-id only */
static void plan_count(struct session *ses, const bool *used, bool elf, struct archive_plan *p)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < ses->t->ndsos; i++) {
		const struct tr_dso *d = &ses->t->dsos[i];
		struct xpa_file_key key;

		if (!used[i])
			continue;
		p->needed++;
		/* what a pack can hold: a file known by its build-id or by its recorded identity */
		if (dso_table__found(&ses->dsos, i) == DSO_FOUND && xpa_key__of(d, &key) &&
		    (!elf || d->rec.build_id_len))
			p->found++;
		else if (dso_table__found(&ses->dsos, i) == DSO_FOUND_MISMATCH && !d->rec.build_id_len)
			p->changed++;
		else if (dso_table__found(&ses->dsos, i) == DSO_FOUND_MISMATCH)
			p->mismatch++;
		else
			p->missing++;
	}
}

/*
 * Whether the archive is worth writing; if not, says why in one line. An archive made where
 * most files are missing (another machine, rebuilt binaries) would still be used by every
 * later report in place of a proper one, so none is written.
 */
static bool plan_ok(const struct archive_plan *p, const char *trace)
{
	if (!p->needed) {
		fprintf(stderr, "xpu-report: archive: no stack of %s goes through an ELF file: "
			"nothing to archive, nothing written\n", trace);
		return false;
	}
	if (p->found * 2 >= p->needed)
		return true;
	fprintf(stderr, "xpu-report: archive: only %zu of the %zu file%s the stacks of %s go "
		"through %s on this machine (%zu not found, %zu with another build-id", p->found,
		p->needed, p->needed == 1 ? "" : "s", trace, p->found == 1 ? "is" : "are",
		p->missing, p->mismatch);
	if (p->changed)
		fprintf(stderr, ", %zu without build-id changed since recorded", p->changed);
	fprintf(stderr, "): nothing written; run 'xpu-report archive %s' on the recording host\n",
		trace);
	return false;
}

/*
 * Files left out, by reason: one line per reason at the end, with a count and the first few
 * names (cut), however many DSO records the trace has.
 */
enum left_out {
	LEFT_NO_FILE,		/* no local file with the build-id */
	LEFT_NO_BUILD_ID,	/* --elf: whole-file entries are keyed by build-id only */
	LEFT_NO_IDENTITY,	/* no build-id, no size recorded: nothing to know the file by */
	LEFT_CHANGED,		/* no build-id, and no file here of the recorded size and mtime */
	LEFT_TOO_BIG,		/* larger than the file the trace recorded */
	LEFT_UNREADABLE,	/* not an ELF file this could read */
	LEFT_NCLASSES,
};

#define LEFT_EXAMPLES 3

struct left_outs {
	size_t n[LEFT_NCLASSES];
	const char *ex[LEFT_NCLASSES][LEFT_EXAMPLES];
	int err;		/* of the first unreadable file */
};

static void left_add(struct left_outs *l, enum left_out c, const char *path, int err)
{
	if (l->n[c] < LEFT_EXAMPLES)
		l->ex[c][l->n[c]] = path;
	if (c == LEFT_UNREADABLE && !l->n[c])
		l->err = err;
	l->n[c]++;
}

static void left_say(const struct left_outs *l)
{
	static const char *const why[LEFT_NCLASSES] = {
		[LEFT_NO_FILE] = "no local file with its build-id",
		[LEFT_NO_BUILD_ID] = "no build-id",
		[LEFT_NO_IDENTITY] = "no build-id, and no size recorded to tell it from another file",
		[LEFT_CHANGED] = "no build-id, and no file here with the size and mtime recorded",
		[LEFT_TOO_BIG] = "larger than the file the trace recorded",
		[LEFT_UNREADABLE] = "not readable as ELF",
	};
	char cut[WARN_STR_MAX + 4];
	size_t c, i;

	for (c = 0; c < LEFT_NCLASSES; c++) {
		if (!l->n[c])
			continue;
		fprintf(stderr, "xpu-report: warning: %zu file%s not archived (%s", l->n[c],
			l->n[c] == 1 ? "" : "s", why[c]);
		if (c == LEFT_UNREADABLE)
			fprintf(stderr, ": %s", strerror(l->err));
		fputs("): ", stderr);
		for (i = 0; i < l->n[c] && i < LEFT_EXAMPLES; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", warn__cut(l->ex[c][i], cut));
		fprintf(stderr, "%s\n", l->n[c] > LEFT_EXAMPLES ? ", ..." : "");
	}
}

/* What a pack holds, for the summary line. */
struct pack_counts {
	size_t files;		/* NAMES entries */
	size_t addrs;
	size_t walks;
};

static int cmp_sym_addr(const void *x, const void *y)
{
	const struct sym_addr *a = x, *b = y;

	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return (a->off > b->off) - (a->off < b->off);
}

/* One rendering of an address as pack frames (names and files stay in the session's pool). */
static int render(struct session *ses, size_t dso, uint64_t off, bool inline_frames,
		  struct xpa_frame_in *out, uint16_t *n)
{
	const struct frame_site *sites;
	const uint32_t *frames;
	uint32_t cnt, i;
	bool named;
	int err = symbolizer__address(&ses->sym, dso, off, inline_frames, &frames, &sites, &cnt,
				      &named);

	if (err)
		return err;
	if (!cnt || cnt > XPA_MAX_ADDR_FRAMES)
		return -EINVAL;
	for (i = 0; i < cnt; i++) {
		out[i] = (struct xpa_frame_in){
			.name = strpool__str(ses->sym.pool, frames[i]),
			.file = sites[i].file ? strpool__str(ses->sym.pool, sites[i].file) : NULL,
			.line = sites[i].line,
			.flags = (sites[i].outer ? XPA_FRAME_OUTER : 0) |
				 (sites[i].outer && named ? XPA_FRAME_NAMED : 0),
		};
	}
	*n = (uint16_t)cnt;
	return 0;
}

/*
 * The NAMES entry of one file: every address of it that the stacks touch (a[0..n)), under its
 * key (sym/xpa_key.h). A file without build-id is keyed by what the trace recorded of it and
 * holds the recorded path as it is, since a reader compares it byte for byte; a build-id
 * entry's path is informational and cleaned.
 */
static int write_names(FILE *f, struct session *ses, size_t dso, const struct xpa_file_key *key,
		       const struct sym_addr *a, size_t n, uint64_t *raw, uint64_t *comp)
{
	static struct xpa_frame_in plain[XPA_MAX_ADDR_FRAMES], inl[XPA_MAX_ADDR_FRAMES];
	const struct tr_dso *d = &ses->t->dsos[dso];
	struct xpa_names_builder b = { 0 };
	char clean[4096];
	void *buf = NULL;
	size_t i, size;
	uint16_t np, ni;
	int err = 0;

	for (i = 0; !err && i < n; i++) {
		err = render(ses, dso, a[i].off, false, plain, &np);
		if (!err)
			err = render(ses, dso, a[i].off, true, inl, &ni);
		if (!err)
			err = xpa_names__add(&b, a[i].off, plain, np, inl, ni);
	}
	if (!err)
		err = xpa_names__finish(&b, &buf, &size);
	if (!err)
		err = write_payload(f, key->content, key->key, key->len,
				    key->path ? key->path : entry_path(d, clean, sizeof(clean)), 0, buf,
				    size, raw, comp);
	free(buf);
	xpa_names__free(&b);
	return err;
}

/*
 * The symbol pack: a NAMES entry per file the stacks go through, by build-id (or by recorded
 * identity, xpa_key.h), and the walks of the trace's stack copies. 0, -ENOMEM or -EIO.
 */
static int write_pack(FILE *f, struct session *ses, const size_t *keep_of, struct left_outs *left,
		      struct pack_counts *pc, uint64_t *raw, uint64_t *comp, uint32_t *entries)
{
	const struct trace *t = ses->t;
	struct xpa_walks_builder *wb = ses->uw.walks;
	struct sym_addr *a;
	size_t n = 0, i, j;
	int err = 0;

	a = malloc((ses->sym.naddr_list ? ses->sym.naddr_list : 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	/* the addresses of all records of one file under the record that stands for it */
	for (i = 0; i < ses->sym.naddr_list; i++) {
		size_t k = keep_of[ses->sym.addr_list[i].dso];

		if (k != SIZE_MAX)
			a[n++] = (struct sym_addr){ .dso = (uint32_t)k,
						    .off = ses->sym.addr_list[i].off };
	}
	qsort(a, n, sizeof(*a), cmp_sym_addr);
	for (i = 0; !err && i < n; i = j) {
		const struct tr_dso *d = &t->dsos[a[i].dso];
		struct xpa_file_key key;

		for (j = i; j < n && a[j].dso == a[i].dso; j++)
			;
		if (!xpa_key__of(d, &key)) {
			left_add(left, LEFT_NO_IDENTITY, d->path, 0);
			continue;
		}
		/* without build-id, found means at its path with the recorded size and mtime */
		if (dso_table__found(&ses->dsos, a[i].dso) != DSO_FOUND) {
			left_add(left, d->rec.build_id_len ? LEFT_NO_FILE : LEFT_CHANGED, d->path, 0);
			continue;
		}
		err = write_names(f, ses, a[i].dso, &key, a + i, j - i, raw, comp);
		if (!err) {
			pc->files++;
			pc->addrs += j - i;
			(*entries)++;
		}
	}
	free(a);
	if (!err && wb && wb->nwalks) {
		char clean[] = "";
		void *buf = NULL;
		size_t size;

		wb->h.copies = ses->uw.copies;
		wb->h.fp_frames = ses->uw.fp_frames;
		wb->h.fp_scanned = ses->uw.fp_scanned;
		wb->h.fp_walks = ses->uw.fp_walks;
		err = xpa_walks__finish(wb, &buf, &size);
		if (!err)
			err = write_payload(f, XPA_CONTENT_WALKS, t->hdr.uuid, sizeof(t->hdr.uuid),
					    clean, 0, buf, size, raw, comp);
		if (!err) {
			pc->walks = wb->nwalks;
			(*entries)++;
		}
		free(buf);
	}
	return err == -EINVAL ? -ENOMEM : err;
}

/* The whole files (--elf): one zeroed ELF entry per file. 0, -ENOMEM or -EIO. */
static int write_files(FILE *f, struct session *ses, const bool *used, bool debuginfo,
		       struct left_outs *left, uint64_t *raw, uint64_t *comp, uint32_t *entries)
{
	char cut[WARN_STR_MAX + 4];
	size_t i;
	int err;

	for (i = 0; i < ses->t->ndsos; i++) {
		const struct tr_dso *d = &ses->t->dsos[i];
		const char *file;
		int fd;

		if (!used[i])
			continue;
		if (!d->rec.build_id_len) {
			left_add(left, LEFT_NO_BUILD_ID, d->path, 0);
			continue;
		}
		file = dso_table__elf(&ses->dsos, i, &fd);
		if (!file) {
			left_add(left, LEFT_NO_FILE, d->path, 0);
			continue;
		}
		err = write_entry(f, d, fd, debuginfo, raw, comp);
		if (err == -EIO || err == -ENOMEM)
			return err;
		if (err) {
			left_add(left, err == -EFBIG ? LEFT_TOO_BIG : LEFT_UNREADABLE, d->path, -err);
			continue;
		}
		(*entries)++;
		if (ses->opts->verbose)
			fprintf(stderr, "xpu-report: archived %s\n", warn__cut(d->path, cut));
	}
	return 0;
}

static const char archive_usage_head[] =
	"Usage: xpu-report archive [OPTIONS] TRACE.xpu\n"
	"Write TRACE.xpu.xpa, a symbol pack: the names this machine gives every address the\n"
	"trace's stacks go through (from symbol tables, debug files, debuginfod) and its unwinding\n"
	"of the trace's stack copies. xpu-report uses it automatically, before any local file,\n"
	"so the trace reads the same on any machine (an --elf archive: after local files, debug\n"
	"dirs and --symfs). Run it where the trace was recorded (xpu-record does at its end):\n"
	"where most of the files are missing or differ, it fails and writes nothing.\n"
	"\n";

/* xpu-report archive's options (getopt_long returns the letter of each) */
static const struct cli_opt archive_opts[] = {
	{ .short_name = 'o', .name = "output", .arg = "FILE",
	  .help[0] = "archive to write (default TRACE.xpu.xpa)" },
	{ .val = 'e', .name = "elf",
	  .help[0] = "pack the files' whole symbol and unwind tables instead (any\n"
		     "report option works later, e.g. --inline; much larger)" },
	{ .val = 'd', .name = "debuginfo",
	  .help[0] = "with --elf: also keep .debug_* sections (inline frames)" },
	{ .val = 's', .name = "symfs", .arg = "DIR",
	  .help[0] = "also look for binaries under DIR" },
	{ .val = 'a', .name = "add",
	  .help[0] = "keep what the trace's pack (TRACE.xpa) holds, names and walks\n"
		     "of stack copies as they are, and add the names of the files it\n"
		     "lacks that are found here (with --symfs: a copy of the host's\n"
		     "files): a pack completed on another machine" },
	{ .val = 'm', .name = "max-records", .arg = "SIZE",
	  .help[0] = "read records while they hold at most SIZE bytes of memory\n"
		     "(as xpu-report: default 64 times the trace's size, 32M to 2G;\n"
		     "0: no limit); past it the pack is of what was read, exit 1" },
	{ .short_name = 'v', .name = "verbose",
	  .help[0] = "list what is packed" },
	{ .short_name = 'h', .name = "help",
	  .help[0] = "this text" },
};

#define NARCHIVE_OPTS (sizeof(archive_opts) / sizeof(archive_opts[0]))

int archive__main(int argc, char **argv)
{
	struct option lo[NARCHIVE_OPTS + 1];
	char shorts[CLI_GETOPT_SHORTS(NARCHIVE_OPTS)];
	struct report_opts o = { .view = VIEW_MERGED };
	struct xpa_header h = { .magic = XPA_MAGIC, .major = 1, .minor = XPA_MINOR,
				.header_size = sizeof(h) };
	struct archive_plan plan;
	struct left_outs left = { 0 };
	struct pack_counts pc = { 0 };
	struct trace t = { 0 };
	struct session ses;
	char err_buf[512] = "", *out_path = NULL, *tmp_path = NULL;
	const char *output = NULL;
	uint64_t raw = 0, comp = 0;
	bool debuginfo = false, elf = false, add = false, *used = NULL, set_up = false;
	size_t *keep_of = NULL;
	FILE *f = NULL;
	size_t i, missing = 0;
	int c, err, ret = 1;

	cli_opts__getopt(archive_opts, NARCHIVE_OPTS, "", lo, shorts);
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'e':
			elf = true;
			break;
		case 'd':
			debuginfo = true;
			break;
		case 's':
			o.symfs = optarg;
			break;
		case 'a':
			add = true;
			break;
		case 'm':
			if (report__parse_size(optarg, &o.max_records_bytes)) {
				fprintf(stderr, "xpu-report: bad --max-records '%s': expected bytes, with an optional K, M or G suffix\n",
					optarg);
				return 2;
			}
			break;
		case 'v':
			o.verbose++;
			break;
		case 'h':
			fputs(archive_usage_head, stdout);
			cli_opts__usage(archive_opts, NARCHIVE_OPTS, 0, 23, 2, stdout);
			return 0;
		default:
			fprintf(stderr, "xpu-report: see xpu-report archive --help\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "xpu-report: archive needs exactly one trace file (see xpu-report "
				"archive --help)\n");
		return 2;
	}
	if (debuginfo && !elf) {
		fprintf(stderr, "xpu-report: archive: --debuginfo goes with --elf (a symbol pack "
				"holds inline frames and lines wherever this machine has DWARF)\n");
		return 2;
	}
	if (add && elf) {
		fprintf(stderr, "xpu-report: archive: --add completes a symbol pack; an --elf "
				"archive is made anew\n");
		return 2;
	}
	o.input = argv[optind];
	o.pack_writer = true;	/* the addresses named, and the walks (--elf leaves them) */
	/*
	 * What this host gives, never what an older pack of the trace holds; with --add the
	 * pack's entries first, as a report reads them, so that they pass on unchanged.
	 */
	o.no_packs = !add;
	if (!strcmp(o.input, "-")) {
		fprintf(stderr, "xpu-report: archive needs a trace file, not stdin\n");
		return 2;
	}
	/* TRACE.xpa: where a pack goes by default, and what --add adds to */
	if (asprintf(&out_path, "%s.xpa", o.input) < 0)
		return 1;
	if (add) {
		struct stat sb;

		if (stat(out_path, &sb))
			fprintf(stderr, "xpu-report: archive --add: no %s to add to: a new pack, of "
					"this machine's names alone\n", out_path);
	}
	output = output ? output : out_path;
	if (trace__load_max(&t, o.input, o.max_records_bytes, err_buf, sizeof(err_buf))) {
		fprintf(stderr, "xpu-report: %s\n", err_buf);
		free(out_path);
		return 1;
	}
	/* the pack of the records read is written, and the exit says it is not the trace's */
	if (t.st.end == TRACE_END_LIMIT)
		report__say_incomplete(&t, NULL);
	/* symbolizing and unwinding here finds the files, and the DWARF stacks' DSOs */
	err = session__setup(&ses, &t, &o);
	set_up = true;
	if (err)
		goto out_nomem;
	used = calloc(t.ndsos ? t.ndsos : 1, sizeof(*used));
	keep_of = calloc(t.ndsos ? t.ndsos : 1, sizeof(*keep_of));
	if (!used || !keep_of || asprintf(&tmp_path, "%s.tmp", output) < 0 ||
	    session__name(&ses, NULL, ARCHIVE_NAMING))
		goto out_nomem;
	for (i = 0; i < ses.sym.naddr_list; i++)
		used[ses.sym.addr_list[i].dso] = true;
	if (pick_files(&ses, used, keep_of))
		goto out_nomem;
	plan_count(&ses, used, elf, &plan);
	if (!plan_ok(&plan, o.input))
		goto out;
	/* a fresh file: never write through a link someone left at the temporary name */
	unlink(tmp_path);
	{
		int tfd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		f = tfd >= 0 ? fdopen(tfd, "w") : NULL;
		if (!f && tfd >= 0)
			close(tfd);
	}
	if (!f) {
		fprintf(stderr, "xpu-report: cannot create %s: %s\n", tmp_path, strerror(errno));
		goto out;
	}
	if (write_all(f, &h, sizeof(h)))
		goto out_io;
	err = elf ? write_files(f, &ses, used, debuginfo, &left, &raw, &comp, &h.entry_count) :
		    write_pack(f, &ses, keep_of, &left, &pc, &raw, &comp, &h.entry_count);
	if (err == -EIO)
		goto out_io;
	if (err)
		goto out_nomem;
	left_say(&left);
	for (i = 0; i < LEFT_NCLASSES; i++)
		missing += left.n[i];
	h.hdr_crc32c = crc32c(0, &h, 28);
	if (fseek(f, 0, SEEK_SET) || write_all(f, &h, sizeof(h)) || fclose(f)) {
		f = NULL;
		goto out_io;
	}
	f = NULL;
	if (rename(tmp_path, output)) {
		fprintf(stderr, "xpu-report: cannot rename %s to %s: %s\n", tmp_path, output,
			strerror(errno));
		goto out;
	}
	if (elf)
		printf("%s: %u of the %zu file%s the stacks go through, %.1f MiB (%.1f MiB "
		       "uncompressed)%s\n", output, h.entry_count, plan.needed,
		       plan.needed == 1 ? "" : "s", comp / 1048576.0, raw / 1048576.0,
		       missing ? "; the others are missing here (see above)" : "");
	else
		printf("%s: symbol pack of %zu of the %zu file%s the stacks go through (%zu "
		       "addresses, %zu stack walks), %.1f KiB%s\n", output, pc.files, plan.needed,
		       plan.needed == 1 ? "" : "s", pc.addrs, pc.walks, comp / 1024.0,
		       missing ? "; the others are missing here (see above)" : "");
	ret = t.st.end == TRACE_END_LIMIT;
	goto out;
out_nomem:
	fprintf(stderr, "xpu-report: out of memory\n");
	goto out;
out_io:
	fprintf(stderr, "xpu-report: writing %s: %s\n", tmp_path, strerror(errno ? errno : EIO));
out:
	if (f)
		fclose(f);
	if (ret && tmp_path)
		unlink(tmp_path);
	if (set_up)
		session__teardown(&ses);
	trace__free(&t);
	free(used);
	free(keep_of);
	free(tmp_path);
	free(out_path);
	return ret;
}
