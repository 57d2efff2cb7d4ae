// SPDX-License-Identifier: MIT
/*
 * Turns a symbol pack (TRACE.xpu.xpa, format-spec/ARCHIVE.md 1.2) into seeds for fuzz_pack:
 * its NAMES, NAMES_BY_FILE and WALKS entries, decompressed, in fuzz_pack's input form (see fuzz_pack.c), each
 * under its own key written out literally, for the trace at index TRACE of fuzz_pack's list.
 * Writes OUT-all (every such entry, one report) and OUT-eN (entry N alone, the format and
 * --inline varying with N). Whole-file entries (content 1) are left out: they are large and
 * not what fuzz_pack is about. A damaged entry ends the reading, as in the report.
 *
 * With an ELF file in place of the pack, writes OUT-elf: the file as a whole-file entry (content
 * 1) under the trace's first build-id, which fuzz_pack extracts and symbolizes with.
 *
 * With by-file after OUT, each NAMES entry becomes a NAMES_BY_FILE one (content 4) under its
 * real key in fuzz_pack, with its path: the names of the file without build-id of fuzz_pack's
 * last trace (their offsets are another file's; the fuzzer moves them).
 *
 * pack2seed PACK.xpa|FILE.so TRACE OUT [by-file]   exit 0: seeds written (maybe none), 1: unreadable
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "crc32c.h"

#define PAD8(n) (((n) + 7) & ~(uint64_t)7)

static int by_file;

struct seed_entry {
	uint8_t content;		/* 2 NAMES, 3 WALKS, 4 NAMES_BY_FILE */
	uint8_t key[20], key_len;
	uint8_t *raw;
	size_t raw_len;
};

/*
 * One entry in fuzz_pack's form: kind (content, key written out; a whole file under the real
 * key at index 0), key, damage 0, u24 size.
 */
static void put_entry(FILE *f, const struct seed_entry *e)
{
	size_t len = e->raw_len > 0xffffff ? 0xffffff : e->raw_len;

	if (e->content == 1) {
		fputc(2, f);
		fputc(0, f);
	} else if (e->content == 2 && by_file) {
		/* kind 3, N 0 (content 4), the real key (mode 0), with its path (bit 4) */
		fputc(3 | 1 << 4, f);
		fputc(0, f);
	} else if (e->content == 4) {
		/* fuzz_pack's kind 3 with N 0 (bits 5-7): content 4 */
		fputc(3 | 1 << 2, f);
		fputc(e->key_len, f);
		fwrite(e->key, 1, e->key_len, f);
	} else {
		fputc((e->content == 2 ? 0 : 1) | 1 << 2, f);
		fputc(e->key_len, f);
		fwrite(e->key, 1, e->key_len, f);
	}
	fputc(0, f);
	fputc(len & 0xff, f);
	fputc(len >> 8 & 0xff, f);
	fputc(len >> 16 & 0xff, f);
	fwrite(e->raw, 1, len, f);
}

static int write_seed(const char *out, const char *suffix, uint8_t ctl0,
		      const struct seed_entry *e, size_t n)
{
	char path[4096];
	FILE *f;
	size_t i;

	snprintf(path, sizeof(path), "%s-%s", out, suffix);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fputc(ctl0, f);
	fputc(0, f);
	for (i = 0; i < n; i++)
		put_entry(f, &e[i]);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct seed_entry ents[64];
	uint8_t hdr[32], *comp = NULL;
	size_t n = 0, i;
	unsigned int trace;
	uint32_t count, header_size;
	uint64_t off;
	FILE *f;
	int rc = 0;

	if (argc != 4 && (argc != 5 || strcmp(argv[4], "by-file"))) {
		fprintf(stderr, "usage: pack2seed PACK.xpa TRACE OUT [by-file]\n");
		return 2;
	}
	by_file = argc == 5;
	trace = (unsigned int)atoi(argv[2]) & 3;
	f = fopen(argv[1], "r");
	if (f && fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr) && !memcmp(hdr, "\177ELF", 4) &&
	    !fseek(f, 0, SEEK_END) && ftell(f) > 0 && ftell(f) <= 0xffffff) {
		struct seed_entry e = { .content = 1, .raw_len = (size_t)ftell(f) };

		e.raw = malloc(e.raw_len);
		if (!e.raw || fseek(f, 0, SEEK_SET) || fread(e.raw, 1, e.raw_len, f) != e.raw_len)
			rc = 1;
		else
			rc = write_seed(argv[3], "elf", (uint8_t)(trace << 4), &e, 1);
		free(e.raw);
		fclose(f);
		return rc;
	}
	if (!f || fseek(f, 0, SEEK_SET) || fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr) ||
	    memcmp(hdr, "XPUARCH\0", 8)) {
		fprintf(stderr, "pack2seed: %s: not an archive\n", argv[1]);
		if (f)
			fclose(f);
		return 1;
	}
	memcpy(&header_size, hdr + 12, 4);
	off = header_size;
	memcpy(&count, hdr + 16, 4);
	for (i = 0; i < count && n < sizeof(ents) / sizeof(ents[0]); i++) {
		uint8_t e[64];
		uint64_t raw_size, comp_size, content_size;
		uint32_t entry_size, crc;
		uint16_t path_len;

		if (fseek(f, (long)off, SEEK_SET) || fread(e, 1, 64, f) != 64 || memcmp(e, "XPAE", 4))
			break;
		memcpy(&entry_size, e + 4, 4);
		memcpy(&path_len, e + 10, 2);
		memcpy(&raw_size, e + 32, 8);
		memcpy(&comp_size, e + 40, 8);
		memcpy(&crc, e + 52, 4);
		off += entry_size + PAD8(path_len);
		if (e[8] > 20 || comp_size > 64u << 20 || raw_size > 64u << 20)
			break;
		if (e[9] != 2 && e[9] != 3 && e[9] != 4) {
			off += PAD8(comp_size);
			continue;
		}
		free(comp);
		comp = malloc(comp_size ? comp_size : 1);
		if (!comp || fseek(f, (long)off, SEEK_SET) ||
		    fread(comp, 1, comp_size, f) != comp_size || crc32c(0, comp, comp_size) != crc)
			break;
		off += PAD8(comp_size);
		content_size = ZSTD_getFrameContentSize(comp, comp_size);
		if (content_size != raw_size)
			break;
		ents[n].content = e[9];
		ents[n].key_len = e[8];
		memcpy(ents[n].key, e + 12, 20);
		ents[n].raw = malloc(raw_size ? raw_size : 1);
		if (!ents[n].raw)
			break;
		ents[n].raw_len = ZSTD_decompress(ents[n].raw, raw_size, comp, comp_size);
		if (ZSTD_isError(ents[n].raw_len) || ents[n].raw_len != raw_size) {
			free(ents[n].raw);
			break;
		}
		n++;
	}
	free(comp);
	fclose(f);
	if (n)
		rc |= write_seed(argv[3], "all", (uint8_t)(trace << 4), ents, n);
	for (i = 0; i < n; i++) {
		char suffix[16];

		/* formats folded, text, pprof, info in turn; --inline every other time round */
		snprintf(suffix, sizeof(suffix), "e%zu", i);
		rc |= write_seed(argv[3], suffix, (uint8_t)(trace << 4 | (i & 3) | ((i >> 2) & 1) << 2),
				 &ents[i], 1);
	}
	for (i = 0; i < n; i++)
		free(ents[i].raw);
	return rc;
}
