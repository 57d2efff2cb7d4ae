/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the test and benchmark programs that write traces with trace_writer (synthetic
 * golden traces, viewer inputs, generated large traces): every failure ends the program with
 * one line, since a half-written test input is worth nothing. Define TRACE_BUILD_PROG first.
 */
#ifndef XPU_TRACE_BUILD_H
#define XPU_TRACE_BUILD_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace_writer.h"

#ifndef TRACE_BUILD_PROG
#error "define TRACE_BUILD_PROG (the program's name for error messages)"
#endif

static struct trace_writer *w;

static void die(const char *what)
{
	fprintf(stderr, TRACE_BUILD_PROG ": %s failed\n", what);
	exit(1);
}

/* Creates (or replaces) path and makes w write to it. */
static void open_trace(const char *path, const struct trace_writer_opts *opts)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		die("open");
	w = trace_writer__open_fd(fd, opts);
	if (!w)
		die("writer");
}

static uint32_t str(const char *s)
{
	uint32_t id = trace_writer__intern_cstr(w, s);

	if (!id)
		die("intern");
	return id;
}

static void rec(uint16_t type, const void *body, uint32_t size, uint64_t ts)
{
	if (trace_writer__append(w, type, body, size, ts))
		die("append");
}

static inline uint32_t stack(const uint64_t *ips, uint16_t nk, uint16_t nu)
{
	uint32_t id = trace_writer__intern_stack(w, ips, nk, nu);

	if (!id)
		die("stack");
	return id;
}

#endif
