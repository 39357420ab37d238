#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages of the named groups of tests/deps/packages
# that are missing on this machine (root; apt-get, no recommends; apt-get
# update once if a package is not known yet).
#
#   tests/deps/install.sh GROUP...          install what is missing
#   tests/deps/install.sh --list GROUP...   print the packages, one a line
#   tests/deps/install.sh --missing GROUP...  print those not installed
#   tests/deps/install.sh --groups          print the group names
set -eu
list=$(dirname "$0")/packages
mode=install
case ${1:-} in
--list|--missing|--groups) mode=${1#--}; shift ;;
esac

# The packages of group $1, or a failure if there is no such group.
group() {
	awk -v g="$1" '
		/^#/ || NF == 0 { next }
		$1 == g { for (i = 2; i <= NF; i++) print $i; found = 1 }
		END { exit !found }' "$list"
}

if [ "$mode" = groups ]; then
	awk '!/^#/ && NF { print $1 }' "$list"
	exit 0
fi
[ $# -gt 0 ] || { echo "usage: $0 [--list|--missing] GROUP..." >&2; exit 2; }
pkgs=
for g in "$@"; do
	p=$(group "$g") || { echo "deps: no group '$g' in $list" >&2; exit 2; }
	pkgs="$pkgs $p"
done
pkgs=$(printf '%s\n' $pkgs | awk '!seen[$0]++')
if [ "$mode" = list ]; then
	printf '%s\n' $pkgs
	exit 0
fi

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed' || missing="$missing $p"
done
if [ "$mode" = missing ]; then
	[ -z "$missing" ] || printf '%s\n' $missing
	exit 0
fi
[ -n "$missing" ] || exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "deps: installing ($*):$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt="apt-get -o DPkg::Lock::Timeout=600 -q"
# shellcheck disable=SC2086
$apt install -y --no-install-recommends $missing >&2 ||
	{ $apt update >&2 && $apt install -y --no-install-recommends $missing >&2; } ||
	{ echo "deps: apt-get install$missing failed" >&2; exit 1; }
