/* SPDX-License-Identifier: MIT */
/*
 * What backward attribution needs from one PyTorch library file (libtorch_cpu.so): where the
 * two functions it probes start, and the classes of autograd nodes by vtable, all from the
 * file's .dynsym, so each build is read as it is (no table of versions). Needs no root.
 */
#ifndef XPU_RECORD_AUTOGRAD_SYMS_H
#define XPU_RECORD_AUTOGRAD_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tls_ref.h"

/* torch::autograd::impl::set_gradient_edge(const Variable&, Edge) */
#define AG_SYM_SET_EDGE "_ZN5torch8autograd4impl17set_gradient_edge"
/* torch::autograd::Engine::evaluate_function(shared_ptr<GraphTask>&, Node*, ...) */
#define AG_SYM_EVALUATE "_ZN5torch8autograd6Engine17evaluate_function"
/* at::sequence_number::peek(): returns the thread's count of nodes made so far */
#define AG_SYM_SEQ_PEEK "_ZN2at15sequence_number4peekEv"

struct ag_vtable {
	uint64_t vaddr, size;	/* the _ZTV symbol */
	uint32_t name_off;	/* into ag_syms.names */
};

#define AG_MAX_SEGMENTS 4

struct autograd_syms {
	uint64_t set_edge_vaddr, set_edge_off;	/* file offset: what a uprobe takes */
	uint64_t evaluate_vaddr, evaluate_off;
	uint64_t seq_peek_vaddr;
	struct tls_ref seq;			/* the node counter, when seq_found */
	bool seq_found;
	struct ag_vtable *vtables;		/* sorted by vaddr */
	size_t nvtables;
	char *names;				/* short class names, NUL-separated */
	size_t names_len;
	struct { uint64_t vaddr, off, size; } exec[AG_MAX_SEGMENTS];	/* executable PT_LOADs */
	unsigned int nexec;
};

/*
 * Reads fd's .dynsym. 0 when both functions were found; 1 when the file holds node classes but
 * not the functions (libtorch_python: PyNode); -ENOENT when it holds none of them or only one
 * function (why in err, one line); other negative errno for unreadable files.
 */
int autograd_syms__read(struct autograd_syms *s, int fd, char *err, size_t errlen);
/* The load bias of the file in a process that maps file offset pgoff at start; false if no
 * executable segment holds pgoff. */
bool autograd_syms__bias(const struct autograd_syms *s, uint64_t start, uint64_t pgoff,
			 uint64_t *bias);
/*
 * The class of an object whose vtable pointer is vptr, the file loaded at bias (runtime address
 * minus file virtual address): "MmBackward0". NULL when no vtable of the file holds it.
 */
const char *autograd_syms__class(const struct autograd_syms *s, uint64_t bias, uint64_t vptr);
/*
 * The short name of a class from its mangled vtable symbol ("_ZTVN5torch8autograd9generated
 * 11MmBackward0E" -> "MmBackward0"; a template keeps "<...>"). 0, or -EINVAL when it cannot be
 * read (then out holds the symbol itself, cut to len).
 */
int autograd_syms__short_name(const char *mangled, char *out, size_t len);
/* The file offset of code at virtual address va; false outside the executable segments. */
bool autograd_syms__code_off(const struct autograd_syms *s, uint64_t va, uint64_t *off);
void autograd_syms__free(struct autograd_syms *s);

#endif
