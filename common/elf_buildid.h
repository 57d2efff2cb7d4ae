/* SPDX-License-Identifier: MIT */
/*
 * GNU build-id of an ELF image (file or memory), shared by xpu-record (DSO records) and
 * xpu-report (matching local binaries). Reads only headers and notes, bounds-checks all of it.
 */
#ifndef XPU_ELF_BUILDID_H
#define XPU_ELF_BUILDID_H

#include <stddef.h>
#include <stdint.h>

/*
 * Each returns the build-id length (> 0; bytes beyond max are cut), 0 when the image has no
 * build-id note, or a negative errno (-ENOEXEC: not an ELF image this host can read).
 */
int elf_buildid__read_fd(int fd, uint8_t *id, size_t max);
/* path is opened only as safe_open.h allows (it may come from a trace) */
int elf_buildid__read_path(const char *path, uint8_t *id, size_t max);
int elf_buildid__read_mem(const void *image, size_t size, uint8_t *id, size_t max);

#endif
