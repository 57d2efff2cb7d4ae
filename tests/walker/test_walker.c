// SPDX-License-Identifier: MIT
/*
 * The BPF stack walkers (bpf/cfi_walk.bpf.h, bpf/py_walk.bpf.h) run as user code against
 * snapshots of real processes, without root: each snapshot's native walk must give exactly
 * the pcs libdw unwound from the same stopped thread, and its Python walk exactly the frames
 * the program listed itself. Each walk runs twice, the second through the walkers' caches.
 *
 *   test_walker                      captures the fixtures (deep C chain without frame
 *                                    pointers, the same with them, every CPython 3.10-3.13
 *                                    found) into $XPU_WALKER_SNAPS (default FIXTURE_DIR/
 *                                    snaps) and checks them
 *   test_walker replay SNAP...       checks stored snapshots
 *   test_walker capture [-n STOPS] [-d MS] [-s STRIDE] [-p PYEXPECT] DIR LABEL -- CMD...
 *                                    writes DIR/LABEL.K.snap: CMD's stops (its own SIGSTOP,
 *                                    or one every MS ms; with STRIDE, the first such, then
 *                                    from its return address every STRIDE instructions)
 */
#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "walker_host.h"

#define MAX_STOPS 64
#define PY_ENTRY (1u << 31)		/* XPU_PY_EV_ENTRY */
#define PY_TRUNCATED 1			/* XPU_EV_PY_TRUNCATED */

static bool ptrace_refused;
/* the snapshots that failed, named again last: the tables above them are long */
static char failed_list[4096];

static const char *where(const struct snapshot *s, uint64_t pc, char *buf, size_t len)
{
	const struct snap_map *m = snapshot__map(s, pc);
	const char *base;

	if (!m) {
		snprintf(buf, len, "%#lx (unmapped)", (unsigned long)pc);
		return buf;
	}
	base = strrchr(m->path, '/');
	snprintf(buf, len, "%#lx %s+%#lx", (unsigned long)pc, base ? base + 1 : m->path,
		 (unsigned long)(pc - m->start + m->pgoff));
	return buf;
}

static void print_stacks(const struct snapshot *s, const struct walk_native *w)
{
	char a[160], b[160];
	size_t i, n = w->n > s->nexpect ? w->n : s->nexpect;

	fprintf(stderr, "      %-4s %-50s %s\n", "#", "libdw (expected)", "walker");
	for (i = 0; i < n; i++)
		fprintf(stderr, "    %s %-4zu %-50s %s\n",
			i < s->nexpect && i < w->n && s->expect_pcs[i] == w->ips[i] ? " " : "!", i,
			i < s->nexpect ? where(s, s->expect_pcs[i], a, sizeof(a)) : "-",
			i < w->n ? where(s, w->ips[i], b, sizeof(b)) : "-");
}

/* a stack deeper than a walk may go must give its first WALK_MAX_FRAMES frames, not whole */
static bool same_native(const struct snapshot *s, const struct walk_native *w)
{
	size_t want = s->nexpect > WALK_MAX_FRAMES ? WALK_MAX_FRAMES : s->nexpect;

	return w->n == want &&
	       w->outermost == (s->expect_outermost && s->nexpect <= WALK_MAX_FRAMES) &&
	       !memcmp(w->ips, s->expect_pcs, want * sizeof(uint64_t));
}

static void check_native(const struct snapshot *s, unsigned int min_frames)
{
	static struct walk_native w[2];
	int k;

	for (k = 0; k < 2; k++) {
		walker_host__native(&w[k]);
		CHECK(!walker_host__missing(), "%s: the walk read %#lx, which the snapshot lacks",
		      s->label, (unsigned long)walker_host__missing());
		CHECK(same_native(s, &w[k]),
		      "%s: native walk%s: %u frames%s, libdw %zu%s (table below)",
		      s->label, k ? " again (row cache)" : "", w[k].n,
		      w[k].outermost ? " to the outermost" : "", s->nexpect,
		      s->expect_outermost ? " to the outermost" : "");
		if (!same_native(s, &w[k]))
			print_stacks(s, &w[k]);
	}
	CHECK(w[1].cache_hits > 0 || w[1].n < 2 || w[1].frames_by_fp == w[1].n,
	      "%s: the second walk found no row in the cache", s->label);
	CHECK(s->nexpect >= min_frames, "%s: libdw has %zu frames, the fixture has >= %u: the "
	      "stop was not where the test means it to be", s->label, s->nexpect, min_frames);
}

static void print_py(const struct snapshot *s, const struct walk_py *w)
{
	size_t i, n = w->n > s->npy ? w->n : s->npy;

	fprintf(stderr, "      %-4s %-32s %s\n", "#", "program (expected)", "walker");
	for (i = 0; i < n; i++) {
		char a[96] = "-", b[96] = "-";

		if (i < s->npy)
			snprintf(a, sizeof(a), "%s:%u", s->py[i].name, s->py[i].firstlineno);
		if (i < w->n)
			snprintf(b, sizeof(b), "%s:%u%s", w->frames[i].name,
				 w->frames[i].firstlineno,
				 w->frames[i].instr & PY_ENTRY ? " (entry)" : "");
		fprintf(stderr, "    %s %-4zu %-32s %s\n", strcmp(a, b) && !strstr(b, a) ? "!" : " ",
			i, a, b);
	}
}

static bool same_py(const struct snapshot *s, const struct walk_py *w)
{
	size_t i, want = s->npy > 128 ? 128 : s->npy;

	if (w->n != want || !!(w->flags & PY_TRUNCATED) != (s->npy > 128))
		return false;
	for (i = 0; i < want; i++)
		if (strcmp(w->frames[i].name, s->py[i].name) ||
		    w->frames[i].firstlineno != s->py[i].firstlineno)
			return false;
	return true;
}

static void check_python(const struct snapshot *s)
{
	static struct walk_py w[2];
	int k;

	for (k = 0; k < 2; k++) {
		walker_host__python(&w[k]);
		CHECK(w[k].has_python, "%s: no CPython runtime found in the maps", s->label);
		CHECK(same_py(s, &w[k]),
		      "%s: python walk%s (CPython %x): %u frames, flags %#x; the program listed %zu",
		      s->label, k ? " again (thread and code caches)" : "", w[k].version_hex, w[k].n,
		      w[k].flags, s->npy);
		if (!same_py(s, &w[k]))
			print_py(s, &w[k]);
	}
	/*
	 * The activation marks: every frame of 3.10 (its frames are evaluator calls), else the
	 * frames a C call entered the evaluator at: <lambda> (from map()) and <module>.
	 */
	for (k = 0; k < (int)w[0].n && same_py(s, &w[0]); k++) {
		const struct walk_py_frame *f = &w[0].frames[k];
		bool entry = w[0].version_hex < 0x030b0000 || !strcmp(f->name, "<lambda>") ||
			     !strcmp(f->name, "<module>");

		CHECK(!!(f->instr & PY_ENTRY) == entry, "%s: frame %d (%s) %s an entry mark",
		      s->label, k, f->name, entry ? "lacks" : "has");
	}
}

/* Checks the snapshot file at path; false when a check failed. */
static bool check_snapshot_file(const char *path, unsigned int min_frames)
{
	int failed = unit_failed;
	struct snapshot s;
	char err[256];
	int ret = snapshot__read(&s, path);

	CHECK(!ret, "%s: %s", path, ret == -ESTALE ? "a mapped file changed since the capture" :
		   strerror(-ret));
	if (ret) {
		snapshot__free(&s);
		return false;
	}
	ret = walker_host__load(&s, err, sizeof(err));
	CHECK(!ret, "%s: %s", s.label, err);
	if (!ret) {
		check_native(&s, min_frames);
		if (s.npy)
			check_python(&s);
		char at[160];

		printf("%-18s %3zu native frames%s, %3zu python frames, stopped at %s\n", s.label,
		       s.nexpect, s.expect_outermost ? " (whole)" : "", s.npy,
		       where(&s, s.ip, at, sizeof(at)));
	}
	walker_host__unload();
	snapshot__free(&s);
	return unit_failed == failed;
}

/* Captures argv into dir/label.K.snap; the paths written go to paths[]. */
static int capture(const char *dir, const char *label, char *const argv[],
		   const struct capture_opts *o, char paths[][4096], size_t *n)
{
	static struct snapshot snaps[MAX_STOPS];
	size_t i, got = 0;
	int err;

	err = capture__run(argv, o, label, snaps, &got);
	if (err == -EPERM)
		ptrace_refused = true;
	for (i = 0; i < got; i++) {
		if (snprintf(paths[i], sizeof(paths[i]), "%s/%s.snap", dir, snaps[i].label) >=
		    (int)sizeof(paths[i]))
			err = -ENAMETOOLONG;
		if (!err)
			err = snapshot__write(&snaps[i], paths[i]);
		snapshot__free(&snaps[i]);
	}
	*n = err ? 0 : got;
	return err;
}

/*
 * Captures and checks label: stops of argv (every delay_ms, or its own SIGSTOPs; stride: see
 * struct capture_opts), each with a stack of at least min_frames.
 */
static void run_case(const char *dir, const char *label, char *const argv[], unsigned int stops,
		     unsigned int delay_ms, unsigned int stride, bool python, unsigned int min_frames)
{
	static char paths[MAX_STOPS][4096];
	char expect[4096] = "";
	struct capture_opts o = {
		.stops = stops, .delay_ms = delay_ms, .stride = stride, .min_depth = min_frames,
	};
	size_t n = 0, i;
	int err;

	if (python) {
		snprintf(expect, sizeof(expect), "%s/%s.pyexpect", dir, label);
		o.py_expect = expect;
	}
	err = capture(dir, label, argv, &o, paths, &n);
	CHECK(!err && n == stops, "%s: capture: %s (%zu of %u stops)", label,
	      err ? strerror(-err) : "ok", n, stops);
	/*
	 * The file is what is checked (written, then read back). A failing one stays for
	 * "test_walker replay" (and gdb); the others go, unless $XPU_WALKER_SNAPS asked for them
	 * (a Python one holds all the process's written memory: megabytes).
	 */
	for (i = 0; i < n; i++)
		if (!check_snapshot_file(paths[i], min_frames))
			snprintf(failed_list + strlen(failed_list),
				 sizeof(failed_list) - strlen(failed_list), " %s", paths[i]);
		else if (!getenv("XPU_WALKER_SNAPS"))
			unlink(paths[i]);
	if (python)
		unlink(expect);
}

/* CPython 3.10-3.13 interpreters on this machine: pyenv's and the system's */
static void python_cases(const char *dir)
{
	const char *root = getenv("PYENV_ROOT"), *home = getenv("HOME");
	char pattern[4096], label[64];
	glob_t g = { 0 };
	size_t i;

	if (root)
		snprintf(pattern, sizeof(pattern), "%s/versions/3.1[0-3].*/bin/python3.1[0-3]", root);
	else
		snprintf(pattern, sizeof(pattern), "%s/.pyenv/versions/3.1[0-3].*/bin/python3.1[0-3]",
			 home ? home : "/");
	glob(pattern, 0, NULL, &g);
	glob("/usr/bin/python3.1[0-3]", GLOB_APPEND, NULL, &g);
	if (!g.gl_pathc)
		printf("no CPython 3.10-3.13 found: the Python walk is not covered\n");
	for (i = 0; i < g.gl_pathc; i++) {
		char *argv[] = { g.gl_pathv[i], "-S", WALKER_SRC_DIR "/py_deep.py", NULL, NULL };
		const char *v = strrchr(g.gl_pathv[i], '/') + 1;
		char expect[4096];

		snprintf(label, sizeof(label), "py%s-%s", v + 6,
			 strncmp(g.gl_pathv[i], "/usr/", 5) ? "pyenv" : "system");
		snprintf(expect, sizeof(expect), "%s/%s.pyexpect", dir, label);
		argv[3] = expect;
		/* the interpreter's native stack through libc's kill(): deep, without frame pointers */
		run_case(dir, label, argv, 2, 0, 0, true, 10);
	}
	globfree(&g);
}

/*
 * The walk's row cache is shared by every CPU and written without a lock, so a reader may get
 * one entry's check word with another's value word (a torn read): that must miss, never give
 * one address's row for another. Hits, generations and the "no row" entries are checked too.
 */
static void cache_cases(void)
{
	const uint64_t a = 0x7f1234567890;
	const uint32_t gen = 7, row_a = 3 | 0xfe << 8 | 0x40 << 16, row_b = 1 | 0x10 << 16;
	struct walk_cache_entry ea, eb, *e;
	uint64_t b;
	uint32_t row = 0;

	CHECK(!walker_host__cache_get(a, gen, &row), "cache: a hit in an empty cache");
	walker_host__cache_put(a, gen, row_a);
	CHECK(walker_host__cache_get(a, gen, &row) && row == row_a,
	      "cache: the row put is not the row got (%#x)", row);
	CHECK(!walker_host__cache_get(a, gen + 1, &row), "cache: a hit in another generation");
	CHECK(!walker_host__cache_get(a + 1, gen, &row) || walker_host__cache_entry(a + 1, gen) !=
	      walker_host__cache_entry(a, gen), "cache: a hit for another address");
	walker_host__cache_put(a, gen, 0);	/* XPU_CFI_NONE: no usable row there */
	CHECK(walker_host__cache_get(a, gen, &row) && row == 0, "cache: a \"no row\" entry missed");
	/* another address of the same generation on the same entry */
	for (b = a + 1; walker_host__cache_entry(b, gen) != walker_host__cache_entry(a, gen); b++)
		;
	walker_host__cache_put(a, gen, row_a);
	e = walker_host__cache_entry(a, gen);
	ea = *e;
	walker_host__cache_put(b, gen, row_b);
	eb = *e;
	CHECK(walker_host__cache_get(b, gen, &row) && row == row_b && !walker_host__cache_get(a, gen, &row),
	      "cache: the later address does not own the entry");
	e->check = ea.check;	/* torn: a's check word, b's value */
	e->val = eb.val;
	CHECK(!walker_host__cache_get(a, gen, &row) && !walker_host__cache_get(b, gen, &row),
	      "cache: a torn entry (a's check, b's value) hit");
	e->check = eb.check;	/* torn the other way */
	e->val = ea.val;
	CHECK(!walker_host__cache_get(a, gen, &row) && !walker_host__cache_get(b, gen, &row),
	      "cache: a torn entry (b's check, a's value) hit");
	walker_host__unload();
}

static int run_all(void)
{
	const char *dir = getenv("XPU_WALKER_SNAPS");
	char *nofp[] = { FIXTURE_DIR "/walker_chain", "60", "40", NULL };
	char *fp[] = { FIXTURE_DIR "/walker_chain_fp", "60", "40", NULL };

	cache_cases();
	if (!dir)
		dir = FIXTURE_DIR "/snaps";
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return 1;
	}
	/* timed stops: mostly in the leaf's loop, where the chain spends its time */
	run_case(dir, "c-nofp", nofp, 8, 15, 0, false, 40);
	run_case(dir, "c-fp", fp, 4, 15, 0, false, 40);
	/*
	 * Stepped stops, where a timed stop seldom lands, from the leaf's return on: every
	 * instruction of the epilogues back up the chain, a PLT stub, libc's and the vdso's
	 * clock_gettime; then every third, on to the prologues down to the leaf again.
	 */
	run_case(dir, "c-nofp-step", nofp, 40, 15, 1, false, 40);
	run_case(dir, "c-nofp-stride", nofp, 40, 15, 3, false, 40);
	run_case(dir, "c-fp-step", fp, 40, 15, 1, false, 40);
	run_case(dir, "c-fp-stride", fp, 40, 15, 3, false, 40);
	python_cases(dir);
	if (failed_list[0])
		fprintf(stderr, "failed, kept for \"test_walker replay\":%s\n", failed_list);
	return unit_finish();
}

int main(int argc, char **argv)
{
	static char paths[MAX_STOPS][4096];
	struct capture_opts o = { .stops = 1 };
	char **cmd;
	size_t n, i;
	int opt, err;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* in order with the failures on stderr */
	if (argc < 2) {
		err = run_all();
		/* a container's seccomp or Yama's scope 3: no snapshot can be taken here */
		if (ptrace_refused && !unit_passed) {
			printf("ptrace of a child is refused here\n");
			return 77;
		}
		return err;
	}
	if (!strcmp(argv[1], "replay")) {
		for (i = 2; i < (size_t)argc; i++)
			check_snapshot_file(argv[i], 0);
		return unit_finish();
	}
	if (strcmp(argv[1], "capture"))
		goto usage;
	optind = 2;
	/* "+": options only before DIR, so that CMD keeps its own */
	while ((opt = getopt(argc, argv, "+n:d:s:p:")) != -1) {
		if (opt == 'n')
			o.stops = (unsigned int)atoi(optarg);
		else if (opt == 's')
			o.stride = (unsigned int)atoi(optarg);
		else if (opt == 'd')
			o.delay_ms = (unsigned int)atoi(optarg);
		else if (opt == 'p')
			o.py_expect = optarg;
		else
			goto usage;
	}
	if (argc - optind < 3 || !o.stops || o.stops > MAX_STOPS)
		goto usage;
	cmd = argv + optind + 2;
	if (!strcmp(cmd[0], "--"))
		cmd++;
	if (!cmd[0])
		goto usage;
	err = capture(argv[optind], argv[optind + 1], cmd, &o, paths, &n);
	for (i = 0; i < n; i++)
		printf("%s\n", paths[i]);
	if (err)
		fprintf(stderr, "capture: %s\n", strerror(-err));
	return err ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s [replay SNAP... | capture [-n STOPS] [-d MS] [-s STRIDE] [-p PYEXPECT] "
		"DIR LABEL -- CMD...]\n", argv[0]);
	return 2;
}
