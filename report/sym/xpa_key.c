// SPDX-License-Identifier: MIT
/* Pack keys of DSO records (see xpa_key.h). */
#include <string.h>

#include "crc32c.h"
#include "sym/xpa.h"
#include "sym/xpa_key.h"

static void put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

bool xpa_key__of(const struct tr_dso *d, struct xpa_file_key *k)
{
	size_t n;

	memset(k, 0, sizeof(*k));
	if (d->rec.kind != XPU_DSO_ELF)
		return false;
	if (d->rec.build_id_len) {
		k->content = XPA_CONTENT_NAMES;
		k->len = d->rec.build_id_len > 20 ? 20 : d->rec.build_id_len;
		memcpy(k->key, d->rec.build_id, k->len);
		return true;
	}
	n = d->path ? strlen(d->path) : 0;
	/*
	 * Size 0: the recorder could not stat the file (FORMAT.md 3.4), so nothing tells it from
	 * whatever is at its path later; a pack must not vouch for that.
	 */
	if (!d->rec.size_bytes || !n || n > XPA_KEY_PATH_MAX)
		return false;
	/* ARCHIVE.md 2.6: u64 size_bytes, u64 mtime_ns, u32 CRC-32C of the path, little-endian */
	k->content = XPA_CONTENT_NAMES_BY_FILE;
	k->len = 20;
	put_le(k->key, d->rec.size_bytes, 8);
	put_le(k->key + 8, d->rec.mtime_ns, 8);
	put_le(k->key + 16, crc32c(0, d->path, n), 4);
	k->path = d->path;
	k->path_len = (uint16_t)n;
	return true;
}
