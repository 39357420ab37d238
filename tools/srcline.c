// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: source file:line and inlined frames of kernel addresses, from
 * the DWARF of vmlinux and of the loaded modules' .ko files, with elfutils'
 * libdwfl.  Built only with HAVE_LIBDW; without it nothing is found.
 *
 * vmlinux (-k PATH, else the first usable of /boot/vmlinux-RELEASE,
 * /lib/modules/RELEASE/build/vmlinux, /usr/lib/debug/boot/vmlinux-RELEASE,
 * /usr/lib/debug/lib/modules/RELEASE/vmlinux) is reported at its link
 * addresses; a runtime address is moved back by the KASLR offset, _text in
 * kallsyms minus _text in the ELF.  Modules are reported the way
 * eu-addr2line -k does: /proc/modules, the MOD.ko found under
 * /usr/lib/debug/lib/modules/RELEASE (Debian's -dbg packages), else
 * /lib/modules/RELEASE (.ko, then .ko.xz, .ko.zst, .ko.gz: libdwfl
 * decompresses xz and gzip, unzstd() zstd), its sections placed at the addresses
 * /sys/module/MOD/sections/ gives (so root is needed).
 *
 * LBR_SNAP_ROOT=DIR puts DIR before every one of these paths (the tests'
 * fake root; /proc/modules and /sys/module are read there too only for
 * -v's list); -v says on stderr which files were used, or where it looked.
 *
 * A lookup with inlined frames walks the scopes of a compilation unit, far
 * too slow to do for every entry of a burst: the results for recent
 * addresses are kept in a direct-mapped cache (the strings they point to
 * live as long as the Dwfl).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
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

bool srclines_verbose;
/*
 * Replaying a recording (-i): this machine's modules, release and
 * debug files are not the recorded ones, so lines come from -k alone.
 */
bool srclines_replay;

bool srclines_wanted(void)
{
	return getenv("LBR_SNAP_ROOT");
}

/* With -v: "lbr-snap: MESSAGE" on stderr. */
__printf(1, 2) static void verbose(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;

	if (!srclines_verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pr_err("%s", buf);
}

#ifdef HAVE_LIBDW
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sys/mman.h>
#include <zstd.h>

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
	char kernel_path[PATH_MAX];
	struct loc_cache_ent *cache;	/* 1 << LOC_CACHE_BITS entries */
};

static char *debuginfo_path;

/* Where modules' files are looked for, best first, under LBR_SNAP_ROOT. */
static const char *const ko_dirs[] = {
	"/usr/lib/debug/lib/modules/%s",	/* Debian's linux-image-*-dbg */
	"/lib/modules/%s",
};
static const char *const ko_exts[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };

/* A module file found under ko_dirs[dir], its name ending in ko_exts[ext]. */
struct ko_file {
	char *mod;		/* module name: '-' read as '_' */
	char *path;
	unsigned int dir, ext;
};

static struct {
	bool done;
	unsigned int dir;		/* nftw() callbacks take no argument */
	struct ko_file *files;
	size_t nr, cap;
} ko_index;

static void add_ko(const char *path, const char *base, unsigned int ext)
{
	size_t len = strlen(base) - strlen(ko_exts[ext]), i;
	struct ko_file *k;

	if (ko_index.nr == ko_index.cap) {
		ko_index.cap = ko_index.cap ? 2 * ko_index.cap : 256;
		ko_index.files = xrealloc(ko_index.files, ko_index.cap *
					  sizeof(*ko_index.files));
	}
	k = &ko_index.files[ko_index.nr++];
	k->mod = strndup(base, len);
	k->path = strdup(path);
	if (!k->mod || !k->path) {
		pr_err("out of memory");
		exit(EXIT_ERROR);
	}
	for (i = 0; i < len; i++)
		if (k->mod[i] == '-')
			k->mod[i] = '_';
	k->dir = ko_index.dir;
	k->ext = ext;
}

static int index_ko(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	const char *base = path + ftw->base;
	size_t len = strlen(base), elen;
	unsigned int i;

	(void)st;
	if (type != FTW_F)
		return 0;
	for (i = 0; i < ARRAY_SIZE(ko_exts); i++) {
		elen = strlen(ko_exts[i]);
		if (len > elen && !strcmp(base + len - elen, ko_exts[i])) {
			add_ko(path, base, i);
			break;
		}
	}
	return 0;
}

static const char *lookup_root(void)
{
	const char *root = getenv("LBR_SNAP_ROOT");

	return root ? root : "";
}

static const char *release(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		return "unknown";
	return u.release;
}

/* ko_dirs[@i] under the root, for this release. */
static void ko_dir(char *buf, size_t len, unsigned int i)
{
	char fmt[64];

	snprintf(fmt, sizeof(fmt), "%%s%s", ko_dirs[i]);
	snprintf(buf, len, fmt, lookup_root(), release());
}

/* One walk of each module directory, the first time a module is wanted. */
static void index_modules(void)
{
	char dir[PATH_MAX];

	if (ko_index.done)
		return;
	ko_index.done = true;
	for (ko_index.dir = 0; ko_index.dir < ARRAY_SIZE(ko_dirs);
	     ko_index.dir++) {
		ko_dir(dir, sizeof(dir), ko_index.dir);
		nftw(dir, index_ko, 16, FTW_PHYS);
	}
}

/* The file of module @mod, best directory then best suffix; NULL if none. */
static const char *find_ko(const char *mod)
{
	const struct ko_file *best = NULL, *k;
	size_t i;

	index_modules();
	for (i = 0; i < ko_index.nr; i++) {
		k = &ko_index.files[i];
		if (strcmp(k->mod, mod))
			continue;
		if (!best || k->dir < best->dir ||
		    (k->dir == best->dir && k->ext < best->ext))
			best = k;
	}
	return best ? best->path : NULL;
}

/*
 * A .zst file decompressed into a memfd: this libdwfl (elfutils 0.188)
 * decompresses gzip, bzip2 and xz itself, not zstd.  Returns an fd or -1.
 */
static int unzstd(int in)
{
	size_t ilen = ZSTD_DStreamInSize(), olen = ZSTD_DStreamOutSize();
	char *ibuf = malloc(ilen), *obuf = malloc(olen);
	ZSTD_DStream *z = ZSTD_createDStream();
	int out = memfd_create("lbr-snap-unzstd", MFD_CLOEXEC);
	ssize_t n = 1;
	size_t ret = 0;

	if (!ibuf || !obuf || !z || out < 0)
		goto fail;
	ZSTD_initDStream(z);
	while (n > 0 && (n = read(in, ibuf, ilen)) > 0) {
		ZSTD_inBuffer ib = { ibuf, (size_t)n, 0 };

		while (ib.pos < ib.size) {
			ZSTD_outBuffer ob = { obuf, olen, 0 };

			ret = ZSTD_decompressStream(z, &ob, &ib);
			if (ZSTD_isError(ret) ||
			    write(out, obuf, ob.pos) != (ssize_t)ob.pos)
				goto fail;
		}
	}
	if (n < 0 || ret)	/* read error, or a truncated frame */
		goto fail;
	ZSTD_freeDStream(z);
	free(ibuf);
	free(obuf);
	close(in);
	lseek(out, 0, SEEK_SET);
	return out;
fail:
	ZSTD_freeDStream(z);
	free(ibuf);
	free(obuf);
	close(in);
	if (out >= 0)
		close(out);
	return -1;
}

/* Open a debug file, a .zst one decompressed; fd or -1. */
static int open_debug_file(const char *path)
{
	size_t len = strlen(path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && len > 4 && !strcmp(path + len - 4, ".zst"))
		return unzstd(fd);
	return fd;
}

/*
 * Dwfl_Callbacks.find_elf for modules: find_ko().  libdwfl's own
 * dwfl_linux_kernel_find_elf() gives up when the build ID that
 * /sys/module/MOD/notes gives is not in a .build-id directory.  A
 * compressed file is decompressed by libdwfl from the descriptor.
 */
static int find_module_elf(Dwfl_Module *mod, void **userdata,
			   const char *name, Dwarf_Addr base,
			   char **file_name, Elf **elfp)
{
	const char *path = find_ko(name);

	(void)mod;
	(void)userdata;
	(void)base;
	(void)elfp;
	if (!path)
		return -1;
	*file_name = strdup(path);
	return open_debug_file(path);
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

/* vmlinux candidates, in order, under LBR_SNAP_ROOT. */
static const char *const vmlinux_fmt[] = {
	"/boot/vmlinux-%s",
	"/lib/modules/%s/build/vmlinux",
	"/usr/lib/debug/boot/vmlinux-%s",	/* Debian's linux-image-*-dbg */
	"/usr/lib/debug/lib/modules/%s/vmlinux",
};

static void vmlinux_path(char *buf, size_t len, unsigned int i)
{
	char fmt[64];

	snprintf(fmt, sizeof(fmt), "%%s%s", vmlinux_fmt[i]);
	snprintf(buf, len, fmt, lookup_root(), release());
}

bool srclines_vmlinux_path(unsigned int i, char *buf, size_t len)
{
	if (i >= ARRAY_SIZE(vmlinux_fmt))
		return false;
	vmlinux_path(buf, len, i);
	return true;
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

/* Report @path as the kernel if libdwfl takes it and it has _text. */
static bool try_kernel(struct srclines *sl, const char *path,
		       const struct ksyms *ks)
{
	unsigned long long text;
	Dwfl_Module *m;

	int fd;

	errno = 0;
	fd = open_debug_file(path);
	if (fd < 0) {
		verbose("vmlinux %s: not usable: %s", path,
			errno ? strerror(errno) : "bad zstd data");
		return false;
	}
	/* libdwfl takes the descriptor, and closes it. */
	m = dwfl_report_offline(sl->dwfl, "kernel", path, fd);
	if (!m) {
		verbose("vmlinux %s: not usable: %s", path, dwfl_errmsg(-1));
		return false;
	}
	text = elf_sym(m, "_text");
	if (!text) {
		verbose("vmlinux %s: not usable: no _text symbol", path);
		return false;
	}
	if (!ks->text_addr) {
		verbose("vmlinux %s: not usable: no _text in kallsyms to place it",
			path);
		return false;
	}
	sl->kernel = m;
	sl->kernel_off = ks->text_addr - text;
	snprintf(sl->kernel_path, sizeof(sl->kernel_path), "%s", path);
	return true;
}

static void report_kernel(struct srclines *sl, const char *vmlinux,
			  const struct ksyms *ks)
{
	char buf[PATH_MAX], looked[4 * PATH_MAX] = "";
	unsigned int i;

	if (vmlinux) {
		try_kernel(sl, vmlinux, ks);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(vmlinux_fmt); i++) {
		vmlinux_path(buf, sizeof(buf), i);
		snprintf(looked + strlen(looked), sizeof(looked) - strlen(looked),
			 "%s%s", i ? ", " : "", buf);
		if (access(buf, R_OK))
			continue;
		if (try_kernel(sl, buf, ks))
			return;
	}
	verbose("no vmlinux: looked for %s (-k PATH gives one): kernel addresses get no file:line",
		looked);
}

/* -v: the vmlinux used, and each loaded module's file, or where we looked. */
static void say_debug_files(const struct srclines *sl)
{
	char path[PATH_MAX], name[256], d0[PATH_MAX], d1[PATH_MAX];
	Dwarf_Addr bias;
	const char *ko;
	FILE *f;

	if (sl->kernel)
		verbose("vmlinux: %s%s", sl->kernel_path,
			dwfl_module_getdwarf(sl->kernel, &bias) ? "" :
			" (no debug info in it: kernel addresses get no file:line)");
	snprintf(path, sizeof(path), "%s/proc/modules", lookup_root());
	f = fopen(path, "r");
	if (!f) {
		verbose("%s: %s: no modules listed", path, strerror(errno));
		return;
	}
	ko_dir(d0, sizeof(d0), 0);
	ko_dir(d1, sizeof(d1), 1);
	while (fscanf(f, "%255s%*[^\n]", name) == 1) {
		ko = find_ko(name);
		if (ko)
			verbose("module %s: %s", name, ko);
		else
			verbose("module %s: no %s.ko, .ko.xz, .ko.zst or .ko.gz under %s or %s: its addresses get no file:line",
				name, name, d0, d1);
	}
	fclose(f);
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
	if (!srclines_replay)
		dwfl_linux_kernel_report_modules(sl->dwfl);
	dwfl_report_end(sl->dwfl, NULL, NULL);
	if (srclines_verbose)
		say_debug_files(sl);
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

/* The directory the line's compilation unit was compiled in, or NULL. */
static const char *comp_dir(Dwfl_Line *l)
{
	Dwarf_Die *cu = dwfl_linecu(l);
	Dwarf_Attribute attr;

	return cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) :
		    NULL;
}

/* Whether @path lies inside directory @dir (lexically). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return n && !strncmp(path, dir, n) && path[n] == '/';
}

/*
 * The length of the longest common directory of @a (@alen bytes) and
 * @b: what both hold up to a '/' or their end.
 */
static size_t common_dir(const char *a, size_t alen, const char *b)
{
	size_t i = 0, last = 0;

	for (; i < alen && b[i] && a[i] == b[i]; i++)
		if (a[i] == '/')
			last = i;
	if ((i == alen || a[i] == '/') && (!b[i] || b[i] == '/'))
		last = i;
	return last;
}

/* "" in a module's userdata: its source root was looked for, none found. */
static char no_root[1];

/*
 * The directory a module's own sources lie in, for those outside its
 * compilation directory: an out-of-tree module, built by kbuild in the
 * kernel's tree (DW_AT_comp_dir) from sources elsewhere, has absolute
 * paths of its own tree.  Its root is the longest directory common to
 * the compilation units that are not in their comp_dir (the MOD.mod.c
 * kbuild writes among them, at the top of the module's tree).  Found
 * once a module, the first time a file outside comp_dir is looked up,
 * and kept in the module's userdata; NULL if there is none but "/".
 */
static const char *source_root(Dwfl_Module *m)
{
	char path[PATH_MAX], *root = NULL;
	Dwarf_Die *cu = NULL;
	Dwarf_Attribute attr;
	const char *name, *dir;
	size_t len = 0;
	Dwarf_Addr bias;
	void **ud;

	if (!dwfl_module_info(m, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		return NULL;
	if (*ud)
		return *ud == no_root ? NULL : *ud;
	while ((cu = dwfl_module_nextcu(m, cu, &bias))) {
		name = dwarf_diename(cu);
		dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
		if (!name)
			continue;
		if (*name == '/')
			snprintf(path, sizeof(path), "%s", name);
		else if (dir)
			snprintf(path, sizeof(path), "%s/%s", dir, name);
		else
			continue;
		if (dir && under(path, dir))
			continue;
		*strrchr(path, '/') = '\0';	/* its directory */
		if (!root) {
			root = strdup(path);
			if (!root)
				oom();
			len = strlen(root);
		} else {
			len = common_dir(root, len, path);
		}
	}
	if (root && len > 1) {
		root[len] = '\0';
		*ud = root;
	} else {
		free(root);
		*ud = no_root;
	}
	return *ud == no_root ? NULL : *ud;
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
	loc->comp_dir = comp_dir(l);
	if (!loc->comp_dir || !under(loc->file, loc->comp_dir))
		loc->src_root = source_root(m);
	find_inlines(m, a, loc);
	return true;
}

/* Where @addr (a runtime address) is in the source; false if unknown. */
bool srclines_lookup(const struct srclines *sl, const struct ksyms *ks,
		     unsigned long long addr, struct srcloc *loc)
{
	struct loc_cache_ent *e;

	/* Without debug info, on every address printed: no whole memset. */
	if (!sl) {
		loc->file = NULL;
		loc->comp_dir = NULL;
		loc->src_root = NULL;
		loc->line = 0;
		loc->nr_inline = 0;
		return false;
	}
	memset(loc, 0, sizeof(*loc));
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

/* dwfl_getmodules() callback: free a module's source root. */
static int free_root(Dwfl_Module *m, void **ud, const char *name,
		     Dwarf_Addr start, void *arg)
{
	(void)m;
	(void)name;
	(void)start;
	(void)arg;
	if (*ud != no_root)
		free(*ud);
	*ud = NULL;
	return DWARF_CB_OK;
}

void srclines_close(struct srclines *sl)
{
	if (!sl)
		return;
	dwfl_getmodules(sl->dwfl, free_root, NULL, 0);
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
	verbose("built without libdw: no source lines");
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

bool srclines_vmlinux_path(unsigned int i, char *buf, size_t len)
{
	(void)i;
	(void)buf;
	(void)len;
	return false;
}

#endif /* HAVE_LIBDW */
