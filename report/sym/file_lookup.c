// SPDX-License-Identifier: MIT
/* Files of trace DSOs by build-id (see file_lookup.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_buildid.h"
#include "base/warn.h"
#include "safe_open.h"
#include "sym/debuginfod_fetch.h"
#include "sym/file_lookup.h"
#include "sym/xpa.h"

void file_lookup__hex(const struct tr_dso *d, char hex[2 * XPU_BUILD_ID_MAX + 1])
{
	int i;

	for (i = 0; i < d->rec.build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", d->rec.build_id[i]);
	hex[2 * i] = '\0';
}

/*
 * Out of descriptors is not "no such file": said once, with the limit, so a report whose
 * frames lost their names says why (the symbolizer and unwinder keep few open: see
 * symbolize.c's shared file slots and unwind.c's session budget).
 */
static int open_checked(const char *path)
{
	int fd = safe_open__ro(path, NULL);
	struct rlimit rl;

	if (fd == -EMFILE || fd == -ENFILE) {
		getrlimit(RLIMIT_NOFILE, &rl);
		warn__once("warning: out of file descriptors (%s, ulimit -n %llu): files were left "
			   "unread and their frames unnamed; raise the limit",
			   fd == -EMFILE ? "this process's" : "the system's",
			   (unsigned long long)rl.rlim_cur);
	}
	return fd;
}

/*
 * A file without build-id is the recorded one if it has the size and mtime the trace recorded
 * for it (when it recorded them: not in traces made by hand). A file rebuilt or replaced at
 * the path since differs in one of them; taking it would name the trace's addresses from
 * another file's symbols, and a symbol pack made here would vouch for those names anywhere.
 */
static bool same_identity(const struct tr_dso *d, int fd)
{
	struct stat st;

	if (!d->rec.size_bytes)
		return true;	/* nothing to compare against: the recorded path is all we have */
	if (fstat(fd, &st) || (uint64_t)st.st_size != d->rec.size_bytes)
		return false;
	return !d->rec.mtime_ns || (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
					   (uint64_t)st.st_mtim.tv_nsec == d->rec.mtime_ns;
}

bool file_lookup__is_recorded(const struct tr_dso *d, int fd)
{
	uint8_t id[XPU_BUILD_ID_MAX];
	int n;

	if (!d->rec.build_id_len)
		return same_identity(d, fd);
	n = elf_buildid__read_fd(fd, id, sizeof(id));
	return n == d->rec.build_id_len && !memcmp(id, d->rec.build_id, n);
}

/*
 * 1: matches, 0: no such file (or one safe_open.h refuses: a device, FIFO, directory, empty
 * or pseudo-filesystem file), -1: exists but its build-id differs (or it has none), or, for a
 * DSO without build-id, its size or mtime differs from the recorded ones
 */
static int check_file(const struct tr_dso *d, const char *path)
{
	int fd = open_checked(path);
	bool same;

	if (fd < 0)
		return 0;
	same = file_lookup__is_recorded(d, fd);
	close(fd);
	return same ? 1 : -1;
}

/*
 * Whether a clean path is in /proc, /sys or /dev. safe_open.h refuses what resolves there,
 * but not what resolves through there: /proc/self/cwd/X is X in the report's own directory,
 * /proc/PID/root/... a file of another process's root, /dev/fd/N an open descriptor of the
 * report. No library is loaded from any of them, so none is looked at.
 */
static bool pseudo_dir(const char *clean)
{
	static const char *const dirs[] = { "/proc", "/sys", "/dev" };
	size_t i, n;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		n = strlen(dirs[i]);
		if (!strncmp(clean, dirs[i], n) && (clean[n] == '/' || !clean[n]))
			return true;
	}
	return false;
}

int file_lookup__clean_path(const char *path, char *out, size_t len)
{
	const char *p = path;
	size_t n = 0;

	if (*p != '/')
		return -EINVAL;
	while (*p) {
		const char *c = p + strspn(p, "/");
		size_t clen = strcspn(c, "/");

		p = c + clen;
		if (!clen || (clen == 1 && c[0] == '.'))
			continue;
		if (clen == 2 && c[0] == '.' && c[1] == '.')
			return -EINVAL;
		if (n + 1 + clen >= len)
			return -ENAMETOOLONG;
		out[n++] = '/';
		memcpy(out + n, c, clen);
		n += clen;
	}
	if (!n)
		return -EINVAL;
	out[n] = '\0';
	return pseudo_dir(out) ? -EINVAL : 0;
}

/* Whether path, symlinks resolved, is inside root (itself resolved); lstat only, no open. */
static bool inside(const char *root, const char *path)
{
	char *r = realpath(root, NULL), *p = r ? realpath(path, NULL) : NULL;
	size_t n = r ? strlen(r) : 0;
	bool in = p && !strncmp(p, r, n) && (p[n] == '/' || (n == 1 && r[0] == '/'));

	free(r);
	free(p);
	return in;
}

/* Sets *out to path when it holds the DSO; false also when out of memory. */
static bool try_path(const struct tr_dso *d, const char *path, char **out, bool *mismatch)
{
	int r = check_file(d, path);

	if (r < 0)
		*mismatch = true;
	if (r <= 0)
		return false;
	*out = strdup(path);
	return *out != NULL;
}

static void try_debug_dirs(const struct tr_dso *d, const char *hex, struct found_file *f)
{
	const char *home = getenv("HOME");
	char buf[4096];

	snprintf(buf, sizeof(buf), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (!try_path(d, buf, &f->debug_path, &f->mismatch) && home) {
		snprintf(buf, sizeof(buf), "%s/.debug/.build-id/%.2s/%s/debug", home, hex, hex + 2);
		try_path(d, buf, &f->debug_path, &f->mismatch);
	}
	if (!f->path && home) {
		snprintf(buf, sizeof(buf), "%s/.debug/.build-id/%.2s/%s/elf", home, hex, hex + 2);
		if (!try_path(d, buf, &f->path, &f->mismatch)) {
			snprintf(buf, sizeof(buf), "%s/.debug/.build-id/%.2s/%s", home, hex, hex + 2);
			try_path(d, buf, &f->path, &f->mismatch);
		}
	}
}

/* --symfs DIR + the clean recorded path, if that stays inside DIR once symlinks resolve */
static void try_symfs(const struct tr_dso *d, const char *symfs, const char *clean,
		      struct found_file *f)
{
	char buf[4096];

	if (snprintf(buf, sizeof(buf), "%s%s", symfs, clean) >= (int)sizeof(buf))
		return;
	if (!inside(symfs, buf)) {
		f->refused = true;
		return;
	}
	try_path(d, buf, &f->path, &f->mismatch);
}

/*
 * What is still missing, from the debuginfod servers of DEBUGINFOD_URLS (also with
 * --no-host-files: a server is not this machine's files). Checked by build-id as the rest.
 */
static void try_debuginfod(const struct tr_dso *d, struct found_file *f)
{
	char *p;

	if (!f->path && (p = debuginfod_fetch(DEBUGINFOD_EXECUTABLE, d->rec.build_id,
					      d->rec.build_id_len))) {
		f->from_debuginfod = try_path(d, p, &f->path, &f->mismatch);
		free(p);
	}
	if (!f->debug_path && (p = debuginfod_fetch(DEBUGINFOD_DEBUGINFO, d->rec.build_id,
						    d->rec.build_id_len))) {
		f->from_debuginfod |= try_path(d, p, &f->debug_path, &f->mismatch);
		free(p);
	}
}

int file_lookup__find(const struct tr_dso *d, const struct file_lookup_opts *o,
		      struct found_file *f)
{
	char hex[2 * XPU_BUILD_ID_MAX + 1], buf[4096], clean[4096];
	size_t i;
	bool path_ok;

	memset(f, 0, sizeof(*f));
	f->afd = -1;
	file_lookup__hex(d, hex);
	/* a recorded path with ".." (or not absolute) names no file: only its build-id counts */
	path_ok = !file_lookup__clean_path(d->path, clean, sizeof(clean));
	f->refused = !path_ok;
	if (!o->no_host_files && path_ok)
		try_path(d, clean, &f->path, &f->mismatch);
	if (d->rec.build_id_len >= 2 && !o->no_host_files)
		try_debug_dirs(d, hex, f);
	if (!f->path && o->symfs && path_ok)
		try_symfs(d, o->symfs, clean, f);
	/* the archive: exact build-id only, so it can never be a mismatched file */
	for (i = 0; !f->path && !f->debug_path && i < o->narchives && d->rec.build_id_len; i++) {
		if (!o->archives[i])
			continue;
		f->afd = xpa__extract(o->archives[i], d->rec.build_id, d->rec.build_id_len,
				      d->rec.size_bytes, o->archive_budget);
		if (f->afd >= 0) {
			snprintf(buf, sizeof(buf), "/proc/self/fd/%d", f->afd);
			f->path = strdup(buf);
			f->from_archive = true;
			f->mismatch = false;
			if (!f->path)
				return -ENOMEM;
		}
	}
	if (d->rec.build_id_len >= 2 && (!f->path || !f->debug_path))
		try_debuginfod(d, f);
	return 0;
}

void found_file__free(struct found_file *f)
{
	free(f->path);
	free(f->debug_path);
	if (f->afd >= 0)
		close(f->afd);
	memset(f, 0, sizeof(*f));
	f->afd = -1;
}

Elf *file_lookup__open_elf(const char *path, int *fd)
{
	*fd = open_checked(path);
	return file_lookup__elf_fd(fd);
}

Elf *file_lookup__elf_fd(int *fd)
{
	Elf *e;

	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return e;
}
