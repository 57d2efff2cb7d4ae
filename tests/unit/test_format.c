// SPDX-License-Identifier: MIT
/*
 * Trace format: every record type round-trips; a trace cut at every byte offset yields every
 * complete frame, never crashes and is called truncated (never corrupt, even when the cut
 * falls in the trailer or a frame header); a flipped byte anywhere is detected, and bytes at
 * the end that begin no frame or trailer are damage. The tables of record types and counters
 * agree with their structs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "record_fields.h"
#include "stat_names.h"
#include "trace_reader.h"
#include "trace_writer.h"
#include "unit.h"

struct expect {
	uint16_t type;
	uint32_t size;
	uint8_t body[256];
};

static struct expect expected[64];
static int nexpected;

static void add(struct trace_writer *w, uint16_t type, const void *body, uint32_t size)
{
	CHECK(trace_writer__append(w, type, body, size, 1000 + nexpected) == 0, "append %u", type);
	expected[nexpected].type = type;
	expected[nexpected].size = size;
	memcpy(expected[nexpected].body, body, size);
	nexpected++;
}

static void fill(void *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = (uint8_t)(seed + i * 7);
}

/* Writes one record of every fixed-layout type, with distinct bytes in every field. */
static uint8_t *write_trace(size_t *size, int no_compress, uint32_t frame_bytes, int flush_each)
{
	char path[] = "/tmp/xpu-test-XXXXXX";
	int fd = mkstemp(path);
	struct trace_writer_opts opts = { .no_compress = no_compress,
					  .frame_raw_bytes = frame_bytes };
	struct trace_writer *w;
	uint8_t *buf;
	off_t len;

	unlink(path);
	w = trace_writer__open_fd(dup(fd), &opts);
	CHECK(w != NULL, "open writer");
	nexpected = 0;
	for (uint16_t t = 1; t <= XPU_REC_TYPE_MAX_KNOWN; t++) {
		uint8_t body[256];
		uint32_t sz = xpu_record_min_body(t);

		if (!sz || t == XPU_REC_STRING || t == XPU_REC_STACK)
			continue;
		fill(body, sz, (uint8_t)t);
		add(w, t, body, sz);
		if (flush_each)
			trace_writer__flush(w);
	}
	CHECK(trace_writer__intern_cstr(w, "hello") == 1, "first string id");
	CHECK(trace_writer__intern_cstr(w, "world") == 2, "second string id");
	CHECK(trace_writer__intern_cstr(w, "hello") == 1, "interned again");
	{
		uint64_t ips[3] = { 0xffffffff81000000ull, 0x401000, 0x401100 };

		CHECK(trace_writer__intern_stack(w, ips, 1, 2) == 1, "stack id");
		CHECK(trace_writer__intern_stack(w, ips, 1, 2) == 1, "stack interned");
		CHECK(trace_writer__intern_stack(w, ips, 0, 3) == 2, "split is identity");
	}
	CHECK(trace_writer__close(w) == 0, "close");
	len = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)len);
	CHECK(pread(fd, buf, (size_t)len, 0) == len, "read back");
	close(fd);
	*size = (size_t)len;
	return buf;
}

static void test_roundtrip(int no_compress)
{
	size_t size;
	uint8_t *buf = write_trace(&size, no_compress, 0, 0);
	char err[200];
	struct trace_reader *r = trace_reader__open_mem(buf, size, err, sizeof(err));
	struct trace_record rec;
	int i = 0, strings = 0, stacks = 0;

	CHECK(r != NULL, "open: %s", err);
	while (trace_reader__next(r, &rec)) {
		if (rec.type == XPU_REC_STRING) {
			struct xpu_rec_string s;
			uint32_t tail;
			const char *p = trace_record__get(&rec, &s, sizeof(s), &tail);

			CHECK(tail >= s.len, "string tail");
			CHECK(s.id == 1 ? !memcmp(p, "hello", 5) : !memcmp(p, "world", 5),
			      "string %u", s.id);
			strings++;
			continue;
		}
		if (rec.type == XPU_REC_STACK) {
			struct xpu_rec_stack s;
			uint32_t tail;
			const uint64_t *ips = trace_record__get(&rec, &s, sizeof(s), &tail);

			CHECK(tail >= (s.nr_kernel + s.nr_user) * 8u, "stack tail");
			CHECK(ips[2] == 0x401100, "stack ip");
			stacks++;
			continue;
		}
		CHECK(i < nexpected, "extra record");
		if (i >= nexpected)
			break;
		CHECK(rec.type == expected[i].type, "type %u != %u", rec.type, expected[i].type);
		CHECK(rec.body_size >= expected[i].size, "size of %s",
		      xpu_record_type_name(rec.type));
		CHECK(!memcmp(rec.body, expected[i].body, expected[i].size), "body of %s",
		      xpu_record_type_name(rec.type));
		CHECK(strcmp(xpu_record_type_name(rec.type), "unknown"), "name of %u", rec.type);
		i++;
	}
	CHECK(i == nexpected, "records %d of %d", i, nexpected);
	CHECK(strings == 2 && stacks == 2, "defs %d %d", strings, stacks);
	CHECK(trace_reader__status(r)->end == TRACE_END_CLEAN, "clean end: %s",
	      trace_reader__status(r)->reason);
	trace_reader__close(r);
	free(buf);
}

static uint64_t count_records(const uint8_t *buf, size_t size, enum trace_reader_end *end,
			      uint64_t *frames)
{
	char err[200];
	struct trace_reader *r = trace_reader__open_mem(buf, size, err, sizeof(err));
	struct trace_record rec;
	uint64_t n = 0;

	if (!r) {
		*end = TRACE_END_NONE;
		*frames = 0;
		return 0;
	}
	while (trace_reader__next(r, &rec))
		n++;
	*end = trace_reader__status(r)->end;
	*frames = trace_reader__status(r)->frames_ok;
	trace_reader__close(r);
	return n;
}

/* Frame boundaries of a file, to know how many records a cut must still give. */
static int frame_ends(const uint8_t *buf, size_t size, size_t *ends, uint64_t *cum, int max)
{
	size_t pos = sizeof(struct xpu_file_header);
	uint64_t total = 0;
	int n = 0;

	while (n < max && pos + sizeof(struct xpu_frame_header) <= size) {
		struct xpu_frame_header fh;

		memcpy(&fh, buf + pos, sizeof(fh));
		if (memcmp(fh.magic, XPU_FRAME_MAGIC, 4))
			break;
		pos += sizeof(fh) + fh.comp_size;
		total += fh.record_count;
		ends[n] = pos;
		cum[n] = total;
		n++;
	}
	return n;
}

/* How a cut at byte cut must end: nothing yet, the trailer gone, or a truncation. */
static enum trace_reader_end cut_end(size_t cut, const size_t *ends, int nframes)
{
	if (cut < sizeof(struct xpu_file_header))
		return TRACE_END_NONE;	/* refused: no reader at all */
	if (cut == sizeof(struct xpu_file_header))
		return TRACE_END_NO_TRAILER;
	for (int k = 0; k < nframes; k++) {
		if (ends[k] == cut)
			return TRACE_END_NO_TRAILER;
	}
	return TRACE_END_TRUNCATED;
}

static void test_truncation(int no_compress)
{
	size_t size, ends[64];
	uint64_t cum[64];
	uint8_t *buf = write_trace(&size, no_compress, 0, 1);
	int nframes = frame_ends(buf, size, ends, cum, 64);
	int bad = 0, bad_end = 0;

	CHECK(nframes > 5, "several frames (%d)", nframes);
	for (size_t cut = 0; cut < size; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		enum trace_reader_end end;
		uint64_t frames, want = 0, got;

		memcpy(copy, buf, cut);
		got = count_records(copy, cut, &end, &frames);
		for (int k = 0; k < nframes; k++)
			if (ends[k] <= cut)
				want = cum[k];
		if (cut < sizeof(struct xpu_file_header))
			want = 0;
		if (got != want || end == TRACE_END_CLEAN)
			bad++;
		/* the end of the file inside the last frame or the trailer is no damage */
		if (end != cut_end(cut, ends, nframes)) {
			if (!bad_end)
				fprintf(stderr, "cut at %zu of %zu: end %d\n", cut, size, end);
			bad_end++;
		}
		free(copy);
	}
	CHECK(bad == 0, "%d cut offsets recovered the wrong number of records", bad);
	CHECK(bad_end == 0, "%d cut offsets not called truncated (no trailer at frame ends)",
	      bad_end);
	free(buf);
}

/* Bytes after the last frame that begin neither a frame nor the trailer: corrupt. */
static void test_bad_tail(void)
{
	static const uint8_t tails[][8] = {
		{ 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee },
		{ 'X', 'Q', 0xee, 0xee, 0xee, 0xee, 0xee, 0xee },
		{ 'X', 'F', 'R', 'X', 0xee, 0xee, 0xee, 0xee },
		{ 'X', 'P', 'U', 'E', 'N', 'D', 0, 1 },
	};
	size_t size, ends[64];
	uint64_t cum[64];
	uint8_t *buf = write_trace(&size, 0, 0, 1);
	int nframes = frame_ends(buf, size, ends, cum, 64);

	CHECK(nframes > 1, "frames %d", nframes);
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		size_t len = ends[nframes - 1];
		uint8_t *copy = malloc(len + 10);
		enum trace_reader_end end;
		uint64_t frames;

		memcpy(copy, buf, len);
		memset(copy + len, 0xee, 10);
		memcpy(copy + len, tails[i], sizeof(tails[i]));
		count_records(copy, len + 10, &end, &frames);
		CHECK(end == TRACE_END_CORRUPT, "tail %zu: end %d", i, end);
		free(copy);
	}
	free(buf);
}

static void test_corruption(void)
{
	size_t size;
	uint8_t *buf = write_trace(&size, 0, 0, 1);
	uint64_t frames_full;
	enum trace_reader_end end;
	uint64_t full = count_records(buf, size, &end, &frames_full);
	int undetected = 0;

	CHECK(end == TRACE_END_CLEAN, "clean before corruption");
	for (size_t off = 0; off < size; off++) {
		uint64_t frames;

		buf[off] ^= 0x5a;
		count_records(buf, size, &end, &frames);
		/* Either the file is refused, or reading stops early and says why. */
		if (end == TRACE_END_CLEAN)
			undetected++;
		buf[off] ^= 0x5a;
	}
	CHECK(undetected == 0, "%d single-byte corruptions went undetected", undetected);
	CHECK(full > 20, "records %llu", (unsigned long long)full);
	free(buf);
}

static void test_forward_compat(void)
{
	/* A newer writer appends fields: the reader cuts; an older one wrote fewer: zero-fill. */
	struct trace_record rec = { .type = XPU_REC_CPU_SAMPLE };
	uint8_t longer[sizeof(struct xpu_rec_cpu_sample) + 16], shorter[8];
	struct xpu_rec_cpu_sample s;
	uint32_t tail;

	fill(longer, sizeof(longer), 1);
	rec.body = longer;
	rec.body_size = sizeof(longer);
	CHECK(trace_record__get(&rec, &s, sizeof(s), &tail) != NULL && tail == 16, "longer");
	fill(shorter, sizeof(shorter), 9);
	rec.body = shorter;
	rec.body_size = sizeof(shorter);
	trace_record__get(&rec, &s, sizeof(s), &tail);
	CHECK(s.pid == 0 && s.stack_id == 0 && tail == 0, "shorter zero-filled");
	CHECK(!memcmp(&s.ts_ns, shorter, 8), "shorter kept");
}

static void test_bad_headers(void)
{
	char err[200];
	struct xpu_file_header h = {0};

	CHECK(!trace_reader__open_mem("short", 5, err, sizeof(err)), "short file");
	CHECK(strstr(err, "not an xpu trace") != NULL, "message: %s", err);
	memcpy(h.magic, XPU_FILE_MAGIC, 8);
	h.major = 2;
	h.header_size = sizeof(h);
	h.hdr_crc32c = crc32c(0, &h, offsetof(struct xpu_file_header, hdr_crc32c));
	CHECK(!trace_reader__open_mem(&h, sizeof(h), err, sizeof(err)), "newer major");
	CHECK(strstr(err, "version 2") != NULL, "message: %s", err);
	h.major = 1;
	h.minor = 7;
	h.hdr_crc32c = crc32c(0, &h, offsetof(struct xpu_file_header, hdr_crc32c));
	{
		struct trace_reader *r = trace_reader__open_mem(&h, sizeof(h), err, sizeof(err));
		struct trace_record rec;

		CHECK(r != NULL, "a newer minor is read");
		CHECK(trace_reader__next(r, &rec) == 0, "no records");
		CHECK(trace_reader__status(r)->end == TRACE_END_NO_TRAILER, "no trailer");
		trace_reader__close(r);
	}
	CHECK(!trace_reader__open("/nonexistent/x.xpu", err, sizeof(err)), "missing file");
	CHECK(strstr(err, "cannot open") != NULL, "message: %s", err);
}

/*
 * The table of record types: every type of the enum has a row whose fields lie inside its
 * struct, names are unique, XPU_RECORD_FIXED_MAX is the largest struct; each STATS counter
 * has a name of its own.
 */
static void test_record_table(void)
{
	uint32_t largest = 0;
	uint16_t t, u;

	for (t = 0; t <= XPU_REC_TYPE_MAX_KNOWN + 60; t++) {
		const struct xpu_record_desc *d = xpu_record_desc(t);
		const struct xpu_record_field *f;

		if (!d) {
			/* 33..39 were never used */
			CHECK(t < 1 || t > XPU_REC_TYPE_MAX_KNOWN ||
			      (t > XPU_REC_PROCESS_ENV && t < XPU_REC_OFF_CPU), "type %u has no row", t);
			CHECK(!xpu_record_min_body(t) && !strcmp(xpu_record_type_name(t), "unknown"),
			      "type %u has no row", t);
			continue;
		}
		CHECK(t >= 1 && t <= XPU_REC_TYPE_MAX_KNOWN, "row %u past the known types", t);
		CHECK(d->min_body && d->min_body <= d->size && d->size <= XPU_RECORD_FIXED_MAX,
		      "%s: min %u size %u", d->name, d->min_body, d->size);
		if (d->size > largest)
			largest = d->size;
		for (u = 1; u < t; u++)
			CHECK(!xpu_record_desc(u) || strcmp(xpu_record_desc(u)->name, d->name),
			      "%s named twice", d->name);
		xpu_record_for_each_field(f, d) {
			uint32_t width = f->kind == XPU_FIELD_TS ? 8 : 4;

			CHECK(f->offset % width == 0 && f->offset + width <= d->size,
			      "%s: field at %u", d->name, f->offset);
			CHECK(!f->defines || f == d->fields, "%s: the id it defines comes first",
			      d->name);
		}
		CHECK(!d->from_cupti || t == XPU_REC_STRING || xpu_record_field(d, XPU_FIELD_PID),
		      "%s: a client's record has a pid to overwrite", d->name);
	}
	CHECK(largest == XPU_RECORD_FIXED_MAX, "largest struct %u", largest);
	CHECK(xpu_record_min_body(XPU_REC_CPU_SAMPLE) == 24, "1.2 samples stay valid");
	{
		uint32_t offs[16];

		CHECK(xpu_record_string_fields(XPU_REC_SESSION, offs, 16) == 6 &&
		      offs[0] == offsetof(struct xpu_rec_session, host_str), "session strings");
		CHECK(xpu_record_string_fields(XPU_REC_STRING, offs, 16) == 0,
		      "a STRING defines, it does not refer");
		CHECK(xpu_record_string_fields(XPU_REC_NVTX, offs, 1) == 1, "max respected");
	}
	CHECK(!strcmp(xpu_stat_name(XPU_STAT_CFI_SCAN), "cfi_scanned_frames"), "stat name");
	CHECK(!strcmp(xpu_stat_name(0), "unknown") && !strcmp(xpu_stat_name(55), "unknown") &&
	      !strcmp(xpu_stat_name(1u << 20), "unknown"), "unknown stat ids");
	for (t = 1; t < 256; t++) {
		for (u = 1; u < t && strcmp(xpu_stat_name(t), "unknown"); u++)
			CHECK(strcmp(xpu_stat_name(t), xpu_stat_name(u)), "stat %u named as %u", t, u);
	}
}

int main(void)
{
	test_roundtrip(0);
	test_roundtrip(1);
	test_truncation(0);
	test_truncation(1);
	test_corruption();
	test_bad_tail();
	test_forward_compat();
	test_bad_headers();
	test_record_table();
	return unit_finish();
}
