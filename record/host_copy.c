// SPDX-License-Identifier: MIT
/*
 * Copies of files only the traced processes can reach (see host_copy.h). The directory is
 * root's (0711) even under sudo, its files the user's (0400): the user can read them but
 * plant nothing in it for root to follow; everything in it is made and removed relative to
 * its descriptor, never by a path, each component opened with O_NOFOLLOW.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"
#include "fd_limit.h"
#include "host_copy.h"

#define DELETED_SUFFIX " (deleted)"

/* A file the host reached by its path when it was mapped, looked at again before the pack. */
struct watched {
	int fd;				/* on the mapped inode: the copy's source if the path moves */
	uint32_t dev;
	uint64_t ino;
	char *path;
};

struct host_copy {
	struct watched *watch;
	size_t nr_watch, max_watch;
	char *templ;			/* TRACE.files-XXXXXX, made by mkdtemp on first need */
	char *dir;
	int dfd;
	bool failed;			/* the directory could not be made: nothing is copied */
	bool said;
	bool have_user;
	struct user_creds user;
	struct host_copy_stats st;
};

/* Removes what dfd holds (taken over and closed); directories opened without following. */
static void remove_tree(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!unlinkat(dirfd(d), de->d_name, 0))
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			remove_tree(sub);
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/*
 * A directory of copies left by a recorder killed before its pack (TRACE.files-XXXXXX beside
 * this trace): removed, if it is one (a directory, root's, 0711; anything else at such a name
 * is not ours to touch).
 */
static void remove_stale(const char *trace)
{
	char *copy = strdup(trace), *slash, *dir, *base;
	struct dirent *de;
	size_t n;
	DIR *d;

	if (!copy)
		return;
	slash = strrchr(copy, '/');
	dir = slash ? (slash == copy ? "/" : copy) : ".";
	base = slash ? slash + 1 : copy;
	if (slash)
		*slash = '\0';
	n = strlen(base);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct stat st;
		int fd;

		if (strncmp(de->d_name, base, n) || strncmp(de->d_name + n, ".files-", 7) ||
		    strlen(de->d_name + n + 7) != 6)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & 07777) != 0711) {
			close(fd);
			continue;
		}
		remove_tree(fd);
		if (!unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR))
			log_err("removed %s/%s, left by a recording that did not finish", dir,
				de->d_name);
	}
	if (d)
		closedir(d);
	free(copy);
}

struct host_copy *host_copy__new(const char *trace, const struct user_creds *user)
{
	struct host_copy *hc = calloc(1, sizeof(*hc));

	if (!hc)
		return NULL;
	hc->dfd = -1;
	/* a descriptor a file, held to the end: an eighth of the limit at most */
	hc->max_watch = fd_limit__share(8, HOST_COPY_WATCH_MAX);
	if (asprintf(&hc->templ, "%s.files-XXXXXX", trace) < 0) {
		free(hc);
		return NULL;
	}
	if (user) {
		hc->user = *user;
		hc->have_user = true;
	}
	remove_stale(trace);
	return hc;
}

static void drop_watches(struct host_copy *hc)
{
	size_t i;

	for (i = 0; i < hc->nr_watch; i++) {
		close(hc->watch[i].fd);
		free(hc->watch[i].path);
	}
	free(hc->watch);
	hc->watch = NULL;
	hc->nr_watch = 0;
}

void host_copy__free(struct host_copy *hc)
{
	if (!hc)
		return;
	drop_watches(hc);
	if (hc->dfd >= 0) {
		remove_tree(hc->dfd);
		if (rmdir(hc->dir))
			log_err("cannot remove %s: %s", hc->dir, strerror(errno));
	}
	free(hc->templ);
	free(hc);
}

const char *host_copy__dir(const struct host_copy *hc)
{
	return hc && hc->st.files ? hc->dir : NULL;
}

void host_copy__get_stats(const struct host_copy *hc, struct host_copy_stats *st)
{
	*st = hc ? hc->st : (struct host_copy_stats){ 0 };
}

/* Whether path, as the host resolves it now, is the mapped inode. */
static bool reachable(const char *path, uint32_t dev, uint64_t ino)
{
	size_t n = strlen(path), k = strlen(DELETED_SUFFIX);
	struct stat st;

	if (*path != '/' || (n > k && !strcmp(path + n - k, DELETED_SUFFIX)))
		return false;
	return !stat(path, &st) && (uint64_t)st.st_ino == ino &&
	       ((uint64_t)major(st.st_dev) << 20 | minor(st.st_dev)) == dev;
}

/* Under sudo: whether the user could read the file (its mode, owner and group). */
static bool user_may_read(const struct host_copy *hc, const struct stat *st)
{
	int i;

	if (!hc->have_user || (st->st_mode & S_IROTH))
		return true;
	if (st->st_uid == hc->user.uid)
		return st->st_mode & S_IRUSR;
	for (i = 0; i < hc->user.ngroups; i++)
		if (st->st_gid == hc->user.groups[i])
			return st->st_mode & S_IRGRP;
	return false;
}

static bool is_elf(int fd)
{
	unsigned char m[4];

	return pread(fd, m, sizeof(m), 0) == (ssize_t)sizeof(m) && !memcmp(m, "\177ELF", 4);
}

/* The directory for path's file inside ours (made as needed); its last component in *base. */
static int parent_of(struct host_copy *hc, char *rel, char **base)
{
	int fd = dup(hc->dfd), next;
	char *c = rel, *slash;

	while (fd >= 0 && (slash = strchr(c, '/'))) {
		*slash = '\0';
		if (!*c || !strcmp(c, ".") || !strcmp(c, "..")) {
			close(fd);
			return -EINVAL;
		}
		if (mkdirat(fd, c, 0711) && errno != EEXIST) {
			close(fd);
			return -errno;
		}
		next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		c = slash + 1;
	}
	*base = c;
	return fd < 0 ? -errno : fd;
}

static int copy_into(struct host_copy *hc, int fd, const char *path, const struct stat *src)
{
	uint64_t size = (uint64_t)src->st_size;
	char rel[PATH_MAX], *base = NULL;
	off_t off = 0;
	int pfd, out, err = 0;

	if (snprintf(rel, sizeof(rel), "%s", path + 1) >= (int)sizeof(rel))
		return -ENAMETOOLONG;
	pfd = parent_of(hc, rel, &base);
	if (pfd < 0)
		return pfd;
	out = base && *base ? openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400) :
		      -1;
	if (out < 0) {
		err = base && *base ? -errno : -EINVAL;
		close(pfd);
		return err;
	}
	while ((uint64_t)off < size) {
		ssize_t n = sendfile(out, fd, &off, size - (uint64_t)off);

		if (n <= 0) {
			err = n ? -errno : -EIO;
			break;
		}
	}
	/*
	 * the mapped file's mtime: a file without build-id is known to the pack by its recorded
	 * size and mtime (format-spec/ARCHIVE.md 2.6), and a copy of another mtime is refused
	 */
	if (!err && futimens(out, (const struct timespec[2]){ src->st_atim, src->st_mtim }))
		err = -errno;
	if (!err && hc->have_user && fchown(out, hc->user.uid, hc->user.gid))
		err = -errno;
	close(out);
	if (err)
		unlinkat(pfd, base, 0);
	close(pfd);
	return err;
}

static void skipped(struct host_copy *hc, const char *path, const char *why)
{
	hc->st.skipped++;
	if (hc->said)
		return;
	hc->said = true;
	log_err("%s is mapped but not on this host's file system: not packed (%s; STATS "
		"host_copies_skipped counts such files)", path, why);
}

/* The file behind fd, at the recorded path: into the directory, within the bounds. */
static bool copy_file(struct host_copy *hc, int fd, const char *path)
{
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return false;
	if (*path != '/') {
		skipped(hc, path, "its name is not a path");
		return false;
	}
	if (!user_may_read(hc, &st)) {
		skipped(hc, path, "the user who ran sudo cannot read it");
		return false;
	}
	if ((uint64_t)st.st_size > HOST_COPY_FILE_MAX_BYTES ||
	    hc->st.bytes + (uint64_t)st.st_size > HOST_COPY_MAX_BYTES) {
		skipped(hc, path, "over the bound on copies");
		return false;
	}
	if (!hc->dir) {
		hc->dir = mkdtemp(hc->templ);
		hc->dfd = hc->dir ? open(hc->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		/* root's, reachable by the user who reads the copies, listable by nobody else */
		if (hc->dfd < 0 || fchmod(hc->dfd, 0711)) {
			hc->failed = true;
			skipped(hc, path, strerror(errno));
			return false;
		}
	}
	err = copy_into(hc, fd, path, &st);
	if (err) {
		skipped(hc, path, strerror(-err));
		return false;
	}
	hc->st.files++;
	hc->st.bytes += (uint64_t)st.st_size;
	return true;
}

/*
 * A file the host reaches now may be replaced before the recording ends (an upgrade while a
 * server runs): its descriptor is kept, to copy from at the last look if its path moved.
 */
static void watch(struct host_copy *hc, int fd, const char *path, uint32_t dev, uint64_t ino)
{
	struct watched *w;

	if (hc->nr_watch == hc->max_watch) {
		hc->st.unwatched++;
		return;
	}
	if (!hc->watch) {
		hc->watch = calloc(hc->max_watch, sizeof(*hc->watch));
		if (!hc->watch) {
			hc->st.unwatched++;
			return;
		}
	}
	w = &hc->watch[hc->nr_watch];
	w->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	w->path = w->fd >= 0 ? strdup(path) : NULL;
	if (!w->path) {
		if (w->fd >= 0)
			close(w->fd);
		hc->st.unwatched++;
		return;
	}
	w->dev = dev;
	w->ino = ino;
	hc->nr_watch++;
}

bool host_copy__add(struct host_copy *hc, int fd, const char *path, uint32_t dev, uint64_t ino)
{
	if (!hc || hc->failed || fd < 0 || !is_elf(fd))
		return false;
	if (reachable(path, dev, ino)) {
		watch(hc, fd, path, dev, ino);
		return false;
	}
	return copy_file(hc, fd, path);
}

void host_copy__last_look(struct host_copy *hc)
{
	size_t i;

	if (!hc)
		return;
	for (i = 0; i < hc->nr_watch && !hc->failed; i++) {
		const struct watched *w = &hc->watch[i];

		if (!reachable(w->path, w->dev, w->ino) && copy_file(hc, w->fd, w->path))
			hc->st.late++;
	}
	drop_watches(hc);
}
