// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: source file:line and inlined frames of kernel addresses, from
 * the DWARF of vmlinux and of the loaded modules' .ko files, with elfutils'
 * libdwfl.  Built only with HAVE_LIBDW; without it nothing is found.
 *
 * vmlinux (-k PATH, else the first of /boot/vmlinux-RELEASE,
 * /lib/modules/RELEASE/build/vmlinux, /usr/lib/debug/boot/vmlinux-RELEASE,
 * /usr/lib/debug/lib/modules/RELEASE/vmlinux) is reported at its link
 * addresses; a runtime address is moved back by the KASLR offset, _text in
 * kallsyms minus _text in the ELF.  Modules are reported the way
 * eu-addr2line -k does: /proc/modules, the .ko found under
 * /lib/modules/RELEASE, its sections placed at the addresses
 * /sys/module/MOD/sections/ gives (so root is needed).
 *
 * A lookup with inlined frames walks the scopes of a compilation unit, far
 * too slow to do for every entry of a burst: the results for recent
 * addresses are kept in a direct-mapped cache (the strings they point to
 * live as long as the Dwfl).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ksym.h"
#include "srcline.h"
#include "util.h"

#ifdef HAVE_LIBDW
const bool srclines_built_in = true;
#else
const bool srclines_built_in;
#endif

#ifdef HAVE_LIBDW
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#define LOC_CACHE_BITS	12		/* 4096 entries of 224 bytes */

struct loc_cache_ent {
	unsigned long long addr;
	bool used;
	bool found;
	struct srcloc loc;
};

struct srclines {
	Dwfl *dwfl;
	Dwfl_Module *kernel;		/* NULL: no vmlinux */
	unsigned long long kernel_off;	/* runtime minus link address */
	struct loc_cache_ent *cache;	/* 1 << LOC_CACHE_BITS entries */
};

static char *debuginfo_path;

static const char *ko_name;	/* nftw() callbacks take no argument */
static char ko_path[PATH_MAX];

/* Module names use '_' where file names may use '-'. */
static bool same_mod_name(const char *file, const char *mod)
{
	for (; *mod; file++, mod++)
		if (*file != *mod && !(*file == '-' && *mod == '_'))
			return false;
	return !strcmp(file, ".ko");
}

static int match_ko(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)st;
	if (type != FTW_F || !same_mod_name(path + ftw->base, ko_name))
		return 0;
	snprintf(ko_path, sizeof(ko_path), "%s", path);
	return 1;
}

/*
 * Dwfl_Callbacks.find_elf for modules: MOD.ko anywhere under
 * /lib/modules/RELEASE (uncompressed only).  libdwfl's own
 * dwfl_linux_kernel_find_elf() gives up when the build ID that
 * /sys/module/MOD/notes gives is not in a .build-id directory.
 */
static int find_module_elf(Dwfl_Module *mod, void **userdata,
			   const char *name, Dwarf_Addr base,
			   char **file_name, Elf **elfp)
{
	char dir[PATH_MAX];
	struct utsname u;

	(void)mod;
	(void)userdata;
	(void)base;
	(void)elfp;
	if (uname(&u))
		return -1;
	snprintf(dir, sizeof(dir), "/lib/modules/%s", u.release);
	ko_name = name;
	if (nftw(dir, match_ko, 16, FTW_PHYS) != 1)
		return -1;
	*file_name = strdup(ko_path);
	return open(ko_path, O_RDONLY | O_CLOEXEC);
}

/*
 * Dwfl_Callbacks.section_address: where /sys/module/MOD/sections/ says a
 * module's section is.  A section it does not list (freed .init ones,
 * sections the kernel does not show) is "not loaded", (Dwarf_Addr)-1,
 * rather than an error, which libdwfl's own callback makes of some and
 * which then fails the relocation of the whole DWARF.
 */
static int section_address(Dwfl_Module *mod, void **userdata,
			   const char *modname, Dwarf_Addr base,
			   const char *secname, GElf_Word shndx,
			   const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	unsigned long long a;
	char path[PATH_MAX];
	FILE *f;

	(void)mod;
	(void)userdata;
	(void)base;
	(void)shndx;
	(void)shdr;
	*addr = (Dwarf_Addr)-1;
	snprintf(path, sizeof(path), "/sys/module/%s/sections/%s", modname,
		 secname);
	f = fopen(path, "r");
	if (!f)
		return DWARF_CB_OK;
	if (fscanf(f, "%llx", &a) == 1)
		*addr = a;
	fclose(f);
	return DWARF_CB_OK;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_module_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The first vmlinux candidate that exists, in @buf; NULL if none. */
static const char *find_vmlinux(char *buf, size_t len)
{
	static const char *const fmt[] = {
		"/boot/vmlinux-%s",
		"/lib/modules/%s/build/vmlinux",
		"/usr/lib/debug/boot/vmlinux-%s",
		"/usr/lib/debug/lib/modules/%s/vmlinux",
	};
	struct utsname u;
	size_t i;

	if (uname(&u))
		return NULL;
	for (i = 0; i < ARRAY_SIZE(fmt); i++) {
		snprintf(buf, len, fmt[i], u.release);
		if (!access(buf, R_OK))
			return buf;
	}
	return NULL;
}

/* st_value of the ELF symbol @name in @mod, or 0. */
static unsigned long long elf_sym(Dwfl_Module *mod, const char *name)
{
	int i, n = dwfl_module_getsymtab(mod);
	GElf_Addr addr;
	GElf_Sym sym;
	const char *s;

	for (i = 1; i < n; i++) {
		s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL,
					    NULL);
		if (s && !strcmp(s, name))
			return sym.st_value;
	}
	return 0;
}

static void report_kernel(struct srclines *sl, const char *vmlinux,
			  const struct ksyms *ks)
{
	unsigned long long text;
	char buf[512];

	if (!vmlinux)
		vmlinux = find_vmlinux(buf, sizeof(buf));
	if (!vmlinux)
		return;
	sl->kernel = dwfl_report_offline(sl->dwfl, "kernel", vmlinux, -1);
	if (!sl->kernel)
		return;
	text = elf_sym(sl->kernel, "_text");
	if (!text || !ks->text_addr) {
		sl->kernel = NULL;
		return;
	}
	sl->kernel_off = ks->text_addr - text;
}

/* Open the debug info for @ks's kernel; NULL if there is none at all. */
struct srclines *srclines_open(const char *vmlinux, const struct ksyms *ks)
{
	struct srclines *sl = calloc(1, sizeof(*sl));

	if (!sl)
		return NULL;
	sl->cache = calloc(1u << LOC_CACHE_BITS, sizeof(*sl->cache));
	sl->dwfl = sl->cache ? dwfl_begin(&callbacks) : NULL;
	if (!sl->dwfl) {
		free(sl->cache);
		free(sl);
		return NULL;
	}
	dwfl_report_begin(sl->dwfl);
	report_kernel(sl, vmlinux, ks);
	dwfl_linux_kernel_report_modules(sl->dwfl);
	dwfl_report_end(sl->dwfl, NULL, NULL);
	return sl;
}

static const char *call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nr;

	if (!dwarf_attr(die, DW_AT_call_file, &attr) ||
	    dwarf_formudata(&attr, &idx) || dwarf_getsrcfiles(cu, &files, &nr) ||
	    idx >= nr)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static void add_inline(Dwarf_Die *cu, Dwarf_Die *die, struct srcloc *loc)
{
	struct src_inline *in = &loc->inl[loc->nr_inline++];
	Dwarf_Attribute attr;
	Dwarf_Word line = 0;

	in->func = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name,
							 &attr));
	in->call_file = call_file(cu, die);
	if (dwarf_attr(die, DW_AT_call_line, &attr))
		dwarf_formudata(&attr, &line);
	in->call_line = line;
}

static void find_inlines(Dwfl_Module *m, Dwarf_Addr a, struct srcloc *loc)
{
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Addr bias;
	int i, n;

	cu = dwfl_module_addrdie(m, a, &bias);
	if (!cu)
		return;
	n = dwarf_getscopes(cu, a - bias, &scopes);
	for (i = 0; i < n && loc->nr_inline < SRC_MAX_INLINE; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
			add_inline(cu, &scopes[i], loc);
	free(scopes);
}

/* srclines_lookup() without the cache; @loc is zeroed. */
static bool lookup(const struct srclines *sl, const struct ksyms *ks,
		   unsigned long long addr, struct srcloc *loc)
{
	Dwarf_Addr a = addr;
	Dwfl_Module *m;
	Dwfl_Line *l;

	if (!ksyms_in_module(ks, addr)) {
		if (!sl->kernel)
			return false;
		a = addr - sl->kernel_off;
	}
	m = dwfl_addrmodule(sl->dwfl, a);
	l = m ? dwfl_module_getsrc(m, a) : NULL;
	if (!l)
		return false;
	loc->file = dwfl_lineinfo(l, NULL, &loc->line, NULL, NULL, NULL);
	if (!loc->file)
		return false;
	find_inlines(m, a, loc);
	return true;
}

/* Where @addr (a runtime address) is in the source; false if unknown. */
bool srclines_lookup(const struct srclines *sl, const struct ksyms *ks,
		     unsigned long long addr, struct srcloc *loc)
{
	struct loc_cache_ent *e;

	memset(loc, 0, sizeof(*loc));
	if (!sl)
		return false;
	e = &sl->cache[(addr * 0x9e3779b97f4a7c15ull) >> (64 - LOC_CACHE_BITS)];
	if (!e->used || e->addr != addr) {
		e->used = true;
		e->addr = addr;
		memset(&e->loc, 0, sizeof(e->loc));
		e->found = lookup(sl, ks, addr, &e->loc);
	}
	*loc = e->loc;
	return e->found;
}

void srclines_close(struct srclines *sl)
{
	if (!sl)
		return;
	dwfl_end(sl->dwfl);
	free(sl->cache);
	free(sl);
}

/*
 * No debuginfod: these stand in for libdw.a's debuginfod-client.o, which
 * would dlopen() libdebuginfod, something a static binary cannot do safely
 * (and the linker warns about).  Signatures as in elfutils 0.188's
 * libdwfl/debuginfod-client.c; -1 and NULL mean "not found".
 */
int __libdwfl_debuginfod_find_executable(Dwfl *dwfl,
					 const unsigned char *id, size_t len);
int __libdwfl_debuginfod_find_debuginfo(Dwfl *dwfl,
					const unsigned char *id, size_t len);
void __libdwfl_debuginfod_end(debuginfod_client *client);

int __libdwfl_debuginfod_find_executable(Dwfl *dwfl,
					 const unsigned char *id, size_t len)
{
	(void)dwfl;
	(void)id;
	(void)len;
	return -1;
}

int __libdwfl_debuginfod_find_debuginfo(Dwfl *dwfl,
					const unsigned char *id, size_t len)
{
	(void)dwfl;
	(void)id;
	(void)len;
	return -1;
}

void __libdwfl_debuginfod_end(debuginfod_client *client)
{
	(void)client;
}

debuginfod_client *dwfl_get_debuginfod_client(Dwfl *dwfl)
{
	(void)dwfl;
	return NULL;
}

#else /* !HAVE_LIBDW */

struct srclines *srclines_open(const char *vmlinux, const struct ksyms *ks)
{
	(void)vmlinux;
	(void)ks;
	return NULL;
}

bool srclines_lookup(const struct srclines *sl, const struct ksyms *ks,
		     unsigned long long addr, struct srcloc *loc)
{
	(void)sl;
	(void)ks;
	(void)addr;
	memset(loc, 0, sizeof(*loc));
	return false;
}

void srclines_close(struct srclines *sl)
{
	(void)sl;
}

#endif /* HAVE_LIBDW */
