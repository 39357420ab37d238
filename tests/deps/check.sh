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
# a comment; quotes dropped, the argument of -o/-t/-c skipped, a trailing
# ; & | ) ends the command.  (Called with globbing off.)
words_after() {	# $1 = line, $2 = bash regex of the command word
	local w end skip=
	[[ $1 =~ $2(.*)$ ]] || return 0
	for w in ${BASH_REMATCH[${#BASH_REMATCH[@]} - 1]}; do
		case $w in '||'*|'&&'*|';'*|'|'*|'>'*|'<'*|')'*|'#'*|*'>&'*|[0-9]'>'*|'\') break ;; esac
		w=${w//\"/}
		w=${w//\'/}
		if [ -n "$skip" ]; then skip=; continue; fi
		case $w in -o|-t|-c) skip=1; continue ;; esac
		end=$w
		w=${w%%[;&|)]*}
		[ -z "$w" ] || echo "$w"
		[ "$end" = "$w" ] || break
	done
}

# Is the match $2 of line $1 outside a double-quoted string?  (Its first
# character may be the opening quote.)
unquoted() {
	local pre="${1%%"$2"*}${2:0:1}"
	pre=${pre//[^\"]/}
	[ $((${#pre} % 2)) = 0 ]
}

violations() {	# $1 = tree; prints one line a violation
	local - tree=$1 f n start line more w groups cmd
	set -f
	groups=$(awk '!/^#/ && NF { print $1 }' "$tree/tests/deps/packages")
	while read -r f; do
		# The installer itself, and this file's crafted examples.
		case $f in tests/deps/install.sh|tests/deps/check.sh) continue ;; esac
		n=0
		while IFS= read -r line; do
			n=$((n + 1)) start=$n
			# A command continued over lines is one line.
			while [[ $line == *\\ ]] && IFS= read -r more; do
				n=$((n + 1))
				line="${line%\\} $more"
			done
			[[ $line =~ ^[[:space:]]*# ]] && continue
			if [[ $f == *.py ]]; then
				if [[ $line =~ apt(-get)?[^a-z].*install|dpkg[^a-z].*(-i|--install) ]]; then
					echo "$f:$start: installs packages from Python (use tests/deps/install.sh)"
				fi
				continue
			fi
			# Each command of a list on its own (only a line that says
			# install can hold one: no sed for the others).
			[[ $line == *install* ]] &&
			while IFS= read -r cmd; do
				[[ $cmd =~ (^|[^a-z-])apt(-get)?([[:space:]].*)?[[:space:]]install([[:space:]]|$) ]] &&
					unquoted "$cmd" "${BASH_REMATCH[0]}" || continue
				for w in $(words_after "$cmd" '[[:space:]]install([[:space:]]|$)'); do
					case $w in -*|\$*) ;; *)
						echo "$f:$start: installs '${w%%=*}' by name (add it to tests/deps/packages)" ;;
					esac
				done
			done < <(sed 's/;\|&&\|||/\n/g' <<<"$line")
			if [[ $line =~ (^|[^a-z-])dpkg[[:space:]]+(.*[[:space:]])?(-i|--install)([[:space:]]|$) ]] &&
			   unquoted "$line" "${BASH_REMATCH[0]}"; then
				echo "$f:$start: installs a .deb with dpkg (use tests/deps/install.sh)"
			fi
			if [[ $line =~ --include[=[:space:]]+([^[:space:]]+) ]]; then
				w=$(tr -d "\"'" <<<"${BASH_REMATCH[1]}")
				[[ $w == \$* ]] ||
					echo "$f:$start: debootstrap --include=$w by name (use the list)"
			fi
			if [[ $line =~ (deps/install\.sh[\"]?|lbr_install_deps)[[:space:]] ]] &&
			   [[ ! $line =~ ^[[:space:]]*lbr_install_deps\(\) ]]; then
				for w in $(words_after "$line" '(deps/install\.sh["]?|lbr_install_deps)[[:space:]]'); do
					case $w in -*|\$*|*/*) continue ;; esac
					grep -qxF -- "$w" <<<"$groups" ||
						echo "$f:$start: no group '$w' in tests/deps/packages"
				done
			fi
		done <"$tree/$f"
	done < <(files_of "$tree")
	missing_packages "$tree/tests/deps/packages"
}

# The packages of list $1 that Debian does not have: installed ones in one
# dpkg-query, apt for the others; the answer kept by the list's hash (the
# crafted trees share the real list).
memo=$(mktemp -d)
missing_packages() {	# $1 = the list
	local pkgs have w m
	m=$memo/$(sha256sum "$1" | cut -c1-16)
	if [ ! -f "$m" ]; then
		pkgs=$(awk '!/^#/ && NF { for (i = 2; i <= NF; i++) print $i }' "$1" |
			sort -u)
		# shellcheck disable=SC2086
		have=$(dpkg-query -W -f '${db:Status-Status} ${Package}\n' $pkgs 2>/dev/null |
			awk '$1 == "installed" { print $2 }')
		for w in $pkgs; do
			grep -qxF -- "$w" <<<"$have" ||
				apt-cache show --no-all-versions "$w" >/dev/null 2>&1 ||
				echo "tests/deps/packages: no Debian package '$w'"
		done >"$m"
	fi
	cat "$m"
}

if [ "${1:-}" = --tree ]; then
	out=$(violations "$2")
	rm -rf "$memo"
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
trap 'rm -rf "$tmp" "$memo"' EXIT
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
crafted continued-line "installs 'grub-pc' by name" <<'EOF'
printf 'apt-get install -y \\\n\tlinux-image-amd64 grub-pc >&2\n' >tests/x/f.sh
EOF
crafted pinned-version "installs 'linux-image-6.1.0-18-amd64' by name" <<'EOF'
printf 'apt-get install -y linux-image-6.1.0-18-amd64=6.1.76-1\n' >tests/x/g.sh
EOF
crafted quoted-word-first "installs 'grub-pc' by name" <<'EOF'
printf 'cd "$aptdir" && apt-get install -y grub-pc\n' >tests/x/h.sh
EOF
crafted two-commands "installs 'y' by name" <<'EOF'
printf 'apt-get -y install $p; apt-get install y\n' >tests/x/i.sh
EOF
crafted dpkg-i "installs a .deb with dpkg" <<'EOF'
printf 'dpkg -i linux-image.deb\n' >tests/x/j.sh
EOF
crafted include-space "debootstrap --include=make,gcc" <<'EOF'
printf 'debootstrap --include make,gcc sid root\n' >tests/x/k.sh
EOF
crafted python "installs packages from Python" <<'EOF'
printf 'subprocess.run(["apt-get", "install", "-y", "dkms"])\n' >tests/x/l.py
EOF
crafted glob-safe "installs '*' by name" <<'EOF'
printf 'apt-get install *\n' >tests/x/m.sh
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
