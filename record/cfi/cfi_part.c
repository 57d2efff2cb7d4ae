// SPDX-License-Identifier: MIT
/*
 * -g cfi as a part of the recorder (part.h): the unwind-table builder (with its cache of
 * tables across recordings) in the process table. The command's own files are read ahead
 * while the probes attach, and its start waits a bounded time for their tables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_setup.h"
#include "cfi_cache.h"
#include "cfi_loader.h"
#include "part.h"
#include "stat_sink.h"

struct cfi_part {
	struct cfi_loader *cfi;
	struct cfi_cache *cache;	/* NULL: none (--no-cache, or it could not be opened) */
};

static bool cfi_part__wanted(const struct rec_ctx *c)
{
	return c->cfg->cfi;
}

/* The table cache, or NULL, said once: every table is then built, as without a cache. */
static struct cfi_cache *open_cache(const struct record_config *cfg)
{
	struct cfi_cache *cache = NULL;
	char dir[4096];
	int err = cfg->cache_dir ? 0 : cfi_cache__default_dir(dir, sizeof(dir));

	if (!err)
		cache = cfi_cache__open(cfg->cache_dir ? cfg->cache_dir : dir,
					(uint64_t)CFI_CACHE_DEFAULT_MB << 20, &err);
	if (!cache)
		log_err("no unwind-table cache (%s): %s",
			cfg->cache_dir ? cfg->cache_dir : "the default directory",
			err == -EPERM ? "not owned by this user, or writable by others" : strerror(-err));
	return cache;
}

static int cfi_part__setup(struct rec_ctx *c, void **state)
{
	const struct record_config *cfg = c->cfg;
	struct cfi_part *p = calloc(1, sizeof(*p));
	int tables_fd, procs_fd;

	if (!p) {
		log_err("cannot start the unwind-table builder");
		return -1;
	}
	bpf_state__cfi_fds(c->bpf, &tables_fd, &procs_fd);
	if (!cfg->no_cache)
		p->cache = open_cache(cfg);
	/* the walk share before the loader's first table: the vdso's is queued as it starts */
	p->cfi = cfi_loader__new(tables_fd, procs_fd, XPU_CFI_MEM_BYTES, c->ws, p->cache);
	if (!p->cfi) {
		log_err("cannot start the unwind-table builder");
		cfi_cache__free(p->cache);
		free(p);
		return -1;
	}
	/* built while the probes attach; the start waits for the rest */
	if (!cfg->attach_pid && cfi_loader__prepare(p->cfi, cfg->cmd[0]) < 0)
		log_info("cfi: cannot read %s's libraries ahead", cfg->cmd[0]);
	*state = p;
	return 0;
}

static struct map_handler *cfi_part__handler(void *state)
{
	struct cfi_part *p = state;

	return cfi_loader__handler(p->cfi);
}

/*
 * A launched command is still behind its gate: it starts once its first tables are in. An
 * attached process (-p) has had its mappings read (the procmaps part, before this start), so
 * its files' tables are queued: CUPTI is started there (cupti_rx's start, after this one) only
 * once they are built, or the wait ran out (counted), so that its first launches are not
 * walked without tables (each then a stack copy for the report to unwind, issue 40).
 */
static int cfi_part__start(void *state, struct rec_ctx *c)
{
	struct cfi_part *p = state;
	uint64_t held;

	held = cfi_loader__wait(p->cfi, XPU_CFI_START_WAIT_NS);
	log_info("cfi: %s held %.1f ms for the first tables",
		 c->cfg->attach_pid ? "GPU collection" : "start", held / 1e6);
	return 0;
}

/* The walk's counters (BPF's and the libraries'), then the builder's. */
static void put_walks(struct stat_sink *sink, const uint64_t *cnt)
{
	stat_sink__put(sink, XPU_STAT_CFI_WALKS, cnt[XPU_CNT_CFI_WALKS]);
	stat_sink__put(sink, XPU_STAT_CFI_FRAMES, cnt[XPU_CNT_CFI_FRAMES]);
	stat_sink__put(sink, XPU_STAT_CFI_END_OUTERMOST, cnt[XPU_CNT_CFI_END_OUTERMOST]);
	stat_sink__put(sink, XPU_STAT_CFI_END_FP, cnt[XPU_CNT_CFI_END_FP]);
	stat_sink__put(sink, XPU_STAT_CFI_END_READ, cnt[XPU_CNT_CFI_END_READ]);
	stat_sink__put(sink, XPU_STAT_CFI_END_LIMIT, cnt[XPU_CNT_CFI_END_LIMIT]);
	stat_sink__put(sink, XPU_STAT_CFI_END_BAD_SP, cnt[XPU_CNT_CFI_END_BAD_SP]);
	stat_sink__put(sink, XPU_STAT_CFI_FP_NO_MAP, cnt[XPU_CNT_CFI_FP_NO_MAP]);
	stat_sink__put(sink, XPU_STAT_CFI_FP_NO_TABLE, cnt[XPU_CNT_CFI_FP_NO_TABLE]);
	stat_sink__put(sink, XPU_STAT_CFI_FP_NO_ROW, cnt[XPU_CNT_CFI_FP_NO_ROW]);
	stat_sink__put(sink, XPU_STAT_CFI_FP_UNSUPPORTED, cnt[XPU_CNT_CFI_FP_UNSUPPORTED]);
	stat_sink__put(sink, XPU_STAT_CFI_NO_PROC, cnt[XPU_CNT_CFI_NO_PROC]);
	stat_sink__put(sink, XPU_STAT_CFI_SCAN, cnt[XPU_CNT_CFI_SCAN]);
	stat_sink__put(sink, XPU_STAT_CFI_ROW_CACHE_HITS, cnt[XPU_CNT_CFI_CACHE_HITS]);
	stat_sink__put(sink, XPU_STAT_CFI_STACK_READS, cnt[XPU_CNT_CFI_STACK_READS]);
}

static void put_builder(struct stat_sink *sink, const struct cfi_loader_stats *st)
{
	stat_sink__put(sink, XPU_STAT_CFI_FILES, st->files);
	stat_sink__put(sink, XPU_STAT_CFI_FILES_FAILED, st->files_failed);
	stat_sink__put(sink, XPU_STAT_CFI_FILES_OVER_BUDGET, st->files_over_budget);
	stat_sink__put(sink, XPU_STAT_CFI_ROWS, st->rows);
	stat_sink__put(sink, XPU_STAT_CFI_TABLE_BYTES, st->table_bytes);
	stat_sink__put(sink, XPU_STAT_CFI_BUILD_NS, st->build_ns);
	stat_sink__put(sink, XPU_STAT_CFI_BUILD_MAX_NS, st->build_max_ns);
	stat_sink__put(sink, XPU_STAT_CFI_FILES_SHARED, st->files_shared);
	stat_sink__put(sink, XPU_STAT_CFI_START_WAIT_NS, st->start_wait_ns);
	stat_sink__put(sink, XPU_STAT_CFI_START_WAIT_TIMEOUTS, st->start_wait_timeouts);
	stat_sink__put(sink, XPU_STAT_CFI_CACHE_HITS, st->cache_hits);
	stat_sink__put(sink, XPU_STAT_CFI_CACHE_MISSES, st->cache_misses);
	stat_sink__put(sink, XPU_STAT_CFI_CACHE_REJECTED, st->cache_rejected);
	stat_sink__put(sink, XPU_STAT_CFI_CACHE_WRITES, st->cache_writes);
	stat_sink__put(sink, XPU_STAT_CFI_CACHE_WRITE_ERRORS, st->cache_write_errors);
	stat_sink__put(sink, XPU_STAT_CFI_CACHE_EVICTED, st->cache_evicted);
	stat_sink__put(sink, XPU_STAT_CFI_FILES_REOPENED, st->files_reopened);
	stat_sink__put(sink, XPU_STAT_CFI_FILES_UNOPENED, st->files_unopened);
	stat_sink__put(sink, XPU_STAT_CFI_FDS_PEAK, st->fds_peak);
	stat_sink__put(sink, XPU_STAT_CFI_MAPPING_ENTRIES, st->map_entries);
}

static void cfi_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct cfi_part *p = state;
	struct cfi_loader_stats st = { 0 };

	cfi_loader__get_stats(p->cfi, &st);
	put_walks(sink, c->cnt);
	put_builder(sink, &st);
	if (c->cfg->copy_short_walks)
		stat_sink__put(sink, XPU_STAT_CFI_SHORT_COPIES, c->cnt[XPU_CNT_CFI_SHORT_COPIES]);
}

static void cfi_part__free(void *state)
{
	struct cfi_part *p = state;

	cfi_loader__free(p->cfi);
	cfi_cache__free(p->cache);
	free(p);
}

const struct rec_part cfi_part = {
	.name = "cfi",
	.required = true,
	.threads = true,
	.wanted = cfi_part__wanted,
	.setup = cfi_part__setup,
	.handler = cfi_part__handler,
	.start = cfi_part__start,
	.stats = cfi_part__stats,
	.free = cfi_part__free,
};
