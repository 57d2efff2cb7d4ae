// SPDX-License-Identifier: MIT
/*
 * Unit tests of report/sym/demangle.c, the wrapper over the system demangler: names as c++filt
 * prints them, the bounds on input and output, and the fallback when none was built in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sym/demangle.h"
#include "unit.h"

static void check(const char *mangled, const char *want)
{
	static char out[DEMANGLE_MAX_OUTPUT];
	int n = xpu_demangle(mangled, out, sizeof(out));

	if (!want) {
		CHECK(n < 0, "%s: want failure, got \"%s\"", mangled, out);
		return;
	}
	CHECK(n >= 0 && !strcmp(out, want) && (size_t)n == strlen(want),
	      "%s:\n  want \"%s\"\n  got  \"%s\"", mangled, want, n < 0 ? "(failed)" : out);
}

/* As c++filt prints them (std::string in full); it fails on names over 1 KB: long_names() */
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
	{ "_Z1fSs", "f(std::basic_string<char, std::char_traits<char>, std::allocator<char> >)" },
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
	{ "_ZlsRSoRK3Foo",
	  "operator<<(std::basic_ostream<char, std::char_traits<char> >&, Foo const&)" },
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
	/* real PyTorch kernels (samples/traces/torch-small.xpu): lambda functors in local names */
	{ "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_15CUDAFuncto"
	  "r_addIfEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
	  "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native:"
	  ":CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> cons"
	  "t&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<"
	  "float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)"
	  "#1})" },
	{ "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffZNS0_67_GLOBAL__N_"
	  "_06c19b41_28_ActivationThresholdKernel_cu_751192d7_1581121threshold_kernel_implIfEEvRNS_18"
	  "TensorIteratorBaseET_S7_EUlffE_EESt5arrayIPcLm3EEEEviT0_T1_",
	  "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "
	  "float, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorB"
	  "ase&, float, float)::{lambda(float, float)#1}>, std::array<char*, 3ul> >(int, at::native::"
	  "BinaryFunctor<float, float, float, at::native::(anonymous namespace)::threshold_kernel_imp"
	  "l<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}>, std::array<cha"
	  "r*, 3ul>)" },
	/* default-argument scopes, string literals, discriminators, unnamed types */
	{ "_ZZ1fvEd_NKUlvE_clEv",
	  "f()::{default arg#1}::{lambda()#1}::operator()() const" },
	{ "_ZZ1fvEd0_NKUlvE_clEv",
	  "f()::{default arg#2}::{lambda()#1}::operator()() const" },
	{ "_ZZ4mainEs_0",
	  "main::string literal" },
	{ "_ZZ4mainE1x__12_",
	  "main::x" },
	{ "_ZZ1fvENUt0_3fooEv",
	  "f()::{unnamed type#2}::foo()" },
	/* T_ and its substitutions mean the template parameter where they are used */
	{ "_Z4callIZ3genvEUlT_E_EiS0_",
	  "int call<gen()::{lambda(auto:1)#1}>(gen()::{lambda(auto:1)#1})" },
	{ "_ZZ3genvENKUlT_T0_E0_clIidEEDaS_S0_",
	  "auto gen()::{lambda(auto:1, auto:2)#2}::operator()<int, double>(int, double) const" },
	{ "_Z4callIZN1S1mIfEEvT_EUliE_EiS2_",
	  "int call<S::m<float>(float)::{lambda(int)#1}>(S::m<float>(float)::{lambda(int)#1})" },
	/* nvcc extended __device__ lambdas: the enclosing function's address as an argument */
	{ "_Z1fIXadL_Z3foovEEEvv",
	  "void f<&(foo())>()" },
	{ "_Z1fIL_Z3fooIiEvvEEvv",
	  "void f<void foo<int>()>()" },
	{ "_Z1fIXadL_ZN1A1bEEEEvv",
	  "void f<&A::b>()" },
	{ "_Z4kernI17__nv_dl_wrapper_tI11__nv_dl_tagIPFvPfEXadL_ZN2ns6launchIfEEvPT_EELj1EEJEEEviS7_",
	  "void kern<__nv_dl_wrapper_t<__nv_dl_tag<void (*)(float*), &(void ns::launch<float>(float*)"
	  "), 1u>> >(int, __nv_dl_wrapper_t<__nv_dl_tag<void (*)(float*), &(void ns::launch<float>(fl"
	  "oat*)), 1u>>)" },
	{ "_Z15__cudaAddressOfI17__nv_dl_wrapper_tI11__nv_dl_tagIPFvPfEXadL_ZN2ns6launchIfEEvPT_EELj1"
	  "EEJEEES8_RS7_",
	  "__nv_dl_wrapper_t<__nv_dl_tag<void (*)(float*), &(void ns::launch<float>(float*)), 1u>>* _"
	  "_cudaAddressOf<__nv_dl_wrapper_t<__nv_dl_tag<void (*)(float*), &(void ns::launch<float>(fl"
	  "oat*)), 1u>> >(__nv_dl_wrapper_t<__nv_dl_tag<void (*)(float*), &(void ns::launch<float>(fl"
	  "oat*)), 1u>>&)" },
	{ "_Z28__wrapper__device_stub_kern2ILi5EfN36_GLOBAL__N__193fd94e_4_k_cu_3682febc2OpEEvRPT0_RT"
	  "1_",
	  "void __wrapper__device_stub_kern2<5, float, (anonymous namespace)::Op>(float*&, (anonymous"
	  " namespace)::Op&)" },
	{ "_Z5kern2ILi7Ef18__nv_hdl_wrapper_tILb0ELb1ELb0E11__nv_dl_tagIPFvPfEXadL_ZN2ns6launchIfEEvP"
	  "T_EELj3EEFffEJEEEvPT0_T1_",
	  "void kern2<7, float, __nv_hdl_wrapper_t<false, true, false, __nv_dl_tag<void (*)(float*), "
	  "&(void ns::launch<float>(float*)), 3u>, float (float)> >(float*, __nv_hdl_wrapper_t<false,"
	  " true, false, __nv_dl_tag<void (*)(float*), &(void ns::launch<float>(float*)), 3u>, float "
	  "(float)>)" },
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


/* Names of real GPU kernels pass 1 KB; c++filt refuses those, we demangle them. */
static void long_names(void)
{
	static const char cutlass[] =
		"_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22"
		"ImplicitGemmMultistageINS_4gemm9GemmShapeILi64ELi128ELi16EEENS4_52Conv2dWgradOutputGradien"
		"tTileAccessIteratorOptimizedINS_11MatrixShapeILi64ELi16EEENS_10tfloat32_tENS_9transform29P"
		"itchLinearWarpRakedThreadMapINS_16PitchLinearShapeILi64ELi16EEELi128ENSF_ILi8ELi4EEELi4EEE"
		"NS_12AlignedArrayISC_Li4ELi16EEEEENSD_11threadblock25RegularTileAccessIteratorISB_SC_NS_6l"
		"ayout40ColumnMajorTensorOpMultiplicandCongruousILi32ELi32EEELi1ESI_Li16EEELNS_4arch14Cache"
		"Operation4KindE0ENS4_48Conv2dWgradActivationTileAccessIteratorOptimizedINSA_ILi16ELi128EEE"
		"SC_NSE_INSF_ILi128ELi16EEELi128ESH_Li4EEESK_EENSN_ISW_SC_NSO_37RowMajorTensorOpMultiplican"
		"dCongruousILi32ELi32EEELi0ESY_Li16EEELSU_0ENS6_11threadblock9MmaPolicyINS6_4warp11MmaTenso"
		"rOpINS7_ILi32ELi64ELi16EEESC_SQ_SC_S11_fNSO_8RowMajorENS15_17MmaTensorOpPolicyINSS_3MmaINS"
		"7_ILi16ELi8ELi8EEELi32ESC_S18_SC_NSO_11ColumnMajorEfS18_NSS_13OpMultiplyAddEEENSA_ILi1ELi1"
		"EEEEELi1ELb0EbEENSA_ILi0ELi0EEES1I_Li1EEELi6EbEENS_8epilogue11threadblock8EpilogueIS8_S1H_"
		"Li1ENS1M_22PredicatedTileIteratorINS1M_26OutputTileOptimalThreadMapINS1M_15OutputTileShape"
		"ILi128ELi8ELi2ELi1ELi1EEENS1Q_ILi1ELi4ELi1ELi1ELi4EEELi128ELi4ELi32EEEfLb0ENSO_9NoPermuteE"
		"Lb0EEENS1L_4warp24FragmentIteratorTensorOpIS17_S1B_fNS_5ArrayIfLi4ELb1EEES18_EENS1W_20Tile"
		"IteratorTensorOpIS17_S1B_fS18_EENS1M_18SharedLoadIteratorINS1T_18CompactedThreadMapEfLi16E"
		"EENS1L_6thread17LinearCombinationIfLi4EffLNS26_9ScaleType4KindE0ELNS_15FloatRoundStyleE2EE"
		"ENSA_ILi0ELi8EEELi2ELi1EEENS13_30GemmIdentityThreadblockSwizzleILi4EEELNS1_8OperatorE2ENS1"
		"_17Conv2dProblemSizeELNS1_9GroupModeE0EEEEEvNT_6ParamsE";
	static char out[DEMANGLE_MAX_OUTPUT];
	int n = xpu_demangle(cutlass, out, sizeof(out));

	CHECK(sizeof(cutlass) > 1024, "the name is %zu bytes", sizeof(cutlass));
	CHECK(n == 10241 && !strncmp(out, "void cutlass__5x_cudnn::Kernel<", 31) &&
	      !strcmp(out + n - 9, "::Params)"),
	      "cutlass: %d bytes", n);
}

/* Substitution id i ("S_", "S0_", "S1_", ...) */
static void sub_id(unsigned i, char *buf)
{
	char tmp[8];
	unsigned k = 0, v;

	if (!i) {
		strcpy(buf, "S_");
		return;
	}
	v = i - 1;
	do {
		tmp[k++] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[v % 36];
		v /= 36;
	} while (v);
	*buf++ = 'S';
	while (k)
		*buf++ = tmp[--k];
	strcpy(buf, "_");
}

/*
 * Each parameter is B<previous, previous>: the demangled text doubles per 10 input bytes. 60
 * levels would be 2^60 bytes; the output bound stops it at once.
 */
static int doubling(char *buf, unsigned levels)
{
	static char out[DEMANGLE_MAX_OUTPUT];
	unsigned i, prev = 2;
	char id[8];

	strcpy(buf, "_Z1f1A1BIS_S_E");	/* S_ = A, S0_ = B, S1_ = B<A, A> */
	for (i = 0; i < levels; i++) {
		sub_id(prev - 1, id);
		sprintf(buf + strlen(buf), "S0_I%s%sE", id, id);
		prev++;
	}
	return xpu_demangle(buf, out, sizeof(out));
}

static void bounds(void)
{
	static char buf[DEMANGLE_MAX_INPUT + 64];
	char out[256];
	clock_t t0;
	size_t i;
	int n;

	/* a valid name one byte over the input bound is refused */
	strcpy(buf, "_Z1f");
	for (i = 4; i < DEMANGLE_MAX_INPUT; i++)
		buf[i] = 'P';
	buf[i++] = 'i';
	buf[i] = '\0';
	CHECK(strlen(buf) == DEMANGLE_MAX_INPUT + 1 && xpu_demangle(buf, out, sizeof(out)) < 0,
	      "over the input bound");
	/* at the bound, too deep for the printer: fails cleanly, no stack overflow */
	buf[DEMANGLE_MAX_INPUT - 1] = 'i';
	buf[DEMANGLE_MAX_INPUT] = '\0';
	CHECK(xpu_demangle(buf, out, sizeof(out)) < 0, "4 KB of pointers");
	/* output doubling: a few levels fit, 60 levels fail, fast */
	n = doubling(buf, 4);
	CHECK(n > 0 && n < 2000, "4 doublings: %d", n);
	t0 = clock();
	CHECK(doubling(buf, 60) < 0, "60 doublings must fail");
	CHECK(clock() - t0 < CLOCKS_PER_SEC, "60 doublings took %ld ms",
	      (long)((clock() - t0) * 1000 / CLOCKS_PER_SEC));
	/* too small an output buffer fails instead of truncating, and leaves out alone */
	strcpy(out, "untouched");
	CHECK(xpu_demangle("_ZN3foo3barEv", out, 5) < 0 && !strcmp(out, "untouched"), "small out");
	CHECK(xpu_demangle("_ZN3foo3barEv", out, 11) == 10, "exact fit");
	CHECK(xpu_demangle("_ZN3foo3barEv", out, 10) < 0, "one short");
}

/* Hostile input must fail or succeed, never crash or hang: every prefix and mutations. */
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
	unit_passed++;
}

/* Built without a demangler: every name stays as it is (the caller keeps the mangled one). */
static void fallback(void)
{
	char out[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(xpu_demangle(cases[i].m, out, sizeof(out)) < 0, "%s demangled", cases[i].m);
}

int main(void)
{
	size_t i;

	if (!demangle__available()) {
		printf("built without libiberty: checking the fallback only\n");
		fallback();
	} else {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			check(cases[i].m, cases[i].d);
		long_names();
		bounds();
		fuzz_prefixes();
	}
	CHECK(xpu_demangle("main", (char[8]){ 0 }, 8) < 0, "a C name is not demangled");
	return unit_finish();
}
