// SPDX-License-Identifier: GPL-2.0
/*
 * Target specs from BTF: the return type and the number of arguments
 * (informative: no hook needs it), read with libbpf from
 * /sys/kernel/btf/vmlinux and the modules' /sys/kernel/btf/MODULE.  Built
 * without libbpf, specs are passed on as given.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "btf.h"
#include "lbr_snap.h"

/* The x86-64 argument registers: more arguments go on the stack. */
#define REG_ARGS	6

#ifdef HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/btf.h>

const bool btf_built_in = true;

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The BTF holding FUNC @name: vmlinux's, else a module's (split BTF). */
static struct btf *btf_find(const char *name, int *id)
{
	static struct btf *vmlinux;
	struct dirent *de;
	struct btf *mod;
	DIR *dir;

	libbpf_set_print(silent_print);
	if (!vmlinux)
		vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux || libbpf_get_error(vmlinux)) {
		vmlinux = NULL;
		return NULL;
	}
	*id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC);
	if (*id > 0)
		return vmlinux;
	dir = opendir("/sys/kernel/btf");
	if (!dir)
		return NULL;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		mod = btf__load_module_btf(de->d_name, vmlinux);
		if (!mod || libbpf_get_error(mod))
			continue;
		*id = btf__find_by_name_kind(mod, name, BTF_KIND_FUNC);
		if (*id > 0) {
			closedir(dir);
			return mod;	/* kept: a process adds few targets */
		}
		btf__free(mod);
	}
	closedir(dir);
	return NULL;
}

/* Skip typedefs and qualifiers. */
static const struct btf_type *btf_resolved(const struct btf *btf, int id)
{
	id = btf__resolve_type(btf, id);
	return id < 0 ? NULL : btf__type_by_id(btf, id);
}

/*
 * The lbr_snap return type of FUNC_PROTO @proto, -1 if none fits: as the
 * module takes it from BTF (src/btf_func.c), below 32 bits too, where
 * the rest of EAX is undefined.
 */
static int btf_ret_type(const struct btf *btf, const struct btf_type *proto)
{
	const struct btf_type *t;

	if (!proto->type)
		return LBR_SNAP_RET_VOID;
	t = btf_resolved(btf, proto->type);
	if (!t)
		return -1;
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		return LBR_SNAP_RET_PTR;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		if (t->size < 4 || t->size > 8)
			return -1;
		return t->size > 4 ? LBR_SNAP_RET_LONG : LBR_SNAP_RET_INT;
	case BTF_KIND_INT:
		if (btf_int_encoding(t) & BTF_INT_BOOL)
			return LBR_SNAP_RET_BOOL;
		if (t->size < 4 || t->size > 8)
			return -1;
		return t->size > 4 ? LBR_SNAP_RET_LONG : LBR_SNAP_RET_INT;
	default:
		return -1;
	}
}

/*
 * The number of arguments if each fits one integer register, else -1
 * with the reason in @why.
 */
static int btf_reg_args(const struct btf *btf, const struct btf_type *proto,
			char *why, size_t why_len)
{
	const struct btf_param *p = btf_params(proto);
	int i, n = btf_vlen(proto);
	const struct btf_type *t;

	for (i = 0; i < n; i++) {
		if (!p[i].type) {
			snprintf(why, why_len, "takes variable arguments");
			return -1;
		}
		t = btf_resolved(btf, p[i].type);
		if (!t)
			return -1;
		switch (btf_kind(t)) {
		case BTF_KIND_PTR:
			continue;
		case BTF_KIND_INT:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
			if (t->size <= 8)
				continue;
			/* fall through */
		default:
			snprintf(why, why_len,
				 "argument %d is not an integer or a pointer",
				 i + 1);
			return -1;
		}
	}
	if (n > REG_ARGS) {
		snprintf(why, why_len, "%d arguments: some travel on the stack",
			 n);
		return -1;
	}
	return n;
}

static const char *const ret_names[] = {
	[LBR_SNAP_RET_INT] = "int", [LBR_SNAP_RET_LONG] = "long",
	[LBR_SNAP_RET_PTR] = "ptr", [LBR_SNAP_RET_BOOL] = "bool",
	[LBR_SNAP_RET_VOID] = "void",
};

int btf_complete_spec(const char *full, char *out, size_t len, char *why,
		      size_t why_len)
{
	char name[LBR_SNAP_NAME_LEN], type[16] = "", nargs[16] = "";
	char spec[sizeof(((struct lbr_snap_target_ctl *)0)->spec)];
	/* An errno list (=-ERR,...) stays at the end, as it is. */
	const char *eq = strchr(full, '='), *errs = eq ? eq : "";
	size_t blen = eq ? (size_t)(eq - full) : strlen(full);
	const char *hook;
	const struct btf_type *fn, *proto;
	size_t nlen;
	bool has_type, has_n;
	struct btf *btf;
	int id, rt, n;

	why[0] = '\0';
	if (blen >= sizeof(spec))
		goto as_given;
	memcpy(spec, full, blen);
	spec[blen] = '\0';
	hook = strchr(spec, '@');
	nlen = strcspn(spec, "%/@");
	has_type = strchr(spec, '%');
	has_n = strchr(spec, '/');
	if (nlen >= sizeof(name) || (has_type && has_n))
		goto as_given;
	memcpy(name, spec, nlen);
	name[nlen] = '\0';
	btf = btf_find(name, &id);
	if (!btf) {
		snprintf(why, why_len, "no BTF for %s", name);
		goto as_given;
	}
	fn = btf__type_by_id(btf, id);
	proto = fn ? btf__type_by_id(btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		goto as_given;
	if (!has_type) {
		rt = btf_ret_type(btf, proto);
		if (rt >= 0)
			snprintf(type, sizeof(type), "%%%s", ret_names[rt]);
	}
	if (!has_n) {
		n = btf_reg_args(btf, proto, why, why_len);
		if (n >= 0)
			snprintf(nargs, sizeof(nargs), "/%d", n);
	}
	/* Keep the user's own %type and /N where they gave them. */
	if ((size_t)snprintf(out, len, "%.*s%s%.*s%s%s%s", (int)nlen, spec,
			     has_type ? "" : type,
			     (int)(strcspn(spec + nlen, "@")), spec + nlen,
			     nargs, hook ? hook : "", errs) >= len)
		return -1;
	return 0;

as_given:
	return (size_t)snprintf(out, len, "%s", full) >= len ? -1 : 0;
}

#else /* !HAVE_LIBBPF */

const bool btf_built_in;

int btf_complete_spec(const char *spec, char *out, size_t len, char *why,
		      size_t why_len)
{
	snprintf(why, why_len, "lbr-snap was built without libbpf");
	return (size_t)snprintf(out, len, "%s", spec) >= len ? -1 : 0;
}

#endif
