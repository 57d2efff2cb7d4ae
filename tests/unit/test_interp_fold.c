// SPDX-License-Identifier: MIT
/*
 * report/sym/interp_fold.h: which interpreter frames of a stack go. Stacks are written as
 * strings of kinds, root first: 'p' a Python frame, 'i' the interpreter's, 'o' anything else
 * (an extension, libc, the kernel); the expected mask marks with 'x' the frames dropped.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sym/interp_fold.h"
#include "unit.h"

#define MAX_FRAMES 32

static void check(const char *stack, const char *want)
{
	uint8_t kind[MAX_FRAMES] = { 0 };
	bool drop[MAX_FRAMES];
	char got[MAX_FRAMES + 1];
	size_t n = strlen(stack), i, marked, expect = 0;

	for (i = 0; i < n; i++) {
		kind[i] = stack[i] == 'p' ? IK_PYTHON : stack[i] == 'i' ? IK_INTERP : IK_OTHER;
		expect += want[i] == 'x';
	}
	marked = interp_fold__mark(kind, n, drop);
	for (i = 0; i < n; i++)
		got[i] = drop[i] ? 'x' : '.';
	got[n] = 0;
	CHECK(!strcmp(got, want), "%s: dropped %s, expected %s", stack, got, want);
	CHECK(marked == expect, "%s: %zu marked, expected %zu", stack, marked, expect);
}

int main(void)
{
	/* nothing to fold: no Python frame, or only one */
	check("", "");
	check("oiio", "....");
	check("oiipii", "......");
	/* the host's frames under the first Python frame and the leaf's past the last stay */
	check("oiipiipii", "....xx...");
	/* between two Python frames only the interpreter's go, extension frames stay */
	check("pioiop", ".x.x..");
	check("ppp", "...");
	check("piiipiiipo", ".xxx.xxx..");
	/* a launch stack: Python, interpreter, extension, then no Python frame: all stay */
	check("oipiioo", ".......");
	return unit_finish();
}
