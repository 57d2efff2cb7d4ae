/* SPDX-License-Identifier: MIT */
/*
 * Itanium C++ ABI demangler for the common subset (what shows up in profiles). xpu-report may
 * not link libstdc++, so this is our own. Input is untrusted: depth, length and table sizes are
 * bounded, and anything outside the subset fails cleanly.
 */
#ifndef XPU_REPORT_SYM_DEMANGLE_H
#define XPU_REPORT_SYM_DEMANGLE_H

#include <stddef.h>

/* Mangled names longer than this are not demangled. */
#define DEMANGLE_MAX_INPUT 4096

/*
 * Output buffer size for callers. Templates expand a lot when demangled: a real cuDNN cutlass
 * kernel name of 1.7 KB becomes 10 KB, so a name at the input cap can need tens of KB.
 */
#define DEMANGLE_MAX_OUTPUT (32 * 1024)

/*
 * Writes the demangled form of a "_Z..." name into out (NUL-terminated). Returns the length,
 * or -1 when the name is not mangled, not in the supported subset, malformed, or the result
 * does not fit (out is then untouched).
 */
int xpu_demangle(const char *mangled, char *out, size_t outlen);

#endif
