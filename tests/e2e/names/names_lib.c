// SPDX-License-Identifier: MIT
/*
 * Built into a shared library that the test strips: hidden_spin then has no symbol at all,
 * and only its .eh_frame FDE says where it starts. trivial is called through the PLT.
 */
int trivial(int x)
{
	return x + 1;
}

__attribute__((noinline)) static unsigned long hidden_spin(unsigned long n)
{
	volatile unsigned long s = 0;
	unsigned long i;

	for (i = 0; i < n; i++) {
		s += i * 7;
		if (s % 5 == 3)
			s ^= i;
	}
	return s;
}

unsigned long stripped_entry(unsigned long n)
{
	return hidden_spin(n) + 1;
}
