// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: loading and unloading the module, for trace, why and selftest.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "module.h"
#include "util.h"

bool has_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data) < 0)
		return geteuid() == 0;
	return data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &
	       CAP_TO_MASK(CAP_SYS_ADMIN);
}

int module_run(char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (!pid) {
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * lbr_snap_fexit holds itself until the removed trampolines have
 * drained: two RCU Tasks grace periods, or as long as a call stays
 * inside a traced function (the kernel log says which).  Wait up to 10 s
 * for the first; say so, not fail, for the second.
 */
void module_unload(bool and_fexit)
{
	int i;

	if (syscall(SYS_delete_module, "lbr_snap", O_NONBLOCK) &&
	    errno != ENOENT) {
		pr_err("rmmod lbr_snap failed: %s", strerror(errno));
		return;
	}
	if (!and_fexit)
		return;
	for (i = 0; i < 200; i++) {
		if (!syscall(SYS_delete_module, "lbr_snap_fexit", O_NONBLOCK) ||
		    errno == ENOENT)
			return;
		if (errno != EWOULDBLOCK && errno != EAGAIN)
			break;
		usleep(50 * 1000);
	}
	fprintf(stderr, "lbr-snap: lbr_snap_fexit stays loaded: %s (calls still inside traced functions: see the kernel log)\n",
		strerror(errno));
}
