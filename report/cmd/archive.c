// SPDX-License-Identifier: MIT
/*
 * `xpu-report archive`: writes TRACE.xpa (format-spec/ARCHIVE.md; read by sym/xpa.c). An entry
 * is an ELF file whose section contents the report never reads (code, data) are replaced by
 * zeros: the layout, program headers and offsets stay those of the original, so a mapping's
 * file offsets still apply, and the zeros cost nothing once compressed. Symbol tables,
 * .eh_frame(_hdr), .debug_frame, notes and the PLT (for "sym@plt") are kept; .debug_* only
 * with --debuginfo.
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
#include "cmd/cmd.h"
#include "crc32c.h"
#include "model/session.h"
#include "sym/file_lookup.h"
#include "sym/xpa.h"

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

/*
 * One entry: the file (fd) under the DSO's build-id and its recorded path, cleaned of "//"
 * and "." (a path that cannot be cleaned, one with "..", is stored as its base name).
 */
static int write_entry(FILE *f, const struct tr_dso *d, int fd, bool debuginfo,
		       uint64_t *raw_total, uint64_t *comp_total)
{
	char clean[4096];
	const char *name = clean;
	struct xpa_entry e = { .magic = XPA_ENTRY_MAGIC, .entry_size = sizeof(e),
			       .content = XPA_CONTENT_ZEROED };
	uint8_t *raw = NULL, *comp = NULL;
	size_t raw_len = 0, cap, n;
	int err;

	if (file_lookup__clean_path(d->path, clean, sizeof(clean))) {
		name = strrchr(d->path, '/') ? strrchr(d->path, '/') + 1 : d->path;
		if (!strcmp(name, "..") || !strcmp(name, "."))
			name = "";
	}
	err = load_zeroed(fd, debuginfo, &raw, &raw_len);
	if (err)
		return err;
	/* a reader refuses an entry larger than the file the trace recorded (sym/xpa.h) */
	if (d->rec.size_bytes && raw_len > d->rec.size_bytes) {
		err = -EFBIG;
		goto out;
	}
	cap = ZSTD_compressBound(raw_len);
	comp = malloc(cap);
	if (!comp) {
		err = -ENOMEM;
		goto out;
	}
	n = ZSTD_compress(comp, cap, raw, raw_len, 9);
	if (ZSTD_isError(n)) {
		err = -EIO;
		goto out;
	}
	e.build_id_len = d->rec.build_id_len;
	memcpy(e.build_id, d->rec.build_id, sizeof(e.build_id));
	e.path_len = (uint16_t)(strlen(name) > 4096 ? 4096 : strlen(name));
	e.raw_size = raw_len;
	e.comp_size = n;
	e.flags = debuginfo ? XPA_ENTRY_DEBUGINFO : 0;
	e.payload_crc32c = crc32c(0, comp, n);
	e.hdr_crc32c = crc32c(0, &e, 60);
	err = write_all(f, &e, sizeof(e));
	if (!err)
		err = write_all(f, name, e.path_len);
	if (!err)
		err = write_all(f, comp, n);
	*raw_total += raw_len;
	*comp_total += n;
out:
	free(raw);
	free(comp);
	return err;
}

static void mark_stack(struct session *ses, uint32_t pid, uint64_t ts, uint32_t stack_id,
		       bool *used)
{
	const struct tr_stack *st = derived_stacks__get(&ses->stacks, stack_id);
	uint32_t i;

	for (i = 0; st && i < st->nr_user; i++) {
		uint64_t ip = st->ips[st->nr_kernel + i];
		const struct xpu_rec_mapping *m = maps__find(&ses->sym.maps, pid, i ? ip - 1 : ip, ts);
		uint32_t *didx = m ? kmap__get(&ses->t->dso_ids, m->dso_id, 0) : NULL;

		if (didx)
			used[*didx] = true;
	}
}

/*
 * A file of the archive is a build-id (without one, a recorded path): a trace can name one
 * file in any number of DSO records, and one entry serves them all.
 */
static int cmp_file_key(const struct xpu_rec_dso *x, const struct xpu_rec_dso *y)
{
	if (x->build_id_len != y->build_id_len)
		return x->build_id_len < y->build_id_len ? -1 : 1;
	if (x->build_id_len)
		return memcmp(x->build_id, y->build_id, x->build_id_len);
	return (x->path_str > y->path_str) - (x->path_str < y->path_str);
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
 * Keeps in used one used ELF DSO record of each file: the first whose file was found here
 * (records of one build-id can name it by paths that lead nowhere, or that are refused), else
 * the first.
 */
static int pick_files(struct session *ses, bool *used)
{
	const struct trace *t = ses->t;
	size_t *ix = malloc((t->ndsos ? t->ndsos : 1) * sizeof(*ix)), n = 0, i, j, k, keep;

	if (!ix)
		return -ENOMEM;
	for (i = 0; i < t->ndsos; i++) {
		if (used[i] && t->dsos[i].rec.kind == XPU_DSO_ELF)
			ix[n++] = i;
		else
			used[i] = false;
	}
	qsort_r(ix, n, sizeof(*ix), cmp_file, (void *)t);
	for (i = 0; i < n; i = j) {
		bool found = false;

		keep = ix[i];
		for (j = i; j < n && !cmp_file_key(&t->dsos[ix[i]].rec, &t->dsos[ix[j]].rec); j++) {
			int fd;

			if (!found && symbolizer__dso_elf(&ses->sym, ix[j], &fd)) {
				keep = ix[j];
				found = true;
			}
		}
		for (k = i; k < j; k++)
			used[ix[k]] = ix[k] == keep;
	}
	free(ix);
	return 0;
}

/* What the stacks need and what this machine has of it, before anything is written. */
struct archive_plan {
	size_t needed;		/* ELF files the stacks go through */
	size_t found, missing, mismatch;
};

static void plan_count(struct session *ses, const bool *used, struct archive_plan *p)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < ses->t->ndsos; i++) {
		const struct tr_dso *d = &ses->t->dsos[i];
		int fd;

		if (!used[i])
			continue;
		p->needed++;
		if (symbolizer__dso_elf(&ses->sym, i, &fd) && d->rec.build_id_len)
			p->found++;
		else if (symbolizer__dso_found(&ses->sym, i) == SYM_DSO_MISMATCH)
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
		"through %s on this machine (%zu not found, %zu with another build-id): nothing "
		"written; run 'xpu-report archive %s' on the recording host\n", p->found, p->needed,
		p->needed == 1 ? "" : "s", trace, p->found == 1 ? "is" : "are", p->missing,
		p->mismatch, trace);
	return false;
}

/*
 * Files left out, by reason: one line per reason at the end, with a count and the first few
 * names (cut), however many DSO records the trace has.
 */
enum left_out {
	LEFT_NO_FILE,		/* no local file with the build-id */
	LEFT_NO_BUILD_ID,
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

static const char archive_usage[] =
	"Usage: xpu-report archive [OPTIONS] TRACE.xpu\n"
	"Pack the ELF files the trace's stacks touch (symbol and unwind tables, by build-id) into\n"
	"TRACE.xpu.xpa, which xpu-report then uses automatically on any machine. Run it where\n"
	"the trace was recorded: where most of those files are missing or differ, it fails and\n"
	"writes nothing.\n"
	"\n"
	"  -o, --output=FILE    archive to write (default TRACE.xpu.xpa)\n"
	"      --debuginfo      also keep .debug_* sections (inline frames; much larger)\n"
	"      --symfs=DIR      also look for binaries under DIR\n"
	"  -v, --verbose        list what is packed\n"
	"  -h, --help           this text\n";

int archive__main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "debuginfo", no_argument, NULL, 'd' },
		{ "symfs", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_opts o = { .view = VIEW_MERGED };
	struct xpa_header h = { .magic = XPA_MAGIC, .major = 1, .minor = 0,
				.header_size = sizeof(h) };
	struct archive_plan plan;
	struct left_outs left = { 0 };
	struct trace t = { 0 };
	struct session ses;
	char err_buf[512] = "", *out_path = NULL, *tmp_path = NULL, cut[WARN_STR_MAX + 4];
	const char *output = NULL;
	uint64_t raw = 0, comp = 0;
	bool debuginfo = false, *used = NULL;
	FILE *f = NULL;
	size_t i, missing = 0;
	int c, err, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'd':
			debuginfo = true;
			break;
		case 's':
			o.symfs = optarg;
			break;
		case 'v':
			o.verbose++;
			break;
		case 'h':
			fputs(archive_usage, stdout);
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
	o.input = argv[optind];
	if (!strcmp(o.input, "-")) {
		fprintf(stderr, "xpu-report: archive needs a trace file, not stdin\n");
		return 2;
	}
	if (!output && asprintf(&out_path, "%s.xpa", o.input) < 0)
		return 1;
	output = output ? output : out_path;
	if (trace__load(&t, o.input, err_buf, sizeof(err_buf))) {
		fprintf(stderr, "xpu-report: %s\n", err_buf);
		free(out_path);
		return 1;
	}
	/* symbolizing and unwinding here finds the files, and the DWARF stacks' DSOs */
	err = session__setup(&ses, &t, &o);
	if (err)
		goto out_trace;
	used = calloc(t.ndsos ? t.ndsos : 1, sizeof(*used));
	if (!used || asprintf(&tmp_path, "%s.tmp", output) < 0)
		goto out;
	for (i = 0; i < t.nsamples; i++)
		mark_stack(&ses, t.samples[i].pid, t.samples[i].ts_ns, session__sample_stack(&ses, i),
			   used);
	for (i = 0; i < t.nlaunches; i++)
		mark_stack(&ses, t.launches[i].pid, t.launches[i].ts_ns, session__launch_stack(&ses, i),
			   used);
	if (pick_files(&ses, used)) {
		fprintf(stderr, "xpu-report: out of memory\n");
		goto out;
	}
	plan_count(&ses, used, &plan);
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
	for (i = 0; i < t.ndsos; i++) {
		const struct tr_dso *d = &t.dsos[i];
		const char *file;
		int fd;

		if (!used[i])
			continue;
		file = symbolizer__dso_elf(&ses.sym, i, &fd);
		if (!file || !d->rec.build_id_len) {
			left_add(&left, file ? LEFT_NO_BUILD_ID : LEFT_NO_FILE, d->path, 0);
			continue;
		}
		err = write_entry(f, d, fd, debuginfo, &raw, &comp);
		if (err == -EIO)
			goto out_io;
		if (err == -ENOMEM) {
			fprintf(stderr, "xpu-report: out of memory\n");
			goto out;
		}
		if (err) {
			left_add(&left, err == -EFBIG ? LEFT_TOO_BIG : LEFT_UNREADABLE, d->path,
				 -err);
			continue;
		}
		h.entry_count++;
		if (o.verbose)
			fprintf(stderr, "xpu-report: archived %s\n", warn__cut(d->path, cut));
	}
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
	printf("%s: %u of the %zu file%s the stacks go through, %.1f MiB (%.1f MiB uncompressed)%s\n",
	       output, h.entry_count, plan.needed, plan.needed == 1 ? "" : "s", comp / 1048576.0,
	       raw / 1048576.0,
	       missing ? "; the others are missing here (see above)" : "");
	ret = 0;
	goto out;
out_io:
	fprintf(stderr, "xpu-report: writing %s: %s\n", tmp_path, strerror(errno ? errno : EIO));
out:
	if (f)
		fclose(f);
	if (ret && tmp_path)
		unlink(tmp_path);
	session__teardown(&ses);
out_trace:
	trace__free(&t);
	free(used);
	free(tmp_path);
	free(out_path);
	return ret;
}
