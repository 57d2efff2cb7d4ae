// SPDX-License-Identifier: MIT
/*
 * report/output/perfetto/pb.c and utf8.c: the wire format the perfetto output writes. Varints
 * at their byte boundaries, a nested message whose length needs two bytes (its bytes moved
 * past the length), nesting three deep, and strings that are not UTF-8 or are too long.
 */
#include <stdint.h>
#include <string.h>

#include "unit.h"
#include "output/perfetto/perfetto.h"

static bool bytes_are(const struct pb *p, const void *want, size_t n)
{
	return !p->oom && p->n == n && !memcmp(p->b, want, n);
}

int main(void)
{
	struct pb p = { 0 };
	char big[300];
	size_t i;

	pb__varint(&p, 1, 0);
	pb__varint(&p, 1, 127);
	pb__varint(&p, 1, 128);
	pb__varint(&p, 2, 300);
	CHECK(bytes_are(&p, "\x08\x00\x08\x7f\x08\x80\x01\x10\xac\x02", 10), "varints");
	pb__reset(&p);
	pb__varint(&p, 1, UINT64_MAX);
	CHECK(p.n == 11 && p.b[10] == 0x01, "a 64-bit varint is 10 bytes");
	pb__reset(&p);
	/* field 58 takes a two-byte tag; a negative int64 is ten bytes */
	pb__sint(&p, 58, -1);
	CHECK(p.n == 12 && p.b[0] == 0xd0 && p.b[1] == 0x03, "tag of field 58, -1");
	pb__reset(&p);
	pb__fixed64(&p, 47, 0x0102030405060708ull);
	CHECK(bytes_are(&p, "\xf9\x02\x08\x07\x06\x05\x04\x03\x02\x01", 10), "fixed64");

	/* a nested message of 300 bytes: its length is two bytes, written before them */
	pb__reset(&p);
	memset(big, 'x', sizeof(big));
	pb__begin(&p, 11);
	pb__bytes(&p, 1, big, sizeof(big) - 3);
	pb__end(&p);
	CHECK(p.n == 1 + 2 + 300 && p.b[0] == 0x5a && p.b[1] == 0xac && p.b[2] == 0x02 &&
	      p.b[3] == 0x0a && p.b[4] == 0xa9 && p.b[5] == 0x02 && p.b[6] == 'x' &&
	      p.b[p.n - 1] == 'x', "nested, 2-byte length: %zu bytes", p.n);
	/* three deep, and an empty one */
	pb__reset(&p);
	pb__begin(&p, 1);
	pb__begin(&p, 2);
	pb__begin(&p, 3);
	pb__varint(&p, 4, 5);
	pb__end(&p);
	pb__end(&p);
	pb__begin(&p, 6);
	pb__end(&p);
	pb__end(&p);
	CHECK(bytes_are(&p, "\x0a\x08\x12\x04\x1a\x02\x20\x05\x32\x00", 10), "three deep");
	/* past PB_MAX_DEPTH the packet is refused, not corrupted */
	pb__reset(&p);
	for (i = 0; i <= PB_MAX_DEPTH; i++)
		pb__begin(&p, 1);
	CHECK(p.oom, "too deep");

	/* strings: valid UTF-8 as is; bad bytes as U+FFFD; long ones cut and marked */
	pb__reset(&p);
	pf__str(&p, 2, "k\xc3\xa9", 3);
	CHECK(bytes_are(&p, "\x12\x03k\xc3\xa9", 5), "valid UTF-8");
	pb__reset(&p);
	pf__str(&p, 2, "a\xff" "b\xc3", 4);
	CHECK(bytes_are(&p, "\x12\x08" "a\xef\xbf\xbd" "b\xef\xbf\xbd", 10), "invalid bytes");
	pb__reset(&p);
	{
		static char longname[OUT_NAME_MAX_BYTES + 100];

		memset(longname, 'A', sizeof(longname));
		pf__str(&p, 2, longname, sizeof(longname));
		/* tag, a two-byte length, 4096 bytes and "..." */
		CHECK(p.n == 3 + OUT_NAME_MAX_BYTES + 3 && !memcmp(p.b + p.n - 4, "A...", 4),
		      "long name: %zu bytes", p.n);
	}
	pb__free(&p);
	return unit_finish();
}
