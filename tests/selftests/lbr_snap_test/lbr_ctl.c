// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, LBR programming: the control MSR set on every CPU and
 * given back on unload, a change underneath reported; the MSR and CPU
 * hotplug helpers of the later files.
 */

static int ctl_msr_of(const struct lbr_snap_info *info, unsigned long long *bit)
{
	switch (info->backend) {
	case LBR_SNAP_BACKEND_INTEL:
		*bit = 1;		/* IA32_DEBUGCTL.LBR */
		return 0x1d9;
	case LBR_SNAP_BACKEND_ARCH:
		*bit = 1;		/* ARCH_LBR_CTL.LBREn */
		return 0x14ce;
	case LBR_SNAP_BACKEND_AMD:
		*bit = 1 << 6;		/* DBG_EXTN_CFG.LBRV2EN */
		return 0xc000010f;
	default:
		return 0;
	}
}

/* RDMSR or WRMSR on @cpu through /dev/cpu/N/msr; 0 or -errno. */
static int msr_io(int cpu, unsigned int msr, unsigned long long *val,
		  bool write);

/*
 * Every backend's control MSR on every CPU, read before lbr_snap loads
 * (an MSR a CPU lacks reads as an error): what "restored" compares with
 * must be a value the module never touched, not one its own unload left.
 */
struct ctl_before {
	unsigned long long v[3][64];
	bool ok[3][64];
};

static const unsigned int ctl_msrs[3] = { 0x1d9, 0x14ce, 0xc000010f };

static void read_ctl_before(struct ctl_before *b)
{
	int c, i;

	for (i = 0; i < 3; i++)
		for (c = 0; c < 64; c++)
			b->ok[i][c] = !msr_io(c, ctl_msrs[i], &b->v[i][c], false);
}

/*
 * @msr's value on @cpu from @b (1 if it was read), after which lbr_snap
 * loaded; on a lab CPU, with @raw (lbr_snap programs LBR itself, no perf
 * user had it), LBR was off then: nothing left it on.
 */
static bool ctl_before_of(struct __test_metadata *_metadata,
			  const struct ctl_before *b, unsigned int msr,
			  unsigned long long bit, int cpu, bool raw,
			  unsigned long long *val)
{
	int i;

	for (i = 0; i < 3; i++)
		if (ctl_msrs[i] == msr && cpu < 64 && b->ok[i][cpu]) {
			*val = b->v[i][cpu];
			if (raw && lbr_lab_cpu())
				EXPECT_EQ(0, *val & bit)
					TH_LOG("cpu%d: %#x = %#llx before lbr_snap loaded",
					       cpu, msr, *val);
			return true;
		}
	return false;
}

static int msr_io(int cpu, unsigned int msr, unsigned long long *val,
		  bool write)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, val, sizeof(*val), msr) :
		    pread(fd, val, sizeof(*val), msr);
	close(fd);
	return n == sizeof(*val) ? 0 : -EIO;
}

static int rdmsr_on(int cpu, unsigned int msr, unsigned long long *val)
{
	return msr_io(cpu, msr, val, false);
}

static int wrmsr_on(int cpu, unsigned int msr, unsigned long long val)
{
	return msr_io(cpu, msr, &val, true);
}

/*
 * The RDMSRs and WRMSRs this CPU has executed: the LBR lab's counter, MSR
 * 0x4c4252 (tests/lbr-lab/README.md, "Counting MSR accesses").  -1 where
 * there is none: real silicon faults on it, stock QEMU reads 0.
 */
#define LAB_MSR_ACCESSES	0x4c4252

static long long lab_msr_accesses(int cpu)
{
	unsigned long long a, b;

	if (msr_io(cpu, LAB_MSR_ACCESSES, &a, false) ||
	    msr_io(cpu, LAB_MSR_ACCESSES, &b, false) || b <= a)
		return -1;
	return b;
}

/*
 * trigger(@fn, @v, @n) on CPU 0 (the caller runs there): 0, or -errno;
 * *@cost its MSR accesses, -1 without the lab's counter.
 */
static int msr_cost(const char *fn, long v, unsigned long n,
		    long long *cost)
{
	long long before = lab_msr_accesses(0), after;
	int ret = trigger(fn, v, n);

	after = lab_msr_accesses(0);
	*cost = before < 0 || after < 0 ? -1 : after - before;
	return ret;
}

/*
 * msr_cost() @runs times, *@cost the least: a timer or a perf PMI that
 * lands inside one run adds its own accesses, which no call made.
 */
static int msr_cost_least(const char *fn, long v, unsigned long n,
			  unsigned long runs, long long *cost)
{
	long long c;
	int ret = 0;

	*cost = -1;
	for (; runs && !ret; runs--) {
		ret = msr_cost(fn, v, n, &c);
		if (c >= 0 && (*cost < 0 || c < *cost))
			*cost = c;
	}
	return ret;
}

/*
 * Make sure @cpu is online, onlining it again (up to three tries) if it
 * did not come back.  Seen under multi-threaded TCG: on resume from S3 an
 * AP gave no sign of life in the kernel's 10 s ("smpboot: do_boot_cpu
 * failed(-1) to wakeup CPU#1"), before any hotplug callback could run, so
 * it stayed offline and every later test missed a CPU.  Onlining it runs
 * the same hotplug callbacks (lbr_snap's included), so what the caller
 * checks afterwards still holds for every CPU.  Each try is logged.
 */
static bool cpu_online_again(struct __test_metadata *_metadata, int cpu,
			     const char *why)
{
	int try, ret;

	for (try = 1; try <= 3; try++) {
		if (cpu_is_online(cpu) == 1)
			return true;
		ret = set_online(cpu, 1);
		TH_LOG("cpu%d offline after %s: onlining it (try %d): %s",
		       cpu, why, try, ret ? strerror(-ret) : "ok");
		if (ret)
			usleep(500 * 1000);
	}
	return cpu_is_online(cpu) == 1;
}

TEST_F(cap, lbr_on_every_cpu_and_restored)
{
	unsigned long long before[64], val, bit;
	int ncpu = nr_cpus(), c;
	struct ctl_before b;
	unsigned int msr;

	ASSERT_GE(64, ncpu);
	ASSERT_EQ(0, access("/dev/cpu/0/msr", R_OK)) TH_LOG("modprobe msr");
	read_ctl_before(&b);
	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	msr = ctl_msr_of(&self->info, &bit);
	if (!msr)
		SKIP(return, "no LBR here: %s", self->info.reason);
	for (c = 0; c < ncpu; c++)
		ASSERT_TRUE(ctl_before_of(_metadata, &b, msr, bit, c,
					  !strcmp(self->info.mode, "raw"),
					  &before[c]))
			TH_LOG("cpu%d: %#x not read before the load", c, msr);

	for (c = 0; c < ncpu; c++) {
		ASSERT_EQ(0, rdmsr_on(c, msr, &val));
		EXPECT_EQ(bit, val & bit) TH_LOG("cpu%d: %#x = %#llx", c, msr, val);
	}
	cap_unload(_metadata, self);
	for (c = 0; c < ncpu; c++) {
		ASSERT_EQ(0, rdmsr_on(c, msr, &val));
		EXPECT_EQ(before[c], val) TH_LOG("cpu%d: %#x not restored", c, msr);
	}
}

/* Arch LBR's control MSR is given back whole, DEBUGCTL bit by bit. */
static bool arch_whole(const struct lbr_snap_info *info)
{
	return info->backend == LBR_SNAP_BACKEND_ARCH;
}

TEST_F(cap, changed_underneath_is_reported)
{
	unsigned long long before, val, bit, written;
	struct ctl_before b;
	unsigned int msr;
	int kmsg;

	read_ctl_before(&b);
	cap_load(_metadata, self, variant, "targets=lbr_test_int mode=raw", O_NONBLOCK);
	msr = ctl_msr_of(&self->info, &bit);
	if (!msr)
		SKIP(return, "no LBR here: %s", self->info.reason);
	ASSERT_TRUE(ctl_before_of(_metadata, &b, msr, bit, 0, true, &before));
	close(self->fd);
	self->fd = -1;
	/* Someone else turns LBR off on cpu0 behind lbr_snap's back. */
	ASSERT_EQ(0, rdmsr_on(0, msr, &val));
	written = val & ~bit;
	ASSERT_EQ(0, wrmsr_on(0, msr, written));
	kmsg = kmsg_open();
	ASSERT_LE(0, kmsg);
	ASSERT_EQ(0, unload());
	EXPECT_TRUE(kmsg_has(kmsg, "cpu0: LBR control changed underneath lbr_snap"));
	close(kmsg);
	ASSERT_EQ(0, rdmsr_on(0, msr, &val));
	/*
	 * DEBUGCTL is given back bit by bit: what was found.  ARCH_LBR_CTL is
	 * one value (lbr_give_back_whole()): the other writer's stays.
	 */
	EXPECT_EQ(arch_whole(&self->info) ? written : before, val);
	ASSERT_EQ(0, wrmsr_on(0, msr, before));
}
