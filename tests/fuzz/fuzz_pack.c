// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: symbol packs (format-spec/ARCHIVE.md 2.4 NAMES, 2.5 WALKS) as the report
 * reads them beside a real trace. Archive entries carry CRCs and zstd payloads, so random
 * bytes never reach the pack parsers: here the input describes the entries and the harness
 * builds a well-formed archive around them (real zstd frames, correct CRCs, unless the input
 * asks for one thing to be wrong), writes it as TRACE.xpu.xpa beside a copy of a committed
 * trace, and runs report_run() in-process with --no-host-files, so what names the frames and
 * walks the stack copies is the pack, or the code that copes with a pack that is damaged.
 *
 * The traces: samples/traces/pipeline{,-graph,-static}.xpu ($XPU_FUZZ_TRACES: another folder
 * holding them), copied into a temporary folder at start, and last a small one written then
 * whose one file has no build-id (NOID_PATH: every file of the committed traces has one), so
 * that a NAMES_BY_FILE entry (ARCHIVE.md 2.6) can match a record. Their DSO build-ids and
 * uuid are read then, so an entry's key can be a real one by index.
 *
 * Input:
 *   u8 ctl0   bits 0-1: format (folded, text, pprof, info); bit 2: --inline; bit 3: two
 *             traces read as one (the next trace too, with its committed pack, or with bit 7
 *             the same archive); bits 4-5: the trace (modulo the traces found)
 *   u8 ctl1   bit 0: archive minor 0; bit 1: entry_count one more than written; bit 2:
 *             header_size 40; bit 3: --no-unwind; bit 4: also folded with the other --inline;
 *             bit 5: also diff of the trace against itself; bits 6-7: --archive-max default,
 *             4 KiB, 32 KiB, 256 KiB
 *   then up to 16 entries, each:
 *   u8 kind   bits 0-1: content NAMES, WALKS, whole file, or (bits 5-7) 4 + N (0 when N
 *             is 7): 4 is NAMES_BY_FILE (ARCHIVE.md 2.6), whose real key (modes 0 and 3)
 *             is the last trace's file's, and whose path (bit 4) is NOID_PATH; 5 and up
 *             are unknown kinds; bits 2-3: key: 0 the real one (NAMES, whole file and
 *             unknown: the build-id at index `key`; WALKS: the trace's uuid), 1 written out
 *             (`key` bytes, modulo 21, follow), 2 the other kind's (NAMES: the uuid; WALKS:
 *             a build-id, or with key bit 7 the uuid of the next trace), 3 the real one with
 *             its last byte flipped (NAMES_BY_FILE: byte `key` % 20); bit 4: a recorded path
 *   u8 key    index, or length (see kind)
 *   u8 damage only with bit 7, each bit one fault: 0 raw_size + 1, 1 raw_size - 1, 2 payload
 *             CRC, 3 comp_size - 1 (its CRC over what is left), 4 no content size in the zstd
 *             frame, 5 entry header CRC, 6 raw_size + 4 GiB
 *   u24 size  payload bytes (LE; past the end: what is left), then the raw (uncompressed)
 *             payload
 *
 * tests/fuzz/pack2seed.c turns the committed packs into seeds of this form. To check one by
 * hand: XPU_FUZZ_PACK_OUTPUT=FILE build-fuzz/fuzz_pack INPUT writes its first report to FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "cmd/cmd.h"
#include "crc32c.h"
#include "sym/xpa.h"
#include "sym/xpa_key.h"
#include "trace_reader.h"
#define TRACE_BUILD_PROG "fuzz_pack"
#include "../lib/trace_build.h"

#define FZ_MAX_TRACES 4
#define FZ_MAX_KEYS 128
#define FZ_MAX_ENTRIES 16

/* The order pack2seed's TRACE argument counts in. */
static const char *const trace_names[FZ_MAX_TRACES] = {
	"pipeline.xpu", "pipeline-graph.xpu", "pipeline-static.xpu",
};

struct fz_trace {
	char path[PATH_MAX];		/* the copy in the work folder */
	char xpa[PATH_MAX + 4];		/* path.xpa */
	uint8_t *pack;			/* the committed pack, or NULL */
	size_t pack_size;
	uint8_t uuid[16];
	uint8_t ids[FZ_MAX_KEYS][20];	/* distinct DSO build-ids, in record order */
	uint8_t id_len[FZ_MAX_KEYS];
	size_t nids;
};

/* The last trace's one file, which has no build-id: its pack key is by file (xpa_key.h). */
#define NOID_PATH "/opt/fuzz/libnoid.so"
#define NOID_SIZE 8192
#define NOID_MTIME 1700000000123456789ull
#define NOID_BASE 0x400000ull
#define NOID_T0 1000000000ull

static struct xpa_file_key noid_key;
static struct fz_trace traces[FZ_MAX_TRACES];
static size_t ntraces;
static char workdir[PATH_MAX];
static ZSTD_CCtx *cctx;

struct fz_buf {
	uint8_t *p;
	size_t n, cap;
};

static void buf_put(struct fz_buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->n + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			__builtin_trap();
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void buf_pad8(struct fz_buf *b)
{
	static const uint8_t zeros[8];

	buf_put(b, zeros, xpa_pad8(b->n) - b->n);
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "r");
	uint8_t *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		p = malloc((size_t)n);
		if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*size = (size_t)n;
	}
	fclose(f);
	return p;
}

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || close(fd)) {
		fprintf(stderr, "fuzz_pack: cannot write %s: %s\n", path, strerror(errno));
		__builtin_trap();
	}
}

/* The trace's uuid and the build-ids of its DSO records. */
static bool scan_trace(struct fz_trace *t, const uint8_t *bytes, size_t size)
{
	struct trace_reader *r;
	struct trace_record rec;
	char err[256];

	if (size < sizeof(struct xpu_file_header))
		return false;
	memcpy(t->uuid, ((const struct xpu_file_header *)bytes)->uuid, 16);
	r = trace_reader__open_mem(bytes, size, err, sizeof(err));
	if (!r)
		return false;
	while (trace_reader__next(r, &rec)) {
		struct xpu_rec_dso d;
		size_t i;

		if (rec.type != XPU_REC_DSO || rec.body_size < sizeof(d))
			continue;
		memcpy(&d, rec.body, sizeof(d));
		if (!d.build_id_len || d.build_id_len > 20 || t->nids == FZ_MAX_KEYS)
			continue;
		for (i = 0; i < t->nids; i++) {
			if (t->id_len[i] == d.build_id_len &&
			    !memcmp(t->ids[i], d.build_id, d.build_id_len))
				break;
		}
		if (i < t->nids)
			continue;
		memcpy(t->ids[t->nids], d.build_id, d.build_id_len);
		t->id_len[t->nids++] = d.build_id_len;
	}
	trace_reader__close(r);
	return true;
}

/*
 * A trace of one process whose stacks are in NOID_PATH only: 64 samples over 8 leaf offsets
 * (0x100 to 0x170) under two callers, frame-pointer stacks.
 */
static void write_noid_trace(const char *path)
{
	struct trace_writer_opts wo = { 0 };
	struct xpu_rec_session ses = { .ncpu = 1, .page_size_bytes = 4096, .sample_freq_hz = 99,
				       .stack_mode = XPU_STACK_FP, .target_pid = 100,
				       .start_mono_ns = NOID_T0 };
	struct xpu_rec_dso dso = { .id = 1, .kind = XPU_DSO_ELF, .size_bytes = NOID_SIZE,
				   .mtime_ns = NOID_MTIME };
	struct xpu_rec_task task = { .ts_ns = NOID_T0, .kind = XPU_TASK_EXEC, .pid = 100,
				     .tid = 100 };
	struct xpu_rec_mapping m = { .ts_ns = NOID_T0, .pid = 100, .dso_id = 1, .start = NOID_BASE,
				     .end = NOID_BASE + NOID_SIZE, .prot = 5 };
	struct xpu_rec_session_end end = { .end_mono_ns = NOID_T0 + 100000000,
					   .reason = XPU_END_TARGET_EXITED };
	struct tr_dso d = { .path = NOID_PATH };
	uint32_t i;

	open_trace(path, &wo);
	ses.host_str = str("fuzz-host");
	ses.arch_str = str("x86_64");
	ses.version_str = str("fuzz");
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	dso.path_str = str(NOID_PATH);
	rec(XPU_REC_DSO, &dso, sizeof(dso), 0);
	task.comm_str = str("noid");
	rec(XPU_REC_TASK, &task, sizeof(task), NOID_T0);
	rec(XPU_REC_MAPPING, &m, sizeof(m), NOID_T0);
	for (i = 0; i < 64; i++) {
		uint64_t ips[] = { NOID_BASE + 0x100 + (i % 8) * 0x10, NOID_BASE + 0x405,
				   NOID_BASE + 0x805 };
		uint64_t ts = NOID_T0 + 1000000ull * (i + 1);
		struct xpu_rec_cpu_sample smp = { .ts_ns = ts, .pid = 100, .tid = 100,
						  .stack_id = stack(ips, 0, 3) };

		rec(XPU_REC_CPU_SAMPLE, &smp, sizeof(smp), ts);
	}
	rec(XPU_REC_SESSION_END, &end, sizeof(end), end.end_mono_ns);
	if (trace_writer__close(w))
		die("close");
	d.rec = dso;
	if (!xpa_key__of(&d, &noid_key))
		die("the file's pack key");
}

static void cleanup(void)
{
	size_t i;

	for (i = 0; i < ntraces; i++) {
		unlink(traces[i].xpa);
		unlink(traces[i].path);
	}
	if (workdir[0])
		rmdir(workdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("XPU_FUZZ_TRACES") ? getenv("XPU_FUZZ_TRACES") : "samples/traces";
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	size_t i;

	snprintf(workdir, sizeof(workdir), "%s/xpu-fuzz-pack.XXXXXX", tmp);
	if (!mkdtemp(workdir)) {
		perror(workdir);
		__builtin_trap();
	}
	atexit(cleanup);
	for (i = 0; i < FZ_MAX_TRACES; i++) {
		struct fz_trace *t = &traces[ntraces];
		char src[PATH_MAX + 8];
		uint8_t *bytes;
		size_t size = 0;

		snprintf(src, sizeof(src), "%s/%s", dir, trace_names[i]);
		bytes = read_file(src, &size);
		if (!bytes || !scan_trace(t, bytes, size)) {
			fprintf(stderr, "fuzz_pack: %s: not read; run from the repository root or "
					"set XPU_FUZZ_TRACES\n", src);
			free(bytes);
			continue;
		}
		snprintf(t->path, sizeof(t->path), "%s/t%zu.xpu", workdir, i);
		snprintf(t->xpa, sizeof(t->xpa), "%s.xpa", t->path);
		write_file(t->path, bytes, size);
		free(bytes);
		strcat(src, ".xpa");
		t->pack = read_file(src, &t->pack_size);
		ntraces++;
	}
	/* last: the trace of a file without build-id, written here */
	{
		struct fz_trace *t = &traces[ntraces];
		uint8_t *bytes;
		size_t size = 0;

		snprintf(t->path, sizeof(t->path), "%s/noid.xpu", workdir);
		snprintf(t->xpa, sizeof(t->xpa), "%s.xpa", t->path);
		write_noid_trace(t->path);
		bytes = read_file(t->path, &size);
		if (!bytes || !scan_trace(t, bytes, size))
			__builtin_trap();
		free(bytes);
		ntraces++;
	}
	cctx = ZSTD_createCCtx();
	if (!ntraces || !cctx)
		__builtin_trap();
	return 0;
}

enum fz_damage {
	DMG_RAW_PLUS = 1 << 0,
	DMG_RAW_MINUS = 1 << 1,
	DMG_PAYLOAD_CRC = 1 << 2,
	DMG_TRUNCATED = 1 << 3,
	DMG_NO_SIZE = 1 << 4,
	DMG_HEADER_CRC = 1 << 5,
	DMG_RAW_HUGE = 1 << 6,
	DMG_ON = 1 << 7,
};

/* One entry: raw compressed into a real zstd frame, CRCs right unless damage says not. */
static void put_entry(struct fz_buf *b, uint8_t content, const uint8_t *key, uint8_t key_len,
		      uint8_t dmg, bool with_path, const uint8_t *raw, size_t raw_len)
{
	/* a by-file entry's path is part of its key: the one of the file it stands for */
	const char *path = content == XPA_CONTENT_NAMES_BY_FILE ? NOID_PATH :
				   "/usr/lib/x86_64-linux-gnu/libfuzz.so.1";
	struct xpa_entry e = { .magic = XPA_ENTRY_MAGIC, .entry_size = sizeof(e),
			       .content = content, .build_id_len = key_len };
	size_t cap = ZSTD_compressBound(raw_len), n;
	uint8_t *comp = malloc(cap ? cap : 1);

	if (!(dmg & DMG_ON))
		dmg = 0;
	if (!comp || ZSTD_isError(ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, !(dmg & DMG_NO_SIZE))))
		__builtin_trap();
	n = ZSTD_compress2(cctx, comp, cap, raw, raw_len);
	if (ZSTD_isError(n))
		__builtin_trap();
	memcpy(e.build_id, key, key_len);
	e.path_len = with_path ? (uint16_t)strlen(path) : 0;
	e.raw_size = raw_len;
	e.comp_size = n;
	if ((dmg & DMG_TRUNCATED) && n)
		e.comp_size--;
	if (dmg & DMG_RAW_PLUS)
		e.raw_size++;
	if (dmg & DMG_RAW_MINUS)
		e.raw_size--;
	if (dmg & DMG_RAW_HUGE)
		e.raw_size += 4ull << 30;
	e.payload_crc32c = crc32c(0, comp, e.comp_size) ^ !!(dmg & DMG_PAYLOAD_CRC);
	e.hdr_crc32c = crc32c(0, &e, 60) ^ !!(dmg & DMG_HEADER_CRC);
	buf_put(b, &e, sizeof(e));
	buf_put(b, path, e.path_len);
	buf_pad8(b);
	buf_put(b, comp, e.comp_size);
	buf_pad8(b);
	free(comp);
}

/* The archive the input describes, after its 2 control bytes; the number of entries. */
static uint32_t build_archive(struct fz_buf *b, const struct fz_trace *t,
			      const struct fz_trace *next, const uint8_t *data, size_t size)
{
	size_t pos = 2;
	uint32_t n = 0;

	while (pos + 3 <= size && n < FZ_MAX_ENTRIES) {
		uint8_t kind = data[pos], keyb = data[pos + 1], dmg, content, key[20] = { 0 };
		uint8_t key_len = 0, mode = kind >> 2 & 3;
		size_t len;

		pos += 2;
		switch (kind & 3) {
		case 0:
			content = XPA_CONTENT_NAMES;
			break;
		case 1:
			content = XPA_CONTENT_WALKS;
			break;
		case 2:
			content = XPA_CONTENT_ZEROED;
			break;
		default:
			content = (kind >> 5) == 7 ? 0 : 4 + (kind >> 5);
			break;
		}
		if (mode == 1) {
			key_len = keyb % 21;
			if (key_len > size - pos)
				key_len = (uint8_t)(size - pos);
			memcpy(key, data + pos, key_len);
			pos += key_len;
		} else if (content == XPA_CONTENT_NAMES_BY_FILE && mode != 2) {
			memcpy(key, noid_key.key, noid_key.len);
			key_len = noid_key.len;
			if (mode == 3)
				key[keyb % key_len] ^= 1;
		} else {
			bool walks = content == XPA_CONTENT_WALKS;

			if (walks && mode == 2 && (keyb & 0x80)) {
				memcpy(key, next->uuid, 16);
				key_len = 16;
			} else if (walks != (mode == 2)) {
				memcpy(key, t->uuid, 16);
				key_len = 16;
			} else if (t->nids) {
				key_len = t->id_len[keyb % t->nids];
				memcpy(key, t->ids[keyb % t->nids], key_len);
			}
			if (mode == 3 && key_len)
				key[key_len - 1] ^= 1;
		}
		if (pos + 4 > size)
			break;
		dmg = data[pos];
		len = data[pos + 1] | (size_t)data[pos + 2] << 8 | (size_t)data[pos + 3] << 16;
		pos += 4;
		if (len > size - pos)
			len = size - pos;
		put_entry(b, content, key, key_len, dmg, kind & 0x10, data + pos, len);
		pos += len;
		n++;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum report_format formats[] = { FMT_FOLDED, FMT_TEXT, FMT_PPROF, FMT_INFO };
	static const uint64_t budgets[] = { 0, 4096, 32768, 262144 };
	static struct fz_buf b;
	struct xpa_header h = { .magic = XPA_MAGIC, .major = 1 };
	struct fz_trace *t, *next;
	const char *inputs[2];
	struct report_opts o = { 0 };
	uint8_t ctl0, ctl1;
	bool multi;
	uint32_t n;

	if (size < 2)
		return 0;
	ctl0 = data[0];
	ctl1 = data[1];
	t = &traces[(ctl0 >> 4 & 3) % ntraces];
	next = &traces[((ctl0 >> 4 & 3) % ntraces + 1) % ntraces];
	multi = (ctl0 & 8) && next != t;

	b.n = 0;
	h.minor = ctl1 & 1 ? 0 : 1;
	h.header_size = ctl1 & 4 ? 40 : sizeof(h);
	buf_put(&b, &h, sizeof(h));
	buf_pad8(&b);
	if (h.header_size > sizeof(h))
		buf_put(&b, "\0\0\0\0\0\0\0", 8);
	n = build_archive(&b, t, next, data, size);
	h.entry_count = n + (ctl1 >> 1 & 1);
	h.hdr_crc32c = crc32c(0, &h, 28);
	memcpy(b.p, &h, sizeof(h));
	write_file(t->xpa, b.p, b.n);
	if (multi) {
		/* the next trace beside its own pack, or beside the same archive */
		if (ctl0 & 0x80)
			write_file(next->xpa, b.p, b.n);
		else if (next->pack)
			write_file(next->xpa, next->pack, next->pack_size);
		else
			unlink(next->xpa);
	}

	o.input = t->path;
	/* $XPU_FUZZ_PACK_OUTPUT: where the first report goes (checking a seed by hand) */
	o.output = getenv("XPU_FUZZ_PACK_OUTPUT") ? getenv("XPU_FUZZ_PACK_OUTPUT") : "/dev/null";
	o.view = VIEW_MERGED;
	o.no_host_files = true;
	o.format = formats[ctl0 & 3];
	o.inline_frames = ctl0 & 4;
	o.no_unwind = ctl1 & 8;
	o.archive_max_bytes = budgets[ctl1 >> 6];
	if (multi) {
		inputs[0] = t->path;
		inputs[1] = next->path;
		o.inputs = inputs;
		o.ninputs = 2;
	}
	report_run(&o);
	if (ctl1 & 0x10) {
		o.output = "/dev/null";
		o.format = FMT_FOLDED;
		o.inline_frames = !o.inline_frames;
		report_run(&o);
	}
	if (ctl1 & 0x20) {
		char *files[2] = { t->path, t->path };

		o.output = "/dev/null";
		o.format = FMT_TEXT;
		o.inputs = NULL;
		o.ninputs = 0;
		o.diff = true;
		diff_run(&o, files);
	}
	return 0;
}
