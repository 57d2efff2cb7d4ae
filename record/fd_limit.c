// SPDX-License-Identifier: MIT
/* Descriptor shares and their exhaustion said once (see fd_limit.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "config.h"
#include "fd_limit.h"

/* the process's: one line for the whole recording, however many threads run out */
static _Atomic uint64_t exhausted;

void fd_limit__raise(struct rlimit *was)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, was)) {
		was->rlim_cur = was->rlim_max = RLIM_INFINITY;
		return;
	}
	rl = *was;
	rl.rlim_cur = rl.rlim_max;
	if (rl.rlim_cur != was->rlim_cur && setrlimit(RLIMIT_NOFILE, &rl))
		log_info("cannot raise the descriptor limit to %llu: %s",
			 (unsigned long long)rl.rlim_cur, strerror(errno));
}

void fd_limit__restore(const struct rlimit *was)
{
	if (was->rlim_cur != RLIM_INFINITY || was->rlim_max != RLIM_INFINITY)
		setrlimit(RLIMIT_NOFILE, was);
}

unsigned int fd_limit__share(unsigned int div, unsigned int max)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return max;
	n = rl.rlim_cur / (div ? div : 1);
	return n < 1 ? 1 : n > max ? max : (unsigned int)n;
}

void fd_limit__said(int err, const char *what)
{
	struct rlimit rl = { 0 };

	if (err != EMFILE && err != ENFILE)
		return;
	if (atomic_fetch_add(&exhausted, 1))
		return;
	getrlimit(RLIMIT_NOFILE, &rl);
	log_err("out of file descriptors opening %s (%s; ulimit -n is %llu): what needed them is "
		"counted in the trace's STATS (fd_exhausted); raise ulimit -n", what,
		strerror(err), (unsigned long long)rl.rlim_cur);
}

uint64_t fd_limit__count(void)
{
	return atomic_load(&exhausted);
}
