// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: fork events from the kernel's process events connector
 * (CONFIG_PROC_EVENTS, netlink NETLINK_CONNECTOR, group CN_IDX_PROC; needs
 * CAP_NET_ADMIN).  Events are queued when a process forks, so a child is
 * known before any record it causes, even if it has exited and been reaped
 * by the time its records are read.
 */
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "procev.h"

#define PROCEV_BUF	8192

static int listen_ctl(int fd, enum proc_cn_mcast_op op)
{
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) msg;

	memset(&msg, 0, sizeof(msg));
	msg.nl.nlmsg_len = sizeof(msg);
	msg.nl.nlmsg_type = NLMSG_DONE;
	msg.nl.nlmsg_pid = getpid();
	msg.cn.id.idx = CN_IDX_PROC;
	msg.cn.id.val = CN_VAL_PROC;
	msg.cn.len = sizeof(op);
	msg.op = op;
	return send(fd, &msg, sizeof(msg), 0) == sizeof(msg) ? 0 : -1;
}

/* A non-blocking socket receiving fork events, or -1. */
int procev_open(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC,
		.nl_pid = getpid(),
	};
	int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			NETLINK_CONNECTOR);
	int size = 1 << 20;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen_ctl(fd, PROC_CN_MCAST_LISTEN) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void one_msg(const struct nlmsghdr *nl, procev_fork_fn fn, void *arg)
{
	const struct cn_msg *cn = NLMSG_DATA(nl);
	const struct proc_event *ev = (const void *)cn->data;

	if (nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + sizeof(*ev)) ||
	    cn->id.idx != CN_IDX_PROC || ev->what != PROC_EVENT_FORK)
		return;
	if (ev->event_data.fork.child_pid == ev->event_data.fork.child_tgid)
		fn(ev->event_data.fork.parent_tgid,
		   ev->event_data.fork.child_tgid, arg);
}

/*
 * Call @fn for each new process (not thread) since the last call.  Returns
 * false if events were lost (socket buffer overrun).
 */
bool procev_drain(int fd, procev_fork_fn fn, void *arg)
{
	char buf[PROCEV_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlmsghdr *nl;
	bool ok = true;
	unsigned int len;
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == ENOBUFS) {
			ok = false;
			continue;
		}
		if (n <= 0)
			return ok;
		len = n;
		for (nl = (const void *)buf; NLMSG_OK(nl, len);
		     nl = NLMSG_NEXT(nl, len))
			one_msg(nl, fn, arg);
	}
}

void procev_close(int fd)
{
	if (fd < 0)
		return;
	listen_ctl(fd, PROC_CN_MCAST_IGNORE);
	close(fd);
}
