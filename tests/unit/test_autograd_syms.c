// SPDX-License-Identifier: MIT
/*
 * record/autograd/autograd_syms.c: class names from mangled vtable symbols, the vtable lookup and the
 * load bias, and reading a PyTorch library: this test's own executable holds no autograd
 * symbols (-ENOENT, a clear reason); Debian's libtorch_cpu.so, where installed, holds both
 * probed functions and hundreds of node classes, MmBackward0 among them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "autograd/autograd_syms.h"

#define DEBIAN_TORCH "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"

static void short_name(const char *mangled, const char *want, int want_ret)
{
	char out[128];
	int ret = autograd_syms__short_name(mangled, out, sizeof(out));

	CHECK(ret == want_ret && !strcmp(out, want), "%s: got '%s' (%d), want '%s'", mangled, out,
	      ret, want);
}

static void names(void)
{
	short_name("_ZTVN5torch8autograd9generated11MmBackward0E", "MmBackward0", 0);
	short_name("_ZTVN5torch8autograd14AccumulateGradE", "AccumulateGrad", 0);
	short_name("_ZTVN5torch8autograd6PyNodeE", "PyNode", 0);
	short_name("_ZTVN5torch8autograd7CppNodeIN5torch3ops7MyFn_12EEE", "CppNode<...>", 0);
	short_name("_ZTV14AccumulateGrad", "AccumulateGrad", 0);
	/* not a vtable, or cut short: the symbol itself, and an error */
	short_name("_ZN5torch8autograd4NodeD2Ev", "_ZN5torch8autograd4NodeD2Ev", -EINVAL);
	short_name("_ZTVN5torch8autograd99Mm", "_ZTVN5torch8autograd99Mm", -EINVAL);
	short_name("_ZTVN", "_ZTVN", -EINVAL);
}

static void lookup(void)
{
	struct ag_vtable v[2] = { { 0x1000, 0x40, 0 }, { 0x2000, 0x30, 12 } };
	char n[] = "MmBackward0\0AddBackward0";
	struct autograd_syms s = { .vtables = v, .nvtables = 2, .names = n, .names_len = sizeof(n),
				   .exec = { { 0x10000, 0x10000, 0x5000 } }, .nexec = 1 };
	uint64_t bias = 0;
	const char *c;

	/* an object's vtable pointer is the symbol + 16: past offset-to-top and the type info */
	c = autograd_syms__class(&s, 0x7000000000, 0x7000000000 + 0x1010);
	CHECK(c && !strcmp(c, "MmBackward0"), "got %s", c ? c : "(null)");
	c = autograd_syms__class(&s, 0x7000000000, 0x7000000000 + 0x2010);
	CHECK(c && !strcmp(c, "AddBackward0"), "got %s", c ? c : "(null)");
	CHECK(!autograd_syms__class(&s, 0x7000000000, 0x7000000000 + 0x1040), "past the first");
	CHECK(!autograd_syms__class(&s, 0x7000000000, 0x7000000000 + 0x0ff8), "before the first");
	CHECK(!autograd_syms__class(&s, 0x7000000000, 0x10), "below the bias");
	CHECK(autograd_syms__bias(&s, 0x7f0000010000, 0x10000, &bias) && bias == 0x7f0000000000,
	      "bias 0x%llx", (unsigned long long)bias);
	CHECK(!autograd_syms__bias(&s, 0x7f0000010000, 0x20000, &bias), "pgoff outside");
}

static void read_files(void)
{
	struct autograd_syms s;
	char err[256] = "";
	const char *c;
	int fd, ret;

	fd = open("/proc/self/exe", O_RDONLY);
	ret = autograd_syms__read(&s, fd, err, sizeof(err));
	CHECK(ret == -ENOENT && strstr(err, "no autograd symbols"), "self: %d '%s'", ret, err);
	close(fd);
	fd = open(DEBIAN_TORCH, O_RDONLY);
	if (fd < 0) {
		printf("skip: no %s (apt-get install python3-torch)\n", DEBIAN_TORCH);
		return;
	}
	ret = autograd_syms__read(&s, fd, err, sizeof(err));
	close(fd);
	CHECK(!ret, "%s: %d '%s'", DEBIAN_TORCH, ret, err);
	if (ret)
		return;
	CHECK(s.set_edge_off && s.evaluate_off && s.nexec, "offsets");
	CHECK(s.nvtables > 100, "%zu node classes", s.nvtables);
	c = NULL;
	for (size_t i = 0; i < s.nvtables && !c; i++)
		if (!strcmp(s.names + s.vtables[i].name_off, "MmBackward0"))
			c = autograd_syms__class(&s, 0, s.vtables[i].vaddr + 16);
	CHECK(c && !strcmp(c, "MmBackward0"), "MmBackward0 by its vtable: %s", c ? c : "(null)");
	autograd_syms__free(&s);
}

int main(void)
{
	names();
	lookup();
	read_files();
	return unit_finish();
}
