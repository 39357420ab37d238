/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_BTF_H
#define LBR_SNAP_BTF_H

#include <stdbool.h>
#include <stddef.h>

/* Whether lbr-snap was built with libbpf. */
extern const bool btf_built_in;

/*
 * Complete a target spec "sym[%type][/N][@hook]" from the kernel's BTF:
 * the return type when %type is missing, the argument count when /N is
 * missing and every argument travels in a register.  @out gets the spec,
 * completed as far as BTF allows (unchanged without BTF).  A note on what
 * BTF could not supply goes to @why (empty if none).
 * Return: 0, or -1 if @out is too small.
 */
int btf_complete_spec(const char *spec, char *out, size_t len, char *why,
		      size_t why_len);

/* What BTF says of one function's type. */
struct btf_func_info {
	int ret_type;		/* LBR_SNAP_RET_*, -1: none the hook reads */
	int nargs;		/* -1: not all in integer registers */
	bool variadic;
	/*
	 * Variable arguments, or a parameter over 16 bytes by value: the
	 * fexit trampoline cannot bound its stack words (the module's
	 * lbr_btf_stack_words()).
	 */
	bool stack_unbounded;
	/*
	 * vmlinux's BTF has more than one function of the name (statics of
	 * two files): the module knows no prototype for it.
	 */
	bool name_twice;
	char why[96];		/* why nargs is -1 */
};

/*
 * The type of function @name from the kernel's BTF (vmlinux's, else a
 * module's; under LBR_SNAP_ROOT if set).
 * Return: 0, or -1 if BTF has no such function (or there is no BTF).
 */
int btf_func_info(const char *name, struct btf_func_info *fi);

/* Whether vmlinux's BTF could be read (a function it lacks has none). */
bool btf_have_vmlinux(void);

#endif /* LBR_SNAP_BTF_H */
