// SPDX-License-Identifier: MIT
/*
 * Writer thread: the only code that touches the trace_writer after the session starts.
 * Producers copy records into messages on a bounded FIFO; this thread interns their strings
 * and stacks, appends them, and flushes a frame at least every 500 ms so a crash loses little.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mono_clock.h"
#include "record_fields.h"
#include "trace_writer.h"
#include "writer_thread.h"

#define WT_FLUSH_AGE_NS (500ull * 1000 * 1000)
#define WT_WAIT_MS 100
#define WT_LEVEL_FASTEST XPU_WRITER_LEVEL_FASTEST
/* Foreign string ids above this are refused rather than growing a map without bound. */
#define WT_FOREIGN_MAX_ID (1u << 22)

enum wt_msg_kind {
	WT_MSG_NATIVE = 1,
	WT_MSG_FOREIGN = 2,
	WT_MSG_SOURCE_CLOSED = 3,
	WT_MSG_FINISH = 4,
};

struct wt_msg {
	struct wt_msg *next;
	enum wt_msg_kind kind;
	size_t bytes;			/* accounted against the queue bound */
	/* NATIVE */
	uint16_t type;
	uint64_t ts_ns;
	uint32_t body_size;		/* body and tail are contiguous in data */
	uint32_t tail_size;
	unsigned int nr_str;
	uint32_t str_off[WT_MAX_STR_FIXUPS];
	uint32_t str_len[WT_MAX_STR_FIXUPS];	/* strings follow body+tail in data */
	bool has_stack;
	uint32_t stack_off;
	uint16_t nr_kernel, nr_user;	/* ips follow the strings, 8-aligned */
	uint16_t nr_py, py_flags;	/* Python frames follow the ips */
	uint32_t py_off;
	/* FOREIGN / SOURCE_CLOSED */
	uint32_t source_id;
	uint32_t len;
	/* FINISH */
	const struct xpu_stat_entry *extra;
	unsigned int nr_extra;
	uint64_t data[];
};

struct foreign_source {
	struct foreign_source *next;
	uint32_t id;
	uint32_t *map;			/* local string id -> global id */
	uint32_t map_len;
};

struct writer_thread {
	struct trace_writer *w;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t space;		/* the writer took the queue: room for waiting producers */
	struct wt_msg *head, *tail;
	size_t queued_bytes;
	size_t max_bytes;
	bool fixed_level;		/* no faster level for a backlog */
	_Atomic uint64_t dropped;
	_Atomic int write_error;	/* first write error (negative errno), for the main loop */
	uint64_t dropped_reported;	/* writer thread only */
	uint64_t lost[WT_LOST_SOURCES];	/* writer thread only: LOST counts written */
	uint64_t samples;		/* writer thread only: CPU_SAMPLE records written */
	struct foreign_source *sources;	/* writer thread only */
	int result;
	uint8_t *scratch;		/* writer thread only: body copies for remapping */
	size_t scratch_len;
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * How long a foreign batch waits for room before it is dropped. The CUPTI receiver's thread
 * waits, which stops it reading the socket, which makes the injected library's send wait in
 * turn: back-pressure rather than a drop while the writer catches up (a 600k-kernel burst at
 * shutdown lost its final FLUSHED record here before).
 */
#define WT_FOREIGN_WAIT_MS 2000

static int enqueue(struct writer_thread *wt, struct wt_msg *m, bool must_keep, uint64_t nr_recs)
{
	pthread_mutex_lock(&wt->lock);
	if (!must_keep && m->kind == WT_MSG_FOREIGN &&
	    wt->queued_bytes + m->bytes > wt->max_bytes) {
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += WT_FOREIGN_WAIT_MS / 1000;
		dl.tv_nsec += (WT_FOREIGN_WAIT_MS % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		while (wt->queued_bytes + m->bytes > wt->max_bytes &&
		       pthread_cond_timedwait(&wt->space, &wt->lock, &dl) == 0)
			;
	}
	if (!must_keep && wt->queued_bytes + m->bytes > wt->max_bytes) {
		pthread_mutex_unlock(&wt->lock);
		atomic_fetch_add(&wt->dropped, nr_recs);
		free(m);
		return -EAGAIN;
	}
	m->next = NULL;
	if (wt->tail)
		wt->tail->next = m;
	else
		wt->head = m;
	wt->tail = m;
	wt->queued_bytes += m->bytes;
	pthread_cond_signal(&wt->cond);
	pthread_mutex_unlock(&wt->lock);
	return 0;
}

int writer_thread__submit(struct writer_thread *wt, const struct wt_rec *r)
{
	size_t strs = 0, size;
	struct wt_msg *m;
	uint8_t *p;
	unsigned int i;

	if (r->nr_str > WT_MAX_STR_FIXUPS)
		return -EINVAL;
	for (i = 0; i < r->nr_str; i++) {
		if (r->str[i].off + 4 > r->body_size)
			return -EINVAL;
		strs += r->str[i].len;
	}
	if (r->has_stack && r->stack_off + 4 > r->body_size)
		return -EINVAL;
	if (r->nr_py && (r->py_off + 4 > r->body_size || r->nr_py > XPU_PY_MAX_FRAMES))
		return -EINVAL;
	size = align8((size_t)r->body_size + r->tail_size + strs);
	if (r->has_stack)
		size += ((size_t)r->nr_kernel + r->nr_user) * sizeof(uint64_t);
	size += (size_t)r->nr_py * sizeof(uint64_t);
	m = malloc(sizeof(*m) + size);
	if (!m) {
		atomic_fetch_add(&wt->dropped, 1);
		return -ENOMEM;
	}
	memset(m, 0, sizeof(*m));
	m->kind = WT_MSG_NATIVE;
	m->bytes = sizeof(*m) + size;
	m->type = r->type;
	m->ts_ns = r->ts_ns;
	m->body_size = r->body_size;
	m->tail_size = r->tail_size;
	p = (uint8_t *)m->data;
	memcpy(p, r->body, r->body_size);
	p += r->body_size;
	if (r->tail_size) {
		memcpy(p, r->tail, r->tail_size);
		p += r->tail_size;
	}
	m->nr_str = r->nr_str;
	for (i = 0; i < r->nr_str; i++) {
		m->str_off[i] = r->str[i].off;
		m->str_len[i] = r->str[i].len;
		memcpy(p, r->str[i].s, r->str[i].len);
		p += r->str[i].len;
	}
	if (r->has_stack) {
		m->has_stack = true;
		m->stack_off = r->stack_off;
		m->nr_kernel = r->nr_kernel;
		m->nr_user = r->nr_user;
		p = (uint8_t *)m->data + align8((size_t)r->body_size + r->tail_size + strs);
		memcpy(p, r->ips, ((size_t)r->nr_kernel + r->nr_user) * sizeof(uint64_t));
	}
	if (r->nr_py) {
		m->nr_py = r->nr_py;
		m->py_flags = r->py_flags;
		m->py_off = r->py_off;
		p = (uint8_t *)m->data + align8((size_t)r->body_size + r->tail_size + strs) +
		    (r->has_stack ? ((size_t)r->nr_kernel + r->nr_user) * sizeof(uint64_t) : 0);
		memcpy(p, r->py_frames, (size_t)r->nr_py * sizeof(uint64_t));
	}
	return enqueue(wt, m, r->must_keep, 1);
}

static uint64_t count_foreign(const void *records, size_t len)
{
	const uint8_t *p = records;
	uint64_t n = 0;
	size_t off = 0;

	while (off + sizeof(struct xpu_record_header) <= len) {
		const struct xpu_record_header *h = (const void *)(p + off);

		if (h->size < sizeof(*h) || h->size > len - off)
			break;
		off += h->size;
		n++;
	}
	return n ? n : 1;
}

int writer_thread__submit_foreign(struct writer_thread *wt, uint32_t source_id,
				  const void *records, size_t len)
{
	struct wt_msg *m;

	if (len > UINT32_MAX)
		return -EINVAL;
	m = malloc(sizeof(*m) + len);
	if (!m) {
		atomic_fetch_add(&wt->dropped, count_foreign(records, len));
		return -ENOMEM;
	}
	memset(m, 0, sizeof(*m));
	m->kind = WT_MSG_FOREIGN;
	m->bytes = sizeof(*m) + len;
	m->source_id = source_id;
	m->len = len;
	memcpy(m->data, records, len);
	return enqueue(wt, m, false, count_foreign(records, len));
}

void writer_thread__source_closed(struct writer_thread *wt, uint32_t source_id)
{
	struct wt_msg *m = calloc(1, sizeof(*m));

	if (!m)
		return;
	m->kind = WT_MSG_SOURCE_CLOSED;
	m->bytes = sizeof(*m);
	m->source_id = source_id;
	enqueue(wt, m, true, 0);
}

int writer_thread__error(struct writer_thread *wt)
{
	return atomic_load(&wt->write_error);
}

uint64_t writer_thread__dropped(struct writer_thread *wt)
{
	return atomic_load(&wt->dropped);
}

/* ---- writer thread side --------------------------------------------------------------- */

/* Tallies a LOST record on its way into the file, so the closing lines match the report. */
static void count_lost(struct writer_thread *wt, uint16_t type, const void *body, uint32_t size)
{
	struct xpu_rec_lost l;

	if (type != XPU_REC_LOST || size < sizeof(l))
		return;
	memcpy(&l, body, sizeof(l));
	wt->lost[l.source < WT_LOST_SOURCES ? l.source : 0] += l.count;
}

static void write_native(struct writer_thread *wt, struct wt_msg *m)
{
	uint8_t *body = (uint8_t *)m->data;
	const uint8_t *s = body + m->body_size + m->tail_size;
	unsigned int i;
	uint32_t id;

	for (i = 0; i < m->nr_str; i++) {
		id = m->str_len[i] ? trace_writer__intern_string(wt->w, (const char *)s,
								 m->str_len[i]) : 0;
		memcpy(body + m->str_off[i], &id, sizeof(id));
		s += m->str_len[i];
	}
	s = body + align8((size_t)(s - body));
	if (m->has_stack) {
		const uint64_t *ips = (const uint64_t *)s;

		id = trace_writer__intern_stack(wt->w, ips, m->nr_kernel, m->nr_user);
		memcpy(body + m->stack_off, &id, sizeof(id));
		s += ((size_t)m->nr_kernel + m->nr_user) * sizeof(uint64_t);
	}
	if (m->nr_py) {
		id = trace_writer__intern_py_stack(wt->w, (const uint64_t *)s, m->nr_py, m->py_flags);
		memcpy(body + m->py_off, &id, sizeof(id));
	}
	if (trace_writer__append(wt->w, m->type, body, m->body_size + m->tail_size, m->ts_ns))
		return;
	count_lost(wt, m->type, body, m->body_size);
	wt->samples += m->type == XPU_REC_CPU_SAMPLE;
}

static struct foreign_source *source_get(struct writer_thread *wt, uint32_t id)
{
	struct foreign_source *src;

	for (src = wt->sources; src; src = src->next)
		if (src->id == id)
			return src;
	src = calloc(1, sizeof(*src));
	if (!src)
		return NULL;
	src->id = id;
	src->next = wt->sources;
	wt->sources = src;
	return src;
}

static void source_free(struct writer_thread *wt, uint32_t id)
{
	struct foreign_source **pp, *src;

	for (pp = &wt->sources; (src = *pp); pp = &src->next) {
		if (src->id == id) {
			*pp = src->next;
			free(src->map);
			free(src);
			return;
		}
	}
}

static int source_set(struct foreign_source *src, uint32_t local, uint32_t global)
{
	uint32_t *map, n;

	if (local >= WT_FOREIGN_MAX_ID)
		return -ERANGE;
	if (local >= src->map_len) {
		n = src->map_len ? src->map_len : 256;
		while (n <= local)
			n *= 2;
		map = realloc(src->map, n * sizeof(*map));
		if (!map)
			return -ENOMEM;
		memset(map + src->map_len, 0, (n - src->map_len) * sizeof(*map));
		src->map = map;
		src->map_len = n;
	}
	src->map[local] = global;
	return 0;
}

/* GPU records start with their (start) time; GPU_DEVICE has none. */
static uint64_t foreign_ts(uint16_t type, const uint8_t *body, uint32_t size)
{
	uint64_t ts = 0;

	if (type < XPU_REC_GPU_KERNEL || type > XPU_REC_GPU_PROCESS || size < 8)
		return 0;
	memcpy(&ts, body, sizeof(ts));
	return ts;
}

static void write_foreign(struct writer_thread *wt, struct wt_msg *m)
{
	const uint8_t *p = (const uint8_t *)m->data;
	struct foreign_source *src = source_get(wt, m->source_id);
	uint32_t offs[16], id, body_size;
	size_t off = 0, n, i;

	while (off + sizeof(struct xpu_record_header) <= m->len) {
		struct xpu_record_header h;
		const uint8_t *body;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > m->len - off || (h.size & 7)) {
			/* A malformed batch: the rest cannot be framed, count it as lost. */
			atomic_fetch_add(&wt->dropped, 1);
			return;
		}
		body = p + off + sizeof(h);
		body_size = h.size - sizeof(h);
		off += h.size;
		if (h.type == XPU_REC_STRING) {
			struct xpu_rec_string s;

			if (body_size < sizeof(s))
				continue;
			memcpy(&s, body, sizeof(s));
			if (s.len > body_size - sizeof(s) || !src)
				continue;
			id = trace_writer__intern_string(wt->w, (const char *)body + sizeof(s), s.len);
			if (source_set(src, s.id, id))
				atomic_fetch_add(&wt->dropped, 1);
			continue;
		}
		/* Definitions with file-global ids can only come from this process. */
		if (h.type == XPU_REC_STACK || h.type == XPU_REC_DSO || h.type == XPU_REC_MAPPING ||
		    h.type == XPU_REC_SESSION || h.type == XPU_REC_STATS)
			continue;
		if (body_size > wt->scratch_len) {
			uint8_t *b = realloc(wt->scratch, body_size);

			if (!b)
				continue;
			wt->scratch = b;
			wt->scratch_len = body_size;
		}
		memcpy(wt->scratch, body, body_size);
		n = xpu_record_string_fields(h.type, offs, 16);
		for (i = 0; i < n; i++) {
			uint32_t local;

			if (offs[i] + 4 > body_size)
				continue;
			memcpy(&local, wt->scratch + offs[i], 4);
			id = (src && local < src->map_len) ? src->map[local] : 0;
			memcpy(wt->scratch + offs[i], &id, 4);
		}
		if (!trace_writer__append(wt->w, h.type, wt->scratch, body_size,
					  foreign_ts(h.type, wt->scratch, body_size)))
			count_lost(wt, h.type, wt->scratch, body_size);
	}
}

static void report_drops(struct writer_thread *wt)
{
	uint64_t d = atomic_load(&wt->dropped);
	struct xpu_rec_lost lost = { 0 };

	if (d == wt->dropped_reported)
		return;
	lost.ts_ns = clock_mono_ns();
	lost.source = XPU_LOST_WRITER;
	lost.count = d - wt->dropped_reported;
	wt->dropped_reported = d;
	if (!trace_writer__append(wt->w, XPU_REC_LOST, &lost, sizeof(lost), lost.ts_ns))
		count_lost(wt, XPU_REC_LOST, &lost, sizeof(lost));
}

static void write_stats(struct writer_thread *wt, struct wt_msg *m)
{
	struct trace_writer_stats st;
	struct {
		struct xpu_rec_stats hdr;
		struct xpu_stat_entry e[XPU_STATS_MAX];
	} rec;
	unsigned int n = 0, i;

	trace_writer__get_stats(wt->w, &st);
	/* the others' counters, then the writer's own, its rows being the last written ones */
	for (i = 0; i < m->nr_extra && n < XPU_STATS_MAX; i++)
		rec.e[n++] = m->extra[i];
	if (n + 3 <= XPU_STATS_MAX) {
		rec.e[n++] = (struct xpu_stat_entry){ .id = XPU_STAT_WRITER_BYTES_RAW,
						      .value = st.raw_bytes };
		rec.e[n++] = (struct xpu_stat_entry){ .id = XPU_STAT_WRITER_BYTES_COMPRESSED,
						      .value = st.file_bytes };
		rec.e[n++] = (struct xpu_stat_entry){ .id = XPU_STAT_WRITER_FRAMES_FAST,
						      .value = st.frames_fast };
	}
	rec.hdr.count = n;
	rec.hdr.reserved = 0;
	trace_writer__append(wt->w, XPU_REC_STATS, &rec,
			     sizeof(rec.hdr) + n * sizeof(rec.e[0]), 0);
}

/*
 * The zstd level follows the backlog. Compression is most of the writer's time (two thirds of
 * its thread in a profile of bench/writer_ranks.py's stack-copy run: two processes launching
 * 65k times a second each, 8 KiB of stack with every launch, 1.1 GB/s of records): at level 3
 * it fell behind and the queue dropped 10,256 launch records a run (median of 5). A backlog of an eighth of
 * the queue takes level 1, of a quarter zstd's fast level -5, which compresses such records a
 * few times faster for a somewhat larger file; under a sixteenth the configured level comes
 * back (in between, the level stays as it was, so that it does not flap).
 * The frames written faster are counted (writer_frames_fast).
 */
int writer_thread__level_for_backlog(size_t backlog, size_t max_bytes, int now)
{
	if (backlog >= max_bytes / 4)
		return WT_LEVEL_FASTEST;
	if (backlog >= max_bytes / 8)
		return now < 0 ? now : 1;	/* already faster: kept */
	if (backlog < max_bytes / 16)
		return 0;
	return now;	/* between: as it was */
}

static void *writer_main(void *arg)
{
	int level = 0;
	struct writer_thread *wt = arg;
	struct wt_msg *m;
	struct timespec dl;
	bool done = false;

	while (!done) {
		pthread_mutex_lock(&wt->lock);
		if (!wt->head) {
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_nsec += WT_WAIT_MS * 1000000L;
			if (dl.tv_nsec >= 1000000000L) {
				dl.tv_sec++;
				dl.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&wt->cond, &wt->lock, &dl);
		}
		m = wt->head;
		if (!wt->fixed_level)
			level = writer_thread__level_for_backlog(wt->queued_bytes, wt->max_bytes, level);
		wt->head = wt->tail = NULL;
		wt->queued_bytes = 0;
		pthread_cond_broadcast(&wt->space);
		pthread_mutex_unlock(&wt->lock);
		trace_writer__set_level(wt->w, level);

		while (m) {
			struct wt_msg *next = m->next;

			switch (m->kind) {
			case WT_MSG_NATIVE:
				write_native(wt, m);
				break;
			case WT_MSG_FOREIGN:
				write_foreign(wt, m);
				break;
			case WT_MSG_SOURCE_CLOSED:
				source_free(wt, m->source_id);
				break;
			case WT_MSG_FINISH:
				report_drops(wt);
				write_stats(wt, m);
				done = true;
				break;
			}
			free(m);
			m = next;
		}
		report_drops(wt);
		trace_writer__flush_if_older(wt->w, clock_mono_ns(), WT_FLUSH_AGE_NS);
		if (!atomic_load(&wt->write_error))
			atomic_store(&wt->write_error, trace_writer__error(wt->w));
	}
	return NULL;
}

struct writer_thread *writer_thread__start(struct trace_writer *w, size_t max_queued_bytes)
{
	struct writer_thread *wt = calloc(1, sizeof(*wt));
	int err;

	if (!wt)
		return NULL;
	wt->w = w;
	wt->max_bytes = max_queued_bytes;
	/* XPU_WRITER_FIXED_LEVEL=1: the trace's level whatever the backlog (bench/writer_ranks.py) */
	wt->fixed_level = getenv("XPU_WRITER_FIXED_LEVEL") &&
			  !strcmp(getenv("XPU_WRITER_FIXED_LEVEL"), "1");
	pthread_mutex_init(&wt->lock, NULL);
	pthread_cond_init(&wt->cond, NULL);
	pthread_cond_init(&wt->space, NULL);
	err = pthread_create(&wt->thread, NULL, writer_main, wt);
	if (err) {
		free(wt);
		errno = err;
		return NULL;
	}
	return wt;
}

int writer_thread__finish(struct writer_thread *wt, const struct xpu_stat_entry *extra,
			  unsigned int nr_extra, struct wt_summary *sum)
{
	struct trace_writer_stats st;
	struct wt_msg *m = calloc(1, sizeof(*m));
	struct foreign_source *src;
	int err;

	if (!m)
		return -ENOMEM;
	m->kind = WT_MSG_FINISH;
	m->bytes = sizeof(*m);
	m->extra = extra;
	m->nr_extra = nr_extra;
	enqueue(wt, m, true, 0);
	pthread_join(wt->thread, NULL);
	trace_writer__flush(wt->w);
	trace_writer__get_stats(wt->w, &st);
	err = trace_writer__close(wt->w);
	if (sum) {
		memcpy(sum->lost, wt->lost, sizeof(sum->lost));
		sum->samples = wt->samples;
		sum->file_bytes = st.file_bytes + (err ? 0 : sizeof(struct xpu_trailer));
	}
	while ((src = wt->sources)) {
		wt->sources = src->next;
		free(src->map);
		free(src);
	}
	/* Producers must be stopped by now; anything queued after FINISH is discarded. */
	while (wt->head) {
		struct wt_msg *next = wt->head->next;

		free(wt->head);
		wt->head = next;
	}
	free(wt->scratch);
	pthread_mutex_destroy(&wt->lock);
	pthread_cond_destroy(&wt->cond);
	pthread_cond_destroy(&wt->space);
	free(wt);
	return err;
}
