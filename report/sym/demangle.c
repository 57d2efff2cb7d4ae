// SPDX-License-Identifier: MIT
/*
 * The system demangler behind a bound (see demangle.h). libiberty's callback interface
 * allocates nothing on the heap (its tables live on the stack, sized by the input), so when
 * the output passes its bound we leave it with longjmp: a hostile name whose demangled text
 * doubles with each substitution costs at most DEMANGLE_MAX_OUTPUT bytes of work, not 2^n.
 */
#include <setjmp.h>
#include <string.h>

#include "sym/demangle.h"

#ifdef XPU_HAVE_LIBIBERTY
#include <libiberty/demangle.h>

struct dm_out {
	char *buf;
	size_t len, cap;
	jmp_buf full;
};

static void dm_append(const char *s, size_t n, void *opaque)
{
	struct dm_out *o = opaque;

	if (n >= o->cap - o->len)
		longjmp(o->full, 1);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

int xpu_demangle(const char *mangled, char *out, size_t outlen)
{
	static char buf[DEMANGLE_MAX_OUTPUT];	/* xpu-report symbolizes on one thread */
	struct dm_out o = { .buf = buf, .cap = outlen < sizeof(buf) ? outlen : sizeof(buf) };

	if (strncmp(mangled, "_Z", 2) || strnlen(mangled, DEMANGLE_MAX_INPUT + 1) >
					     DEMANGLE_MAX_INPUT || !o.cap)
		return -1;
	if (setjmp(o.full))
		return -1;
	/*
	 * c++filt's options (parameters, qualifiers, std:: names in full), less its size limit:
	 * that refuses any name over about 1 KB (its tables are on the stack), and GPU kernel
	 * names are often longer. DEMANGLE_MAX_INPUT bounds those tables instead; the printer's
	 * own nesting limit stays.
	 */
	if (!cplus_demangle_v3_callback(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE |
					DMGL_NO_RECURSE_LIMIT, dm_append, &o) || !o.len)
		return -1;
	memcpy(out, buf, o.len);
	out[o.len] = '\0';
	return (int)o.len;
}

bool demangle__available(void)
{
	return true;
}

#else

int xpu_demangle(const char *mangled, char *out, size_t outlen)
{
	return -1;
}

bool demangle__available(void)
{
	return false;
}

#endif
