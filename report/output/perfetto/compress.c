// SPDX-License-Identifier: MIT
/*
 * The perfetto output in compressed chunks. A Trace's packets are mostly repeats (a replayed
 * CUDA graph's kernels, a loop's launches and samples): unencoded they are 3 to 10 times the
 * zstd-compressed trace they come from. Perfetto's TracePacket.compressed_packets holds a zlib
 * stream of a Trace (packets as Trace.packet fields), which its trace processor and UI read as
 * if the packets were in the file; the packets' sequence and interning are unchanged. Chunks
 * of PF_CHUNK_BYTES keep the memory bounded. zlib's fastest level: a long trace's samples
 * compress little (10M samples: 266 MB to 76 MB at level 6), and level 6 spent several times
 * the rest of the output's time on them; level 1 loses about a tenth of the gain elsewhere
 * (torch-python.xpu: 0.42x the trace against 0.37x). Without zlib, or when compressing fails, or with
 * XPU_REPORT_PERFETTO_COMPRESS=0, the packets are written as they are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef XPU_HAVE_ZLIB
#include <zlib.h>
#endif

#include "output/perfetto/perfetto.h"

void pf__chunk_init(struct perfetto *pf)
{
#ifdef XPU_HAVE_ZLIB
	const char *env = getenv("XPU_REPORT_PERFETTO_COMPRESS");

	if (!env || strcmp(env, "0"))
		pf->chunk = malloc(PF_CHUNK_BYTES);
#endif
	pf->chunk_n = 0;
}

void pf__chunk_free(struct perfetto *pf)
{
	free(pf->chunk);
	pf->chunk = NULL;
	pf->chunk_n = 0;
}

static int write_raw(struct perfetto *pf, const uint8_t *b, size_t n)
{
	pf->bytes += fwrite(b, 1, n, pf->out);
	return out__failed(pf->out) ? -EIO : 0;
}

size_t pf__varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

int pf__chunk_flush(struct perfetto *pf)
{
#ifdef XPU_HAVE_ZLIB
	uLongf zn;
	uint8_t *z, hdr[32], zlen[10];
	size_t h = 0;
	int err;

	if (!pf->chunk || !pf->chunk_n)
		return 0;
	zn = compressBound(pf->chunk_n);
	z = malloc(zn);
	if (!z || compress2(z, &zn, pf->chunk, pf->chunk_n, 1) != Z_OK) {
		/* the packets as they are, and the rest too: never lost for want of memory */
		free(z);
		err = write_raw(pf, pf->chunk, pf->chunk_n);
		pf__chunk_free(pf);
		return err;
	}
	/* Trace.packet { compressed_packets: z }: its length is the inner tag's, zn's, zn */
	hdr[h++] = TRACE_PACKET << 3 | 2;
	h += pf__varint(hdr + h, pf__varint(zlen, PKT_COMPRESSED_PACKETS << 3 | 2) +
				     pf__varint(zlen, (uint64_t)zn) + zn);
	h += pf__varint(hdr + h, PKT_COMPRESSED_PACKETS << 3 | 2);
	h += pf__varint(hdr + h, (uint64_t)zn);
	pf->chunk_n = 0;
	err = write_raw(pf, hdr, h);
	if (!err)
		err = write_raw(pf, z, zn);
	free(z);
	return err;
#else
	(void)pf;
	return 0;
#endif
}

int pf__write_bytes(struct perfetto *pf, const uint8_t *hdr, size_t hn, const uint8_t *b, size_t n)
{
	int err;

	if (pf->chunk && pf->chunk_n + hn + n > PF_CHUNK_BYTES) {
		err = pf__chunk_flush(pf);
		if (err)
			return err;
	}
	/* no chunk, or a packet bigger than one: written as it is, after the chunk before it */
	if (!pf->chunk || hn + n > PF_CHUNK_BYTES) {
		err = write_raw(pf, hdr, hn);
		return err ? err : write_raw(pf, b, n);
	}
	memcpy(pf->chunk + pf->chunk_n, hdr, hn);
	memcpy(pf->chunk + pf->chunk_n + hn, b, n);
	pf->chunk_n += hn + n;
	return 0;
}
