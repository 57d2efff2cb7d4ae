// SPDX-License-Identifier: MIT
/*
 * record/cfi/cfi_build.c against libdw's own CFI evaluation (dwarf_cfi_addrframe) on real
 * binaries of this machine: at the start and the end of every row's range (sampled in big
 * files), the row must say what libdw says about the CFA, rbp and the return address, or be
 * UNSUPPORTED where libdw gives a rule the walk does not evaluate.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "cfi/cfi_build.h"

#define MAX_CHECKS 200000

struct expect {
	bool ok;		/* libdw has an FDE */
	struct xpu_cfi_row row;
};

/* "CFA + N" as libdw writes an offset(N) rule's location */
static bool cfa_plus(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (!n || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		*off = 0;
		return true;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

static bool breg(const Dwarf_Op *op, unsigned int *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = (unsigned int)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/* rows of stack-realigning functions checked (XPU_CFI_RBP_DEREF_AT_RBP), printed */
static uint64_t drap_rows;

#define LIBTORCH_CPU "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"

/* libdw's answer at pc, as the row the builder should have produced */
static struct expect libdw_row(Dwarf_CFI *cfi, uint64_t pc)
{
	struct expect e = { 0 };
	struct xpu_cfi_row *r = &e.row;
	Dwarf_Frame *f = NULL;
	Dwarf_Op mem[3], *ops;
	size_t n;
	bool signal = false, at_rbp = false;
	unsigned int reg;
	int64_t off;

	if (dwarf_cfi_addrframe(cfi, pc, &f))
		return e;
	e.ok = true;
	r->kind = XPU_CFI_UNSUPPORTED;
	dwarf_frame_info(f, NULL, NULL, &signal);
	if (signal) {
		r->kind = XPU_CFI_SIGNAL;
		goto out;
	}
	if (dwarf_frame_register(f, 16, mem, &ops, &n))
		goto out;
	if (!n && ops == mem) {
		r->kind = XPU_CFI_END;
		goto out;
	}
	if (!cfa_plus(ops, n, &off) || off != -8)
		goto out;
	if (dwarf_frame_register(f, 6, mem, &ops, &n))
		goto out;
	if (n && !cfa_plus(ops, n, &off)) {
		/* saved at rbp + N (stack realignment); libdw may put the CFA first */
		if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa)
			ops++, n--;
		if (n != 1 || !breg(&ops[0], &reg, &off) || reg != 6 || off % 8 || off < -1024 ||
		    off > 1016)
			goto out;
		r->rbp_off8 = (int8_t)(off / 8);
		at_rbp = true;
	} else if (n) {
		if (off % 8 || off < -1024 || off > 1016)
			goto out;
		r->rbp_off8 = (int8_t)(off / 8);
	} else if (ops == mem) {
		goto out;		/* rbp undefined */
	}
	if (dwarf_frame_cfa(f, &ops, &n) || !n)
		goto out;
	if (at_rbp) {
		if (n == 2 && breg(&ops[0], &reg, &off) && reg == 6 &&
		    ops[1].atom == DW_OP_deref && off >= INT16_MIN && off <= INT16_MAX) {
			r->kind = XPU_CFI_RBP_DEREF_AT_RBP;
			r->cfa_off = (uint16_t)(int16_t)off;
		}
	} else if (n == 1 && breg(&ops[0], &reg, &off) && (reg == 6 || reg == 7) && off >= 0 &&
	    off <= 65535) {
		r->kind = reg == 7 ? XPU_CFI_RSP : XPU_CFI_RBP;
		r->cfa_off = (uint16_t)off;
	} else if (n == 2 && breg(&ops[0], &reg, &off) && reg == 6 && ops[1].atom == DW_OP_deref &&
		   off >= INT16_MIN && off <= INT16_MAX) {
		r->kind = XPU_CFI_RBP_DEREF;
		r->cfa_off = (uint16_t)(int16_t)off;
	} else if (n == 9 && breg(&ops[0], &reg, &off) && reg == 7 &&
		   ops[4].atom >= DW_OP_lit0 && ops[4].atom <= DW_OP_lit15 &&
		   ops[5].atom == DW_OP_ge && !r->rbp_off8) {
		r->kind = XPU_CFI_PLT;
		r->cfa_off = (uint16_t)off;
		r->rbp_off8 = (int8_t)(ops[4].atom - DW_OP_lit0);
	}
out:
	if (r->kind == XPU_CFI_UNSUPPORTED || r->kind == XPU_CFI_SIGNAL || r->kind == XPU_CFI_END)
		r->rbp_off8 = r->cfa_off = 0;
	else if (r->kind == XPU_CFI_RBP_DEREF_AT_RBP)
		drap_rows++;
	free(f);
	return e;
}

static bool same(const struct xpu_cfi_row *a, const struct xpu_cfi_row *b)
{
	return a->kind == b->kind && a->cfa_off == b->cfa_off && a->rbp_off8 == b->rbp_off8;
}

static void check_file(const char *path)
{
	struct cfi_table t;
	uint64_t checks = 0, bad = 0, nofde = 0, unsup = 0;
	size_t i, stride;
	Dwarf_CFI *cfi;
	Elf *elf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("skip %s: %s\n", path, strerror(errno));
		return;
	}
	err = cfi_table__build(fd, &t);
	CHECK(!err, "%s: build: %d", path, err);
	if (err) {
		close(fd);
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	CHECK(cfi, "%s: libdw has no CFI", path);
	stride = t.nr * 2 / MAX_CHECKS + 1;
	for (i = 0; cfi && i < t.nr; i += stride) {
		uint64_t pcs[2] = { t.rows[i].pc, i + 1 < t.nr ? t.rows[i + 1].pc - 1ull : 0 };
		int k;

		for (k = 0; k < 2; k++) {
			const struct xpu_cfi_row *ours;
			struct expect e;

			if (!pcs[k] || (k && pcs[1] == pcs[0]))
				continue;
			ours = cfi_table__find(&t, pcs[k]);
			e = libdw_row(cfi, pcs[k]);
			checks++;
			if (!e.ok) {
				/* no FDE: a gap, or a PLT rule we synthesized */
				nofde++;
				if (ours->kind != XPU_CFI_NONE && !(t.st.plt_synth &&
				    (ours->kind == XPU_CFI_PLT || ours->kind == XPU_CFI_RSP)))
					bad++;
				continue;
			}
			unsup += e.row.kind == XPU_CFI_UNSUPPORTED;
			if (!same(ours, &e.row)) {
				if (bad < 5)
					fprintf(stderr, "%s: pc %#lx: ours kind %u cfa %u rbp %d, "
						"libdw kind %u cfa %u rbp %d\n", path,
						(unsigned long)pcs[k], ours->kind, ours->cfa_off,
						ours->rbp_off8, e.row.kind, e.row.cfa_off,
						e.row.rbp_off8);
				bad++;
			}
		}
	}
	printf("%s: %zu rows, %lu fdes, %lu checked, %lu without fde, %lu unsupported, "
	       "%lu differ, %lu plt synthesized\n", path, t.nr, (unsigned long)t.st.fdes,
	       (unsigned long)checks, (unsigned long)nofde, (unsigned long)unsup,
	       (unsigned long)bad, (unsigned long)t.st.plt_synth);
	CHECK(t.nr > 100, "%s: only %zu rows", path, t.nr);
	CHECK(checks > 100, "%s: only %lu checks", path, (unsigned long)checks);
	CHECK(!bad, "%s: %lu of %lu rows differ from libdw", path, (unsigned long)bad,
	      (unsigned long)checks);
	/* the walk must evaluate nearly every row it meets in compiled code */
	CHECK(unsup * 100 <= checks, "%s: %lu of %lu rows unsupported", path,
	      (unsigned long)unsup, (unsigned long)checks);
	if (cfi)
		dwarf_cfi_end(cfi);
	if (elf)
		elf_end(elf);
	cfi_table__free(&t);
	close(fd);
}

static void check_bad_input(void)
{
	struct cfi_table t;
	int fd = open("/proc/self/cmdline", O_RDONLY);

	CHECK(fd >= 0 && cfi_table__build(fd, &t) == -ENOEXEC, "non-ELF input is refused");
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	static const char *defaults[] = {
		"/usr/bin/xz", "/usr/bin/sort", "/usr/bin/python3.11",
		"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/lib/x86_64-linux-gnu/libm.so.6",
	};
	size_t i;

	elf_version(EV_CURRENT);
	check_bad_input();
	if (argc > 1) {
		for (i = 1; i < (size_t)argc; i++)
			check_file(argv[i]);
	} else {
		for (i = 0; i < sizeof(defaults) / sizeof(*defaults); i++)
			check_file(defaults[i]);
		/* Debian's libtorch realigns stacks in hundreds of functions, where libc does not */
		if (!access(LIBTORCH_CPU, R_OK))
			check_file(LIBTORCH_CPU);
	}
	printf("%lu rows of stack-realigning functions checked\n", (unsigned long)drap_rows);
	return unit_finish();
}
