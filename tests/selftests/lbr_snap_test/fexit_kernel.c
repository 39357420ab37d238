// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fexit amid the rest of the kernel: call depth tracking
 * (retbleed=stuff), a target the capture itself calls (the clocksource),
 * a preemption storm, a function a BPF program already holds.
 */

/* The address of @sym of module @mod in /proc/kallsyms, or 0. */
static unsigned long long ksym_addr(const char *sym, const char *mod)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char name[256], m[64], line[512];
	unsigned long long a, found = 0;
	char t;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		m[0] = '\0';
		if (sscanf(line, "%llx %c %255s [%63[^]]]", &a, &t, name, m) >= 3 &&
		    !strcmp(name, sym) && !strcmp(m, mod))
			found = a;
	}
	fclose(f);
	return found;
}

/* Read @len bytes of kernel memory at @addr through /proc/kcore. */
static int kcore_read(unsigned long long addr, void *buf, size_t len)
{
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC), i, ret = -ENOENT;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * eh.e_phentsize) !=
		    sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr ||
		    addr + len > ph.p_vaddr + ph.p_memsz)
			continue;
		ret = pread(fd, buf, len, ph.p_offset + (addr - ph.p_vaddr)) ==
		      (ssize_t)len ? 0 : -EIO;
		break;
	}
out:
	close(fd);
	return ret;
}

/*
 * The call-depth accounting the kernel patches in under retbleed=stuff
 * (INCREMENT_CALL_DEPTH, arch/x86/include/asm/nospec-branch.h):
 * "sarq $5, %gs:__x86_call_depth", absolute or %rip-relative.  Its length
 * at @p, or 0.
 */
static int depth_insn(const unsigned char *p, size_t left)
{
	if (left >= 10 && p[0] == 0x65 && p[1] == 0x48 && p[2] == 0xc1 &&
	    p[3] == 0x3c && p[4] == 0x25 && p[9] == 5)
		return 10;
	if (left >= 9 && p[0] == 0x65 && p[1] == 0x48 && p[2] == 0xc1 &&
	    p[3] == 0x3d && p[8] == 5)
		return 9;
	return 0;
}

/*
 * Under retbleed=stuff every call is accounted once, on the callee's side
 * (a thunk in its padding that the kernel points the call at) and every
 * return once, in the return thunk.  ftrace's call into a trampoline gets
 * no thunk, so the trampoline accounts it itself, once; its own calls get
 * theirs when the module loads, as in samples/ftrace/ftrace-direct.c.
 * Counted in the live text, from the trampoline's entry up to its call of
 * the traced function.  The trampoline calls two functions,
 * lbr_fexit_enter() and lbr_fexit_call_rest(): a byte 0xe8 is one of its
 * calls when its rel32 lands on either, straight (a call left without its
 * thunk) or on a thunk whose accounting falls into it.  Any other 0xe8 is
 * a byte of another instruction (a ModRM byte, an immediate, a
 * displacement: the %rip-relative ones to the module's data change with
 * where the module's text and data were put).
 * The accounting instruction is stepped over whole.  CALL_THUNKS_DEBUG's
 * counting (not in Debian's kernels) would add instructions it does not
 * know.
 */
TEST_F(fexit, call_depth_accounted_once)
{
	unsigned long long tramp, enter, rest, dest;
	unsigned char code[128], thunk[16];
	char mit[256] = "";
	int own = 0, calls = 0, len;
	size_t i;
	FILE *f;

	f = fopen("/sys/devices/system/cpu/vulnerabilities/retbleed", "r");
	if (f) {
		if (!fgets(mit, sizeof(mit), f))
			mit[0] = '\0';
		fclose(f);
	}
	mit[strcspn(mit, "\n")] = '\0';
	/* The sid guest boots with retbleed=stuff and says so: no skip there. */
	if (getenv("LBR_EXPECT_STUFFING"))
		ASSERT_NE(NULL, strstr(mit, "Stuffing"))
			TH_LOG("retbleed: '%s', not Stuffing", mit);
	if (!strstr(mit, "Stuffing"))
		SKIP(return, "no call depth tracking here (retbleed: '%s'); the sid guest boots with retbleed=stuff",
		     mit);
	ASSERT_EQ(0, load("targets=lbr_test_int%int/1@fexit"));
	tramp = ksym_addr("lbr_fexit_lbr_0", "lbr_snap_fexit");
	enter = ksym_addr("lbr_fexit_enter", "lbr_snap_fexit");
	rest = ksym_addr("lbr_fexit_call_rest", "lbr_snap_fexit");
	ASSERT_NE(0, tramp);
	ASSERT_NE(0, enter);
	ASSERT_NE(0, rest);
	ASSERT_EQ(0, kcore_read(tramp, code, sizeof(code)));

	for (i = 0; i < sizeof(code); ) {
		len = depth_insn(code + i, sizeof(code) - i);
		if (len) {
			own++;
			i += len;
			continue;
		}
		if (code[i] != 0xe8 || i + 5 > sizeof(code)) {
			i++;
			continue;
		}
		dest = tramp + i + 5 + (long long)(int)(code[i + 1] |
			code[i + 2] << 8 | code[i + 3] << 16 |
			(unsigned int)code[i + 4] << 24);
		len = 0;
		if (dest != enter && dest != rest &&
		    !kcore_read(dest, thunk, sizeof(thunk)))
			len = depth_insn(thunk, sizeof(thunk));
		if (dest + len != enter && dest + len != rest) {
			i++;		/* not a call of the trampoline's */
			continue;
		}
		calls++;
		EXPECT_NE(0, len)
			TH_LOG("call at +%zu to %llx: no accounting there", i,
			       dest);
		if (dest + len == rest)
			break;
		i += 5;
	}
	EXPECT_EQ(2, calls)
		TH_LOG("%d of the trampoline's 2 calls found (of lbr_fexit_enter(), then of the traced function)",
		       calls);
	EXPECT_EQ(1, own);
	/* Every call the module makes got its thunk. */
	EXPECT_EQ(0, kmsg_count("Invalid padding area for lbr_"));
}

/* Make @cs the clocksource; 0 or -errno. */
static int use_clocksource(const char *cs)
{
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, cs, strlen(cs)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * A target that lbr_snap's own capture path calls and the denylist does
 * not know: the clocksource's ->read(), which the capture reaches through
 * ktime_get_mono_fast_ns().  Its returns inside a capture are counted as
 * recursion and not recorded; the outer record is whole.
 */
TEST_F(fexit, nested_return_counted_not_recorded)
{
	static const struct { const char *cs, *fn; } reads[] = {
		{ "hpet", "read_hpet" }, { "acpi_pm", "acpi_pm_read" },
		{ "kvm-clock", "kvm_clock_get_cycles" },
		{ "jiffies", "jiffies_read" },
	};
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	char cs[64] = "", spec[128];
	const char *fn = NULL;
	struct lbr_snap_stats hdr;
	unsigned int i, mine;
	int n;
	__u32 hook;
	FILE *f;

	/*
	 * Attaching a direct call to a function every vCPU runs all the time
	 * can lock up multi-threaded TCG (tests/README.md, "Known limits of
	 * the test lab"): the suite that sets LBR_NESTED_CLOCK runs
	 * single-threaded.
	 */
	if (!getenv("LBR_NESTED_CLOCK"))
		SKIP(return, "hooks the clocksource read: run with LBR_NESTED_CLOCK=1 (guest-nested, single-threaded TCG)");
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%63s", self->clocksource));
	fclose(f);
	/* The TSC's read is on the denylist: another clock, if there is one. */
	if (use_clocksource("hpet") && use_clocksource("acpi_pm"))
		TH_LOG("no clocksource but %s", self->clocksource);
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%63s", cs));
	fclose(f);
	for (i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		if (!strcmp(cs, reads[i].cs))
			fn = reads[i].fn;
	/*
	 * LBR_NESTED_CLOCK asks for this test (guest-nested runs it alone):
	 * a clock it cannot hook fails it, it does not pass empty.
	 */
	ASSERT_NE(NULL, fn) TH_LOG("clocksource %s: no read function known here to hook", cs);
	ASSERT_TRUE(ftrace_can_trace(fn))
		TH_LOG("clocksource %s: %s is not one fexit can hook", cs, fn);

	/*
	 * errors: the clock's own (positive) returns leave its trampoline
	 * before the freeze, nested or not: filtered, never recursion.
	 */
	ASSERT_EQ(0, load("targets=lbr_test_int/1@fexit"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	snprintf(spec, sizeof(spec), "%s%%long/1@fexit", fn);
	ASSERT_EQ(0, add_target(self->fd, spec, &hook)) TH_LOG("%s", spec);
	ASSERT_EQ(0, trigger("int", -22, 5));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(2, hdr.nr);
	EXPECT_EQ(5, st[0].hits);
	EXPECT_EQ(5, st[0].captured);
	EXPECT_EQ(0, st[0].recursion);
	/* Each capture of lbr_test_int read the clock. */
	EXPECT_LE(5, st[1].filtered) TH_LOG("%s: %llu filtered", fn, st[1].filtered);
	EXPECT_EQ(0, st[1].recursion);
	EXPECT_EQ(0, st[1].captured);
	/*
	 * capture=all: the clock's returns reach the capture, and those
	 * inside lbr_test_int's are nested: counted, not recorded.
	 */
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE, LBR_SNAP_CAPTURE_ALL));
	ASSERT_EQ(0, trigger("int", -22, 5));
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE, LBR_SNAP_CAPTURE_ERRORS));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	EXPECT_EQ(10, st[0].captured);
	EXPECT_EQ(0, st[0].recursion);
	EXPECT_LE(5, st[1].recursion)
		TH_LOG("%s: %llu nested returns", fn, st[1].recursion);
	EXPECT_EQ(0, st[1].dropped);
	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET, fn, NULL));
	n = drain(self->fd, self->recs, MAX_RECS);
	/*
	 * The clock is read after the outer capture unfroze LBR: the nested
	 * return froze it again and must undo that, or the next capture on
	 * that CPU finds LBR off.
	 */
	for (i = 0, mine = 0; i < (unsigned int)n; i++) {
		if (self->recs[i].h.target_id)
			continue;	/* the clock's own, under capture=all */
		mine++;
		EXPECT_FALSE(self->recs[i].h.flags & LBR_SNAP_REC_WAS_OFF)
			TH_LOG("record %u: LBR was left frozen", i);
	}
	EXPECT_EQ(10, mine) TH_LOG("%s", lbr_why);
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, unload());
}

struct churn {
	volatile int *stop;
	bool call;		/* call the target; else spin in user space */
};

static void *churn_thread(void *p)
{
	struct churn *c = p;
	volatile unsigned long spin = 0;

	while (!*c->stop) {
		if (c->call)
			trigger("int", -5, 50);
		else
			spin++;
	}
	return NULL;
}

/* The preemption model, from debugfs (PREEMPT_DYNAMIC kernels). */
static const char *preempt_model(char *buf, size_t len)
{
	FILE *f = fopen("/sys/kernel/debug/sched/preempt", "r");

	snprintf(buf, len, "unknown");
	if (f) {
		if (!fgets(buf, len, f))
			snprintf(buf, len, "unknown");
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * The freeze and the read on one CPU, with nothing in between: callers on
 * every CPU and as many user-space spinners compete for LBR_PREEMPT_SECONDS
 * (default 20; the lab guest suite boots with preempt=full and gives 60),
 * mode=raw.  Every record must hold the target's own return (an interrupt
 * or a move to another CPU between the freeze and the read would give a
 * record of another CPU's running LBR) and none may find LBR off (a CPU
 * left frozen); afterwards LBR is on on every CPU.
 */
TEST_F_TIMEOUT(fexit, preempted_storm_keeps_lbr_and_records_whole, 400)
{
	const char *env = getenv("LBR_PREEMPT_SECONDS");
	int secs = env ? atoi(env) : 20, ncpu = nr_cpus(), n, i, c;
	unsigned long long bit, val, t_end, recs = 0, bad_ret = 0, was_off = 0;
	unsigned long long site = 0;
	struct churn callers = { .call = true }, spinners = { .call = false };
	struct lbr_snap_info info;
	volatile int stop = 0;
	pthread_t th[128];
	unsigned int msr;
	char model[128];
	int nth = 0;

	ASSERT_EQ(0, load("targets=lbr_test_int/1@fexit capture=all mode=raw buffer_kb=1024"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &info));
	msr = ctl_msr_of(&info, &bit);
	if (!msr)
		SKIP(return, "no LBR here: %s", info.reason);
	TH_LOG("%d s, %d CPUs, preemption: %s", secs, ncpu,
	       preempt_model(model, sizeof(model)));
	callers.stop = spinners.stop = &stop;
	for (i = 0; i < ncpu && nth + 2 <= 128; i++) {
		ASSERT_EQ(0, pthread_create(&th[nth++], NULL, churn_thread, &callers));
		ASSERT_EQ(0, pthread_create(&th[nth++], NULL, churn_thread, &spinners));
	}
	t_end = now_ns() + secs * 1000000000ULL;
	while (now_ns() < t_end) {
		usleep(100 * 1000);
		n = drain(self->fd, self->recs, MAX_RECS);
		ASSERT_LE(0, n) TH_LOG("%s", lbr_why);
		/* The return site: where a record's return, the newest, lands. */
		for (i = 0; i < n && !site; i++) {
			const struct rec *r = &self->recs[i];

			if (r->h.nr_entries && !r->h.probe_entries &&
			    !(r->h.flags & LBR_SNAP_REC_NO_RETURN))
				site = r->br[r->h.nr_entries - 1].to;
		}
		for (i = 0; i < n; i++) {
			const struct rec *r = &self->recs[i];

			/*
			 * The newest entry lands on the trampoline's return
			 * site (the function's return, or the IRET of an
			 * interrupt that came just before the CLI): read
			 * anywhere else, the newest would be that CPU's own.
			 */
			bad_ret += !r->h.nr_entries ||
				   r->br[r->h.nr_entries - 1].to != site;
			was_off += !!(r->h.flags & LBR_SNAP_REC_WAS_OFF);
		}
		recs += n;
	}
	stop = 1;
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	TH_LOG("%llu records: %llu not ending at the return site, %llu found LBR off",
	       recs, bad_ret, was_off);
	EXPECT_LT(0ULL, recs);
	EXPECT_NE(0ULL, site) TH_LOG("no record with its return the newest entry");
	EXPECT_EQ(0ULL, was_off);
	EXPECT_EQ(0ULL, bad_ret);
	for (c = 0; c < ncpu; c++) {
		ASSERT_EQ(0, rdmsr_on(c, msr, &val))
			TH_LOG("modprobe msr: /dev/cpu/%d/msr", c);
		EXPECT_EQ(bit, val & bit) TH_LOG("cpu%d: LBR left off (%#x = %#llx)",
						 c, msr, val);
	}
}

/*
 * A function that already has a direct caller (here a BPF fexit program's
 * trampoline) is ftrace's to refuse: EBUSY, and auto takes a kretprobe.
 */
TEST_F(fexit, busy_when_bpf_has_the_function)
{
	static const char fn[] = "do_sys_openat2";
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct btf *btf = btf__load_vmlinux_btf();
	int id, prog, link, ret, i;
	__u32 hook = ~0u;

	if (!btf || libbpf_get_error(btf))
		SKIP(return, "no kernel BTF (/sys/kernel/btf/vmlinux)");
	id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC);
	btf__free(btf);
	if (id <= 0)
		SKIP(return, "no BTF for %s", fn);
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = BPF_TRACE_FEXIT,
		    .attach_btf_id = id);
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "lbr_busy", "GPL", insns,
			     2, &o);
	if (prog < 0)
		SKIP(return, "the kernel refuses a BPF fexit program (%d)", prog);
	link = bpf_raw_tracepoint_open(NULL, prog);
	ASSERT_LE(0, link) TH_LOG("attaching the BPF fexit program: %d", link);

	ASSERT_EQ(0, load("targets=lbr_test_long%long"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(-EBUSY, add_target(self->fd, "do_sys_openat2%long/3@fexit",
				     &hook));
	ASSERT_EQ(0, add_target(self->fd, "do_sys_openat2%long/3@auto", &hook));
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, hook);
	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET, fn, NULL));

	/* Once BPF lets go, the function is ours to take. */
	close(link);
	close(prog);
	for (i = 0; i < 100; i++) {
		ret = add_target(self->fd, "do_sys_openat2%long/3@fexit", &hook);
		if (ret != -EBUSY)
			break;
		usleep(20000);
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, hook);
}

/* Lines of the whole kernel log holding @text. */
static int kmsg_count(const char *text)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC), n = 0;
	char line[2048];
	ssize_t len;

	if (fd < 0)
		return -1;
	for (;;) {
		len = read(fd, line, sizeof(line) - 1);
		if (len < 0 && errno == EPIPE)
			continue;
		if (len <= 0)
			break;
		line[len] = '\0';
		n += !!strstr(line, text);
	}
	close(fd);
	return n;
}
