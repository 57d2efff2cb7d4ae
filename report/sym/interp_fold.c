// SPDX-License-Identifier: MIT
/* Which interpreter frames sit between Python frames (see interp_fold.h). */
#include "sym/interp_fold.h"

size_t interp_fold__mark(const uint8_t *kind, size_t n, bool *drop)
{
	size_t i, first = n, last = 0, marked = 0;

	for (i = 0; i < n; i++) {
		drop[i] = false;
		if (kind[i] != IK_PYTHON)
			continue;
		if (first == n)
			first = i;
		last = i;
	}
	/* an interpreter frame with no Python frame on one side is the host's or the leaf's */
	for (i = first + 1; first < n && i < last; i++) {
		drop[i] = kind[i] == IK_INTERP;
		marked += drop[i];
	}
	return marked;
}
