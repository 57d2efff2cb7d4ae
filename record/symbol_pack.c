// SPDX-License-Identifier: MIT
/*
 * The symbol pack made where the trace was recorded, once it is written: `xpu-report archive`
 * (format-spec/ARCHIVE.md) run on it, so one command on a production host leaves everything a
 * laptop needs. The recorder does not link the symbolizer (libdw): it runs the xpu-report
 * installed beside it, and on failure says what to run by hand; the trace is kept either way.
 *
 * Under sudo the archive runs as the user who ran sudo: it opens the paths the trace names, and
 * those are the traced processes' to change (a symlink to a root-only file swapped in after
 * they mapped their own). With that user's rights, it reads only what the user could read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbol_pack.h"
#include "user_creds.h"

/* xpu-report in the recorder's own directory (bin/ after make install, build/ in the tree). */
static int find_report(char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(buf, size, "%s/xpu-report", self) >= size)
		return -1;
	return access(buf, X_OK);
}

/*
 * The archive as a child: its warnings on our stderr, its summary line dropped (ours says it).
 * Without debuginfod unless asked: DEBUGINFOD_URLS is set system-wide on some distributions,
 * and a host that cannot reach the servers waits DEBUGINFOD_TIMEOUT (90 s) a connection, for
 * every file missing a debug file, at the end of every recording (4.6 minutes after a 0.2 s
 * one, measured, for no pack).
 */
static pid_t spawn_archive(const char *report, const char *trace, bool debuginfod,
			   const struct user_creds *user, const char *symfs_opt)
{
	pid_t pid = fork();
	int devnull, err;

	if (pid)
		return pid;
	/* nothing the recorder opened as root goes with it (a CLOEXEC left off anywhere) */
	close_range(STDERR_FILENO + 1, ~0u, 0);
	if (user && (err = -user_creds__become(user))) {
		fprintf(stderr, "xpu-record: cannot read the pack's files as uid %u: %s\n",
			(unsigned int)user->uid, strerror(err));
		_exit(126);
	}
	/* what the recorder ignored or blocked (it forwards signals to its target) is not ours */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigprocmask(SIG_SETMASK, &(sigset_t){ 0 }, NULL);
	if (!debuginfod)
		unsetenv("DEBUGINFOD_URLS");
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull >= 0)
		dup2(devnull, STDOUT_FILENO);
	/* the trace was written here a moment ago: no bound on the records it may keep */
	if (symfs_opt)
		execl(report, report, "archive", "--max-records=0", symfs_opt, trace, (char *)NULL);
	else
		execl(report, report, "archive", "--max-records=0", trace, (char *)NULL);
	fprintf(stderr, "xpu-record: cannot run %s: %s\n", report, strerror(errno));
	_exit(127);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int symbol_pack__make(const char *trace, const struct record_config *cfg, const char *symfs,
		      struct symbol_pack_done *done)
{
	char report[PATH_MAX + 16], symfs_opt[PATH_MAX + 16];
	struct user_creds user;
	double t0 = now_s();
	struct stat sb;
	pid_t pid;
	int status;

	if (find_report(report, sizeof(report))) {
		log_err("no symbol pack: no xpu-report beside xpu-record; run 'xpu-report archive %s' "
			"on this host to read the trace elsewhere", trace);
		return -1;
	}
	if ((size_t)snprintf(done->path, sizeof(done->path), "%s.xpa", trace) >= sizeof(done->path))
		return -1;
	if (cfg->sudo)
		user_creds__load(&user, cfg->user_uid, cfg->user_gid, cfg->user_name);
	if (symfs && (size_t)snprintf(symfs_opt, sizeof(symfs_opt), "--symfs=%s", symfs) >=
			     sizeof(symfs_opt))
		symfs = NULL;
	pid = spawn_archive(report, trace, cfg->pack_debuginfod, cfg->sudo ? &user : NULL,
			    symfs ? symfs_opt : NULL);
	if (pid < 0) {
		log_err("no symbol pack: fork: %s", strerror(errno));
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		log_err("no symbol pack (see above); to read the trace on another machine, run "
			"'xpu-report archive %s' where its binaries are", trace);
		return -1;
	}
	if (stat(done->path, &sb))
		return -1;
	done->bytes = (uint64_t)sb.st_size;
	done->seconds = now_s() - t0;
	return 0;
}
