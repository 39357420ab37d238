// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel's BTF says of a target function: its return type,
 * whether all its arguments travel in registers, and how many words of
 * stack arguments a call passes at most.
 *
 * The kernel's own BTF lookups (btf_find_by_name_kind(),
 * bpf_get_btf_vmlinux()) are not exported to modules, so this reads
 * /sys/kernel/btf/vmlinux, the raw BTF the kernel shows user space, from
 * a sysfs mount of its own
 * (Documentation/bpf/btf.rst), and walks it: a header, then types one
 * after another, each a struct btf_type and a tail whose size its kind
 * and vlen give.  Only vmlinux's functions: a module's BTF is split on
 * top of it, and the test target module has none.
 *
 * Nothing here is trusted blindly: every offset and size is checked
 * against the blob before it is used, a kind this file does not know
 * ends the walk (its tail size is unknown), and an answer only comes for
 * a name one FUNC has.  Whatever cannot be answered is "unknown", and the
 * callers keep their defaults.
 *
 * What it cannot know is which of two static functions of one name BTF
 * describes, when kallsyms has both and BTF one (pahole before 1.25 kept
 * the first it met; later ones drop a name whose prototypes differ in
 * their parameters' number or names, not their types), and modules are
 * given no way to count a name's symbols.  The kernel's own BPF fentry
 * and fexit trampolines are in the same place: they look the name up in
 * kallsyms and take the argument layout, the stack words they copy
 * included, from the same BTF (bpf_check_attach_target(),
 * btf_distill_func_proto(), arch_prepare_bpf_trampoline()).  lbr_snap
 * trusts BTF that far and no further.
 */
#include <uapi/linux/btf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "compat.h"
#include "lbr_snap.h"

/* Kinds newer than some kernels' headers: include/uapi/linux/btf.h. */
#define LBR_BTF_KIND_FLOAT	16
#define LBR_BTF_KIND_DECL_TAG	17
#define LBR_BTF_KIND_TYPE_TAG	18
#define LBR_BTF_KIND_ENUM64	19

#define LBR_BTF_PATH		"kernel/btf/vmlinux"	/* in sysfs */
/* vmlinux BTF is a few MiB; anything far bigger is not what we expect. */
#define LBR_BTF_MAX_SIZE	(64 << 20)
#define LBR_BTF_MAX_DEPTH	32	/* typedef/qualifier chains */
#define LBR_REG_ARGS		6	/* x86-64 argument registers */

struct lbr_btf {
	void *data;
	size_t size;
	const char *strs;
	u32 str_len;
	const u32 **types;	/* by id; [0] is void (NULL) */
	u32 nr_types;
	u32 *funcs;		/* FUNC ids by name, once lookups are many */
	u32 nr_funcs;
	u32 lookups;
};

/* The bytes of a kind's tail, or -1 for a kind not known here. */
static long lbr_btf_tail(const struct btf_type *t)
{
	u32 vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
		return sizeof(u32);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case LBR_BTF_KIND_FLOAT:
	case LBR_BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(u32);		/* struct btf_var */
	case BTF_KIND_DATASEC:
		return (long)vlen * 3 * sizeof(u32);	/* btf_var_secinfo */
	case LBR_BTF_KIND_DECL_TAG:
		return sizeof(u32);		/* struct btf_decl_tag */
	case LBR_BTF_KIND_ENUM64:
		return (long)vlen * 3 * sizeof(u32);	/* btf_enum64 */
	default:
		return -1;
	}
}

/*
 * The header up to the string section, all this file reads of it: a
 * vmlinux BTF's hdr_len.  struct btf_header grows (7.2's has a layout
 * section too, 32 bytes) while the kernel's own BTF keeps the short one.
 */
#define LBR_BTF_HDR_LEN		offsetofend(struct btf_header, str_len)

/*
 * Read the whole of sysfs's @path (relative to sysfs's root) into a
 * kvmalloc()ed buffer.  Through a mount of sysfs of the module's own, not
 * the caller's root: from a chroot or a container's mount namespace
 * /sys/kernel/btf/vmlinux may be missing, or be any file at all, and this
 * is what the kernel itself shows.  (sysfs is built in: get_fs_type() took
 * no module reference to give back.)
 */
static void *lbr_read_sysfs(const char *path, size_t *size)
{
	struct file_system_type *type = get_fs_type("sysfs");
	struct vfsmount *mnt;
	void *buf = NULL;
	struct file *f;
	loff_t len, pos = 0;
	ssize_t n;
	int ret;

	if (!type)
		return ERR_PTR(-ENODEV);
	mnt = kern_mount(type);
	if (IS_ERR(mnt))
		return ERR_CAST(mnt);
	f = lbr_file_open_root_mnt(mnt, path, O_RDONLY, 0);
	if (IS_ERR(f)) {
		ret = PTR_ERR(f);
		goto out;
	}
	len = i_size_read(file_inode(f));
	ret = -EFBIG;
	if (len <= (loff_t)LBR_BTF_HDR_LEN || len > LBR_BTF_MAX_SIZE)
		goto out_fput;
	ret = -ENOMEM;
	buf = kvmalloc(len, GFP_KERNEL | __GFP_NOWARN);
	if (!buf)
		goto out_fput;
	while (pos < len) {
		n = kernel_read(f, buf + pos, len - pos, &pos);
		if (n <= 0)
			break;
	}
	ret = pos == len ? 0 : -EIO;
out_fput:
	fput(f);
out:
	kern_unmount(mnt);
	if (ret) {
		kvfree(buf);
		return ERR_PTR(ret);
	}
	*size = len;
	return buf;
}

/*
 * Walk the type section from @p to @end: count the types, and when @idx is
 * given, note where each starts.  Every type must lie whole inside it.
 * Return: the number of types, or -EINVAL.
 */
static long lbr_btf_walk(const char *p, const char *end, const u32 **idx)
{
	long n = 0, tail;

	while (p < end) {
		const struct btf_type *t = (const struct btf_type *)p;

		if (end - p < (long)sizeof(*t))
			return -EINVAL;
		tail = lbr_btf_tail(t);
		if (tail < 0 || end - p - (long)sizeof(*t) < tail)
			return -EINVAL;
		if (idx)
			idx[n] = (const u32 *)p;
		n++;
		p += sizeof(*t) + tail;
	}
	return n;
}

/* Index the types of @b by id: two walks, a count and the index. */
static int lbr_btf_index(struct lbr_btf *b)
{
	const struct btf_header *h = b->data;
	const char *types, *end;
	const u32 **idx;
	long n;

	if (h->magic != BTF_MAGIC || h->version != BTF_VERSION ||
	    h->hdr_len < LBR_BTF_HDR_LEN || h->hdr_len > b->size ||
	    h->hdr_len % 4 || h->type_off % 4 || h->type_len % 4 ||
	    (u64)h->type_off + h->type_len > b->size - h->hdr_len ||
	    (u64)h->str_off + h->str_len > b->size - h->hdr_len ||
	    !h->str_len)
		return -EINVAL;
	types = (const char *)b->data + h->hdr_len + h->type_off;
	end = types + h->type_len;
	b->strs = (const char *)b->data + h->hdr_len + h->str_off;
	b->str_len = h->str_len;
	if (b->strs[0] || b->strs[b->str_len - 1])
		return -EINVAL;

	n = lbr_btf_walk(types, end, NULL);
	if (n < 0)
		return n;
	/* [0] is void. */
	idx = kvmalloc_array(n + 1, sizeof(*idx), GFP_KERNEL | __GFP_NOWARN);
	if (!idx)
		return -ENOMEM;
	idx[0] = NULL;
	lbr_btf_walk(types, end, idx + 1);
	b->types = idx;
	b->nr_types = n + 1;
	return 0;
}

/**
 * lbr_btf_open - vmlinux's BTF, read and indexed
 *
 * Process context.  Return: the BTF, or an ERR_PTR (-ENOENT without
 * CONFIG_DEBUG_INFO_BTF).
 */
struct lbr_btf *lbr_btf_open(void)
{
	struct lbr_btf *b = kzalloc(sizeof(*b), GFP_KERNEL);
	int ret;

	if (!b)
		return ERR_PTR(-ENOMEM);
	b->data = lbr_read_sysfs(LBR_BTF_PATH, &b->size);
	if (IS_ERR(b->data)) {
		ret = PTR_ERR(b->data);
		kfree(b);
		return ERR_PTR(ret);
	}
	ret = lbr_btf_index(b);
	if (ret) {
		kvfree(b->data);
		kfree(b);
		return ERR_PTR(ret);
	}
	return b;
}

void lbr_btf_close(struct lbr_btf *b)
{
	if (IS_ERR_OR_NULL(b))
		return;
	kvfree(b->funcs);
	kvfree(b->types);
	kvfree(b->data);
	kfree(b);
}

static const struct btf_type *lbr_btf_type(const struct lbr_btf *b, u32 id)
{
	return id && id < b->nr_types ?
	       (const struct btf_type *)b->types[id] : NULL;
}

static const char *lbr_btf_name(const struct lbr_btf *b, u32 off)
{
	return off < b->str_len ? b->strs + off : "";
}

/* @id with typedefs and qualifiers skipped; NULL for void or a loop. */
static const struct btf_type *lbr_btf_resolve(const struct lbr_btf *b, u32 id)
{
	const struct btf_type *t;
	int depth;

	for (depth = 0; depth < LBR_BTF_MAX_DEPTH; depth++) {
		t = lbr_btf_type(b, id);
		if (!t)
			return NULL;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case LBR_BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			return t;
		}
	}
	return NULL;
}

/* The INT's encoding bits (BTF_INT_ENCODING), after its btf_type. */
static u32 lbr_btf_int_encoding(const struct btf_type *t)
{
	return BTF_INT_ENCODING(*(const u32 *)(t + 1));
}

/* An integer, enum or pointer of at most 8 bytes: one register. */
static bool lbr_btf_scalar(const struct btf_type *t)
{
	switch (t ? BTF_INFO_KIND(t->info) : 0) {
	case BTF_KIND_PTR:
		return true;
	case BTF_KIND_INT:
	case BTF_KIND_ENUM:
	case LBR_BTF_KIND_ENUM64:
		return t->size && t->size <= 8;
	default:
		return false;
	}
}

static int lbr_btf_ret(const struct lbr_btf *b, u32 id)
{
	const struct btf_type *t;

	if (!id)
		return LBR_BTF_RET_VOID;
	t = lbr_btf_resolve(b, id);
	if (!lbr_btf_scalar(t))
		return LBR_BTF_RET_UNKNOWN;
	if (BTF_INFO_KIND(t->info) == BTF_KIND_PTR)
		return LBR_SNAP_RET_PTR;
	if (BTF_INFO_KIND(t->info) == BTF_KIND_INT &&
	    (lbr_btf_int_encoding(t) & BTF_INT_BOOL))
		return LBR_SNAP_RET_BOOL;
	/* Below 32 bits the rest of EAX is undefined (x86-64 psABI). */
	if (t->size < 4)
		return LBR_BTF_RET_UNKNOWN;
	return t->size > 4 ? LBR_SNAP_RET_LONG : LBR_SNAP_RET_INT;
}

/*
 * The 8-byte words of stack arguments a call of @proto passes at most
 * (x86-64 psABI, 3.2.3), or LBR_BTF_STACK_UNBOUNDED: variable arguments,
 * a struct or union over 16 bytes by value (which the kernel's own BPF
 * trampolines refuse too, btf_distill_func_proto()), a kind not known here.
 *
 * A bound, not the exact count, where the psABI's choice needs more than
 * BTF says: a struct or union of up to 16 bytes goes in registers or on
 * the stack depending on its fields' classes and alignment, so it is
 * counted on the stack, with a word of padding for a 16-byte one, and
 * leaves the registers to later arguments.  In the registers it would take
 * as many as it has words, pushing at most as many later words to the
 * stack: the count is never below the truth.  The same for a 16-byte
 * integer and a float.
 */
static int lbr_btf_stack_words(const struct lbr_btf *b,
			       const struct btf_type *proto)
{
	const struct btf_param *p = (const struct btf_param *)(proto + 1);
	u32 i, vlen = BTF_INFO_VLEN(proto->info);
	int regs = LBR_REG_ARGS, words = 0;
	const struct btf_type *t;

	/*
	 * A return in memory takes RDI for its address: any struct or union
	 * may be one (a packed or 16-byte-aligned one of 16 bytes or less
	 * too), so each is counted as one.
	 */
	if (proto->type) {
		t = lbr_btf_resolve(b, proto->type);
		if (!t)
			return LBR_BTF_STACK_UNBOUNDED;
		if (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT ||
		    BTF_INFO_KIND(t->info) == BTF_KIND_UNION)
			regs--;
	}
	for (i = 0; i < vlen; i++) {
		/* Type 0 as the last parameter: variable arguments. */
		t = p[i].type ? lbr_btf_resolve(b, p[i].type) : NULL;
		if (!t)
			return LBR_BTF_STACK_UNBOUNDED;
		if (lbr_btf_scalar(t)) {
			if (regs)
				regs--;
			else
				words++;
			continue;
		}
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_INT:
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
		case LBR_BTF_KIND_FLOAT:
			if (!t->size || t->size > 16)
				return LBR_BTF_STACK_UNBOUNDED;
			words += DIV_ROUND_UP(t->size, 8) + (t->size > 8);
			break;
		default:
			return LBR_BTF_STACK_UNBOUNDED;
		}
	}
	return words;
}

static int lbr_btf_func_cmp(const void *a, const void *b,
			    const void *priv)
{
	const struct lbr_btf *btf = priv;

	return strcmp(lbr_btf_name(btf, lbr_btf_type(btf, *(const u32 *)a)->name_off),
		      lbr_btf_name(btf, lbr_btf_type(btf, *(const u32 *)b)->name_off));
}

/*
 * Index @b's FUNCs by name: a batch looks up thousands of names, each a
 * walk of every type without it.  Without the memory, the walks stay.
 */
static void lbr_btf_index_funcs(struct lbr_btf *b)
{
	u32 id, n = 0;

	for (id = 1; id < b->nr_types; id++)
		n += BTF_INFO_KIND(lbr_btf_type(b, id)->info) == BTF_KIND_FUNC;
	b->funcs = kvmalloc_array(n ?: 1, sizeof(*b->funcs),
				  GFP_KERNEL | __GFP_NOWARN);
	if (!b->funcs)
		return;
	for (id = 1; id < b->nr_types; id++)
		if (BTF_INFO_KIND(lbr_btf_type(b, id)->info) == BTF_KIND_FUNC)
			b->funcs[b->nr_funcs++] = id;
	sort_r(b->funcs, b->nr_funcs, sizeof(*b->funcs), lbr_btf_func_cmp,
	       NULL, b);
}

/* The FUNC named @name: 0 if none, -ENOTUNIQ for more than one. */
static long lbr_btf_find_func(struct lbr_btf *b, const char *name)
{
	u32 lo = 0, hi, id, found = 0;
	int c;

	if (!b->funcs && ++b->lookups > 8)
		lbr_btf_index_funcs(b);
	if (!b->funcs) {
		for (id = 1; id < b->nr_types; id++) {
			const struct btf_type *t = lbr_btf_type(b, id);

			if (BTF_INFO_KIND(t->info) != BTF_KIND_FUNC ||
			    strcmp(lbr_btf_name(b, t->name_off), name))
				continue;
			if (found)
				return -ENOTUNIQ;
			found = id;
		}
		return found;
	}
	hi = b->nr_funcs;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		c = strcmp(lbr_btf_name(b, lbr_btf_type(b, b->funcs[mid])->name_off),
			   name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= b->nr_funcs ||
	    strcmp(lbr_btf_name(b, lbr_btf_type(b, b->funcs[lo])->name_off), name))
		return 0;
	if (lo + 1 < b->nr_funcs &&
	    !strcmp(lbr_btf_name(b, lbr_btf_type(b, b->funcs[lo + 1])->name_off),
		    name))
		return -ENOTUNIQ;
	return b->funcs[lo];
}

/**
 * lbr_btf_func - what BTF says of the function @name
 * @b: from lbr_btf_open()
 * @name: the function
 * @fi: the answer; on failure its fields say "unknown"
 *
 * Return: 0, -ENOENT when no FUNC has that name, -ENOTUNIQ when more
 * than one does.
 */
int lbr_btf_func(struct lbr_btf *b, const char *name,
		 struct lbr_btf_func *fi)
{
	const struct btf_type *fn, *proto;
	const struct btf_param *p;
	long id = lbr_btf_find_func(b, name);
	u32 i, vlen;

	fi->ret_type = LBR_BTF_RET_UNKNOWN;
	fi->nargs = -1;
	fi->stack_words = LBR_BTF_STACK_UNKNOWN;
	if (id < 0)
		return id;
	if (!id)
		return -ENOENT;
	fn = lbr_btf_type(b, id);
	proto = lbr_btf_type(b, fn->type);
	if (!proto || BTF_INFO_KIND(proto->info) != BTF_KIND_FUNC_PROTO)
		return 0;
	fi->ret_type = lbr_btf_ret(b, proto->type);
	fi->stack_words = lbr_btf_stack_words(b, proto);
	/*
	 * A return in memory (a struct or union over 16 bytes) takes RDI
	 * for its address, moving an argument to the stack: only scalar or
	 * void returns are counted on.
	 */
	if (proto->type && !lbr_btf_scalar(lbr_btf_resolve(b, proto->type)))
		return 0;
	vlen = BTF_INFO_VLEN(proto->info);
	p = (const struct btf_param *)(proto + 1);
	if (vlen > LBR_REG_ARGS)
		return 0;
	for (i = 0; i < vlen; i++) {
		/* Type 0 as the last parameter: variable arguments. */
		if (!p[i].type || !lbr_btf_scalar(lbr_btf_resolve(b, p[i].type)))
			return 0;
	}
	fi->nargs = vlen;
	return 0;
}
