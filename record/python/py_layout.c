// SPDX-License-Identifier: MIT
/*
 * CPython detection from the interpreter's ELF file (see py_layout.h). Everything comes from
 * the file, not the process: the dynamic symbols every CPython exports (_PyRuntime,
 * _PyEval_EvalFrameDefault, Py_Version since 3.11) and, for 3.13, the _Py_DebugOffsets that
 * the initialised .PyRuntime section starts with.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "py_layout.h"
#include "xpu_format.h"

/* The 3.13 _Py_DebugOffsets fields used here, as u64 indexes into the structure. */
enum dbg313 {
	D_VERSION = 1, D_FREE_THREADED = 2,
	D_RT_INTERP_HEAD = 5,
	D_IS_NEXT = 8, D_IS_THREADS_HEAD = 9,
	D_TS_NEXT = 21, D_TS_CURRENT_FRAME = 23, D_TS_NATIVE_TID = 25,
	D_FR_PREVIOUS = 29, D_FR_EXECUTABLE = 30, D_FR_INSTR_PTR = 31, D_FR_OWNER = 33,
	D_CO_FILENAME = 35, D_CO_NAME = 36, D_CO_QUALNAME = 37, D_CO_LINETABLE = 38,
	D_CO_FIRSTLINENO = 39, D_CO_CODE_ADAPTIVE = 43,
	D_NR = 44,
};
static const uint8_t dbg313_used[] = {
	D_RT_INTERP_HEAD, D_IS_NEXT, D_IS_THREADS_HEAD, D_TS_NEXT, D_TS_CURRENT_FRAME,
	D_TS_NATIVE_TID, D_FR_PREVIOUS, D_FR_EXECUTABLE, D_FR_INSTR_PTR, D_FR_OWNER,
	D_CO_FILENAME, D_CO_NAME, D_CO_QUALNAME, D_CO_LINETABLE, D_CO_FIRSTLINENO,
	D_CO_CODE_ADAPTIVE,
};
#define PY_DEBUG_COOKIE "xdebugpy"

/* 3.10-3.13 release builds on x86-64 (3.13 as a fallback when its debug offsets are absent). */
static int fill_known(uint32_t minor, struct py_elf_info *in)
{
	struct xpu_py_layout *w = &in->walk;
	struct py_code_layout *c = &in->code;

	memset(w, 0, sizeof(*w));
	memset(c, 0, sizeof(*c));
	c->str_length = 16;
	c->str_state = 32;
	c->bytes_size = 16;
	c->bytes_data = 32;
	c->co_filename = 112;
	c->co_name = 120;
	c->co_qualname = 128;
	c->co_linetable = 136;
	c->linetable_kind = XPU_PY_LINETABLE_311;
	w->ts_next = 8;
	w->id_is_tid = 1;
	switch (minor) {
	case 10:
		w->model = XPU_PY_MODEL_310;
		w->rt_interp_head = 32;
		w->interp_threads_head = 8;
		w->ts_id = 176;			/* thread_id: pthread_self() */
		w->id_is_tid = 0;
		w->ts_frame = 24;
		w->fr_previous = 24;
		w->fr_code = 32;
		w->fr_instr = 96;		/* f_lasti */
		w->frame_read = 100;
		w->co_firstlineno = 40;
		c->co_filename = 104;
		c->co_name = 112;
		c->co_qualname = 0;
		c->co_linetable = 120;
		c->linetable_kind = XPU_PY_LINETABLE_310;
		c->ascii_data = 48;
		c->compact_data = 72;
		break;
	case 11:
		w->model = XPU_PY_MODEL_311;
		w->rt_interp_head = 40;
		w->interp_threads_head = 16;
		w->ts_id = 160;
		w->ts_frame = 56;		/* cframe */
		w->cframe_frame = 8;
		w->fr_code = 32;
		w->fr_previous = 48;
		w->fr_instr = 56;		/* prev_instr */
		w->fr_marker = 68;		/* is_entry */
		w->frame_read = 72;
		w->co_firstlineno = 72;
		w->co_code_adaptive = 184;
		c->ascii_data = 48;
		c->compact_data = 72;
		break;
	case 12:
		w->model = XPU_PY_MODEL_312;
		w->rt_interp_head = 40;
		w->interp_threads_head = 72;
		w->ts_id = 144;
		w->ts_frame = 56;
		w->cframe_frame = 0;
		w->fr_code = 0;
		w->fr_previous = 8;
		w->fr_instr = 56;
		w->fr_marker = 70;		/* owner */
		w->frame_read = 72;
		w->co_firstlineno = 68;
		w->co_code_adaptive = 192;
		c->ascii_data = 40;
		c->compact_data = 56;
		break;
	case 13:
		w->model = XPU_PY_MODEL_313;
		w->rt_interp_head = 632;
		w->interp_next = 7264;
		w->interp_threads_head = 7344;
		w->ts_id = 160;
		w->ts_frame = 72;		/* current_frame */
		w->fr_code = 0;
		w->fr_previous = 8;
		w->fr_instr = 56;		/* instr_ptr */
		w->fr_marker = 70;
		w->frame_read = 72;
		w->co_firstlineno = 68;
		w->co_code_adaptive = 200;
		c->ascii_data = 40;
		c->compact_data = 56;
		break;
	default:
		return -ENOTSUP;
	}
	c->co_firstlineno = w->co_firstlineno;
	w->co_filename = c->co_filename;
	return 0;
}

int py_layout__for_version(uint32_t version_hex, struct py_elf_info *info)
{
	if ((version_hex >> 24) != 3)
		return -ENOTSUP;
	return fill_known((version_hex >> 16) & 0xff, info);
}

static bool fits_u16(uint64_t v)
{
	return v <= UINT16_MAX;
}

/*
 * 3.13's own description of its structures, read from the file's .PyRuntime bytes. Every
 * offset must fit the walk's u16 fields and the frame read; otherwise the table is kept.
 */
static int read_debug_offsets(const uint64_t *d, struct py_elf_info *in)
{
	struct xpu_py_layout w = in->walk;
	struct py_code_layout c = in->code;
	uint64_t fr_end;
	size_t i;

	for (i = 0; i < sizeof(dbg313_used); i++)
		if (!fits_u16(d[dbg313_used[i]]))
			return -ERANGE;
	w.rt_interp_head = (uint16_t)d[D_RT_INTERP_HEAD];
	w.interp_next = (uint16_t)d[D_IS_NEXT];
	w.interp_threads_head = (uint16_t)d[D_IS_THREADS_HEAD];
	w.ts_next = (uint16_t)d[D_TS_NEXT];
	w.ts_frame = (uint16_t)d[D_TS_CURRENT_FRAME];
	w.ts_id = (uint16_t)d[D_TS_NATIVE_TID];
	w.id_is_tid = 1;
	w.fr_previous = (uint16_t)d[D_FR_PREVIOUS];
	w.fr_code = (uint16_t)d[D_FR_EXECUTABLE];
	w.fr_instr = (uint16_t)d[D_FR_INSTR_PTR];
	w.fr_marker = (uint16_t)d[D_FR_OWNER];
	w.co_firstlineno = (uint16_t)d[D_CO_FIRSTLINENO];
	w.co_code_adaptive = (uint16_t)d[D_CO_CODE_ADAPTIVE];
	fr_end = w.fr_marker + 1;
	if (w.fr_previous + 8u > fr_end)
		fr_end = w.fr_previous + 8u;
	if (w.fr_code + 8u > fr_end)
		fr_end = w.fr_code + 8u;
	if (w.fr_instr + 8u > fr_end)
		fr_end = w.fr_instr + 8u;
	fr_end = (fr_end + 7) & ~7ull;
	if (fr_end > XPU_PY_FRAME_READ_MAX)
		return -ERANGE;
	w.frame_read = (uint8_t)fr_end;
	c.co_filename = (uint16_t)d[D_CO_FILENAME];
	c.co_name = (uint16_t)d[D_CO_NAME];
	c.co_qualname = (uint16_t)d[D_CO_QUALNAME];
	c.co_linetable = (uint16_t)d[D_CO_LINETABLE];
	c.co_firstlineno = w.co_firstlineno;
	w.co_filename = c.co_filename;
	in->walk = w;
	in->code = c;
	return 0;
}

/* The 3.N minor in a file name such as python3.12, libpython3.10.so.1.0 or python3.13t. */
static int minor_from_name(const char *path, bool *free_threaded)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned int minor;
	int n = 0;

	base = base ? base + 1 : path;
	p = strstr(base, "python3.");
	if (!p || sscanf(p + 8, "%u%n", &minor, &n) != 1 || minor > 99)
		return -1;
	*free_threaded = p[8 + n] == 't';
	return (int)minor;
}

struct sym_hits {
	GElf_Sym runtime, eval, version, cold;
	bool has_runtime, has_eval, has_version, has_cold;
};

static void scan_symbols(Elf *e, Elf_Scn *scn, GElf_Shdr *sh, struct sym_hits *h)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;
	GElf_Sym sym;
	const char *name;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		/* only definitions: extension modules import _PyRuntime too */
		if (!gelf_getsym(data, (int)i, &sym) || !sym.st_name || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		if (!strcmp(name, "_PyRuntime")) {
			h->runtime = sym;
			h->has_runtime = true;
		} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
			h->eval = sym;
			h->has_eval = true;
		} else if (!strcmp(name, "Py_Version")) {
			h->version = sym;
			h->has_version = true;
		} else if (!strcmp(name, "_PyEval_EvalFrameDefault.cold")) {
			h->cold = sym;
			h->has_cold = true;
		}
	}
}

/* Reads len bytes at virtual address vaddr from the section that holds them in the file. */
static int read_vaddr(Elf *e, uint64_t vaddr, void *out, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *data;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		if (vaddr < sh.sh_addr || vaddr - sh.sh_addr > sh.sh_size ||
		    len > sh.sh_size - (vaddr - sh.sh_addr))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < sh.sh_size)
			return -EIO;
		memcpy(out, (const char *)data->d_buf + (vaddr - sh.sh_addr), len);
		return 0;
	}
	return -ENOENT;
}

static void read_loads(Elf *e, struct py_elf_info *in)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return;
	for (i = 0; i < n && in->nloads < PY_LAYOUT_MAX_LOADS; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		in->loads[in->nloads].offset = ph.p_offset;
		in->loads[in->nloads].vaddr = ph.p_vaddr;
		in->loads[in->nloads].filesz = ph.p_filesz;
		in->nloads++;
	}
}

/* Version and layout once the symbols are known. */
static void classify(Elf *e, const char *path, const struct sym_hits *h, struct py_elf_info *in)
{
	uint64_t dbg[D_NR];
	bool ft = false;
	int minor = minor_from_name(path, &ft);
	uint32_t v = 0;

	in->status = XPU_PY_UNSUPPORTED_VERSION;
	if (h->has_version && h->version.st_size >= 4 &&
	    !read_vaddr(e, h->version.st_value, &v, sizeof(v)))
		in->version_hex = v;
	else if (minor >= 0)
		in->version_hex = 0x03000000u | (uint32_t)minor << 16;
	if (ft) {
		in->status = XPU_PY_FREE_THREADED;
		return;
	}
	if (!h->has_eval || (in->version_hex >> 24) != 3)
		return;
	if (fill_known((in->version_hex >> 16) & 0xff, in))
		return;
	if (in->walk.model == XPU_PY_MODEL_313) {
		/* the interpreter's own offsets win over the table; a free-threaded one is refused */
		if (read_vaddr(e, h->runtime.st_value, dbg, sizeof(dbg)) ||
		    memcmp(dbg, PY_DEBUG_COOKIE, 8) || (dbg[D_VERSION] >> 16) != (in->version_hex >> 16))
			return;
		if (dbg[D_FREE_THREADED]) {
			in->status = XPU_PY_FREE_THREADED;
			return;
		}
		if (read_debug_offsets(dbg, in))
			return;
	}
	in->status = XPU_PY_SUPPORTED;
}

int py_layout__probe(int fd, const char *path, struct py_elf_info *info)
{
	const char *base = strrchr(path, '/');
	struct sym_hits h = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;

	base = base ? base + 1 : path;
	if (!strstr(base, "python"))
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return -ENOEXEC;
	while ((scn = elf_nextscn(e, scn))) {
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			scan_symbols(e, scn, &sh, &h);
	}
	if (!h.has_runtime) {
		elf_end(e);
		return 0;
	}
	memset(info, 0, sizeof(*info));
	info->runtime_vaddr = h.runtime.st_value;
	if (h.has_eval) {
		info->eval_vaddr = h.eval.st_value;
		info->eval_size = h.eval.st_size;
	}
	if (h.has_cold) {
		info->cold_vaddr = h.cold.st_value;
		info->cold_size = h.cold.st_size;
	}
	read_loads(e, info);
	classify(e, path, &h, info);
	elf_end(e);
	return 1;
}

int py_layout__bias(const struct py_elf_info *info, uint64_t start, uint64_t pgoff,
		    uint64_t *bias)
{
	unsigned int i;

	for (i = 0; i < info->nloads; i++) {
		uint64_t off = info->loads[i].offset & ~4095ull;

		if (pgoff >= off && pgoff < info->loads[i].offset + info->loads[i].filesz) {
			*bias = start - (pgoff - off) - (info->loads[i].vaddr & ~4095ull);
			return 0;
		}
	}
	*bias = 0;
	return -ENOENT;
}
