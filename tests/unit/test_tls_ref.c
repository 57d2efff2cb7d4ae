// SPDX-License-Identifier: MIT
/*
 * record/autograd/tls_ref.c and the glibc layout that bpf/autograd.bpf.h reads: for stand-ins of
 * libtorch_cpu.so's node counter built with each TLS model (tests/unit/fixtures/seq_counter.c),
 * the tls_index found in peek()'s code is the one the dynamic linker filled for this process
 * (its module id is dl_iterate_phdr's), and the path BPF takes from the thread pointer
 * (dtv, its length, the module's block, + offset) lands on the counter peek() returns. A
 * TLS-descriptor build is refused (-ENOENT), as on a file whose counter cannot be located.
 * Also Debian's libtorch_cpu.so where installed.
 */
#include <asm/prctl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unit.h"
#include "autograd/autograd_syms.h"
#include "autograd/tls_ref.h"
#include "xpu_bpf_abi.h"

#define DEBIAN_TORCH "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"

struct find_mod {
	const char *path;
	size_t modid;
	uint64_t bias;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_mod *f = arg;

	(void)size;
	if (info->dlpi_name && !strcmp(info->dlpi_name, f->path)) {
		f->modid = info->dlpi_tls_modid;
		f->bias = info->dlpi_addr;
		return 1;
	}
	return 0;
}

/* What bpf/autograd.bpf.h's ag_seq_addr() computes, here in the process itself. */
static uint64_t *counter_via_dtv(uint64_t modid, uint64_t off)
{
	unsigned long fs = 0;
	uint64_t *dtv, len, block;

	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs))
		return NULL;
	dtv = *(uint64_t **)(fs + XPU_TLS_TCB_DTV);
	len = *(uint64_t *)((char *)dtv - XPU_TLS_DTV_ENTRY);
	if (!modid || modid > len)
		return NULL;
	block = *(uint64_t *)((char *)dtv + modid * XPU_TLS_DTV_ENTRY);
	if (!block || block == XPU_TLS_DTV_UNALLOCATED)
		return NULL;
	return (uint64_t *)(block + off);
}

static void fixture(const char *name, int want)
{
	char path[512], err[256] = "";
	struct autograd_syms s;
	struct find_mod f = { .path = path };
	uint64_t (*peek)(void), (*next)(void), *(*addr)(void), *got, *via;
	void *h;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", FIXTURE_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	if (fd < 0)
		return;
	ret = autograd_syms__read(&s, fd, err, sizeof(err));
	close(fd);
	CHECK(ret == 0, "%s: read %d (%s)", name, ret, err);
	if (ret)
		return;
	CHECK(s.seq_peek_vaddr != 0, "%s: peek() not found", name);
	CHECK(s.seq_found == (want == 0), "%s: counter found %d, want %d", name, s.seq_found,
	      want == 0);
	if (!s.seq_found) {
		autograd_syms__free(&s);
		return;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL, "%s: %s", name, dlerror());
	if (!h) {
		autograd_syms__free(&s);
		return;
	}
	peek = (uint64_t (*)(void))dlsym(h, AG_SYM_SEQ_PEEK);
	next = (uint64_t (*)(void))dlsym(h, "_ZN2at15sequence_number17get_and_incrementEv");
	addr = (uint64_t *(*)(void))dlsym(h, "seq_counter_addr");
	dl_iterate_phdr(find_module, &f);
	CHECK(f.modid > 0, "%s: no TLS module id", name);
	if (peek && next && addr && f.modid) {
		next();
		next();
		got = (uint64_t *)(f.bias + s.seq.index_vaddr);
		CHECK(got[0] == f.modid, "%s: GOT module id %lu, loader's %zu", name,
		      (unsigned long)got[0], f.modid);
		via = counter_via_dtv(got[0], got[1] + s.seq.add);
		CHECK(via == addr(), "%s: dtv path %p, counter at %p", name, (void *)via,
		      (void *)addr());
		CHECK(via && *via == 2 && peek() == 2, "%s: counter reads %lu", name,
		      via ? (unsigned long)*via : 0ul);
	}
	dlclose(h);
	autograd_syms__free(&s);
}

/* Shapes written out, as they appear in the files above and in PyTorch's wheels. */
static void shapes(void)
{
	static const uint8_t gd[] = { 0x48, 0x83, 0xec, 0x08, 0x66, 0x48, 0x8d, 0x3d, 0x3c, 0x26,
				      0x4b, 0x06, 0x66, 0x66, 0x48, 0xe8, 0x5c, 0xee, 0xa9, 0xff,
				      0x48, 0x8b, 0x00 };
	static const uint8_t ld[] = { 0x50, 0x48, 0x8d, 0x3d, 0xa0, 0x2e, 0x00, 0x00, 0xe8, 0x13,
				      0xff, 0xff, 0xff, 0x48, 0x8b, 0x80, 0x10, 0x00, 0x00, 0x00 };
	static const uint8_t none[] = { 0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00, 0xff, 0x10, 0xc3 };
	struct tls_ref r;

	CHECK(!tls_ref__from_code(gd, sizeof(gd), 0xd90480, &r) && r.index_vaddr == 0x7242ac8 &&
	      r.add == 0, "general dynamic: %#lx + %lu", (unsigned long)r.index_vaddr,
	      (unsigned long)r.add);
	CHECK(!tls_ref__from_code(ld, sizeof(ld), 0x1110, &r) && r.index_vaddr == 0x3fb8 &&
	      r.add == 0x10, "local dynamic: %#lx + %lu", (unsigned long)r.index_vaddr,
	      (unsigned long)r.add);
	/* cut before the offset, or a TLS descriptor call: not located */
	CHECK(tls_ref__from_code(ld, 14, 0x1110, &r) == -ENOENT, "cut local dynamic");
	CHECK(tls_ref__from_code(gd, 12, 0xd90480, &r) == -ENOENT, "cut general dynamic");
	CHECK(tls_ref__from_code(none, sizeof(none), 0, &r) == -ENOENT, "descriptor");
	CHECK(tls_ref__from_code(none, 0, 0, &r) == -ENOENT, "empty");
}

static void debian_torch(void)
{
	struct autograd_syms s;
	char err[256] = "";
	int fd = open(DEBIAN_TORCH, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		printf("skip: %s not installed\n", DEBIAN_TORCH);
		return;
	}
	CHECK(autograd_syms__read(&s, fd, err, sizeof(err)) == 0, "%s: %s", DEBIAN_TORCH, err);
	close(fd);
	CHECK(s.seq_found, "%s: node counter not located", DEBIAN_TORCH);
	autograd_syms__free(&s);
}

int main(void)
{
	shapes();
	fixture("seq_counter_ld.so", 0);
	fixture("seq_counter_gd.so", 0);
	fixture("seq_counter_desc.so", -ENOENT);
	debian_torch();
	return unit_finish();
}
