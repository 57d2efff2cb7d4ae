// SPDX-License-Identifier: MIT
/*
 * record/proc_table.c and record/procmaps.c on real processes, without root: this test's own
 * mappings and those of its children are read into the table, and a handler that counts every
 * call checks what the table tells handlers: each file once, each new mapping once, a read
 * that changed nothing as such, an exec and an exit as the end of an image (with a new image
 * after), a thread's end, the joins of a record, the slots given back when the table is freed.
 * Also: an IP in no known mapping has the mappings read again, at most every 200 ms; the live
 * tree's count, signals, exit statuses and the processes gone without an exit event. The writer
 * thread is a stub that keeps the records' types and mappings.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "event_stack.h"
#include "proc_table.h"
#include "procmaps.h"
#include "unit.h"
#include "writer_thread.h"
#include "xpu_bpf_abi.h"

#define LIB FIXTURE_DIR "/remote_call_lib.so"
#define MS 1000000ull

/* ---- stub writer thread ---------------------------------------------------------------------- */

static unsigned int nrec[64];
static char dso_paths[256][PATH_MAX];
static unsigned int ndso;
static struct xpu_rec_mapping last_mapping;

int writer_thread__submit(struct writer_thread *wt, const struct wt_rec *r)
{
	nrec[r->type < 64 ? r->type : 0]++;
	if (r->type == XPU_REC_DSO && ndso < 256)
		snprintf(dso_paths[ndso++], PATH_MAX, "%.*s", (int)r->str[0].len, r->str[0].s);
	if (r->type == XPU_REC_MAPPING)
		memcpy(&last_mapping, r->body, sizeof(last_mapping));
	return 0;
}

/* ---- a handler that counts ------------------------------------------------------------------- */

struct counting {
	struct map_handler h;
	unsigned int files, mappings, reads, changed, ends, exec_ends, thread_ends, records;
	unsigned int slots, freed;
	char last_file[PATH_MAX];
	pid_t last_pid;
	uint32_t last_tid;
};

static struct counting *of(struct map_handler *h)
{
	return (struct counting *)h;
}

static void on_file(struct map_handler *h, struct proc_file *f, const struct proc_file_open *o)
{
	struct counting *c = of(h);

	c->files++;
	snprintf(c->last_file, sizeof(c->last_file), "%s", o->path);
	CHECK(f->ino && f->dso_id, "a file with an inode and a DSO id");
	CHECK(o->fd >= 0, "%s: opened", o->path);
	CHECK(!strncmp(o->map_path, "/proc/", 6) && strstr(o->map_path, "/map_files/"),
	      "map path %s", o->map_path);
	CHECK(!*proc_file__slot(f, h), "a new file's slot is empty");
	*proc_file__slot(f, h) = malloc(1);
	c->slots++;
}

static void on_mapping(struct map_handler *h, struct proc *p, const struct proc_map *m,
		       uint64_t ts_ns)
{
	struct counting *c = of(h);

	c->mappings++;
	c->last_pid = p->pid;
	CHECK(m->file && m->start < m->end && (m->prot & PROT_EXEC), "mapping %#lx-%#lx",
	      (unsigned long)m->start, (unsigned long)m->end);
	if (!*proc__slot(p, h)) {
		*proc__slot(p, h) = malloc(1);
		c->slots++;
	}
}

static void on_maps(struct map_handler *h, struct proc *p, bool changed)
{
	of(h)->reads++;
	of(h)->changed += changed;
}

static void on_end(struct map_handler *h, struct proc *p, bool exec)
{
	struct counting *c = of(h);

	c->ends++;
	c->exec_ends += exec;
	c->last_pid = p->pid;
	if (*proc__slot(p, h)) {
		free(*proc__slot(p, h));
		*proc__slot(p, h) = NULL;
		c->freed++;
	}
}

static void on_thread_end(struct map_handler *h, uint32_t tid)
{
	of(h)->thread_ends++;
	of(h)->last_tid = tid;
}

static void on_record(struct map_handler *h, const struct xpu_ev_hdr *ev, struct wt_rec *r)
{
	of(h)->records++;
	of(h)->last_tid = ev->tid;
}

static void free_slot(struct map_handler *h, void *slot)
{
	free(slot);
	of(h)->freed++;
}

static struct counting counter = {
	.h = {
		.name = "counting",
		.on_file = on_file,
		.on_mapping = on_mapping,
		.on_maps = on_maps,
		.on_end = on_end,
		.on_thread_end = on_thread_end,
		.on_record = on_record,
		.free_proc = free_slot,
		.free_file = free_slot,
	},
};

/* ---- helpers --------------------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool dso_named(const char *suffix)
{
	size_t n = strlen(suffix);
	unsigned int i;

	for (i = 0; i < ndso; i++)
		if (strlen(dso_paths[i]) >= n && !strcmp(dso_paths[i] + strlen(dso_paths[i]) - n, suffix))
			return true;
	return false;
}

/* DSO records of files ([vdso], [vsyscall] and anonymous code are not). */
static unsigned int files_with_path(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < ndso; i++)
		n += dso_paths[i][0] == '/';
	return n;
}

/* A child that runs sleep; returns once it has exec'd. */
/* whether /proc/PID/maps maps the file at path */
static bool maps_have(pid_t pid, const char *path)
{
	char name[64], line[PATH_MAX + 128];
	bool found = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, path) != NULL;
	fclose(f);
	return found;
}

static pid_t start_sleep(void)
{
	char exe[PATH_MAX], path[64];
	pid_t pid = fork();
	int i;

	if (pid == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	/* up to 30 s, then said: on a loaded machine (parallel tests, ASan) the exec took over
	 * the 2 s this waited before, and the test went on with the parent's image */
	for (i = 0; i < 30000; i++) {
		ssize_t n = readlink(path, exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = '\0';
			/* the exec names the new image before it maps it: wait for its mapping too */
			if (strstr(exe, "sleep") && maps_have(pid, exe))
				return pid;
		}
		usleep(1000);
	}
	CHECK(0, "the child %d did not exec sleep within 30 s", (int)pid);
	return pid;
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* This process's own mappings: every file once, every mapping once, nothing new the second time. */
static void test_self(struct proc_table *pt, struct procmaps *pm)
{
	pid_t self = getpid();
	struct procmaps_stats st;
	unsigned int files, mappings;
	struct proc *p;
	int ret;

	ret = procmaps__scan(pm, self, now_ns());
	CHECK(ret > 0, "first read of our own maps: %d new mappings", ret);
	CHECK(counter.files >= 2 && counter.files == files_with_path(),
	      "a handler call per DSO of a file (%u, %u DSO records)", counter.files,
	      nrec[XPU_REC_DSO]);
	CHECK(dso_named("/test_proc_table") && dso_named("[vdso]"), "our binary and the vdso");
	CHECK(counter.mappings == (unsigned int)ret && nrec[XPU_REC_MAPPING] == (unsigned int)ret,
	      "a MAPPING and a handler call per new mapping: %u, %u", counter.mappings,
	      nrec[XPU_REC_MAPPING]);
	CHECK(counter.reads == 1 && counter.changed == 1, "one read that changed them");
	CHECK(nrec[XPU_REC_VDSO_IMAGE] == 1, "the vdso's image");
	p = proc_table__find(pt, self);
	CHECK(p && p->nr == (size_t)ret && p->state == PROC_SEEN, "our entry: %zu maps",
	      p ? p->nr : 0);
	files = counter.files;
	mappings = counter.mappings;
	ret = procmaps__scan(pm, self, now_ns());
	CHECK(ret == 0 && counter.files == files && counter.mappings == mappings,
	      "a second read finds nothing new (%d)", ret);
	CHECK(counter.reads == 2 && counter.changed == 1, "a read that changed nothing");
	procmaps__get_stats(pm, &st);
	CHECK(st.scans == 2 && st.dsos == nrec[XPU_REC_DSO] && st.mappings == (uint64_t)mappings,
	      "stats: %lu scans, %lu DSOs, %lu mappings", (unsigned long)st.scans,
	      (unsigned long)st.dsos, (unsigned long)st.mappings);
}

/* A library loaded now: one new file, its mappings; the table's lookups find them. */
static void test_dlopen(struct proc_table *pt, struct procmaps *pm)
{
	unsigned int files = counter.files, mappings = counter.mappings;
	const struct proc_map *m;
	void *lib = dlopen(LIB, RTLD_NOW), *fn;
	int ret;

	CHECK(lib != NULL, "dlopen %s: %s", LIB, dlerror());
	if (!lib)
		return;
	fn = dlsym(lib, "remote_hello");
	ret = procmaps__scan(pm, getpid(), now_ns());
	CHECK(ret >= 1 && counter.files == files + 1 && counter.mappings == mappings + (unsigned)ret,
	      "the library: %d mappings, %u files", ret, counter.files - files);
	CHECK(strstr(counter.last_file, "remote_call_lib.so") != NULL, "its file: %s",
	      counter.last_file);
	m = fn ? proc_table__mapping_of(pt, getpid(), (uint64_t)(uintptr_t)fn) : NULL;
	CHECK(m && m->file && m->file->dso_id == last_mapping.dso_id,
	      "the mapping of one of its functions, in its DSO");
	CHECK(!proc_table__mapping_of(pt, getpid(), 8), "no mapping of address 8");
	dlclose(lib);
}

/* An IP in no mapping known: the maps are read again, at most every 200 ms a process. */
static void test_unknown_ip(struct proc_table *pt, struct procmaps *pm)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *code = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t ip = (uint64_t)(uintptr_t)code + 16, t0 = now_ns();
	struct procmaps_stats before, after;

	CHECK(code != MAP_FAILED, "mmap: %s", strerror(errno));
	if (code == MAP_FAILED)
		return;
	procmaps__get_stats(pm, &before);
	proc_table__check_ip(pt, getpid(), ip, t0);
	procmaps__get_stats(pm, &after);
	CHECK(after.scans == before.scans + 1 && proc_table__mapping_of(pt, getpid(), ip),
	      "an unknown IP has the maps read, and then it is known");
	proc_table__check_ip(pt, getpid(), ip, t0 + MS);
	proc_table__check_ip(pt, getpid(), 8, t0 + 2 * MS);
	procmaps__get_stats(pm, &before);
	CHECK(before.scans == after.scans, "a known IP reads nothing; an unknown one waits 200 ms");
	proc_table__check_ip(pt, getpid(), 8, t0 + 201 * MS);
	procmaps__get_stats(pm, &after);
	CHECK(after.scans == before.scans + 1, "... and then reads again");
	munmap(code, len);
}

/* An executable mmap: its one mapping is looked up, merged in address order; no scan. */
static void test_mapped(struct proc_table *pt, struct procmaps *pm)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE), i;
	uint8_t *code = mmap(NULL, 3 * len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	uint64_t ip = (uint64_t)(uintptr_t)code;
	struct procmaps_stats before, after;
	const struct proc *p = proc_table__find(pt, getpid());
	bool sorted = true;
	int ret;

	CHECK(code != MAP_FAILED && p, "mmap: %s", strerror(errno));
	if (code == MAP_FAILED || !p)
		return;
	procmaps__get_stats(pm, &before);
	ret = procmaps__mapped(pm, getpid(), ip, now_ns());
	procmaps__get_stats(pm, &after);
	if (after.queries == before.queries) {
		printf("# no PROCMAP_QUERY on this kernel: an mmap is a scan\n");
	} else {
		CHECK(ret == 1 && after.scans == before.scans && last_mapping.start == ip,
		      "one lookup, one new mapping, no scan (%d)", ret);
		/* the middle page made another mapping: the one it split is replaced */
		mprotect(code + len, len, PROT_READ);
		ret = procmaps__mapped(pm, getpid(), ip, now_ns());
		CHECK(ret == 1 && last_mapping.end == ip + len, "the split mapping: %d", ret);
	}
	CHECK(proc_table__mapping_of(pt, getpid(), ip + 8), "its IP is known");
	for (i = 1; i < p->nr; i++)
		sorted = sorted && p->maps[i - 1].end <= p->maps[i].start;
	CHECK(sorted, "the mappings stay in address order, none overlapping");
	munmap(code, 3 * len);
}

/* A fork child: its mappings are its parent's, copied, not read. */
static void test_forked(struct proc_table *pt, struct procmaps *pm)
{
	const struct proc *self = proc_table__find(pt, getpid()), *c;
	struct procmaps_stats before, after;
	pid_t pid = fork();
	int ret;

	if (pid == 0) {
		pause();
		_exit(0);
	}
	CHECK(pid > 0 && self, "fork");
	procmaps__get_stats(pm, &before);
	ret = procmaps__forked(pm, pid, getpid(), now_ns());
	procmaps__get_stats(pm, &after);
	c = proc_table__find(pt, pid);
	CHECK(c && self && ret == (int)self->nr && c->nr == self->nr &&
	      after.scans == before.scans && after.inherited == before.inherited + self->nr,
	      "the child has its parent's %d mappings, with no scan", ret);
	CHECK(c && proc_table__mapping_of(pt, pid, (uint64_t)(uintptr_t)test_forked),
	      "the parent's code is the child's");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	proc_table__exited(pt, pid, -1);
}

/* A child of the tree: its exec ends its image, its exit too; the live count follows. */
static void test_child(struct proc_table *pt, struct procmaps *pm)
{
	unsigned int ends = counter.ends, exec_ends = counter.exec_ends, freed = counter.freed;
	unsigned int lost = nrec[XPU_REC_LOST];
	pid_t pid = start_sleep();
	struct proc *p;
	uint32_t image;
	int status = 0, got = -1, ret;

	CHECK(pid > 0, "fork");
	CHECK(!proc_table__add_live(pt, pid) && proc_table__live(pt) == 1, "one live process");
	ret = procmaps__scan(pm, pid, now_ns());
	CHECK(ret > 0 && counter.last_pid == pid, "the child's mappings: %d", ret);
	CHECK(dso_named("sleep"), "sleep's DSO");
	p = proc_table__find(pt, pid);
	CHECK(p && p->state == PROC_LIVE && *proc__slot(p, &counter.h), "live, with a slot");
	if (!p)
		return;
	image = p->image;
	proc_table__exec(pt, pid);
	CHECK(counter.exec_ends == exec_ends + 1 && counter.freed == freed + 1 && !p->nr &&
	      p->image != image, "an exec ends the image: slot freed, mappings gone, new image");
	ret = procmaps__scan(pm, pid, now_ns());
	CHECK(ret > 0 && (size_t)ret == p->nr, "after the exec every mapping is new (%d)", ret);
	image = p->image;
	proc_table__signal(pt, SIGTERM);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "the live tree was signaled");
	CHECK(proc_table__exit_status(pt, pid, &got) == -ENOENT, "no exit status before the exit");
	proc_table__exited(pt, pid, status);
	CHECK(counter.ends == ends + 2 && counter.exec_ends == exec_ends + 1 &&
	      counter.freed == freed + 2, "the exit ends the image");
	CHECK(proc_table__live(pt) == 0 && p->state == PROC_EXITED && !p->nr && p->image != image,
	      "exited: not live, no mappings, the next image another");
	CHECK(!proc_table__exit_status(pt, pid, &got) && got == status, "exit status %#x", got);
	/* its pid read again: the process is gone */
	ret = procmaps__scan(pm, pid, now_ns());
	CHECK(ret < 0 && nrec[XPU_REC_LOST] == lost + 1, "a gone process: %d and a LOST record",
	      ret);
	/* more reads of it fail too: the process is said once, the reads counted */
	procmaps__scan(pm, pid, now_ns());
	procmaps__mapped(pm, pid, 4096, now_ns());
	CHECK(nrec[XPU_REC_LOST] == lost + 1, "a gone process read 3 times: %u LOST records",
	      nrec[XPU_REC_LOST] - lost);
	CHECK(!proc_table__add_live(pt, pid) && proc_table__live(pt) == 1 &&
	      p->state == PROC_LIVE, "a reused pid is live again");
	proc_table__exited(pt, pid, -1);
	CHECK(proc_table__live(pt) == 0, "and ends again");
}

/* A live process that is gone without an exit event is found. */
static void test_reap(struct proc_table *pt, struct procmaps *pm)
{
	pid_t pid = start_sleep(), gone[4] = { 0 };
	unsigned int ends = counter.ends;
	int status;

	proc_table__add_live(pt, pid);
	CHECK(proc_table__reap_gone(pt, gone, 4) == 0, "a running child is not gone");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(proc_table__reap_gone(pt, gone, 4) == 1 && gone[0] == pid, "the killed child is");
	CHECK(proc_table__live(pt) == 0 && counter.ends == ends + 1, "ended, not live");
	CHECK(proc_table__exit_status(pt, pid, &status) == -ENOENT, "its status is unknown");
}

/* A record's joins and a thread's end reach the handler; an entry stack checks its IP. */
static void test_joins(struct proc_table *pt)
{
	struct xpu_ev_hdr h = { .pid = (uint32_t)getpid(), .tid = 4321, .ts_ns = now_ns() };
	__u64 uips[3] = { 0, (uintptr_t)test_joins, (uintptr_t)test_reap };
	uint64_t body = 0;
	struct wt_rec r = { .body = &body, .body_size = sizeof(body) };
	unsigned int records = counter.records;

	proc_table__thread_exited(pt, 99);
	CHECK(counter.thread_ends == 1 && counter.last_tid == 99, "a thread's end");
	CHECK(event_stack__entry(pt, &r, &h, uips, 1, 2, 0), "an entry stack");
	CHECK(r.has_stack && r.nr_user == 2 && r.ips[0] == uips[1] && counter.records == records + 1 &&
	      counter.last_tid == 4321, "from its start, joined");
	memset(&r, 0, sizeof(r));
	CHECK(!event_stack__entry(pt, &r, &h, uips, 1, -14, 0) && !r.has_stack,
	      "an event without its stack");
	CHECK(event_stack__entry(pt, &r, &h, uips, 2, XPU_BPF_MAX_UFRAMES, 0) && !r.has_stack,
	      "a stack past the event's frames is not taken");
}

int main(void)
{
	static struct map_handler idle[PROC_MAX_HANDLERS];
	struct proc_table *pt = proc_table__new();
	struct procmaps *pm = pt ? procmaps__new(NULL, pt) : NULL;
	unsigned int i;

	CHECK(pt && pm, "new");
	if (!pt || !pm)
		return unit_finish();
	CHECK(!proc_table__add_handler(pt, &counter.h) && counter.h.pt == pt && counter.h.slot == 0,
	      "a handler added");
	for (i = 1; i < PROC_MAX_HANDLERS; i++)
		CHECK(!proc_table__add_handler(pt, &idle[i]) && idle[i].slot == i, "handler %u", i);
	CHECK(proc_table__add_handler(pt, &idle[0]) == -ENOSPC, "no room past the last slot");
	CHECK(proc_table__handler(pt, 1) == &idle[1] && !proc_table__handler(pt, i), "handlers");
	test_self(pt, pm);
	test_dlopen(pt, pm);
	test_unknown_ip(pt, pm);
	test_mapped(pt, pm);
	test_forked(pt, pm);
	test_child(pt, pm);
	test_reap(pt, pm);
	test_joins(pt);
	proc_table__free(pt);
	CHECK(counter.freed == counter.slots, "every slot given back: %u of %u", counter.freed,
	      counter.slots);
	procmaps__free(pm);
	return unit_finish();
}
