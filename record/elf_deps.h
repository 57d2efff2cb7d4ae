/* SPDX-License-Identifier: MIT */
/*
 * The files a command maps before its first instruction of main: the executable execvp()
 * would run, its ELF interpreter and the closure of its DT_NEEDED libraries, found the way
 * the dynamic loader searches (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH with $ORIGIN, then the
 * system directories; /etc/ld.so.cache is not read, so a library found only through it is
 * missed). -g cfi builds their tables before the command starts; the autograd probes load
 * ahead when one is PyTorch's.
 */
#ifndef XPU_RECORD_ELF_DEPS_H
#define XPU_RECORD_ELF_DEPS_H

#include <stddef.h>

#define ELF_DEPS_MAX 256

/*
 * Calls fn(path, fd, arg) for cmd (resolved through PATH when it has no '/') and each file it
 * needs, at most ELF_DEPS_MAX, each once; fd is an open descriptor of the file that fn takes
 * over. Returns the number of files, or negative errno when cmd itself cannot be opened.
 */
int elf_deps__collect(const char *cmd, void (*fn)(const char *path, int fd, void *arg),
		      void *arg);

#endif
