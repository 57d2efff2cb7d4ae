/* SPDX-License-Identifier: MIT */
/*
 * Trace strings made safe for a terminal. Thread names, JIT symbols, file paths and frame
 * names are the traced program's to choose, and reached the terminal raw in text, folded,
 * info and the messages: an escape sequence in a thread name set the window title or
 * cleared the screen. Human-readable output passes through an escaper, as ls and git quote
 * names: each byte of a control character (C0 but tab and newline, DEL, C1 as U+0080..U+009F)
 * and each byte that is not part of valid UTF-8 is written as a backslash and three octal
 * digits ("\033" for ESC); everything else, backslashes included, is written as it is. It is
 * for safety, not for reading back. Machine formats (chrome and jsonl JSON, pprof, svg) have
 * their own escaping and keep the bytes.
 */
#ifndef XPU_REPORT_BASE_TERM_SAFE_H
#define XPU_REPORT_BASE_TERM_SAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* An escaper over a stream of writes: a UTF-8 character may be split across two of them. */
struct term_safe {
	unsigned char held[4];		/* the start of a character the next write may finish */
	size_t nheld;
};

/* Writes the escaped bytes through emit(arg, bytes, n), which returns 0 or -1 (stops). */
typedef int (*term_safe_emit)(void *arg, const char *p, size_t n);

/* The n bytes at buf, escaped; a character cut at the end is held for the next call. 0 or -1. */
int term_safe__write(struct term_safe *ts, const char *buf, size_t n, term_safe_emit emit,
		     void *arg);
/* The bytes held (a character never finished), escaped. 0 or -1. */
int term_safe__flush(struct term_safe *ts, term_safe_emit emit, void *arg);

/*
 * A name written into a line format (folded): also its tabs, newlines and carriage returns
 * escaped, which would otherwise end or split the line the name is in.
 */
void term_safe__put_name(FILE *out, const char *s);

/*
 * Makes stderr escape what it writes (the messages quote trace strings), line-buffered.
 * Returns the raw stream for the few writers whose own escape sequences must reach the
 * terminal (the progress line), or stderr itself if it could not be wrapped.
 */
FILE *term_safe__wrap_stderr(void);
/* The raw stream term_safe__wrap_stderr() returned, or stderr before it was called. */
FILE *term_safe__raw_stderr(void);

#endif
