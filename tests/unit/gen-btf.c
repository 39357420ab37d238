// SPDX-License-Identifier: GPL-2.0
/*
 * A small raw BTF standing in for /sys/kernel/btf/vmlinux in the tests of
 * targets by pattern (run.sh): one function of each type the tool must
 * tell apart.  Written with libbpf's BTF writer to the file given.
 *
 *   long vfs_read(int, void *, long, void *)
 *   int vfs_write(int)
 *   void vfs_void(void *)
 *   char vfs_char(void)          a return the hook cannot read
 *   int vfs_varargs(int, ...)    no bound on its stack arguments
 *   bool vfs_bool(void)
 *   void kfree(void *)
 */
#include <stdio.h>
#include <stdlib.h>

#include <bpf/btf.h>
#include <linux/btf.h>

static void check(int id)
{
	if (id < 0) {
		fprintf(stderr, "gen-btf: libbpf: %d\n", id);
		exit(1);
	}
}

/* A function returning @ret with @n arguments of @args; 0 in @args: ... */
static void func(struct btf *b, const char *name, int ret, int n,
		 const int *args)
{
	int proto = btf__add_func_proto(b, ret), i;

	check(proto);
	for (i = 0; i < n; i++)
		check(btf__add_func_param(b, args[i] ? "a" : "", args[i]));
	check(btf__add_func(b, name, BTF_FUNC_GLOBAL, proto));
}

int main(int argc, char **argv)
{
	struct btf *b = btf__new_empty();
	int i32, i64, u8, boolean, ptr, n;
	const void *raw;
	char name[16];
	__u32 size;
	FILE *f;

	if (argc != 2 || !b) {
		fprintf(stderr, "usage: gen-btf FILE\n");
		return 2;
	}
	check(i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED));
	check(i64 = btf__add_int(b, "long", 8, BTF_INT_SIGNED));
	check(u8 = btf__add_int(b, "char", 1, 0));
	check(boolean = btf__add_int(b, "_Bool", 1, BTF_INT_BOOL));
	check(ptr = btf__add_ptr(b, 0));
	func(b, "vfs_read", i64, 4, (int[]){ i32, ptr, i64, ptr });
	func(b, "vfs_write", i32, 1, (int[]){ i32 });
	func(b, "vfs_void", 0, 1, (int[]){ ptr });
	func(b, "vfs_char", u8, 0, NULL);
	func(b, "vfs_varargs", i32, 2, (int[]){ i32, 0 });
	func(b, "vfs_bool", boolean, 0, NULL);
	func(b, "kfree", 0, 1, (int[]){ ptr });
	/*
	 * many_01..many_70 in kallsyms: 65 typed, one of them twice, 4 with
	 * no BTF (as a compiler's .part copy) and one of variable
	 * arguments: no batch takes the last 6.
	 */
	for (n = 1; n <= 65; n++) {
		snprintf(name, sizeof(name), "many_%02d", n);
		func(b, name, i32, 1, (int[]){ ptr });
	}
	func(b, "many_70", i32, 2, (int[]){ i32, 0 });
	/* Two statics of one name in two files: the module knows neither. */
	func(b, "many_65", i32, 1, (int[]){ ptr });
	raw = btf__raw_data(b, &size);
	f = fopen(argv[1], "w");
	if (!raw || !f || fwrite(raw, 1, size, f) != size || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	btf__free(b);
	return 0;
}
