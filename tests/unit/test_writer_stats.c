// SPDX-License-Identifier: MIT
/*
 * record/writer_thread.c: the STATS record holds every counter it is given, the session's and
 * the driver tracer's, then the writer's own two. It cut what it was given at 62, so with
 * every mode on (67 counters) the last five were lost without a word; its room is now the
 * table's (XPU_STATS_MAX, common/xpu_stats.def).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_reader.h"
#include "trace_writer.h"
#include "unit.h"
#include "writer_thread.h"

/* The ids of the STATS record in path, in file order; returns how many (-1: none). */
static int read_stats(const char *path, uint32_t *ids, int max)
{
	char err[256];
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	struct trace_record rec;
	int n = -1;

	if (!r)
		return -1;
	while (trace_reader__next(r, &rec)) {
		struct xpu_rec_stats hdr;
		const struct xpu_stat_entry *e;
		uint32_t tail_size, i;

		if (rec.type != XPU_REC_STATS)
			continue;
		e = trace_record__get(&rec, &hdr, sizeof(hdr), &tail_size);
		for (i = 0, n = 0; i < hdr.count && (i + 1) * sizeof(*e) <= tail_size; i++)
			if (n < max)
				ids[n++] = e[i].id;
	}
	trace_reader__close(r);
	return n;
}

int main(void)
{
	char path[] = "/tmp/xpu-test-writer-stats-XXXXXX";
	struct xpu_stat_entry extra[XPU_STATS_MAX];
	uint32_t ids[2 * XPU_STATS_MAX];
	struct trace_writer_opts wo = { 0 };
	struct trace_writer *w;
	struct writer_thread *wt;
	unsigned int given = XPU_STATS_MAX - 4, i;	/* all but the writer's three and NONE's */
	int fd = mkstemp(path), n;

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return unit_finish();
	w = trace_writer__open_fd(fd, &wo);
	wt = w ? writer_thread__start(w, 1 << 20) : NULL;
	CHECK(wt, "writer thread");
	if (!wt)
		return unit_finish();
	for (i = 0; i < given; i++)
		extra[i] = (struct xpu_stat_entry){ .id = 1000 + i, .value = i };
	CHECK(!writer_thread__finish(wt, extra, given, NULL), "finish");
	n = read_stats(path, ids, 2 * XPU_STATS_MAX);
	CHECK(n == (int)given + 3, "STATS entries %d, want %u given and the writer's 3", n, given);
	for (i = 0; n > 0 && i < given && i < (unsigned int)n; i++)
		CHECK(ids[i] == 1000 + i, "entry %u: id %u, want %u", i, ids[i], 1000 + i);
	CHECK(n >= 3 && ids[n - 3] == XPU_STAT_WRITER_BYTES_RAW &&
	      ids[n - 2] == XPU_STAT_WRITER_BYTES_COMPRESSED &&
	      ids[n - 1] == XPU_STAT_WRITER_FRAMES_FAST, "the writer's own three last");
	unlink(path);
	return unit_finish();
}
