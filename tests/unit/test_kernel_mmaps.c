// SPDX-License-Identifier: MIT
/*
 * record/kernel_mmaps.c's store, fed records as the kernel writes them: past the bound on
 * entries the process that mapped least recently goes whole (a process that maps again is
 * the newest), an exec forgets the old image's mappings, and a long run of new processes past
 * the bound each costs one eviction, not a scan of the store (the old scan took minutes here).
 */
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "kernel_mmaps.h"
#include "maps_file.h"
#include "proc_table.h"
#include "unit.h"

static uint64_t now_ns = 1000;

/* The sample_id of sample_id_all with TID | TIME: the record's last 16 bytes. */
static size_t put_sample_id(uint8_t *at, uint32_t pid, uint64_t ts)
{
	memcpy(at, &pid, 4);
	memcpy(at + 4, &pid, 4);
	memcpy(at + 8, &ts, 8);
	return 16;
}

static void map(struct kernel_mmaps *km, uint32_t pid, uint64_t addr)
{
	/* 20 bytes with its NUL, padded to 24 */
	static const char path[] = "/usr/lib/libtest.so";
	uint8_t rec[256] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_MMAP2 };
	struct kernel_mmap2_body b = {
		.pid = pid, .tid = pid, .addr = addr, .len = 4096, .ino = 7,
		.prot = PROT_READ | PROT_EXEC,
	};
	size_t n = sizeof(h);

	memcpy(rec + n, &b, sizeof(b));
	n += sizeof(b);
	memcpy(rec + n, path, sizeof(path));
	n += 24;
	n += put_sample_id(rec + n, pid, now_ns++);
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	kernel_mmaps__take(km, rec, n);
}

static void exec_image(struct kernel_mmaps *km, uint32_t pid)
{
	uint8_t rec[64] = { 0 };
	struct perf_event_header h = {
		.type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC,
	};
	size_t n = sizeof(h);

	memcpy(rec + n, &pid, 4);
	memcpy(rec + n + 4, &pid, 4);
	memcpy(rec + n + 8, "test", 5);
	n += 8 + 16;
	n += put_sample_id(rec + n, pid, now_ns++);
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	kernel_mmaps__take(km, rec, n);
}

static int count_cb(void *ctx, const struct maps_entry *e)
{
	(void)ctx;
	(void)e;
	return 0;
}

static int kept(struct kernel_mmaps *km, uint32_t pid)
{
	return kernel_mmaps__each(km, (pid_t)pid, count_cb, NULL);
}

static uint64_t dropped(struct kernel_mmaps *km)
{
	struct kernel_mmaps_stats st;

	kernel_mmaps__get_stats(km, &st);
	return st.dropped;
}

int main(void)
{
	const uint32_t max = KERNEL_MMAPS_MAX_ENTRIES, procs = max / 4 - 1, first = 1000;
	struct proc_table *pt = proc_table__new();
	struct kernel_mmaps *km = kernel_mmaps__new(pt);
	struct timespec t0, t1;
	uint32_t i, k, last = 0;
	double s;

	CHECK(pt && km, "no store");
	if (!pt || !km)
		return unit_finish();
	/* four mappings a process, the bound less four */
	for (i = 0; i < procs; i++)
		for (k = 0; k < 4; k++)
			map(km, first + i, 0x400000 + k * 0x10000);
	CHECK(kept(km, first) == 4 && kept(km, first + procs - 1) == 4, "four mappings each");
	CHECK(dropped(km) == 0, "%llu dropped under the bound", (unsigned long long)dropped(km));
	/* the oldest maps again: now the newest, so the next oldest goes at the bound */
	map(km, first, 0x900000);
	for (k = 0; k < 4; k++)
		map(km, first + procs, 0x400000 + k * 0x10000);
	CHECK(kept(km, first) == 5, "the process that mapped again kept: %d", kept(km, first));
	CHECK(kept(km, first + 1) == 0, "the least recent process dropped: %d kept",
	      kept(km, first + 1));
	CHECK(kept(km, first + procs) == 4, "the new process kept: %d", kept(km, first + procs));
	CHECK(dropped(km) == 4, "%llu dropped, want the one process's 4",
	      (unsigned long long)dropped(km));
	/* an exec: the old image's mappings go, and the process keeps none to be dropped for */
	exec_image(km, first);
	CHECK(kept(km, first) == 0, "an exec forgets the old image: %d kept", kept(km, first));
	map(km, first, 0x500000);
	CHECK(kept(km, first) == 1, "the new image's mapping kept: %d", kept(km, first));
	/* three bounds' worth of new processes, one mapping each: one eviction a mapping */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 3 * max; i++) {
		last = first + procs + 1 + i;
		map(km, last, 0x400000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(kept(km, last) == 1, "the newest process kept");
	CHECK(kept(km, first + 2) == 0 && kept(km, first) == 0,
	      "the older processes went first");
	/*
	 * The store full of the last processes' single mappings: dropped is all added (N - 4,
	 * 1, 4, 1, 3N) less the 5 the exec forgot and the N kept.
	 */
	CHECK(dropped(km) == 3ull * max - 3, "%llu dropped, want %llu",
	      (unsigned long long)dropped(km), 3ull * max - 3);
	printf("%u mappings past the bound in %.3f s\n", 3 * max, s);
	kernel_mmaps__free(km);
	proc_table__free(pt);
	return unit_finish();
}
