// SPDX-License-Identifier: MIT
/*
 * Builds the -g cfi unwind table of each file named (record/cfi_build.c, the code xpu-record
 * runs on its worker thread) and prints one line per file, for bench/cfi_tables.py:
 *
 *   cfi_tables [-r REPS] FILE...
 *   FILE exec_bytes eh_bytes rows table_bytes unsupported_rows build_ns_min build_ns_median
 *        peak_kib
 *
 * exec_bytes: the executable segments' size; eh_bytes: .eh_frame (or .debug_frame) size;
 * peak_kib: how far the builds raised the process's peak RSS (VmHWM: run one file per process
 * for a figure per file). A
 * file without a table prints "FILE error MESSAGE". Needs no root and no BPF: the map load
 * that xpu-record adds is measured by the recording's own cfi_build_ns.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi_build.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The process's peak resident set (VmHWM), in KiB; 0 if unknown. */
static unsigned long peak_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long kib = 0;
	char line[256];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Size of the section that the table is built from. */
static uint64_t unwind_bytes(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	uint64_t eh = 0, dbg = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf)
		return 0;
	if (!elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
				continue;
			if (!strcmp(name, ".eh_frame"))
				eh = sh.sh_size;
			else if (!strcmp(name, ".debug_frame"))
				dbg = sh.sh_size;
		}
	}
	elf_end(elf);
	return eh ? eh : dbg;
}

static int bench_file(const char *path, int reps)
{
	uint64_t *ns = calloc((size_t)reps, sizeof(*ns)), exec = 0;
	unsigned long hwm0 = peak_kib();
	struct cfi_table t;
	int fd, i, err = 0;

	if (!ns)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	for (i = 0; i < reps; i++) {
		uint64_t t0 = now_ns();

		err = cfi_table__build(fd, &t);
		ns[i] = now_ns() - t0;
		if (err)
			goto cleanup;
		if (i + 1 < reps)
			cfi_table__free(&t);
	}
	for (i = 0; i < t.nloads; i++)
		exec += t.loads[i].filesz;
	qsort(ns, (size_t)reps, sizeof(*ns), cmp_u64);
	printf("%s %llu %llu %zu %zu %llu %llu %llu %lu\n", path, (unsigned long long)exec,
	       (unsigned long long)unwind_bytes(fd), t.nr, t.nr * sizeof(*t.rows),
	       (unsigned long long)t.st.unsupported_rows, (unsigned long long)ns[0],
	       (unsigned long long)ns[reps / 2], peak_kib() - hwm0);
	cfi_table__free(&t);
cleanup:
	if (err)
		printf("%s error %s\n", path, strerror(-err));
	if (fd >= 0)
		close(fd);
	free(ns);
	return err;
}

int main(int argc, char **argv)
{
	int reps = 3, i = 1, bad = 0;

	if (argc > 2 && !strcmp(argv[1], "-r")) {
		reps = atoi(argv[2]);
		i = 3;
	}
	if (reps < 1 || reps > 1000 || i >= argc) {
		fprintf(stderr, "usage: cfi_tables [-r REPS (1..1000)] FILE...\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	for (; i < argc; i++)
		bad |= bench_file(argv[i], reps) != 0;
	return bad;
}
