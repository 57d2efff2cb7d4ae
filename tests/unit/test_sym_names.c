// SPDX-License-Identifier: MIT
/*
 * Unit tests of frame naming that needs no recording: PLT stub names (report/sym/plt.c)
 * against objdump's on this test's own binary, FDE starts (report/sym/fde.c) against this
 * binary's own functions, and the vdso image a trace carries (VDSO_IMAGE): loaded, checked
 * and used to name a frame, with this process's real vdso as the image.
 */
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "sym/fde.h"
#include "sym/plt.h"
#include "sym/symbolize.h"
#include "trace/derived_stacks.h"
#include "trace/trace.h"
#include "trace_writer.h"
#include "unit.h"

static char self_path[4096];

static Elf *open_self(int *fd)
{
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	if (n <= 0)
		return NULL;
	self_path[n] = '\0';
	*fd = open(self_path, O_RDONLY);
	return *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ, NULL);
}

/* Every "ADDR <name@plt>:" label objdump prints is ours, at the same address, and no other. */
static void test_plt_vs_objdump(Elf *e)
{
	struct plt_sym *ps;
	size_t n, i, theirs = 0, matched = 0;
	char cmd[4200], line[1024];
	FILE *p;

	CHECK(plt__synthesize(e, &ps, &n) == 0, "plt__synthesize");
	CHECK(n > 3, "only %zu PLT stubs in the test binary", n);
	snprintf(cmd, sizeof(cmd),
		 "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", self_path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char name[512];

		/* "<getenv@plt-0x10>" is the resolver trampoline before the first stub */
		if (sscanf(line, "%llx <%511[^>]>:", &addr, name) != 2 || strlen(name) < 4 ||
		    strcmp(name + strlen(name) - 4, "@plt"))
			continue;
		theirs++;
		for (i = 0; i < n; i++) {
			if (ps[i].addr == addr && !strcmp(ps[i].name, name)) {
				matched++;
				break;
			}
		}
		CHECK(i < n, "objdump's %s at %#llx not found", name, addr);
	}
	if (p)
		pclose(p);
	if (!theirs) {
		printf("note: objdump found no PLT labels (binutils missing?): only counted stubs\n");
	} else {
		CHECK(matched == n, "%zu of our %zu stubs are objdump's %zu", matched, n, theirs);
	}
	plt__free(ps, n);
}

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;	/* the main program comes first */
}

__attribute__((noinline)) static int fde_probe(int x)
{
	return x * 3 + 1;
}

static void test_fde_self(Elf *e)
{
	struct fde_table ft;
	uint64_t bias = 0, v, start = 0;

	dl_iterate_phdr(first_object, &bias);
	v = (uint64_t)(uintptr_t)&fde_probe - bias;
	CHECK(fde_table__load(&ft, e) == 0, "fde_table__load");
	CHECK(ft.n > 10, "%zu FDEs", ft.n);
	CHECK(fde_table__find(&ft, v + 2, &start) && start == v,
	      "FDE of fde_probe+2 starts at %#llx, not %#llx", (unsigned long long)start,
	      (unsigned long long)v);
	CHECK(!fde_table__find(&ft, 0, &start), "an FDE before address 0");
	fde_table__free(&ft);
	CHECK(fde_probe(1) == 4, "probe");
}

/* ---- the vdso image in a trace ------------------------------------------------------------- */

/* This process's vdso: its bytes (from the program headers' extent) and a symbol's offset. */
static const uint8_t *own_vdso(size_t *len, const char *sym, uint64_t *sym_off)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	size_t end = 0, i;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (!base)
		return NULL;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
	}
	if (eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize > end)
		end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	*len = end;
	*sym_off = 0;
	e = elf_memory((char *)base, end);
	while (e && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		GElf_Sym s;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !d)
			continue;
		for (i = 0; gelf_getsym(d, (int)i, &s); i++) {
			const char *n = elf_strptr(e, sh.sh_link, s.st_name);

			if (n && !strcmp(n, sym))
				*sym_off = s.st_value;
		}
	}
	if (e)
		elf_end(e);
	return *sym_off ? base : NULL;
}

static void put(struct trace_writer *w, uint16_t type, const void *body, uint32_t size,
		const void *tail, uint32_t tail_size)
{
	CHECK(trace_writer__append2(w, type, body, size, tail, tail_size, 0) == 0, "append %u",
	      type);
}

static void write_vdso_trace(const char *path, const uint8_t *img, size_t len, uint64_t ip,
			     uint32_t *stack_id)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct trace_writer *w = trace_writer__open_fd(fd, NULL);
	struct xpu_rec_dso vdso = { .id = 1, .kind = XPU_DSO_VDSO };
	struct xpu_rec_dso elf = { .id = 2, .kind = XPU_DSO_ELF };
	struct xpu_rec_mapping m = { .ts_ns = 1, .pid = 7, .dso_id = 1, .start = 0x7f0000000000,
				     .end = 0x7f0000000000 + 0x2000, .prot = 5 };
	struct xpu_rec_vdso_image vi = { .dso_id = 1, .size = (uint32_t)len };
	struct xpu_rec_vdso_image bad = vi;
	uint64_t ips[1] = { ip };

	CHECK(w != NULL, "writer");
	vdso.path_str = trace_writer__intern_cstr(w, "[vdso]");
	elf.path_str = trace_writer__intern_cstr(w, "/nonexistent/lib.so");
	put(w, XPU_REC_DSO, &vdso, sizeof(vdso), NULL, 0);
	put(w, XPU_REC_DSO, &elf, sizeof(elf), NULL, 0);
	put(w, XPU_REC_VDSO_IMAGE, &vi, sizeof(vi), img, (uint32_t)len);
	put(w, XPU_REC_VDSO_IMAGE, &vi, sizeof(vi), img, (uint32_t)len);	/* duplicate */
	bad.dso_id = 99;							/* unknown DSO */
	put(w, XPU_REC_VDSO_IMAGE, &bad, sizeof(bad), img, (uint32_t)len);
	bad.dso_id = 2;								/* not a vdso */
	put(w, XPU_REC_VDSO_IMAGE, &bad, sizeof(bad), img, (uint32_t)len);
	bad.dso_id = 1;
	bad.size = (uint32_t)len + 64;						/* claims more */
	put(w, XPU_REC_VDSO_IMAGE, &bad, sizeof(bad), img, (uint32_t)len);
	put(w, XPU_REC_MAPPING, &m, sizeof(m), NULL, 0);
	*stack_id = trace_writer__intern_stack(w, ips, 0, 1);
	CHECK(trace_writer__close(w) == 0, "close");
}

static void test_vdso_image(void)
{
	char path[] = "/tmp/xpu-names-XXXXXX", err[256];
	uint64_t off = 0, ip;
	struct symbolizer s;
	struct dso_table dt;
	struct strpool pool = { 0 };
	struct sym_opts so = { 0 };
	struct dso_opts dso = { .no_host_files = true };
	struct derived_stacks ds;
	struct trace t;
	const uint32_t *f;
	uint32_t n = 0, stack_id = 0;
	const uint8_t *img;
	size_t len = 0;
	int fd = mkstemp(path);

	close(fd);
	img = own_vdso(&len, "__vdso_clock_gettime", &off);
	if (!img) {
		printf("note: no vdso with __vdso_clock_gettime here: vdso image test skipped\n");
		unlink(path);
		return;
	}
	ip = 0x7f0000000000 + off + 1;
	write_vdso_trace(path, img, len, ip, &stack_id);
	CHECK(trace__load(&t, path, err, sizeof(err)) == 0, "load: %s", err);
	CHECK(t.ndsos == 2 && t.dsos[0].image && t.dsos[0].image_len == len, "image kept");
	CHECK(!t.dsos[1].image, "an ELF DSO got an image");
	CHECK(t.dup_ids == 1, "dup %llu", (unsigned long long)t.dup_ids);
	CHECK(t.bad_dso_refs == 1, "bad dso refs %llu", (unsigned long long)t.bad_dso_refs);
	CHECK(t.bad_records == 2, "bad records %llu", (unsigned long long)t.bad_records);
	dso.trace_path = path;
	CHECK(derived_stacks__init(&ds, &t) == 0, "derived stacks");
	CHECK(dso_table__init(&dt, &t, &dso) == 0, "dso table");
	CHECK(symbolizer__init(&s, &ds, &dt, &so, &pool) == 0, "symbolizer");
	CHECK(symbolizer__stack(&s, 7, 2, stack_id, false, &f, &n) == 0 && n == 1, "stack");
	CHECK(n == 1 && !strcmp(strpool__str(&pool, f[0]), "__vdso_clock_gettime"),
	      "vdso frame named %s", n ? strpool__str(&pool, f[0]) : "-");
	CHECK(!strcmp(dso_table__status(&dt, 0), "image in the trace"), "status");
	symbolizer__free(&s);
	dso_table__free(&dt);
	/* without the image (a 1.3 trace) the frame stays [vdso] */
	free(t.dsos[0].image);
	t.dsos[0].image = NULL;
	CHECK(dso_table__init(&dt, &t, &dso) == 0, "dso table");
	CHECK(symbolizer__init(&s, &ds, &dt, &so, &pool) == 0, "symbolizer");
	CHECK(symbolizer__stack(&s, 7, 2, stack_id, false, &f, &n) == 0 && n == 1 &&
		      !strcmp(strpool__str(&pool, f[0]), "[vdso]"),
	      "no image: %s", n ? strpool__str(&pool, f[0]) : "-");
	symbolizer__free(&s);
	dso_table__free(&dt);
	strpool__free(&pool);
	derived_stacks__free(&ds);
	trace__free(&t);
	unlink(path);
}

int main(void)
{
	int fd = -1;
	Elf *e;

	elf_version(EV_CURRENT);
	e = open_self(&fd);
	CHECK(e != NULL, "open own binary");
	if (e) {
		test_plt_vs_objdump(e);
		test_fde_self(e);
		elf_end(e);
	}
	if (fd >= 0)
		close(fd);
	test_vdso_image();
	return unit_finish();
}
