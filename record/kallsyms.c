// SPDX-License-Identifier: MIT
/*
 * Kernel symbols are captured at record time because the analysis machine runs another
 * kernel. Chunks end on a line boundary so each one parses on its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "writer_thread.h"

#define KSYMS_CHUNK_BYTES (256u << 10)

static int submit_chunk(struct writer_thread *wt, uint32_t seq, const char *buf, size_t len)
{
	struct xpu_rec_ksyms k = { .seq = seq, .len = (uint32_t)len };
	struct wt_rec r = {
		.type = XPU_REC_KSYMS,
		.body = &k,
		.body_size = sizeof(k),
		.tail = buf,
		.tail_size = (uint32_t)len,
		.must_keep = true,
	};

	return writer_thread__submit(wt, &r);
}

int kallsyms__snapshot(struct writer_thread *wt)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char *buf, line[512];
	size_t len = 0;
	uint32_t seq = 0;
	int err = 0;

	if (!f)
		return -errno;
	buf = calloc(1, KSYMS_CHUNK_BYTES + sizeof(line));
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (len + n > KSYMS_CHUNK_BYTES) {
			err = submit_chunk(wt, seq++, buf, len);
			if (err)
				goto out;
			len = 0;
		}
		memcpy(buf + len, line, n);
		len += n;
	}
	if (len) {
		err = submit_chunk(wt, seq++, buf, len);
	}
out:
	free(buf);
	fclose(f);
	return err ? err : (int)seq;
}
