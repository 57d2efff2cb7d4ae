// SPDX-License-Identifier: MIT
/*
 * Symbolization, over the session's DSO table (dso.h: the files, their symbols and segments).
 * An address is taken to a file offset through its mapping (start, pgoff), then to an ELF
 * virtual address through the PT_LOAD that holds that offset. Frames we cannot name keep
 * their module and file offset ("libfoo.so+0x1234"): a stack never loses a frame.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/backward.h"
#include "sym/demangle.h"
#include "sym/dso.h"
#include "sym/interp_fold.h"
#include "sym/jitsyms.h"
#include "sym/kallsyms.h"
#include "sym/pyframes.h"
#include "sym/symbolize.h"
#include "sym/xpa.h"
#include "sym/xpa_pack.h"

static uint32_t frame_internf(struct strpool *pool, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static uint32_t frame_internf(struct strpool *pool, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	return frame_intern(pool, buf, n);
}


/* The frame of name's first len bytes, demangled, with suffix (or NULL) appended. */
static uint32_t intern_symbol(struct strpool *pool, const char *name, size_t len,
			      const char *suffix)
{
	char cut[DEMANGLE_MAX_INPUT + 1], dem[DEMANGLE_MAX_OUTPUT], buf[DEMANGLE_MAX_OUTPUT + 64];
	const char *n = name;
	int dlen;

	/* the demangler reads to the NUL: cut a versioned name (a longer one never demangles) */
	if (name[len] && len < sizeof(cut)) {
		memcpy(cut, name, len);
		cut[len] = '\0';
		n = cut;
	}
	if (!n[len] && !strncmp(n, "_Z", 2) && (dlen = xpu_demangle(n, dem, sizeof(dem))) >= 0) {
		n = dem;
		len = dlen;
	}
	if (!suffix)
		return frame_intern(pool, n, len);
	snprintf(buf, sizeof(buf), "%.*s%s", (int)len, n, suffix);
	return frame_intern(pool, buf, strlen(buf));
}

static uint32_t kernel_frame(struct symbolizer *s, uint64_t addr)
{
	const char *name = kallsyms__find(&s->ksyms, addr);

	if (!name)
		return frame_intern(s->pool, "[kernel.kallsyms]_[k]", 21);
	return intern_symbol(s->pool, name, strlen(name), "_[k]");
}

/*
 * The CUDA runtime linked into the program itself (nvcc's default, -cudart static): its entry
 * points (cudaLaunchKernel, cudaMemcpyAsync), the registration calls nvcc emits (__cuda*) and
 * its internals (libcudart_static_<hash>, cudart::, __cudart*) are trimmed by name, as the
 * shared runtime is by file.
 */
static bool is_cudart_symbol(const char *name)
{
	return (!strncmp(name, "cuda", 4) && name[4] >= 'A' && name[4] <= 'Z') ||
	       !strncmp(name, "__cuda", 6) || !strncmp(name, "libcudart_static_", 17) ||
	       !strncmp(name, "cudart::", 8);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return n;
}

/* Appends a frame of an address to frame_ids, with its file, and its site when sites are kept. */
static int push_frame(struct symbolizer *s, uint32_t id, const struct frame_site *site)
{
	if (s->opts.sites) {
		if (vec_reserve((void **)&s->sites, &s->sites_cap, s->nframe_ids, sizeof(*s->sites)))
			return -ENOMEM;
		s->sites[s->nframe_ids] = *site;
	}
	if (vec_reserve((void **)&s->frame_files, &s->frame_files_cap, s->nframe_ids,
			sizeof(*s->frame_files)))
		return -ENOMEM;
	s->frame_files[s->nframe_ids] = site->dso;
	return VEC_PUSH(s->frame_ids, s->nframe_ids, s->frame_ids_cap, id);
}

static uint32_t intern_file(struct symbolizer *s, const char *file)
{
	return file ? strpool__intern(s->pool, file, strnlen(file, 1024)) : 0;
}

/* The source line of v (the innermost inlined call's, if any), into site. */
static void src_line(struct symbolizer *s, Dwarf_Die *cu, uint64_t v, struct frame_site *site)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, v);
	int line;

	if (!l || dwarf_lineno(l, &line) || line <= 0)
		return;
	site->line = line;
	site->file = intern_file(s, dwarf_linesrc(l, NULL, NULL));
}

/* Where an inlined call was made (the line of the frame around it), into site. */
static void call_site(struct symbolizer *s, Dwarf_Die *inl, Dwarf_Files *files, size_t nfiles,
		      struct frame_site *site)
{
	Dwarf_Attribute a;
	Dwarf_Word line = 0, idx = 0;

	site->line = 0;
	site->file = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &line) || !line || line > INT32_MAX)
		return;
	site->line = line;
	if (files && !dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &idx) && idx < nfiles)
		site->file = intern_file(s, dwarf_filesrc(files, idx, NULL, NULL));
}

/*
 * Walks the inline chain at v, innermost first, excluding the outermost function (the caller
 * names that from the symbol table): with inline_frames appends a frame per inlined call;
 * with sites leaves in site the source line of the outermost function (where it made the
 * outermost inlined call, or v's own line). Returns how many frames were added.
 */
static int add_inlines(struct symbolizer *s, const struct dso_file *f, uint64_t v,
		       struct frame_site *site)
{
	Dwarf_Die cudie, *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int n, i, added = 0;

	if (!f->dw || !dwarf_addrdie(f->dw, v, &cudie))
		return 0;
	if (s->opts.sites) {
		src_line(s, &cudie, v, site);
		if (dwarf_getsrcfiles(&cudie, &files, &nfiles))
			files = NULL;
	}
	n = dwarf_getscopes(&cudie, v, &scopes);
	for (i = 0; i < n && i < 64; i++) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name;
		uint32_t id;

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		if (s->opts.inline_frames) {
			name = die_name(&scopes[i]);
			id = name ? intern_symbol(s->pool, name, strlen(name), " (inlined)") : 0;
			if (id && !push_frame(s, id, site))
				added++;
		}
		/* the frame around this call is at the call's line */
		if (s->opts.sites)
			call_site(s, &scopes[i], files, nfiles, site);
	}
	free(scopes);
	return added;
}

/*
 * The frames of a symbol pack's address (leaf first), in the rendering the options ask for.
 * An address the pack does not have is named as in a missing file. Whether it had it.
 */
static int pack_frames(struct symbolizer *s, size_t dso_idx, uint64_t file_off)
{
	const struct xpa_names *names;
	const struct xpa_names_addr *a = dso_table__pack_addr(s->dsos, dso_idx, file_off, &names);
	uint32_t first, n, i;

	if (!a)
		return 0;
	first = a->first + (s->opts.inline_frames ? a->nplain : 0);
	n = s->opts.inline_frames ? a->ninline : a->nplain;
	/* a pack's run is up to 512 frames an address: within the budget, or the stack unnamed */
	if (n > s->frames_budget - s->frames_assembled) {
		s->scratch_over = true;
		return 1;
	}
	s->frames_assembled += n;
	for (i = 0; i < n; i++) {
		const struct xpa_names_frame *pf = &names->frames[first + i];
		const char *name = xpa_names__str(names, pf->name);
		struct frame_site site = { .dso = dso_idx + 1, .off = file_off, .line = pf->line,
					   .outer = pf->flags & XPA_FRAME_OUTER };
		uint32_t id = frame_intern(s->pool, name, strlen(name));

		if (pf->file)
			site.file = intern_file(s, xpa_names__str(names, pf->file));
		if (!id || (pf->file && !site.file) || push_frame(s, id, &site))
			return -ENOMEM;
		if (pf->flags & XPA_FRAME_OUTER) {
			if (pf->flags & XPA_FRAME_NAMED)
				s->addrs_resolved++;
			else
				s->addrs_unknown++;
		}
	}
	return 1;
}

/*
 * Appends the frames of one user address of a DSO to frame_ids, leaf first; *named: the
 * function's name came from a symbol (not from its address). 0 or -ENOMEM.
 */
static int name_address(struct symbolizer *s, size_t dso_idx, uint64_t file_off, bool *named)
{
	struct dso_file *f = dso_table__file(s->dsos, dso_idx);
	struct frame_site site = { .dso = dso_idx + 1, .off = file_off };
	const struct dso_sym *e = NULL;
	uint64_t v = 0, fstart;
	uint32_t id;
	int err;

	*named = false;
	if (f->names) {
		err = pack_frames(s, dso_idx, file_off);
		if (err)
			return err < 0 ? err : 0;
		/* an address no pack has: this machine's file, if it has one */
		dso_table__open_local(s->dsos, dso_idx);
	}
	if (f->state == DSO_OK) {
		v = dso_file__vaddr(f, file_off);
		e = dso_file__sym(f, v);
		if (s->opts.inline_frames || s->opts.sites)
			add_inlines(s, f, v, &site);
	}
	if (e) {
		id = intern_symbol(s->pool, e->name, e->len, NULL);
		s->addrs_resolved++;
		*named = true;
	} else if (f->state == DSO_OK && dso_file__fde_start(f, v, &fstart)) {
		/* stripped code: one frame per function, as its unwind entry delimits it */
		id = frame_internf(s->pool, "%s+0x%" PRIx64, f->base, dso_file__off(f, fstart));
		s->addrs_unknown++;
	} else {
		const char *p = s->t->dsos[dso_idx].path, *b = strrchr(p, '/');

		id = frame_internf(s->pool, "%s+0x%" PRIx64, b ? b + 1 : p, file_off);
		s->addrs_unknown++;
	}
	site.outer = true;
	if (!id || push_frame(s, id, &site))
		return -ENOMEM;
	return 0;
}

/* Resolves one user address of a DSO; returns the refs index of its frames (leaf first). */
static int resolve_user(struct symbolizer *s, size_t dso_idx, uint64_t file_off, uint32_t *ref)
{
	struct frames_ref fr = { .first = s->nframe_ids };
	uint32_t *cached;
	bool ins, named;
	int err;

	cached = kmap__put(&s->addr_cache, dso_idx + 1, file_off, s->nrefs, &ins);
	if (!cached)
		return -ENOMEM;
	if (!ins) {
		*ref = *cached;
		return 0;
	}
	if (s->opts.list_addrs &&
	    VEC_PUSH(s->addr_list, s->naddr_list, s->addr_list_cap,
		     ((struct sym_addr){ .dso = (uint32_t)dso_idx, .off = file_off })))
		return -ENOMEM;
	err = name_address(s, dso_idx, file_off, &named);
	if (err)
		return err;
	fr.n = s->nframe_ids - fr.first;
	if (VEC_PUSH(s->refs, s->nrefs, s->refs_cap, fr))
		return -ENOMEM;
	*ref = *cached;
	return 0;
}

int symbolizer__address(struct symbolizer *s, size_t dso_idx, uint64_t file_off,
			bool inline_frames, const uint32_t **frames, const struct frame_site **sites,
			uint32_t *n, bool *named)
{
	bool saved_inline = s->opts.inline_frames, saved_sites = s->opts.sites;
	size_t first = s->nframe_ids;
	int err;

	if (dso_idx >= s->t->ndsos)
		return -EINVAL;
	s->opts.inline_frames = inline_frames;
	s->opts.sites = true;
	err = name_address(s, dso_idx, file_off, named);
	s->opts.inline_frames = saved_inline;
	s->opts.sites = saved_sites;
	if (err)
		return err;
	/* not kept: the next call writes over them */
	*frames = s->frame_ids + first;
	*sites = s->sites + first;
	*n = (uint32_t)(s->nframe_ids - first);
	s->nframe_ids = first;
	return 0;
}

#define FRAME_DSO_KERNEL UINT32_MAX
#define FRAME_DSO_PYTHON (UINT32_MAX - 1)
#define FRAME_DSO_AUTOGRAD (UINT32_MAX - 2)	/* "[backward] NODE": PyTorch's autograd */

/* Remembers the first file a frame name came from (dso index + 1, or a FRAME_DSO_ code). */
static int note_dso(struct symbolizer *s, uint32_t id, uint32_t code)
{
	size_t old = s->frame_dso_cap;

	if (id >= s->frame_dso_cap) {
		if (vec_reserve((void **)&s->frame_dso, &s->frame_dso_cap, id, sizeof(*s->frame_dso)))
			return -ENOMEM;
		memset(s->frame_dso + old, 0, (s->frame_dso_cap - old) * sizeof(*s->frame_dso));
	}
	if (!s->frame_dso[id])
		s->frame_dso[id] = code;
	return 0;
}

const char *symbolizer__frame_dso(const struct symbolizer *s, uint32_t id)
{
	return symbolizer__file_name(s, id < s->frame_dso_cap ? s->frame_dso[id] : 0);
}

const char *symbolizer__file_name(const struct symbolizer *s, uint32_t code)
{
	const char *p, *b;

	if (code == FRAME_DSO_KERNEL)
		return "[kernel.kallsyms]";
	if (code == FRAME_DSO_PYTHON)
		return "[python]";
	if (code == FRAME_DSO_AUTOGRAD)
		return "[autograd]";
	if (!code || code > s->t->ndsos)
		return "[unknown]";
	p = s->t->dsos[code - 1].path;
	b = strrchr(p, '/');
	return b ? b + 1 : *p ? p : "[unknown]";
}

const struct frame_site *symbolizer__sites(const struct symbolizer *s, const uint32_t *frames)
{
	return s->opts.sites && frames ? s->sites + (frames - s->frame_ids) : NULL;
}

const uint32_t *symbolizer__files(const struct symbolizer *s, const uint32_t *frames)
{
	return frames ? s->frame_files + (frames - s->frame_ids) : NULL;
}

const struct tr_dso *symbolizer__frame_dso_rec(const struct symbolizer *s, uint32_t id)
{
	uint32_t code = id < s->frame_dso_cap ? s->frame_dso[id] : 0;

	if (code == FRAME_DSO_KERNEL || code == FRAME_DSO_PYTHON || code == FRAME_DSO_AUTOGRAD ||
	    !code || code > s->t->ndsos)
		return NULL;
	return &s->t->dsos[code - 1];
}

/*
 * Appends a frame to the stack being assembled, in file (a dso index + 1 or a FRAME_DSO_ code;
 * 0 unknown), which it also notes as the name's file if it is the first; site NULL: not an
 * address of an ELF file.
 */
static int scratch_append(struct symbolizer *s, size_t *n, uint32_t id,
			  const struct frame_site *site, uint32_t file)
{
	if (vec_reserve((void **)&s->scratch, &s->scratch_cap, *n, sizeof(*s->scratch)) ||
	    vec_reserve((void **)&s->scratch_files, &s->scratch_files_cap, *n,
			sizeof(*s->scratch_files)) || (file && note_dso(s, id, file)))
		return -ENOMEM;
	if (s->opts.sites) {
		if (vec_reserve((void **)&s->scratch_sites, &s->scratch_sites_cap, *n,
				sizeof(*s->scratch_sites)))
			return -ENOMEM;
		s->scratch_sites[*n] = site ? *site : (struct frame_site){ 0 };
	}
	s->scratch_files[*n] = file;
	s->scratch[(*n)++] = id;
	return 0;
}

/*
 * scratch_append within SYM_STACK_MAX_FRAMES (one place kept for the cut's frame) and the
 * frames budget: a frame past either is refused (scratch_cut or scratch_over set, 0 returned),
 * and the callers stop assembling.
 */
static int scratch_push(struct symbolizer *s, size_t *n, uint32_t id, const struct frame_site *site,
			uint32_t file)
{
	if (s->frames_assembled >= s->frames_budget) {
		s->scratch_over = true;
		return 0;
	}
	if (*n >= SYM_STACK_MAX_FRAMES - 1) {
		s->scratch_cut = true;
		return 0;
	}
	s->frames_assembled++;
	return scratch_append(s, n, id, site, file);
}

static bool scratch_stopped(const struct symbolizer *s)
{
	return s->scratch_cut || s->scratch_over;
}

/* A Python frame (a tagged address, see pyframes.h); 0 on allocation failure. */
static uint32_t python_frame(struct symbolizer *s, uint64_t ip)
{
	char buf[2 * XPU_PY_NAME_MAX_BYTES + 32];
	int len = pyframes__name(s->t, ip, s->opts.python_lines, buf, sizeof(buf));

	if (len < 0)
		return 0;
	return frame_intern(s->pool, buf, (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
}

/*
 * A frame outside every ELF file, named by the process's JIT symbols; 0 when none covers it.
 * *fold is set for a Python perf trampoline (`py::` from -X perf) right above the Python
 * frames it runs: they name the same call, so the trampoline adds nothing.
 */
static uint32_t jit_frame(struct symbolizer *s, uint32_t pid, uint64_t look, bool before_py,
			  bool *fold)
{
	const char *name = jitsyms__find(s->jit, pid, look);
	size_t len;

	*fold = false;
	if (!name)
		return 0;
	if (before_py && !strncmp(name, "py::", 4)) {
		*fold = true;
		return 0;
	}
	s->jit_named++;
	len = strnlen(name, JITSYMS_NAME_MAX);
	return frame_intern(s->pool, name, len);
}

/*
 * A backward node whose class the recorder could not name (its vtable in no .dynsym it read)
 * takes it from the node's own frames: the first "X::apply(" among the frames inside it is the
 * class's apply, PyNode's or a generated node's.
 */
#define BW_APPLY_LOOKAHEAD 8

static int name_unnamed_nodes(struct symbolizer *s, size_t n)
{
	char unnamed[32], name[160];
	uint32_t unnamed_id;
	size_t i, j;

	backward__name(s->t, BWF_MAKE(0), unnamed, sizeof(unnamed));
	unnamed_id = frame_intern(s->pool, unnamed, strlen(unnamed));
	if (!unnamed_id)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (s->scratch[i] != unnamed_id)
			continue;
		for (j = i + 1; j < n && j <= i + BW_APPLY_LOOKAHEAD; j++) {
			const char *f = strpool__str(s->pool, s->scratch[j]);
			const char *apply = f ? strstr(f, "::apply(") : NULL;
			const char *cls = apply;
			int depth = 0;
			uint32_t id;

			if (!apply)
				continue;
			/* back to the "::" before the class, skipping template arguments */
			while (cls > f && !(depth == 0 && cls - f >= 2 && cls[-1] == ':' && cls[-2] == ':')) {
				cls--;
				depth += *cls == '>' ? 1 : *cls == '<' ? -1 : 0;
			}
			snprintf(name, sizeof(name), "[backward] %.*s", (int)(apply - cls), cls);
			id = frame_intern(s->pool, name, strlen(name));
			if (!id || note_dso(s, id, FRAME_DSO_AUTOGRAD))
				return -ENOMEM;
			s->scratch[i] = id;
			break;
		}
	}
	return 0;
}

/* The assembled stack less the interpreter's frames between its Python frames (interp_fold.h). */
static int fold_interpreter(struct symbolizer *s, size_t *n)
{
	size_t i, k = 0;

	if (vec_reserve((void **)&s->scratch_kinds, &s->scratch_kinds_cap, *n,
			sizeof(*s->scratch_kinds)) ||
	    vec_reserve((void **)&s->scratch_drop, &s->scratch_drop_cap, *n,
			sizeof(*s->scratch_drop)))
		return -ENOMEM;
	for (i = 0; i < *n; i++) {
		uint32_t f = s->scratch_files[i];

		s->scratch_kinds[i] = f == FRAME_DSO_PYTHON ? IK_PYTHON :
				      f && f <= s->t->ndsos && s->interp_dso[f - 1] ? IK_INTERP :
				      IK_OTHER;
	}
	if (!interp_fold__mark(s->scratch_kinds, *n, s->scratch_drop))
		return 0;
	for (i = 0; i < *n; i++) {
		if (s->scratch_drop[i]) {
			s->interp_folded++;
			continue;
		}
		s->scratch[k] = s->scratch[i];
		s->scratch_files[k] = s->scratch_files[i];
		if (s->opts.sites)
			s->scratch_sites[k] = s->scratch_sites[i];
		k++;
	}
	*n = k;
	return 0;
}

static int build_stack(struct symbolizer *s, uint32_t pid, uint64_t ts, const struct tr_stack *st,
		       bool trim, size_t *n)
{
	bool unnamed_node = false;
	uint32_t nk = st->nr_kernel, nu = st->nr_user, i;
	int err;

	*n = 0;
	/* user frames, outermost first; index nk is the user leaf (interrupted pc, exact) */
	for (i = nk + nu; i-- > nk && !scratch_stopped(s);) {
		uint64_t ip = st->ips[i], look = i == nk ? ip : ip - 1;
		const struct xpu_rec_mapping *m;
		uint32_t *didx;
		const struct tr_dso *d;
		uint32_t ref, j, id, file;

		if (BWF_IS(ip)) {
			char name[160];
			int len = backward__name(s->t, ip, name, sizeof(name));

			unnamed_node |= !BWF_CLASS(ip);
			id = frame_intern(s->pool, name, (size_t)len < sizeof(name) ? (size_t)len :
									     sizeof(name) - 1);
			if (!id || scratch_push(s, n, id, NULL, FRAME_DSO_AUTOGRAD))
				return -ENOMEM;
			continue;
		}
		if (PYF_IS(ip)) {
			id = python_frame(s, ip);
			if (!id || scratch_push(s, n, id, NULL, FRAME_DSO_PYTHON))
				return -ENOMEM;
			continue;
		}
		m = maps__find(&s->dsos->maps, pid, look, ts);
		didx = m ? kmap__get(&s->t->dso_ids, m->dso_id, 0) : NULL;
		d = didx ? &s->t->dsos[*didx] : NULL;
		file = didx ? *didx + 1 : 0;
		if (!m || (d && d->rec.kind == XPU_DSO_ANON)) {
			bool fold;

			id = jit_frame(s, pid, look, i > nk && PYF_IS(st->ips[i - 1]), &fold);
			if (fold)
				continue;
			/* JIT code and anonymous memory: the mapping's DSO, if it has one */
			if (!id)
				id = m ? frame_intern(s->pool, "[anon]", 6) :
					 frame_intern(s->pool, "[unknown]", 9);
		} else if (!d) {
			id = frame_internf(s->pool, "[unknown dso %u]", m->dso_id);
		} else if (d->rec.kind == XPU_DSO_VDSO && !d->image) {
			id = frame_intern(s->pool, "[vdso]", 6);
		} else {
			struct dso_file *f = dso_table__file(s->dsos, *didx);

			if (trim && f->cuda_internal)
				continue;
			f->stack_frames++;
			err = resolve_user(s, *didx, look - m->start + m->pgoff, &ref);
			if (err)
				return err;
			/* the function (outermost of its inline frames) of a static cudart */
			if (trim && s->refs[ref].n &&
			    is_cudart_symbol(strpool__str(s->pool,
				s->frame_ids[s->refs[ref].first + s->refs[ref].n - 1])))
				continue;
			/* stored leaf first; emit outermost (the function) first */
			for (j = s->refs[ref].n; j-- > 0 && !scratch_stopped(s);) {
				uint32_t at = s->refs[ref].first + j;

				id = s->frame_ids[at];
				err = scratch_push(s, n, id, s->opts.sites ? &s->sites[at] : NULL,
						   file);
				if (err)
					return err;
			}
			continue;
		}
		if (!id || scratch_push(s, n, id, NULL, file))
			return -ENOMEM;
	}
	/* kernel frames, outermost first; index 0 is the kernel leaf */
	for (i = nk; i-- > 0 && !scratch_stopped(s);) {
		uint64_t ip = st->ips[i];
		uint32_t id = kernel_frame(s, i == 0 ? ip : ip - 1);

		if (!id || scratch_push(s, n, id, NULL, FRAME_DSO_KERNEL))
			return -ENOMEM;
	}
	/* a frame refused: the cut ends the stack where its leaf would be, in the last place */
	if (s->scratch_cut && !s->scratch_over) {
		uint32_t id = frame_intern(s->pool, SYM_CUT_FRAME, strlen(SYM_CUT_FRAME));

		s->stacks_cut++;
		if (!id || scratch_append(s, n, id, NULL, 0))
			return -ENOMEM;
	}
	err = unnamed_node ? name_unnamed_nodes(s, *n) : 0;
	if (!err && s->interp_dso && !s->opts.python_interp)
		err = fold_interpreter(s, n);
	return err;
}

/* The assembled stack's frames, files and (with sites) sites, hashed. */
static uint64_t run_hash(const struct symbolizer *s, size_t cnt)
{
	uint64_t h = hash_bytes(s->scratch, cnt * sizeof(*s->scratch));

	h = h * 31 + hash_bytes(s->scratch_files, cnt * sizeof(*s->scratch_files));
	if (s->opts.sites)
		h = h * 31 + hash_bytes(s->scratch_sites, cnt * sizeof(*s->scratch_sites));
	return h;
}

/*
 * Whether a stack just assembled (cnt frames in scratch) equals one kept already: then *cached
 * takes that run. Thousands of processes running one program have the same stacks, and each
 * kept its own copy (8 bytes a frame, 40 with sites). 1, 0, or -ENOMEM.
 */
static int same_run(struct symbolizer *s, size_t cnt, uint32_t *cached)
{
	uint32_t *v = kmap__get(&s->run_ids, run_hash(s, cnt), 0);
	const struct frames_ref *r;

	if (!v)
		return 0;
	/* the first run of this hash; another run of the same hash (rare) keeps its own copy */
	r = &s->refs[*v];
	if (r->n != cnt || memcmp(s->frame_ids + r->first, s->scratch, cnt * sizeof(*s->scratch)) ||
	    memcmp(s->frame_files + r->first, s->scratch_files, cnt * sizeof(*s->scratch_files)) ||
	    (s->opts.sites && memcmp(s->sites + r->first, s->scratch_sites, cnt * sizeof(*s->sites))))
		return 0;
	*cached = *v;
	return 1;
}

int symbolizer__stack(struct symbolizer *s, uint32_t pid, uint64_t ts, uint32_t stack_id,
		      bool trim_gpu, const uint32_t **frames, uint32_t *n)
{
	uint64_t gen = trace__generation(s->t, pid, ts) & 0x7fffffff;
	uint64_t key = (uint64_t)pid << 32 | gen << 1 | trim_gpu;
	const struct tr_stack *st;
	struct frames_ref fr;
	uint32_t *cached;
	size_t cnt = 0;
	bool ins;
	int err;

	cached = kmap__put(&s->stack_cache, key, stack_id, s->nrefs, &ins);
	if (!cached)
		return -ENOMEM;
	if (ins) {
		s->scratch_cut = s->scratch_over = false;
		st = derived_stacks__get(s->stacks, stack_id);
		if (st) {
			err = build_stack(s, pid, ts, st, trim_gpu, &cnt);
			if (err)
				return err;
		}
		if (s->scratch_over) {
			/* past the budget: one frame that says so, not a part of the stack */
			cnt = 0;
			s->stacks_unnamed++;
			err = scratch_append(s, &cnt, frame_intern(s->pool, SYM_UNNAMED_FRAME,
								   strlen(SYM_UNNAMED_FRAME)), NULL, 0);
			if (err)
				return err;
		}
		if (!cnt) {
			err = scratch_append(s, &cnt, frame_intern(s->pool, stack_id ? "[unknown stack]" :
								   "[no stack]", stack_id ? 15 : 10),
					     NULL, 0);
			if (err)
				return err;
		}
		/* the same frames for another process or generation: one copy, shared */
		err = same_run(s, cnt, cached);
		if (err < 0)
			return err;
		if (err)
			goto done;
		fr.first = s->nframe_ids;
		fr.n = cnt;
		if (vec_reserve((void **)&s->frame_ids, &s->frame_ids_cap, s->nframe_ids + cnt,
				sizeof(*s->frame_ids)))
			return -ENOMEM;
		memcpy(s->frame_ids + s->nframe_ids, s->scratch, cnt * sizeof(*s->scratch));	/* cnt >= 1 */
		if (vec_reserve((void **)&s->frame_files, &s->frame_files_cap, s->nframe_ids + cnt,
				sizeof(*s->frame_files)))
			return -ENOMEM;
		memcpy(s->frame_files + s->nframe_ids, s->scratch_files,
		       cnt * sizeof(*s->frame_files));
		if (s->opts.sites) {
			if (vec_reserve((void **)&s->sites, &s->sites_cap, s->nframe_ids + cnt,
					sizeof(*s->sites)))
				return -ENOMEM;
			memcpy(s->sites + s->nframe_ids, s->scratch_sites, cnt * sizeof(*s->sites));
		}
		s->nframe_ids += cnt;
		if (VEC_PUSH(s->refs, s->nrefs, s->refs_cap, fr))
			return -ENOMEM;
		*cached = s->nrefs - 1;
		if (!kmap__put(&s->run_ids, run_hash(s, cnt), 0, s->nrefs - 1, NULL))
			return -ENOMEM;
	}
done:
	*frames = s->frame_ids + s->refs[*cached].first;
	*n = s->refs[*cached].n;
	return 0;
}

int symbolizer__named(const struct symbolizer *s, uint32_t pid, uint64_t ts, uint32_t stack_id,
		      bool trim_gpu, const uint32_t **frames, uint32_t *n)
{
	uint64_t gen = trace__generation(s->t, pid, ts) & 0x7fffffff;
	const uint32_t *ref = kmap__get(&s->stack_cache, (uint64_t)pid << 32 | gen << 1 | trim_gpu,
					stack_id);

	if (!ref)
		return -ENOENT;
	*frames = s->frame_ids + s->refs[*ref].first;
	*n = s->refs[*ref].n;
	return 0;
}

/* The files of the Python runtimes the recorder found: none, no fold (interp_dso NULL). */
static int interp_files(struct symbolizer *s)
{
	const struct trace *t = s->t;
	size_t i;

	if (!t->npy_runtimes || !t->ndsos)
		return 0;
	s->interp_dso = calloc(t->ndsos, sizeof(*s->interp_dso));
	if (!s->interp_dso)
		return -ENOMEM;
	for (i = 0; i < t->npy_runtimes; i++) {
		const uint32_t *d = kmap__get(&t->dso_ids, t->py_runtimes[i].dso_id, 0);

		if (d && *d < t->ndsos)
			s->interp_dso[*d] = true;
	}
	return 0;
}

int symbolizer__init(struct symbolizer *s, const struct derived_stacks *stacks,
		     struct dso_table *dsos, const struct sym_opts *opts, struct strpool *pool)
{
	const struct trace *t = stacks->t;
	int err;

	memset(s, 0, sizeof(*s));
	s->t = t;
	s->stacks = stacks;
	s->dsos = dsos;
	s->opts = *opts;
	s->pool = pool;
	/* a trace made in memory (tests) has no bound: none here either */
	s->frames_budget = UINT64_MAX;
	if (t->keep_max && t->keep_max < UINT64_MAX / SYM_FRAMES_KEPT_PER_RECORD_BYTE) {
		/* traces read as one share a bound, each part less than the smallest alone */
		uint64_t bound = t->keep_max > TRACE_KEEP_MIN_DEFAULT ? t->keep_max :
									 TRACE_KEEP_MIN_DEFAULT;

		s->frames_budget = bound * SYM_FRAMES_KEPT_PER_RECORD_BYTE /
				   (2 * sizeof(uint32_t) + (opts->sites ? sizeof(struct frame_site) : 0));
	}
	err = interp_files(s);
	if (!err)
		err = jitsyms__build(&s->jit, t);
	if (err)
		return err;
	return kallsyms__load(&s->ksyms, t->ksyms, t->ksyms_len);
}

void symbolizer__free(struct symbolizer *s)
{
	jitsyms__free(s->jit);
	kallsyms__free(&s->ksyms);
	free(s->frame_ids);
	free(s->refs);
	free(s->addr_list);
	free(s->scratch);
	free(s->scratch_sites);
	free(s->scratch_files);
	free(s->sites);
	free(s->frame_files);
	free(s->frame_dso);
	free(s->interp_dso);
	free(s->scratch_kinds);
	free(s->scratch_drop);
	kmap__free(&s->addr_cache);
	kmap__free(&s->stack_cache);
	kmap__free(&s->run_ids);
	memset(s, 0, sizeof(*s));
}
