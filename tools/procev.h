/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_PROCEV_H
#define LBR_SNAP_PROCEV_H

#include <stdbool.h>
#include <sys/types.h>

typedef void (*procev_fork_fn)(pid_t parent, pid_t child, void *arg);

int procev_open(void);
bool procev_drain(int fd, procev_fork_fn fn, void *arg);
void procev_close(int fd);

#endif /* LBR_SNAP_PROCEV_H */
