// SPDX-License-Identifier: MIT
/*
 * Writes the hostile traces of issues 18 and 28 for tests/unit/test_hostile.sh (valid frames and
 * CRCs, every record legal on its own):
 *   longname OUT          one API-name string of 1 MiB, named by 2,252 API calls
 *   files OUT DIR         DSOs named /dev/zero, /dev/null, /proc/kmsg, /proc/self/mem, a FIFO,
 *                         a directory and an empty file (DIR/fifo, DIR/dir, DIR/empty)
 *   escape OUT BIN        DSOs with BIN's build-id named ../../../../BIN, /escape-link,
 *                         /usr//bin/./copy, /usr/bin/copy and //usr/bin/copy (the test puts
 *                         a symlink and a copy under --symfs: `archive` packs the copy, once)
 *   deep OUT              a stack of 1,025 addresses and one of 1,024
 *   spanmaps OUT [N]      one mapping over the whole address space, 40,000 small ones under
 *                         it, and N (8,000) stacks of 100 addresses above the small ones: every
 *                         lookup once walked back over every mapping (issue 28)
 *   archive OUT           and OUT.xpa: 20 DSO records each of three build-ids, whose archive
 *                         entries are 16 MiB of 'A' (no ELF file), an ELF header and 16 MiB
 *                         for a file the trace says is 4 KiB, and an ELF header and 8 MiB
 *                         (issue 28: each record decompressed its entry, up to 8 GiB each)
 *   threads OUT           50,000 threads of pid 100, each sampled 4 times in a stack of 1,000
 *                         addresses: output past --max-output was still produced (jsonl),
 *                         and chrome held every thread's open frames (gigabytes)
 *   dsowarn OUT BIN       1,000 DSO records of BIN (its path and build-id), and 1,000 of one
 *                         1 MiB path with a build-id nowhere: `archive` wrote an entry per
 *                         record and a warning with the whole path per record (gigabytes)
 *   samefile OUT BIN      20,000 DSO records of BIN (one build-id): each loaded the file
 *                         again (memory, a descriptor each), and past the descriptor limit
 *                         frames lost their names
 *   procpaths OUT DIR     DSOs named /proc/self/cwd/victim.so, /proc/self/root/DIR/victim.so
 *                         and /proc/1/root/DIR/victim.so: files of the report's directory
 *                         and root, and another process's root, reached through /proc
 *   names OUT             a host, command line and thread name of 1 MiB each, and a kernel
 *                         with an empty name (pprof failed "out of memory" on it)
 *   pids OUT [P [D [T [L]]]]
 *                         P processes (20,000) of no name, each with a mapping of one file
 *                         and one sample in one stack of D addresses (250) in it, frames
 *                         named by a file name of L 'd's (190); and T threads (20,000) of
 *                         pid 100, one sample each in a stack of 1,024: each process's stack is
 *                         symbolized apart, each thread a pprof sample. The outputs grew as
 *                         processes (or threads) times depth: folded held every line's text
 *                         before the first was written, svg a node per frame of every
 *                         process, pprof every sample's locations (gigabytes for a 166 KB
 *                         trace; issue 31)
 *   records OUT [MIB]     MIB MiB (1024) of CPU samples all alike, in frames of 8 MiB that
 *                         zstd packs into about 1 KB each: every record was kept, gigabytes
 *                         of memory for a file of 100 KB (issue 31)
 *   ksyms OUT [MIB]       MIB MiB (1024, the most kept) of kallsyms text in KSYMS chunks, one
 *                         line repeated: kept, then copied and parsed by the symbolizer
 *   calltree OUT [N]      N stacks (100,000) of 127 frames through one function, F: 62
 *                         frames alike, a caller of its own, F, a callee of its own, 62
 *                         frames alike. `--callers F` and `--callees F` made a tree node per
 *                         frame of each stack (issue 31), for the top few frames they print
 *   pyruntimes OUT [R [S [K [P]]]]
 *                         R CPython runtimes (150,000) of P processes (1, pid 100 first), of K
 *                         versions (0: each another), and S samples of pid 100 (150,000) with
 *                         Python frames, each after its own runtime: each found by a walk
 *                         over every runtime, and info's lines compared every pair (issue 31)
 *   hashkeys OUT [N [S]]  N addresses (60,000) of one file, each in a mapping of its own,
 *                         whose file offsets all took one slot of the symbolizer's address
 *                         cache while its hash had no seed, one probe chain (issue 31); and
 *                         S stacks (400) of 1,024 frames through the last of them
 *   pidset OUT NAME PID.. a process NAME for each PID, sampled once in it: given as several
 *                         traces, one's pids moved past Linux's limit could land on another's
 *                         pid over that limit, two processes merged silently (issue 31)
 *   refs OUT              a JIT symbol and a driver ioctl naming strings no record defines,
 *                         a Python runtime and an autograd probe naming an undefined file:
 *                         those references went uncounted (issue 29; the record table's
 *                         fields now say which to count), beside one of each that resolves
 *   packruns OUT [N [D]]  and OUT.xpa: N stacks (1) of D addresses (1,024) of one file, and
 *                         a symbol pack giving each address a run of 256 frames (512 with
 *                         --inline): 262,144 frames a stack; svg recursed a level per frame
 *                         (a stack overflow), and every output's cost went with the frames;
 *                         N short stacks (D 16) named 4,096 frames from 16 addresses each
 *                         (issue 41)
 *   backward OUT [N]      N autograd evaluations (262,144) of one thread, each of its own class,
 *                         a sample in each on one stack of 1,024 addresses: backward
 *                         attribution derived a stack per sample outside --max-records
 *                         (gigabytes; issue 41)
 *   ctlnames OUT          a thread name, a host, a JIT symbol and a DSO path holding terminal
 *                         escapes, a C1 control, a newline and bytes that are no UTF-8:
 *                         text, folded, info and the messages wrote them raw (issue 41)
 *   graphs OUT [N]        CUDA graph node records (1.12) that no library would write: a chain of
 *                         N copies (100,000) of one captured node, copies in a loop, copies of
 *                         node 0 and of nodes never made, a node made twice, node 0, unknown
 *                         ops, a capture call without a launch; N replayed kernels on the
 *                         chain's far end and one on each of the others: none may get a
 *                         capture site but the one kernel on the chain's second node
 * Every DSO is mapped by pid 100 and sampled once (spanmaps, threads and pids map their own).
 */
#include <elf.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#define TRACE_BUILD_PROG "make_hostile"
#include "../lib/trace_build.h"
#include "../../report/sym/xpa.h"
#include "crc32c.h"
#include "elf_buildid.h"

#define T0 1000000000ull

static uint32_t next_dso = 1;

static const char *host = "hostile", *comm = "victim";
static uint32_t cmdline;

static void session(void)
{
	struct xpu_rec_session ses = { .ncpu = 1, .page_size_bytes = 4096, .sample_freq_hz = 99,
				       .stack_mode = XPU_STACK_FP, .target_pid = 100,
				       .start_mono_ns = T0 };
	struct xpu_rec_task task = { .ts_ns = T0, .kind = XPU_TASK_EXEC, .pid = 100, .tid = 100 };

	ses.host_str = str(host);
	ses.cmdline_str = cmdline;
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	task.comm_str = str(comm);
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
}

static void sample(uint64_t ts, uint32_t stack_id)
{
	struct xpu_rec_cpu_sample s = { .ts_ns = ts, .pid = 100, .tid = 100, .stack_id = stack_id };

	rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), ts);
}

/* A DSO at path (with build-id bid, n bytes), mapped at 0x10000000 * its id, sampled once. */
static void dso_sized(const char *path, const uint8_t *bid, int n, uint64_t size_bytes)
{
	struct xpu_rec_dso d = { .id = next_dso++, .kind = XPU_DSO_ELF, .size_bytes = size_bytes };
	struct xpu_rec_mapping m = { .ts_ns = T0, .pid = 100, .prot = 5 };
	uint64_t ip;

	d.path_str = str(path);
	if (n > 0) {
		memcpy(d.build_id, bid, n);
		d.build_id_len = n;
	}
	rec(XPU_REC_DSO, &d, sizeof(d), 0);
	m.dso_id = d.id;
	m.start = 0x10000000ull * d.id;
	m.end = m.start + 0x100000;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	ip = m.start + 0x1234;
	sample(T0 + 1000 * d.id, stack(&ip, 0, 1));
}

static void dso(const char *path, const uint8_t *bid, int n)
{
	dso_sized(path, bid, n, 0);
}

static void longname(void)
{
	static char name[1 << 20];
	struct xpu_rec_gpu_api a = { .pid = 100, .tid = 100, .cbid = 1 };
	uint32_t i;

	memset(name, 'A', sizeof(name) - 1);
	a.name_str = str(name);
	for (i = 0; i < 2252; i++) {
		a.start_ns = T0 + i * 1000ull;
		a.end_ns = a.start_ns + 500;
		a.corr_id = i + 1;
		rec(XPU_REC_GPU_API, &a, sizeof(a), a.start_ns);
	}
}

static void files(const char *dir)
{
	static const char *const fixed[] = { "/dev/zero", "/dev/null", "/proc/kmsg",
					     "/proc/self/mem" };
	static const char *const local[] = { "fifo", "dir", "empty" };
	char path[4096];
	size_t i;

	/* no build-ids: a file at the recorded path would be taken as it is */
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		dso(fixed[i], NULL, 0);
	for (i = 0; i < sizeof(local) / sizeof(local[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, local[i]);
		dso(path, NULL, 0);
	}
}

static void escape(const char *bin)
{
	uint8_t bid[XPU_BUILD_ID_MAX];
	int n = elf_buildid__read_path(bin, bid, sizeof(bid));
	char path[4096];

	if (n <= 0)
		die("build-id of BIN");
	snprintf(path, sizeof(path), "../../../..%s", bin);
	dso(path, bid, n);
	dso("/escape-link", bid, n);
	dso("/usr//bin/./copy", bid, n);
	/* one file, found by several records: `archive` writes one entry, under a clean name */
	dso("/usr/bin/copy", bid, n);
	dso("//usr/bin/copy", bid, n);
}

/* The writer refuses a stack over the limit: written as a raw record, as a hostile one would */
static void raw_stack(uint32_t id, const uint64_t *ips, uint16_t nu)
{
	struct xpu_rec_stack st = { .id = id, .nr_user = nu };

	if (trace_writer__append2(w, XPU_REC_STACK, &st, sizeof(st), ips, nu * 8u, 0))
		die("stack");
}

static void deep(void)
{
	static uint64_t ips[1025];
	size_t i;

	for (i = 0; i < 1025; i++)
		ips[i] = 0x400000 + i * 16;
	raw_stack(5000, ips, 1025);
	raw_stack(5001, ips, 1024);
	sample(T0 + 1, 5000);
	sample(T0 + 2, 5001);
}

static void spanmaps(uint32_t nstacks)
{
	enum { NMAPS = 40000, DEPTH = 100 };
	struct xpu_rec_dso d = { .id = 1, .kind = XPU_DSO_ELF };
	struct xpu_rec_mapping m = { .ts_ns = T0, .pid = 100, .dso_id = 1, .prot = 5 };
	uint64_t ips[DEPTH];
	uint32_t i, k;

	d.path_str = str("/nonexistent/span.so");
	rec(XPU_REC_DSO, &d, sizeof(d), 0);
	m.end = UINT64_MAX;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	for (i = 1; i <= NMAPS; i++) {
		m.start = 0x10000ull * i;
		m.end = m.start + 0x1000;
		rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	}
	for (i = 0; i < nstacks; i++) {
		/* distinct stacks (each is symbolized) that compress well: one address differs */
		for (k = 0; k < DEPTH; k++)
			ips[k] = 0x10000ull * (NMAPS + 2) + k * 16;
		ips[0] += 0x100000ull + i * 16;
		sample(T0 + 1000 + i, stack(ips, 0, DEPTH));
	}
}

static void write_xpa_entry_of(FILE *f, uint8_t content, const uint8_t bid[20],
			       const uint8_t *raw, size_t len)
{
	struct xpa_entry e = { .magic = XPA_ENTRY_MAGIC, .entry_size = sizeof(e),
			       .build_id_len = 20, .content = content };
	size_t cap = ZSTD_compressBound(len), n;
	uint8_t *comp = malloc(cap), pad[8] = { 0 };

	if (!comp)
		die("malloc");
	n = ZSTD_compress(comp, cap, raw, len, 3);
	if (ZSTD_isError(n))
		die("compress");
	memcpy(e.build_id, bid, 20);
	e.raw_size = len;
	e.comp_size = n;
	e.payload_crc32c = crc32c(0, comp, n);
	e.hdr_crc32c = crc32c(0, &e, 60);
	if (fwrite(&e, sizeof(e), 1, f) != 1 || fwrite(comp, 1, n, f) != n ||
	    fwrite(pad, 1, xpa_pad8(n) - n, f) != xpa_pad8(n) - n)
		die("write archive");
	free(comp);
}

static void write_xpa_entry(FILE *f, const uint8_t bid[20], const uint8_t *raw, size_t len)
{
	write_xpa_entry_of(f, XPA_CONTENT_ZEROED, bid, raw, len);
}

/* len bytes of 'A', behind an ELF header that checks out when elf */
static uint8_t *junk(size_t len, int elf)
{
	uint8_t *p = malloc(len);
	Elf64_Ehdr h = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				      EV_CURRENT },
			 .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			 .e_ehsize = sizeof(h) };

	if (!p)
		die("malloc");
	memset(p, 'A', len);
	if (elf)
		memcpy(p, &h, sizeof(h));
	return p;
}

static void archive(const char *out)
{
	static const char *const names[3] = { "/nonexistent/notelf.so", "/nonexistent/big.so",
					      "/nonexistent/elf.so" };
	static const size_t sizes[3] = { 16 << 20, 16 << 20, 8 << 20 };
	struct xpa_header h = { .magic = XPA_MAGIC, .major = 1, .header_size = sizeof(h),
				.entry_count = 3 };
	uint8_t bid[3][20];
	char path[4096];
	FILE *f;
	int i, k;

	for (i = 0; i < 3; i++) {
		memset(bid[i], 0xb0 + i, sizeof(bid[i]));
		for (k = 0; k < 20; k++)
			dso_sized(names[i], bid[i], 20, i == 1 ? 4096 : 0);
	}
	snprintf(path, sizeof(path), "%s.xpa", out);
	f = fopen(path, "wb");
	if (!f)
		die("open archive");
	h.hdr_crc32c = crc32c(0, &h, 28);
	if (fwrite(&h, sizeof(h), 1, f) != 1)
		die("write archive");
	for (i = 0; i < 3; i++) {
		uint8_t *raw = junk(sizes[i], i > 0);

		write_xpa_entry(f, bid[i], raw, sizes[i]);
		free(raw);
	}
	if (fclose(f))
		die("close archive");
}

/*
 * packruns: N stacks (1) of D addresses (1,024) of one file, each but its leaf the same, and
 * OUT.xpa, whose NAMES entry gives every address the same run of 256 frames (256 more with
 * --inline): 262,144 frames a stack from 1,024 addresses.
 */
#define RUN_FRAMES 256
#define RUN_DEPTH 1024
#define RUN_BASE 0x10000000ull

static void packruns(const char *out, uint32_t nstacks, uint32_t depth)
{
	static const char strings[] = "\0deep_run\0run.c";
	struct xpa_header h = { .magic = XPA_MAGIC, .major = 1, .minor = 1,
				.header_size = sizeof(h), .entry_count = 1 };
	struct xpu_rec_dso d = { .id = next_dso++, .kind = XPU_DSO_ELF, .build_id_len = 20 };
	struct xpu_rec_mapping m = { .ts_ns = T0, .pid = 100, .prot = 5, .start = RUN_BASE,
				     .end = RUN_BASE + 0x1000000 };
	uint32_t naddrs = 2 * (depth - 1) + nstacks, i, k;
	size_t len = 32 + naddrs * 16ull + 2 * RUN_FRAMES * 16 + xpa_pad8(sizeof(strings));
	uint8_t *raw = calloc(1, len), *p;
	uint64_t ips[RUN_DEPTH];
	char path[4096];
	FILE *f;

	if (!raw)
		die("malloc");
	memset(d.build_id, 0xd1, 20);
	d.path_str = str("/nonexistent/run.so");
	rec(XPU_REC_DSO, &d, sizeof(d), 0);
	m.dso_id = d.id;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	/* caller i at 0x1000 + 16 i (looked up one byte before), each stack's own leaf above */
	for (k = 0; k < nstacks; k++) {
		ips[0] = RUN_BASE + 0x800000 + 16ull * k;
		for (i = 1; i < depth; i++)
			ips[i] = RUN_BASE + 0x1000 + 16ull * i;
		sample(T0 + 1 + k, stack(ips, 0, (uint16_t)depth));
	}
	/* the entry: header, addresses sorted, one run of frames all share, the strings */
	memcpy(raw, "XPAN", 4);
	memcpy(raw + 4, &naddrs, 4);
	i = 2 * RUN_FRAMES;
	memcpy(raw + 8, &i, 4);
	i = xpa_pad8(sizeof(strings));
	memcpy(raw + 12, &i, 4);
	p = raw + 32;
	for (i = 1; i < depth; i++) {
		uint64_t off[2] = { 0x1000 + 16ull * i - 1, 0x1000 + 16ull * i };
		uint16_t n[2] = { RUN_FRAMES, RUN_FRAMES };

		for (k = 0; k < 2; k++, p += 16) {
			memcpy(p, &off[k], 8);
			memcpy(p + 12, &n[0], 2);
			memcpy(p + 14, &n[1], 2);
		}
	}
	for (k = 0; k < nstacks; k++, p += 16) {
		uint64_t off = 0x800000 + 16ull * k;
		uint16_t n = RUN_FRAMES;

		memcpy(p, &off, 8);
		memcpy(p + 12, &n, 2);
		memcpy(p + 14, &n, 2);
	}
	for (i = 0; i < 2 * RUN_FRAMES; i++, p += 16) {
		uint32_t fr[4] = { 1, 10, i + 1, i + 1 == RUN_FRAMES || i + 1 == 2 * RUN_FRAMES ?
						     3 : 0 };

		memcpy(p, fr, 16);
	}
	memcpy(p, strings, sizeof(strings));
	snprintf(path, sizeof(path), "%s.xpa", out);
	f = fopen(path, "wb");
	if (!f)
		die("open archive");
	h.hdr_crc32c = crc32c(0, &h, 28);
	if (fwrite(&h, sizeof(h), 1, f) != 1)
		die("write archive");
	write_xpa_entry_of(f, XPA_CONTENT_NAMES, d.build_id, raw, len);
	free(raw);
	if (fclose(f))
		die("close archive");
}

/*
 * backward: N evaluations (262,144) of thread 100, each of its own class, and a sample in each
 * on one stack of 1,024 addresses through the evaluation's caller: backward attribution made
 * each sample a stack of its own (the class's frame among the sample's), 8 KB each.
 */
static void backward_evals(uint32_t n)
{
	struct xpu_rec_autograd_eval e = { .pid = 100, .tid = 100, .class_addr = 0x7777000,
					   .caller_ip = 0x400000 + 16 };
	static uint64_t ips[RUN_DEPTH];
	uint32_t i, id;
	char name[32];

	for (i = 0; i < RUN_DEPTH; i++)
		ips[i] = 0x400000 + 16ull * i;
	id = stack(ips, 0, RUN_DEPTH);
	for (i = 0; i < n; i++) {
		e.begin_ns = T0 + 10ull * (i + 1);
		e.node_addr = 0x9000000 + 64ull * i;
		snprintf(name, sizeof(name), "Node%uBackward0", i);
		e.class_str = str(name);
		rec(XPU_REC_AUTOGRAD_EVAL, &e, sizeof(e), e.begin_ns);
		sample(e.begin_ns + 1, id);
	}
}

/*
 * ctlnames: a thread name, a JIT symbol and a DSO path (with a build-id found nowhere) that
 * hold terminal escapes (a window title, a screen clear, a colour, a C1 CSI), a newline, a
 * tab and bytes that are no UTF-8; each sampled once. Set before the session is written.
 */
static const char ctl_comm[] = "evil\033]0;TITLE\007\033[2J";
static const char ctl_jit[] = "jit\033[31mred\xff\xc2\x9b" "5m\nline";
static const char ctl_path[] = "/nonexistent/lib\033[2J\tx\xc3.so";

static void ctlnames(void)
{
	struct xpu_rec_jit_symbol j = { .start = 0x7000, .size_bytes = 16, .pid = 100 };
	uint8_t bid[20];
	uint64_t ip = 0x7004;

	j.name_str = str(ctl_jit);
	rec(XPU_REC_JIT_SYMBOL, &j, sizeof(j), T0);
	sample(T0 + 1, stack(&ip, 0, 1));
	memset(bid, 0xc7, sizeof(bid));
	dso(ctl_path, bid, 20);
}

static void dsowarn(const char *bin)
{
	static char path[1 << 20];
	uint8_t bid[XPU_BUILD_ID_MAX], none[20];
	int n = elf_buildid__read_path(bin, bid, sizeof(bid)), i;

	if (n <= 0)
		die("build-id of BIN");
	memset(path, 'P', sizeof(path) - 1);
	path[0] = '/';
	memset(none, 0xee, sizeof(none));
	for (i = 0; i < 1000; i++) {
		dso(bin, bid, n);
		dso(path, none, sizeof(none));
	}
}

/*
 * Each record mapped so that its sample is 16 bytes into BIN's entry point (a PIE, whose
 * vaddrs are its file offsets): named by the unwind entry of _start where the file is loaded,
 * "BIN+0x<entry+16>" where it is not.
 */
static void samefile(const char *bin)
{
	uint8_t bid[XPU_BUILD_ID_MAX];
	int n = elf_buildid__read_path(bin, bid, sizeof(bid)), i;
	Elf64_Ehdr eh;
	FILE *f = fopen(bin, "rb");

	if (n <= 0 || !f || fread(&eh, sizeof(eh), 1, f) != 1)
		die("BIN");
	fclose(f);
	for (i = 0; i < 20000; i++) {
		struct xpu_rec_dso d = { .id = next_dso++, .kind = XPU_DSO_ELF, .build_id_len = n };
		struct xpu_rec_mapping m = { .ts_ns = T0, .pid = 100, .prot = 5 };
		uint64_t ip;

		memcpy(d.build_id, bid, n);
		d.path_str = str(bin);
		rec(XPU_REC_DSO, &d, sizeof(d), 0);
		m.dso_id = d.id;
		m.start = 0x10000000ull * d.id;
		m.end = m.start + 0x100000;
		m.pgoff = eh.e_entry & ~0xfffull;
		rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
		ip = m.start + (eh.e_entry & 0xfff) + 16;
		sample(T0 + 1000 * d.id, stack(&ip, 0, 1));
	}
}

static void procpaths(const char *dir)
{
	char path[4096];

	dso("/proc/self/cwd/victim.so", NULL, 0);
	snprintf(path, sizeof(path), "/proc/self/root%s/victim.so", dir);
	dso(path, NULL, 0);
	snprintf(path, sizeof(path), "/proc/1/root%s/victim.so", dir);
	dso(path, NULL, 0);
}

static void threads(void)
{
	enum { NTHREADS = 50000, ROUNDS = 4, DEPTH = 1000 };
	struct xpu_rec_dso d = { .id = 1, .kind = XPU_DSO_ELF };
	struct xpu_rec_mapping m = { .ts_ns = T0, .pid = 100, .dso_id = 1, .prot = 5,
				     .start = 0x7f0000000000ull, .end = 0x7f0000100000ull };
	static uint64_t ips[DEPTH];
	uint32_t i, r, id;

	/* frames named "libdeep.so+0x...": each sample is 1,000 of them in jsonl */
	d.path_str = str("/nonexistent/libdeep.so");
	rec(XPU_REC_DSO, &d, sizeof(d), 0);
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	for (i = 0; i < DEPTH; i++)
		ips[i] = m.start + i * 64;
	id = stack(ips, 0, DEPTH);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NTHREADS; i++) {
			struct xpu_rec_cpu_sample s = { .ts_ns = T0 + r * 10000000ull + i,
							.pid = 100, .tid = 1000 + i,
							.stack_id = id };

			rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
		}
	}
}

static void pids(uint32_t npids, uint32_t depth, uint32_t nthreads, uint32_t dlen)
{
	enum { DEPTH = 1024 };
	struct xpu_rec_dso d = { .id = 1, .kind = XPU_DSO_ELF };
	struct xpu_rec_mapping m = { .ts_ns = T0, .dso_id = 1, .prot = 5,
				     .start = 0x7f0000000000ull, .end = 0x7f0000100000ull };
	struct xpu_rec_cpu_sample s = { 0 };
	static uint64_t ips[DEPTH];
	char path[256] = "/nonexistent/lib";
	uint32_t i;

	/* frames named "libddd...ddd.so+0x40": a folded line of 250 frames is 50 KB */
	dlen = dlen < 1 ? 1 : dlen > 190 ? 190 : dlen;
	memset(path + 16, 'd', dlen);
	strcpy(path + 16 + dlen, ".so");
	d.path_str = str(path);
	rec(XPU_REC_DSO, &d, sizeof(d), 0);
	for (i = 0; i < depth && i < DEPTH; i++)
		ips[i] = m.start + i * 64;
	s.stack_id = stack(ips, 0, i);
	/* no TASK records: each process is "[pid N]", a root of its own in folded and svg */
	for (i = 0; i < npids; i++) {
		m.pid = 1000 + i;
		rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
		s.ts_ns = T0 + 1000 + i;
		s.pid = s.tid = m.pid;
		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	}
	/* pprof's samples are per thread: a deepest stack symbolized once, written per thread */
	for (i = 0; i < DEPTH; i++)
		ips[i] = m.start + i * 64;
	s.stack_id = stack(ips, 0, DEPTH);
	m.pid = s.pid = 100;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	for (i = 0; i < nthreads; i++) {
		s.ts_ns = T0 + 1000 + npids + i;
		s.tid = 100000 + i;
		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	}
}

static void records(uint32_t mib)
{
	struct xpu_rec_cpu_sample s = { .ts_ns = T0 + 1000, .pid = 100, .tid = 100 };
	uint64_t ip = 0x401000, n, i;

	s.stack_id = stack(&ip, 0, 1);
	n = ((uint64_t)mib << 20) / (sizeof(s) + sizeof(struct xpu_record_header));
	for (i = 0; i < n; i++)
		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
}

static void ksyms(uint32_t mib)
{
	/* the largest chunk a record holds, of whole 16-byte lines */
	static char chunk[XPU_RECORD_MAX_BYTES - sizeof(struct xpu_record_header) -
			  sizeof(struct xpu_rec_ksyms)];
	struct xpu_rec_ksyms k = { .len = sizeof(chunk) };
	uint64_t ip = 0x401000, i;

	_Static_assert(sizeof(chunk) % 16 == 0, "whole lines");
	for (i = 0; i < sizeof(chunk); i += 16)
		memcpy(chunk + i, "81000000 T kfn_\n", 16);
	for (i = 0; i < ((uint64_t)mib << 20) / sizeof(chunk); i++, k.seq++) {
		if (trace_writer__append2(w, XPU_REC_KSYMS, &k, sizeof(k), chunk, k.len, 0))
			die("append");
	}
	sample(T0 + 1000, stack(&ip, 0, 1));
}

/*
 * R PY_RUNTIME records of pid 100 (each another version, a moment apart) and S samples with
 * Python frames, each after its own runtime: each sample's runtime was found by a walk over
 * every runtime, and info's runtime lines compared every pair (issue 31)
 */
static void pyruntimes(uint32_t nrt, uint32_t nsamples, uint32_t kinds, uint32_t npids)
{
	struct xpu_rec_py_code c = { .id = 1, .firstlineno = 1 };
	struct xpu_rec_py_runtime r = { .pid = 100, .status = XPU_PY_SUPPORTED,
					.eval_start = 0x401000, .eval_end = 0x402000 };
	uint64_t ip = 0x401100, py = XPU_PY_FRAME(1, 0, 1);
	uint32_t sid = stack(&ip, 0, 1), pid, i;

	c.name_str = str("work");
	c.filename_str = str("work.py");
	rec(XPU_REC_PY_CODE, &c, sizeof(c), 0);
	pid = trace_writer__intern_py_stack(w, &py, 1, 0);
	if (!pid)
		die("py stack");
	for (i = 0; i < nrt; i++) {
		r.ts_ns = T0 + 10 + 2ull * i;
		r.version_hex = 0x030c0000 + ((kinds ? i % kinds : i) << 8);
		r.pid = 100 + (npids ? i % npids : 0);
		rec(XPU_REC_PY_RUNTIME, &r, sizeof(r), r.ts_ns);
	}
	for (i = 0; i < nsamples; i++) {
		struct xpu_rec_cpu_sample s = { .ts_ns = T0 + 11 + 2ull * (i % (nrt ? nrt : 1)),
						.pid = 100, .tid = 100, .stack_id = sid,
						.py_stack_id = pid };

		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	}
}

/* The report's hash of a key pair before it was seeded (report/base/containers.c), inverted */
static uint64_t unxorshift(uint64_t y, int s)
{
	uint64_t x = y;
	int k;

	for (k = s; k < 64; k += s)
		x = y ^ x >> s;
	return x;
}

static uint64_t mul_inverse(uint64_t m)
{
	uint64_t x = m;
	int k;

	for (k = 0; k < 6; k++)
		x *= 2 - m * x;
	return x;
}

static uint64_t unmix64(uint64_t x)
{
	x = unxorshift(x, 31);
	x *= mul_inverse(0x94d049bb133111ebull);
	x = unxorshift(x, 27);
	x *= mul_inverse(0xbf58476d1ce4e5b9ull);
	return unxorshift(x, 30);
}

/*
 * N file offsets of one DSO (the first: key a = 1) whose slots in the symbolizer's address
 * cache all fell on one: mix64(1 ^ mix64(off + C)) a multiple of 2^24 (any table of up to 16
 * million slots), one linear probe chain, quadratic (issue 31). Each its own mapping of a
 * page at 0x10000 + 0x1000 k, sampled once at its start as a stack's leaf; then S stacks of
 * 1,024 frames whose callers are all the last offset, each a walk of the chain.
 */
static void hashkeys(uint32_t n, uint32_t s)
{
	static uint64_t ips[1024];
	struct xpu_rec_dso d = { .id = 1, .kind = XPU_DSO_ELF };
	struct xpu_rec_mapping m = { .ts_ns = T0, .pid = 100, .dso_id = 1, .prot = 5 };
	uint64_t ip;
	uint32_t k;

	d.path_str = str("/nonexistent/libhash.so");
	rec(XPU_REC_DSO, &d, sizeof(d), 0);
	for (k = 0; k < n; k++) {
		m.start = 0x10000ull + 0x1000ull * k;
		m.end = m.start + 0x1000;
		m.pgoff = unmix64(unmix64((uint64_t)(k + 1) << 24) ^ 1) - 0x9e3779b97f4a7c15ull;
		rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
		ip = m.start;
		sample(T0 + 1000 + k, stack(&ip, 0, 1));
	}
	for (k = 1; k < 1024; k++)
		ips[k] = m.start + 1;	/* a caller's return address: its call is the byte before */
	for (k = 0; k < s && n; k++) {
		ips[0] = 0x10000ull + 0x1000ull * (k % n);
		sample(T0 + 1000 + n + k, stack(ips, 0, 1024));
	}
}

/* frames named "libcall.so+0x...": F is libcall.so+0x2000 */
static void calltree(uint32_t n)
{
	enum { SIDE = 62, DEPTH = 2 * SIDE + 3 };
	struct xpu_rec_dso d = { .id = 1, .kind = XPU_DSO_ELF };
	struct xpu_rec_mapping m = { .ts_ns = T0, .pid = 100, .dso_id = 1, .prot = 5,
				     .start = 0x7f0000000000ull, .end = 0x7f0010000000ull };
	uint64_t ips[DEPTH];
	uint32_t i, k;

	d.path_str = str("/nonexistent/libcall.so");
	rec(XPU_REC_DSO, &d, sizeof(d), 0);
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
	/* innermost first: SIDE callees' frames, B_i, F, A_i, SIDE frames, the outermost */
	for (k = 0; k < SIDE; k++) {
		ips[k] = m.start + 0x3000 + (SIDE - k) * 16;
		ips[DEPTH - 2 - k] = m.start + 0x1000 + (SIDE - k) * 16;
	}
	ips[SIDE + 1] = m.start + 0x2000;
	ips[DEPTH - 1] = m.start + 0x10;
	for (i = 0; i < n; i++) {
		ips[SIDE] = m.start + 0x800000 + i * 16ull;
		ips[SIDE + 2] = m.start + 0x100000 + i * 16ull;
		sample(T0 + 1000 + i, stack(ips, 0, DEPTH));
	}
}

static void pidset(const char *name, char **pid, int n)
{
	uint64_t ip = 0x401000;
	uint32_t id = stack(&ip, 0, 1);
	int i;

	for (i = 0; i < n; i++) {
		struct xpu_rec_task task = { .ts_ns = T0 + 10, .kind = XPU_TASK_EXEC };
		struct xpu_rec_cpu_sample s = { .ts_ns = T0 + 100 + i, .stack_id = id };

		task.pid = task.tid = s.pid = s.tid = strtoul(pid[i], NULL, 10);
		task.comm_str = str(name);
		rec(XPU_REC_TASK, &task, sizeof(task), task.ts_ns);
		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	}
}

/* names(): 1 MiB names for the session, set before it is written */
static void refs(void)
{
	struct xpu_rec_jit_symbol j = { .start = 0x7000, .size_bytes = 16, .pid = 100,
					.name_str = 4000000 };
	struct xpu_rec_driver_ioctl io = { .start_ns = T0 + 1, .end_ns = T0 + 2, .pid = 100,
					   .tid = 100, .file_str = 4000001 };
	struct xpu_rec_py_runtime py = { .ts_ns = T0, .pid = 100, .dso_id = 4000002 };
	struct xpu_rec_autograd_probe ag = { .ts_ns = T0, .pid = 100, .dso_id = 4000003 };

	rec(XPU_REC_JIT_SYMBOL, &j, sizeof(j), T0);
	rec(XPU_REC_DRIVER_IOCTL, &io, sizeof(io), T0 + 1);
	rec(XPU_REC_PY_RUNTIME, &py, sizeof(py), T0);
	rec(XPU_REC_AUTOGRAD_PROBE, &ag, sizeof(ag), T0);
	/* the same, resolved */
	dso("/nonexistent/libok.so", NULL, 0);
	j.name_str = str("jitted");
	io.file_str = str("/dev/nvidiactl");
	py.dso_id = ag.dso_id = next_dso - 1;
	rec(XPU_REC_JIT_SYMBOL, &j, sizeof(j), T0);
	rec(XPU_REC_DRIVER_IOCTL, &io, sizeof(io), T0 + 1);
	rec(XPU_REC_PY_RUNTIME, &py, sizeof(py), T0);
	rec(XPU_REC_AUTOGRAD_PROBE, &ag, sizeof(ag), T0);
}

static void long_names(void)
{
	static char h[1 << 20], c[1 << 20], a[1 << 20];

	memset(h, 'H', sizeof(h) - 1);
	memset(c, 'T', sizeof(c) - 1);
	memset(a, 'C', sizeof(a) - 1);
	host = h;
	comm = c;
	cmdline = str(a);
}

static void graph_node(uint16_t op, uint64_t node, uint64_t orig, uint32_t corr, uint64_t ts)
{
	struct xpu_rec_gpu_graph_node g = { .ts_ns = ts, .pid = 100, .tid = 100, .node_id = node,
					    .orig_node_id = orig, .corr_id = corr, .op = op };

	rec(XPU_REC_GPU_GRAPH_NODE, &g, sizeof(g), ts);
}

static void graph_kernel(uint64_t node, uint64_t ts)
{
	struct xpu_rec_gpu_kernel k = { .start_ns = ts, .end_ns = ts + 100, .pid = 100,
					.corr_id = 2, .flags = XPU_GPU_IN_GRAPH, .graph_id = 1,
					.graph_node_id = node };

	k.name_str = str("graph_kernel");
	rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), ts);
}

static void graphs(uint32_t n)
{
	struct xpu_rec_gpu_launch l = { .ts_ns = T0 + 100, .pid = 100, .tid = 100, .corr_id = 1,
					.cbid = 211, .domain = XPU_API_RUNTIME };
	uint64_t ips[2] = { 0x401000, 0x401100 }, ts = T0 + 1000;
	uint32_t i;

	l.stack_id = stack(ips, 0, 2);
	rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);	/* the capture call */
	l.ts_ns = T0 + 500000000ull;
	l.corr_id = 2;
	l.cbid = 311;
	l.stack_id = stack(ips + 1, 0, 1);
	rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);	/* the replay */
	graph_node(XPU_GRAPH_NODE_CREATED, 0x10, 0, 1, ts);
	for (i = 0; i < n; i++)
		graph_node(XPU_GRAPH_NODE_CLONED, 0x100000 + i, i ? 0x100000 + i - 1 : 0x10, 0, ts);
	graph_node(XPU_GRAPH_NODE_CLONED, 0x21, 0x22, 0, ts);	/* a loop */
	graph_node(XPU_GRAPH_NODE_CLONED, 0x22, 0x21, 0, ts);
	graph_node(XPU_GRAPH_NODE_CLONED, 0x23, 0x23, 0, ts);	/* its own copy */
	graph_node(XPU_GRAPH_NODE_CLONED, 0x24, 0, 0, ts);	/* of node 0 */
	graph_node(XPU_GRAPH_NODE_CLONED, 0x25, 0x7777777, 0, ts);	/* of a node never made */
	graph_node(XPU_GRAPH_NODE_CREATED, 0x10, 0, 3, ts);	/* 0x10 made again: bad */
	graph_node(XPU_GRAPH_NODE_CREATED, 0, 0, 1, ts);	/* node 0: bad */
	graph_node(0, 0x26, 0, 1, ts);				/* unknown ops: bad */
	graph_node(0xffff, 0x27, 0, 1, ts);
	graph_node(XPU_GRAPH_NODE_CREATED, 0x28, 0, 0x9999, ts);	/* a call with no launch */
	ts = T0 + 600000000ull;
	for (i = 0; i < n; i++)
		graph_kernel(0x100000 + n - 1, ts + i);
	graph_kernel(0x100000, ts + n);		/* the chain's first copy: maps */
	for (i = 0x21; i <= 0x28; i++)
		graph_kernel(i, ts + n + i);
	sample(T0 + 700000000ull, l.stack_id);
}

static void names(void)
{
	struct xpu_rec_gpu_launch l = { .ts_ns = T0 + 100, .pid = 100, .tid = 100, .corr_id = 1,
					.cbid = 1 };
	struct xpu_rec_gpu_kernel k = { .start_ns = T0 + 200, .end_ns = T0 + 300, .pid = 100,
					.corr_id = 1 };
	uint64_t ip = 0x401000;

	l.stack_id = stack(&ip, 0, 1);
	rec(XPU_REC_GPU_LAUNCH, &l, sizeof(l), l.ts_ns);
	k.name_str = str("");
	rec(XPU_REC_GPU_KERNEL, &k, sizeof(k), k.start_ns);
	sample(T0 + 400, l.stack_id);
}

int main(int argc, char **argv)
{
	struct trace_writer_opts wo = { 0 };

	if (argc < 3) {
		fprintf(stderr, "usage: make_hostile longname|files|escape|deep|spanmaps|archive|"
			"names|threads|dsowarn|samefile|procpaths|pids|records|ksyms|calltree|pidset|"
			"refs|pyruntimes|hashkeys|packruns|backward|ctlnames|graphs OUT [ARG]\n");
		return 2;
	}
	/* the largest frames the writer makes: the most records per byte of file */
	if (!strcmp(argv[1], "records") || !strcmp(argv[1], "ksyms"))
		wo.frame_raw_bytes = XPU_FRAME_MAX_RAW_BYTES / 2;
	open_trace(argv[2], &wo);
	if (!strcmp(argv[1], "names"))
		long_names();
	if (!strcmp(argv[1], "ctlnames"))
		comm = host = ctl_comm;
	session();
	if (!strcmp(argv[1], "longname"))
		longname();
	else if (!strcmp(argv[1], "files") && argc == 4)
		files(argv[3]);
	else if (!strcmp(argv[1], "escape") && argc == 4)
		escape(argv[3]);
	else if (!strcmp(argv[1], "deep"))
		deep();
	else if (!strcmp(argv[1], "spanmaps"))
		spanmaps(argc >= 4 ? strtoul(argv[3], NULL, 10) : 8000);
	else if (!strcmp(argv[1], "archive"))
		archive(argv[2]);
	else if (!strcmp(argv[1], "names"))
		names();
	else if (!strcmp(argv[1], "threads"))
		threads();
	else if (!strcmp(argv[1], "dsowarn") && argc == 4)
		dsowarn(argv[3]);
	else if (!strcmp(argv[1], "samefile") && argc == 4)
		samefile(argv[3]);
	else if (!strcmp(argv[1], "procpaths") && argc == 4)
		procpaths(argv[3]);
	else if (!strcmp(argv[1], "pids"))
		pids(argc >= 4 ? strtoul(argv[3], NULL, 10) : 20000,
		     argc >= 5 ? strtoul(argv[4], NULL, 10) : 250,
		     argc >= 6 ? strtoul(argv[5], NULL, 10) : 20000,
		     argc >= 7 ? strtoul(argv[6], NULL, 10) : 190);
	else if (!strcmp(argv[1], "graphs"))
		graphs(argc >= 4 ? strtoul(argv[3], NULL, 10) : 100000);
	else if (!strcmp(argv[1], "records"))
		records(argc >= 4 ? strtoul(argv[3], NULL, 10) : 1024);
	else if (!strcmp(argv[1], "pyruntimes"))
		pyruntimes(argc >= 4 ? strtoul(argv[3], NULL, 10) : 150000,
			   argc >= 5 ? strtoul(argv[4], NULL, 10) : 150000,
			   argc >= 6 ? strtoul(argv[5], NULL, 10) : 0,
			   argc >= 7 ? strtoul(argv[6], NULL, 10) : 1);
	else if (!strcmp(argv[1], "hashkeys"))
		hashkeys(argc >= 4 ? strtoul(argv[3], NULL, 10) : 60000,
			 argc >= 5 ? strtoul(argv[4], NULL, 10) : 400);
	else if (!strcmp(argv[1], "calltree"))
		calltree(argc >= 4 ? strtoul(argv[3], NULL, 10) : 100000);
	else if (!strcmp(argv[1], "pidset") && argc >= 5)
		pidset(argv[3], argv + 4, argc - 4);
	else if (!strcmp(argv[1], "ksyms"))
		ksyms(argc >= 4 ? strtoul(argv[3], NULL, 10) : 1024);
	else if (!strcmp(argv[1], "refs"))
		refs();
	else if (!strcmp(argv[1], "ctlnames"))
		ctlnames();
	else if (!strcmp(argv[1], "backward"))
		backward_evals(argc >= 4 ? strtoul(argv[3], NULL, 10) : 262144);
	else if (!strcmp(argv[1], "packruns"))
		packruns(argv[2], argc >= 4 ? strtoul(argv[3], NULL, 10) : 1,
			 argc >= 5 && strtoul(argv[4], NULL, 10) - 1 < RUN_DEPTH ?
				 strtoul(argv[4], NULL, 10) : RUN_DEPTH);
	else
		die("arguments");
	if (trace_writer__close(w))
		die("close");
	return 0;
}
