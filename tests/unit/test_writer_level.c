// SPDX-License-Identifier: MIT
/*
 * The writer's compression follows its backlog (record/writer_thread.c): the level for each
 * backlog, with the hysteresis that keeps it from flapping; and a trace whose frames were
 * written at zstd's fast level reads back whole, those frames counted (writer_frames_fast).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_reader.h"
#include "trace_writer.h"
#include "unit.h"
#include "writer_thread.h"

#define MAX (64u << 20)

static void policy(void)
{
	const int fast = XPU_WRITER_LEVEL_FASTEST;

	CHECK(writer_thread__level_for_backlog(0, MAX, 0) == 0, "empty: the trace's level");
	CHECK(writer_thread__level_for_backlog(MAX / 16, MAX, 0) == 0, "a sixteenth: unchanged");
	CHECK(writer_thread__level_for_backlog(MAX / 8, MAX, 0) == 1, "an eighth: level 1");
	CHECK(writer_thread__level_for_backlog(MAX / 4, MAX, 0) == fast, "a quarter: the fastest");
	CHECK(writer_thread__level_for_backlog(MAX, MAX, 1) == fast, "full: the fastest");
	/* hysteresis: a faster level stays until the backlog is under a sixteenth */
	CHECK(writer_thread__level_for_backlog(MAX / 8, MAX, fast) == fast, "an eighth keeps -5");
	CHECK(writer_thread__level_for_backlog(MAX / 16, MAX, 1) == 1, "a sixteenth keeps level 1");
	CHECK(writer_thread__level_for_backlog(MAX / 16, MAX, fast) == fast, "a sixteenth keeps -5");
	CHECK(writer_thread__level_for_backlog(MAX / 16 - 1, MAX, fast) == 0, "under 1/16: back");
	CHECK(writer_thread__level_for_backlog(MAX / 16 - 1, MAX, 1) == 0, "under 1/16: back from 1");
}

/* frames of 64 records of 4 KiB (a stack copy's size) each, at the writer's level now */
static void write_frames(struct trace_writer *w, int frames, uint32_t *next)
{
	static uint8_t body[4096];
	int f, i;

	for (f = 0; f < frames; f++) {
		for (i = 0; i < 64; i++) {
			memset(body, (int)(*next & 0xff), sizeof(body));
			memcpy(body, next, sizeof(*next));
			(*next)++;
			CHECK(!trace_writer__append(w, 200, body, sizeof(body), *next), "append");
		}
		CHECK(!trace_writer__flush(w), "flush");
	}
}

/* A writer of a new temporary trace (its name into path) at the given zstd level; NULL if not. */
static struct trace_writer *open_writer(char *path, int level)
{
	struct trace_writer_opts wo = { .zstd_level = level };
	struct trace_writer *w;
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return NULL;
	w = trace_writer__open_fd(fd, &wo);
	CHECK(w, "writer");
	return w;
}

static void fast_frames(void)
{
	char path[] = "/tmp/xpu-test-writer-level-XXXXXX", err[256];
	struct trace_writer_stats st;
	struct trace_writer *w = open_writer(path, 0);
	struct trace_reader *r;
	struct trace_record rec;
	uint32_t next = 0, seen = 0, bad = 0;

	if (!w)
		return;
	write_frames(w, 2, &next);			/* level 3 */
	trace_writer__set_level(w, XPU_WRITER_LEVEL_FASTEST);
	write_frames(w, 3, &next);
	trace_writer__set_level(w, 1);
	write_frames(w, 1, &next);
	trace_writer__set_level(w, 0);			/* the trace's own again */
	write_frames(w, 2, &next);
	trace_writer__get_stats(w, &st);
	CHECK(st.frames_fast == 4, "frames_fast %llu, want the 4 written below level 3",
	      (unsigned long long)st.frames_fast);
	CHECK(!trace_writer__close(w), "close");
	r = trace_reader__open(path, err, sizeof(err));
	CHECK(r, "reader: %s", err);
	while (r && trace_reader__next(r, &rec) == 1) {
		uint32_t id;

		if (rec.type != 200)
			continue;
		trace_record__get(&rec, &id, sizeof(id), NULL);
		if (id != seen)
			bad++;
		seen++;
	}
	CHECK(seen == next && !bad, "read back %u records (%u out of order), want %u", seen, bad, next);
	CHECK(r && trace_reader__status(r)->end == TRACE_END_CLEAN, "the trace ends clean");
	if (r)
		trace_reader__close(r);
	unlink(path);
}

/* a trace already at a fast level is never made slower by the backlog's level 1 */
static void never_slower(void)
{
	char path[] = "/tmp/xpu-test-writer-level2-XXXXXX";
	struct trace_writer_stats st;
	struct trace_writer *w = open_writer(path, -2);
	uint32_t next = 0;

	if (!w)
		return;
	trace_writer__set_level(w, 1);
	write_frames(w, 1, &next);
	trace_writer__get_stats(w, &st);
	CHECK(st.frames_fast == 0, "level 1 on a level -2 trace: %llu fast frames, want 0 (kept at -2)",
	      (unsigned long long)st.frames_fast);
	trace_writer__set_level(w, XPU_WRITER_LEVEL_FASTEST);
	write_frames(w, 1, &next);
	trace_writer__get_stats(w, &st);
	CHECK(st.frames_fast == 1, "level -5 on a level -2 trace: %llu fast frames, want 1",
	      (unsigned long long)st.frames_fast);
	CHECK(!trace_writer__close(w), "close");
	unlink(path);
}

int main(void)
{
	policy();
	fast_frames();
	never_slower();
	return unit_finish();
}
