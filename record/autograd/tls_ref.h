/* SPDX-License-Identifier: MIT */
/*
 * Where a shared library keeps one of its thread-locals, read from the code of a function that
 * returns it (at::sequence_number::peek() in libtorch_cpu.so), so that BPF can read the
 * variable of any thread of a process without a call into it. Needs no root.
 *
 * A -fPIC library reaches its own thread-locals through __tls_get_addr(&tls_index), tls_index
 * being {module id, offset} in its GOT: the dynamic linker writes the module id when it loads
 * the library, so only the process knows it. The thread's copy of the module's block is then
 * dtv[module id] (glibc x86-64; the constants, which BPF uses, are in bpf/xpu_bpf_abi.h).
 */
#ifndef XPU_RECORD_TLS_REF_H
#define XPU_RECORD_TLS_REF_H

#include <stddef.h>
#include <stdint.h>

struct tls_ref {
	uint64_t index_vaddr;	/* the tls_index in the GOT: {module id, offset}, file vaddr */
	uint64_t add;		/* added to the address __tls_get_addr() returns */
};

/*
 * Finds the general-dynamic (data16 lea rdi,[rip+X]; data16 data16 rex.W call) or
 * local-dynamic (lea rdi,[rip+X]; call; then mov/lea rax,[rax+D]) access in len bytes of code
 * starting at vaddr. 0, or -ENOENT when neither is there (TLS descriptors, another compiler's
 * shape): then the variable cannot be located.
 */
int tls_ref__from_code(const uint8_t *code, size_t len, uint64_t vaddr, struct tls_ref *out);

#endif
