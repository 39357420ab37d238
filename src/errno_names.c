// SPDX-License-Identifier: GPL-2.0
/*
 * Errno names for target specs ("sym=-ENOENT,-EACCES").
 *
 * Not lib/errname.c: its table, and so the names %pe prints, exist only
 * with CONFIG_SYMBOLIC_ERRNAME, which a kernel may lack (the debug kernel
 * of make check does), and a spec must mean the same on every kernel.
 * These are the names every kernel from 5.10 to 7.2 defines
 * (include/uapi/asm-generic/errno-base.h, errno.h and
 * include/linux/errno.h), aliases (EWOULDBLOCK, EDEADLOCK) included, the
 * filesystems' aliases that 7.2 moved there, and EFTYPE where the
 * headers have it (7.2).
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "lbr_snap.h"

#define E(err)	{ #err, err }

static const struct {
	const char *name;
	int err;
} lbr_errnos[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
	E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
	E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK),
	E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
	E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(EWOULDBLOCK), E(ENOMSG), E(EIDRM),
	E(ECHRNG), E(EL2NSYNC), E(EL3HLT), E(EL3RST), E(ELNRNG), E(EUNATCH),
	E(ENOCSI), E(EL2HLT), E(EBADE), E(EBADR), E(EXFULL), E(ENOANO),
	E(EBADRQC), E(EBADSLT), E(EDEADLOCK), E(EBFONT), E(ENOSTR), E(ENODATA),
	E(ETIME), E(ENOSR), E(ENONET), E(ENOPKG), E(EREMOTE), E(ENOLINK),
	E(EADV), E(ESRMNT), E(ECOMM), E(EPROTO), E(EMULTIHOP), E(EDOTDOT),
	E(EBADMSG), E(EOVERFLOW), E(ENOTUNIQ), E(EBADFD), E(EREMCHG),
	E(ELIBACC), E(ELIBBAD), E(ELIBSCN), E(ELIBMAX), E(ELIBEXEC), E(EILSEQ),
	E(ERESTART), E(ESTRPIPE), E(EUSERS), E(ENOTSOCK), E(EDESTADDRREQ),
	E(EMSGSIZE), E(EPROTOTYPE), E(ENOPROTOOPT), E(EPROTONOSUPPORT),
	E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT), E(EAFNOSUPPORT),
	E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH),
	E(ENETRESET), E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS), E(EISCONN),
	E(ENOTCONN), E(ESHUTDOWN), E(ETOOMANYREFS), E(ETIMEDOUT),
	E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY),
	E(EINPROGRESS), E(ESTALE), E(EUCLEAN), E(ENOTNAM), E(ENAVAIL),
	E(EISNAM), E(EREMOTEIO), E(EDQUOT), E(ENOMEDIUM), E(EMEDIUMTYPE),
	E(ECANCELED), E(ENOKEY), E(EKEYEXPIRED), E(EKEYREVOKED),
	E(EKEYREJECTED), E(EOWNERDEAD), E(ENOTRECOVERABLE), E(ERFKILL),
	E(EHWPOISON), E(ERESTARTSYS), E(ERESTARTNOINTR), E(ERESTARTNOHAND),
	E(ENOIOCTLCMD), E(ERESTART_RESTARTBLOCK), E(EPROBE_DEFER),
	E(EOPENSTALE), E(ENOPARAM), E(EBADHANDLE), E(ENOTSYNC), E(EBADCOOKIE),
	E(ENOTSUPP), E(ETOOSMALL), E(ESERVERFAULT), E(EBADTYPE), E(EJUKEBOX),
	E(EIOCBQUEUED), E(ERECALLCONFLICT), E(ENOGRACE),
	/* ext4's and xfs's names, in uapi/asm-generic/errno.h from 7.2 on */
	{ "EFSCORRUPTED", EUCLEAN }, { "EFSBADCRC", EBADMSG },
#ifdef EFTYPE
	E(EFTYPE),
#endif
};

/**
 * lbr_errno_by_name - the errno a name stands for
 * @name: "ENOENT"
 *
 * Return: the positive errno, or 0 for a name that is none.
 */
int lbr_errno_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lbr_errnos); i++)
		if (!strcmp(lbr_errnos[i].name, name))
			return lbr_errnos[i].err;
	return 0;
}
