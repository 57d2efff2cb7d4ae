// SPDX-License-Identifier: MIT
/*
 * Unit tests of the pack keys of files without build-id (report/sym/xpa_key.c, the lookup in
 * report/sym/xpa.c; format-spec/ARCHIVE.md 2.6): a record is keyed by build-id when it has
 * one, else by its recorded size, mtime and path, and a NAMES_BY_FILE entry is used only for a
 * record of that very size, mtime and path. A pack comes from another machine, so the entries
 * here are written as a hostile one could: a matching key under another path, many entries
 * of one key, a damaged payload, a key of the other content.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "crc32c.h"
#include "sym/xpa.h"
#include "sym/xpa_key.h"
#include "sym/xpa_pack.h"
#include "unit.h"

static struct tr_dso rec_of(const char *path, uint64_t size, uint64_t mtime)
{
	struct tr_dso d = { .path = path };

	d.rec.kind = XPU_DSO_ELF;
	d.rec.size_bytes = size;
	d.rec.mtime_ns = mtime;
	return d;
}

static void keys(void)
{
	static char long_path[XPA_KEY_PATH_MAX + 2];
	struct tr_dso a = rec_of("/opt/a/libx.so", 1000, 5), b;
	struct xpa_file_key ka, kb;

	CHECK(xpa_key__of(&a, &ka), "a file without build-id, with a size, has a key");
	CHECK(ka.content == XPA_CONTENT_NAMES_BY_FILE && ka.len == 20 && ka.path == a.path &&
	      ka.path_len == strlen(a.path), "its key is by file: content %u len %u", ka.content,
	      ka.len);
	/* ARCHIVE.md 2.6: size, mtime, CRC-32C of the path, little-endian */
	CHECK(ka.key[0] == 0xe8 && ka.key[1] == 3 && ka.key[8] == 5 && ka.key[16] ==
	      (uint8_t)crc32c(0, a.path, strlen(a.path)), "the key's layout");
	b = a;
	b.rec.mtime_ns++;
	CHECK(xpa_key__of(&b, &kb) && memcmp(ka.key, kb.key, 20), "another mtime, another key");
	b = a;
	b.rec.size_bytes++;
	CHECK(xpa_key__of(&b, &kb) && memcmp(ka.key, kb.key, 20), "another size, another key");
	b = a;
	b.path = "/opt/a/liby.so";
	CHECK(xpa_key__of(&b, &kb) && memcmp(ka.key, kb.key, 20), "another path, another key");
	b = a;
	b.rec.size_bytes = 0;
	CHECK(!xpa_key__of(&b, &kb), "no size recorded: no key (nothing tells the file apart)");
	b = a;
	b.path = "";
	CHECK(!xpa_key__of(&b, &kb), "no path: no key");
	memset(long_path, 'p', sizeof(long_path) - 1);
	long_path[0] = '/';
	b.path = long_path;
	CHECK(!xpa_key__of(&b, &kb), "a path over %d bytes: no key", XPA_KEY_PATH_MAX);
	long_path[XPA_KEY_PATH_MAX] = '\0';
	CHECK(xpa_key__of(&b, &kb) && kb.path_len == XPA_KEY_PATH_MAX, "a path of %d bytes: a key",
	      XPA_KEY_PATH_MAX);
	b = a;
	b.rec.kind = XPU_DSO_ANON;
	CHECK(!xpa_key__of(&b, &kb), "not an ELF file: no key");
	b = a;
	b.rec.build_id_len = 4;
	memcpy(b.rec.build_id, "\x01\x02\x03\x04", 4);
	CHECK(xpa_key__of(&b, &kb) && kb.content == XPA_CONTENT_NAMES && kb.len == 4 &&
	      !memcmp(kb.key, "\x01\x02\x03\x04", 4) && !kb.path, "with a build-id: keyed by it");
}

/* ---- an archive written here, entry by entry ------------------------------------------------ */

static FILE *arc;
static uint32_t nentries;

/* NAMES of one address, 0x10, named fname */
static void *names_of(const char *fname, size_t *size)
{
	struct xpa_names_builder b = { 0 };
	const struct xpa_frame_in f[] = { { fname, NULL, 0, XPA_FRAME_OUTER | XPA_FRAME_NAMED } };
	void *buf = NULL;

	if (xpa_names__add(&b, 0x10, f, 1, f, 1) || xpa_names__finish(&b, &buf, size))
		buf = NULL;
	xpa_names__free(&b);
	return buf;
}

static void pad8(size_t n)
{
	static const uint8_t zeros[8];

	fwrite(zeros, 1, xpa_pad8(n) - n, arc);
}

static void put(uint8_t content, const uint8_t *key, uint8_t key_len, const char *path,
		const char *fname, bool bad_crc)
{
	struct xpa_entry e = { .magic = XPA_ENTRY_MAGIC, .entry_size = sizeof(e),
			       .content = content, .build_id_len = key_len };
	size_t raw_len = 0, cap, n;
	void *raw = names_of(fname, &raw_len);
	uint8_t *comp;

	cap = ZSTD_compressBound(raw_len);
	comp = malloc(cap);
	if (!raw || !comp)
		abort();
	n = ZSTD_compress(comp, cap, raw, raw_len, 1);
	if (ZSTD_isError(n))
		abort();
	memcpy(e.build_id, key, key_len);
	e.path_len = (uint16_t)strlen(path);
	e.raw_size = raw_len;
	e.comp_size = n;
	e.payload_crc32c = crc32c(0, comp, n) ^ bad_crc;
	e.hdr_crc32c = crc32c(0, &e, 60);
	fwrite(&e, 1, sizeof(e), arc);
	fwrite(path, 1, e.path_len, arc);
	pad8(e.path_len);
	fwrite(comp, 1, n, arc);
	pad8(n);
	nentries++;
	free(raw);
	free(comp);
}

static void put_for(const struct tr_dso *d, uint8_t content, const char *path, const char *fname,
		    bool bad_crc)
{
	struct xpa_file_key k;

	if (!xpa_key__of(d, &k))
		abort();
	put(content, k.key, k.len, path, fname, bad_crc);
}

/* The name the pack gives address 0x10 of d's file, or NULL. */
static const char *name_in(struct xpa *a, const struct tr_dso *d, struct xpa_budget *budget)
{
	const struct xpa_names *n;
	const struct xpa_names_addr *x;
	struct xpa_file_key k;

	if (!xpa_key__of(d, &k))
		return NULL;
	n = xpa__names(a, &k, budget);
	x = n ? xpa_names__find(n, 0x10) : NULL;
	return x ? xpa_names__str(n, n->frames[x->first].name) : NULL;
}

static void lookups(void)
{
	char dir[] = "/tmp/xpu-test-xpa-key.XXXXXX", trace[64], path[80];
	struct tr_dso a = rec_of("/opt/a/libx.so", 1000, 5), b = rec_of("/opt/b/libx.so", 2000, 6),
		      c = rec_of("/opt/c/libx.so", 3000, 7), d = rec_of("/opt/d/libx.so", 4000, 8),
		      g = rec_of("/opt/g/libx.so", 5000, 9), h = rec_of("/opt/h/libx.so", 6000, 10),
		      x;
	struct xpa_header hdr = { .magic = XPA_MAGIC, .major = 1, .minor = XPA_MINOR,
				  .header_size = sizeof(hdr) };
	struct xpa_budget budget = { 0 };
	struct xpa *pack = NULL;
	const char *got;
	int i;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(trace, sizeof(trace), "%s/t.xpu", dir);
	snprintf(path, sizeof(path), "%s.xpa", trace);
	arc = fopen(path, "w");
	if (!arc) {
		CHECK(0, "cannot write %s", path);
		return;
	}
	fwrite(&hdr, 1, sizeof(hdr), arc);
	put_for(&a, XPA_CONTENT_NAMES_BY_FILE, a.path, "a_func", false);
	/* b's key, another path: another file's entry (a CRC shared by two paths, or forged) */
	put_for(&b, XPA_CONTENT_NAMES_BY_FILE, "/opt/b/liby.so", "forged_b", false);
	/* c's key 8 times under other paths before its own: past the bound on paths read */
	for (i = 0; i < 8; i++)
		put_for(&c, XPA_CONTENT_NAMES_BY_FILE, "/opt/c/other.so", "forged_c", false);
	put_for(&c, XPA_CONTENT_NAMES_BY_FILE, c.path, "c_func", false);
	/* d's: 2 forged, then its own, within the bound */
	for (i = 0; i < 2; i++)
		put_for(&d, XPA_CONTENT_NAMES_BY_FILE, "/opt/d/other.so", "forged_d", false);
	put_for(&d, XPA_CONTENT_NAMES_BY_FILE, d.path, "d_func", false);
	/* g's payload damaged; h's under the build-id content with h's identity as the key */
	put_for(&g, XPA_CONTENT_NAMES_BY_FILE, g.path, "g_func", true);
	put_for(&h, XPA_CONTENT_NAMES, h.path, "h_func", false);
	hdr.entry_count = nentries;
	hdr.hdr_crc32c = crc32c(0, &hdr, 28);
	if (fseek(arc, 0, SEEK_SET) || fwrite(&hdr, 1, sizeof(hdr), arc) != sizeof(hdr) ||
	    fclose(arc)) {
		CHECK(0, "writing %s", path);
		return;
	}
	CHECK(!xpa__open_for_trace(&pack, trace) && pack, "the archive opens");
	if (!pack)
		return;
	got = name_in(pack, &a, &budget);
	CHECK(got && !strcmp(got, "a_func"), "a's entry names a's address: %s", got ? got : "NULL");
	x = a;
	x.rec.mtime_ns++;
	CHECK(!name_in(pack, &x, &budget), "a file at a's path, another mtime: not a's entry");
	x = a;
	x.rec.size_bytes++;
	CHECK(!name_in(pack, &x, &budget), "a file at a's path, another size: not a's entry");
	x = a;
	x.path = "/opt/a/libx.so.1";
	CHECK(!name_in(pack, &x, &budget), "another path, a's size and mtime: not a's entry");
	x = a;
	x.rec.build_id_len = 20;
	{
		struct xpa_file_key k;

		xpa_key__of(&a, &k);
		memcpy(x.rec.build_id, k.key, 20);
	}
	CHECK(!name_in(pack, &x, &budget), "a build-id equal to a's key: not a by-file entry");
	got = name_in(pack, &b, &budget);
	CHECK(!got, "b's key under another path: not used (%s)", got ? got : "NULL");
	got = name_in(pack, &c, &budget);
	CHECK(!got, "c's entry past 8 of its key: not looked for (%s)", got ? got : "NULL");
	got = name_in(pack, &d, &budget);
	CHECK(got && !strcmp(got, "d_func"), "d's entry after 2 forged ones: %s", got ? got : "NULL");
	CHECK(!name_in(pack, &g, &budget), "a damaged entry: not used");
	CHECK(!name_in(pack, &h, &budget), "h's identity under the build-id content: not used");
	/* a second lookup reads the entry decompressed once */
	got = name_in(pack, &a, &budget);
	CHECK(got && !strcmp(got, "a_func"), "a again: %s", got ? got : "NULL");
	xpa__close(pack);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	keys();
	lookups();
	return unit_finish();
}
