// SPDX-License-Identifier: MIT
/*
 * Snapshots of a real process (snapshot.h) without BPF or privilege: the program runs as our
 * ptrace child (PTRACE_TRACEME), and at each stop we keep its registers, the memory its maps
 * hold that the mapped files do not, and libdw's unwind of the same stopped thread: an
 * unwinder written independently of ours, from the same .eh_frame, is the expected stack.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapshot.h"

#define CAP_MAX_FRAMES 1024

struct pcs {
	uint64_t *pc;
	size_t n;
};

static int dw_frame(Dwfl_Frame *state, void *arg)
{
	struct pcs *p = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || p->n == CAP_MAX_FRAMES)
		return DWARF_CB_ABORT;
	p->pc[p->n++] = pc;
	return DWARF_CB_OK;
}

/* none: libdw then unwinds with .eh_frame alone, as the BPF walk does */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file,
			GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

/* libdw's stack of the stopped thread; 0 (*outermost set when it ended without error) */
static int libdw_stack(pid_t pid, struct snapshot *s)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = no_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	struct pcs p = { .pc = calloc(CAP_MAX_FRAMES, 8) };
	Dwfl *dwfl = dwfl_begin(&cb);
	int err = -EIO;

	if (!p.pc || !dwfl)
		goto cleanup;
	if (dwfl_linux_proc_report(dwfl, pid) || dwfl_report_end(dwfl, NULL, NULL) ||
	    dwfl_linux_proc_attach(dwfl, pid, true))
		goto cleanup;
	s->expect_outermost = dwfl_getthread_frames(dwfl, pid, dw_frame, &p) == 0;
	s->expect_pcs = p.pc;
	s->nexpect = p.n;
	p.pc = NULL;
	err = 0;
cleanup:
	if (dwfl)
		dwfl_end(dwfl);
	free(p.pc);
	return err;
}

static bool keep_bytes(const char *path, uint32_t prot, unsigned long anon_kb)
{
	if (!(prot & SNAP_PROT_R) || !strcmp(path, "[vvar]") || !strcmp(path, "[vsyscall]") ||
	    !strcmp(path, "[vvar_vclock]"))
		return false;
	/* a file's pages that nobody wrote are read from the file at walk time */
	return path[0] != '/' || (prot & SNAP_PROT_W) || anon_kb;
}

static int add_map(struct snapshot *s, int memfd, uint64_t start, uint64_t end, uint64_t pgoff,
		   const char *perms, const char *path, unsigned long anon_kb)
{
	struct snap_map *m, *maps = realloc(s->maps, (s->nmaps + 1) * sizeof(*maps));
	struct stat st;

	if (!maps)
		return -ENOMEM;
	s->maps = maps;
	m = &maps[s->nmaps++];
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->prot = (perms[0] == 'r' ? SNAP_PROT_R : 0) | (perms[1] == 'w' ? SNAP_PROT_W : 0) |
		  (perms[2] == 'x' ? SNAP_PROT_X : 0);
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	if (path[0] == '/' && !stat(path, &st) && S_ISREG(st.st_mode)) {
		m->file_size = (uint64_t)st.st_size;
		m->file_mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
				   (uint64_t)st.st_mtim.tv_nsec;
	} else if (path[0] == '/') {
		m->path[0] = 0;		/* gone or not a file (a memfd): keep its bytes */
	}
	if (!keep_bytes(m->path, m->prot, anon_kb))
		return 0;
	m->data = malloc(end - start);
	if (!m->data)
		return -ENOMEM;
	if (pread(memfd, m->data, end - start, (off_t)start) != (ssize_t)(end - start)) {
		free(m->data);		/* unreadable (a device mapping): reads say -ENODATA */
		m->data = NULL;
	}
	return 0;
}

/* The maps of pid with the bytes keep_bytes() asks for; "Anonymous:" comes after its map. */
static int read_maps(pid_t pid, struct snapshot *s)
{
	char name[64], line[4096 + 128], perms[8], path[4096], pending_perms[8] = "";
	char pending_path[4096] = "";
	uint64_t start, end, pgoff, pstart = 0, pend = 0, ppgoff = 0;
	unsigned long anon = 0;
	int memfd, err = 0, pos;
	bool pending = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/mem", pid);
	memfd = open(name, O_RDONLY | O_CLOEXEC);
	snprintf(name, sizeof(name), "/proc/%d/smaps", pid);
	f = fopen(name, "r");
	if (memfd < 0 || !f) {
		err = -errno;
		goto cleanup;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long kb;

		if (sscanf(line, "Anonymous: %lu kB", &kb) == 1) {
			anon = kb;
			continue;
		}
		pos = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*x:%*x %*u %n", &start, &end, perms, &pgoff,
			   &pos) < 4 || !pos)
			continue;
		if (pending)
			err = add_map(s, memfd, pstart, pend, ppgoff, pending_perms, pending_path,
				      anon);
		snprintf(path, sizeof(path), "%s", line + pos);
		path[strcspn(path, "\n")] = 0;
		pstart = start;
		pend = end;
		ppgoff = pgoff;
		memcpy(pending_perms, perms, sizeof(perms));
		memcpy(pending_path, path, sizeof(path));
		anon = 0;
		pending = true;
	}
	if (!err && pending)
		err = add_map(s, memfd, pstart, pend, ppgoff, pending_perms, pending_path, anon);
cleanup:
	if (f)
		fclose(f);
	if (memfd >= 0)
		close(memfd);
	return err;
}

/* The program's list of its Python frames, innermost first ("name firstlineno" lines). */
static int read_py_expect(const char *path, struct snapshot *s)
{
	FILE *f = fopen(path, "r");
	char line[256];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct snap_py_frame fr = { 0 }, *py;

		if (sscanf(line, "%63s %u", fr.name, &fr.firstlineno) != 2)
			continue;
		py = realloc(s->py, (s->npy + 1) * sizeof(*py));
		if (!py) {
			fclose(f);
			return -ENOMEM;
		}
		s->py = py;
		s->py[s->npy++] = fr;
	}
	fclose(f);
	return 0;
}

static int snap_stopped(pid_t pid, const char *py_expect, const char *label, unsigned int k,
			struct snapshot *s)
{
	struct user_regs_struct r;
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(s->label, sizeof(s->label), "%s.%u", label, k);
	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return -errno;
	s->pid = s->tid = (uint32_t)pid;
	s->ip = r.rip;
	s->sp = r.rsp;
	s->bp = r.rbp;
	s->fsbase = r.fs_base;
	err = read_maps(pid, s);
	if (!err)
		err = libdw_stack(pid, s);
	if (!err && py_expect)
		err = read_py_expect(py_expect, s);
	return err;
}

/* Waits for the child's next SIGSTOP, passing on other signals; -ECHILD when it ended. */
static int wait_stop(pid_t pid)
{
	int st;

	for (;;) {
		if (waitpid(pid, &st, 0) < 0)
			return -errno;
		if (!WIFSTOPPED(st))
			return -ECHILD;
		if (WSTOPSIG(st) == SIGSTOP)
			return 0;
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st)))
			return -errno;
	}
}

/* Waits for the trap of a breakpoint or a single step, passing on signals; -ECHILD: it ended. */
static int wait_trap(pid_t pid)
{
	int st;

	for (;;) {
		if (waitpid(pid, &st, 0) < 0)
			return -errno;
		if (!WIFSTOPPED(st))
			return -ECHILD;
		if (WSTOPSIG(st) == SIGTRAP)
			return 0;
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st)))
			return -errno;
	}
}

/*
 * Runs the stopped child until it reaches at (an int3 there, the byte put back and the pc
 * moved back onto it after).
 */
static int run_to(pid_t pid, uint64_t at)
{
	struct user_regs_struct r;
	long word;
	int err;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)at, NULL);
	if (errno)
		return -errno;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)at, (void *)((word & ~0xffl) | 0xcc)) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL))
		return -errno;
	err = wait_trap(pid);
	if (err)
		return err;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)at, (void *)word) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return -errno;
	if (r.rip != at + 1)
		return -EPROTO;
	r.rip = at;
	return ptrace(PTRACE_SETREGS, pid, NULL, &r) ? -errno : 0;
}

/* Single-steps the stopped child n instructions. */
static int step(pid_t pid, unsigned int n)
{
	int err = 0;

	while (!err && n--) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL))
			return -errno;
		err = wait_trap(pid);
	}
	return err;
}

/* The next timed or own stop of the running child, snapshot into s (retried while too shallow). */
static int next_stop(pid_t pid, const struct capture_opts *o, const char *label, unsigned int k,
		     struct snapshot *s)
{
	unsigned int tries = 0;
	int err;

	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, NULL))
			return -errno;
		if (o->delay_ms) {
			usleep(o->delay_ms * 1000);
			kill(pid, SIGSTOP);
		}
		err = wait_stop(pid);
		if (!err)
			err = snap_stopped(pid, o->py_expect, label, k, s);
		if (err || !o->delay_ms || s->nexpect >= o->min_depth || ++tries == 200)
			return err;
		snapshot__free(s);
	}
}

int capture__run(char *const argv[], const struct capture_opts *o, const char *label,
		 struct snapshot *out, size_t *nout)
{
	pid_t pid;
	int st, err = 0;
	unsigned int k;

	*nout = 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	/* the stop at exec; a child that could not be traced exits 126 instead */
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (!WIFSTOPPED(st))
		return WIFEXITED(st) && WEXITSTATUS(st) == 126 ? -EPERM : -ECHILD;
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_EXITKILL)) {
		err = -errno;
		goto cleanup;
	}
	for (k = 0; k < o->stops; k++) {
		if (k && o->stride) {
			/* from the first stop's return address on, instruction by instruction */
			err = k > 1 || out[0].nexpect < 2 ? 0 : run_to(pid, out[0].expect_pcs[1]);
			if (!err)
				err = step(pid, k > 1 ? o->stride : 0);
			if (!err)
				err = snap_stopped(pid, o->py_expect, label, k, &out[k]);
		} else {
			err = next_stop(pid, o, label, k, &out[k]);
		}
		if (err) {
			snapshot__free(&out[k]);
			break;
		}
		*nout = k + 1;
	}
cleanup:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return err;
}
