// SPDX-License-Identifier: MIT
/* A binary whose symbols the synthetic trace points into (never run). */
__attribute__((noinline)) int leaf_work(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int middle(int x)
{
	return leaf_work(x) + 2;
}

/* a C++-mangled name, to exercise demangling from a symbol table */
__attribute__((noinline)) int cxx_method(int x) __asm__("_ZN3app6Solver4stepEi");
__attribute__((noinline)) int cxx_method(int x)
{
	return middle(x) - 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	return cxx_method(argc);
}
