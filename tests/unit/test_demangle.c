// SPDX-License-Identifier: MIT
/* Unit tests of report/sym/demangle.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"

static int passed, failed;

static void check(const char *mangled, const char *want)
{
	static char out[DEMANGLE_MAX_OUTPUT];
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
	/* real cuDNN cutlass kernel (torch-small.xpu): 1.7 KB mangled, 10 KB demangled */
	{ "_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22"
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
	  "_17Conv2dProblemSizeELNS1_9GroupModeE0EEEEEvNT_6ParamsE",
	  "void cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::conv::kernel::ImplicitGemmConvolution<cu"
	  "tlass__5x_cudnn::conv::threadblock::ImplicitGemmMultistage<cutlass__5x_cudnn::gemm::GemmSh"
	  "ape<64, 128, 16>, cutlass__5x_cudnn::conv::threadblock::Conv2dWgradOutputGradientTileAcces"
	  "sIteratorOptimized<cutlass__5x_cudnn::MatrixShape<64, 16>, cutlass__5x_cudnn::tfloat32_t, "
	  "cutlass__5x_cudnn::transform::PitchLinearWarpRakedThreadMap<cutlass__5x_cudnn::PitchLinear"
	  "Shape<64, 16>, 128, cutlass__5x_cudnn::PitchLinearShape<8, 4>, 4>, cutlass__5x_cudnn::Alig"
	  "nedArray<cutlass__5x_cudnn::tfloat32_t, 4, 16> >, cutlass__5x_cudnn::transform::threadbloc"
	  "k::RegularTileAccessIterator<cutlass__5x_cudnn::MatrixShape<64, 16>, cutlass__5x_cudnn::tf"
	  "loat32_t, cutlass__5x_cudnn::layout::ColumnMajorTensorOpMultiplicandCongruous<32, 32>, 1, "
	  "cutlass__5x_cudnn::transform::PitchLinearWarpRakedThreadMap<cutlass__5x_cudnn::PitchLinear"
	  "Shape<64, 16>, 128, cutlass__5x_cudnn::PitchLinearShape<8, 4>, 4>, 16>, (cutlass__5x_cudnn"
	  "::arch::CacheOperation::Kind)0, cutlass__5x_cudnn::conv::threadblock::Conv2dWgradActivatio"
	  "nTileAccessIteratorOptimized<cutlass__5x_cudnn::MatrixShape<16, 128>, cutlass__5x_cudnn::t"
	  "float32_t, cutlass__5x_cudnn::transform::PitchLinearWarpRakedThreadMap<cutlass__5x_cudnn::"
	  "PitchLinearShape<128, 16>, 128, cutlass__5x_cudnn::PitchLinearShape<8, 4>, 4>, cutlass__5x"
	  "_cudnn::AlignedArray<cutlass__5x_cudnn::tfloat32_t, 4, 16> >, cutlass__5x_cudnn::transform"
	  "::threadblock::RegularTileAccessIterator<cutlass__5x_cudnn::MatrixShape<16, 128>, cutlass_"
	  "_5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::RowMajorTensorOpMultiplicandCongruous<32"
	  ", 32>, 0, cutlass__5x_cudnn::transform::PitchLinearWarpRakedThreadMap<cutlass__5x_cudnn::P"
	  "itchLinearShape<128, 16>, 128, cutlass__5x_cudnn::PitchLinearShape<8, 4>, 4>, 16>, (cutlas"
	  "s__5x_cudnn::arch::CacheOperation::Kind)0, cutlass__5x_cudnn::gemm::threadblock::MmaPolicy"
	  "<cutlass__5x_cudnn::gemm::warp::MmaTensorOp<cutlass__5x_cudnn::gemm::GemmShape<32, 64, 16>"
	  ", cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::ColumnMajorTensorOpMultiplican"
	  "dCongruous<32, 32>, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::RowMajorTens"
	  "orOpMultiplicandCongruous<32, 32>, float, cutlass__5x_cudnn::layout::RowMajor, cutlass__5x"
	  "_cudnn::gemm::warp::MmaTensorOpPolicy<cutlass__5x_cudnn::arch::Mma<cutlass__5x_cudnn::gemm"
	  "::GemmShape<16, 8, 8>, 32, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::RowMa"
	  "jor, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::ColumnMajor, float, cutlass"
	  "__5x_cudnn::layout::RowMajor, cutlass__5x_cudnn::arch::OpMultiplyAdd>, cutlass__5x_cudnn::"
	  "MatrixShape<1, 1> >, 1, false, bool>, cutlass__5x_cudnn::MatrixShape<0, 0>, cutlass__5x_cu"
	  "dnn::MatrixShape<0, 0>, 1>, 6, bool>, cutlass__5x_cudnn::epilogue::threadblock::Epilogue<c"
	  "utlass__5x_cudnn::gemm::GemmShape<64, 128, 16>, cutlass__5x_cudnn::gemm::warp::MmaTensorOp"
	  "<cutlass__5x_cudnn::gemm::GemmShape<32, 64, 16>, cutlass__5x_cudnn::tfloat32_t, cutlass__5"
	  "x_cudnn::layout::ColumnMajorTensorOpMultiplicandCongruous<32, 32>, cutlass__5x_cudnn::tflo"
	  "at32_t, cutlass__5x_cudnn::layout::RowMajorTensorOpMultiplicandCongruous<32, 32>, float, c"
	  "utlass__5x_cudnn::layout::RowMajor, cutlass__5x_cudnn::gemm::warp::MmaTensorOpPolicy<cutla"
	  "ss__5x_cudnn::arch::Mma<cutlass__5x_cudnn::gemm::GemmShape<16, 8, 8>, 32, cutlass__5x_cudn"
	  "n::tfloat32_t, cutlass__5x_cudnn::layout::RowMajor, cutlass__5x_cudnn::tfloat32_t, cutlass"
	  "__5x_cudnn::layout::ColumnMajor, float, cutlass__5x_cudnn::layout::RowMajor, cutlass__5x_c"
	  "udnn::arch::OpMultiplyAdd>, cutlass__5x_cudnn::MatrixShape<1, 1> >, 1, false, bool>, 1, cu"
	  "tlass__5x_cudnn::epilogue::threadblock::PredicatedTileIterator<cutlass__5x_cudnn::epilogue"
	  "::threadblock::OutputTileOptimalThreadMap<cutlass__5x_cudnn::epilogue::threadblock::Output"
	  "TileShape<128, 8, 2, 1, 1>, cutlass__5x_cudnn::epilogue::threadblock::OutputTileShape<1, 4"
	  ", 1, 1, 4>, 128, 4, 32>, float, false, cutlass__5x_cudnn::layout::NoPermute, false>, cutla"
	  "ss__5x_cudnn::epilogue::warp::FragmentIteratorTensorOp<cutlass__5x_cudnn::gemm::GemmShape<"
	  "32, 64, 16>, cutlass__5x_cudnn::gemm::GemmShape<16, 8, 8>, float, cutlass__5x_cudnn::Array"
	  "<float, 4, true>, cutlass__5x_cudnn::layout::RowMajor>, cutlass__5x_cudnn::epilogue::warp:"
	  ":TileIteratorTensorOp<cutlass__5x_cudnn::gemm::GemmShape<32, 64, 16>, cutlass__5x_cudnn::g"
	  "emm::GemmShape<16, 8, 8>, float, cutlass__5x_cudnn::layout::RowMajor>, cutlass__5x_cudnn::"
	  "epilogue::threadblock::SharedLoadIterator<cutlass__5x_cudnn::epilogue::threadblock::Output"
	  "TileOptimalThreadMap<cutlass__5x_cudnn::epilogue::threadblock::OutputTileShape<128, 8, 2, "
	  "1, 1>, cutlass__5x_cudnn::epilogue::threadblock::OutputTileShape<1, 4, 1, 1, 4>, 128, 4, 3"
	  "2>::CompactedThreadMap, float, 16>, cutlass__5x_cudnn::epilogue::thread::LinearCombination"
	  "<float, 4, float, float, (cutlass__5x_cudnn::epilogue::thread::ScaleType::Kind)0, (cutlass"
	  "__5x_cudnn::FloatRoundStyle)2>, cutlass__5x_cudnn::MatrixShape<0, 8>, 2, 1>, cutlass__5x_c"
	  "udnn::gemm::threadblock::GemmIdentityThreadblockSwizzle<4>, (cutlass__5x_cudnn::conv::Oper"
	  "ator)2, cutlass__5x_cudnn::conv::Conv2dProblemSize, (cutlass__5x_cudnn::conv::GroupMode)0>"
	  " >(cutlass__5x_cudnn::conv::kernel::ImplicitGemmConvolution<cutlass__5x_cudnn::conv::threa"
	  "dblock::ImplicitGemmMultistage<cutlass__5x_cudnn::gemm::GemmShape<64, 128, 16>, cutlass__5"
	  "x_cudnn::conv::threadblock::Conv2dWgradOutputGradientTileAccessIteratorOptimized<cutlass__"
	  "5x_cudnn::MatrixShape<64, 16>, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::transform"
	  "::PitchLinearWarpRakedThreadMap<cutlass__5x_cudnn::PitchLinearShape<64, 16>, 128, cutlass_"
	  "_5x_cudnn::PitchLinearShape<8, 4>, 4>, cutlass__5x_cudnn::AlignedArray<cutlass__5x_cudnn::"
	  "tfloat32_t, 4, 16> >, cutlass__5x_cudnn::transform::threadblock::RegularTileAccessIterator"
	  "<cutlass__5x_cudnn::MatrixShape<64, 16>, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn:"
	  ":layout::ColumnMajorTensorOpMultiplicandCongruous<32, 32>, 1, cutlass__5x_cudnn::transform"
	  "::PitchLinearWarpRakedThreadMap<cutlass__5x_cudnn::PitchLinearShape<64, 16>, 128, cutlass_"
	  "_5x_cudnn::PitchLinearShape<8, 4>, 4>, 16>, (cutlass__5x_cudnn::arch::CacheOperation::Kind"
	  ")0, cutlass__5x_cudnn::conv::threadblock::Conv2dWgradActivationTileAccessIteratorOptimized"
	  "<cutlass__5x_cudnn::MatrixShape<16, 128>, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn"
	  "::transform::PitchLinearWarpRakedThreadMap<cutlass__5x_cudnn::PitchLinearShape<128, 16>, 1"
	  "28, cutlass__5x_cudnn::PitchLinearShape<8, 4>, 4>, cutlass__5x_cudnn::AlignedArray<cutlass"
	  "__5x_cudnn::tfloat32_t, 4, 16> >, cutlass__5x_cudnn::transform::threadblock::RegularTileAc"
	  "cessIterator<cutlass__5x_cudnn::MatrixShape<16, 128>, cutlass__5x_cudnn::tfloat32_t, cutla"
	  "ss__5x_cudnn::layout::RowMajorTensorOpMultiplicandCongruous<32, 32>, 0, cutlass__5x_cudnn:"
	  ":transform::PitchLinearWarpRakedThreadMap<cutlass__5x_cudnn::PitchLinearShape<128, 16>, 12"
	  "8, cutlass__5x_cudnn::PitchLinearShape<8, 4>, 4>, 16>, (cutlass__5x_cudnn::arch::CacheOper"
	  "ation::Kind)0, cutlass__5x_cudnn::gemm::threadblock::MmaPolicy<cutlass__5x_cudnn::gemm::wa"
	  "rp::MmaTensorOp<cutlass__5x_cudnn::gemm::GemmShape<32, 64, 16>, cutlass__5x_cudnn::tfloat3"
	  "2_t, cutlass__5x_cudnn::layout::ColumnMajorTensorOpMultiplicandCongruous<32, 32>, cutlass_"
	  "_5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::RowMajorTensorOpMultiplicandCongruous<32"
	  ", 32>, float, cutlass__5x_cudnn::layout::RowMajor, cutlass__5x_cudnn::gemm::warp::MmaTenso"
	  "rOpPolicy<cutlass__5x_cudnn::arch::Mma<cutlass__5x_cudnn::gemm::GemmShape<16, 8, 8>, 32, c"
	  "utlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::RowMajor, cutlass__5x_cudnn::tflo"
	  "at32_t, cutlass__5x_cudnn::layout::ColumnMajor, float, cutlass__5x_cudnn::layout::RowMajor"
	  ", cutlass__5x_cudnn::arch::OpMultiplyAdd>, cutlass__5x_cudnn::MatrixShape<1, 1> >, 1, fals"
	  "e, bool>, cutlass__5x_cudnn::MatrixShape<0, 0>, cutlass__5x_cudnn::MatrixShape<0, 0>, 1>, "
	  "6, bool>, cutlass__5x_cudnn::epilogue::threadblock::Epilogue<cutlass__5x_cudnn::gemm::Gemm"
	  "Shape<64, 128, 16>, cutlass__5x_cudnn::gemm::warp::MmaTensorOp<cutlass__5x_cudnn::gemm::Ge"
	  "mmShape<32, 64, 16>, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::ColumnMajor"
	  "TensorOpMultiplicandCongruous<32, 32>, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::l"
	  "ayout::RowMajorTensorOpMultiplicandCongruous<32, 32>, float, cutlass__5x_cudnn::layout::Ro"
	  "wMajor, cutlass__5x_cudnn::gemm::warp::MmaTensorOpPolicy<cutlass__5x_cudnn::arch::Mma<cutl"
	  "ass__5x_cudnn::gemm::GemmShape<16, 8, 8>, 32, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_c"
	  "udnn::layout::RowMajor, cutlass__5x_cudnn::tfloat32_t, cutlass__5x_cudnn::layout::ColumnMa"
	  "jor, float, cutlass__5x_cudnn::layout::RowMajor, cutlass__5x_cudnn::arch::OpMultiplyAdd>, "
	  "cutlass__5x_cudnn::MatrixShape<1, 1> >, 1, false, bool>, 1, cutlass__5x_cudnn::epilogue::t"
	  "hreadblock::PredicatedTileIterator<cutlass__5x_cudnn::epilogue::threadblock::OutputTileOpt"
	  "imalThreadMap<cutlass__5x_cudnn::epilogue::threadblock::OutputTileShape<128, 8, 2, 1, 1>, "
	  "cutlass__5x_cudnn::epilogue::threadblock::OutputTileShape<1, 4, 1, 1, 4>, 128, 4, 32>, flo"
	  "at, false, cutlass__5x_cudnn::layout::NoPermute, false>, cutlass__5x_cudnn::epilogue::warp"
	  "::FragmentIteratorTensorOp<cutlass__5x_cudnn::gemm::GemmShape<32, 64, 16>, cutlass__5x_cud"
	  "nn::gemm::GemmShape<16, 8, 8>, float, cutlass__5x_cudnn::Array<float, 4, true>, cutlass__5"
	  "x_cudnn::layout::RowMajor>, cutlass__5x_cudnn::epilogue::warp::TileIteratorTensorOp<cutlas"
	  "s__5x_cudnn::gemm::GemmShape<32, 64, 16>, cutlass__5x_cudnn::gemm::GemmShape<16, 8, 8>, fl"
	  "oat, cutlass__5x_cudnn::layout::RowMajor>, cutlass__5x_cudnn::epilogue::threadblock::Share"
	  "dLoadIterator<cutlass__5x_cudnn::epilogue::threadblock::OutputTileOptimalThreadMap<cutlass"
	  "__5x_cudnn::epilogue::threadblock::OutputTileShape<128, 8, 2, 1, 1>, cutlass__5x_cudnn::ep"
	  "ilogue::threadblock::OutputTileShape<1, 4, 1, 1, 4>, 128, 4, 32>::CompactedThreadMap, floa"
	  "t, 16>, cutlass__5x_cudnn::epilogue::thread::LinearCombination<float, 4, float, float, (cu"
	  "tlass__5x_cudnn::epilogue::thread::ScaleType::Kind)0, (cutlass__5x_cudnn::FloatRoundStyle)"
	  "2>, cutlass__5x_cudnn::MatrixShape<0, 8>, 2, 1>, cutlass__5x_cudnn::gemm::threadblock::Gem"
	  "mIdentityThreadblockSwizzle<4>, (cutlass__5x_cudnn::conv::Operator)2, cutlass__5x_cudnn::c"
	  "onv::Conv2dProblemSize, (cutlass__5x_cudnn::conv::GroupMode)0>::Params)" },
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
	/*
	 * substitutions that use T_ are parsed again where used: each function type here names
	 * the previous one twice, so the work would double per parameter without the limits
	 */
	strcpy(buf, "_Z1fIiEvT_");
	for (i = 0; i < 200; i++) {
		char id[8];
		unsigned v = (unsigned)i, k = 0;	/* S<i>_: the previous F...E type */
		char tmp[8];

		do {
			tmp[k++] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[v % 36];
			v /= 36;
		} while (v);
		for (v = 0; v < k; v++)
			id[v] = tmp[k - 1 - v];
		id[k] = '\0';
		if (i == 0)
			strcat(buf, "FvS0_S0_E");
		else
			sprintf(buf + strlen(buf), "FvS%s_S%s_E", id, id);
	}
	xpu_demangle(buf, out, sizeof(out));
	passed++;
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
