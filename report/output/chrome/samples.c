// SPDX-License-Identifier: MIT
/*
 * The chrome output's CPU samples: per traced thread with samples, a sibling track
 * "<name> samples" drawn as a flame chart (consecutive samples sharing a stack prefix merge
 * into one slice per frame, cat cpu). A separate track, because sampled frames do not nest
 * with API call slices.
 */
#include <errno.h>

#include "base/progress.h"
#include "output/chrome/chrome.h"

/*
 * The frames of a sample's stack, root first, as the naming pass named them: never none (a
 * stack without frames is "[no stack]" or "[unknown stack]").
 */
static int sample_frames(struct chrome *c, uint32_t pid, uint64_t ts, uint32_t stack_id,
			 const uint32_t **f, uint32_t *n)
{
	int err = session__stack(c->ses, pid, ts, stack_id, false, f, n);

	return err ? err : *n ? 0 : -EINVAL;
}

/* The open frames of th, those of its last sample. */
static int open_frames(struct chrome *c, const struct thread_track *th, const uint32_t **f)
{
	uint32_t n;
	int err = sample_frames(c, th->pid, th->last_ts, th->last_stack, f, &n);

	/* the same stack, the same frames: named once, by the naming pass */
	return err ? err : n < th->nopen ? -EINVAL : 0;
}

/*
 * Closes the open frames above keep_n at end (f: the open frames). They are written root
 * first: all end together, and a parent that began with its child spans exactly the same time;
 * viewers that nest equal spans in file order (speedscope) then draw the parent below, not
 * upside down. args carry the depth: speedscope tells slices apart by name and args only, and
 * where a closing slice looks like the sibling opening at the same time, it opens that one
 * first and its stack never unwinds (past ~10k levels the import fails); with the depth, no
 * open slice looks like a sibling opening at keep_n (its name differs there, the depth
 * elsewhere).
 */
static void close_frames(struct chrome *c, struct thread_track *th, const uint32_t *f,
			 size_t keep_n, uint64_t end)
{
	size_t k, r = th->nruns;

	if (keep_n >= th->nopen)
		return;
	while (r > 0 && th->runs[r - 1].depth > keep_n)
		r--;
	/* runs[r - 1] holds keep_n: the runs from there on close, the part below keep_n stays */
	for (k = keep_n; k < th->nopen; k++) {
		const struct open_run *run;

		while (r < th->nruns && th->runs[r].depth <= k)
			r++;
		run = &th->runs[r - 1];
		/*
		 * Nothing to draw when the span rounds to 0 on the grid (two samples of the thread
		 * at one instant), and speedscope's importer takes the end of a zero-length slice
		 * before its begin, leaving its stack unbalanced; its samples stay in the parents.
		 */
		if (grid_ns(chrome__realtime(c, end)) <= grid_ns(chrome__realtime(c, run->start)))
			continue;
		chrome__begin(c, 'X', th->pid, SAMPLE_TID_BASE + th->tid, run->start);
		chrome__dur(c, run->start, end);
		chrome__put(c, ",\"cat\":\"cpu\",\"name\":");
		chrome__cstr(c, strpool__str(&c->ses->pool, f[k]));
		chrome__put(c, ",\"args\":{\"samples\":%u,\"depth\":%zu}",
			    th->nsamples - run->samples_before, k);
		chrome__end(c);
	}
	while (th->nruns && th->runs[th->nruns - 1].depth >= keep_n)
		th->nruns--;
	th->nopen = keep_n;
}

/* The sample's frames become the open ones: those past the common prefix k open now. */
static int open_sample(struct thread_track *th, uint32_t k, uint32_t n, uint32_t stack_id,
		       uint64_t ts)
{
	struct open_run run = { k, th->nsamples, ts };

	if (k < n && VEC_PUSH(th->runs, th->nruns, th->runs_cap, run))
		return -ENOMEM;
	th->nopen = n;
	th->nsamples++;
	th->last_stack = stack_id;
	th->last_ts = ts;
	return 0;
}

/*
 * One sample of th: it stands for the period up to the next sample of its thread, or one
 * period when the thread was not seen again within two periods (it slept): frames shared with
 * the previous sample continue, the others close at its time.
 */
static int draw_sample(struct chrome *c, struct thread_track *th,
		       const struct xpu_rec_cpu_sample *s, uint32_t stack_id)
{
	const uint32_t *f, *open;
	uint32_t n, k = 0;
	int err = sample_frames(c, s->pid, s->ts_ns, stack_id, &f, &n);

	if (err)
		return err;
	/* both are the named frames, which stay where they are while outputs run */
	if (th->nopen) {
		err = open_frames(c, th, &open);
		if (err)
			return err;
		if (s->ts_ns - th->last_ts > 2 * c->period_ns)
			close_frames(c, th, open, 0, th->last_ts + c->period_ns);
		for (; k < n && k < th->nopen && open[k] == f[k]; k++)
			;
		close_frames(c, th, open, k, s->ts_ns);
	}
	return open_sample(th, k, n, stack_id, s->ts_ns);
}

int chrome__emit_samples(struct chrome *c)
{
	const struct trace *t = c->t;
	const uint32_t *open;
	size_t i;
	int err;

	for (i = 0; i < t->nsamples; i++) {
		const struct xpu_rec_cpu_sample *s = &t->samples[i];
		struct thread_track *th;

		progress__update("writing samples", i, t->nsamples);
		if (out__failed(c->out))
			return -EIO;
		if (!filter__at(&c->ses->filter, s->pid, s->tid, s->ts_ns))
			continue;
		th = chrome__thread(c, s->pid, s->tid);
		if (!th)
			return -ENOMEM;
		th->has_samples = true;
		err = draw_sample(c, th, s, session__sample_stack(c->ses, i));
		if (err)
			return err;
	}
	for (i = 0; i < c->nth; i++) {
		struct thread_track *th = &c->th[i];

		if (out__failed(c->out))
			return -EIO;
		if (!th->nopen)
			continue;
		err = open_frames(c, th, &open);
		if (err)
			return err;
		close_frames(c, th, open, 0, th->last_ts + c->period_ns);
	}
	return 0;
}
