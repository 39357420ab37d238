// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap kselftests: run as root in the test guest (tests/vm), where
 * lbr_snap.ko and lbr_snap_test_target.ko are installed for modprobe.
 *
 * Each test loads lbr_snap itself through finit_module() with the
 * parameters it needs, so load errors are seen as the exact errno, and
 * unloads it in the fixture teardown.  The test target module gives
 * functions with known return values (see tests/target/).
 *
 * One binary, one translation unit (kselftest_harness.h keeps its lists
 * of fixtures and tests in static variables): the tests are kept by area
 * in lbr_snap_test/, each file included below in the order its tests
 * run.  A file may use the helpers of the files before it.
 */
#include <elf.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <cpuid.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#include "kselftest_harness.h"
#include "lbr_test_util.h"
#include "lbr_test_filter.h"
#include "lbr_nokprobe.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON	38	/* since 5.8 */
#endif

/* Defined in branches.c and fexit_lifetime.c, used before. */
static bool ftrace_can_trace(const char *fn);
static bool lbr_lab_cpu(void);

/* Fixture load: the module's parameters. */
#include "lbr_snap_test/load.c"

/* Fixture cap: each test once per hook. */
#include "lbr_snap_test/cap_fixture.c"
#include "lbr_snap_test/records.c"
#include "lbr_snap_test/read.c"
#include "lbr_snap_test/branches.c"
#include "lbr_snap_test/lbr_ctl.c"
#include "lbr_snap_test/perf.c"
#include "lbr_snap_test/lbr_ctl_kept.c"
#include "lbr_snap_test/control.c"
#include "lbr_snap_test/filters.c"
#include "lbr_snap_test/stack.c"
#include "lbr_snap_test/access.c"
#include "lbr_snap_test/capture_path.c"

/* Fixture fexit: what only the fexit hook has. */
#include "lbr_snap_test/fexit_fixture.c"
#include "lbr_snap_test/fexit_args.c"
#include "lbr_snap_test/fexit_lifetime.c"
#include "lbr_snap_test/fexit_btf.c"
#include "lbr_snap_test/fexit_lbr.c"
#include "lbr_snap_test/fexit_detach.c"
#include "lbr_snap_test/fexit_kernel.c"

/* Fixture lost, last: should its test fail, a trampoline stays for good. */
#include "lbr_snap_test/lost.c"

LBR_TESTS_MAIN
