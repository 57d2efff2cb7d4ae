// SPDX-License-Identifier: MIT
/*
 * A tiny JIT for tests/e2e/test_jit_maps.sh: copies a busy loop's machine code (x86-64, with
 * a frame pointer) into two anonymous executable mappings and runs each for a while. The first
 * is named in /tmp/perf-PID.map (with a malformed line before it), the second in a jitdump
 * (./jit-PID.dump, mapped executable as perf's convention asks), so a recorder that reads
 * both names both. With "rm", it removes its perf map before it exits, as some JITs do (the
 * recorder must have read it or held it by then). Usage: jit_target SECONDS_EACH [rm].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* push %rbp; mov %rsp,%rbp; 1: dec %rdi; jnz 1b; pop %rbp; ret */
static const uint8_t loop_code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf,
				     0x75, 0xfb, 0x5d, 0xc3 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *jit(void)
{
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, loop_code, sizeof(loop_code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return NULL;
	return p;
}

static int write_jitdump(void *code, const char *name)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} h = { 0x4A695444, 1, 40, 62, 0, (uint32_t)getpid(), now_ns(), 0 };
	struct {
		uint32_t id, total_size;
		uint64_t timestamp;
		uint32_t pid, tid;
		uint64_t vma, code_addr, code_size, code_index;
	} r = { 0, 0, now_ns(), (uint32_t)getpid(), (uint32_t)getpid(), (uintptr_t)code,
		(uintptr_t)code, sizeof(loop_code), 1 };
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "jit-%d.dump", getpid());
	f = fopen(path, "w+");
	if (!f)
		return -1;
	r.total_size = sizeof(r) + strlen(name) + 1 + sizeof(loop_code);
	fwrite(&h, sizeof(h), 1, f);
	fwrite(&r, sizeof(r), 1, f);
	fwrite(name, strlen(name) + 1, 1, f);
	fwrite(loop_code, sizeof(loop_code), 1, f);
	fflush(f);
	/* perf's convention: the mapping tells the profiler where the dump is */
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0) == MAP_FAILED)
		return -1;
	return 0;
}

static __attribute__((noinline)) void run(void (*fn)(long), double secs)
{
	/* CPU time, not wall time: on a loaded machine both loops still get equal shares */
	uint64_t end = cpu_ns() + (uint64_t)(secs * 1e9);

	while (cpu_ns() < end)
		fn(200000);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	void *a = jit(), *b = jit();
	char path[64];
	FILE *f;

	if (!a || !b)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "not a map line\n%lx %zx jit_loop_from_map\n", (unsigned long)(uintptr_t)a,
		sizeof(loop_code));
	fclose(f);
	if (write_jitdump(b, "jit_loop_from_dump"))
		return 1;
	run((void (*)(long))a, secs);
	run((void (*)(long))b, secs);
	if (argc > 2 && !strcmp(argv[2], "rm") && unlink(path))
		return 1;
	return 0;
}
