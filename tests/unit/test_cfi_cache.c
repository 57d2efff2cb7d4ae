// SPDX-License-Identifier: MIT
/*
 * record/cfi/cfi_cache.c: a table stored and read back is the table built (rows, loads,
 * stats); a second file or a changed file is a miss; every way an entry can lie is refused
 * and counted (a flipped byte, a truncation, a symlink in its place, another file's entry
 * under this key, rows out of order with a valid checksum); a directory writable by others is
 * not used; the size bound removes the least recently used entries. Needs no root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "cfi/cfi_build.h"
#include "cfi/cfi_cache.h"

static const uint8_t ID_A[4] = { 0xde, 0xad, 0xbe, 0xef };
static const uint8_t ID_B[4] = { 0xfe, 0xed, 0xfa, 0xce };

static int build(const char *path, struct cfi_table *t, int *fd)
{
	*fd = open(path, O_RDONLY);
	if (*fd < 0)
		return -errno;
	return cfi_table__build(*fd, t);
}

static int same_table(const struct cfi_table *a, const struct cfi_table *b)
{
	return a->nr == b->nr && a->nloads == b->nloads &&
	       !memcmp(a->rows, b->rows, a->nr * sizeof(*a->rows)) &&
	       !memcmp(a->loads, b->loads, sizeof(a->loads)) && !memcmp(&a->st, &b->st, sizeof(a->st));
}

/* the entry file of the only entry in dir */
static int only_entry(const char *dir, char *path, size_t len)
{
	char cmd[600];
	FILE *p;
	int ok;

	snprintf(cmd, sizeof(cmd), "ls %s/*.cfi 2>/dev/null | head -1", dir);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	ok = fgets(path, (int)len, p) != NULL;
	pclose(p);
	if (!ok)
		return -1;
	path[strcspn(path, "\n")] = 0;
	return 0;
}

static void rewrite_byte(const char *path, long off, int delta)
{
	int fd = open(path, O_RDWR);
	unsigned char b;

	if (fd < 0)
		return;
	if (pread(fd, &b, 1, off) == 1) {
		b = (unsigned char)(b + delta);
		if (pwrite(fd, &b, 1, off) != 1)
			perror("pwrite");
	}
	close(fd);
}

int main(void)
{
	char dir[] = "/tmp/xpu-cfi-cache-XXXXXX", sub[512], entry[512], cmd[600];
	struct cfi_table built = { 0 }, got = { 0 }, other = { 0 };
	struct cfi_cache_stats st;
	struct cfi_cache *c;
	int fd, fd2, err;
	struct stat sb;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(sub, sizeof(sub), "%s/a/b/cfi", dir);
	c = cfi_cache__open(sub, 64 << 20, &err);
	CHECK(c != NULL, "open a new nested directory: %d", err);
	CHECK(!stat(sub, &sb) && (sb.st_mode & 0777) == 0700, "created 0700 (%o)", sb.st_mode & 0777);
	CHECK(!build("/bin/true", &built, &fd) && built.nr > 0, "/bin/true's table builds");

	/* miss, store, hit: the same table */
	CHECK(cfi_cache__get(c, fd, ID_A, 4, &got) == -ENOENT, "empty cache: a miss");
	cfi_cache__put(c, fd, ID_A, 4, &built);
	CHECK(!cfi_cache__get(c, fd, ID_A, 4, &got) && same_table(&built, &got),
	      "read back: the table built (%zu rows)", got.nr);
	cfi_table__free(&got);
	/* another build-id (another file of the same size) is not this entry */
	CHECK(cfi_cache__get(c, fd, ID_B, 4, &got) == -ENOENT, "another build-id: a miss");
	cfi_cache__get_stats(c, &st);
	CHECK(st.hits == 1 && st.misses == 2 && st.writes == 1 && !st.rejected,
	      "stats: %lu hits %lu misses %lu writes", (unsigned long)st.hits,
	      (unsigned long)st.misses, (unsigned long)st.writes);

	/* a flipped row byte: the checksum refuses it */
	CHECK(!only_entry(sub, entry, sizeof(entry)), "the entry is in the directory");
	rewrite_byte(entry, (long)(stat(entry, &sb) ? 0 : sb.st_size - 3), 1);
	CHECK(cfi_cache__get(c, fd, ID_A, 4, &got) == -ENOENT, "a flipped byte: refused");
	/* truncated */
	cfi_cache__put(c, fd, ID_A, 4, &built);
	CHECK(!truncate(entry, sb.st_size - 8), "truncate");
	CHECK(cfi_cache__get(c, fd, ID_A, 4, &got) == -ENOENT, "a truncated entry: refused");
	/* a symlink in the entry's place, to a valid entry of another key */
	cfi_cache__put(c, fd, ID_B, 4, &built);
	unlink(entry);
	snprintf(cmd, sizeof(cmd), "cd %s && ln -s \"$(ls | grep ^feedface | head -1)\" \"%s\"", sub,
		 strrchr(entry, '/') + 1);
	CHECK(system(cmd) == 0, "symlink made");
	CHECK(cfi_cache__get(c, fd, ID_A, 4, &got) == -ENOENT, "a symlink: refused");
	unlink(entry);
	/* another key's entry copied under this key's name: the header's key differs */
	snprintf(cmd, sizeof(cmd), "cd %s && cp \"$(ls | grep ^feedface | head -1)\" \"%s\"", sub,
		 strrchr(entry, '/') + 1);
	CHECK(system(cmd) == 0, "copy made");
	CHECK(cfi_cache__get(c, fd, ID_A, 4, &got) == -ENOENT, "another file's entry: refused");
	cfi_cache__get_stats(c, &st);
	CHECK(st.rejected == 3, "symlink not counted as rejected (a miss), others are: %lu rejected",
	      (unsigned long)st.rejected);

	/* rows out of order under a valid checksum: the sanity check refuses them */
	{
		struct cfi_table bad = built;
		struct xpu_cfi_row *rows = malloc(built.nr * sizeof(*rows));

		CHECK(rows != NULL && built.nr >= 2, "rows to shuffle");
		if (rows && built.nr >= 2) {
			memcpy(rows, built.rows, built.nr * sizeof(*rows));
			rows[0].pc = rows[1].pc + 1;
			bad.rows = rows;
			cfi_cache__put(c, fd, ID_A, 4, &bad);
			CHECK(cfi_cache__get(c, fd, ID_A, 4, &got) == -ENOENT, "unsorted rows: refused");
			rows[0].pc = built.rows[0].pc;
			rows[0].kind = 200;
			cfi_cache__put(c, fd, ID_A, 4, &bad);
			CHECK(cfi_cache__get(c, fd, ID_A, 4, &got) == -ENOENT, "an unknown kind: refused");
		}
		free(rows);
	}

	/* without a build-id: keyed by the file's identity; a changed file is a miss */
	CHECK(!build("/bin/ls", &other, &fd2), "/bin/ls's table builds");
	cfi_cache__put(c, fd2, NULL, 0, &other);
	CHECK(!cfi_cache__get(c, fd2, NULL, 0, &got) && same_table(&other, &got),
	      "no build-id: read back by the file's identity");
	cfi_table__free(&got);
	CHECK(cfi_cache__get(c, fd, NULL, 0, &got) == -ENOENT, "no build-id, another file: a miss");
	cfi_cache__free(c);

	/* the bound: a cache smaller than two entries keeps the newest */
	c = cfi_cache__open(sub, sizeof(*built.rows) * built.nr * 3 / 2 + 4096, &err);
	CHECK(c != NULL, "reopen with a small bound");
	cfi_cache__put(c, fd, ID_A, 4, &built);
	cfi_cache__put(c, fd, ID_B, 4, &built);
	cfi_cache__get_stats(c, &st);
	CHECK(st.evicted >= 1, "over the bound: entries evicted (%lu)", (unsigned long)st.evicted);
	CHECK(!cfi_cache__get(c, fd, ID_B, 4, &got), "the newest entry stays");
	cfi_table__free(&got);
	cfi_cache__free(c);

	/* a directory others may write to is not used */
	CHECK(!chmod(sub, 0777), "chmod");
	c = cfi_cache__open(sub, 64 << 20, &err);
	CHECK(c == NULL && err == -EPERM, "a world-writable directory is refused (%d)", err);
	cfi_cache__free(c);

	cfi_table__free(&built);
	cfi_table__free(&other);
	close(fd);
	close(fd2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return unit_finish();
}
