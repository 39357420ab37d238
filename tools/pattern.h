/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_PATTERN_H
#define LBR_SNAP_PATTERN_H

#include <stdbool.h>
#include <stdio.h>

#include <lbr_snap.h>

/*
 * Targets by pattern: a shell glob on function names ("vfs_*"), a module
 * scope after a space ("* [ext4]", "vfs_* [vmlinux]"), a source file of
 * vmlinux (":fs/namei.c", ":kernel/bpf/b*.c"), each with the suffixes of a
 * spec ("%type", "/N" but after a file, "@hook", "=-ERR,...").  The
 * resolver lists every function matched, each attachable with its spec
 * completed from BTF, or refused with the reason; nothing is attached
 * here.  The list is whole before any attach, for the one ioctl that
 * will one day take it all.
 */

/* Patterns as long as the kernel's symbol names may be (KSYM_NAME_LEN). */
#define PAT_MAX_LEN	512

/* Why a match is refused; PAT_OK if it is not. */
enum pat_why {
	PAT_OK,
	PAT_TOO_LONG,		/* the name, or its spec, too long */
	PAT_NO_FUNC,		/* not a text symbol of kallsyms */
	PAT_OWN,		/* lbr_snap's own, or its capture path */
	PAT_NO_HOOK,		/* an offline CPU's idle task stays inside */
	PAT_UNTRACEABLE,	/* not in available_filter_functions */
	PAT_SAME_NAME,		/* not the one of its name hooked by name */
	PAT_ALIAS,		/* same address as an earlier match */
	PAT_VOID,		/* void under capture=errors */
	PAT_TYPE,		/* a type the hook cannot take */
	PAT_NO_BATCH,		/* not in a batch, no room one by one */
	PAT_NR_WHY
};

struct pat_match {
	char *name;
	char *mod;		/* module, NULL for vmlinux */
	unsigned long long addr;	/* from kallsyms, 0 if unknown */
	/* The completed spec, as LBR_SNAP_IOC_ADD_TARGET takes it. */
	char spec[sizeof(((struct lbr_snap_target_ctl *)0)->spec)];
	enum pat_why why;
	char *detail;		/* why, in words; or a note on an attachable */
	unsigned int arg;	/* which argument matched it */
	bool exact;		/* an exact name, passed on unresolved */
	bool batch;		/* goes in a batch (pat_check_room()) */
	/* Why fexit cannot take it in a batch (its type), or NULL. */
	const char *no_batch;
};

struct pat_list {
	struct pat_match *m;
	size_t nr, cap;
	size_t nr_ok;		/* attachable */
	size_t nr_batch;	/* of them, to go in a batch */
};

struct pat_opts {
	const char *kallsyms;	/* NULL: /proc/kallsyms (under LBR_SNAP_ROOT) */
	const char *vmlinux;	/* -k, for :file; NULL: srcline's places */
	bool capture_all;	/* the capture mode the targets will meet */
	bool resolve_exact;	/* exact names too (--dry-run) */
	bool verbose;		/* -v: each refusal, and the files used */
	bool errno_only;	/* why: a bool carries no errno */
	bool lenient;		/* why's defaults: a pattern that matches
				 * nothing to attach is said, not an error
				 */
	bool quiet_none;	/* !PAT of why's defaults: one that matches
				 * nothing (a file this kernel lacks) is
				 * not said either
				 */
};

/* Whether @arg is a pattern rather than one function's spec. */
bool pat_is_pattern(const char *arg);

/*
 * Resolve @args into @l; messages to stderr.  Exact names go in as given
 * (exact true) unless @o->resolve_exact.  A pattern that matches no
 * function, or only refused ones, is an error, as bad input is.
 * Return: 0, or the exit code (util.h).
 */
int pat_expand(char **args, const struct pat_opts *o, struct pat_list *l);

/* --dry-run: each match, "attach SPEC" or "refuse NAME: WHY", on @f. */
void pat_print(FILE *f, const struct pat_list *l);

/*
 * Whether @m may go in a batch (LBR_SNAP_IOC_ADD_TARGETS): a function of
 * vmlinux at a known kallsyms address, hooked by fexit, whose stack
 * arguments BTF bounds.
 */
bool pat_batchable(const struct pat_match *m);

/*
 * Whether the attachable matches fit in a module that has @attached
 * targets: if they are more than the LBR_SNAP_MAX_TARGETS it takes one by
 * one, each batchable one is marked to go in a batch; those of modules or
 * by another hook must fit in the rest, and all within
 * LBR_SNAP_MAX_ALL_TARGETS; if not, says so once.  Functions of vmlinux
 * that cannot go in a batch take what room is left, in order, and the
 * others are refused (PAT_NO_BATCH), as said on stderr.
 * Return: 0 or EXIT_ERROR.
 */
int pat_check_room(struct pat_list *l, unsigned int attached);

void pat_list_free(struct pat_list *l);

#endif /* LBR_SNAP_PATTERN_H */
