// SPDX-License-Identifier: MIT
/*
 * The unwind-table cache (cfi_cache.h). Every file operation goes through the directory's own
 * descriptor (openat, renameat, unlinkat), so that a path swapped under us after the checks at
 * open cannot redirect a read or a write.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi_cache.h"
#include "fnv1a.h"
#include "xpu_format.h"

#define ENTRY_MAGIC "XPUCFI\0\1"
#define ENTRY_VERSION 1
#define KEY_MAX 96
#define ENTRY_SUFFIX ".cfi"

/* An entry: this header, then nr rows. Local to one machine, so in its own byte order. */
struct entry_header {
	char magic[8];
	uint32_t version;
	uint32_t row_size;		/* sizeof(struct xpu_cfi_row) */
	char key[KEY_MAX];		/* the file name's key, NUL-terminated */
	uint64_t file_size;
	uint64_t nr;
	uint32_t nloads;
	uint32_t header_size;		/* sizeof(struct entry_header) */
	struct cfi_load loads[CFI_MAX_LOADS];
	struct cfi_build_stats st;
	uint64_t checksum;		/* FNV-1a of the header (this field 0) and the rows */
};

struct cfi_cache {
	int dirfd;
	uint64_t max_bytes;
	pthread_mutex_t lock;		/* stats and eviction */
	uint64_t seq;			/* temporary names */
	struct cfi_cache_stats st;
};

static uint64_t entry_checksum(const struct entry_header *h, const struct xpu_cfi_row *rows)
{
	struct entry_header z = *h;

	z.checksum = 0;
	return fnv1a64(fnv1a64(FNV1A64_OFFSET, &z, sizeof(z)), rows, h->nr * sizeof(*rows));
}

static void count(struct cfi_cache *c, uint64_t *field)
{
	pthread_mutex_lock(&c->lock);
	(*field)++;
	pthread_mutex_unlock(&c->lock);
}

int cfi_cache__default_dir(char *buf, size_t len)
{
	const char *v;
	int n;

	if ((v = getenv("XPU_CACHE_DIR")) && *v)
		n = snprintf(buf, len, "%s/cfi", v);
	else if ((v = getenv("XDG_CACHE_HOME")) && *v == '/')
		n = snprintf(buf, len, "%s/xpu-perf/cfi", v);
	else if ((v = getenv("HOME")) && *v == '/')
		n = snprintf(buf, len, "%s/.cache/xpu-perf/cfi", v);
	else
		return -ENOENT;
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* mkdir -p with mode 0700 for what it creates */
static int make_dirs(const char *dir)
{
	char p[4096];
	size_t i, n = strlen(dir);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i])
			continue;
		p[i] = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			return -errno;
		p[i] = i < n ? '/' : 0;
	}
	return 0;
}

struct cfi_cache *cfi_cache__open(const char *dir, uint64_t max_bytes, int *err)
{
	struct cfi_cache *c;
	struct stat st;
	int fd;

	*err = make_dirs(dir);
	if (*err)
		return NULL;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	/* another user's directory, or one others may write to, could hold planted tables */
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		*err = -EPERM;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	c->dirfd = fd;
	c->max_bytes = max_bytes;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void cfi_cache__free(struct cfi_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The entry's key (its file name without the suffix); 0, or -EINVAL for a file we cannot key. */
static int make_key(int fd, const uint8_t *id, int id_len, char *key, uint64_t *size)
{
	struct stat st;
	int i, n;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -EINVAL;
	*size = (uint64_t)st.st_size;
	if (id_len > 0 && id_len <= XPU_BUILD_ID_MAX) {
		n = 0;
		for (i = 0; i < id_len; i++)
			n += snprintf(key + n, KEY_MAX - n, "%02x", id[i]);
		snprintf(key + n, KEY_MAX - n, "-%" PRIx64, *size);
	} else {
		/* no build-id: the file as it is on this machine (a rebuilt file gets a new key) */
		snprintf(key, KEY_MAX, "n-%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%" PRIx64 ".%09ld",
			 (uint64_t)st.st_dev, (uint64_t)st.st_ino, *size, (uint64_t)st.st_mtim.tv_sec,
			 st.st_mtim.tv_nsec);
	}
	return 0;
}

/* Whether the rows and loads make a table the walk can use: sorted, known kinds, sane loads. */
static bool table_sane(const struct entry_header *h, const struct xpu_cfi_row *rows)
{
	uint64_t i;

	if (h->nloads > CFI_MAX_LOADS)
		return false;
	for (i = 0; i < h->nloads; i++)
		if (h->loads[i].offset + h->loads[i].filesz < h->loads[i].offset)
			return false;
	for (i = 0; i < h->nr; i++) {
		if (rows[i].kind > XPU_CFI_RBP_DEREF_AT_RBP)
			return false;
		if (i && rows[i].pc < rows[i - 1].pc)
			return false;
	}
	return true;
}

static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int cfi_cache__get(struct cfi_cache *c, int fd, const uint8_t *id, int id_len,
		   struct cfi_table *t)
{
	char key[KEY_MAX], name[KEY_MAX + 8];
	struct entry_header h;
	struct xpu_cfi_row *rows = NULL;
	uint64_t size;
	struct stat st;
	int efd;

	memset(t, 0, sizeof(*t));
	if (!c || make_key(fd, id, id_len, key, &size))
		return -ENOENT;
	snprintf(name, sizeof(name), "%s" ENTRY_SUFFIX, key);
	efd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (efd < 0) {
		count(c, &c->st.misses);
		return -ENOENT;
	}
	if (fstat(efd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < sizeof(h) || read_all(efd, &h, sizeof(h)) ||
	    memcmp(h.magic, ENTRY_MAGIC, 8) || h.version != ENTRY_VERSION ||
	    h.row_size != sizeof(*rows) || h.header_size != sizeof(h) ||
	    memchr(h.key, 0, KEY_MAX) == NULL || strcmp(h.key, key) || h.file_size != size ||
	    !h.nr || h.nr > ((uint64_t)st.st_size - sizeof(h)) / sizeof(*rows) ||
	    (uint64_t)st.st_size != sizeof(h) + h.nr * sizeof(*rows))
		goto reject;
	rows = malloc(h.nr * sizeof(*rows));
	if (!rows || read_all(efd, rows, h.nr * sizeof(*rows)) ||
	    entry_checksum(&h, rows) != h.checksum || !table_sane(&h, rows))
		goto reject;
	/* used now: the least recently used go first when the directory is over its bound */
	futimens(efd, NULL);
	close(efd);
	t->rows = rows;
	t->nr = h.nr;
	memcpy(t->loads, h.loads, sizeof(t->loads));
	t->nloads = (int)h.nloads;
	t->st = h.st;
	count(c, &c->st.hits);
	return 0;
reject:
	free(rows);
	close(efd);
	count(c, &c->st.rejected);
	return -ENOENT;
}

struct entry_age {
	char name[KEY_MAX + 8];
	uint64_t bytes;
	int64_t mtime_ns;
};

static int cmp_age(const void *a, const void *b)
{
	const struct entry_age *x = a, *y = b;

	return x->mtime_ns < y->mtime_ns ? -1 : x->mtime_ns > y->mtime_ns;
}

/* With c->lock held: removes the oldest entries until the directory is within 90% of its bound. */
static void evict(struct cfi_cache *c)
{
	struct entry_age *e = NULL;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	struct dirent *d;
	DIR *dir;
	int fd = dup(c->dirfd);

	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dir);
	while ((d = readdir(dir))) {
		size_t len = strlen(d->d_name);
		struct stat st;

		if (len <= strlen(ENTRY_SUFFIX) || len >= sizeof(e->name) ||
		    strcmp(d->d_name + len - strlen(ENTRY_SUFFIX), ENTRY_SUFFIX) ||
		    fstatat(c->dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct entry_age *ne = realloc(e, (cap = cap ? cap * 2 : 64) * sizeof(*e));

			if (!ne)
				break;
			e = ne;
		}
		memcpy(e[n].name, d->d_name, len + 1);
		e[n].bytes = (uint64_t)st.st_size;
		e[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		total += e[n].bytes;
		n++;
	}
	closedir(dir);
	if (total > c->max_bytes) {
		qsort(e, n, sizeof(*e), cmp_age);
		for (i = 0; i < n && total > c->max_bytes / 10 * 9; i++) {
			if (!unlinkat(c->dirfd, e[i].name, 0)) {
				total -= e[i].bytes;
				c->st.evicted++;
			}
		}
	}
	free(e);
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void cfi_cache__put(struct cfi_cache *c, int fd, const uint8_t *id, int id_len,
		    const struct cfi_table *t)
{
	char key[KEY_MAX], name[KEY_MAX + 8], tmp[64];
	struct entry_header h = { 0 };
	uint64_t size, seq;
	bool bad;
	int tfd;

	if (!c || !t->nr || t->nloads < 0 || t->nloads > CFI_MAX_LOADS ||
	    make_key(fd, id, id_len, key, &size))
		return;
	/* a table past the whole bound would only push every other entry out */
	if (sizeof(h) + t->nr * sizeof(*t->rows) > c->max_bytes)
		return;
	memcpy(h.magic, ENTRY_MAGIC, 8);
	h.version = ENTRY_VERSION;
	h.row_size = sizeof(*t->rows);
	h.header_size = sizeof(h);
	snprintf(h.key, sizeof(h.key), "%s", key);
	h.file_size = size;
	h.nr = t->nr;
	h.nloads = (uint32_t)t->nloads;
	memcpy(h.loads, t->loads, sizeof(h.loads));
	h.st = t->st;
	h.checksum = entry_checksum(&h, t->rows);
	pthread_mutex_lock(&c->lock);
	seq = c->seq++;
	pthread_mutex_unlock(&c->lock);
	snprintf(tmp, sizeof(tmp), ".tmp-%d-%" PRIu64, (int)getpid(), seq);
	snprintf(name, sizeof(name), "%s" ENTRY_SUFFIX, key);
	tfd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tfd < 0) {
		count(c, &c->st.write_errors);
		return;
	}
	bad = write_all(tfd, &h, sizeof(h)) || write_all(tfd, t->rows, t->nr * sizeof(*t->rows));
	bad |= close(tfd) != 0;
	if (bad || renameat(c->dirfd, tmp, c->dirfd, name)) {
		unlinkat(c->dirfd, tmp, 0);
		count(c, &c->st.write_errors);
		return;
	}
	pthread_mutex_lock(&c->lock);
	c->st.writes++;
	evict(c);
	pthread_mutex_unlock(&c->lock);
}

void cfi_cache__get_stats(struct cfi_cache *c, struct cfi_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}
