/* SPDX-License-Identifier: MIT */
/*
 * Opening files whose names come from untrusted input (paths recorded in a trace). Whether to
 * open is decided before any open(): opening a device or a FIFO can have effects of its own,
 * so only regular files are opened, never anything under /proc, /sys or /dev (procfs reports
 * /proc/kmsg and /proc/self/mem as regular files of size 0), and never an empty file.
 */
#ifndef XPU_SAFE_OPEN_H
#define XPU_SAFE_OPEN_H

#include <stdint.h>

/*
 * Read-only descriptor of path, or negative errno: -ENOENT (no such file), -EPERM (under
 * /proc, /sys or /dev once symlinks are resolved), -EINVAL (not a regular file, or empty).
 * *size (if not NULL) gets the file's size.
 */
int safe_open__ro(const char *path, uint64_t *size);

#endif
