// SPDX-License-Identifier: MIT
/* The table of output formats (see formats.h). */
#include <string.h>

#include "cmd/formats.h"
#include "output/out.h"

static const struct report_format_def formats[] = {
	{ .name = "text", .format = FMT_TEXT, .from_profile = out_text, .header_when_empty = true },
	{ .name = "folded", .format = FMT_FOLDED, .from_profile = out_folded },
	{ .name = "info", .format = FMT_INFO, .from_session = out_info },
	{ .name = "chrome", .format = FMT_CHROME, .from_session = out_chrome,
	  .needs_selection = true },
	{ .name = "svg", .format = FMT_SVG, .from_profile = out_svg },
	{ .name = "jsonl", .format = FMT_JSONL, .from_session = out_jsonl },
	/* only in a build with protobuf-c */
	{ .name = "pprof", .format = FMT_PPROF, .from_profile = out_pprof,
	  .unavailable = out_pprof__unavailable },
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

const char *report_format__names(void)
{
	static char buf[128];
	size_t i, at = 0;

	if (buf[0])
		return buf;
	for (i = 0; i < NFORMATS && at < sizeof(buf); i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s",
				       !i ? "" : i + 1 < NFORMATS ? ", " : " or ", formats[i].name);
	return buf;
}
