/* SPDX-License-Identifier: MIT */
/*
 * The program's own code, and a launch's site by it: the one rule the text report's launch
 * sites, jsonl's launches and pprof's labels share.
 *
 * A launch stack (CUDA's libraries trimmed, nvcc's launch stubs cut) names two frames:
 * - the op, the framework's operation: the first caller outside CUDA's libraries ("at::native::
 *   run_conv_plan", "launch_matmul"), else the innermost frame this machine can name;
 * - the site, the innermost frame of the program's own code: of a native program, its main
 *   binary and its own libraries; of a Python program, its script and the files outside the
 *   interpreter's and the framework's installation ("train_step (train.py:57)", with the line
 *   where the trace has it). Where no frame of the program exists the site is the op.
 * What is the program's own is told from what the trace holds: mapping paths, the process's
 * main binary (its lowest ELF mapping of the exec image), its PY_RUNTIME (the interpreter and
 * its prefix) and the Python files' names (co_filename).
 */
#ifndef XPU_REPORT_MODEL_USER_CODE_H
#define XPU_REPORT_MODEL_USER_CODE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/containers.h"
#include "model/session.h"

struct user_code {
	const struct session *s;
	struct strpool names;		/* site names (Python ones with their line) */
	struct kmap own;		/* {pid, kind | gen | file} -> 1 own, 2 not */
	struct kmap exe;		/* {pid, gen} -> main binary's DSO index + 1, 0 none */
	struct kmap sites;		/* {pid, stack id} -> index into cache */
	struct user_site *cache;
	size_t ncache, cache_cap;
};

/* A launch's site and op; the ids are of user_code.names (site) and the session's pool (op). */
struct user_site {
	uint32_t site;			/* 0: no stack */
	uint32_t op;			/* frame id; 0: no stack */
	uint32_t nframes;		/* frames of the trimmed stack up to the op (stubs cut) */
	bool own;			/* the site is the program's own (else it is the op) */
};

void user_code__init(struct user_code *u, const struct session *s);
/*
 * The site and op of a stack (a launch's, a blocking call's) of pid at ts. 0, -ENOMEM, or
 * -ENOENT when the stack was never named (session__stack).
 */
int user_code__stack(struct user_code *u, uint32_t pid, uint64_t ts, uint32_t stack_id,
		     struct user_site *out);
/* Of launch i of the trace (its derived stack). */
int user_code__launch(struct user_code *u, size_t i, struct user_site *out);
static inline const char *user_code__site_name(const struct user_code *u,
					       const struct user_site *us)
{
	return strpool__str(&u->names, us->site);
}
/* The main binary of pid in its exec image gen (trace__generation), NULL when none. */
const struct tr_dso *user_code__main_binary(struct user_code *u, uint32_t pid, uint32_t gen);
void user_code__free(struct user_code *u);

/*
 * The rules, on names, for the tests. prefix: the interpreter's installation ("/usr",
 * "/opt/conda"), "" when the process runs none.
 */
bool user_code__python_file_own(const char *file, const char *prefix);
bool user_code__native_file_own(const char *path, bool main_binary, bool interpreter,
				const char *prefix);
/* Frames nvcc generates around `kernel<<<...>>>` (name, with the frame below it or NULL). */
bool user_code__launch_stub(const char *name, const char *below);

#endif
