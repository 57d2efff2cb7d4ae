// SPDX-License-Identifier: MIT
/* Names made once for every output (see kernel_names.h). */
#include <errno.h>
#include <string.h>

#include "model/kernel_names.h"
#include "sym/demangle.h"

int kernel_names__build(struct kernel_names *n, const struct trace *t)
{
	char dem[DEMANGLE_MAX_OUTPUT];
	size_t i;

	memset(n, 0, sizeof(*n));
	n->t = t;
	for (i = 0; i < t->nkernels; i++) {
		uint32_t str = t->kernels[i].name_str, id;
		const char *name;
		bool ins;
		uint32_t *v = kmap__put(&n->kernel_idx, str, 0, 0, &ins);
		int len;

		if (!v)
			return -ENOMEM;
		if (!ins)
			continue;
		/* 0: as recorded (not a C++ name, no such string, or the demangler refused it) */
		name = trace__string(t, str);
		len = name ? xpu_demangle(name, dem, sizeof(dem)) : -1;
		id = len >= 0 ? strpool__intern(&n->pool, dem, (size_t)len) : 0;
		if (len >= 0 && !id)
			return -ENOMEM;
		*v = id;
	}
	return 0;
}

const char *kernel_names__get(const struct kernel_names *n, uint32_t name_str)
{
	const uint32_t *v = kmap__get(&n->kernel_idx, name_str, 0);

	return v && *v ? strpool__str(&n->pool, *v) : trace__string(n->t, name_str);
}

void kernel_names__free(struct kernel_names *n)
{
	strpool__free(&n->pool);
	kmap__free(&n->kernel_idx);
	memset(n, 0, sizeof(*n));
}
