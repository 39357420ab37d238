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

#endif /* LBR_SNAP_BTF_H */
