/* SPDX-License-Identifier: MIT */
/* JSON strings for the machine-readable outputs. */
#ifndef XPU_REPORT_OUT_JSON_STR_H
#define XPU_REPORT_OUT_JSON_STR_H

#include <stddef.h>
#include <stdio.h>

/* Longest name (kernel, frame, API, file...) written whole, in bytes; longer ones are cut. */
#define JSON_NAME_MAX 4096

/*
 * Writes s[0..len) as a JSON string: quotes, backslashes and control bytes escaped, bytes
 * that are not valid UTF-8 (names in a trace are arbitrary bytes) as U+FFFD, so the output
 * always parses. Past JSON_NAME_MAX bytes the string is cut (never inside a UTF-8 sequence)
 * and ends in "...". Returns the bytes written.
 */
size_t json_str(FILE *out, const char *s, size_t len);
/* json_str of a C string; NULL is written as null. */
size_t json_cstr(FILE *out, const char *s);

#endif
