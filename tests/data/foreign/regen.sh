#!/usr/bin/env bash
# tests/data/foreign/regen.sh - remake the expected perf script text of the foreign corpus.
#
# Each directory here holds one recording made on another machine (perf.data.xz), its
# PROVENANCE (repository, commit, path, licence) and what perf 6.1 prints for it:
#   script.txt.xz   `perf script -i perf.data --force` (its default fields), run with an
#                   empty $HOME (no build-id cache, no ~/.perfconfig) and LC_ALL=C
#   HOST-KERNEL     present when that text depends on this machine's kernel: perf names the
#                   recording's kernel addresses from this machine's /proc/kallsyms (the
#                   recording carries no kernel build-id: pipe mode, perf record --no-buildid;
#                   found by running perf a second time with --kallsyms=/dev/null), or its
#                   [vdso] frames from its own vdso, this machine's (a named [vdso] frame
#                   whose vdso has no build-id in the recording: every one here), or its kernel
#                   map from this machine's [_text, _etext) (the recording has no kernel map:
#                   user-only events, LBR call stacks).  Such text
#                   is true only on a machine whose kernel symbols are these; tests/foreign.sh
#                   checks it against perf run there and then (kallsyms.id says which symbols
#                   the committed text was made with).
#   uregs.txt.xz    (aarch64 DWARF recordings) `perf script -F time,uregs --show-mmap-events`:
#                   perf's reading of each sample's user registers, for tests/arm64.sh
# Run from the top of the tree, as root or a user who may read /proc/kallsyms with addresses:
#   tests/data/foreign/regen.sh [NAME...]
set -eu
export LC_ALL=C
cd "$(dirname "$0")"
HOME=$(mktemp -d)
export HOME
trap 'rm -rf "$HOME"' EXIT
case $(perf version 2>/dev/null) in
"perf version 6.1."*) ;;
*) echo "regen.sh: perf 6.1 is needed (Debian 12's linux-perf)" >&2; exit 1 ;;
esac
# the running kernel's symbols, as tests/foreign.sh identifies them
./kallsyms-id.sh >kallsyms.id
[ $# -gt 0 ] || set -- */
for d in "$@"; do
	d=${d%/}
	[ -f "$d/perf.data.xz" ] || continue
	xz -dc "$d/perf.data.xz" >"$HOME/perf.data"
	perf script -i "$HOME/perf.data" --force >"$HOME/a.txt" 2>/dev/null
	perf script -i "$HOME/perf.data" --force --kallsyms=/dev/null >"$HOME/b.txt" 2>/dev/null || :
	xz -9 -T1 -c "$HOME/a.txt" >"$d/script.txt.xz"
	# where one is kept: perf's own reading of the user registers and the maps, the oracle
	# tests/arm64.sh checks the aarch64 pc and unwound frames against
	if [ -f "$d/uregs.txt.xz" ]; then
		perf script -i "$HOME/perf.data" --force -F time,uregs --show-mmap-events 2>/dev/null |
			xz -9 -T1 >"$d/uregs.txt.xz"
	fi
	perf script -i "$HOME/perf.data" --force --show-mmap-events 2>/dev/null |
		grep -q 'PERF_RECORD_MMAP.*\[kernel\.kallsyms\]' && kmap=1 || kmap=0
	if cmp -s "$HOME/a.txt" "$HOME/b.txt" && ! grep -q ' [^[][^ ]* (\[vdso\])$' "$HOME/a.txt" &&
		[ "$kmap" = 1 ]; then
		rm -f "$d/HOST-KERNEL"
	else
		: >"$d/HOST-KERNEL"
	fi
	echo "$d: $(wc -l <"$HOME/a.txt") lines$([ -f "$d/HOST-KERNEL" ] && echo ', host kernel')"
done
