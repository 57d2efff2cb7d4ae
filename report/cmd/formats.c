// SPDX-License-Identifier: MIT
/* The table of output formats (see formats.h). */
#include <string.h>

#include "cmd/formats.h"
#include "output/out.h"

static const struct report_format_def formats[] = {
	/* the header's complete-stack rates name every sample and launch the filter keeps */
	{ .name = "text", .format = FMT_TEXT, .from_profile = out_text, .diff = out_diff_text,
	  .header_when_empty = true,
	  .names = NAME_PROFILE | NAME_SAMPLES | NAME_LAUNCHES | NAME_GPU_SITES |
		   NAME_ALLOC_SITES | NAME_GRAPH_SITES },
	{ .name = "folded", .format = FMT_FOLDED, .from_profile = out_folded,
	  .diff = out_diff_folded, .names = NAME_PROFILE },
	{ .name = "info", .format = FMT_INFO, .from_session = out_info,
	  .names = NAME_SAMPLES | NAME_LAUNCHES | NAME_STOPS | NAME_DSOS },
	{ .name = "chrome", .format = FMT_CHROME, .from_session = out_chrome,
	  .needs_selection = true,
	  .names = NAME_SAMPLES | NAME_OFF_CPU | NAME_BACKWARD | NAME_GRAPH_SITES,
	  .keeps_bytes = true },
	/* its own encoding: names cut and made valid UTF-8 (perfetto/utf8.c), never raw */
	{ .name = "perfetto", .format = FMT_PERFETTO, .from_session = out_perfetto,
	  .needs_selection = true,
	  .names = NAME_SAMPLES | NAME_OFF_CPU | NAME_BACKWARD | NAME_GRAPH_SITES,
	  .keeps_bytes = true },
	{ .name = "svg", .format = FMT_SVG, .from_profile = out_svg, .diff = out_svg_diff,
	  .names = NAME_PROFILE, .keeps_bytes = true },
	{ .name = "jsonl", .format = FMT_JSONL, .from_session = out_jsonl,
	  .names = NAME_SAMPLES | NAME_LAUNCHES | NAME_LAUNCH_SITES | NAME_OFF_CPU |
		   NAME_GRAPH_SITES,
	  .keeps_bytes = true },
	/* only in a build with protobuf-c */
	{ .name = "pprof", .format = FMT_PPROF, .from_profile = out_pprof,
	  .unavailable = out_pprof__unavailable, .names = NAME_PROFILE, .keeps_bytes = true },
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

const struct report_format_def *report_format__by_name(const char *name)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++) {
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	}
	return NULL;
}

const struct report_format_def *report_format__of(enum report_format f)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++) {
		if (formats[i].format == f)
			return &formats[i];
	}
	return &formats[0];
}

/* "a, b or c": the names of the formats that want says (-1: all, 1: diff writes, 0: not) */
static const char *list(char *buf, size_t size, int want)
{
	size_t i, n = 0, k = 0, at = 0;

	for (i = 0; i < NFORMATS; i++)
		n += want < 0 || want == !!formats[i].diff;
	for (i = 0; i < NFORMATS && at < size; i++) {
		if (want >= 0 && want != !!formats[i].diff)
			continue;
		at += (size_t)snprintf(buf + at, size - at, "%s%s",
				       !k ? "" : k + 1 < n ? ", " : " or ", formats[i].name);
		k++;
	}
	return buf;
}

const char *report_format__names(void)
{
	static char buf[128];

	return buf[0] ? buf : list(buf, sizeof(buf), -1);
}

const char *report_format__diff_names(bool writes)
{
	static char buf[2][128];

	return buf[writes][0] ? buf[writes] : list(buf[writes], sizeof(buf[writes]), writes);
}
