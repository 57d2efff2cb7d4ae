// SPDX-License-Identifier: MIT
/*
 * Writes the hostile traces of issue 18 for tests/unit/test_hostile.sh (valid frames and
 * CRCs, every record legal on its own):
 *   longname OUT          one API-name string of 1 MiB, named by 2,252 API calls
 *   files OUT DIR         DSOs named /dev/zero, /dev/null, /proc/kmsg, /proc/self/mem, a FIFO,
 *                         a directory and an empty file (DIR/fifo, DIR/dir, DIR/empty)
 *   escape OUT BIN        DSOs with BIN's build-id named ../../../../BIN, /escape-link,
 *                         /usr//bin/./copy, /usr/bin/copy and //usr/bin/copy (the test puts
 *                         a symlink and a copy under --symfs: `archive` finds most files)
 *   deep OUT              a stack of 1,025 addresses and one of 1,024
 * Every DSO is mapped by pid 100 and sampled once per mapping.
 */
#include <stdint.h>
#include <string.h>

#define TRACE_BUILD_PROG "make_hostile"
#include "../lib/trace_build.h"
#include "elf_buildid.h"

#define T0 1000000000ull

static uint32_t next_dso = 1;

static void session(void)
{
	struct xpu_rec_session ses = { .ncpu = 1, .page_size_bytes = 4096, .sample_freq_hz = 99,
				       .stack_mode = XPU_STACK_FP, .target_pid = 100,
				       .start_mono_ns = T0 };
	struct xpu_rec_task task = { .ts_ns = T0, .kind = XPU_TASK_EXEC, .pid = 100, .tid = 100 };

	ses.host_str = str("hostile");
	rec(XPU_REC_SESSION, &ses, sizeof(ses), 0);
	task.comm_str = str("victim");
	rec(XPU_REC_TASK, &task, sizeof(task), T0);
}

static void sample(uint64_t ts, uint32_t stack_id)
{
	struct xpu_rec_cpu_sample s = { .ts_ns = ts, .pid = 100, .tid = 100, .stack_id = stack_id };

	rec(XPU_REC_CPU_SAMPLE, &s, sizeof(s), ts);
}

/* A DSO at path (with build-id bid, n bytes), mapped at 0x10000000 * its id, sampled once. */
static void dso(const char *path, const uint8_t *bid, int n)
{
	struct xpu_rec_dso d = { .id = next_dso++, .kind = XPU_DSO_ELF };
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
	/* found too: `archive` refuses a trace whose files are mostly missing */
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

int main(int argc, char **argv)
{
	struct trace_writer_opts wo = { 0 };

	if (argc < 3) {
		fprintf(stderr, "usage: make_hostile longname|files|escape|deep OUT [ARG]\n");
		return 2;
	}
	open_trace(argv[2], &wo);
	session();
	if (!strcmp(argv[1], "longname"))
		longname();
	else if (!strcmp(argv[1], "files") && argc == 4)
		files(argv[3]);
	else if (!strcmp(argv[1], "escape") && argc == 4)
		escape(argv[3]);
	else if (!strcmp(argv[1], "deep"))
		deep();
	else
		die("arguments");
	if (trace_writer__close(w))
		die("close");
	return 0;
}
