// SPDX-License-Identifier: MIT
/*
 * Unit tests of the parts behind --format=jsonl and --view=memory: JSON string escaping and
 * its cap (report/output/json_str.c), NVIDIA ioctl names (out/ioctl_names.c), and the pairing and
 * peak of GPU memory (model/gpu_mem.c) over a hand-built trace.
 */
#include <stdlib.h>
#include <string.h>

#include "model/gpu_mem.h"
#include "output/ioctl_names.h"
#include "output/json_str.h"
#include "unit.h"

static char buf[3 * JSON_NAME_MAX];

static const char *js(const char *s, size_t len)
{
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	size_t n = json_str(f, s, len);

	fclose(f);
	buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = '\0';
	return buf;
}

static void test_json_str(void)
{
	char *big = malloc(JSON_NAME_MAX + 10);
	const char *out;
	size_t i;

	CHECK(!strcmp(js("plain", 5), "\"plain\""), "%s", buf);
	CHECK(!strcmp(js("a\"b\\c\n\t\x01", 8), "\"a\\\"b\\\\c\\n\\t\\u0001\""), "%s", buf);
	CHECK(!strcmp(js("nul\0x", 5), "\"nul\\u0000x\""), "embedded NUL: %s", buf);
	CHECK(!strcmp(js("\xc3\xa9t\xc3\xa9", 5), "\"\xc3\xa9t\xc3\xa9\""), "UTF-8 kept: %s", buf);
	CHECK(!strcmp(js("\xff\xc3(\xe0\x80\x80\xed\xa0\x80", 9),
		      "\"\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\""),
	      "invalid, overlong and surrogate bytes: %s", buf);
	CHECK(!strcmp(js("\xe2\x82", 2), "\"\\ufffd\\ufffd\""), "cut sequence: %s", buf);

	memset(big, 'k', JSON_NAME_MAX + 10);
	out = js(big, JSON_NAME_MAX + 10);
	CHECK(strlen(out) == JSON_NAME_MAX + 5 && !strcmp(out + JSON_NAME_MAX + 1, "...\""),
	      "capped at %d bytes: %zu", JSON_NAME_MAX, strlen(out));
	out = js(big, JSON_NAME_MAX);
	CHECK(strlen(out) == JSON_NAME_MAX + 2, "exactly the cap is not cut: %zu", strlen(out));
	/* a 3-byte character across the cap: cut before it, never inside */
	big[JSON_NAME_MAX - 1] = '\xe2';
	big[JSON_NAME_MAX] = '\x82';
	big[JSON_NAME_MAX + 1] = '\xac';
	out = js(big, JSON_NAME_MAX + 10);
	CHECK(strlen(out) == JSON_NAME_MAX + 4 && !strcmp(out + JSON_NAME_MAX, "...\""),
	      "cut before a sequence the cap would split: %s", out + JSON_NAME_MAX - 3);
	for (i = 0; i < strlen(out); i++)
		if ((unsigned char)out[i] >= 0x80)
			break;
	CHECK(i == strlen(out), "no byte of the split character is left");
	free(big);
}

static void test_ioctl_names(void)
{
	const char *n;

	n = ioctl_request_name(0xc030462bu, "/dev/nvidiactl");
	CHECK(n && !strcmp(n, "NV_ESC_RM_ALLOC"), "nvidiactl 0x2b: %s", n ? n : "(null)");
	n = ioctl_request_name(0xc020462au, "/dev/nvidia0");
	CHECK(n && !strcmp(n, "NV_ESC_RM_CONTROL"), "nvidia0 0x2a: %s", n ? n : "(null)");
	n = ioctl_request_name(0xc00446c9u, "/dev/nvidiactl");
	CHECK(n && !strcmp(n, "NV_ESC_REGISTER_FD"), "201: %s", n ? n : "(null)");
	CHECK(!ioctl_request_name(0xc0104600u, "/dev/nvidiactl"), "an unknown escape has no name");
	n = ioctl_request_name(37, "/dev/nvidia-uvm");
	CHECK(n && !strcmp(n, "UVM_REGISTER_GPU"), "uvm 37: %s", n ? n : "(null)");
	n = ioctl_request_name(0x30000001, "/dev/nvidia-uvm");
	CHECK(n && !strcmp(n, "UVM_INITIALIZE"), "uvm init: %s", n ? n : "(null)");
	CHECK(!ioctl_request_name(37, "/dev/nvidiactl"), "UVM numbers only on nvidia-uvm");
	CHECK(!ioctl_request_name(1000, "/dev/nvidia-uvm"), "past the UVM table");
	CHECK(!ioctl_request_name(0x5401, NULL), "not an NVIDIA code, no file");
}

/*
 * Allocations A (100 B), B (200 B), C (50 B) and D (1000 B, process 2); A freed before C, so
 * the peak of process 1 alone is A+B = 300 ... then B+C = 250; with process 2, D at 1000 joins.
 */
static void test_gpu_mem(void)
{
	struct xpu_rec_gpu_memory recs[] = {
		{ .ts_ns = 10, .address = 0xa, .bytes = 100, .pid = 1, .op = XPU_GPU_MEM_ALLOC },
		{ .ts_ns = 20, .address = 0xb, .bytes = 200, .pid = 1, .op = XPU_GPU_MEM_ALLOC },
		{ .ts_ns = 30, .address = 0xa, .bytes = 100, .pid = 1, .op = XPU_GPU_MEM_FREE },
		{ .ts_ns = 40, .address = 0xc, .bytes = 50, .pid = 1, .op = XPU_GPU_MEM_ALLOC },
		{ .ts_ns = 50, .address = 0xd, .bytes = 1000, .pid = 2, .op = XPU_GPU_MEM_ALLOC },
		/* a release of memory allocated before the recording: paired with nothing */
		{ .ts_ns = 5, .address = 0xe, .bytes = 7, .pid = 1, .op = XPU_GPU_MEM_FREE },
		/* same address, other device: not A's release */
		{ .ts_ns = 35, .address = 0xa, .bytes = 100, .pid = 1, .device = 1,
		  .op = XPU_GPU_MEM_FREE },
	};
	struct trace t = { 0 };
	struct gpu_join j = { 0 };
	struct report_opts o = { 0 };
	struct filter f;
	struct gpu_mem m;

	t.memories = recs;
	t.nmemories = sizeof(recs) / sizeof(recs[0]);
	CHECK(!filter__init(&f, &t, &o), "filter");
	CHECK(!gpu_mem__build(&m, &t, &j, &f), "build");
	CHECK(m.peak_bytes == 1250 && m.peak_ts == 50, "peak %llu at %llu",
	      (unsigned long long)m.peak_bytes, (unsigned long long)m.peak_ts);
	CHECK(m.r[0].pair == 3 && m.r[2].pair == 1, "A paired with its release");
	CHECK(!m.r[5].pair && !m.r[6].pair, "unpaired releases");
	CHECK(!m.r[0].at_peak && m.r[1].at_peak && m.r[3].at_peak && m.r[4].at_peak,
	      "held at the peak: B, C, D");
	gpu_mem__free(&m);

	o.npids = 1;
	o.pids[0] = 1;
	filter__free(&f);
	CHECK(!filter__init(&f, &t, &o), "filter");
	CHECK(!gpu_mem__build(&m, &t, &j, &f), "build");
	CHECK(m.peak_bytes == 300 && m.peak_ts == 20, "process 1: peak %llu at %llu",
	      (unsigned long long)m.peak_bytes, (unsigned long long)m.peak_ts);
	CHECK(m.r[0].at_peak && m.r[1].at_peak && !m.r[3].at_peak && !m.r[4].keep,
	      "process 1: A and B at its peak, D filtered out");
	gpu_mem__free(&m);
	filter__free(&f);
}

int main(void)
{
	test_json_str();
	test_ioctl_names();
	test_gpu_mem();
	return unit_finish();
}
