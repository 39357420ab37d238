#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: every suite of lbr_snap, summed into one last line
# "N passed, N failed, N skipped".
#
# Host suites: the package list against the scripts, the kernel-log gate
# and the TAP plans on crafted input, W=1 build, checkpatch and the
# checks of tests/selftests/lbr_test_agnostic.h and tests/COVERAGE.md,
# freeze-first disassembly check, the selftests' helpers, the tool's, the
# decoder's and the ring's unit tests.  Guest suites (QEMU TCG, Debian's
# kernel): the kselftests with -smp 4 on the stock CPU, the DKMS round
# trip; the Debian packages' round trip in a Debian 12 root.  LBR lab (tests/lbr-lab): build its QEMU, its proofs, the
# kselftests on its legacy and Arch LBR CPUs, where nothing skips for
# want of LBR, the tool; then on a lab CPU too: sid's 7.2 (call depth
# tracking on), bullseye's 5.10 and trixie's 6.12, the debug kernel
# (KASAN, lockdep, kmemleak), and the stress suite (load/unload storm,
# runtime and fexit churn) on both kernels; the selftests on the lab's
# PMU CPUs (perfmon 4 and 3, Arch LBR with XSAVES, AMD) and the AMD CPU
# without PMU.  What each test checks, and where: tests/COVERAGE.md.
# SUITES="a b" runs a subset (names as printed in "== suite").
set -uo pipefail
. "$(dirname "$0")/vm/lib.sh"
. "$(dirname "$0")/tap-count.sh"

pass=0 fail=0 skip=0 ran=0
log=$LBR_BUILD/check-logs
mkdir -p "$log"

# Add a suite's TAP totals (tests/tap-count.sh: a suite that died without
# totals, or printed fewer results than its plan, fails).
# Every failure is also kept for a recap just above the last line: CI
# shows only the end of a run, and a "2 failed" there must say which.
recap=()
# Each "not ok" line of a TAP log with its reasons: the "# " lines after it
# (tests/unit's style) and the lines since its kselftest "#  RUN" (the
# harness's file:line messages, the guest's kernel log), at most 6 each,
# cut at 200 characters.
failures() {	# $1 = log
	tr -d '\r' <"$1" | awk '
	function keep(l) { buf[n % 6] = l; n++ }
	/^#  RUN / { n = 0; reasons = 0; next }
	/^not ok / {
		print
		for (i = (n > 6 ? n - 6 : 0); i < n; i++)
			print "  | " substr(buf[i % 6], 1, 200)
		n = 0; reasons = 1; after = 6; next
	}
	/^#  +(OK|FAIL) / || /^# (FAILED|PASSED):/ || /^$/ { next }
	reasons && /^# / && !/^# Totals/ {
		if (after-- > 0)
			print "  | " substr($0, 1, 200)
		next
	}
	{ reasons = 0 }
	/^ok / || /^# Totals/ { n = 0; next }
	{ keep($0) }'
}
# A guest kernel's first oops, what a crash report needs of it: its
# header (a die's "[#1]", BUG:, KASAN:, UBSAN:), the process, RIP, and the
# call trace without the guesses ("? "), at most 40 lines.  Before the
# tail of a guest that died, which holds the panic's register dump only.
# Kernel lines only (a timestamp, relayed with "# " by tool-vm.sh): a
# test's name that quotes an oops does not start one.
oops() {	# $1 = log
	tr -d '\r' <"$1" | sed -n 's/^\(# \)\{0,1\}\[ *[0-9.]*\] //p' | awk '
	!on && /\[#[0-9]+\]|BUG:|kernel BUG at|KASAN:|UBSAN:/ { on = 1 }
	!on { next }
	n && (/^---\[ end trace/ || /^=+$/) || n >= 40 { exit }
	/\[#[0-9]+\]|BUG:|kernel BUG at|KASAN:|UBSAN:|^CPU:|^RIP:|^Call Trace:|^ *<\/?[A-Z]+>$/ ||
	/^ *[A-Za-z_.$][A-Za-z0-9_.$]*\+0x[0-9a-f]+\/0x[0-9a-f]+( \[[A-Za-z0-9_]+\])?$/ {
		print "oops: " substr($0, 1, 190); n++
	}'
}
count() {	# $1 = suite name, $2 = exit status, $3 = output file
	local own line
	# tap_count's own "not ok" lines (a short plan, no result): shown
	# here, and kept for the recap with the suite's.
	own=$(tap_count "$@"
	      echo "=counts $TAP_PASS $TAP_FAIL $TAP_SKIP")
	read -r _ TAP_PASS TAP_FAIL TAP_SKIP < <(grep -a '^=counts ' <<<"$own")
	own=$(grep -av '^=counts ' <<<"$own")
	[ -n "$own" ] && echo "$own"
	echo "== $1: $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped ($(($(date +%s) - start))s)"
	if [ "$TAP_FAIL" != 0 ]; then
		while IFS= read -r line; do
			recap+=("$1: ${line%$'\r'}")
		done < <(failures "$3"; [ -n "$own" ] && echo "$own")
		# A suite that stopped short (a guest that hung, or died):
		# what it printed last, for a run of which CI shows the end.
		if grep -q 'no # Totals after them\|printed no TAP result' <<<"$own"; then
			while IFS= read -r line; do
				recap+=("$1:   | ${line%$'\r'}")
			done < <(oops "$3"; grep -av '^$' "$3" | tail -n 15 | cut -c1-200)
		fi
	fi
	ran=$((ran + 1))
	pass=$((pass + TAP_PASS)) fail=$((fail + TAP_FAIL)) skip=$((skip + TAP_SKIP))
}

# Every suite, in order; SUITES= may name only these, and suite() runs
# only these, so a name cannot be mistyped into running nothing.
ALL_SUITES="deps log-gate plan-gate build make-clean style freeze-first helpers tool-unit decode-unit ring-unit ret-class-unit
	guest-smp4 dkms-roundtrip deb-roundtrip lab-qemu lab-proofs
	guest-lbr-legacy guest-lbr-arch tool-guest guest-sid-7.2 guest-5.10
	guest-6.12 guest-debug freeze-first-debug guest-debug-stress
	guest-stress guest-nested guest-lbr-pmu3 guest-lbr-legacy-pmu
	guest-lbr-arch-pmu guest-lbr-amd guest-lbr-amd-nopmu why-scenarios-legacy
	why-scenarios-arch guest-lbr-quirks guest-lbr-arch-nofilter"
# The suites that boot a lab CPU: without the lab's QEMU they fail.
LAB_SUITES="lab-proofs guest-lbr-legacy guest-lbr-arch tool-guest
	guest-sid-7.2 guest-5.10 guest-6.12 guest-debug guest-debug-stress
	guest-stress guest-nested guest-lbr-pmu3 guest-lbr-legacy-pmu
	guest-lbr-arch-pmu guest-lbr-amd guest-lbr-amd-nopmu why-scenarios-legacy
	why-scenarios-arch guest-lbr-quirks guest-lbr-arch-nofilter"
SUITES=$(echo ${SUITES:-})	# blanks of any kind between names
for s in $SUITES; do
	[[ " $(echo $ALL_SUITES) " == *" $s "* ]] ||
		{ echo "make check: no suite '$s' (SUITES=); the suites: $(echo $ALL_SUITES)"
		  echo "0 passed, 1 failed, 0 skipped"; exit 2; }
done
want() { [ -z "$SUITES" ] || [[ " $SUITES " == *" $1 "* ]]; }

suite() {	# $1 = name, then the command
	local name=$1 rc
	shift
	[[ " $(echo $ALL_SUITES) " == *" $name "* ]] || die "suite $name is not in ALL_SUITES"
	want "$name" || return 0
	echo "== $name"
	start=$(date +%s)
	"$@" 2>&1 | tee "$log/$name.log"
	rc=${PIPESTATUS[0]}
	count "$name" "$rc" "$log/$name.log"
}

# A single-threaded TCG guest keeps one host core busy: two lanes of such
# suites run side by side (suite_bg), their output shown and counted, in
# order, at suite_join.  Each argument is one job (a name and a command without
# quoting: wrap anything longer in a function); a lane runs its jobs one
# after another.
bg_jobs=()
suite_bg() {	# "name command..." per argument, run in that order
	local job
	for job in "$@"; do
		job=${job%% *}
		[[ " $(echo $ALL_SUITES) " == *" $job "* ]] ||
			die "suite $job is not in ALL_SUITES"
	done
	# Never a previous run's files: a job that dies before writing its
	# status is a failure (suite_join), not an old pass.
	for job in "$@"; do
		rm -f "$log/${job%% *}".{log,rc,start,end}
	done
	(
		for job in "$@"; do
			want "${job%% *}" || continue
			echo "$(date +%s)" >"$log/${job%% *}.start"
			# shellcheck disable=SC2086
			${job#* } >"$log/${job%% *}.log" 2>&1
			echo $? >"$log/${job%% *}.rc"
			echo "$(date +%s)" >"$log/${job%% *}.end"
		done
	) &
	bg_jobs+=("$!")
}
suite_join() {	# suite names, in the order to report them
	local pid name
	for pid in "${bg_jobs[@]}"; do
		wait "$pid"
	done
	bg_jobs=()
	for name in "$@"; do
		want "$name" || continue
		echo "== $name (run beside another)"
		cat "$log/$name.log" 2>/dev/null
		# count's time is now - start: the job's own, not its lane's.
		start=$(cat "$log/$name.start" 2>/dev/null || date +%s)
		end=$(cat "$log/$name.end" 2>/dev/null || date +%s)
		start=$((start + $(date +%s) - end))
		count "$name" "$(cat "$log/$name.rc" 2>/dev/null || echo 1)" \
			"$log/$name.log"
	done
}

t_check=$(date +%s)
# The host's CPU time over the run (/proc/stat: all but idle and iowait,
# in clock ticks): how much of the cores make check kept busy.
cpu_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
busy_check=$(cpu_busy)
# Everything make check needs, in one apt-get run (tests/deps/packages).
"$LBR_TOP/tests/deps/install.sh" build kernel guest debug-kernel dkms deb deb-test lab-build lab-run ||
	{ echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# The guest kernel (lbr_guest_kver, but a failure still ends with totals).
kver=${KVER:-$("$LBR_TOP/tests/vm/kernel.sh" bookworm)} ||
	{ echo "not ok - fetching the guest kernel (tests/vm/kernel.sh bookworm)"
	  echo "0 passed, 1 failed, 0 skipped"; exit 1; }
ks=$(lbr_kernel_source_files)

# What the later suites need and take minutes to make from nothing (the lab
# QEMU, the other releases' kernels, the debug kernel: about 15 minutes on
# a new machine), made in the background, niced, while the first suites'
# guests use one core.  Each script takes its cache's lock, so a suite that
# gets there first waits for it; a prefetch that fails is done again, and
# reported, by the suite.  Its log: check-logs/prefetch.log.
prefetch() {
	local rel
	if want lab-qemu || [ -n "$need_lab" ]; then
		"$LBR_TOP/tests/lbr-lab/build.sh" >/dev/null
	fi
	for rel in "sid guest-sid-7.2" "bullseye guest-5.10" "trixie guest-6.12"; do
		want "${rel#* }" && "$LBR_TOP/tests/vm/kernel.sh" "${rel%% *}"
	done
	# The why scenarios' -dbg vmlinux (some 860 MB and 1.2 GB to fetch).
	if want why-scenarios-legacy || want why-scenarios-arch; then
		"$LBR_TOP/tests/vm/dbg-vmlinux.sh" >/dev/null
		"$LBR_TOP/tests/vm/dbg-vmlinux.sh" \
			"$("$LBR_TOP/tests/vm/kernel.sh" sid)" >/dev/null
	fi
	if want guest-debug || want freeze-first-debug || want guest-debug-stress; then
		"$LBR_TOP/tests/vm/debug-kernel.sh"
	fi
}
need_lab=
for s in $LAB_SUITES; do want "$s" && need_lab=1; done
prefetch_pid=
if [ -z "${LBR_NO_PREFETCH:-}" ]; then
	# Its own process group (setsid), so that the trap stops its makes too.
	LBR_TOP=$LBR_TOP SUITES=$SUITES need_lab=$need_lab setsid nice -n 10 bash -c \
		"$(declare -f want prefetch)"'
		t0=$(date +%s)
		prefetch
		echo "prefetch: done in $(($(date +%s) - t0)) s"' \
		>"$log/prefetch.log" 2>&1 &
	prefetch_pid=$!
	# Never left running after make check, whatever ends it.
	trap '[ -z "$prefetch_pid" ] || kill -- "-$prefetch_pid" 2>/dev/null' EXIT
fi

build() {
	if bin=$("$LBR_TOP/tests/vm/build.sh" "$kver"); then
		echo "ok - lbr_snap.ko and the test target build with W=1 and no warnings ($kver)"
	else
		echo "not ok - W=1 module build for $kver"
		return 1
	fi
}

style() {
	local out
	out=$(cd "$LBR_TOP" && perl "$ks/scripts/checkpatch.pl" --no-tree --terse \
		-f src/*.c src/*.h src/*.S include/*.h 2>&1)
	if grep -q 'ERROR:' <<<"$out"; then
		grep 'ERROR:' <<<"$out"
		echo "not ok - checkpatch --no-tree -f: errors in src/ and include/"
		return 1
	fi
	echo "ok - checkpatch --no-tree -f: no errors in src/ and include/"
	grep 'WARNING:' <<<"$out" | cut -d: -f1 | sort | uniq -c |
		sed 's/^ *\([0-9]*\) \(.*\)/# \2: \1 warnings/'
	local rc=0
	agnostic || rc=1
	coverage || rc=1
	return $rc
}

# The tests the lab CPUs of 6.1 leave out never look at the LBR
# (tests/selftests/agnostic.py); listing one that does, or one that is
# not there, fails the check.
agnostic() {
	local d=$LBR_TOP/tests/selftests t out rc
	if out=$(python3 "$d/agnostic.py"); then
		echo "ok - lbr_test_agnostic.h: $(grep -c '^ok' <<<"$out") tests that never look at the LBR"
	else
		grep '^not ok' <<<"$out" | sed 's/^not ok [0-9]* - /# /'
		echo "not ok - lbr_test_agnostic.h lists tests that look at the LBR"
		return 1
	fi
	t=$(mktemp)
	sed 's/^\t"lost\.failed_detach_keeps_the_trampoline",/&\n\t"cap.error_path_branches",\n\t"cap.no_such_test",/' \
		"$d/lbr_test_agnostic.h" >"$t"
	out=$(python3 "$d/agnostic.py" "$d/lbr_snap_test.c" "$t")
	rc=$?
	rm -f "$t"
	if [ "$rc" != 0 ] &&
	   grep -q 'not ok .* cap.error_path_branches listed as LBR-agnostic: looks at the LBR' <<<"$out" &&
	   grep -q 'not ok .* cap.no_such_test listed as LBR-agnostic: no such test' <<<"$out"; then
		echo "ok - agnostic.py: a listed test that looks at the LBR, or is not there, fails"
	else
		echo "not ok - agnostic.py passed a crafted list with an LBR test and a missing one"
		return 1
	fi
}

# tests/COVERAGE.md names only tests that are there, and every kselftest
# (tests/coverage.py); a crafted copy naming a test and a case that are
# not there, and one leaving a kselftest out, must each fail the check.
coverage() {
	local d=$LBR_TOP/tests t out rc=0
	if out=$(python3 "$d/coverage.py"); then
		echo "ok - COVERAGE.md: every test it names is there, every kselftest named ($(sed -n 's/^# //p' <<<"$out"))"
	else
		grep '^not ok' <<<"$out" | sed 's/^not ok - /# /'
		echo "not ok - COVERAGE.md names a test that is not there, or leaves a kselftest out"
		rc=1
	fi
	t=$(mktemp)
	# The backquotes are COVERAGE.md's, not the shell's.
	# shellcheck disable=SC2016
	sed 's/`cap\.record_fields`/&, `cap.no_such_test`, `unit\/run.sh: no such case here`/' \
		"$d/COVERAGE.md" >"$t"
	if ! out=$(python3 "$d/coverage.py" "$t") &&
	   grep -q '^not ok .* cap\.no_such_test: no such kselftest' <<<"$out" &&
	   grep -q '^not ok .* unit/run\.sh: no such case here: no such case in tests/unit/run\.sh' <<<"$out"; then
		echo "ok - coverage.py: a test or a case COVERAGE.md names that is not there fails"
	else
		echo "not ok - coverage.py passed a crafted COVERAGE.md naming a test and a case that are not there"
		rc=1
	fi
	# shellcheck disable=SC2016
	sed -E 's/`cap\.record_fields`(, )?//g' "$d/COVERAGE.md" >"$t"
	if ! out=$(python3 "$d/coverage.py" "$t") &&
	   grep -q '^not ok - cap\.record_fields (tests/selftests/lbr_snap_test/records\.c) is not in' <<<"$out"; then
		echo "ok - coverage.py: a kselftest COVERAGE.md leaves out fails"
	else
		echo "not ok - coverage.py passed a crafted COVERAGE.md without cap.record_fields"
		rc=1
	fi
	rm -f "$t"
	return $rc
}

suite deps "$LBR_TOP/tests/deps/check.sh"
suite log-gate "$LBR_TOP/tests/vm/test-log-gate.sh"
suite plan-gate "$LBR_TOP/tests/test-plan.sh"
suite build build
bin=$LBR_BUILD/$kver
export LBR_PREBUILT=1	# the guests below use this build
make_clean() {
	local kdir
	kdir=$(lbr_host_kdir "$kver") ||
		{ echo "not ok - no headers of $kver for the host's gcc"; return 1; }
	"$LBR_TOP/tests/make-clean.sh" "$kdir"
}
suite make-clean make_clean
suite style style
suite freeze-first "$LBR_TOP/tests/freeze-first/run.sh" "$bin/lbr_snap.ko" \
	"$bin/lbr_snap_fexit.ko"
# The helpers, then the harness rule: a crafted test that fails an EXPECT
# and then SKIPs must be reported failed (lbr_test_filter.h).
helpers() {
	local out rc
	"$bin/lbr_snap_helpers_test" || return 1
	out=$(LBR_TESTS=crafted_skip_after_failure "$bin/lbr_snap_helpers_test" 2>&1)
	rc=$?
	# Its own TAP stream: the suite is counted from the totals.
	echo "1..1"
	if [ "$rc" != 0 ] &&
	   grep -q '^not ok 1 global.crafted_skip_after_failure' <<<"$out" &&
	   ! grep -q '# SKIP' <<<"$out"; then
		echo "ok 1 - harness: a SKIP after a failed EXPECT reports the failure"
		echo "# Totals: pass:1 fail:0 skip:0"
	else
		echo "not ok 1 - harness: a SKIP after a failed EXPECT (exit $rc):"
		sed 's/^/#   /' <<<"$out" | tail -n 12
		echo "# Totals: pass:0 fail:1 skip:0"
		return 1
	fi
}
suite helpers helpers
suite tool-unit "$LBR_TOP/tests/unit/run.sh"
suite decode-unit bash "$LBR_TOP/tests/unit/decode.sh"
suite ring-unit bash "$LBR_TOP/tests/unit/ring.sh"
suite ret-class-unit bash "$LBR_TOP/tests/unit/ret_class.sh"

# A guest's output goes through tests/guest/check-report.py, which checks
# the selftest report the kselftest scripts end with.
vm() {
	"$LBR_TOP/tests/vm/run-vm.sh" --kver "$kver" "$@" |
		"$LBR_TOP/tests/guest/check-report.py" "$@"
}
# The stock CPU (no LBR: backend none, the "nolbr" trampolines), with 4
# vCPUs for the tests that race CPUs; 2 vCPUs run in every lane below.
suite guest-smp4 vm --smp 4 --script "$LBR_TOP/tests/guest/selftests.sh"
suite dkms-roundtrip "$LBR_TOP/tests/dkms/roundtrip.sh"
# make deb, lintian, and the packages installed, DKMS-built for two
# kernels' headers (the second through AUTOINSTALL) and purged in a
# Debian 12 root (tests/deb/roundtrip.sh; nothing on the host's dpkg).
suite deb-roundtrip "$LBR_TOP/tests/deb/roundtrip.sh"

lab_qemu() {
	local t0=$(date +%s) q
	if q=$("$LBR_TOP/tests/lbr-lab/build.sh" | tail -n1) && [ -x "$q" ]; then
		echo "ok - LBR lab QEMU ready in $(($(date +%s) - t0))s: $q"
		echo "$q" >"$log/lab-qemu.path"
	else
		echo "not ok - building the LBR lab QEMU"
		return 1
	fi
	lab_build_failure
}

# A build that fails keeps its log and shows its last lines (once it was
# deleted before anyone could read it): make configure fail in a scratch
# cache, with the source package already fetched.
lab_build_failure() {
	local tmp out rc
	tmp=$(mktemp -d)
	out=$(LBR_SNAP_CACHE=$tmp LBR_LAB_SRC_CACHE=$LBR_CACHE/lbr-lab/src \
		LBR_LAB_CONFIGURE_EXTRA=--enable-lbr-snap-no-such-option \
		"$LBR_TOP/tests/lbr-lab/build.sh" 2>&1)
	rc=$?
	if [ "$rc" != 0 ] &&
	   grep -q 'unknown option --enable-lbr-snap-no-such-option' "$tmp/lbr-lab/build-failed.log" &&
	   grep -q "log is kept in $tmp/lbr-lab/build-failed.log" <<<"$out" &&
	   grep -q '^  ERROR: unknown option --enable-lbr-snap-no-such-option' <<<"$out" &&
	   ! ls -d "$tmp"/lbr-lab/*.tmp.* >/dev/null 2>&1; then
		echo "ok - a failed lab build exits $rc, keeps build-failed.log and prints its end"
	else
		echo "not ok - a failed lab build (exit $rc) did not keep or show its log:"
		sed 's/^/#   /' <<<"$out" | tail -n 15
		rc=0
	fi
	rm -rf "$tmp"
	[ "$rc" != 0 ]
}
rm -f "$log/lab-qemu.path"	# never a previous run's
suite lab-qemu lab_qemu
if ! want lab-qemu && [ -n "$need_lab" ]; then
	q=$("$LBR_TOP/tests/lbr-lab/build.sh" | tail -n1) && [ -x "$q" ] &&
		echo "$q" >"$log/lab-qemu.path"
fi
if [ ! -s "$log/lab-qemu.path" ]; then
	# No lab QEMU: its suites fail, they do not vanish.
	for s in $LAB_SUITES; do
		want "$s" || continue
		echo "not ok - $s: not run, no LBR lab QEMU"
		fail=$((fail + 1))
	done
else
	export LBR_LAB_QEMU=$(cat "$log/lab-qemu.path")
	# The lab's proofs boot one single-vCPU guest after another: one
	# host core, so they run in a lane (below).
	# They prove the lab, not lbr_snap: they run when the lab QEMU (its
	# cache directory names its Debian version and the hash of its
	# patches and build script), the proofs or the guest kernel they
	# boot differ from what tests/lbr-lab/proven records as proven
	# (LBR_LAB_PROOFS=1 runs them anyway), and say what to record.
	lab_key() {
		local files
		files=$(git -C "$LBR_TOP" ls-files tests/lbr-lab 2>/dev/null |
			grep -v -e '/README.md$' -e '^tests/lbr-lab/proven$') &&
			[ -n "$files" ] || return 1
		{
			basename "$(dirname "$LBR_LAB_QEMU")"
			echo "$kver"
			(cd "$LBR_TOP" && sha256sum $files)
		} | sha256sum | cut -c1-16
	}
	lab_proofs() {
		local key want
		key=$(lab_key) || key=
		want=$(cat "$LBR_TOP/tests/lbr-lab/proven" 2>/dev/null) || want=
		if [ -n "$key" ] && [ "$key" = "$want" ] &&
		   [ "${LBR_LAB_PROOFS:-}" != 1 ]; then
			echo "ok - # SKIP lab proofs: the lab QEMU, the proofs and the guest kernel are those proven at $key (tests/lbr-lab/proven; LBR_LAB_PROOFS=1 runs them)"
			return 0
		fi
		make -s -C "$LBR_TOP/tests/lbr-lab" check || return 1
		if [ -n "$key" ] && [ "$key" != "$want" ]; then
			echo "# lab proofs passed at $key: record it (echo $key >tests/lbr-lab/proven) and they run again only when that changes"
		fi
	}
	# The LBR tests only: mode=raw's run of the others is guest-debug's
	# (6.1 on the same CPU, under the checkers), mode=perf's is
	# guest-lbr-legacy-pmu's, backend none's guest-smp4's.
	suite guest-lbr-legacy vm --smp 4 --cpu lbr-legacy \
		--append "preempt=full LBR_PREEMPT_SECONDS=60 LBR_TESTS_LBR_ONLY=1" \
		--script "$LBR_TOP/tests/guest/selftests.sh"
	suite tool-guest "$LBR_TOP/tests/guest/tool-vm.sh" stock lbr-legacy

	# Another release's kernel (tests/vm/kernel.sh RELEASE: Debian's
	# image and headers unpacked into .cache/matrix/RELEASE, the modules
	# built with W=1 in its chroot or with the host's gcc), booted with
	# the suite on each CPU named.
	release_guest() {	# $1 = release, then --cpu values, then -- args
		local rel=$1 kv cpu rc=0 cpus=()
		shift
		while [ $# -gt 0 ] && [ "$1" != -- ]; do cpus+=("$1"); shift; done
		shift
		kv=$("$LBR_TOP/tests/vm/kernel.sh" "$rel") ||
			{ echo "not ok - fetching Debian $rel's kernel"; return 1; }
		for cpu in "${cpus[@]}"; do
			echo "# $rel ($kv) on CPU $cpu"
			LBR_PREBUILT='' "$LBR_TOP/tests/vm/run-vm.sh" --kver "$kv" \
				--cpu "$cpu" "$@" |
				"$LBR_TOP/tests/guest/check-report.py" \
					--cpu "$cpu" "$@" || rc=1
		done
		return $rc
	}
	# Debian sid's kernel (7.2 when written; rename the suite when sid
	# moves on), on the lab's Skylake with retbleed=stuff: call depth
	# tracking on, which 7.2 has and 6.1 does not
	# (fexit.call_depth_accounted_once), and the LBR path on 7.2.
	# sid's and trixie's kernels run single-threaded TCG: with one host
	# thread per vCPU, both have died of an int3 oops in sched_clock_cpu
	# (a static key patched while the other vCPU ran the old code), 6.12
	# once at boot before any module was loaded.
	guest_sid() {
		release_guest sid lbr-legacy -- --smp 2 --accel tcg,thread=single \
			--append "spectre_v2=retpoline retbleed=stuff LBR_EXPECT_STUFFING=1" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# The oldest and the newest stable kernel the README promises, each on
	# a lab CPU (backend none runs on 6.1's stock CPU, guest-smp4); a
	# shorter fuzzer run.  5.10 single-threaded too: with one host thread per vCPU its stock guest
	# once stopped for good at the test after the 103rd (an fexit target
	# loaded and unloaded: text patching, as in the oopses above), and
	# ran into run-vm's timeout.
	# 5.10 has no ftrace_ops of many direct calls: each function of a
	# batch has a trampoline of its own (256 in all), registered one by
	# one, so a smaller batch.scale.
	guest_5_10() {
		release_guest bullseye lbr-legacy -- --smp 2 --accel tcg,thread=single \
			--append "LBR_FUZZ_OPS=5000 LBR_BATCH_MAX=200" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	guest_6_12() {
		release_guest trixie lbr-arch -- --smp 2 --accel tcg,thread=single \
			--append LBR_FUZZ_OPS=5000 \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}

	# The debug kernel (KASAN, lockdep, kmemleak, atomic-sleep and RCU
	# checks; tests/vm/debug.config) built from Debian's linux-source and
	# cached: about 12 minutes on 2 cores the first time (the prefetch
	# above starts it early).  Any report fails the run.  On the lab's
	# CPUs, so that the LBR path (freeze, read, unfreeze, hotplug, the
	# fexit freeze) runs under the checkers.
	guest_debug() {
		local kv
		kv=$("$LBR_TOP/tests/vm/debug-kernel.sh") ||
			{ echo "not ok - building the debug kernel"; return 1; }
		LBR_PREBUILT='' "$LBR_TOP/tests/vm/run-vm.sh" --kver "$kv" --smp 2 \
			--timeout 2400 "$@" |
			"$LBR_TOP/tests/guest/check-report.py" "$@"
	}
	# The fuzzer runs three times longer there (20000 operations elsewhere);
	# suspend to RAM must run (the resume path under the checkers).
	guest_debug_selftests() {
		guest_debug --cpu lbr-legacy \
			--append "LBR_FUZZ_OPS=60000 LBR_EXPECT_SUSPEND=1" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# The freeze-first check again on the debug kernel's build, where KASAN
	# and UBSAN instrument what Kbuild does not exempt.
	freeze_first_debug() {
		local kv b
		kv=$("$LBR_TOP/tests/vm/debug-kernel.sh") ||
			{ echo "not ok - building the debug kernel"; return 1; }
		b=$("$LBR_TOP/tests/vm/build.sh" "$kv") ||
			{ echo "not ok - building lbr_snap for $kv"; return 1; }
		"$LBR_TOP/tests/freeze-first/run.sh" "$b/lbr_snap.ko" \
			"$b/lbr_snap_fexit.ko"
	}
	# 250 fexit attach/detach cycles on the debug kernel (about 0.9 s
	# each there: 1000 took 889 s of a lane), 50 in guest-stress; then
	# every function of the debug kernel that can return an error (some
	# 7,900, up to 10,000) attached at once, made to capture, detached
	# (tests/guest/mass-attach.sh; about 3 minutes).
	guest_debug_stress() {
		local rc=0

		guest_debug --cpu lbr-arch --accel tcg,thread=single \
			--append LBR_FEXIT_CYCLES=250 \
			--script "$LBR_TOP/tests/guest/stress.sh" || rc=1
		# Single-threaded TCG, as for every guest that patches text
		# by the thousand: multi-threaded, a vCPU can spin on an int3
		# already undone while the patching CPU waits for it.
		guest_debug --cpu lbr-legacy --accel tcg,thread=single \
			--script "$LBR_TOP/tests/guest/mass-attach.sh" || rc=1
		return $rc
	}
	guest_stress() {
		vm --smp 2 --cpu lbr-legacy --accel tcg,thread=single \
			--append LBR_FEXIT_CYCLES=50 \
			--script "$LBR_TOP/tests/guest/stress.sh"
	}
	# The test that hooks the clocksource read (LBR_NESTED_CLOCK;
	# tests/README.md, known limits), alone: the rest of the suite runs
	# on lbr-legacy in guest-lbr-legacy, and single-threaded in
	# guest-lbr-legacy-pmu.
	guest_nested() {
		vm --smp 2 --cpu lbr-legacy --accel tcg,thread=single \
			--append "LBR_NESTED_CLOCK=1 LBR_TESTS=nested_return_counted_not_recorded" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# The lab's perfmon-v3 CPU differs from lbr-legacy-pmu (version 4)
	# in how a PMI freezes LBR only: it clears DEBUGCTL.LBR, and perf's
	# handler sets it again.  The tests where perf's PMIs come run here
	# (LBR_TESTS): a PMI turning LBR back on inside the frozen window
	# (cap.pmi_in_the_frozen_window_is_flagged, which must run here:
	# LBR_EXPECT_PMU3; the NMI watchdog off, so that only its own
	# sampling event fires PMIs), a return inside the PMI, perf record
	# -b beside lbr_snap, mode=perf's load.  A shorter fuzzer run.
	guest_lbr_pmu3() {
		vm --smp 2 --cpu lbr-legacy-pmu3 --accel tcg,thread=single \
			--append "LBR_FUZZ_OPS=2000 LBR_EXPECT_PMU3=1 LBR_EXPECT_PERF=1 nmi_watchdog=0 LBR_TESTS=mode_perf,pmi_in_the_frozen_window,return_inside_the_pmi_freeze,perf_record_b_a_alongside,raw_mode_clears_a_leftover_pmi_freeze" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# The selftests on both lab CPUs with the lab PMU at perfmon
	# version 4: mode=auto is mode=perf (load.mode_perf), the default
	# path of a real machine, and `perf record -b -a` runs beside it
	# (cap.perf_record_b_a_alongside, which must run: LBR_EXPECT_PERF).
	# A shorter fuzzer run.  Single-threaded TCG, as guest-lbr-pmu3:
	# with one host thread per vCPU, beside the other lane, a
	# lbr-legacy-pmu guest once hung in fexit.drain_waits_for_idle_and_
	# rcu_idle_code (CPU 1 in a soft lockup, CPU 0 running no timer for
	# 130 s, no hard-lockup report); not diagnosed.
	guest_lbr_legacy_pmu() {
		vm --smp 2 --cpu lbr-legacy-pmu --accel tcg,thread=single \
			--append "LBR_FUZZ_OPS=2000 LBR_EXPECT_PERF=1" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# On Arch LBR the lab's CPU has XSAVES and the LBR state component
	# too (lbr-arch-xsaves): the guest kernel switches FPU state with
	# XSAVES, perf reads LBR with it and lbr_snap's captures do
	# (lbr_read=auto; load.xsaves_read_same_records_as_msr must run:
	# LBR_EXPECT_XSAVES).  guest-lbr-arch and guest-6.12 read the MSRs.
	guest_lbr_arch_pmu() {
		vm --smp 2 --cpu lbr-arch-xsaves --accel tcg,thread=single \
			--append "LBR_FUZZ_OPS=2000 LBR_EXPECT_PERF=1 LBR_EXPECT_XSAVES=1 LBR_TESTS_LBR_ONLY=1" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# The selftests on the lab's AMD CPU (LbrExtV2, 16 entries, and the
	# PerfMonV2 PMU): the AMD backend end to end, mode=raw and
	# mode=perf.  A shorter fuzzer run.
	guest_lbr_amd() {
		vm --smp 2 --cpu lbr-amd --accel tcg,thread=single \
			--append "LBR_FUZZ_OPS=2000 LBR_EXPECT_PERF=1 LBR_TESTS_LBR_ONLY=1" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# guest-lbr-legacy, guest-lbr-arch, guest-lbr-arch-pmu, guest-lbr-amd
	# and guest-lbr-amd-nopmu leave out the tests that never look at the
	# LBR (LBR_TESTS_LBR_ONLY, tests/selftests/lbr_test_agnostic.h): on
	# 6.1 the stock CPU (backend none, 4 vCPUs), the debug kernel on
	# lbr-legacy (mode=raw) and lbr-legacy-pmu (mode=perf) run them.
	# lbr-arch single-threaded, in a lane: with one host thread per
	# vCPU it once stopped for good in fexit.drain_waits_for_idle_and_
	# rcu_idle_code (CPU 0 in a soft lockup in rmmod, CPU 1 taking no
	# timer interrupt), as lbr-legacy-pmu had (below).
	guest_lbr_arch() {
		vm --smp 2 --cpu lbr-arch --accel tcg,thread=single \
			--append LBR_TESTS_LBR_ONLY=1 \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# And without the PMU (lbr-amd-nopmu): the guest's perf has no LBR,
	# so the whole suite runs mode=raw, lbr_snap programming LbrExtV2.
	guest_lbr_amd_nopmu() {
		vm --smp 2 --cpu lbr-amd-nopmu --accel tcg,thread=single \
			--append "LBR_FUZZ_OPS=2000 LBR_TESTS_LBR_ONLY=1" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	# The guests with one host thread per vCPU (the debug kernel) run
	# one after another: two lanes of such guests side by side once
	# took 14 minutes off, but with both cores busy a 7.2 guest marked
	# its TSC unstable and died in the static-key patch that followed,
	# and timing bounds of the selftests (rmmod within 2 s) failed.
	# Single-threaded TCG guests run two at a time, in two lanes of
	# about the same length, with the lab's proofs (one core too: in the
	# foreground they left the other to the prefetch at most).  Times in
	# the last make check-fresh, lanes side by side: debug-stress 1161 s
	# with 1000 fexit cycles (about 450 with 250), legacy-pmu 407 to 512,
	# arch-pmu 290 to 560, amd 490, sid 377, 5.10 368, 6.12 360, stress
	# 170 to 237, arch 210, pmu3 208, amd-nopmu 195, nested 139,
	# lab-proofs 0 (proven, or about 200 when they run).
	# The why scenarios (tests/why/oracle-vm.sh): each failing system call
	# of tests/why/why_fail.c, its origin found by the kernel's tracers
	# and by lbr-snap why, on Debian 6.1 and sid's 7.2, with the -dbg
	# vmlinux; one job per lab CPU, so that each lane gets a 6.1 guest
	# and a 7.2 one (3 and 3.5 minutes alone), and one flood: 400 s a job
	# side by side.
	# Lab CPUs whose LBR is broken on purpose (tests/lbr-lab/README.md,
	# "Quirks"), and the check of each CPU's LBR as lbr_snap starts to
	# use it (load.each_cpu_checked): CPU 1 of a legacy LBR records
	# nothing; CPU 0 of an Arch LBR faults from entry 16; both CPUs of an
	# AMD LbrExtV2 fault from entry 8.  Every other lab suite checks that
	# no CPU is refused.  And an AMD LbrExtV2 that leaves wrong-path
	# entries, holes and erratum 1452 records between branches, as Zen 4
	# and 5 do (cap.amd_wrong_path_and_holes).  About a minute a boot.
	guest_lbr_quirks() {
		local rc=0
		vm --smp 2 --accel tcg,thread=single \
			--cpu lbr-legacy,lbr-lab-dead=on,lbr-lab-quirk-cpus=2 \
			--append "LBR_TESTS=each_cpu_checked LBR_LAB_BROKEN_CPUS=1 LBR_LAB_BROKEN=dead" \
			--script "$LBR_TOP/tests/guest/quirks.sh" || rc=1
		vm --smp 2 --accel tcg,thread=single \
			--cpu lbr-arch,lbr-lab-gp-from=16,lbr-lab-quirk-cpus=1 \
			--append "LBR_TESTS=each_cpu_checked LBR_LAB_BROKEN_CPUS=0 LBR_LAB_BROKEN=gp" \
			--script "$LBR_TOP/tests/guest/quirks.sh" || rc=1
		vm --smp 2 --accel tcg,thread=single \
			--cpu lbr-amd-nopmu,lbr-lab-gp-from=8 \
			--append "LBR_TESTS=each_cpu_checked LBR_LAB_BROKEN_CPUS=0,1 LBR_LAB_BROKEN=gp" \
			--script "$LBR_TOP/tests/guest/quirks.sh" || rc=1
		vm --smp 2 --accel tcg,thread=single \
			--cpu lbr-amd-nopmu,lbr-lab-amd-spec=3 \
			--append "LBR_TESTS=each_cpu_checked,amd_wrong_path_and_holes LBR_LAB_AMD_SPEC=3" \
			--script "$LBR_TOP/tests/guest/quirks.sh" || rc=1
		return $rc
	}
	# The core suite on an Arch LBR without CPL and kind filtering
	# (CPUID.0x1c EBX 0, tests/lbr-lab/README.md "Quirks"), where only
	# LBREn may be written and every CPL and kind is recorded.
	guest_lbr_arch_nofilter() {
		vm --smp 2 --cpu lbr-arch,lbr-lab-arch-nofilter=on \
			--accel tcg,thread=single \
			--append "LBR_FUZZ_OPS=2000 LBR_TESTS_LBR_ONLY=1" \
			--script "$LBR_TOP/tests/guest/selftests.sh"
	}
	why_scenarios_legacy() {
		"$LBR_TOP/tests/why/oracle-vm.sh" bookworm:lbr-legacy:flood \
			sid:lbr-legacy
	}
	why_scenarios_arch() {
		"$LBR_TOP/tests/why/oracle-vm.sh" bookworm:lbr-arch \
			sid:lbr-arch:flood
	}
	suite guest-debug guest_debug_selftests
	suite freeze-first-debug freeze_first_debug
	suite_bg "guest-debug-stress guest_debug_stress" \
		"guest-lbr-legacy-pmu guest_lbr_legacy_pmu" \
		"guest-lbr-pmu3 guest_lbr_pmu3" "guest-nested guest_nested" \
		"guest-lbr-amd guest_lbr_amd" \
		"guest-lbr-amd-nopmu guest_lbr_amd_nopmu" \
		"why-scenarios-legacy why_scenarios_legacy" \
		"guest-lbr-quirks guest_lbr_quirks"
	suite_bg "guest-5.10 guest_5_10" "guest-6.12 guest_6_12" \
		"guest-stress guest_stress" \
		"guest-lbr-arch-pmu guest_lbr_arch_pmu" "guest-sid-7.2 guest_sid" \
		"guest-lbr-arch guest_lbr_arch" \
		"why-scenarios-arch why_scenarios_arch" \
		"guest-lbr-arch-nofilter guest_lbr_arch_nofilter" \
		"lab-proofs lab_proofs"
	suite_join lab-proofs guest-lbr-arch guest-5.10 guest-sid-7.2 guest-6.12 \
		guest-debug-stress guest-stress guest-nested guest-lbr-pmu3 \
		guest-lbr-legacy-pmu guest-lbr-arch-pmu guest-lbr-amd \
		guest-lbr-amd-nopmu why-scenarios-legacy why-scenarios-arch \
		guest-lbr-quirks guest-lbr-arch-nofilter
fi

if [ "$ran" = 0 ]; then
	echo "not ok - no suite ran"
	fail=$((fail + 1))
fi
if [ -n "$prefetch_pid" ]; then
	wait "$prefetch_pid"
	prefetch_pid=
	echo "# $(tail -n1 "$log/prefetch.log")"
fi
t_end=$(date +%s)
echo "# make check took $((t_end - t_check)) s"
busy=$((($(cpu_busy) - busy_check) / $(getconf CLK_TCK)))
echo "# the host's $(nproc) cores were busy $busy s of $(((t_end - t_check) * $(nproc))) s"
if [ "${#recap[@]}" != 0 ]; then
	echo "# the failures:"
	printf '#   %s\n' "${recap[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
