// SPDX-License-Identifier: MIT
/*
 * A CPU-only trace through the text and svg reports: one library (fixtures/versioned_syms.c,
 * whose symbol table names versioned symbols as glibc's does) mapped from two files, one of
 * them with a long name, with samples and off-CPU blocks in both, and its process's Python
 * interpreter found twice. Frame names lose their symbol version; a name in two files is a
 * row per file, each with its own; a long file name is cut so that the function column stays
 * in place; blocked time is the self time of the frame that blocked, not of its state; the
 * Python header counts the process once, and not its forks that exec'd another program; and
 * the svg says nothing of GPU work.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "elf_buildid.h"
#include "unit.h"
#define TRACE_BUILD_PROG "test_cpu_report"
#include "../lib/trace_build.h"

#ifndef FIXTURE_DIR
#error "FIXTURE_DIR: the Makefile builds fixtures/versioned_syms.so there"
#endif

#define PID 500
#define T0 1000000000ull
#define MS 1000000ull
#define LONG_NAME "libthe_same_library_under_a_rather_long_file_name.so.1"

static const uint64_t base[2] = { 0x7f0000000000ull, 0x7f1000000000ull };

/* The file offset of symbol name in the ELF file at path, 0 if not found. */
static uint64_t symbol_offset(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	uint64_t vaddr = 0, off = 0;
	size_t i, n;

	while (e && !vaddr && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		GElf_Sym s;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !d)
			continue;
		for (i = 0; gelf_getsym(d, (int)i, &s); i++) {
			const char *sn = elf_strptr(e, sh.sh_link, s.st_name);

			if (sn && !strcmp(sn, name))
				vaddr = s.st_value;
		}
	}
	for (i = 0; e && vaddr && !elf_getphdrnum(e, &n) && i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			off = vaddr - ph.p_vaddr + ph.p_offset;
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return off;
}

static void add_dso(uint32_t id, const char *path)
{
	struct xpu_rec_dso d = { .id = id, .kind = XPU_DSO_ELF };
	struct xpu_rec_mapping m = { .ts_ns = T0, .pid = PID, .dso_id = id, .prot = 5 };
	int n = elf_buildid__read_path(path, d.build_id, XPU_BUILD_ID_MAX);

	CHECK(n > 0, "build-id of %s", path);
	d.build_id_len = n > 0 ? n : 0;
	d.path_str = str(path);
	rec(XPU_REC_DSO, &d, sizeof(d), 0);
	m.start = base[id - 1];
	m.end = m.start + 0x4000;
	rec(XPU_REC_MAPPING, &m, sizeof(m), T0);
}

static void add_header(void)
{
	struct xpu_rec_session ses = { 0 };
	struct xpu_rec_clock_sync cs = { T0, 1700000000000000000ull, T0 + 5, 120 };
	struct xpu_rec_task task = { .ts_ns = T0, .kind = XPU_TASK_EXEC, .pid = PID, .tid = PID };

	ses.ncpu = 2;
	ses.page_size_bytes = 4096;
	ses.sample_freq_hz = 1000;
	ses.stack_mode = XPU_STACK_FP;
	ses.flags = XPU_SESSION_OFF_CPU;
	ses.target_pid = PID;
	ses.start_mono_ns = T0;
	ses.start_realtime_ns = 1700000000000000000ull;
	ses.host_str = str("unit-host");
	ses.cmdline_str = str("cpuapp");
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	rec(XPU_REC_CLOCK_SYNC, &cs, sizeof(cs), T0);
	task.comm_str = str("cpuapp");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
}

/* The interpreter found twice in one process (a later library load finds it again). */
static void add_python(void)
{
	struct xpu_rec_py_runtime r = { .ts_ns = T0, .pid = PID, .status = XPU_PY_SUPPORTED,
					.version_hex = 0x030c03f0, .dso_id = 1 };

	uint32_t child;

	rec(XPU_REC_PY_RUNTIME, &r, sizeof(r), r.ts_ns);
	r.ts_ns += MS;
	rec(XPU_REC_PY_RUNTIME, &r, sizeof(r), r.ts_ns);
	/* three forks that had it until they exec'd ptxas (a compile's): not Python processes */
	for (child = PID + 1; child <= PID + 3; child++) {
		struct xpu_rec_task fork = { .ts_ns = T0 + MS, .kind = XPU_TASK_FORK, .pid = child,
					     .tid = child, .parent_pid = PID };
		struct xpu_rec_task exec = { .ts_ns = T0 + 3 * MS, .kind = XPU_TASK_EXEC,
					     .pid = child, .tid = child };

		fork.comm_str = str("cpuapp");
		rec(XPU_REC_TASK, &fork, sizeof(fork), fork.ts_ns);
		r.pid = child;
		r.ts_ns = T0 + 2 * MS;
		rec(XPU_REC_PY_RUNTIME, &r, sizeof(r), r.ts_ns);
		exec.comm_str = str("ptxas");
		rec(XPU_REC_TASK, &exec, sizeof(exec), exec.ts_ns);
	}
}

/*
 * libvers.so (short name) and LONG_NAME are the same file. Samples: 3 in the first copy, 2
 * in the second, all in versioned_fn under fixture_outer; a 10 ms sleep in the first.
 */
static void write_trace(const char *path, const char *lib_a, const char *lib_b, uint64_t leaf,
			uint64_t outer)
{
	uint32_t st[2], i;

	open_trace(path, NULL);
	add_header();
	add_dso(1, lib_a);
	add_dso(2, lib_b);
	add_python();
	for (i = 0; i < 2; i++) {
		uint64_t ips[2] = { base[i] + leaf + 1, base[i] + outer + 5 };

		st[i] = stack(ips, 0, 2);
	}
	for (i = 0; i < 5; i++) {
		struct xpu_rec_cpu_sample s = { T0 + (2 + i) * MS, PID, PID, st[i >= 3],
						0, 0, 0, 0 };

		rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), s.ts_ns);
	}
	{
		struct xpu_rec_off_cpu o = { .ts_ns = T0 + 10 * MS, .dur_ns = 10 * MS, .pid = PID,
					     .tid = PID, .stack_id = st[0],
					     .state = XPU_OFF_SLEEPING };
		struct xpu_rec_session_end end = { .end_mono_ns = T0 + 30 * MS,
						   .reason = XPU_END_TARGET_EXITED };

		rec(XPU_REC_OFF_CPU, &o, sizeof(o), o.ts_ns);
		rec(XPU_REC_SESSION_END, &end, sizeof(end), end.end_mono_ns);
	}
	if (trace_writer__close(w))
		die("close");
}

/* The report of trace in format and view, malloc'd, or NULL. */
static char *report(const char *trace, enum report_format format, enum report_view view)
{
	char path[] = "/tmp/xpu-test-cpu-report-XXXXXX";
	struct report_opts o = { .format = format, .view = view, .input = trace, .output = path };
	int fd = mkstemp(path), r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (fd < 0)
		return NULL;
	close(fd);
	r = report_run(&o);
	CHECK(r == 0, "report_run: %d", r);
	f = fopen(path, "r");
	if (f && getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	unlink(path);
	return buf;
}

/* A text table, from its title line to the blank line after it, malloc'd, or NULL. */
static char *table(const char *text, const char *title)
{
	const char *t = text ? strstr(text, title) : NULL, *end;

	if (!t)
		return NULL;
	end = strstr(t, "\n\n");
	return strndup(t, end ? (size_t)(end - t + 1) : strlen(t));
}

/* Rows of table t naming func: how many; in dso[] their dso column, trimmed. */
static int rows_of(const char *t, const char *func, char dso[][64], int max)
{
	const char *head = strchr(t, '\n') + 1, *col = strstr(head, "function"), *l;
	size_t at = col - head;
	int n = 0;

	for (l = strchr(head, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
		const char *eol = strchr(l, '\n');
		const char *f = strstr(l, func);

		if (!f || f > eol)
			continue;
		/* the column stays in place however long the file name */
		CHECK((size_t)(f - l) == at, "%s at column %zu, not %zu: %.*s", func,
		      (size_t)(f - l), at, (int)(eol - l), l);
		if (n < max)
			sscanf(l, "%*s %*s %63s", dso[n]);
		n++;
	}
	return n;
}

static void test_text(const char *trace)
{
	char *out = report(trace, FMT_TEXT, VIEW_MERGED), *t, dso[4][64], cut[64];
	int n;

	if (!out)
		return;
	/* 32 columns: the name's first 15 and last 14 characters */
	snprintf(cut, sizeof(cut), "%.15s...%s", LONG_NAME, LONG_NAME + strlen(LONG_NAME) - 14);
	CHECK(!strchr(out, '@'), "a symbol version in the report:\n%s", out);
	CHECK(strstr(out, "# python:    CPython 3.12.3 in 1 process (pid 500): Python frames "
			  "recorded; 3 others exec'd another program after it was found (ptxas, "
			  "pid 501)\n"),
	      "the Python header counts one process, and names the forks that exec'd:\n%s", out);
	t = table(out, "# top functions by total");
	CHECK(t != NULL, "a table by total");
	n = t ? rows_of(t, "versioned_fn", dso, 4) : 0;
	CHECK(n == 2, "versioned_fn: %d rows by total, not one per file", n);
	if (n == 2) {
		CHECK(!strcmp(dso[0], "libvers.so"), "3 samples in libvers.so, not %s", dso[0]);
		CHECK(!strcmp(dso[1], cut), "the long file name cut to %s: %s", cut, dso[1]);
	}
	CHECK(t && rows_of(t, "fixture_outer", dso, 4) == 2, "fixture_outer: a row per file");
	free(t);
	free(out);
}

static void test_off_cpu(const char *trace)
{
	char *out = report(trace, FMT_TEXT, VIEW_OFF_CPU), *self, *total, dso[4][64];

	self = table(out, "# top functions by self");
	total = table(out, "# top functions by total");
	/* the blocked time is versioned_fn's, in the file it blocked in */
	CHECK(self && !strstr(self, "[off-cpu]") && rows_of(self, "versioned_fn", dso, 4) == 1 &&
	      !strcmp(dso[0], "libvers.so"), "the blocked frame's self time:\n%s",
	      self ? self : "");
	CHECK(total && rows_of(total, "[off-cpu] sleeping", dso, 4) == 1 &&
	      !strcmp(dso[0], "[off-cpu]"), "the state in the totals, as its own:\n%s",
	      total ? total : "");
	free(self);
	free(total);
	free(out);
}

/* xpu-report diff of the trace against itself: the same rows, a function per file. */
static void test_diff(const char *trace)
{
	char path[] = "/tmp/xpu-test-cpu-diff-XXXXXX", *files[2] = { (char *)trace, (char *)trace };
	struct report_opts o = { .format = FMT_TEXT, .diff = true, .output = path };
	char line[512];
	int fd = mkstemp(path), n = 0;
	FILE *f;

	if (fd < 0)
		return;
	close(fd);
	CHECK(diff_run(&o, files) == 0, "diff_run");
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "  versioned_fn\n") != NULL;
	CHECK(n == 2, "diff: %d rows of versioned_fn, not one per file", n);
	if (f)
		fclose(f);
	unlink(path);
}

static void test_svg(const char *trace)
{
	char *out = report(trace, FMT_SVG, VIEW_MERGED);

	if (!out)
		return;
	CHECK(!strstr(out, "GPU"), "a CPU-only svg speaks of the GPU");
	CHECK(strstr(out, "CPU samples; weight: samples"), "the svg's subtitle");
	free(out);
}

int main(void)
{
	char dir[] = "/tmp/xpu-test-cpu-XXXXXX", lib_a[256], lib_b[256], trace[256], cmd[1024];
	const char *fixture = FIXTURE_DIR "/versioned_syms.so";
	uint64_t leaf, outer;

	elf_version(EV_CURRENT);
	leaf = symbol_offset(fixture, "versioned_fn@@XPU_TEST_2");
	outer = symbol_offset(fixture, "fixture_outer");
	if (!leaf || !outer || !mkdtemp(dir)) {
		fprintf(stderr, "FAIL: %s: no versioned_fn@@XPU_TEST_2 or fixture_outer\n",
			fixture);
		return 1;
	}
	snprintf(lib_a, sizeof(lib_a), "%s/libvers.so", dir);
	snprintf(lib_b, sizeof(lib_b), "%s/%s", dir, LONG_NAME);
	snprintf(trace, sizeof(trace), "%s/cpu.xpu", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && cp '%s' '%s'", fixture, lib_a, fixture, lib_b);
	CHECK(system(cmd) == 0, "%s", cmd);
	write_trace(trace, lib_a, lib_b, leaf, outer);
	test_text(trace);
	test_off_cpu(trace);
	test_diff(trace);
	test_svg(trace);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "%s", cmd);
	return unit_finish();
}
