// SPDX-License-Identifier: MIT
/* Several traces as one (see merge.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/warn.h"
#include "trace/clock_map.h"
#include "trace/load.h"
#include "trace/merge.h"

#define TASK_SHIFT 22		/* Linux's PID_MAX_LIMIT is 1 << 22 */
#define SAME_BOOT_NS 1000000000ll

/* What the first read of a trace tells: its ids, pids, host and clock. */
struct part_scan {
	struct tr_remap rm;
	char *host;
	struct part_clock clk;
	uint8_t uuid[16];	/* the recording's (file header): a copy has the same */
};

size_t trace_merge__align(const struct part_clock *c, const char *const *hosts, size_t n,
			  int64_t *shift)
{
	size_t i, j, ref = 0;

	for (i = 1; i < n; i++) {
		if (c[i].start_real < c[ref].start_real)
			ref = i;
	}
	for (i = 0; i < n; i++) {
		int64_t off = c[i].offset_ns;

		/* one host, one boot: one monotonic clock, which needs no realtime to align */
		for (j = 0; j < i; j++) {
			int64_t d = c[j].offset_ns - off;

			if (!strcmp(hosts[j], hosts[i]) && d < SAME_BOOT_NS && d > -SAME_BOOT_NS) {
				off = (int64_t)shift[j];	/* j's offset, kept below */
				break;
			}
		}
		shift[i] = off;
	}
	for (i = 0; i < n; i++) {
		if (i != ref)
			shift[i] -= shift[ref];
	}
	shift[ref] = 0;
	return ref;
}

/*
 * Each trace's share of the bound on the records kept (trace.h): the bound for all the files
 * together, split in proportion to their sizes. Fixed before either read, so that both reads
 * of a trace stop at the same record (0: a file of unknown size, bound by its own default).
 */
static void share_records(const char *const *paths, size_t n, uint64_t max_records,
			  uint64_t *share)
{
	uint64_t total = 0, all;
	struct stat sb;
	size_t i;

	for (i = 0; i < n; i++) {
		share[i] = !stat(paths[i], &sb) && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
		total = share[i] > UINT64_MAX - total ? UINT64_MAX : total + share[i];
	}
	all = trace__keep_bound(total, max_records);
	for (i = 0; i < n; i++) {
		if (!share[i] || all == UINT64_MAX) {
			share[i] = share[i] ? UINT64_MAX : 0;
			continue;
		}
		share[i] = (uint64_t)((unsigned __int128)all * share[i] / total);
		if (!share[i])	/* 0 would be the default */
			share[i] = 1;
	}
}

static int scan_one(struct part_scan *p, const char *path, uint64_t max_records, char *err,
		    size_t errlen)
{
	struct clock_map cm;
	struct trace t;
	const char *h;
	int ret;

	memset(p, 0, sizeof(*p));
	p->rm.collect = true;
	p->rm.max_records = max_records;
	ret = trace__load_remap(&t, path, &p->rm, err, errlen);
	if (ret)
		return ret;
	memcpy(p->uuid, t.hdr.uuid, sizeof(p->uuid));
	h = t.has_session ? trace__string(&t, t.session.host_str) : NULL;
	p->host = strdup(h ? h : "");
	ret = p->host ? clock_map__init(&cm, &t) : -ENOMEM;
	if (!ret) {
		p->clk.start_mono = trace__start(&t);
		p->clk.start_real = clock_map__realtime(&cm, p->clk.start_mono);
		p->clk.offset_ns = (int64_t)(p->clk.start_real - p->clk.start_mono);
		clock_map__free(&cm);
	}
	trace__free(&t);
	if (ret)
		snprintf(err, errlen, "%s: out of memory while loading", path);
	return ret;
}

/* base += add, refusing to wrap: ids of the next trace start after this one's. */
static int add_base(uint32_t *base, uint32_t add)
{
	if (add > UINT32_MAX - *base)
		return -ERANGE;
	*base += add;
	return 0;
}

/* The GPUs of each host after those of the hosts before it; one host's traces share theirs. */
static int place_devices(struct part_scan *p, size_t n)
{
	uint32_t next = 0, top;
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < i && strcmp(p[k].host, p[i].host); k++)
			;
		if (k < i)
			continue;	/* placed with its host's first trace */
		top = 0;
		for (k = i; k < n; k++) {
			if (!strcmp(p[k].host, p[i].host) && p[k].rm.max_device > top)
				top = p[k].rm.max_device;
		}
		for (k = i; k < n; k++) {
			if (!strcmp(p[k].host, p[i].host))
				p[k].rm.device_base = next;
		}
		if (top == UINT32_MAX || add_base(&next, top + 1))
			return -ERANGE;
	}
	return 0;
}

/* Ids, devices and pids of each trace after those of the ones before it. */
static int place(struct part_scan *p, size_t n, char *err, size_t errlen)
{
	struct kmap used = { 0 };
	uint32_t next[5] = { 0 };
	size_t i, j;
	bool ins, clash;
	int ret = 0;

	if (place_devices(p, n)) {
		snprintf(err, errlen, "the traces' GPU numbers do not fit one merged trace");
		return -ERANGE;
	}
	for (i = 0; i < n && !ret; i++) {
		struct tr_remap *rm = &p[i].rm;
		const struct kmap *ts = &rm->tasks;

		rm->string_base = next[0], rm->stack_base = next[1], rm->dso_base = next[2];
		rm->py_code_base = next[3], rm->py_stack_base = next[4];
		if (add_base(&next[0], rm->max_string) || add_base(&next[1], rm->max_stack) ||
		    add_base(&next[2], rm->max_dso) || add_base(&next[3], rm->max_py_code) ||
		    add_base(&next[4], rm->max_py_stack)) {
			snprintf(err, errlen, "the traces' ids do not fit one merged trace");
			ret = -ERANGE;
			break;
		}
		/* pids and tids: kept where no earlier trace used them, else moved by i << 22 */
		for (j = 0, clash = false; j < ts->cap && !clash; j++)
			clash = ts->used[j] && kmap__get(&used, ts->ka[j], 0);
		for (j = 0; clash && j < ts->cap && !ret; j++) {
			if (ts->used[j] && ts->ka[j] >> TASK_SHIFT) {
				snprintf(err, errlen, "trace %zu: pid %llu is over Linux's limit and another trace uses it",
					 i + 1, (unsigned long long)ts->ka[j]);
				ret = -ERANGE;
			}
		}
		if (clash)
			rm->task_base = (uint32_t)i << TASK_SHIFT;
		for (j = 0; !ret && j < ts->cap; j++) {
			if (!ts->used[j])
				continue;
			if (!kmap__put(&used, ts->ka[j] + rm->task_base, 0, 0, &ins)) {
				ret = -ENOMEM;
			} else if (!ins) {
				/* moved onto an earlier trace's pid over the limit: two processes as one */
				snprintf(err, errlen, "trace %zu: pid %llu collides with an earlier "
					 "trace's, and moved by +%u it lands on another trace's pid "
					 "%llu (over Linux's limit)", i + 1,
					 (unsigned long long)ts->ka[j], rm->task_base,
					 (unsigned long long)ts->ka[j] + rm->task_base);
				ret = -ERANGE;
			}
		}
		rm->skip_ksyms = i > 0;
	}
	kmap__free(&used);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory while merging %zu traces", n);
	return ret;
}

/*
 * One recording given twice (the same path, or a copy: the same uuid) is merged as two, every
 * event twice, its processes once as themselves and once moved (place()); a shell glob over a
 * folder and its copy does that by mistake. Said, not refused: a recording against itself is
 * also how its pids are made to collide on purpose (tests/unit/test_multi_trace.sh), and
 * reading it once would hide which name the user meant.
 */
static void same_recording(const struct part_scan *p, const char *const *paths, size_t n)
{
	static const uint8_t none[16];
	char a[WARN_STR_MAX + 4], b[WARN_STR_MAX + 4];
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++) {
			if (memcmp(p[i].uuid, p[j].uuid, sizeof(none)) ||
			    !memcmp(p[i].uuid, none, sizeof(none)))
				continue;
			warn__once("warning: %s and %s are the same recording (one uuid): its "
				   "events count twice, as two sets of processes", warn__cut(paths[j], a),
				   warn__cut(paths[i], b));
			break;
		}
	}
}

/* The merged status: counts summed, the worst end (with its reason) of any part. */
static void merge_status(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->nparts; i++) {
		const struct trace_reader_status *s = &t->parts[i].st;
		enum trace_reader_end end = t->st.end;

		if (!i || s->end > end) {
			t->st.end = s->end;
			snprintf(t->st.reason, sizeof(t->st.reason), "%.60s%s%.97s",
				 s->end != TRACE_END_CLEAN ? t->parts[i].path : "",
				 s->end != TRACE_END_CLEAN ? ": " : "", s->reason);
		}
		if (!i) {
			t->st.major = s->major;
			t->st.minor = s->minor;
		}
		t->st.frames_ok += s->frames_ok;
		t->st.records += s->records;
		t->st.bytes_valid += s->bytes_valid;
		t->st.file_bytes += s->file_bytes;
		t->st.unknown_records += s->unknown_records;
		if (s->last_ts_ns > t->st.last_ts_ns)
			t->st.last_ts_ns = s->last_ts_ns;
	}
}

/* The session of the part whose clocks map the axis; the end of the part that ended last. */
static void merge_session(struct trace *t, const struct tr_remap *rms)
{
	size_t i;

	for (i = 0; i < t->nparts; i++) {
		const struct tr_part *p = &t->parts[i];

		if (p->has_session && (!t->has_session || !rms[i].drop_clocks)) {
			t->session = p->session;
			t->has_session = true;
		}
		if (p->has_end && (!t->has_end || p->end.end_mono_ns > t->end.end_mono_ns)) {
			t->end = p->end;
			t->has_end = true;
		}
	}
}

/*
 * Reads n traces into one, each through its rms[i] (trace_merge__load computes them): one
 * t->parts entry per trace. 0 or negative errno with a message in err.
 */
static int load_parts(struct trace *t, const char *const *paths, struct tr_remap *rms, size_t n,
		      char *err, size_t errlen)
{
	size_t i, j;
	bool ins;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	t->parts = calloc(n ? n : 1, sizeof(*t->parts));
	if (!t->parts)
		return -ENOMEM;
	t->nparts = n;
	for (i = 0; i < n && !ret; i++) {
		struct tr_part *p = &t->parts[i];

		p->path = paths[i];
		p->rm = rms[i];
		p->rm.collect = false;
		memset(&p->rm.tasks, 0, sizeof(p->rm.tasks));	/* the caller's, not ours */
		t->cur_part = (uint32_t)i;
		t->rm = &rms[i];
		ret = load__file(t, paths[i], rms[i].max_records, &p->reader, err, errlen);
		if (p->reader)
			p->st = *trace_reader__status(p->reader);
		/* every pid and tid the part uses: which part a merged one came from */
		for (j = 0; !ret && j < rms[i].tasks.cap; j++) {
			if (rms[i].tasks.used[j] &&
			    !kmap__put(&t->part_of_task, rms[i].tasks.ka[j] + rms[i].task_base, 0,
				       (uint32_t)i, &ins))
				ret = -ENOMEM;
		}
	}
	t->rm = NULL;
	if (!ret) {
		merge_status(t);
		merge_session(t, rms);
		ret = load__finish(t, paths[0], err, errlen);
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory while loading %zu traces", n);
	if (ret)
		trace__free(t);
	return ret;
}

int trace_merge__load(struct trace *t, const char *const *paths, size_t n,
		      uint64_t max_records, char *err, size_t errlen)
{
	uint64_t *share = calloc(n ? n : 1, sizeof(*share));
	struct part_scan *p = calloc(n ? n : 1, sizeof(*p));
	struct part_clock *clk = calloc(n ? n : 1, sizeof(*clk));
	struct tr_remap *rms = calloc(n ? n : 1, sizeof(*rms));
	const char **hosts = calloc(n ? n : 1, sizeof(*hosts));
	int64_t *shift = calloc(n ? n : 1, sizeof(*shift));
	size_t i, ref, scanned = 0;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	if (!share || !p || !clk || !rms || !hosts || !shift) {
		snprintf(err, errlen, "out of memory while loading %zu traces", n);
		ret = -ENOMEM;
		goto out;
	}
	if (n > TRACE_PARTS_MAX) {
		snprintf(err, errlen, "%zu traces given: at most %d at once", n, TRACE_PARTS_MAX);
		ret = -EINVAL;
		goto out;
	}
	share_records(paths, n, max_records, share);
	for (i = 0; i < n && !ret; i++, scanned++)
		ret = scan_one(&p[i], paths[i], share[i], err, errlen);
	if (ret)
		goto out;
	same_recording(p, paths, n);
	for (i = 0; i < n; i++) {
		clk[i] = p[i].clk;
		hosts[i] = p[i].host;
	}
	ref = trace_merge__align(clk, hosts, n, shift);
	ret = place(p, n, err, errlen);
	if (ret)
		goto out;
	for (i = 0; i < n; i++) {
		rms[i] = p[i].rm;
		rms[i].collect = false;
		rms[i].shift_ns = shift[i];
		rms[i].drop_clocks = i != ref;
	}
	ret = load_parts(t, paths, rms, n, err, errlen);
out:
	for (i = 0; p && i < scanned; i++) {
		kmap__free(&p[i].rm.tasks);
		free(p[i].host);
	}
	free(share);
	free(p);
	free(clk);
	free(rms);
	free(hosts);
	free(shift);
	return ret;
}
