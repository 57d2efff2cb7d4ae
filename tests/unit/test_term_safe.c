// SPDX-License-Identifier: MIT
/*
 * report/base/term_safe.h: control characters (C0 but tab and newline, DEL, C1) and bytes
 * that are no UTF-8 come out as \ooo, valid UTF-8 as it is, whatever the writes that carry
 * them: every input is also written a byte at a time and split at every position, since
 * the stdio buffer behind the escaper cuts characters anywhere.
 */
#include <stdlib.h>
#include <string.h>

#include "base/term_safe.h"
#include "unit.h"

struct sink {
	char buf[1024];
	size_t n;
};

static int put(void *arg, const char *p, size_t n)
{
	struct sink *s = arg;

	if (n > sizeof(s->buf) - 1 - s->n)
		return -1;
	memcpy(s->buf + s->n, p, n);
	s->n += n;
	s->buf[s->n] = '\0';
	return 0;
}

/* in escaped in writes of [0, cut) and [cut, len), and a byte at a time */
static void check(const char *in, const char *want)
{
	size_t len = strlen(in), cut, i;

	for (cut = 0; cut <= len; cut++) {
		struct term_safe ts = { 0 };
		struct sink s = { .n = 0 };

		term_safe__write(&ts, in, cut, put, &s);
		term_safe__write(&ts, in + cut, len - cut, put, &s);
		term_safe__flush(&ts, put, &s);
		CHECK(!strcmp(s.buf, want), "%s split at %zu: got '%s', want '%s'", want, cut,
		      s.buf, want);
	}
	{
		struct term_safe ts = { 0 };
		struct sink s = { .n = 0 };

		for (i = 0; i < len; i++)
			term_safe__write(&ts, in + i, 1, put, &s);
		term_safe__flush(&ts, put, &s);
		CHECK(!strcmp(s.buf, want), "%s a byte at a time: got '%s'", want, s.buf);
	}
}

int main(void)
{
	check("plain ascii\tand\nlines", "plain ascii\tand\nlines");
	check("title \033]0;x\007 clear \033[2J", "title \\033]0;x\\007 clear \\033[2J");
	check("del \x7f cr \r", "del \\177 cr \\015");
	/* UTF-8 kept: 2, 3 and 4 bytes */
	check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
	/* C1 CSI (U+009B) and NEL (U+0085), valid UTF-8 but controls */
	check("csi \xc2\x9b" "31m nel \xc2\x85", "csi \\302\\23331m nel \\302\\205");
	/* no UTF-8: a lone continuation, a bad lead, a cut character, overlong, a surrogate */
	check("a\x80z", "a\\200z");
	check("a\xffz", "a\\377z");
	check("a\xe2\x82z", "a\\342\\202z");
	check("end \xe2\x82", "end \\342\\202");
	check("over \xc0\xaf \xe0\x80\xaf", "over \\300\\257 \\340\\200\\257");
	check("sur \xed\xa0\x80", "sur \\355\\240\\200");
	check("big \xf4\x90\x80\x80", "big \\364\\220\\200\\200");
	/* a line format's names: tab, newline and CR too */
	{
		char *buf = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&buf, &size);

		term_safe__put_name(f, "a\tb\nc\rd;e");
		fclose(f);
		CHECK(!strcmp(buf, "a\\011b\\012c\\015d;e"), "put_name: '%s'", buf);
		free(buf);
	}
	return unit_finish();
}
