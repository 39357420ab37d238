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
#include <stdlib.h>
#include <string.h>

#include "btf.h"
#include "lbr_snap.h"
#include "util.h"

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

/*
 * Every BTF of the kernel, vmlinux's first, then the modules' (split on
 * vmlinux's), read once and kept: a pattern looks up thousands of names.
 * Each has its FUNC names sorted, to be found by bsearch().
 */
struct btf_func_name {
	const char *name;
	int id;
};

struct btf_file {
	struct btf *btf;
	struct btf_func_name *funcs;
	size_t nr;
};

static struct {
	struct btf_file *files;		/* [0]: vmlinux */
	size_t nr;
} btfs;

static int cmp_func_name(const void *a, const void *b)
{
	return strcmp(((const struct btf_func_name *)a)->name,
		      ((const struct btf_func_name *)b)->name);
}

static void btf_index(struct btf *btf)
{
	int id, n = btf__type_cnt(btf);
	const struct btf_type *t;
	struct btf_file *f;

	btfs.files = xrealloc(btfs.files, (btfs.nr + 1) * sizeof(*btfs.files));
	f = &btfs.files[btfs.nr++];
	f->btf = btf;
	f->funcs = NULL;
	f->nr = 0;
	for (id = 1; id < n; id++) {
		t = btf__type_by_id(btf, id);
		if (!t || !btf_is_func(t))
			continue;
		/* A module's ids go on from vmlinux's: its own only. */
		if (btf__base_btf(btf) && id < (int)btf__type_cnt(btf__base_btf(btf)))
			continue;
		f->funcs = xrealloc(f->funcs, (f->nr + 1) * sizeof(*f->funcs));
		f->funcs[f->nr].name = btf__name_by_offset(btf, t->name_off);
		f->funcs[f->nr++].id = id;
	}
	qsort(f->funcs, f->nr, sizeof(*f->funcs), cmp_func_name);
}

/*
 * /sys/kernel/btf/vmlinux, then with @modules the modules' beside it,
 * under LBR_SNAP_ROOT if set (the tests' fake root).
 */
static void btf_load(bool modules)
{
	static bool vmlinux_done, modules_done;
	const char *root = getenv("LBR_SNAP_ROOT");
	char dir[4096], path[4096 + 256];
	struct dirent *de;
	struct btf *btf;
	DIR *d;

	libbpf_set_print(silent_print);
	snprintf(dir, sizeof(dir), "%s/sys/kernel/btf", root ? root : "");
	if (!vmlinux_done) {
		vmlinux_done = true;
		snprintf(path, sizeof(path), "%s/vmlinux", dir);
		btf = root ? btf__parse(path, NULL) : btf__load_vmlinux_btf();
		if (libbpf_get_error(btf))
			return;
		btf_index(btf);
	}
	if (!modules || modules_done || !btfs.nr)
		return;
	modules_done = true;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		btf = btf__parse_split(path, btfs.files[0].btf);
		if (!libbpf_get_error(btf))
			btf_index(btf);
	}
	closedir(d);
}

static struct btf *btf_lookup(const char *name, int *id)
{
	struct btf_func_name key = { .name = name }, *hit;
	size_t i;

	for (i = 0; i < btfs.nr; i++) {
		hit = bsearch(&key, btfs.files[i].funcs, btfs.files[i].nr,
			      sizeof(key), cmp_func_name);
		if (hit) {
			*id = hit->id;
			return btfs.files[i].btf;
		}
	}
	return NULL;
}

bool btf_have_vmlinux(void)
{
	btf_load(false);
	return btfs.nr > 0;
}

/* Whether vmlinux's BTF has more than one FUNC named @name. */
static bool btf_name_twice(const char *name)
{
	struct btf_func_name key = { .name = name }, *hit, *end;

	if (!btfs.nr)
		return false;
	hit = bsearch(&key, btfs.files[0].funcs, btfs.files[0].nr,
		      sizeof(key), cmp_func_name);
	if (!hit)
		return false;
	end = btfs.files[0].funcs + btfs.files[0].nr;
	return (hit > btfs.files[0].funcs && !cmp_func_name(hit - 1, &key)) ||
	       (hit + 1 < end && !cmp_func_name(hit + 1, &key));
}

/* The BTF holding FUNC @name: vmlinux's, else a module's (split BTF). */
static struct btf *btf_find(const char *name, int *id)
{
	struct btf *btf;

	btf_load(false);
	btf = btf_lookup(name, id);
	if (btf)
		return btf;
	btf_load(true);
	return btf_lookup(name, id);
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

/* As the module's lbr_btf_stack_words() says LBR_BTF_STACK_UNBOUNDED. */
static bool btf_stack_unbounded(const struct btf *btf,
				const struct btf_type *proto)
{
	const struct btf_param *p = btf_params(proto);
	const struct btf_type *t;
	int i, id;

	for (i = 0; i < btf_vlen(proto); i++) {
		if (!p[i].type)
			return true;
		id = btf__resolve_type(btf, p[i].type);
		t = id < 0 ? NULL : btf__type_by_id(btf, id);
		if (!t)
			return true;
		if ((btf_is_composite(t) || btf_is_int(t) || btf_is_float(t)) &&
		    (!t->size || t->size > 16))
			return true;
	}
	return false;
}

int btf_func_info(const char *name, struct btf_func_info *fi)
{
	const struct btf_type *fn, *proto;
	struct btf *btf;
	int id;

	fi->ret_type = -1;
	fi->nargs = -1;
	fi->why[0] = '\0';
	btf = btf_find(name, &id);
	fn = btf ? btf__type_by_id(btf, id) : NULL;
	proto = fn ? btf__type_by_id(btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return -1;
	fi->ret_type = btf_ret_type(btf, proto);
	fi->nargs = btf_reg_args(btf, proto, fi->why, sizeof(fi->why));
	fi->variadic = btf_vlen(proto) &&
		       !btf_params(proto)[btf_vlen(proto) - 1].type;
	fi->stack_unbounded = btf_stack_unbounded(btf, proto);
	fi->name_twice = btf_name_twice(name);
	return 0;
}

#else /* !HAVE_LIBBPF */

const bool btf_built_in;

int btf_complete_spec(const char *spec, char *out, size_t len, char *why,
		      size_t why_len)
{
	snprintf(why, why_len, "lbr-snap was built without libbpf");
	return (size_t)snprintf(out, len, "%s", spec) >= len ? -1 : 0;
}

bool btf_have_vmlinux(void)
{
	return false;
}

int btf_func_info(const char *name, struct btf_func_info *fi)
{
	(void)name;
	fi->ret_type = -1;
	fi->nargs = -1;
	fi->variadic = false;
	fi->stack_unbounded = false;
	fi->name_twice = false;
	snprintf(fi->why, sizeof(fi->why), "lbr-snap was built without libbpf");
	return -1;
}

#endif
