// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, reading: read() sizes, non-blocking and blocking reads,
 * poll, epoll and wakeup marks; many CPUs and many readers, overflow,
 * flush; rmmod while a reader sleeps.
 */

/* ---- read() semantics ---- */

TEST_F(cap, read_small_buffer_einval)
{
	char buf[LBR_SNAP_RECORD_MAX];
	const struct lbr_snap_record *h = (const void *)buf;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -5, 1));
	errno = 0;
	EXPECT_EQ(-1, read(self->fd, buf, sizeof(struct lbr_snap_record) - 1));
	EXPECT_EQ(EINVAL, errno);
	/* The record is still there for a big enough buffer. */
	ASSERT_LT(0, read(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(-5, h->retval);
}

TEST_F(cap, read_whole_records)
{
	char buf[3 * LBR_SNAP_RECORD_MAX];
	const struct lbr_snap_record *h = (const void *)buf;
	ssize_t len, size;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -5, 1));
	size = read(self->fd, buf, sizeof(buf));
	ASSERT_EQ(h->size, size);
	/* Room for one and a half records of that size gives exactly one. */
	ASSERT_EQ(0, trigger("int", -5, 2));
	len = read(self->fd, buf, size * 3 / 2);
	ASSERT_LT(0, len);
	EXPECT_EQ(h->size, len);
	EXPECT_GE(size * 3 / 2, len);
	len = read(self->fd, buf, sizeof(buf));
	EXPECT_EQ(1, parse(buf, len, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
}

TEST_F(cap, nonblock_eagain)
{
	char buf[LBR_SNAP_RECORD_MAX];

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	errno = 0;
	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
}

static void *late_trigger(void *p)
{
	usleep(300 * 1000);
	trigger("int", -7, 1);
	return NULL;
}

TEST_F(cap, blocking_read_waits)
{
	char buf[LBR_SNAP_RECORD_MAX];
	const struct lbr_snap_record *h = (const void *)buf;
	unsigned long long t0;
	pthread_t th;
	ssize_t len;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", 0);
	t0 = now_ns();
	ASSERT_EQ(0, pthread_create(&th, NULL, late_trigger, NULL));
	len = read(self->fd, buf, sizeof(buf));
	pthread_join(th, NULL);
	ASSERT_EQ(h->size, len);
	EXPECT_EQ(-7, h->retval);
	EXPECT_LE(250000000ULL, now_ns() - t0);
}

TEST_F(cap, poll_and_epoll)
{
	struct pollfd pfd;
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t th;
	int ep;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	pfd.fd = self->fd;
	pfd.events = POLLIN;
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, late_trigger, NULL));
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 10000));
	pthread_join(th, NULL);
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	EXPECT_EQ(1, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	close(ep);
}

/* After @delay_ms, @calls errors of lbr_test_int, from this thread's CPU. */
struct late_burst {
	int delay_ms;
	int calls;
	int ret;
	int done;	/* the calls are over */
};

static void *late_burst(void *p)
{
	struct late_burst *b = p;

	usleep(b->delay_ms * 1000);
	b->ret = trigger("int", -7, b->calls);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * LBR_SNAP_IOC_SET_WAKEUP: a descriptor with a mark is readable, and its
 * poller or epoll woken, only once a CPU's ring holds that many bytes;
 * records below it do not make it readable, while another descriptor
 * sees them at once.  A mark taken off while epoll holds the descriptor,
 * and a lower mark behind a higher one's exclusive wait, still wake.
 * Half a ring at most, only for reading.
 * (A record takes less room in the ring than read() gives: the ring holds
 * it as captured, so the test counts the records that reach the mark.)
 */
TEST_F(cap, poll_wakes_at_the_mark)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct pollfd pfd = { .events = POLLIN }, other = { .events = POLLIN };
	struct late_burst b = { 0 };
	const unsigned long mark = 4096;
	unsigned long long t0;
	int ep, fd, k;
	cpu_set_t one;
	int ret = 0;
	pthread_t th;

	/* Every record in one CPU's ring: a mark is a ring's. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	cap_load(_metadata, self, variant, "targets=lbr_test_int buffer_kb=64",
		 O_NONBLOCK);
	pfd.fd = self->fd;

	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_SET_WAKEUP, 32 * 1024UL + 1));
	EXPECT_EQ(EINVAL, errno);
	fd = open(LBR_SNAP_DEVICE, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, LBR_SNAP_IOC_SET_WAKEUP, 1024UL));
	EXPECT_EQ(EBADF, errno);
	close(fd);

	/*
	 * epoll holds it at the mark, then the mark is taken off (first,
	 * before any poll() published a lower one).
	 */
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_WAKEUP, mark));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_WAKEUP, 0UL));
	b.delay_ms = 300;
	b.calls = 1;
	t0 = now_ns();
	ASSERT_EQ(0, pthread_create(&th, NULL, late_burst, &b));
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 20000));
	EXPECT_GT(15000000000ULL, now_ns() - t0);
	pthread_join(th, NULL);
	ASSERT_EQ(0, b.ret);
	EXPECT_EQ(1, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	close(ep);

	/* k records reach the mark, one at a time; k - 1 do not. */
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_WAKEUP, mark));
	for (k = 1; k <= 200; k++) {
		ASSERT_EQ(0, trigger("int", -7, 1));
		if (poll(&pfd, 1, 0))
			break;
	}
	ASSERT_LT(1, k);
	ASSERT_GE(200, k);
	ASSERT_EQ(k, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	TH_LOG("%d records reach %lu bytes", k, mark);

	/*
	 * k - 1 records while it polls: not woken, not readable, until they
	 * are all in (however long they take), nor after.
	 */
	b.delay_ms = 100;
	b.calls = k - 1;
	b.done = 0;
	ASSERT_EQ(0, pthread_create(&th, NULL, late_burst, &b));
	while (!__atomic_load_n(&b.done, __ATOMIC_ACQUIRE)) {
		ret = poll(&pfd, 1, 50);
		if (ret)
			break;
	}
	EXPECT_EQ(0, ret) TH_LOG("woken below the mark");
	pthread_join(th, NULL);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, b.ret);
	other.fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, other.fd);
	EXPECT_EQ(1, poll(&other, 1, 0));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));

	/* The k-th wakes it, and epoll has it too. */
	b.delay_ms = 300;
	b.calls = 1;
	t0 = now_ns();
	ASSERT_EQ(0, pthread_create(&th, NULL, late_burst, &b));
	EXPECT_EQ(1, poll(&pfd, 1, 20000));
	/* Woken: not readable at the timeout, when poll() looks again. */
	t0 = now_ns() - t0;
	EXPECT_LE(250000000ULL, t0);
	EXPECT_GT(15000000000ULL, t0);
	pthread_join(th, NULL);
	ASSERT_EQ(0, b.ret);
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 5000));

	/* At 0, any record. */
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_WAKEUP, 0UL));
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(k, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	close(ep);

	/*
	 * Two marks, each descriptor in one epoll with EPOLLEXCLUSIVE, the
	 * higher one's wait first: the lower one's is woken all the same.
	 */
	ASSERT_EQ(0, ioctl(other.fd, LBR_SNAP_IOC_SET_WAKEUP, 2 * mark));
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_WAKEUP, mark));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	ev.data.fd = other.fd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, other.fd, &ev));
	ev.data.fd = self->fd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	b.calls = k;
	t0 = now_ns();
	ASSERT_EQ(0, pthread_create(&th, NULL, late_burst, &b));
	ev.data.fd = -1;
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 20000));
	EXPECT_EQ(self->fd, ev.data.fd);
	EXPECT_GT(15000000000ULL, now_ns() - t0);
	pthread_join(th, NULL);
	ASSERT_EQ(0, b.ret);
	close(ep);
	close(other.fd);
}

/* ---- many CPUs, many readers ---- */

struct producer {
	int cpu;
	long first;
	int count;
	int ret;
};

/* Pinned to @cpu, calls lbr_test_long(first + i), one write each. */
static void *produce(void *p)
{
	struct producer *pr = p;
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(pr->cpu, &set);
	pr->ret = sched_setaffinity(0, sizeof(set), &set);
	for (i = 0; i < pr->count && !pr->ret; i++)
		pr->ret = trigger("long", pr->first + i, 1);
	return NULL;
}

TEST_F_TIMEOUT(cap, merged_in_time_order_all_cpus, 300)
{
	int ncpu = nr_cpus(), per = 200, n, i, c;
	struct producer pr[64];
	pthread_t th[64];
	int seen[64] = { 0 };

	ASSERT_GE(64, ncpu);
	cap_load(_metadata, self, variant, "targets=lbr_test_long%long capture=all",
		 O_NONBLOCK);
	for (c = 0; c < ncpu; c++) {
		pr[c] = (struct producer){ c, 1000000L * (c + 1), per, 0 };
		ASSERT_EQ(0, pthread_create(&th[c], NULL, produce, &pr[c]));
	}
	for (c = 0; c < ncpu; c++) {
		pthread_join(th[c], NULL);
		EXPECT_EQ(0, pr[c].ret);
	}
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(ncpu * per, n)
		TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		const struct lbr_snap_record *h = &self->recs[i].h;

		if (i)
			EXPECT_LE(self->recs[i - 1].h.ts_ns, h->ts_ns);
		c = h->retval / 1000000L - 1;
		ASSERT_LE(0, c);
		ASSERT_GT(ncpu, c);
		/* Pinned producers: each record comes from its CPU. */
		EXPECT_EQ((unsigned int)c, h->cpu);
		EXPECT_EQ(1000000L * (c + 1) + seen[c], h->retval);
		seen[c]++;
	}
	for (c = 0; c < ncpu; c++)
		EXPECT_EQ(per, seen[c]);
}

struct reader {
	int fd;
	int want;
	int *total;
	pthread_mutex_t *lock;
	unsigned char *hits;	/* per value, how often read */
	long base;
	int bad;
	char why[sizeof(lbr_why)];	/* the first bad read or record */
};

#define READER_BUF	(8 * LBR_SNAP_RECORD_MAX)
#define READER_RECS	(READER_BUF / sizeof(struct lbr_snap_record))

/* Reads until every wanted record was seen by some reader, or 120 s. */
static void *consume(void *p)
{
	struct reader *r = p;
	char *buf = malloc(READER_BUF);
	struct rec *recs = calloc(READER_RECS, sizeof(*recs));
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	unsigned long long deadline = now_ns() + 120000000000ULL;
	ssize_t len;
	int n, i, done = !buf || !recs;

	while (!done) {
		poll(&pfd, 1, 100);
		len = read(r->fd, buf, READER_BUF);
		if (len < 0) {
			if (errno != EAGAIN && !r->bad++)
				snprintf(r->why, sizeof(r->why), "read: %s (errno %d)",
					 strerror(errno), errno);
			n = 0;
		} else {
			n = parse(buf, len, recs, READER_RECS);
			if (n < 0) {
				/* lbr_why is shared: the reason is approximate. */
				if (!r->bad++)
					snprintf(r->why, sizeof(r->why), "%s", lbr_why);
				n = 0;
			}
		}
		pthread_mutex_lock(r->lock);
		for (i = 0; i < n; i++) {
			long v = recs[i].h.retval - r->base;

			if (v < 0 || v >= r->want ||
			    recs[i].h.ret_type != LBR_SNAP_RET_LONG) {
				if (!r->bad++)
					snprintf(r->why, sizeof(r->why),
						 "record retval %lld ret_type %u",
						 recs[i].h.retval, recs[i].h.ret_type);
			} else {
				r->hits[v]++;
			}
		}
		*r->total += n;
		done = *r->total >= r->want || now_ns() > deadline;
		pthread_mutex_unlock(r->lock);
	}
	free(buf);
	free(recs);
	return NULL;
}

TEST_F_TIMEOUT(cap, concurrent_readers_whole_and_unique, 300)
{
	int ncpu = nr_cpus(), per = 300, want, total = 0, c, i;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct producer pr[64];
	struct reader rd[3];
	pthread_t pth[64], rth[3];
	unsigned char *hits;
	const long base = 5000000;

	/*
	 * Room for every record, so that nothing is dropped however late the
	 * readers run: 300 records of 32 LBR entries are about 250 KiB, the
	 * whole default buffer of a CPU (a loaded host once starved the
	 * readers and 10 of 600 were dropped).  Drops have their own test.
	 */
	cap_load(_metadata, self, variant,
		 "targets=lbr_test_long%long capture=all buffer_kb=1024",
		 O_NONBLOCK);
	want = ncpu * per;
	hits = calloc(want, 1);
	ASSERT_NE(NULL, hits);
	for (i = 0; i < 3; i++) {
		rd[i] = (struct reader){ self->fd, want, &total, &lock, hits,
					 base, 0, "" };
		ASSERT_EQ(0, pthread_create(&rth[i], NULL, consume, &rd[i]));
	}
	for (c = 0; c < ncpu; c++) {
		pr[c] = (struct producer){ c, base + c * per, per, 0 };
		ASSERT_EQ(0, pthread_create(&pth[c], NULL, produce, &pr[c]));
	}
	for (c = 0; c < ncpu; c++)
		pthread_join(pth[c], NULL);
	for (i = 0; i < 3; i++) {
		pthread_join(rth[i], NULL);
		EXPECT_EQ(0, rd[i].bad) TH_LOG("reader %d: %s", i, rd[i].why);
	}
	EXPECT_EQ(want, total) {
		struct lbr_snap_target_stats st[1];
		struct lbr_snap_stats hdr;

		if (!get_stats(self->fd, &hdr, st, 1))
			TH_LOG("captured %llu, dropped %llu, read %llu",
			       st[0].captured, st[0].dropped, hdr.read);
	}
	for (i = 0; i < want; i++)
		if (hits[i] != 1)
			break;
	EXPECT_EQ(want, i) TH_LOG("value %d read %d times", i, hits[i]);
	free(hits);
}

TEST_F_TIMEOUT(cap, overflow_is_counted_exactly, 300)
{
	struct lbr_snap_target_stats st[1];
	struct lbr_snap_stats hdr;
	int ncpu = nr_cpus(), c, n;
	const int per = 3000;

	cap_load(_metadata, self, variant,
		 "targets=lbr_test_long%long capture=all buffer_kb=8",
		 O_NONBLOCK);
	/* One write per CPU, each calling the target @per times. */
	for (c = 0; c < ncpu; c++) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(c, &set);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
		ASSERT_EQ(0, trigger("long", 42, per));
	}
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, 1));
	EXPECT_EQ((unsigned long long)ncpu * per, st[0].hits);
	EXPECT_LT(0, st[0].dropped) TH_LOG("an 8 KiB buffer should overflow");
	EXPECT_EQ(st[0].hits, st[0].captured + st[0].dropped);
	EXPECT_EQ(st[0].captured, (unsigned long long)n);
	EXPECT_EQ(hdr.read, (unsigned long long)n);
	/*
	 * A full buffer refuses records and never writes over one not yet
	 * read: each CPU's records come back once each, in the order they
	 * were taken (a ring that wrote over unread ones hands some back
	 * twice, or newer before older).
	 */
	for (c = 0; c < ncpu; c++) {
		unsigned long long last = 0;
		int i, seen = 0;

		for (i = 0; i < n; i++) {
			if (self->recs[i].h.cpu != (unsigned int)c)
				continue;
			EXPECT_LT(last, self->recs[i].h.ts_ns)
				TH_LOG("cpu%d: record %d of %d taken at %llu, after one taken at %llu",
				       c, i, n,
				       (unsigned long long)self->recs[i].h.ts_ns,
				       last);
			last = self->recs[i].h.ts_ns;
			seen++;
		}
		EXPECT_LT(0, seen) TH_LOG("cpu%d: no record", c);
	}
	TH_LOG("produced %llu, read %d, dropped %llu",
	       (unsigned long long)st[0].hits, n,
	       (unsigned long long)st[0].dropped);
	/*
	 * The records read were taken before the buffer filled: none says
	 * records were dropped before it.  Each CPU's next record does (its
	 * buffer refused some since its previous one), the one after not.
	 */
	for (c = 0; c < n; c++)
		EXPECT_FALSE(self->recs[c].h.flags & LBR_SNAP_REC_AFTER_DROP)
			TH_LOG("record %d of %d, before any drop, says one", c, n);
	for (c = 0; c < ncpu; c++) {
		cpu_set_t set;
		int i, seen = 0;

		CPU_ZERO(&set);
		CPU_SET(c, &set);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
		ASSERT_EQ(0, trigger("long", 42, 2));
		n = drain(self->fd, self->recs, MAX_RECS);
		for (i = 0; i < n; i++) {
			if (self->recs[i].h.cpu != (unsigned int)c)
				continue;
			EXPECT_EQ(seen == 0,
				  !!(self->recs[i].h.flags & LBR_SNAP_REC_AFTER_DROP))
				TH_LOG("cpu%d: its record %d after the drops says %s",
				       c, seen, seen ? "dropped" : "none");
			seen++;
		}
		EXPECT_EQ(2, seen) TH_LOG("cpu%d: %d records of 2", c, seen);
	}
}

TEST_F(cap, flush_discards_and_counts)
{
	struct lbr_snap_target_stats st[1];
	struct lbr_snap_stats hdr;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -1, 10));
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_FLUSH));
	EXPECT_EQ(0, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, 1));
	EXPECT_EQ(10, hdr.flushed);
	EXPECT_EQ(0, hdr.read);
	EXPECT_EQ(10, st[0].captured);
	EXPECT_EQ(-ENOTTY, ioctl(self->fd, _IO(LBR_SNAP_IOC_MAGIC, 99)) ? -errno : 0);
}

/* ---- unloading ---- */

struct blocked {
	int fd;
	pid_t tid;
	ssize_t len;
	long retval;
};

static bool stack_shows(pid_t tid, const char *fn, int ms);

static void *blocked_read(void *p)
{
	struct blocked *b = p;
	char buf[LBR_SNAP_RECORD_MAX];

	__atomic_store_n(&b->tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	b->len = read(b->fd, buf, sizeof(buf));
	if (b->len > 0)
		b->retval = ((struct lbr_snap_record *)buf)->retval;
	return NULL;
}

TEST_F(cap, rmmod_with_blocked_reader)
{
	struct blocked b = { 0 };
	pthread_t th;
	int ret;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", 0);
	b.fd = self->fd;
	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_read, &b));
	while (!__atomic_load_n(&b.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* The reader sleeps in the module's read. */
	ASSERT_TRUE(stack_shows(b.tid, "lbr_buf_read", 10000));
	/* The open file pins the module: rmmod refuses, the reader sleeps on. */
	ret = syscall(SYS_delete_module, "lbr_snap", O_NONBLOCK);
	EXPECT_EQ(-1, ret);
	EXPECT_TRUE(errno == EBUSY || errno == EAGAIN) TH_LOG("errno %d", errno);
	EXPECT_TRUE(stack_shows(b.tid, "lbr_buf_read", 1));
	EXPECT_EQ(0, __atomic_load_n(&b.len, __ATOMIC_RELAXED));
	ASSERT_EQ(0, trigger("int", -3, 1));
	pthread_join(th, NULL);
	EXPECT_LT(0, b.len);
	EXPECT_EQ(-3, b.retval);
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, syscall(SYS_delete_module, "lbr_snap", O_NONBLOCK));
}
