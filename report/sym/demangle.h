/* SPDX-License-Identifier: MIT */
/*
 * C++ names through the system's demangler (libiberty's, the one c++filt uses), found by a
 * build-time probe (Makefile: XPU_HAVE_LIBIBERTY). Without it, names stay mangled. Names come
 * from untrusted files: input and output are bounded, and a name whose demangled form would
 * pass the output bound (substitutions can double the text per few input bytes) fails.
 */
#ifndef XPU_REPORT_SYM_DEMANGLE_H
#define XPU_REPORT_SYM_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Mangled names longer than this are not demangled. */
#define DEMANGLE_MAX_INPUT 4096

/*
 * Output buffer size for callers. Templates expand a lot when demangled: a real cuDNN cutlass
 * kernel name of 1.7 KB becomes 10 KB, so a name at the input cap can need tens of KB.
 */
#define DEMANGLE_MAX_OUTPUT (32 * 1024)

/*
 * Writes the demangled form of a "_Z..." name into out (NUL-terminated), as c++filt prints
 * it. Returns the length, or -1 when the name is not mangled, malformed, longer than
 * DEMANGLE_MAX_INPUT, its result does not fit in outlen (or DEMANGLE_MAX_OUTPUT), or no
 * demangler was built in; out is then untouched and the caller keeps the mangled name.
 */
int xpu_demangle(const char *mangled, char *out, size_t outlen);

/* Whether a demangler was built in (the build found libiberty). */
bool demangle__available(void);

#endif
