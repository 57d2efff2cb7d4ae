// SPDX-License-Identifier: MIT
/*
 * A small ELF note walker instead of libelf: common/ is also linked into libxpu-cupti.so,
 * which must not pull libelf into the traced process, and a build-id needs only the program
 * (or section) headers and the notes they point to.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "elf_buildid.h"
#include "safe_open.h"

#define NOTE_MAX_BYTES (256u << 10)
#define HDR_MAX_COUNT 4096

struct src {
	int fd;
	const uint8_t *mem;
	size_t size;
};

static int src_read(const struct src *s, uint64_t off, void *buf, size_t len)
{
	ssize_t n;

	if (s->mem) {
		if (off > s->size || len > s->size - off)
			return -EIO;
		memcpy(buf, s->mem + off, len);
		return 0;
	}
	n = pread(s->fd, buf, len, (off_t)off);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Scans one note area; returns the id length, 0 if no build-id in it, or negative errno. */
static int scan_notes(const struct src *s, uint64_t off, uint64_t size, uint8_t *id, size_t max)
{
	uint8_t buf[4096];
	uint64_t pos = 0;

	if (size > NOTE_MAX_BYTES)
		size = NOTE_MAX_BYTES;
	while (pos + sizeof(Elf64_Nhdr) <= size) {
		Elf64_Nhdr nh;	/* same layout as Elf32_Nhdr */
		uint64_t name_al, desc_al;
		size_t n;

		if (src_read(s, off + pos, &nh, sizeof(nh)))
			return 0;
		name_al = ((uint64_t)nh.n_namesz + 3) & ~3ull;
		desc_al = ((uint64_t)nh.n_descsz + 3) & ~3ull;
		pos += sizeof(nh);
		if (name_al + desc_al > size - pos)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0) {
			char name[4];

			if (src_read(s, off + pos, name, 4) || memcmp(name, "GNU", 4))
				goto next;
			n = nh.n_descsz < max ? nh.n_descsz : max;
			if (n > sizeof(buf) || src_read(s, off + pos + name_al, buf, n))
				return 0;
			memcpy(id, buf, n);
			return (int)n;
		}
next:
		pos += name_al + desc_al;
	}
	return 0;
}

static int read_buildid(const struct src *s, uint8_t *id, size_t max)
{
	unsigned char ident[EI_NIDENT];
	uint64_t phoff, shoff;
	unsigned int phnum, shnum, phentsize, shentsize, i;
	bool is64;
	int ret;

	if (src_read(s, 0, ident, sizeof(ident)) || memcmp(ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	if (ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	is64 = ident[EI_CLASS] == ELFCLASS64;
	if (is64) {
		Elf64_Ehdr eh;

		if (src_read(s, 0, &eh, sizeof(eh)))
			return -ENOEXEC;
		phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
		shoff = eh.e_shoff, shnum = eh.e_shnum, shentsize = eh.e_shentsize;
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;

		if (src_read(s, 0, &eh, sizeof(eh)))
			return -ENOEXEC;
		phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
		shoff = eh.e_shoff, shnum = eh.e_shnum, shentsize = eh.e_shentsize;
	} else {
		return -ENOEXEC;
	}
	if (phnum > HDR_MAX_COUNT || phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		phnum = 0;
	for (i = 0; i < phnum; i++) {
		uint64_t off, size;
		uint32_t type;

		if (is64) {
			Elf64_Phdr ph;

			if (src_read(s, phoff + (uint64_t)i * phentsize, &ph, sizeof(ph)))
				break;
			type = ph.p_type, off = ph.p_offset, size = ph.p_filesz;
		} else {
			Elf32_Phdr ph;

			if (src_read(s, phoff + (uint64_t)i * phentsize, &ph, sizeof(ph)))
				break;
			type = ph.p_type, off = ph.p_offset, size = ph.p_filesz;
		}
		if (type != PT_NOTE)
			continue;
		ret = scan_notes(s, off, size, id, max);
		if (ret)
			return ret;
	}
	/* Separate debug files and objects may lack a PT_NOTE but keep the section. */
	if (shnum > HDR_MAX_COUNT || shentsize < (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
		return 0;
	for (i = 0; i < shnum; i++) {
		uint64_t off, size;
		uint32_t type;

		if (is64) {
			Elf64_Shdr sh;

			if (src_read(s, shoff + (uint64_t)i * shentsize, &sh, sizeof(sh)))
				break;
			type = sh.sh_type, off = sh.sh_offset, size = sh.sh_size;
		} else {
			Elf32_Shdr sh;

			if (src_read(s, shoff + (uint64_t)i * shentsize, &sh, sizeof(sh)))
				break;
			type = sh.sh_type, off = sh.sh_offset, size = sh.sh_size;
		}
		if (type != SHT_NOTE)
			continue;
		ret = scan_notes(s, off, size, id, max);
		if (ret)
			return ret;
	}
	return 0;
}

int elf_buildid__read_fd(int fd, uint8_t *id, size_t max)
{
	struct src s = { .fd = fd };

	return read_buildid(&s, id, max);
}

int elf_buildid__read_path(const char *path, uint8_t *id, size_t max)
{
	/* paths may come from a trace: decided before opening (see safe_open.h) */
	int fd = safe_open__ro(path, NULL), ret;

	if (fd < 0)
		return fd;
	ret = elf_buildid__read_fd(fd, id, max);
	close(fd);
	return ret;
}

int elf_buildid__read_mem(const void *image, size_t size, uint8_t *id, size_t max)
{
	struct src s = { .fd = -1, .mem = image, .size = size };

	return read_buildid(&s, id, max);
}
