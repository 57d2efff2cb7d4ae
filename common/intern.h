/* SPDX-License-Identifier: MIT */
/*
 * Intern table: byte strings to dense ids (1, 2, ...). Used by the writer for strings and for
 * stacks (a stack is interned as its raw bytes). Owned by one thread.
 */
#ifndef XPU_INTERN_H
#define XPU_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern_table;

struct intern_table *intern_table__new(void);
void intern_table__free(struct intern_table *t);
/*
 * Looks the key up; if absent, adds it with the next id and sets *added. Returns the id, or 0
 * on allocation failure.
 */
uint32_t intern_table__get(struct intern_table *t, const void *key, size_t len, int *added);
size_t intern_table__count(const struct intern_table *t);

uint64_t xpu_hash64(const void *data, size_t len);

#endif
