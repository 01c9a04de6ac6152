#!/usr/bin/env bash
# tests/tools/isolate.sh - run a command on a machine that has none of the recording's files: for
# the tests of packs, whose conversion must take every file from the pack.
#
#   tests/tools/isolate.sh [-k DIR]... [-x DIR]... [--] COMMAND [ARG]...
#
# The command runs in a new mount namespace (unshare -m --propagation private: root only) in which
# these are empty tmpfs directories: /tmp, $HOME, /usr/lib/debug, /root/.debug, the .NET install
# (the directory of the dotnet executable, and $DOTNET_ROOT) and each -x DIR; and /proc/kallsyms
# reads as nothing (/dev/null is bound onto it).  A directory of the list that does not exist stays
# as it is: nothing is created outside the new tmpfs mounts.  Each -k DIR (the command's inputs and
# outputs, the binary) stays reachable at its path: where it lies under a hidden directory, it is
# bound back in, and the hidden directories under it are hidden again.  PERFCONV_TMP, PERFCONV_PROC,
# PERFCONV_DEBUG_DIR, DEBUGINFOD_URLS and TMPDIR are unset.  The mounts end with the command: nothing outside changes.
#
# Exit status: the command's, or 125 when the namespace cannot be made (not root, no unshare, a
# mount refused), with the reason on stderr.
set -u
keep=()
hide=(/tmp /usr/lib/debug /root/.debug)
[ -n "${HOME-}" ] && hide+=("$HOME")
if dn=$(command -v dotnet 2>/dev/null) && dn=$(readlink -f "$dn"); then
	hide+=("$(dirname "$dn")")
fi
[ -n "${DOTNET_ROOT-}" ] && hide+=("$DOTNET_ROOT")
while [ $# -gt 0 ]; do
	case $1 in
	-k) keep+=("$(realpath -m "$2")"); shift 2 ;;
	-x) hide+=("$(realpath -m "$2")"); shift 2 ;;
	--) shift; break ;;
	-*) echo "isolate: unknown option '$1'" >&2; exit 125 ;;
	*) break ;;
	esac
done
if [ $# -eq 0 ]; then
	echo "usage: tests/tools/isolate.sh [-k DIR]... [-x DIR]... [--] COMMAND [ARG]..." >&2
	exit 125
fi
if [ "$(id -u)" != 0 ]; then
	echo "isolate: needs root (mount namespaces and tmpfs mounts)" >&2
	exit 125
fi
if ! command -v unshare >/dev/null 2>&1; then
	echo "isolate: unshare (util-linux) is not installed" >&2
	exit 125
fi
if ! err=$(unshare -m --propagation private true 2>&1); then
	echo "isolate: unshare -m fails here: $err" >&2
	exit 125
fi
# parents before their children, each once
mapfile -t hide < <(for h in "${hide[@]}"; do realpath -m "$h"; done | grep -vx / | sort -u)

# shellcheck disable=SC2016  # the script runs in the namespace, with its own variables
exec unshare -m --propagation private -- bash -c '
set -u
die() { echo "isolate: $*" >&2; exit 125; }
nk=$1; shift; keep=("${@:1:nk}"); shift "$nk"
nh=$1; shift; hide=("${@:1:nh}"); shift "$nh"
shift # --
# each kept directory, open: once its path is hidden, it is bound back from the descriptor
fds=()
for k in "${keep[@]}"; do
	exec {fd}<"$k" || die "cannot open the directory to keep $k"
	fds+=("$fd")
done
# under DIR...: whether the path is one of them or below one
under() {
	local p=$1 d
	shift
	for d in "$@"; do
		case $p/ in "${d%/}"/*) return 0 ;; esac
	done
	return 1
}
hide_dirs() {
	local h
	for h in "$@"; do
		[ -d "$h" ] || continue
		mount -t tmpfs -o mode=1777 isolate "$h" || die "cannot mount a tmpfs on $h"
	done
}
hide_dirs "${hide[@]}"
i=0
for k in "${keep[@]}"; do
	fd=${fds[$i]}
	i=$((i + 1))
	[ "$(stat -L -c %d:%i "/proc/self/fd/$fd")" = "$(stat -L -c %d:%i "$k" 2>/dev/null)" ] && continue
	# the path lies in a new tmpfs now: mkdir creates only there; -c: mount must not resolve
	# the descriptor'"'"'s link to the hidden path
	mkdir -p "$k" && mount -c --bind "/proc/self/fd/$fd" "$k" || die "cannot bind $k back"
done
for fd in "${fds[@]}"; do exec {fd}<&-; done
# hidden directories inside a kept one came back with it
again=()
for h in "${hide[@]}"; do
	[ "${#keep[@]}" -gt 0 ] && under "$h" "${keep[@]}" && again+=("$h")
done
hide_dirs "${again[@]}"
if [ -e /proc/kallsyms ]; then
	mount --bind /dev/null /proc/kallsyms || die "cannot bind /dev/null onto /proc/kallsyms"
fi
unset PERFCONV_TMP PERFCONV_PROC PERFCONV_DEBUG_DIR DEBUGINFOD_URLS TMPDIR
# the working directory again through the new mounts (its old descriptor reaches hidden files)
cd "$PWD" 2>/dev/null || cd / || die "cannot change to /"
exec "$@"
' isolate "${#keep[@]}" "${keep[@]}" "${#hide[@]}" "${hide[@]}" -- "$@"
