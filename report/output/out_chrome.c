// SPDX-License-Identifier: MIT
/*
 * Timeline as Trace Event JSON, for Perfetto UI and chrome://tracing.
 *
 * Tracks:
 *   - per traced thread: CUDA API calls ("X", cat cuda_api) and NVTX ranges/markers (cat nvtx),
 *     which nest because NVTX push/pop brackets the calls made inside it, and the blocks of
 *     --off-cpu traces (cat off_cpu), which nest in both: a thread opens and closes calls and
 *     ranges only while it runs;
 *   - per traced thread with samples, a sibling track "<name> samples": the CPU samples drawn
 *     as a flame chart (consecutive samples sharing a stack prefix merge into one slice per
 *     frame). A separate track, because sampled frames do not nest with API call slices;
 *   - per GPU device a pseudo-process "GPU N" with one track per (process, context, stream)
 *     holding kernels, copies and memsets, and a counter of busy % (kernels, copies);
 *   - flow arrows ("s" on the launching API call, "f" with bp "e" on the GPU work).
 * Timestamps are CLOCK_REALTIME microseconds with three decimals (exact ns), mapped from
 * CLOCK_MONOTONIC through the CLOCK_SYNC pairs, so traces of several hosts line up.
 * Events are written as they are produced; viewers sort, so file order is not time order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "model/backward_share.h"
#include "model/profile.h"
#include "output/ioctl_names.h"
#include "output/out.h"
#include "sym/demangle.h"

/* Pseudo ids above PID_MAX_LIMIT (2^22), below 2^31 (viewers read pid/tid as 32-bit). */
#define SAMPLE_TID_BASE 1000000000u
#define GPU_PID_BASE 2000000000u
#define GPU_TID_BASE 2000000000u
#define GPU_MAX_TRACKS 100000000u
#define SIZE_WARN_BYTES (256ull << 20)
#define COUNTER_BUCKETS 2000
#define COUNTER_MIN_BUCKET_NS 10000ull

struct clock_pair {
	uint64_t mono, real;
};

/* Open frames of a thread opened by one sample: from depth on, up to the next run's depth. */
struct open_run {
	uint32_t depth;
	uint32_t samples_before;	/* the thread's samples before the one that opened them */
	uint64_t start;
};

/*
 * Sampled flame chart state. The open frames are the last sample's (root first), so only its
 * stack is kept, symbolized again when needed (the symbolizer caches it), and where the open
 * frames began, per run: a copy of every thread's open stack grew with threads times depth,
 * gigabytes for a small trace of many threads with deep stacks.
 */
struct thread_track {
	uint32_t pid, tid;
	bool has_events, has_samples;
	uint32_t last_stack;		/* of the last sample: the open frames are its frames */
	uint64_t last_ts;
	uint32_t nopen;
	uint32_t nsamples;
	struct open_run *runs;		/* by depth */
	size_t nruns, runs_cap;
};

struct stream_track {
	uint32_t device, pid, context, stream;
	uint32_t gpu;		/* index into devs */
};

struct chrome {
	struct session *ses;
	const struct trace *t;
	FILE *out;
	uint64_t bytes, events;
	bool warned;
	uint64_t warn_bytes;

	struct clock_pair *clk;
	size_t nclk;
	int64_t fixed_offset;	/* realtime - mono when fewer than two pairs */

	const struct filter *f;	/* its --time-range clips the counters */
	uint64_t period_ns;

	struct thread_track *th;
	size_t nth, th_cap;
	struct kmap th_idx;	/* {pid, tid} -> th index */
	uint32_t *pids;
	size_t npids, pids_cap;
	struct kmap pid_idx;

	struct stream_track *st;
	size_t nst, st_cap;
	struct kmap st_idx;	/* {device << 32 | pid, context << 32 | stream} -> st index */
	uint32_t *devs;		/* device numbers, dense */
	size_t ndevs, devs_cap;
	struct kmap dev_idx;
	struct kmap gpu_pids;	/* distinct pids with GPU work, to name streams */

	const struct gpu_join *j;
	uint8_t *launch_marked;
	uint64_t next_flow;

	uint32_t *cur;			/* the frames of the sample being drawn */
	size_t cur_cap;
	uint32_t unknown;		/* "[unknown]", interned when first needed */
};

/* ---- output ------------------------------------------------------------------------------- */

static void put(struct chrome *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct chrome *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfprintf(c->out, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->bytes += n;
}

static void putb(struct chrome *c, const char *s, size_t n)
{
	c->bytes += fwrite(s, 1, n, c->out);
}

/*
 * A JSON string: quotes, backslashes and control bytes escaped; bytes that are not valid
 * UTF-8 (kernel names and comms are arbitrary bytes) become U+FFFD, so the file always
 * parses. Cut at OUT_NAME_MAX_BYTES (on a character boundary), marked "...".
 */
static void put_str(struct chrome *c, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;
	bool cut = len > OUT_NAME_MAX_BYTES;

	if (cut) {
		len = OUT_NAME_MAX_BYTES;
		while (len && (u[len] & 0xc0) == 0x80)
			len--;
	}

	putb(c, "\"", 1);
	while (i < len) {
		unsigned char b = u[i];
		size_t need = 0;
		uint32_t cp;

		if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
			i++;
			run++;
			continue;
		}
		if (run)
			putb(c, s + i - run, run);
		run = 0;
		if (b < 0x80) {
			if (b == '"')
				putb(c, "\\\"", 2);
			else if (b == '\\')
				putb(c, "\\\\", 2);
			else if (b == '\n')
				putb(c, "\\n", 2);
			else if (b == '\t')
				putb(c, "\\t", 2);
			else
				put(c, "\\u%04x", b);
			i++;
			continue;
		}
		if (b >= 0xc2 && b <= 0xdf) {
			need = 1;
			cp = b & 0x1f;
		} else if (b >= 0xe0 && b <= 0xef) {
			need = 2;
			cp = b & 0x0f;
		} else if (b >= 0xf0 && b <= 0xf4) {
			need = 3;
			cp = b & 0x07;
		} else {
			need = 0;
			cp = 0;
		}
		if (need) {
			size_t k;

			for (k = 1; k <= need && i + k < len; k++) {
				if ((u[i + k] & 0xc0) != 0x80)
					break;
				cp = cp << 6 | (u[i + k] & 0x3f);
			}
			/* complete, not overlong, not a surrogate, not past U+10FFFF */
			if (k == need + 1 && !(need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) &&
			    !(need == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
				putb(c, s + i, need + 1);
				i += need + 1;
				continue;
			}
		}
		putb(c, "\\ufffd", 6);
		i++;
	}
	if (run)
		putb(c, s + len - run, run);
	putb(c, cut ? "...\"" : "\"", cut ? 4 : 1);
}

static void put_cstr(struct chrome *c, const char *s)
{
	put_str(c, s, strlen(s));
}

/* CLOCK_REALTIME of a monotonic time: offsets interpolated between the nearest two pairs. */
static uint64_t realtime_ns(const struct chrome *c, uint64_t mono)
{
	const struct clock_pair *a, *b;
	size_t lo = 0, hi;
	int64_t oa, ob, off, d;
	double part;

	if (c->nclk < 2)
		return mono + c->fixed_offset;
	if (mono <= c->clk[0].mono)
		return mono + (int64_t)(c->clk[0].real - c->clk[0].mono);
	if (mono >= c->clk[c->nclk - 1].mono)
		return mono + (int64_t)(c->clk[c->nclk - 1].real - c->clk[c->nclk - 1].mono);
	hi = c->nclk - 1;
	while (hi - lo > 1) {	/* clk[lo].mono <= mono < clk[hi].mono */
		size_t mid = (lo + hi) / 2;

		if (c->clk[mid].mono <= mono)
			lo = mid;
		else
			hi = mid;
	}
	a = &c->clk[lo];
	b = &c->clk[hi];
	oa = (int64_t)(a->real - a->mono);
	ob = (int64_t)(b->real - b->mono);
	/* a hostile trace's offsets can be further apart than an int64 holds: oa then */
	if (__builtin_sub_overflow(ob, oa, &d))
		d = 0;
	part = (double)d * (double)(mono - a->mono) / (double)(b->mono - a->mono);
	if (!(part < 0x1p62 && part > -0x1p62) || __builtin_add_overflow(oa, (int64_t)part, &off))
		off = oa;
	return mono + off;
}

/*
 * Viewers parse "ts" as a double. Realtime in microseconds (~1.8e15) has a resolution of only
 * 0.25 us there, so a nanosecond value would be rounded by the parser, each number on its own,
 * and a child slice could end past its parent (speedscope then refuses the file). So times go
 * on a 250 ns grid, exact in a double below 2^51 us (year 2041; a 1 us grid after that), and
 * ts and end are rounded separately with the same monotonic rounding, which keeps nesting.
 */
static uint64_t grid_ns(uint64_t ns)
{
	uint64_t g = ns / 1000 < (1ull << 51) ? 250 : 1000;

	return (ns + g / 2) / g * g;
}

static void put_us(struct chrome *c, uint64_t ns)
{
	put(c, "%llu.%02u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000) / 10);
}

/* Starts an event object: {"ph":..,"pid":..,"tid":..,"ts":.. ; the caller closes it with end_ev. */
static void begin_ev(struct chrome *c, char ph, uint32_t pid, uint32_t tid, uint64_t mono)
{
	put(c, "%s{\"ph\":\"%c\",\"pid\":%u,\"tid\":%u,\"ts\":", c->events ? ",\n" : "\n", ph, pid,
	    tid);
	put_us(c, grid_ns(realtime_ns(c, mono)));
	c->events++;
}

static void end_ev(struct chrome *c)
{
	putb(c, "}", 1);
	/* only about bytes written: past --max-output nothing is, and that is said instead */
	if (!c->warned && c->bytes > c->warn_bytes && !out__failed(c->out)) {
		c->warned = true;
		fprintf(stderr, "xpu-report: warning: the chrome output passed %llu MB; viewers may fail to open it: narrow it with --time-range=START,END (seconds) or --pid=PID\n",
			(unsigned long long)(c->warn_bytes >> 20));
	}
}

/* dur of an X event from two monotonic times, mapped separately so slices stay nested */
static void put_dur(struct chrome *c, uint64_t start, uint64_t end)
{
	uint64_t a = grid_ns(realtime_ns(c, start));
	uint64_t b = grid_ns(realtime_ns(c, end > start ? end : start));

	put(c, ",\"dur\":");
	put_us(c, b > a ? b - a : 0);
}

/* ---- registries --------------------------------------------------------------------------- */

static int pid_add(struct chrome *c, uint32_t pid)
{
	bool ins;

	if (!kmap__put(&c->pid_idx, pid, 0, c->npids, &ins))
		return -ENOMEM;
	return ins ? VEC_PUSH(c->pids, c->npids, c->pids_cap, pid) : 0;
}

static struct thread_track *thread_get(struct chrome *c, uint32_t pid, uint32_t tid)
{
	struct thread_track tt = { .pid = pid, .tid = tid };
	uint32_t *v;
	bool ins;

	if (pid_add(c, pid))
		return NULL;
	v = kmap__put(&c->th_idx, pid, tid, c->nth, &ins);
	if (!v)
		return NULL;
	if (ins && VEC_PUSH(c->th, c->nth, c->th_cap, tt))
		return NULL;
	return &c->th[*v];
}

/* The track of a GPU record, or NULL (with *err set on allocation failure). */
static const struct stream_track *stream_get(struct chrome *c, uint32_t device, uint32_t pid,
					     uint32_t context, uint32_t stream, int *err)
{
	struct stream_track s = { device, pid, context, stream, 0 };
	uint32_t *v, *d;
	bool ins;

	d = kmap__put(&c->dev_idx, device, 0, c->ndevs, &ins);
	if (!d || (ins && VEC_PUSH(c->devs, c->ndevs, c->devs_cap, device)))
		goto nomem;
	if (!kmap__put(&c->gpu_pids, pid, 0, 0, NULL))
		goto nomem;
	s.gpu = *d;
	v = kmap__get(&c->st_idx, (uint64_t)device << 32 | pid, (uint64_t)context << 32 | stream);
	if (v)
		return &c->st[*v];
	if (c->nst >= GPU_MAX_TRACKS)
		return NULL;	/* only a hostile file gets here: its extra streams are dropped */
	v = kmap__put(&c->st_idx, (uint64_t)device << 32 | pid, (uint64_t)context << 32 | stream,
		      c->nst, &ins);
	if (!v || VEC_PUSH(c->st, c->nst, c->st_cap, s))
		goto nomem;
	return &c->st[*v];
nomem:
	*err = -ENOMEM;
	return NULL;
}

static uint32_t stream_tid(const struct chrome *c, const struct stream_track *s)
{
	return GPU_TID_BASE + (uint32_t)(s - c->st);
}

/* ---- CPU: API calls, NVTX, samples -------------------------------------------------------- */

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's version suffix is noise here. */
static size_t api_name_len(const char *n)
{
	size_t len = strlen(n), i = len;

	while (i > 0 && n[i - 1] >= '0' && n[i - 1] <= '9')
		i--;
	if (i < len && i >= 2 && n[i - 1] == 'v' && n[i - 2] == '_')
		return i - 2;
	return len;
}

static int emit_apis(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i;

	for (i = 0; i < t->napis; i++) {
		const struct xpu_rec_gpu_api *a = &t->apis[i];
		const char *n = trace__string(t, a->name_str);
		const struct gpu_work *w;
		char buf[32];

		if (out__failed(c->out))
			return -EIO;
		if (!filter__span(&c->ses->filter, a->pid, a->tid, a->start_ns, a->end_ns))
			continue;
		if (!thread_get(c, a->pid, a->tid))
			return -ENOMEM;
		c->th[*kmap__get(&c->th_idx, a->pid, a->tid)].has_events = true;
		if (!n || !*n) {
			snprintf(buf, sizeof(buf), "cbid %u", a->cbid);
			n = buf;
		}
		begin_ev(c, 'X', a->pid, a->tid, a->start_ns);
		put_dur(c, a->start_ns, a->end_ns);
		put(c, ",\"cat\":\"cuda_api\",\"name\":");
		put_str(c, n, api_name_len(n));
		put(c, ",\"args\":{\"correlation_id\":%u,\"cbid\":%u,\"api\":\"%s\"", a->corr_id,
		    a->cbid, a->domain == XPU_API_DRIVER ? "driver" : "runtime");
		if (a->return_code)
			put(c, ",\"return_code\":%d", a->return_code);
		w = gpu_join__copy(c->j, a->pid, a->corr_id);
		if (w)
			put(c, ",\"bytes\":%llu",
			    (unsigned long long)(w->kind == GPU_WORK_MEMSET ? t->memsets[w->index].bytes :
									  t->memcpys[w->index].bytes));
		put(c, "}");
		end_ev(c);
	}
	return 0;
}

static int emit_nvtx(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i;

	for (i = 0; i < t->nnvtxs; i++) {
		const struct xpu_rec_nvtx *r = &t->nvtxs[i];
		const char *n = trace__string(t, r->name_str), *dom = trace__string(t, r->domain_str);
		bool marker = r->kind == XPU_NVTX_MARKER || r->end_ns <= r->start_ns;

		if (out__failed(c->out))
			return -EIO;
		if (!filter__span(&c->ses->filter, r->pid, r->tid, r->start_ns,
				  marker ? r->start_ns : r->end_ns))
			continue;
		if (!thread_get(c, r->pid, r->tid))
			return -ENOMEM;
		c->th[*kmap__get(&c->th_idx, r->pid, r->tid)].has_events = true;
		begin_ev(c, marker ? 'i' : 'X', r->pid, r->tid, r->start_ns);
		if (marker)
			put(c, ",\"s\":\"t\"");
		else
			put_dur(c, r->start_ns, r->end_ns);
		put(c, ",\"cat\":\"nvtx\",\"name\":");
		put_cstr(c, n && *n ? n : "[nvtx]");
		put(c, ",\"args\":{");
		if (dom && *dom) {
			put(c, "\"domain\":");
			put_cstr(c, dom);
		}
		if (r->color_argb)
			put(c, "%s\"color\":\"#%06x\"", dom && *dom ? "," : "", r->color_argb & 0xffffff);
		put(c, "}");
		end_ev(c);
	}
	return 0;
}

/* args.stack of a block: its innermost frames, leaf first, "a <- b <- c" */
#define OFF_STACK_FRAMES 16

static int put_off_stack(struct chrome *c, const struct xpu_rec_off_cpu *o, uint32_t stack_id)
{
	char buf[OUT_NAME_MAX_BYTES + 1];
	const uint32_t *f;
	uint32_t n, i, k = 0;
	size_t len = 0;
	int err = symbolizer__stack(&c->ses->sym, o->pid, o->ts_ns, stack_id, false, &f, &n);

	if (err)
		return err;
	buf[0] = '\0';
	for (i = n; i-- > 0 && k < OFF_STACK_FRAMES && len < sizeof(buf) - 1; k++) {
		int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", k ? " <- " : "",
				 strpool__str(&c->ses->pool, f[i]));

		if (w < 0)
			break;
		len += (size_t)w < sizeof(buf) - len ? (size_t)w : sizeof(buf) - 1 - len;
	}
	put(c, ",\"stack\":");
	put_str(c, buf, len);
	return 0;
}

/* --off-cpu: each block as a slice on its thread's track, named by its state. */
static int emit_off_cpu(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i;
	int err;

	for (i = 0; i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];
		char name[48];

		if (out__failed(c->out))
			return -EIO;
		if (!filter__span(&c->ses->filter, o->pid, o->tid, o->ts_ns, o->ts_ns + o->dur_ns))
			continue;
		if (!thread_get(c, o->pid, o->tid))
			return -ENOMEM;
		c->th[*kmap__get(&c->th_idx, o->pid, o->tid)].has_events = true;
		snprintf(name, sizeof(name), "[off-cpu] %s", off_cpu_state_name(o->state));
		begin_ev(c, 'X', o->pid, o->tid, o->ts_ns);
		put_dur(c, o->ts_ns, o->ts_ns + o->dur_ns);
		put(c, ",\"cat\":\"off_cpu\",\"name\":");
		put_cstr(c, name);
		put(c, ",\"args\":{\"state\":\"%s\"", off_cpu_state_name(o->state));
		if (o->waker_tid)
			put(c, ",\"waker_tid\":%u", o->waker_tid);
		err = put_off_stack(c, o, session__offcpu_stack(c->ses, i));
		if (err)
			return err;
		put(c, "}");
		end_ev(c);
	}
	return 0;
}

/*
 * The frames of a sample's stack, root first; "[unknown]" for none. Valid until the next call.
 */
static int sample_frames(struct chrome *c, uint32_t pid, uint64_t ts, uint32_t stack_id,
			 const uint32_t **f, uint32_t *n)
{
	int err = symbolizer__stack(&c->ses->sym, pid, ts, stack_id, false, f, n);

	if (err || *n)
		return err;
	if (!c->unknown)
		c->unknown = frame_intern(&c->ses->pool, "[unknown]", 9);
	if (!c->unknown)
		return -ENOMEM;
	*f = &c->unknown;
	*n = 1;
	return 0;
}

/* The open frames of th, those of its last sample. */
static int open_frames(struct chrome *c, const struct thread_track *th, const uint32_t **f)
{
	uint32_t n;
	int err = sample_frames(c, th->pid, th->last_ts, th->last_stack, f, &n);

	/* the same stack, the same frames: the symbolizer answers from its cache */
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
		if (grid_ns(realtime_ns(c, end)) <= grid_ns(realtime_ns(c, run->start)))
			continue;
		begin_ev(c, 'X', th->pid, SAMPLE_TID_BASE + th->tid, run->start);
		put_dur(c, run->start, end);
		put(c, ",\"cat\":\"cpu\",\"name\":");
		put_cstr(c, strpool__str(&c->ses->pool, f[k]));
		put(c, ",\"args\":{\"samples\":%u,\"depth\":%zu}",
		    th->nsamples - run->samples_before, k);
		end_ev(c);
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
	/* a copy: the open frames come from the symbolizer too, which may move these */
	if (n > c->cur_cap) {
		uint32_t *nc = realloc(c->cur, n * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		c->cur = nc;
		c->cur_cap = n;
	}
	memcpy(c->cur, f, n * sizeof(*f));
	if (th->nopen) {
		err = open_frames(c, th, &open);
		if (err)
			return err;
		if (s->ts_ns - th->last_ts > 2 * c->period_ns)
			close_frames(c, th, open, 0, th->last_ts + c->period_ns);
		for (; k < n && k < th->nopen && open[k] == c->cur[k]; k++)
			;
		close_frames(c, th, open, k, s->ts_ns);
	}
	return open_sample(th, k, n, stack_id, s->ts_ns);
}

static int emit_samples(struct chrome *c)
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
		th = thread_get(c, s->pid, s->tid);
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

/* ---- GPU ---------------------------------------------------------------------------------- */

/*
 * The "s" end of a flow into GPU work of (pid, corr): on its API call, else its launch. It
 * sits inside the call, at its middle unless the work's own point (f_ts) comes earlier: a
 * viewer drops a flow that ends before it starts.
 */
static bool flow_start(struct chrome *c, uint32_t pid, uint32_t corr, uint64_t id, uint64_t f_ts)
{
	const struct trace *t = c->t;
	long v = gpu_join__api(c->j, pid, corr);

	if (v >= 0) {
		const struct xpu_rec_gpu_api *a = &t->apis[v];

		if (!filter__span(&c->ses->filter, a->pid, a->tid, a->start_ns, a->end_ns))
			return false;
		uint64_t mid = a->start_ns + (a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0) / 2;

		if (f_ts < mid)
			mid = f_ts > a->start_ns ? f_ts : a->start_ns;
		begin_ev(c, 's', a->pid, a->tid, mid);
	} else if ((v = gpu_join__launch(c->j, pid, corr)) >= 0) {
		const struct xpu_rec_gpu_launch *l = &t->launches[v];

		if (!filter__at(&c->ses->filter, l->pid, l->tid, l->ts_ns) ||
		    !thread_get(c, l->pid, l->tid))
			return false;
		c->th[*kmap__get(&c->th_idx, l->pid, l->tid)].has_events = true;
		/* no API record (API tracing off): a marker to hang the arrow on */
		if (!c->launch_marked[v]) {
			c->launch_marked[v] = 1;
			begin_ev(c, 'i', l->pid, l->tid, l->ts_ns);
			put(c, ",\"s\":\"t\",\"cat\":\"cuda_api\",\"name\":\"launch\",\"args\":{\"correlation_id\":%u,\"cbid\":%u}",
			    l->corr_id, l->cbid);
			end_ev(c);
		}
		begin_ev(c, 's', l->pid, l->tid, l->ts_ns);
	} else {
		return false;
	}
	put(c, ",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%llu", (unsigned long long)id);
	end_ev(c);
	return true;
}

static void flow_end(struct chrome *c, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t id)
{
	begin_ev(c, 'f', pid, tid, ts);
	put(c, ",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%llu",
	    (unsigned long long)id);
	end_ev(c);
}

struct ival {
	uint64_t start, end;
	uint32_t gpu;
	uint32_t copy;		/* 0: kernel, 1: copy or memset */
};

struct gpu_ctx {
	struct ival *iv;
	size_t niv, iv_cap;
};

/*
 * Common part of kernels, copies and memsets: filters (the launching thread decides --tid,
 * as in the folded view), finds the stream track and opens the event; the caller writes
 * name and args.
 */
static int gpu_begin(struct chrome *c, struct gpu_ctx *g, const struct gpu_work *w,
		     uint32_t context, uint32_t stream, const struct stream_track **out)
{
	const struct stream_track *s;
	struct ival iv = { w->start, w->end > w->start ? w->end : w->start, 0,
			   w->kind != GPU_WORK_KERNEL };
	int err = 0;

	*out = NULL;
	if (!w->keep)
		return 0;
	s = stream_get(c, w->device, w->pid, context, stream, &err);
	if (!s)
		return err;
	iv.gpu = s->gpu;
	if (VEC_PUSH(g->iv, g->niv, g->iv_cap, iv))
		return -ENOMEM;
	*out = s;
	begin_ev(c, 'X', GPU_PID_BASE + s->gpu, stream_tid(c, s), w->start);
	put_dur(c, w->start, w->end);
	return 0;
}

static void gpu_flow(struct chrome *c, const struct stream_track *s, uint32_t pid, uint32_t corr,
		     uint64_t start, uint64_t end)
{
	uint64_t id = c->next_flow + 1, mid = start + (end > start ? end - start : 0) / 2;

	if (flow_start(c, pid, corr, id, mid)) {
		flow_end(c, GPU_PID_BASE + s->gpu, stream_tid(c, s), mid, id);
		c->next_flow = id;
	}
}

static const char *mem_kind_name(uint8_t k)
{
	static const char *const names[] = {
		[XPU_MEM_UNKNOWN] = "unknown", [XPU_MEM_PAGEABLE] = "pageable",
		[XPU_MEM_PINNED] = "pinned", [XPU_MEM_DEVICE] = "device", [XPU_MEM_ARRAY] = "array",
		[XPU_MEM_MANAGED] = "managed", [XPU_MEM_DEVICE_STATIC] = "device static",
		[XPU_MEM_MANAGED_STATIC] = "managed static",
	};

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

/* Backward work put under its forward stack: the node and the forward site, in args. */
static void backward_args(struct chrome *c, const struct gpu_work *w)
{
	const char *node, *site;

	if (!w->launch || backward_share__site(c->ses, w->launch - 1, &node, &site) != 1)
		return;
	put(c, ",\"backward_node\":");
	put_cstr(c, node + 11);
	put(c, ",\"forward_site\":");
	put_cstr(c, site);
}

static void kernel_args(struct chrome *c, const struct xpu_rec_gpu_kernel *k,
			const struct gpu_work *w)
{
	const char *n = trace__string(c->t, k->name_str);
	char dem[DEMANGLE_MAX_OUTPUT];

	if (!n || !*n)
		n = "[unknown kernel]";
	else if (xpu_demangle(n, dem, sizeof(dem)) >= 0)
		n = dem;
	put(c, ",\"cat\":\"kernel\",\"name\":");
	put_cstr(c, n);
	put(c, ",\"args\":{\"correlation_id\":%u,\"grid\":\"(%u,%u,%u)\",\"block\":\"(%u,%u,%u)\",\"registers_per_thread\":%u,\"static_smem_bytes\":%u,\"dynamic_smem_bytes\":%u,\"stream\":%u",
	    k->corr_id, k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z,
	    k->registers_per_thread, k->static_smem_bytes, k->dynamic_smem_bytes, k->stream);
	if (k->flags & XPU_GPU_IN_GRAPH)
		put(c, ",\"graph_id\":%u,\"graph_node_id\":%llu", k->graph_id,
		    (unsigned long long)k->graph_node_id);
	backward_args(c, w);
	put(c, "}");
}

static void memcpy_args(struct chrome *c, const struct xpu_rec_gpu_memcpy *m)
{
	uint64_t dur = m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;

	put(c, ",\"cat\":\"memcpy\",\"name\":\"%s\",\"args\":{\"correlation_id\":%u,\"bytes\":%llu,\"src\":\"%s\",\"dst\":\"%s\"",
	    memcpy_kind_name(m->copy_kind), m->corr_id, (unsigned long long)m->bytes,
	    mem_kind_name(m->src_kind), mem_kind_name(m->dst_kind));
	/* bytes per ns is GB/s */
	if (dur)
		put(c, ",\"GB/s\":%.3f", (double)m->bytes / dur);
	if (m->copy_kind == XPU_MEMCPY_PTOP)
		put(c, ",\"src_device\":%u,\"dst_device\":%u", m->src_device, m->dst_device);
	put(c, ",\"stream\":%u}", m->stream);
}

static void memset_args(struct chrome *c, const struct xpu_rec_gpu_memset *m)
{
	put(c, ",\"cat\":\"memset\",\"name\":\"memset\",\"args\":{\"correlation_id\":%u,\"bytes\":%llu,\"value\":%u,\"memory\":\"%s\",\"stream\":%u}",
	    m->corr_id, (unsigned long long)m->bytes, m->value, mem_kind_name(m->mem_kind),
	    m->stream);
}

/* The stream a work item ran on, and its name and args after gpu_begin(). */
static void work_stream(const struct trace *t, const struct gpu_work *w, uint32_t *context,
			uint32_t *stream)
{
	if (w->kind == GPU_WORK_KERNEL) {
		*context = t->kernels[w->index].context;
		*stream = t->kernels[w->index].stream;
	} else if (w->kind == GPU_WORK_MEMCPY) {
		*context = t->memcpys[w->index].context;
		*stream = t->memcpys[w->index].stream;
	} else {
		*context = t->memsets[w->index].context;
		*stream = t->memsets[w->index].stream;
	}
}

static void work_args(struct chrome *c, const struct gpu_work *w)
{
	if (w->kind == GPU_WORK_KERNEL)
		kernel_args(c, &c->t->kernels[w->index], w);
	else if (w->kind == GPU_WORK_MEMCPY)
		memcpy_args(c, &c->t->memcpys[w->index]);
	else
		memset_args(c, &c->t->memsets[w->index]);
}

/* Kernels, then copies, then memsets, each in trace order: the join's order. */
static int emit_gpu(struct chrome *c, struct gpu_ctx *g)
{
	const struct stream_track *s;
	uint32_t context, stream;
	size_t i;
	int err;

	for (i = 0; i < c->j->n; i++) {
		const struct gpu_work *w = &c->j->w[i];

		if (out__failed(c->out))
			return -EIO;
		work_stream(c->t, w, &context, &stream);
		err = gpu_begin(c, g, w, context, stream, &s);
		if (err)
			return err;
		if (!s)
			continue;
		work_args(c, w);
		end_ev(c);
		gpu_flow(c, s, w->pid, w->corr, w->start, w->end);
	}
	return 0;
}

static int cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->copy != y->copy)
		return x->copy < y->copy ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* Adds [s, e) to buckets of width w starting at base. */
static void bucket_add(double *b, size_t nb, uint64_t base, uint64_t w, uint64_t s, uint64_t e)
{
	size_t i;

	if (e <= base)
		return;
	if (s < base)
		s = base;
	for (i = (s - base) / w; i < nb && s < e; i++) {
		uint64_t be = base + (i + 1) * w, x = e < be ? e : be;

		b[i] += (double)(x - s);
		s = x;
	}
}

/*
 * Busy % per device: the union of kernel (and of copy/memset) intervals over fixed buckets,
 * at most COUNTER_BUCKETS of them; a point is written only where the value changes.
 */
static int emit_counters(struct chrome *c, struct gpu_ctx *g)
{
	uint64_t lo = UINT64_MAX, hi = 0, w, base;
	double *b[2] = { NULL, NULL };
	size_t nb, i, j;
	int err = 0;

	if (!g->niv)
		return 0;
	for (i = 0; i < g->niv; i++) {
		lo = g->iv[i].start < lo ? g->iv[i].start : lo;
		hi = g->iv[i].end > hi ? g->iv[i].end : hi;
	}
	if (c->f->has_range) {
		lo = lo < c->f->r0 ? c->f->r0 : lo;
		hi = hi > c->f->r1 ? c->f->r1 : hi;
	}
	if (hi <= lo)
		hi = lo + 1;
	w = (hi - lo) / COUNTER_BUCKETS + 1;
	w = w < COUNTER_MIN_BUCKET_NS ? COUNTER_MIN_BUCKET_NS : w;
	base = lo;
	nb = (hi - lo) / w + 1;
	b[0] = calloc(nb, sizeof(double));
	b[1] = calloc(nb, sizeof(double));
	if (!b[0] || !b[1]) {
		err = -ENOMEM;
		goto out;
	}
	qsort(g->iv, g->niv, sizeof(*g->iv), cmp_ival);
	for (i = 0; i < g->niv; i = j) {
		uint32_t gpu = g->iv[i].gpu;
		double last[2] = { -1, -1 };
		size_t k;

		memset(b[0], 0, nb * sizeof(double));
		memset(b[1], 0, nb * sizeof(double));
		for (j = i; j < g->niv && g->iv[j].gpu == gpu;) {
			/* merge overlapping intervals of one kind, then add the union */
			uint32_t kind = g->iv[j].copy;
			uint64_t s = g->iv[j].start, e = g->iv[j].end;

			for (j++; j < g->niv && g->iv[j].gpu == gpu && g->iv[j].copy == kind &&
				  g->iv[j].start <= e; j++)
				e = g->iv[j].end > e ? g->iv[j].end : e;
			if (c->f->has_range) {
				s = s < c->f->r0 ? c->f->r0 : s;
				e = e > c->f->r1 ? c->f->r1 : e;
			}
			if (e > s)
				bucket_add(b[kind], nb, base, w, s, e);
		}
		for (k = 0; k <= nb; k++) {
			double v0 = k < nb ? 100.0 * b[0][k] / w : 0, v1 = k < nb ? 100.0 * b[1][k] / w : 0;

			/* one decimal is what a counter track can show */
			v0 = (double)(long long)(v0 * 10 + 0.5) / 10;
			v1 = (double)(long long)(v1 * 10 + 0.5) / 10;
			if (v0 == last[0] && v1 == last[1])
				continue;
			last[0] = v0;
			last[1] = v1;
			begin_ev(c, 'C', GPU_PID_BASE + gpu, 0, base + k * w);
			put(c, ",\"name\":\"busy %%\",\"args\":{\"kernels\":%.1f,\"copies\":%.1f}", v0,
			    v1);
			end_ev(c);
		}
	}
out:
	free(b[0]);
	free(b[1]);
	return err;
}

/* ---- below the CUDA API: driver ioctls, GPU memory (format 1.4) ---------------------------- */

/*
 * Each ioctl on an NVIDIA device file is a slice on its thread's track; its time lies within
 * the CUDA call that made it, so it nests under that call's slice (same monotonic rounding).
 */
static int emit_ioctls(struct chrome *c)
{
	const struct trace *t = c->t;
	char hex[16];
	size_t i;

	for (i = 0; i < t->nioctls; i++) {
		const struct xpu_rec_driver_ioctl *io = &t->ioctls[i];
		const char *file = io->file_str ? trace__string(t, io->file_str) : NULL;
		const char *name = ioctl_request_name(io->request, file);

		if (out__failed(c->out))
			return -EIO;
		if (!filter__span(&c->ses->filter, io->pid, io->tid, io->start_ns, io->end_ns))
			continue;
		if (!thread_get(c, io->pid, io->tid))
			return -ENOMEM;
		c->th[*kmap__get(&c->th_idx, io->pid, io->tid)].has_events = true;
		snprintf(hex, sizeof(hex), "%#x", io->request);
		begin_ev(c, 'X', io->pid, io->tid, io->start_ns);
		put_dur(c, io->start_ns, io->end_ns);
		put(c, ",\"cat\":\"driver\",\"name\":");
		put_cstr(c, name ? name : hex);
		put(c, ",\"args\":{\"request\":\"%s\",\"file\":", hex);
		put_cstr(c, file ? file : "?");
		put(c, ",\"fd\":%u,\"ret\":%lld", io->fd, (long long)io->ret);
		if (io->flags & XPU_IOCTL_DRIVER_TIMED)
			put(c, ",\"driver_us\":%.3f", io->driver_ns / 1e3);
		put(c, "}");
		end_ev(c);
	}
	return 0;
}

/* The dense index of a device: its "GPU N" process is GPU_PID_BASE + index. */
static int device_index(struct chrome *c, uint32_t device, uint32_t *idx)
{
	uint32_t *d;
	bool ins;

	d = kmap__put(&c->dev_idx, device, 0, c->ndevs, &ins);
	if (!d || (ins && VEC_PUSH(c->devs, c->ndevs, c->devs_cap, device)))
		return -ENOMEM;
	*idx = *d;
	return 0;
}

static const struct xpu_rec_gpu_memory *mem_sort;

static int cmp_mem(const void *a, const void *b)
{
	const struct xpu_rec_gpu_memory *x = &mem_sort[*(const uint32_t *)a];
	const struct xpu_rec_gpu_memory *y = &mem_sort[*(const uint32_t *)b];

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void memory_counter(struct chrome *c, uint32_t d, uint64_t mono, uint64_t bytes)
{
	begin_ev(c, 'C', GPU_PID_BASE + d, 0, mono);
	put(c, ",\"name\":\"gpu memory\",\"args\":{\"allocated_bytes\":%llu}",
	    (unsigned long long)bytes);
	end_ev(c);
}

/*
 * A counter per device of the bytes allocated and not yet freed: the allocations that pass
 * the filter and the releases paired with them (model/gpu_mem.h), all processes together.
 * Changes of a device that fall on one point of the output's time grid make one value there
 * (the last): a counter that shows two values at one time is one a viewer may draw either way.
 */
static int emit_memory(struct chrome *c)
{
	const struct gpu_mem *m = session__gpu_mem(c->ses);
	const struct xpu_rec_gpu_memory *recs = c->t->memories;
	uint64_t *cur = NULL, *pend_grid = NULL, *pend_mono = NULL;
	uint32_t *by = NULL, d;
	size_t i, n = 0;
	int err = -ENOMEM;

	if (!m)
		return -ENOMEM;
	if (!m->n)
		return 0;
	by = calloc(m->n, sizeof(*by));
	if (!by)
		goto out;
	for (i = 0; i < m->n; i++)
		if (m->r[i].keep || (recs[i].op == XPU_GPU_MEM_FREE && m->r[i].pair &&
				     m->r[m->r[i].pair - 1].keep))
			by[n++] = (uint32_t)i;
	mem_sort = recs;
	qsort(by, n, sizeof(*by), cmp_mem);
	for (i = 0; i < n; i++)
		if (device_index(c, recs[by[i]].device, &d))
			goto out;
	cur = calloc(c->ndevs + 1, sizeof(*cur));
	pend_grid = calloc(c->ndevs + 1, sizeof(*pend_grid));
	pend_mono = calloc(c->ndevs + 1, sizeof(*pend_mono));
	if (!cur || !pend_grid || !pend_mono)
		goto out;
	for (i = 0; i < n; i++) {
		const struct xpu_rec_gpu_memory *x = &recs[by[i]];
		uint64_t b = x->op == XPU_GPU_MEM_ALLOC ? x->bytes : recs[m->r[by[i]].pair - 1].bytes;
		uint64_t g = grid_ns(realtime_ns(c, x->ts_ns));

		if (out__failed(c->out)) {
			err = -EIO;
			goto out;
		}
		device_index(c, x->device, &d);
		/* a value waiting at an earlier grid point is final now */
		if (pend_mono[d] && pend_grid[d] != g)
			memory_counter(c, d, pend_mono[d], cur[d]);
		if (x->op == XPU_GPU_MEM_ALLOC)
			cur[d] += b;
		else
			cur[d] -= b <= cur[d] ? b : cur[d];
		pend_grid[d] = g;
		pend_mono[d] = x->ts_ns ? x->ts_ns : 1;
	}
	for (d = 0; d <= c->ndevs; d++)
		if (pend_mono[d])
			memory_counter(c, d, pend_mono[d], cur[d]);
	err = 0;
out:
	free(by);
	free(cur);
	free(pend_grid);
	free(pend_mono);
	return err;
}

/* ---- metadata ----------------------------------------------------------------------------- */

static void meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	put(c, "%s{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":",
	    c->events ? ",\n" : "\n", pid, tid, what);
	put_cstr(c, name);
	put(c, "}");
	c->events++;
	end_ev(c);
}

static void meta_sort(struct chrome *c, const char *what, uint32_t pid, uint32_t tid, uint32_t idx)
{
	put(c, "%s{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"sort_index\":%u}",
	    c->events ? ",\n" : "\n", pid, tid, what, idx);
	c->events++;
	end_ev(c);
}

static int cmp_th(const void *a, const void *b)
{
	const struct thread_track *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

/* Multi-trace: processes in order of host, then rank (none last), then pid. */
static const struct session *place_ses;

static int cmp_place(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t rx = (uint32_t)session__process_rank(place_ses, x);
	uint32_t ry = (uint32_t)session__process_rank(place_ses, y);
	int h = strcmp(session__process_host(place_ses, x), session__process_host(place_ses, y));

	if (h)
		return h;
	if (rx != ry)		/* -1 (no rank) is the largest as unsigned */
		return rx < ry ? -1 : 1;
	return x != y ? (x < y ? -1 : 1) : 0;
}

/*
 * Process tracks: "comm pid"; with hosts or ranks (several traces, or PROCESS_ENV records)
 * "host rank N pid P (comm)", ordered by host and rank.
 */
static int emit_process_names(struct chrome *c)
{
	const struct trace *t = c->t;
	uint32_t *order = NULL;
	char buf[320], cb[32], place[300];
	size_t i;

	if (session__has_places(c->ses)) {
		order = malloc((c->npids ? c->npids : 1) * sizeof(*order));
		if (!order)
			return -ENOMEM;
		if (c->npids)
			memcpy(order, c->pids, c->npids * sizeof(*order));
		place_ses = c->ses;
		if (c->npids)
			qsort(order, c->npids, sizeof(*order), cmp_place);
	}
	for (i = 0; i < c->npids; i++) {
		uint32_t pid = order ? order[i] : c->pids[i];

		if (order && *session__process_place(c->ses, pid, place, sizeof(place)))
			snprintf(buf, sizeof(buf), "%s pid %u (%s)", place,
				 session__process_pid(c->ses, pid), trace__comm(t, pid, cb, sizeof(cb)));
		else
			snprintf(buf, sizeof(buf), "%s %u", trace__comm(t, pid, cb, sizeof(cb)),
				 session__process_pid(c->ses, pid));
		meta(c, "process_name", pid, 0, buf);
		meta_sort(c, "process_sort_index", pid, 0, i);
	}
	free(order);
	return 0;
}

static int emit_meta(struct chrome *c)
{
	const struct trace *t = c->t;
	char buf[320];
	size_t i, j;

	if (emit_process_names(c))
		return -ENOMEM;
	/* sorted by tid, so that each thread's samples track follows it */
	if (c->nth)
		qsort(c->th, c->nth, sizeof(*c->th), cmp_th);
	for (i = 0; i < c->nth; i++) {
		const struct thread_track *th = &c->th[i];
		const struct tr_thread *tt = trace__thread(t, th->tid);
		const char *n = tt ? trace__string(t, tt->comm_str) : NULL;

		if (n && *n)
			snprintf(buf, sizeof(buf), "%s %u", n, th->tid);
		else
			snprintf(buf, sizeof(buf), "tid %u", th->tid);
		if (th->has_events || !th->has_samples) {
			meta(c, "thread_name", th->pid, th->tid, buf);
			meta_sort(c, "thread_sort_index", th->pid, th->tid, 2 * i);
		}
		if (th->has_samples) {
			strncat(buf, " samples", sizeof(buf) - strlen(buf) - 1);
			meta(c, "thread_name", th->pid, SAMPLE_TID_BASE + th->tid, buf);
			meta_sort(c, "thread_sort_index", th->pid, SAMPLE_TID_BASE + th->tid, 2 * i + 1);
		}
	}
	for (i = 0; i < c->ndevs; i++) {
		const char *dn = NULL;

		for (j = 0; j < t->ndevices && !dn; j++) {
			if (t->devices[j].device == c->devs[i])
				dn = trace__string(t, t->devices[j].name_str);
		}
		const char *host;
		uint32_t dev = trace__real_device(t, c->devs[i], &host);
		int n;

		if (dn && *dn)
			n = snprintf(buf, sizeof(buf), "GPU %u (%s)", dev, dn);
		else
			n = snprintf(buf, sizeof(buf), "GPU %u", dev);
		/* several traces: the host a GPU belongs to */
		if (t->nparts > 1 && *host && n > 0 && (size_t)n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, " on %s", host);
		meta(c, "process_name", GPU_PID_BASE + i, 0, buf);
		meta_sort(c, "process_sort_index", GPU_PID_BASE + i, 0, c->npids + i);
	}
	for (i = 0; i < c->nst; i++) {
		const struct stream_track *s = &c->st[i];

		if (c->gpu_pids.n > 1)
			snprintf(buf, sizeof(buf), "stream %u (pid %u)", s->stream,
				 session__process_pid(c->ses, s->pid));
		else
			snprintf(buf, sizeof(buf), "stream %u", s->stream);
		meta(c, "thread_name", GPU_PID_BASE + s->gpu, stream_tid(c, s), buf);
		meta_sort(c, "thread_sort_index", GPU_PID_BASE + s->gpu, stream_tid(c, s), i);
	}
	return 0;
}

/* A string record with its length (cmdlines hold NULs between arguments). */
static const struct tr_string *string_rec(const struct trace *t, uint32_t id)
{
	uint32_t *v = id ? kmap__get(&t->string_ids, id, 0) : NULL;

	return v ? &t->strings[*v] : NULL;
}

static void other_str(struct chrome *c, const char *key, uint32_t id, bool argv)
{
	const struct tr_string *s = string_rec(c->t, id);
	char *tmp;
	uint32_t i, len;

	if (!s)
		return;
	len = s->len;
	tmp = malloc(len + 1);
	if (!tmp)
		return;
	memcpy(tmp, s->s, len);
	/* argv: arguments joined with spaces, the last NUL dropped */
	while (argv && len && !tmp[len - 1])
		len--;
	for (i = 0; argv && i < len; i++) {
		if (!tmp[i])
			tmp[i] = ' ';
	}
	put(c, ",\"%s\":", key);
	put_str(c, tmp, len);
	free(tmp);
}

/*
 * Multi-trace: each trace's file, host, start on the shared axis and clock-sync uncertainty.
 * Traces of one host share its monotonic clock; across hosts only the realtime clocks align
 * them, as well as the hosts' clocks agree (NTP), which the trace cannot know.
 */
static void emit_parts(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i;

	if (t->nparts < 2)
		return;
	put(c, ",\"cross_host_alignment\":\"each host's CLOCK_REALTIME, assumed synchronized "
	    "(NTP/PTP); traces of one host share its CLOCK_MONOTONIC exactly\",\"traces\":[");
	for (i = 0; i < t->nparts; i++) {
		const struct tr_part *p = &t->parts[i];

		put(c, "%s{\"file\":", i ? "," : "");
		put_cstr(c, p->path);
		if (p->has_session) {
			other_str(c, "host", p->session.host_str, false);
			put(c, ",\"start_realtime_ns\":%llu",
			    (unsigned long long)realtime_ns(c, p->session.start_mono_ns));
		}
		put(c, ",\"clock_sync_pairs\":%zu,\"clock_uncertainty_ns\":%llu,"
		    "\"monotonic_shift_ns\":%lld}", p->nclocks,
		    (unsigned long long)p->clock_unc_max_ns, (long long)p->rm.shift_ns);
	}
	put(c, "]");
}

static void emit_other(struct chrome *c)
{
	const struct trace *t = c->t;
	uint64_t unc = 0;
	size_t i;

	put(c, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"xpu-report\"");
	put(c, ",\"clock\":\"CLOCK_REALTIME, mapped from CLOCK_MONOTONIC by %zu clock_sync pairs\"",
	    c->nclk);
	for (i = 0; i < t->nclocks; i++)
		unc = t->clocks[i].uncertainty_ns > unc ? t->clocks[i].uncertainty_ns : unc;
	put(c, ",\"clock_uncertainty_ns\":%llu", (unsigned long long)unc);
	if (t->has_session) {
		const struct xpu_rec_session *s = &t->session;

		other_str(c, "host", s->host_str, false);
		other_str(c, "kernel", s->kernel_str, false);
		other_str(c, "arch", s->arch_str, false);
		other_str(c, "recorder", s->version_str, false);
		other_str(c, "command", s->cmdline_str, true);
		put(c, ",\"target_pid\":%u,\"cpus\":%u,\"sample_freq_hz\":%u", s->target_pid, s->ncpu,
		    s->sample_freq_hz);
		put(c, ",\"start_realtime_ns\":%llu,\"start_monotonic_ns\":%llu",
		    (unsigned long long)realtime_ns(c, s->start_mono_ns),
		    (unsigned long long)s->start_mono_ns);
	}
	if (t->has_end)
		put(c, ",\"end_monotonic_ns\":%llu", (unsigned long long)t->end.end_mono_ns);
	if (c->f->has_range)
		put(c, ",\"time_range_s\":\"%g,%g\"", c->ses->opts->range_start_s,
		    c->ses->opts->range_end_s);
	if (t->st.end != TRACE_END_CLEAN)
		put(c, ",\"truncated\":true");
	emit_parts(c);
	put(c, "},\n\"traceEvents\":[");
}

/* ---- driver ------------------------------------------------------------------------------- */

static int cmp_clock(const void *a, const void *b)
{
	const struct clock_pair *x = a, *y = b;

	return x->mono != y->mono ? (x->mono < y->mono ? -1 : 1) : 0;
}

static int setup_clock(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i, n = 0;

	c->clk = calloc(t->nclocks ? t->nclocks : 1, sizeof(*c->clk));
	if (!c->clk)
		return -ENOMEM;
	for (i = 0; i < t->nclocks; i++) {
		if (!t->clocks[i].mono_ns || !t->clocks[i].realtime_ns)
			continue;	/* a zero read is a writer bug, not a time */
		c->clk[n].mono = t->clocks[i].mono_ns;
		c->clk[n].real = t->clocks[i].realtime_ns;
		n++;
	}
	if (n)
		qsort(c->clk, n, sizeof(*c->clk), cmp_clock);
	/* equal mono reads: keep the first, interpolation needs distinct points */
	for (i = 1, c->nclk = n ? 1 : 0; i < n; i++) {
		if (c->clk[i].mono != c->clk[c->nclk - 1].mono)
			c->clk[c->nclk++] = c->clk[i];
	}
	if (c->nclk == 1)
		c->fixed_offset = (int64_t)(c->clk[0].real - c->clk[0].mono);
	else if (!c->nclk && t->has_session && t->session.start_realtime_ns)
		c->fixed_offset = (int64_t)(t->session.start_realtime_ns - t->session.start_mono_ns);
	return 0;
}

/* Session start (monotonic) for --time-range: the SESSION record, else the first event. */
static int build_maps(struct chrome *c)
{
	c->j = session__gpu(c->ses);
	if (!c->j)
		return -ENOMEM;
	c->launch_marked = calloc(c->t->nlaunches ? c->t->nlaunches : 1, 1);
	return c->launch_marked ? 0 : -ENOMEM;
}

int out_chrome(struct session *ses, FILE *out)
{
	const struct report_opts *o = ses->opts;
	struct chrome c = { .ses = ses, .t = ses->t, .f = &ses->filter, .out = out };
	struct gpu_ctx g = { 0 };
	uint64_t data_events;
	size_t i;
	int err;

	/* the tests lower the threshold rather than write 256 MB */
	c.warn_bytes = getenv("XPU_REPORT_CHROME_WARN_BYTES") ?
			       strtoull(getenv("XPU_REPORT_CHROME_WARN_BYTES"), NULL, 10) :
			       SIZE_WARN_BYTES;
	c.period_ns = 1000000000ull / (ses->freq_hz ? ses->freq_hz : 1000);
	err = setup_clock(&c);
	if (!err)
		err = build_maps(&c);
	if (err)
		goto out;
	emit_other(&c);
	err = emit_apis(&c);
	if (!err)
		err = emit_nvtx(&c);
	if (!err)
		err = emit_gpu(&c, &g);
	if (!err)
		err = emit_counters(&c, &g);
	if (!err)
		err = emit_samples(&c);
	if (!err)
		err = emit_ioctls(&c);
	if (!err)
		err = emit_memory(&c);
	if (!err)
		err = emit_off_cpu(&c);
	if (err)
		goto out;
	data_events = c.events;
	err = emit_meta(&c);
	if (err)
		goto out;
	put(&c, "\n]}\n");
	if (!data_events) {
		double dur = c.t->has_session && c.t->has_end &&
					     c.t->end.end_mono_ns > c.t->session.start_mono_ns ?
				     (c.t->end.end_mono_ns - c.t->session.start_mono_ns) / 1e9 :
				     0;

		if (c.f->has_range && dur > 0)
			fprintf(stderr, "xpu-report: warning: no events in the time range (the session lasted %.3f s)\n",
				dur);
		else
			fprintf(stderr, "xpu-report: warning: no events to show%s\n",
				c.f->has_range ? " in the time range" : "");
	}
	if (o->verbose)
		fprintf(stderr, "xpu-report: chrome: %llu events, %llu bytes, %llu flows\n",
			(unsigned long long)c.events, (unsigned long long)c.bytes,
			(unsigned long long)c.next_flow);
out:
	for (i = 0; i < c.nth; i++)
		free(c.th[i].runs);
	free(c.cur);
	free(c.th);
	free(c.pids);
	free(c.st);
	free(c.devs);
	free(c.clk);
	free(c.launch_marked);
	free(g.iv);
	kmap__free(&c.th_idx);
	kmap__free(&c.pid_idx);
	kmap__free(&c.st_idx);
	kmap__free(&c.dev_idx);
	kmap__free(&c.gpu_pids);
	return err;
}
