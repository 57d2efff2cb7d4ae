/* SPDX-License-Identifier: MIT */
/*
 * void cfiexpr_call(void (*fn)(unsigned long), unsigned long arg): calls fn(arg) from a frame
 * whose CFA only a DWARF expression gives (DW_CFA_def_cfa_expression), a rule the walk in BPF
 * does not evaluate and libdw does, and whose 17 zeroed words keep a scan of the next 8 stack
 * words from finding the return address. So every walk in BPF through it falls short, and
 * tests/e2e/test_cfi.sh checks that the default mode's stack copies complete them.
 */
	.text
	.globl	cfiexpr_call
	.type	cfiexpr_call, @function
cfiexpr_call:
	.cfi_startproc
	subq	$136, %rsp
	/* DW_CFA_def_cfa_expression, 3 bytes: DW_OP_breg7 (rsp) + 144 (sleb128 0x90 0x01) */
	.cfi_escape 0x0f, 0x03, 0x77, 0x90, 0x01
	.irp	off, 0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128
	movq	$0, \off(%rsp)
	.endr
	movq	%rdi, %rax
	movq	%rsi, %rdi
	call	*%rax
	addq	$136, %rsp
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc
	.size	cfiexpr_call, .-cfiexpr_call
	.section .note.GNU-stack, "", @progbits
