// SPDX-License-Identifier: MIT
/* xpu-report's entry point: the `archive` or `diff` command, or a report. */
#include <string.h>

#include "base/term_safe.h"
#include "cmd/cmd.h"

int main(int argc, char **argv)
{
	/* every message may quote a trace string: they reach the terminal escaped */
	term_safe__wrap_stderr();
	if (argc > 1 && !strcmp(argv[1], "archive"))
		return archive__main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff__main(argc - 1, argv + 1);
	return report__main(argc, argv);
}
