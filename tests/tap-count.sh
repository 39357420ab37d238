# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
# How make check reads a suite's output; sourced by tests/run-all.sh and
# tests/test-plan.sh (which feeds it crafted logs), not run.

# tap_count NAME STATUS FILE: the passes, failures and skips of the suite
# NAME that exited with STATUS and printed FILE, in TAP_PASS, TAP_FAIL and
# TAP_SKIP; prints a "not ok" line for each failure it adds itself.
#
# The numbers come from the "# Totals:" lines (a suite may print several
# TAP streams: they are added up), else from the ok / not ok lines.  Then
# every plan "1..N" the suite printed must be kept (a guest
# that dies takes its tests with it, and they must not just vanish):
#   - a plan followed by a "# Totals:" (kselftest prints the plan first,
#     tests/lbr-lab and decode_test last, then the totals): the totals,
#     pass + fail + xfail + xpass + skip + error, must add up to N;
#   - a plan with no "# Totals:" after it (the guest died, or hung and
#     was killed): N ok / not ok lines must follow it, up to the next plan
#     or the end.
# A short stream is one failure more.  So is a suite that printed no
# result at all, and one that exited non-zero with no failure to show.
tap_count() {
	local name=$1 status=$2 file=$3 t p=0 f=0 s=0 line short
	t=$(grep -a '^# Totals:' "$file")
	if [ -z "$t" ]; then
		p=$(grep -ac '^ok ' "$file")
		f=$(grep -ac '^not ok ' "$file")
		s=$(grep -ac '^ok .*# SKIP' "$file")
		p=$((p - s))
	else
		while read -r line; do
			p=$((p + $(sed 's/.* pass:\([0-9]*\).*/\1/' <<<"$line")))
			f=$((f + $(sed 's/.* fail:\([0-9]*\).*/\1/' <<<"$line")))
			s=$((s + $(sed 's/.* skip:\([0-9]*\).*/\1/' <<<"$line")))
		done <<<"$t"
	fi
	short=$(awk -v name="$name" -v file="$file" '
		function close_plan() {
			if (open && got < plan)
				printf "not ok - %s printed %d of the %d results it planned " \
				       "(1..%d, %s:%d), no # Totals after them\n",
				       name, got, plan, plan, file, at
			open = 0
		}
		{ sub(/\r$/, "") }
		/^1\.\.[0-9]+/ {
			close_plan()
			plan = substr($0, 4) + 0; open = 1; got = 0; at = NR
			next
		}
		/^(not )?ok / { got++; next }
		/^# Totals:/ {
			if (!open)
				next
			sum = 0
			for (i = 3; i <= NF; i++)
				if ($i ~ /^[a-z]+:[0-9]+$/)
					sum += substr($i, index($i, ":") + 1)
			if (sum != plan)
				printf "not ok - %s planned 1..%d (%s:%d), its totals add " \
				       "up to %d: %s\n", name, plan, file, at, sum, $0
			open = 0
			next
		}
		END { close_plan() }' "$file")
	if [ -n "$short" ]; then
		echo "$short"
		f=$((f + $(wc -l <<<"$short")))
	fi
	if ! grep -aqE '^(not )?ok ' "$file"; then
		echo "not ok - $name printed no TAP result (see $file)"
		f=$((f + 1))
	fi
	if [ "$status" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name exited with status $status (see $file)"
		f=1
	fi
	TAP_PASS=$p TAP_FAIL=$f TAP_SKIP=$s
}
