// SPDX-License-Identifier: MIT
/* Unit tests of report/demangle.c (compiled in directly: unit tests link no report objects). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/demangle.c"

static int passed, failed;

static void check(const char *mangled, const char *want)
{
	char out[4096];
	int n = xpu_demangle(mangled, out, sizeof(out));

	if (!want) {
		if (n < 0) {
			passed++;
			return;
		}
		failed++;
		fprintf(stderr, "FAIL %s: want failure, got \"%s\"\n", mangled, out);
		return;
	}
	if (n >= 0 && !strcmp(out, want) && (size_t)n == strlen(want)) {
		passed++;
		return;
	}
	failed++;
	fprintf(stderr, "FAIL %s:\n  want \"%s\"\n  got  \"%s\"\n", mangled, want, n < 0 ? "(failed)" : out);
}

static const struct {
	const char *m, *d;
} cases[] = {
	/* plain and nested names, builtin parameters */
	{ "_Z3foov", "foo()" },
	{ "_Z3fooi", "foo(int)" },
	{ "_Z5saxpyifPfS_", "saxpy(int, float, float*, float*)" },
	{ "_ZN3foo3barEv", "foo::bar()" },
	{ "_ZN2ns5Outer5InnerEPKcRKdOl", "ns::Outer::Inner(char const*, double const&, long&&)" },
	{ "_ZNK3Foo3getEv", "Foo::get() const" },
	{ "_ZN3FooC1Ev", "Foo::Foo()" },
	{ "_ZN3FooC2ERKS_", "Foo::Foo(Foo const&)" },
	{ "_ZN3FooD0Ev", "Foo::~Foo()" },
	{ "_ZN3FooIiEC1Ev", "Foo<int>::Foo()" },
	/* std abbreviations and substitutions */
	{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
	  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
	{ "_ZSt4swapIiEvRT_S1_", "void std::swap<int>(int&, int&)" },
	{ "_Z1fSs", "f(std::string)" },
	{ "_ZNSsC1Ev", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string()" },
	{ "_Z1fPFviEPA3_i", "f(void (*)(int), int (*) [3])" },
	{ "_Z1fM3FooFivE", "f(int (Foo::*)())" },
	{ "_Z1fM3Fooi", "f(int Foo::*)" },
	/* templates: return type and T_ */
	{ "_Z3maxIiET_S0_S0_", "int max<int>(int, int)" },
	{ "_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv",
	  "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)" },
	{ "_Z1fILi3EEvv", "void f<3>()" },
	{ "_Z1fILb1EEvv", "void f<true>()" },
	{ "_Z1fIJidEEvDpT_", "void f<int, double>(int, double)" },
	{ "_ZNSt3mapIiSt6vectorIiSaIiEESt4lessIiESaISt4pairIKiS2_EEEixERS6_",
	  "std::map<int, std::vector<int, std::allocator<int> >, std::less<int>, "
	  "std::allocator<std::pair<int const, std::vector<int, std::allocator<int> > > > >"
	  "::operator[](int const&)" },
	/* operators */
	{ "_ZN3FooplERKS_", "Foo::operator+(Foo const&)" },
	{ "_ZN3FooaSEOS_", "Foo::operator=(Foo&&)" },
	{ "_ZN3FoocvbEv", "Foo::operator bool()" },
	{ "_ZnwmPv", "operator new(unsigned long, void*)" },
	{ "_ZN3FooclEv", "Foo::operator()()" },
	{ "_ZlsRSoRK3Foo", "operator<<(std::ostream&, Foo const&)" },
	/* special names, local names, lambdas, clones, abi tags */
	{ "_ZTV3Foo", "vtable for Foo" },
	{ "_ZTI3Foo", "typeinfo for Foo" },
	{ "_ZThn8_N3Foo3barEv", "non-virtual thunk to Foo::bar()" },
	{ "_ZGVZ4mainE1x", "guard variable for main::x" },
	{ "_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const" },
	{ "_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()" },
	{ "_Z3foov.constprop.0", "foo() [clone .constprop.0]" },
	{ "_Z3barv.cold", "bar() [clone .cold]" },
	{ "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7reserveEm",
	  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::reserve(unsigned long)" },
	{ "_ZN3Foo3barB5cxx11Ev", "Foo::bar[abi:cxx11]()" },
	{ "_Z1fDnDi", "f(decltype(nullptr), char32_t)" },
	/* CUDA-style kernel names */
	{ "_Z10matmul_f32PKfS0_Pfiii", "matmul_f32(float const*, float const*, float*, int, int, int)" },
	{ "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE",
	  "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<int> >(cutlass::gemm::kernel::Gemm<int>::Params)" },
	/* not mangled or malformed: the caller keeps the original */
	{ "main", NULL },
	{ "_Z", NULL },
	{ "_Z3fo", NULL },
	{ "_Z3foo", "foo" },
	{ "_ZN3foo", NULL },
	{ "_Z1fS5_", NULL },
	{ "_Z1fT_", NULL },
	{ "_Z9999999999999x", NULL },
	{ "_ZNSt", NULL },
	{ "_Z1fIiEvDpT_X", NULL },
};

/* Hostile input must fail or succeed, never crash or hang: run every prefix and mutations. */
static void fuzz_prefixes(void)
{
	char buf[512], out[4096];
	size_t i, j, k;
	unsigned seed = 12345;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].m);

		for (j = 0; j <= len && len < sizeof(buf); j++) {
			memcpy(buf, cases[i].m, j);
			buf[j] = '\0';
			xpu_demangle(buf, out, sizeof(out));
			for (k = 0; k < 8 && j > 2; k++) {
				seed = seed * 1103515245 + 12345;
				buf[2 + (seed >> 8) % (j - 2)] = "NESI_T0K1PRZ9ab"[(seed >> 16) % 15];
				xpu_demangle(buf, out, sizeof(out));
			}
		}
	}
	passed++;
}

static void deep_nesting(void)
{
	static char buf[DEMANGLE_MAX_INPUT + 64];
	char out[256];
	size_t i;

	/* _Z1fPPPP...i: deeper than the recursion limit must fail, not overflow the stack */
	strcpy(buf, "_Z1f");
	for (i = 4; i < DEMANGLE_MAX_INPUT - 2; i++)
		buf[i] = 'P';
	buf[i++] = 'i';
	buf[i] = '\0';
	if (xpu_demangle(buf, out, sizeof(out)) < 0)
		passed++;
	else
		failed++;
	/* substitution blow-up: each S_ doubles the text; output is bounded */
	strcpy(buf, "_Z1fIN1aIJ");
	for (i = 0; i < 200; i++)
		strcat(buf, "S_");
	strcat(buf, "EEEEvv");
	xpu_demangle(buf, out, sizeof(out));
	/* too small an output buffer fails instead of truncating */
	if (xpu_demangle("_ZN3foo3barEv", out, 5) < 0)
		passed++;
	else
		failed++;
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check(cases[i].m, cases[i].d);
	fuzz_prefixes();
	deep_nesting();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
