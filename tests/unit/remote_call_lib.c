// SPDX-License-Identifier: MIT
/*
 * What tests/unit/test_remote_call.c loads into tests/unit/remote_call_target.c with a remote
 * dlopen() and then calls there, as xpu-record -p does with libxpu-cupti.so.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/*
 * Says "hello msg=MSG x=X" on the process's stdout, which the test reads: the call ran in
 * the target, with our arguments. Returns x * 2 + 1.
 */
int remote_hello(const char *msg, int x)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "hello msg=%s x=%d\n", msg, x);

	if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) < 0)
		return -1;
	/* as library code that succeeds may leave it (dlopen's path search does): unseen */
	errno = EDOM;
	return x * 2 + 1;
}

/* Keeps the calling thread for ms, through signals: a call long enough to signal during. */
int remote_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return ms;
}
