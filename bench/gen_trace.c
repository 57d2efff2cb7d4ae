// SPDX-License-Identifier: MIT
/*
 * Writes a large CPU-sample trace for timing xpu-report alone (bench/report_speed.py):
 *
 *   gen_trace OUT.xpu [SAMPLES] [STACKS] [EXECUTABLE [LIBRARY...]]
 *
 * SAMPLES (default 10,000,000) CPU samples of one process with 8 threads, over STACKS distinct
 * stacks (default 4000) of depth 10..40. Frames are addresses in the functions (STT_FUNC with a
 * size, from .symtab, else .dynsym) of real ELF files, each mapped (its executable segment, as
 * /proc/PID/maps shows it) with its DSO record and real build-id, so the report symbolizes
 * every frame against the files as for a recorded trace. Default files (relative to the
 * current directory): build/xpu-report (with DWARF) and the libc, libdw and libzstd it links:
 * about 3000 functions.
 *
 * Every stack starts at the executable's _start and main. Stacks grow as a call tree (each new
 * stack shares a random prefix of an earlier one), return addresses are one of three call
 * sites per caller, leaf addresses vary inside the function, and samples pick stacks with a
 * Zipf-like weight (a few hot stacks, a long tail), as in real
 * profiles. Deterministic: a fixed seed. There is no perf.data generator to match it.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_buildid.h"
#define TRACE_BUILD_PROG "gen_trace"
#include "../tests/lib/trace_build.h"

#define BASE 0x555555554000ull
#define T0 1000000000ull
#define PID 4242
#define NTHREADS 8
#define PERIOD_NS 50000ull	/* 20 kHz */
#define MIN_DEPTH 10
#define MAX_DEPTH 40

struct func {
	uint64_t addr, size;	/* run-time address (base applied) */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static struct func *fn;
static size_t nfn, cap_fn;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * Adds the functions of one ELF file loaded at base (0 for a non-PIE executable) and writes its
 * DSO and MAPPING records. Sets *start_fn and *main_fn when the file defines them.
 */
static void add_module(const char *path, uint32_t dso_id, uint64_t base, uint64_t *start_fn,
		       uint64_t *main_fn)
{
	struct xpu_rec_dso dso = { 0 };
	struct xpu_rec_mapping m = { 0 };
	uint64_t x_vaddr = 0, x_end = 0, x_off = 0;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
	size_t before = nfn;
	struct stat st;
	unsigned char *p;
	int fd, i, want, n;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "gen_trace: %s: ", path);
		die("open");
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	eh = (const Elf64_Ehdr *)p;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		die("ELF64 check");
	if (eh->e_type == ET_EXEC)
		base = 0;
	ph = (const Elf64_Phdr *)(p + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			x_vaddr = ph[i].p_vaddr & ~0xfffull;
			x_off = ph[i].p_offset & ~0xfffull;
			x_end = (ph[i].p_vaddr + ph[i].p_memsz + 0xfff) & ~0xfffull;
			break;
		}
	if (!x_end)
		die("find executable segment");
	sh = (const Elf64_Shdr *)(p + eh->e_shoff);
	for (want = SHT_SYMTAB; want >= 0 && nfn == before;
	     want = want == SHT_SYMTAB ? SHT_DYNSYM : -1)
		for (i = 0; i < eh->e_shnum; i++) {
			const Elf64_Sym *sym;
			const char *names;
			size_t k, nsym;

			if ((int)sh[i].sh_type != want || !sh[i].sh_entsize)
				continue;
			sym = (const Elf64_Sym *)(p + sh[i].sh_offset);
			names = (const char *)(p + sh[sh[i].sh_link].sh_offset);
			nsym = sh[i].sh_size / sh[i].sh_entsize;
			for (k = 0; k < nsym; k++) {
				if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_shndx ||
				    sym[k].st_size < 8 || sym[k].st_value < x_vaddr ||
				    sym[k].st_value + sym[k].st_size > x_end)
					continue;
				if (!strcmp(names + sym[k].st_name, "_start"))
					*start_fn = base + sym[k].st_value + 4;
				if (!strcmp(names + sym[k].st_name, "main"))
					*main_fn = base + sym[k].st_value + 4;
				if (nfn == cap_fn) {
					cap_fn = cap_fn ? 2 * cap_fn : 1024;
					fn = realloc(fn, cap_fn * sizeof(*fn));
					if (!fn)
						die("realloc");
				}
				fn[nfn].addr = base + sym[k].st_value;
				fn[nfn].size = sym[k].st_size;
				nfn++;
			}
		}
	munmap(p, st.st_size);
	close(fd);

	dso.id = dso_id;
	dso.path_str = str(path);
	dso.kind = XPU_DSO_ELF;
	n = elf_buildid__read_path(path, dso.build_id, XPU_BUILD_ID_MAX);
	dso.build_id_len = n > 0 ? n : 0;
	dso.size_bytes = (uint64_t)st.st_size;
	rec(XPU_REC_DSO, &dso, sizeof(dso), 0);
	m.ts_ns = T0;
	m.pid = PID;
	m.dso_id = dso_id;
	m.start = base + x_vaddr;
	m.end = base + x_end;
	m.pgoff = x_off;
	m.prot = 5;	/* r-x */
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	fprintf(stderr, "gen_trace: %s: %zu functions\n", path, nfn - before);
}

int main(int argc, char **argv)
{
	static const char *const default_files[] = {
		"build/xpu-report", "/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libdw.so.1", "/lib/x86_64-linux-gnu/libzstd.so.1",
	};
	const char *out = argc > 1 ? argv[1] : NULL;
	uint64_t nsamples = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000ull;
	uint32_t nstacks = argc > 3 ? strtoul(argv[3], NULL, 10) : 4000;
	const char *const *files = argc > 4 ? (const char *const *)argv + 4 : default_files;
	int nfiles = argc > 4 ? argc - 4 : (int)(sizeof(default_files) / sizeof(*default_files));
	static const char cmdline[] = "gen-workload\0--synthetic";
	struct xpu_rec_session ses = { 0 };
	struct xpu_rec_session_end end = { 0 };
	struct xpu_rec_clock_sync cs = { T0, 1700000000000000000ull, T0 + 5, 100 };
	struct xpu_rec_task task = { 0 };
	uint64_t start_fn = 0, main_fn = 0, i, ts = T0, *cum, total = 0;
	uint64_t (*frames)[MAX_DEPTH];	/* root first */
	uint16_t *depth;
	uint32_t *ids, s;
	char name[32];
	int f;

	if (!out || !nstacks) {
		fprintf(stderr, "usage: gen_trace OUT.xpu [SAMPLES] [STACKS] [EXECUTABLE [LIBRARY...]]\n");
		return 2;
	}
	open_trace(out, NULL);

	ses.ncpu = 2;
	ses.page_size_bytes = 4096;
	ses.sample_freq_hz = 20000;
	ses.stack_mode = XPU_STACK_FP;
	ses.target_pid = PID;
	ses.start_mono_ns = T0;
	ses.start_realtime_ns = 1700000000000000000ull;
	ses.host_str = str("gen-trace-host");
	ses.kernel_str = str("6.1.0-synthetic #1 SMP");
	ses.arch_str = str("x86_64");
	ses.version_str = str("gen_trace");
	ses.cmdline_str = trace_writer__intern_string(w, cmdline, sizeof(cmdline));
	ses.options_str = str("gen_trace\0");
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	rec(XPU_REC_CLOCK_SYNC, &cs, sizeof(cs), T0);

	task.ts_ns = T0;
	task.kind = XPU_TASK_EXEC;
	task.pid = task.tid = PID;
	task.comm_str = str("gen-workload");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
	for (i = 1; i < NTHREADS; i++) {
		snprintf(name, sizeof(name), "worker-%u", (unsigned)i);
		task.kind = XPU_TASK_THREAD;
		task.tid = PID + i;
		task.comm_str = str(name);
		rec(XPU_REC_TASK, &task, sizeof(task), T0);
	}
	for (f = 0; f < nfiles; f++) {
		uint64_t s0 = 0, m0 = 0;

		add_module(files[f], (uint32_t)f + 1, f ? 0x7f0000000000ull + f * 0x10000000ull : BASE,
			   &s0, &m0);
		if (!f) {
			start_fn = s0;
			main_fn = m0;
		}
	}
	if (nfn < 2)
		die("find functions");

	/* call tree: stack k extends a random prefix of an earlier one; all start _start, main */
	depth = calloc(nstacks, sizeof(*depth));
	frames = calloc(nstacks, sizeof(*frames));
	ids = calloc(nstacks, sizeof(*ids));
	cum = calloc(nstacks, sizeof(*cum));
	if (!depth || !frames || !ids || !cum)
		die("calloc");
	for (s = 0; s < nstacks; s++) {
		unsigned d = MIN_DEPTH + rnd() % (MAX_DEPTH - MIN_DEPTH + 1), keep = 2, k;
		uint64_t ips[MAX_DEPTH];
		const struct func *fp;

		frames[s][0] = start_fn ? start_fn : fn[0].addr + 4;
		frames[s][1] = main_fn ? main_fn : fn[1].addr + 4;
		if (s) {
			uint32_t parent = rnd() % s;
			unsigned most = (unsigned)depth[parent] - 1 < d - 1 ? (unsigned)depth[parent] - 1 : d - 1;

			keep = 2 + rnd() % (most - 1);	/* 2 .. most */
			memcpy(frames[s], frames[parent], keep * sizeof(uint64_t));
		}
		for (k = keep; k < d - 1; k++) {
			/* a return address: one of 3 call sites in its caller */
			fp = &fn[rnd() % nfn];
			frames[s][k] = fp->addr + 4 + (fp->addr * 31 + rnd() % 3 * 17) % (fp->size - 4);
		}
		/* the leaf (sampled IP) lies anywhere in its function */
		fp = &fn[rnd() % nfn];
		frames[s][d - 1] = fp->addr + rnd() % fp->size;
		depth[s] = (uint16_t)d;
		for (k = 0; k < d; k++)
			ips[k] = frames[s][d - 1 - k];	/* leaf first */
		ids[s] = trace_writer__intern_stack(w, ips, 0, (uint16_t)d);
		if (!ids[s])
			die("stack");
		total += 1000000 / (s + 10);	/* Zipf-like weight */
		cum[s] = total;
	}
	for (i = 0; i < nsamples; i++) {
		struct xpu_rec_cpu_sample smp = { 0 };
		uint64_t r = rnd() % total;
		uint32_t lo = 0, hi = nstacks - 1;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (cum[mid] > r)
				hi = mid;
			else
				lo = mid + 1;
		}
		ts += PERIOD_NS / 2;	/* two CPUs */
		smp.ts_ns = ts;
		smp.pid = PID;
		smp.tid = PID + (uint32_t)(rnd() % NTHREADS);
		smp.stack_id = ids[lo];
		smp.cpu = (uint16_t)(i & 1);
		rec(XPU_REC_CPU_SAMPLE, &smp, sizeof(smp), ts);
	}
	end.end_mono_ns = ts + 1000;
	end.reason = XPU_END_TARGET_EXITED;
	rec(XPU_REC_SESSION_END, &end, sizeof(end), end.end_mono_ns);
	if (trace_writer__close(w))
		die("close");
	fprintf(stderr, "gen_trace: %llu samples, %u stacks, %zu functions\n",
		(unsigned long long)nsamples, nstacks, nfn);
	return 0;
}
