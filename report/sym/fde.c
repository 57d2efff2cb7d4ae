// SPDX-License-Identifier: MIT
/* FDE starts from .eh_frame_hdr (see fde.h and the LSB's "eh_frame_hdr" layout). */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "sym/fde.h"

/* pointer encodings (DW_EH_PE_*) that .eh_frame_hdr uses in practice */
#define PE_OMIT 0xff
#define PE_DATAREL_SDATA4 0x3b

/* Bytes of a value of encoding enc (its low nibble), or 0 for one this reader does not know. */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x02:	/* udata2 */
	case 0x0a:	/* sdata2 */
		return 2;
	case 0x03:	/* udata4 */
	case 0x0b:	/* sdata4 */
		return 4;
	case 0x04:	/* udata8 */
	case 0x0c:	/* sdata8 */
		return 8;
	default:
		return 0;
	}
}

static Elf_Data *find_hdr(Elf *e, uint64_t *addr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, ".eh_frame_hdr")) {
			*addr = sh.sh_addr;
			return elf_getdata(scn, NULL);
		}
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int fde_table__load(struct fde_table *ft, Elf *e)
{
	uint64_t hdr_addr = 0, count = 0;
	const uint8_t *p;
	size_t len, pos, csize, i;
	Elf_Data *d;

	memset(ft, 0, sizeof(*ft));
	d = find_hdr(e, &hdr_addr);
	if (!d || !d->d_buf || d->d_size < 4)
		return 0;
	p = d->d_buf;
	len = d->d_size;
	/* version 1, eh_frame_ptr encoding, fde_count encoding, table encoding */
	if (p[0] != 1 || p[3] != PE_DATAREL_SDATA4 || p[2] == PE_OMIT)
		return 0;
	csize = enc_size(p[2]);
	pos = 4 + (p[1] == PE_OMIT ? 0 : enc_size(p[1]));
	if (!csize || (p[1] != PE_OMIT && !enc_size(p[1])) || pos + csize > len)
		return 0;
	memcpy(&count, p + pos, csize);	/* little-endian, unsigned counts only make sense */
	pos += csize;
	if (!count || count > (len - pos) / 8)
		return 0;
	ft->starts = malloc(count * sizeof(*ft->starts));
	if (!ft->starts)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		int32_t rel;

		memcpy(&rel, p + pos + 8 * i, sizeof(rel));
		ft->starts[i] = hdr_addr + (int64_t)rel;
	}
	/* the table is sorted by definition; a damaged one must not break the search */
	qsort(ft->starts, count, sizeof(*ft->starts), cmp_u64);
	ft->n = count;
	return 0;
}

struct start_key {
	const uint64_t *starts;
	uint64_t v;
};

static bool start_at_most(size_t i, const void *arg)
{
	const struct start_key *k = arg;

	return k->starts[i] <= k->v;
}

bool fde_table__find(const struct fde_table *ft, uint64_t v, uint64_t *start)
{
	size_t lo = upper_bound(ft->n, start_at_most, &(struct start_key){ ft->starts, v });

	if (!lo)
		return false;
	*start = ft->starts[lo - 1];
	return true;
}

void fde_table__free(struct fde_table *ft)
{
	free(ft->starts);
	memset(ft, 0, sizeof(*ft));
}
