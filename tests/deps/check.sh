#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The one package list (tests/deps/packages) and the scripts agree:
#  - no script installs a package it names itself: apt-get/apt install and
#    debootstrap --include take their names from a variable (read from the
#    list with tests/deps/install.sh --list), never literal;
#  - every group a script asks tests/deps/install.sh (or lbr_install_deps)
#    for is in the list;
#  - every package of the list exists (installed, or known to apt).
# Then the same checks run on crafted trees that break each rule once, and
# must fail there.
#
# Usage: tests/deps/check.sh          TAP, "# Totals: ..." last
#        tests/deps/check.sh --tree DIR   the checks only, on DIR; exit 1
#                                     and one line a violation if any
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)

# Files that may hold install steps: shell, Python, Makefiles, CI.
files_of() {	# $1 = tree
	(cd "$1" && find . \( -path ./.git -o -path ./.cache -o -path ./build \) -prune -o \
		-type f \( -name '*.sh' -o -name '*.py' -o -name Makefile -o -path ./.ci/run \) \
		-print | sed 's|^\./||' | sort)
}

# Words after the first match of $2 on a line, up to a shell operator or
# a comment; quotes dropped.
words_after() {	# $1 = line, $2 = bash regex of the command word
	local w
	[[ $1 =~ $2(.*)$ ]] || return 0
	for w in ${BASH_REMATCH[${#BASH_REMATCH[@]} - 1]}; do
		case $w in '||'*|'&&'*|';'*|'|'*|'>'*|'<'*|')'*|'#'*|*'>&'*|'\') break ;; esac
		w=${w//\"/}
		w=${w//\'/}
		echo "${w%)}"
		[ "${w%)}" = "$w" ] || break
	done
}

violations() {	# $1 = tree; prints one line a violation
	local tree=$1 f n line w groups pre
	groups=$(awk '!/^#/ && NF { print $1 }' "$tree/tests/deps/packages")
	while read -r f; do
		# The installer itself, and this file's crafted examples.
		case $f in tests/deps/install.sh|tests/deps/check.sh) continue ;; esac
		n=0
		while IFS= read -r line; do
			n=$((n + 1))
			[[ $line =~ ^[[:space:]]*# ]] && continue
			# (Not a message that names the command: in a string.)
			pre=${line%%apt*}
			pre=${pre//[^\"]/}
			if [[ $line =~ (^|[^a-z-])apt(-get)?([[:space:]].*)?[[:space:]]install([[:space:]]|$) ]] &&
			   [ $((${#pre} % 2)) = 0 ]; then
				for w in $(words_after "$line" '[[:space:]]install([[:space:]]|$)'); do
					case $w in -*|\$*|*=*) ;; *)
						echo "$f:$n: installs '$w' by name (add it to tests/deps/packages)" ;;
					esac
				done
			fi
			if [[ $line =~ --include=([^[:space:]]+) ]]; then
				w=$(tr -d "\"'" <<<"${BASH_REMATCH[1]}")
				[[ $w == \$* ]] ||
					echo "$f:$n: debootstrap --include=$w by name (use the list)"
			fi
			if [[ $line =~ (deps/install\.sh[\"]?|lbr_install_deps)[[:space:]] ]] &&
			   [[ ! $line =~ ^[[:space:]]*lbr_install_deps\(\) ]]; then
				for w in $(words_after "$line" '(deps/install\.sh["]?|lbr_install_deps)[[:space:]]'); do
					case $w in -*|\$*|*/*) continue ;; esac
					grep -qxF -- "$w" <<<"$groups" ||
						echo "$f:$n: no group '$w' in tests/deps/packages"
				done
			fi
		done <"$tree/$f"
	done < <(files_of "$tree")
	for w in $(awk '!/^#/ && NF { for (i = 2; i <= NF; i++) print $i }' \
			"$tree/tests/deps/packages" | sort -u); do
		dpkg-query -W "$w" >/dev/null 2>&1 ||
			apt-cache show --no-all-versions "$w" >/dev/null 2>&1 ||
			echo "tests/deps/packages: no Debian package '$w'"
	done
}

if [ "${1:-}" = --tree ]; then
	out=$(violations "$2")
	[ -z "$out" ] || { echo "$out"; exit 1; }
	exit 0
fi

pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }

out=$(violations "$TOP")
if [ -z "$out" ]; then
	ok "every install step takes its packages from tests/deps/packages"
else
	notok "install steps outside tests/deps/packages:"
	sed 's/^/#   /' <<<"$out"
fi

# Negative tests: a copy of the tree broken once per rule must fail.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
crafted() {	# $1 = name, $2 = expected text; stdin: how to break the copy
	local t=$tmp/$1 got
	mkdir -p "$t/tests/deps" "$t/tests/x"
	cp "$TOP/tests/deps/packages" "$TOP/tests/deps/install.sh" "$t/tests/deps/"
	(cd "$t" && sh)
	got=$(violations "$t")
	if grep -qF -- "$2" <<<"$got"; then
		ok "crafted tree '$1' is refused: $(head -n1 <<<"$got")"
	else
		notok "crafted tree '$1' passed the check (want '$2', got '$got')"
	fi
}
crafted literal-apt "installs 'libfoo-dev' by name" <<'EOF'
printf 'apt-get install -y --no-install-recommends libfoo-dev >&2\n' >tests/x/a.sh
EOF
crafted literal-apt-in-chroot "installs 'dkms' by name" <<'EOF'
printf '\t\trun apt-get install -y -q dkms kmod >&2 ||\n' >tests/x/b.sh
EOF
crafted literal-debootstrap "debootstrap --include=make,gcc" <<'EOF'
printf 'debootstrap --variant=minbase --include=make,gcc sid root\n' >tests/x/c.sh
EOF
crafted unknown-group "no group 'labbuild'" <<'EOF'
printf '"$repo/tests/deps/install.sh" labbuild lab-run || die x\n' >tests/x/d.sh
EOF
crafted unknown-group-lib "no group 'fdt'" <<'EOF'
printf 'lbr_install_deps build fdt\n' >tests/x/e.sh
EOF
crafted no-such-package "no Debian package 'libfdt-devv'" <<'EOF'
sed -i 's/libfdt-dev/libfdt-devv/' tests/deps/packages
EOF
mkdir -p "$tmp/clean/tests/deps"
cp "$TOP/tests/deps/packages" "$TOP/tests/deps/install.sh" "$tmp/clean/tests/deps/"
printf '"$TOP/tests/deps/install.sh" lab-build lab-run\nnotok "apt-get install x in the chroot"\npkgs=$(tests/deps/install.sh --list dkms-chroot)\nrun apt-get install -y $pkgs\n' \
	>"$tmp/clean/tests/ok.sh"
if got=$(violations "$tmp/clean") && [ -z "$got" ]; then
	ok "a tree that installs only from the list passes"
else
	notok "a clean tree was refused: $got"
fi

# The groups install.sh knows are the list's, and it refuses others.
if "$TOP/tests/deps/install.sh" --list no-such-group >/dev/null 2>&1; then
	notok "install.sh --list no-such-group succeeded"
else
	ok "install.sh refuses a group that is not in the list"
fi
echo "# Totals: pass:$pass fail:$fail skip:0"
[ "$fail" = 0 ]
