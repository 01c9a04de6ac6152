#!/usr/bin/env bash
# tests/pack.sh - packs: `perfconv ... -o NAME.perfpack` (-f pack) writes the recording and every
# file its frames need into one tar+zstd file; converting that pack on a machine without any of
# those files must give, in every format, the bytes that converting the recording gives where they
# are.  The conversions of packs run in tests/tools/isolate.sh, with no symbol option: /tmp, HOME,
# /usr/lib/debug, ~/.debug, the .NET install and the fixture tree are empty there, and
# /proc/kallsyms reads as nothing.
#
#   pack/isolate/hidden, pack/isolate/kept   the helper hides what it must, keeps what it is told
#                                  to (bound back in under the hidden /tmp), and changes nothing
#                                  outside
#   pack/FX/pack                   each fixture packed with the options of its golden test
#                                  (tests/lib.sh's fixture(): --symfs, --kallsyms, --map-dir)
#   pack/FX/members                tar --zstd -tf lists the pack: MANIFEST, perf.data (the
#                                  recording, byte for byte), then files/PLACE/PATH only
#   pack/FX/CASE                   the pack converted in isolation, against the fixture's expected
#                                  file as tests/folded.sh and tests/perf-script.sh compare it: folded
#                                  (-pid -tid -kernel -addrs -jit -task-clock -page-faults), stats, header,
#                                  script-default, perf-script*; and against the conversion of the
#                                  recording with its options: folded-all, speedscope, svg, trace.zip
#                                  (every entry but the log), pprof (every field but the comments).
#                                  Where the recording itself does not give the expected file, the
#                                  FAIL line says so (its golden case fails too).
#   pack/fp-stripped-debuglink/*-nodebug, pack/dotnet-container/folded-nomap   packed from a symbol
#                                  tree without the debug files, and without --map-dir
#   pack/FX/*-names                JIT and .NET fixtures packed and converted with perfconv's own names
#                                  (their golden tests use --perf-compat): ReadyToRun methods named
#                                  from the images' metadata, every format against the recording's
#   pack/FX/*-compat               the other fixtures packed and converted with --perf-compat
#   pack/holes/FX/{size,tar,zero-runs}   what a pack leaves out is holes: the pack is much smaller
#                                  than the files whole, GNU tar reads its sparse members, and a pack
#                                  with the holes as zeros (the earlier packs) converts the same
#   pack/format-option             -f pack with any output name writes the same bytes
#   pack/frame-cache/{miss,hit,corrupt,no-cache,recording}   members' zstd frames in the symbol
#                                  cache: a miss and a hit, damaged entries, --no-cache and the
#                                  recording's frame made beside the conversion give the same bytes
#   pack/frames                    one zstd frame a member; zstd -d | tar reads the pack
#   pack/to-pipe                   the .NET fixture's pack (9 MB: the writer starts each MiB's
#                                  writeback) written to a pipe has the bytes of the one written to
#                                  a file
#   pack/running-kernel            a recording made here, /proc/kallsyms packed as the symbol cache
#                                  holds it: empty cache, warm, frames gone: the same pack bytes
#   pack/known/{warm,changed,summary,same-bytes}   members known by their files (the symbol cache's
#                                  pack-sum entries): packed again, unchanged files are not read and
#                                  the pack has the same bytes; a file changed in place with its size
#                                  and mtime kept is read again, and a build-id cache copy so changed
#                                  is no longer taken for the file it was a copy of; the summary's
#                                  files by place add up to its files
#   pack/same-pid/FX[/control]     a wrong /tmp/perf-PID.map for the recorded pid (same addresses,
#                                  other names) is not used for the pack; the control shows that it
#                                  is for the recording itself
#   pack/bad/truncated, pack/bad/flipped   a pack cut in half or with a byte flipped: exit 1 (no
#                                  signal), a message naming the pack, no output left behind
#   pack/bad/sparse-bomb           a sparse member of 300 MB of holes in a few hundred bytes: refused
#   pack/batch                     perfconv -O DIR -j 2 -f folded,svg over a directory of two packs
#                                  made from different symbol trees
#
# Where tests/tools/isolate.sh cannot run (not root, no mount namespace) every case is skipped; a
# perfconv whose -f pack fails fails pack/probe.  Run by tests/run.sh; prints its lines ("ok",
# "FAIL", "skip").
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2"  only cases whose name has a word
#   PACK_JOBS=N          conversions at a time (default: the number of CPUs)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" pack
need_perfconv pack
ISO=$top/tests/tools/isolate.sh
JOBS=${PACK_JOBS:-$(nproc 2>/dev/null || echo 2)}
FULL=comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace
# everything the isolated commands read and write is under W, which the helper binds back in
W=$TMP/w
mkdir -p "$W/log" "$W/p" "$W/o"
FIXABS=$(cd "$FIX" && pwd)
bindir=$(dirname "$(command -v "$PERFCONV")")

# iso ARGS...: tests/tools/isolate.sh keeping W and the binary, hiding the fixture tree too
iso() { "$ISO" -k "$W" -k "$bindir" -x "$FIXABS" "$@"; }

# ---------------------------------------------------------------------------------------------------
# The helper, first: the cases below mean nothing if it lets this machine's files through.
iso_why=$(isolation_missing)
if [ -n "$iso_why" ]; then
	selected pack/isolate && skip "pack/isolate/*" "$iso_why"
elif selected pack/isolate; then
	# hidden: what a conversion could take from this machine is empty inside; each of them that
	# exists outside holds something (the marker files below, $TMP in /tmp, the kernel's symbols)
	mkdir -p "$HOME/.debug" "$W/extra"
	echo marker >"$HOME/.debug/marker"
	echo marker >"$W/extra/marker"
	dn=
	command -v dotnet >/dev/null 2>&1 && dn=$(dirname "$(readlink -f "$(command -v dotnet)")")
	outside=$(wc -c </proc/kallsyms)
	"$ISO" -x "$W/extra" -- bash -c '
		echo "kallsyms $(wc -c </proc/kallsyms)"
		for d in /tmp /usr/lib/debug /root/.debug "$HOME" "$1" "$2"; do
			[ -n "$d" ] && [ -e "$d" ] && echo "$d $(ls -A "$d" | wc -l)"
		done
		echo "env ${PERFCONV_TMP-}${PERFCONV_PROC-}${PERFCONV_DEBUG_DIR-}${DEBUGINFOD_URLS-}"
	' isolate "$dn" "$W/extra" >"$TMP/iso.out" 2>"$TMP/iso.err"
	rc=$?
	bad=
	[ "$rc" = 0 ] || bad="exit status $rc"
	grep -qx "kallsyms 0" "$TMP/iso.out" || bad="${bad:-/proc/kallsyms is not empty inside}"
	grep -v '^kallsyms \|^env ' "$TMP/iso.out" | grep -v ' 0$' >"$TMP/iso.left" && bad="${bad:-directories not empty inside: $(tr '\n' ' ' <"$TMP/iso.left")}"
	grep -qx "env " "$TMP/iso.out" || bad="${bad:-PERFCONV_TMP, PERFCONV_PROC, PERFCONV_DEBUG_DIR or DEBUGINFOD_URLS set inside}"
	grep -q "^/tmp " "$TMP/iso.out" || bad="${bad:-/tmp was not looked at}"
	[ "$(wc -c </proc/kallsyms)" = "$outside" ] && [ -f "$HOME/.debug/marker" ] && [ -f "$W/extra/marker" ] ||
		bad="${bad:-the mounts reached outside the namespace}"
	if [ -n "$bad" ]; then
		cat "$TMP/iso.err" >>"$TMP/iso.out"
		fail pack/isolate/hidden "$bad" "$TMP/iso.out"
	else
		pass pack/isolate/hidden
	fi
	# kept: W (under the hidden /tmp) is reachable and writable, HOME beside it stays hidden, and
	# what the command writes to the empty /tmp stays inside
	echo in >"$W/in.txt"
	probe=/tmp/perfconv-isolate-probe.$$
	rm -f "$W/out.txt" "$probe"
	iso -- bash -c 'cat "$1/in.txt" >"$1/out.txt" && echo x >"$2" && ls -A "$HOME" 2>/dev/null | wc -l' \
		isolate "$W" "$probe" >"$TMP/iso.out" 2>"$TMP/iso.err"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$W/out.txt" 2>/dev/null)" = in ] && [ "$(cat "$TMP/iso.out")" = 0 ] && [ ! -e "$probe" ]; then
		pass pack/isolate/kept
	else
		fail pack/isolate/kept "exit status $rc; W must be readable and writable inside, HOME empty, /tmp not the host's" "$TMP/iso.err"
	fi
	rm -rf "$W/extra" "$W/in.txt" "$W/out.txt" "$HOME/.debug"
fi

# ---------------------------------------------------------------------------------------------------
# One pack first: when -f pack fails (a usage error too: the format's registry line gone), so
# would every case below.
probe_fx=$FIX/fp-callgraph
"$PERFCONV" -q -i "$probe_fx/perf.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms" -f pack \
	-o "$W/probe.perfpack" >/dev/null 2>"$TMP/probe.err" </dev/null
rc=$?
if [ "$rc" != 0 ] || [ ! -s "$W/probe.perfpack" ]; then
	fail pack/probe "perfconv -f pack: exit status $rc, output $([ -s "$W/probe.perfpack" ] && echo written || echo missing)" "$TMP/probe.err"
	exit 0
fi
rm -f "$W/probe.perfpack"
if [ -n "$iso_why" ]; then
	skip "pack/*" "$iso_why"
	exit 0
fi

# ---------------------------------------------------------------------------------------------------
# The jobs: a job is a line of shell run by lanes, JOBS at a time, here or in the isolation (which
# gets these functions in a script).  Their results are files under W/log, read afterwards.

# job ID OUT ARGS...: perfconv ARGS -o OUT; stdout, stderr and status go to W/log/ID.{out,err,rc}.
# OUT "-": no -o, the product is stdout (--stats, --header)
job() {
	local id=$1 out=$2
	shift 2
	[ "$out" = - ] || set -- "$@" -o "$out"
	mkdir -p "$(dirname "$W/log/$id")"
	"$PERFCONV" "$@" >"$W/log/$id.out" 2>"$W/log/$id.err" </dev/null
	echo $? >"$W/log/$id.rc"
}
# packjob ID PACK RECORDING ARGS...: job ID PACK -q ARGS, then the pack's listing in W/log/ID.list
# (tar's status in ID.tar) and whether its perf.data member is RECORDING in ID.cmp
packjob() {
	local id=$1 pk=$2 rec=$3
	shift 3
	job "$id" "$pk" -q "$@"
	[ "$(cat "$W/log/$id.rc")" = 0 ] || return 0
	tar --zstd -tf "$pk" >"$W/log/$id.list" 2>"$W/log/$id.tarerr"
	echo $? >"$W/log/$id.tar"
	tar --zstd -xOf "$pk" perf.data 2>>"$W/log/$id.tarerr" | cmp -s - "$rec"
	echo $? >"$W/log/$id.cmp"
}
# lanes FILE: every line of FILE, JOBS at a time
lanes() {
	local line
	while IFS= read -r line; do
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
		eval "$line" &
	done <"$1"
	wait
}
# the same functions for the isolation
{
	printf 'set -u\nW=%q PERFCONV=%q JOBS=%q\n' "$W" "$PERFCONV" "$JOBS"
	declare -f job packjob lanes
	echo 'lanes "$1"'
} >"$W/jobs.sh"
# line ARGS...: the words as one line of shell
line() { printf '%q ' "$@" | sed 's/ $//'; }

: >"$W/jobs.pack"	# packing and the recordings' conversions, here
: >"$W/jobs.conv"	# the packs' conversions, in the isolation
cases=()	# NAME|PACK-ID|KIND|EXPECTED|FILTER|RAW-ID|PK-ID|RAW-OUT|PK-OUT
declare -A rawjob	# RAW-ID: its job line

# addcase NAME KIND EXPECTED FILTER ARGS...: one case of the current pack (pk, pkid, named, pkopts,
# rawargs): the recording converted with rawargs ARGS, the pack with pkopts ARGS, each into
# W/o/{raw,pk}/PACK-ID/NAME.EXT (the same file names: trace.zip names its directory after its own).
# KIND: folded, stdout (--stats, --header), script, speedscope, svg, trace.zip, pprof.
# EXPECTED: the fixture's file to compare with, or "" for the recording's conversion.
# The pack is made when one of its cases is selected.
addcase() {
	local name=$1 kind=$2 e=$3 filter=$4 base src ext q=-q
	shift 4
	selected "pack/$name" || return 0
	make_pack
	base=${name##*/}
	src=$pk
	case $kind in
	folded) ext=folded ;;
	stdout) ext= q= ;;
	script) ext=perf.txt ;;
	speedscope) ext=speedscope.json src=$named ;;	# its "name" is the input's file name
	svg) ext=svg ;;
	trace.zip) ext=trace.zip ;;
	pprof) ext=pprof ;;
	esac
	# perf's folded file as the default mode draws it, runs of unnamed frames folded (golden)
	if [ "$kind" = folded ] && [ -n "$e" ] && folds_runs "${pkopts[@]}" "$@"; then
		mkdir -p "$W/e"
		expected_as "$e" "$@" >"$W/e/$pkid-$base.txt" && e=$W/e/$pkid-$base.txt
	fi
	local ro=- po=-
	[ -n "$ext" ] && ro=$W/o/raw/$pkid/$base.$ext po=$W/o/pk/$pkid/$base.$ext
	mkdir -p "$W/o/raw/$pkid" "$W/o/pk/$pkid"
	# the recording's conversion: needed for a case without an expected file, else only to tell
	# a pack's mismatch from the golden case's own
	rawjob[raw/$pkid/$base]=$pkenv$(line job "raw/$pkid/$base" "$ro" $q "${rawargs[@]}" "$@")
	[ -z "$e" ] && echo "${rawjob[raw/$pkid/$base]}" >>"$W/jobs.pack"
	line job "pk/$pkid/$base" "$po" $q -i "$src" "${pkopts[@]}" "$@" >>"$W/jobs.conv"
	echo >>"$W/jobs.conv"
	cases+=("$name|$pkid|$kind|$e|$filter|raw/$pkid/$base|pk/$pkid/$base|$ro|$po")
}

# newpack ID LABEL RECORDING ARGS...: the pack W/p/ID.perfpack of RECORDING made with ARGS (the
# conversion's options, -i included), also linked as W/p/ID/BASENAME-OF-RECORDING, its cases named
# pack/LABEL and pack/LABEL's "pack" word changed to "members"; sets pk, pkid, named, rawargs and
# pkopts (--perf-compat when ARGS have it) for addcase, and make_pack makes it once.  A pack that
# cases further down need is made now.
packs=()
newpack() {
	pkid=$1
	local label=$2 rec=$3
	shift 3
	pk=$W/p/$pkid.perfpack
	named=$W/p/$pkid/$(basename "$rec")
	rawargs=("$@")
	pkopts=()
	local a
	for a in "$@"; do [ "$a" = --perf-compat ] && pkopts+=(--perf-compat); done
	# addr2line's debug directory of the fixture (fixture), for the packing and the recording's
	# conversions here; the pack's conversions take its files from the pack
	pkenv="PERFCONV_DEBUG_DIR=$(printf %q "$PERFCONV_DEBUG_DIR") "
	pack_line=$pkenv$(line packjob "pack/$pkid" "$pk" "$rec" "$@")
	pack_entry="$pkid|$rec|$label"
	case $pkid in
	fp-callgraph) { selected pack/bad || selected pack/format-option || selected pack/batch; } && make_pack ;;
	fp-stripped-debuglink-nodebug) selected pack/batch && make_pack ;;
	node-perf-basic-prof | mono-jitmap) selected "pack/same-pid/$pkid" && make_pack ;;
	esac
	return 0
}
make_pack() {
	[ -n "$pack_line" ] || return 0
	echo "$pack_line" >>"$W/jobs.pack"
	packs+=("$pack_entry")
	pack_line=
}

for dir in "$FIX"/*/; do
	dir=${dir%/}
	fixture "$dir" || continue
	if why=$(missing_runtime "$dir"); then
		selected "pack/$fx/" && skip "pack/$fx/*" "$why"
		continue
	fi
	newpack "$fx" "$fx/pack" "$in" "${args[@]}"
	addcase "$fx/folded" folded "$exp/folded.txt" ""
	for opt in pid tid kernel addrs; do
		case $opt in
		# perf's files have "?" for the pid, as --perf-compat; dwarf-zstd: see folded.sh
		pid | tid) [ "$fx" = dwarf-zstd ] || addcase "$fx/folded-$opt" folded "$exp/folded-$opt.txt" "" --perf-compat "--$opt" ;;
		*) addcase "$fx/folded-$opt" folded "$exp/folded-$opt.txt" "" "--$opt" ;;
		esac
	done
	[ -e "$exp/folded-jit.txt" ] || [ -e "$exp/folded-jit.txt.xz" ] && addcase "$fx/folded-jit" folded "$exp/folded-jit.txt" "" --jit
	for ev in task-clock page-faults; do
		[ -e "$exp/folded-$ev.txt" ] && addcase "$fx/folded-$ev" folded "$exp/folded-$ev.txt" "" --event "$ev"
	done
	addcase "$fx/folded-all" folded "" "" --all
	addcase "$fx/stats" stdout "$exp/stats.txt" "" --stats
	addcase "$fx/header" stdout "$exp/header.txt" "/^# captured on/d" --header
	addcase "$fx/script-default" script "$exp/script-default.txt" ""
	if [ -e "$exp/perf-script.txt" ] || [ -e "$exp/perf-script.txt.xz" ]; then
		addcase "$fx/perf-script" script "$exp/perf-script.txt" "" --fields "$FULL"
	fi
	if [ -e "$exp/perf-script-nocpu.txt" ] || [ -e "$exp/perf-script-nocpu.txt.xz" ]; then
		addcase "$fx/perf-script-nocpu" script "$exp/perf-script-nocpu.txt" "" --fields "$FULL"
		addcase "$fx/perf-script-nocpu-list" script "$exp/perf-script-nocpu.txt" "" --fields comm,pid,tid,time,period,event,ip,sym,dso,trace
	fi
	if [ -e "$exp/perf-script-nocpu-notime.txt" ] || [ -e "$exp/perf-script-nocpu-notime.txt.xz" ]; then
		addcase "$fx/perf-script-nocpu-notime" script "$exp/perf-script-nocpu-notime.txt" "" --fields "$FULL"
		addcase "$fx/perf-script-nocpu-notime-list" script "$exp/perf-script-nocpu-notime.txt" "" --fields comm,pid,tid,period,event,ip,sym,dso,trace
	fi
	for kind in speedscope svg trace.zip pprof; do
		addcase "$fx/$kind" "$kind" "" ""
	done
	# a pack made without --perf-compat serves it too: perf's rules ask the converting machine
	# about files (does the recorded path exist there?) that perfconv's own rules do not need
	# and a pack made with --perf-compat (the JIT and .NET fixtures' above) converts without it
	# as the recording does: packing also converts the recording with perfconv's own rules
	if ! jit_fixture "$fx"; then
		addcase "$fx/folded-as-compat" folded "" "" --perf-compat
		addcase "$fx/script-as-compat" script "" "" --perf-compat
	else
		pkopts=() rawargs=()
		for a in "${args[@]}"; do [ "$a" = --perf-compat ] || rawargs+=("$a"); done
		addcase "$fx/folded-compat-pack-own" folded "" ""
		addcase "$fx/folded-jit-compat-pack-own" folded "" "" --jit
		addcase "$fx/script-compat-pack-own" script "" ""
	fi
	# JIT and .NET fixtures are packed above with --perf-compat (perf's names, which their expected
	# files hold); packed again for perfconv's own names, which read more of the .NET images (the
	# ReadyToRun methods' names from their metadata); the others packed again with --perf-compat
	# (perf's rules read other parts of the files: a pack made without it does not serve it)
	if jit_fixture "$fx"; then
		own=()
		for a in "${args[@]}"; do [ "$a" = --perf-compat ] || own+=("$a"); done
		newpack "$fx-names" "$fx/pack-names" "$in" "${own[@]}"
		addcase "$fx/folded-names" folded "" ""
		addcase "$fx/folded-all-names" folded "" "" --all
		addcase "$fx/folded-jit-names" folded "" "" --jit
		addcase "$fx/folded-names-as-compat" folded "" "" --perf-compat
		for kind in script speedscope svg trace.zip pprof; do
			addcase "$fx/$kind-names" "$kind" "" ""
		done
	else
		newpack "$fx-compat" "$fx/pack-compat" "$in" "${args[@]}" --perf-compat
		addcase "$fx/folded-compat" folded "" ""
		addcase "$fx/script-compat" script "" ""
		addcase "$fx/pprof-compat" pprof "" ""
		pkopts=() rawargs=("${args[@]}")
		addcase "$fx/folded-compat-pack-own" folded "" ""
	fi
	# fp-stripped-debuglink from a symbol tree without its debug files
	if [ -e "$exp/folded-nodebug.txt" ]; then
		symfs_without_debug "$W/symfs-nodebug"
		newpack "$fx-nodebug" "$fx/pack-nodebug" "$in" -i "$in" --symfs "$W/symfs-nodebug" --kallsyms "$ROOT/kallsyms"
		addcase "$fx/folded-nodebug" folded "$exp/folded-nodebug.txt" ""
		addcase "$fx/script-default-nodebug" script "$exp/script-default-nodebug.txt" ""
		addcase "$fx/svg-nodebug" svg "" ""
	fi
	# dotnet-container without --map-dir: perf's output without the map
	if [ -e "$exp/folded-nomap.txt" ]; then
		newpack "$fx-nomap" "$fx/pack-nomap" "$in" -i "$in" --symfs "$ROOT" --kallsyms "$dir/kallsyms" --perf-compat
		addcase "$fx/folded-nomap" folded "$exp/folded-nomap.txt" ""
	fi
done

# the packs, their listings, and the recordings' conversions
t0=$SECONDS
lanes "$W/jobs.pack"
t_pack=$((SECONDS - t0))
ok_packs=" "
# the reason of the cases of a pack that failed, whose FAIL line is the one that counts
NOPACK="its pack was not made (a FAIL above says why)"
for p in "${packs[@]}"; do
	IFS='|' read -r id rec name <<<"$p"
	name=pack/$name
	L=$W/log/pack/$id
	if [ "$(cat "$L.rc")" != 0 ] || [ ! -s "$W/p/$id.perfpack" ]; then
		fail "$name" "exit status $(cat "$L.rc") packing $(basename "$rec")" "$L.err"
		continue
	fi
	selected "$name" && pass "$name"
	ok_packs="$ok_packs$id "
	mkdir -p "$W/p/$id"
	ln -f "$W/p/$id.perfpack" "$W/p/$id/$(basename "$rec")"
	# members: the listing, in its order
	mname=${name%/pack*}/members${name##*/pack}
	selected "$mname" || continue
	if [ "$(cat "$L.tar")" != 0 ]; then
		fail "$mname" "tar --zstd -tf cannot list the pack" "$L.tarerr"
	elif [ "$(sed -n 1p "$L.list")" != MANIFEST ]; then
		fail "$mname" "the first member is '$(sed -n 1p "$L.list")', not MANIFEST" "$L.list"
	elif [ "$(sed -n 2p "$L.list")" != perf.data ]; then
		fail "$mname" "the second member is '$(sed -n 2p "$L.list")', not perf.data" "$L.list"
	elif sed 1,2d "$L.list" | grep -v '^files/[a-z]*/.' | grep -v '^files/.*/$' >"$L.odd"; then
		fail "$mname" "members that are not files/PLACE/PATH" "$L.odd"
	elif [ "$(cat "$L.cmp")" != 0 ]; then
		fail "$mname" "the perf.data member is not $rec byte for byte" "$L.tarerr"
	else
		pass "$mname"
	fi
done

# the packs' conversions, on a machine without the files
t0=$SECONDS
: >"$W/jobs.ok"
while IFS= read -r l; do
	id=${l#job pk/}
	id=${id%%/*}
	[[ $ok_packs == *" $id "* ]] && echo "$l" >>"$W/jobs.ok"
done <"$W/jobs.conv"
iso -- bash "$W/jobs.sh" "$W/jobs.ok" 2>"$TMP/iso.err" || fail pack/isolation "the isolated conversions: exit status $?" "$TMP/iso.err"
t_conv=$((SECONDS - t0))

# The trace.zip and pprof outputs hold the command line (the log entry, the comments): one python
# run compares every pair of them, given as "KIND A B VERDICT" lines, and writes VERDICT (0 the
# same, else what differs first).  trace.zip: every entry but the log.  pprof: the top-level fields
# of the gzip-compressed Profile message as bytes, the strings that comment (13) points at left out
# of the string table (6).
cat >"$W/same.py" <<'EOF'
import gzip, sys, zipfile

def entries(p):
    z = zipfile.ZipFile(p)
    return {i.filename: z.read(i) for i in z.infolist() if not i.filename.endswith(".log")}

def same_zip(a, b):
    a, b = entries(a), entries(b)
    for n in sorted(set(a) | set(b)):
        if a.get(n) != b.get(n):
            return "entry %s: %s" % (n, "missing" if n not in b else "extra" if n not in a else "differs")
    return None

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i

def fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, j = varint(b, i); val = b[i:j]; i = j
        elif wt == 2:
            n, i = varint(b, i); val = b[i:i + n]; i += n
        elif wt == 1:
            val = b[i:i + 8]; i += 8
        elif wt == 5:
            val = b[i:i + 4]; i += 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((f, wt, val))
    return out

def canon(p):
    fl = fields(gzip.decompress(open(p, "rb").read()))
    comments = set()
    for f, wt, val in fl:
        if f == 13 and wt == 0:
            comments.add(varint(val, 0)[0])
        elif f == 13 and wt == 2:
            i = 0
            while i < len(val):
                v, i = varint(val, i); comments.add(v)
    strings = [val for f, wt, val in fl if f == 6]
    rest = [(f, wt, val) for f, wt, val in fl if f not in (6, 13)]
    return [s for n, s in enumerate(strings) if n not in comments], rest

def first(x, y):
    return next((n for n in range(min(len(x), len(y))) if x[n] != y[n]), min(len(x), len(y)))

def same_pprof(a, b):
    (sa, ra), (sb, rb) = canon(a), canon(b)
    if sa != sb:
        d = first(sa, sb)
        return "string table: %d and %d strings; string %d: %r / %r" % (
            len(sa), len(sb), d, sa[d] if d < len(sa) else None, sb[d] if d < len(sb) else None)
    if ra != rb:
        d = first(ra, rb)
        return "%d and %d fields; field #%d (number %s) differs" % (len(ra), len(rb), d, (ra + [(None,)])[d][0])
    return None

for line in sys.stdin:
    kind, a, b, verdict = line.rstrip("\n").split("\t")
    try:
        why = same_zip(a, b) if kind == "trace.zip" else same_pprof(a, b)
    except Exception as e:
        why = "cannot read: %s" % e
    open(verdict, "w").write("0\n" if why is None else why + "\n")
EOF
: >"$W/same.in"
for c in "${cases[@]}"; do
	IFS='|' read -r name id kind e filter rawid pkid ro po <<<"$c"
	case $kind in trace.zip | pprof) ;; *) continue ;; esac
	[ -f "$ro" ] && [ -f "$po" ] && printf '%s\t%s\t%s\t%s\n' "$kind" "$ro" "$po" "$W/log/$pkid.same" >>"$W/same.in"
done
python3 "$W/same.py" <"$W/same.in"

# text FILTER FILE: FILE (or its .xz) with the sed FILTER applied
text() {
	if [ -n "$1" ]; then expected "$2" | sed -e "$1"; else expected "$2"; fi
}

for c in "${cases[@]}"; do
	IFS='|' read -r name id kind e filter rawid pkid ro po <<<"$c"
	name=pack/$name
	if [[ $ok_packs != *" $id "* ]]; then
		skip "$name" "$NOPACK"
		continue
	fi
	[ "$ro" = - ] && ro=$W/log/$rawid.out
	[ "$po" = - ] && po=$W/log/$pkid.out
	prc=none rrc=none
	[ -f "$W/log/$pkid.rc" ] && read -r prc <"$W/log/$pkid.rc"
	[ -f "$W/log/$rawid.rc" ] && read -r rrc <"$W/log/$rawid.rc"
	if [ "$prc" != 0 ] || [ ! -f "$po" ]; then
		fail "$name" "exit status $prc converting the pack$([ -f "$po" ] || echo ', no output')" "$W/log/$pkid.err"
		continue
	fi
	if [ -z "$e" ]; then
		# against the recording's conversion
		if [ "$rrc" != 0 ] || [ ! -f "$ro" ]; then
			fail "$name" "the recording's own conversion failed (exit status $rrc): nothing to compare the pack's with" "$W/log/$rawid.err"
			continue
		fi
		case $kind in
		trace.zip | pprof)
			read -r why <"$W/log/$pkid.same"
			[ "$why" = 0 ] && pass "$name" && continue
			echo "$why" >"$W/diff"
			;;
		*)
			cmp -s "$ro" "$po" && pass "$name" && continue
			diff -u "$ro" "$po" --label recording --label pack | cut -c 1-200 >"$W/diff"
			;;
		esac
		fail "$name" "the pack's $kind differs from the recording's" "$W/diff"
		continue
	fi
	# against the expected file, as the golden test compares
	if [ -z "$filter" ] && [ -f "$e" ] && cmp -s "$e" "$po"; then
		pass "$name"
		continue
	fi
	if ! text "$filter" "$e" >"$W/exp" 2>/dev/null; then
		fail "$name" "no $e"
		continue
	fi
	text "$filter" "$po" >"$W/got"
	if cmp -s "$W/exp" "$W/got"; then
		pass "$name"
		continue
	fi
	eval "${rawjob[$rawid]}"
	read -r rrc <"$W/log/$rawid.rc"
	text "$filter" "$ro" >"$W/raw" 2>/dev/null
	if [ "$rrc" = 0 ] && cmp -s "$W/exp" "$W/raw"; then
		diff -u "$W/exp" "$W/got" --label "${e#"$top"/}" --label pack | cut -c 1-200 >"$W/diff"
		fail "$name" "output differs from ${e#"$top"/}" "$W/diff"
	elif [ "$rrc" = 0 ] && cmp -s "$W/raw" "$W/got"; then
		diff -u "$W/exp" "$W/got" --label "${e#"$top"/}" --label pack | cut -c 1-200 >"$W/diff"
		fail "$name" "output differs from ${e#"$top"/}, as the recording's own conversion does (its golden case fails too)" "$W/diff"
	else
		diff -u "$W/raw" "$W/got" --label recording --label pack | cut -c 1-200 >"$W/diff"
		fail "$name" "output differs from ${e#"$top"/}, and from the recording's conversion (exit status $rrc)" "$W/diff"
	fi
done

# ---------------------------------------------------------------------------------------------------
# -f pack with a name that does not tell the format: the same bytes as NAME.perfpack (a pack is
# made the same way every time)
if selected pack/format-option && [[ $ok_packs == *" fp-callgraph "* ]]; then
	fx=fp-callgraph
	fixture "$FIX/$fx"
	run_pc "$W/fo" -q "${args[@]}" -f pack -o "$W/fo/out.pk"
	if [ "$rc" != 0 ] || [ ! -s "$W/fo/out.pk" ]; then
		fail pack/format-option "-f pack -o out.pk: exit status $rc" "$W/fo/err"
	elif cmp -s "$W/p/$fx.perfpack" "$W/fo/out.pk"; then
		pass pack/format-option
	elif cmp -s <(tar --zstd -tf "$W/p/$fx.perfpack" 2>&1) <(tar --zstd -tf "$W/fo/out.pk" 2>&1); then
		diff <(tar --zstd -tvf "$W/p/$fx.perfpack" 2>&1) <(tar --zstd -tvf "$W/fo/out.pk" 2>&1) >"$W/diff"
		fail pack/format-option "two packs of the same recording have the same members but not the same bytes: a pack is not the same every time" "$W/diff"
	else
		diff <(tar --zstd -tvf "$W/p/$fx.perfpack" 2>&1) <(tar --zstd -tvf "$W/fo/out.pk" 2>&1) >"$W/diff"
		fail pack/format-option "-f pack -o out.pk and -o $fx.perfpack list different members" "$W/diff"
	fi
fi

# ---------------------------------------------------------------------------------------------------
# One zstd frame a member, and the symbol cache's frames (XDG_CACHE_HOME/perfconv/pack), on the
# .NET fixture (60 members).  With an empty cache the pack misses and writes the entries; again it
# hits and gives the same bytes; an entry with a changed byte, and one with another entry's bytes,
# are reported and written again, the same bytes; --no-cache writes no entry, and reads none (a
# cache of entries made old stays as it was); the recording's frame made beside the conversion
# or by the writer (PERFCONV_PACK_PRE=0): the same bytes.  pack/frames: the pack is one frame a
# member and one for the end blocks, and zstd -d | tar lists what tar --zstd lists.
fc_run() {	# fc_run DIR [perfconv args...]: the fixture packed with -v into DIR/out.perfpack
	local d=$1
	shift
	XDG_CACHE_HOME=$W/fc/xdg run_pc "$d" -v "$@" "${args[@]}" -o "$d/out.perfpack"
}
fc_line() { grep -o 'pack frame cache: [^(]*' "$1/err" | sed 's/ *$//'; }
if selected pack/frame-cache || selected pack/frames || selected pack/to-pipe; then
	fixture "$FIX/dotnet-aspnet" || true
	rm -rf "$W/fc"
	mkdir -p "$W/fc"
	fce=$W/fc/xdg/perfconv/pack
	if [ "$fx" != dotnet-aspnet ]; then
		fail "pack/frame-cache" "no fixture $FIX/dotnet-aspnet"
	elif fc_run "$W/fc/cold" && [ "$rc" != 0 ]; then
		fail pack/frame-cache/miss "exit status $rc packing with an empty cache" "$W/fc/cold/err"
	else
		nent=$(find "$fce" -type f 2>/dev/null | wc -l)
		line=$(fc_line "$W/fc/cold")
		if [[ $line != "pack frame cache: 0 hit, $nent miss" ]] || [ "$nent" -lt 10 ]; then
			fail pack/frame-cache/miss "with an empty cache: '$line' and $nent entries in $fce" "$W/fc/cold/err"
		else
			pass "pack/frame-cache/miss ($nent entries)"
		fi
		fc_run "$W/fc/warm"
		line=$(fc_line "$W/fc/warm")
		if [ "$rc" != 0 ] || [[ $line != "pack frame cache: $nent hit, 0 miss" ]]; then
			fail pack/frame-cache/hit "exit status $rc, '$line' ($nent entries)" "$W/fc/warm/err"
		elif ! cmp "$W/fc/cold/out.perfpack" "$W/fc/warm/out.perfpack" >"$W/fc/cmp" 2>&1; then
			fail pack/frame-cache/hit "the pack from the cache differs from the one that missed" "$W/fc/cmp"
		else
			pass pack/frame-cache/hit
		fi
		# a byte in the middle of the largest entry, as a disk or an interrupted copy might
		# leave it; the smallest one replaced by another entry (whole, but another key's)
		big=$(ls -S "$fce"/* | head -n 1)
		small=$(ls -S "$fce"/* | tail -n 1)
		other=$(ls -S "$fce"/* | tail -n 2 | head -n 1)
		printf 'X' | dd of="$big" bs=1 seek=$(($(wc -c <"$big") / 2)) conv=notrunc status=none
		cp "$other" "$small"
		fc_run "$W/fc/corrupt"
		line=$(fc_line "$W/fc/corrupt")
		if [ "$rc" != 0 ] ||
			[[ $line != "pack frame cache: $((nent - 2)) hit, 2 miss, corrupt entries ignored and written again" ]]; then
			fail pack/frame-cache/corrupt "exit status $rc, '$line' ($nent entries, 2 damaged)" "$W/fc/corrupt/err"
		elif ! cmp "$W/fc/cold/out.perfpack" "$W/fc/corrupt/out.perfpack" >"$W/fc/cmp" 2>&1; then
			fail pack/frame-cache/corrupt "with damaged entries the pack differs" "$W/fc/cmp"
		else
			fc_run "$W/fc/again"
			line=$(fc_line "$W/fc/again")
			if [[ $line != "pack frame cache: $nent hit, 0 miss" ]] || ! cmp -s "$W/fc/cold/out.perfpack" "$W/fc/again/out.perfpack"; then
				fail pack/frame-cache/corrupt "the damaged entries were not written again: '$line'" "$W/fc/again/err"
			else
				pass pack/frame-cache/corrupt
			fi
		fi
		# --no-cache: entries made old stay old (a hit marks its entry used), none is added
		# or removed, and an empty cache stays empty
		find "$fce" -type f -exec touch -d '2001-01-01 00:00' {} +
		before=$(ls -l --time-style=+%s "$fce" | md5sum)
		fc_run "$W/fc/nocache" --no-cache
		after=$(ls -l --time-style=+%s "$fce" | md5sum)
		rm -rf "$W/fc/xdg"
		fc_run "$W/fc/nocache2" --no-cache
		if [ "$rc" != 0 ] || grep -q "pack frame cache" "$W/fc/nocache/err" "$W/fc/nocache2/err" ||
			[ "$before" != "$after" ] || [ -e "$fce" ]; then
			fail pack/frame-cache/no-cache "exit status $rc; the cache was used or written" "$W/fc/nocache/err"
		elif ! cmp -s "$W/fc/cold/out.perfpack" "$W/fc/nocache/out.perfpack" ||
			! cmp -s "$W/fc/cold/out.perfpack" "$W/fc/nocache2/out.perfpack"; then
			fail pack/frame-cache/no-cache "the pack made without the cache differs" /dev/null
		else
			pass pack/frame-cache/no-cache
		fi
		PERFCONV_PACK_PRE=0 fc_run "$W/fc/nopre" --no-cache
		if [ "$rc" != 0 ] || ! cmp "$W/fc/cold/out.perfpack" "$W/fc/nopre/out.perfpack" >"$W/fc/cmp" 2>&1; then
			fail pack/frame-cache/recording "exit status $rc, or the recording's frame made by the writer differs from the one made beside the conversion" "$W/fc/cmp"
		else
			pass pack/frame-cache/recording
		fi
		if ! command -v zstd >/dev/null; then
			skip pack/frames "no zstd command"
		else
			pk=$W/fc/cold/out.perfpack
			frames=$(zstd -lv "$pk" 2>/dev/null | sed -n 's/^# Zstandard Frames: *//p')
			members=$(tar --zstd -tf "$pk" | wc -l)
			if [ "$frames" != $((members + 1)) ]; then
				fail pack/frames "$frames zstd frames for $members members (one each and one for the end blocks wanted)" /dev/null
			elif ! cmp <(zstd -dc "$pk" | tar -tvf - 2>&1) <(tar --zstd -tvf "$pk" 2>&1) >"$W/fc/cmp" 2>&1 ||
				! zstd -dc "$pk" | tar -tf - >/dev/null 2>"$W/fc/tarerr" || [ -s "$W/fc/tarerr" ]; then
				fail pack/frames "zstd -d | tar lists other members, or tar complains" "$W/fc/tarerr"
			else
				pass "pack/frames ($frames frames)"
			fi
		fi
		# a pipe has no writeback to start: the writer goes on writing
		if selected pack/to-pipe; then
			XDG_CACHE_HOME=$W/fc/xdg "$PERFCONV" -q "${args[@]}" -f pack -o - 2>"$W/fc/pipe.err" </dev/null | cat >"$W/fc/pipe.perfpack"
			rc=${PIPESTATUS[0]}
			if [ "$rc" != 0 ] || ! cmp "$W/fc/cold/out.perfpack" "$W/fc/pipe.perfpack" >"$W/fc/cmp" 2>&1; then
				[ "$rc" = 0 ] || cp "$W/fc/pipe.err" "$W/fc/cmp"
				fail pack/to-pipe "exit status $rc, or the pack written to a pipe differs from the one written to a file" "$W/fc/cmp"
			else
				pass pack/to-pipe
			fi
		fi
	fi
fi

# ---------------------------------------------------------------------------------------------------
# Members known by their files: fp-callgraph packed from copies of its files (kallsyms, the
# program, libc, and libc again in the build-id cache, which is packed once as the same bytes)
# made here.  perfconv gives a file an identity (device, inode, size, mtime, ctime) only once
# its ctime is 2 s old, so the test waits that long after copying.  Packed twice, the second
# pack takes the members' frames by their files' identities, without reading them, and whether
# the two copies of libc are the same by theirs, and has the first one's bytes.  Then kallsyms
# and the build-id cache's libc are changed in place, their sizes and mtimes kept (as a tool
# that restores times would leave them): after 2 s more, the pack must hold kallsyms' new
# bytes, read again, the other members still come by their identities, and the build-id
# cache's libc is a member of its own.
if selected pack/known; then
	K=$W/known
	rm -rf "$K"
	kbid=.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40	# libc's
	mkdir -p "$K/root/tmp/probe/fx/bin" "$K/root/usr/lib/x86_64-linux-gnu" "$K/home/.debug/$kbid"
	cp -p "$ROOT/kallsyms" "$K/root/kallsyms"
	cp -p "$ROOT/tmp/probe/fx/bin/callgraph" "$K/root/tmp/probe/fx/bin/"
	cp -p "$ROOT/usr/lib/x86_64-linux-gnu/libc.so.6" "$K/root/usr/lib/x86_64-linux-gnu/"
	cp -p "$ROOT/usr/lib/x86_64-linux-gnu/libc.so.6" "$K/home/.debug/$kbid/elf"
	kn_run() {	# kn_run DIR: the pack, -v, into DIR/out.perfpack
		HOME=$K/home XDG_CACHE_HOME=$K/xdg run_pc "$1" -v -i "$FIX/fp-callgraph/perf.data" --symfs "$K/root" \
			--kallsyms "$K/root/kallsyms" -o "$1/out.perfpack"
	}
	kn_known() { sed -n 's/^perfconv: pack members known by their files. identity, not hashed: \([0-9]*\) of.*/\1/p' "$1/err"; }
	sleep 3
	kn_run "$K/cold"
	kn_run "$K/warm"
	known=$(kn_known "$K/warm")
	if [ "$rc" != 0 ] || [ "${known:-0}" -lt 2 ]; then
		fail pack/known/warm "exit status $rc, ${known:-no} members known by their files packing again (2 or more wanted)" "$K/warm/err"
	elif ! cmp "$K/cold/out.perfpack" "$K/warm/out.perfpack" >"$K/cmp" 2>&1; then
		fail pack/known/warm "the pack of members known by their files differs from the one that read them" "$K/cmp"
	else
		pass "pack/known/warm ($known members not read)"
	fi
	# the first letter of the first symbol's name, and a byte of libc's .text in the build-id
	# cache's copy, in place: the same sizes, the mtimes put back
	printf 'Q' | dd of="$K/root/kallsyms" bs=1 seek=19 conv=notrunc status=none
	touch -r "$ROOT/kallsyms" "$K/root/kallsyms"
	printf '\377' | dd of="$K/home/.debug/$kbid/elf" bs=1 seek=1000000 conv=notrunc status=none
	touch -r "$ROOT/usr/lib/x86_64-linux-gnu/libc.so.6" "$K/home/.debug/$kbid/elf"
	sleep 3
	kn_run "$K/changed"
	again=$(kn_known "$K/changed")
	if [ "$rc" != 0 ] || cmp -s "$ROOT/kallsyms" "$K/root/kallsyms" ||
		[ "$(stat -c %s.%Y "$ROOT/kallsyms")" != "$(stat -c %s.%Y "$K/root/kallsyms")" ]; then
		fail pack/known/changed "exit status $rc, or kallsyms was not changed in place with its size and mtime kept" "$K/changed/err"
	elif ! tar --zstd -xOf "$K/changed/out.perfpack" files/kernel/kallsyms | cmp - "$K/root/kallsyms" >"$K/cmp" 2>&1; then
		fail pack/known/changed "the pack holds kallsyms as it was before it changed" "$K/cmp"
	elif [ "${again:-0}" != $((known - 1)) ]; then
		fail pack/known/changed "${again:-no} members known by their files after kallsyms changed ($((known - 1)) wanted)" "$K/changed/err"
	else
		pass pack/known/changed
	fi
	# the summary counts each packed file once, under the place of the first file with its
	# bytes: its places add up to its files (libc found twice is one file, then two)
	kn_summary() {	# kn_summary DIR: "FILES SUM-OF-PLACES" of the summary line
		sed -n "s/^perfconv: packed '.*': [^(]*([^)]* and \([0-9]*\) files of [^)]*): \(.*\)/\1 \2/p" "$1/err" |
			awk '{ n = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) n += $i; print $1, n }'
	}
	ws=$(kn_summary "$K/warm")
	cs=$(kn_summary "$K/changed")
	if [ -z "$ws" ] || [ "${ws% *}" != "${ws#* }" ] || [ -z "$cs" ] || [ "${cs% *}" != "${cs#* }" ] ||
		[ "${cs% *}" != $((${ws% *} + 1)) ]; then
		fail pack/known/summary "the files by place do not add up to the files packed (files, sum: '$ws', then '$cs')" "$K/changed/err"
	else
		pass "pack/known/summary (${ws% *} files, then ${cs% *})"
	fi
	# the places in words a user reads, not the pack's directory names (root, buildid)
	if grep -q "^perfconv: packed '.*): [0-9]* at their recorded paths\(, [0-9]* [a-z]\|$\)" "$K/warm/err" &&
		! grep -q "^perfconv: packed .* from \(root\|buildid\|proc\|tmp\|mapdir\)\b" "$K/warm/err"; then
		pass pack/known/summary-words
	else
		fail pack/known/summary-words "the summary must say where the files came from in words" "$K/warm/err"
	fi
	if ! grep -q "^file	buildid	$kbid/elf	files/root/usr/lib/x86_64-linux-gnu/libc.so.6	" <(tar --zstd -xOf "$K/warm/out.perfpack" MANIFEST); then
		fail pack/known/same-bytes "the build-id cache's copy of libc was not packed as libc's bytes before it changed" "$K/warm/err"
	elif ! tar --zstd -xOf "$K/changed/out.perfpack" MANIFEST | grep -q "^file	buildid	$kbid/elf	files/buildid/$kbid/elf	" ||
		cmp -s "$ROOT/usr/lib/x86_64-linux-gnu/libc.so.6" "$K/home/.debug/$kbid/elf"; then
		fail pack/known/same-bytes "the build-id cache's libc, changed, is still packed as the other libc" "$K/changed/err"
	else
		pass pack/known/same-bytes
	fi
fi

# ---------------------------------------------------------------------------------------------------
# The running kernel's symbols: a recording made here packs /proc/kallsyms as the symbol cache
# holds its text.  Packed with an empty cache (the text read and kept, frames written), again
# (the text known by its entry's CRC alone, its frame kept), and once more with the frames gone
# but the text kept (known by the CRC, then read from the entry because its frame is missing):
# the three packs are the same bytes.  (perf record -N: the build-id cache of HOME, which the
# other cases read, stays as it is.)
if selected pack/running-kernel; then
	R=$W/rk
	rm -rf "$R"
	mkdir -p "$R"
	if [ "${LIVE:-1}" = 0 ]; then
		skip pack/running-kernel "LIVE=0"
	elif ! command -v perf >/dev/null 2>&1 ||
		! perf record -q -N -g -e cpu-clock -c 100000 -o "$R/r.data" -- "$ROOT/tmp/probe/fx/bin/callgraph" \
			>/dev/null 2>"$R/rec.err"; then
		skip pack/running-kernel "perf cannot record here ($(head -n 1 "$R/rec.err" 2>/dev/null))"
	elif [ ! -r /proc/sys/kernel/random/boot_id ]; then
		skip pack/running-kernel "no boot id: the kernel's symbols are not cached"
	else
		rk_run() {	# rk_run NAME: the pack, -v, into $R/NAME/out.perfpack
			XDG_CACHE_HOME=$R/xdg run_pc "$R/$1" -v -i "$R/r.data" -o "$R/$1/out.perfpack"
		}
		rk_run cold
		rc_cold=$rc
		rk_run warm
		rc_warm=$rc
		rm -rf "$R/xdg/perfconv/pack" "$R/xdg/perfconv/pack-sum"
		rk_run again
		bad=
		[ "$rc_cold$rc_warm$rc" = 000 ] || bad="exit status $rc_cold, $rc_warm, $rc"
		[ -n "$bad" ] || [ -n "$(ls -A "$R/xdg/perfconv/kallsyms-text" 2>/dev/null)" ] ||
			bad="no kallsyms-text entry in the cache"
		[ -n "$bad" ] || tar --zstd -tf "$R/cold/out.perfpack" 2>/dev/null | grep -qx files/kernel/kallsyms ||
			bad="the pack holds no files/kernel/kallsyms"
		[ -n "$bad" ] || grep -q '^perfconv: pack frame cache: [1-9][0-9]* hit, 0 miss' "$R/warm/err" ||
			bad="the second pack did not take every frame from the cache"
		[ -n "$bad" ] || grep -q '^perfconv: pack frame cache: 0 hit, [1-9][0-9]* miss' "$R/again/err" ||
			bad="the third pack found frames the test removed"
		[ -n "$bad" ] || { cmp "$R/cold/out.perfpack" "$R/warm/out.perfpack" && cmp "$R/cold/out.perfpack" "$R/again/out.perfpack"; } >"$R/cmp" 2>&1 ||
			bad="the packs differ"
		if [ -n "$bad" ]; then
			cat "$R/cold/err" "$R/warm/err" "$R/again/err" >>"$R/cmp"
			fail pack/running-kernel "$bad" "$R/cmp"
		else
			pass pack/running-kernel
		fi
	fi
fi

# ---------------------------------------------------------------------------------------------------
# The same pid on another machine: the converting machine's /tmp/perf-PID.map belongs to some other
# process that had the recorded pid.  Here it covers the recorded map's addresses with other names;
# the pack must not use it.  The control converts the recording itself (with its symbol tree, no
# --map-dir) in the same namespace: perf's rule reads /tmp, so the wrong names show up.
for fx in node-perf-basic-prof mono-jitmap; do
	selected "pack/same-pid/$fx" || continue
	dir=$FIX/$fx
	map=$(ls "$dir"/maps/perf-*.map 2>/dev/null | head -n 1)
	if [ -z "$map" ]; then
		fail "pack/same-pid/$fx" "no perf map in $dir/maps"
		continue
	fi
	if [[ $ok_packs != *" $fx "* ]]; then
		skip "pack/same-pid/$fx" "$NOPACK"
		continue
	fi
	fixture "$dir"
	pid=${map##*/perf-}
	pid=${pid%.map}
	D=$W/same-pid/$fx
	mkdir -p "$D"
	awk '{ printf "%s %s WRONG_NAME_%d\n", $1, $2, NR }' "$map" >"$D/perf-$pid.map"
	compat=()
	jit_fixture "$fx" && compat=(--perf-compat)
	# the recording's own conversion: its options without --map-dir (the last two words)
	norawmap=("${args[@]:0:${#args[@]}-2}")
	ln -f "$W/p/$fx.perfpack" "$D/pack.perfpack"
	# in the isolation: PERFCONV D PID ARGS..., a conversion before the map is put in /tmp, and two
	# after it
	# shellcheck disable=SC2016
	script='pc=$1 D=$2 pid=$3
		shift 3
		"$pc" -q "$@" -o "$D/$out-before.folded" 2>/dev/null
		cp "$D/perf-$pid.map" "/tmp/perf-$pid.map" || exit 9
		"$pc" -q "$@" -o "$D/$out.folded" 2>"$D/$out.err"
		echo $? >"$D/$out.rc"
		"$pc" -q "$@" --jit -o "$D/$out-jit.folded" 2>>"$D/$out.err"
		echo $? >>"$D/$out.rc"'
	iso -- bash -c "out=pack; $script" isolate "$PERFCONV" "$D" "$pid" -i "$D/pack.perfpack" "${compat[@]}" 2>"$D/iso.err"
	# the control: the fixture tree is needed there, so it is not hidden
	"$ISO" -k "$W" -k "$bindir" -k "$FIXABS" -- bash -c "out=raw; $script" isolate "$PERFCONV" "$D" "$pid" "${norawmap[@]}" 2>>"$D/iso.err"
	expected "$dir/expected/folded.txt" >"$D/exp"
	expected "$dir/expected/folded-jit.txt" >"$D/exp-jit" 2>/dev/null || : >"$D/exp-jit"
	if [ "$(tr '\n' ' ' <"$D/pack.rc" 2>/dev/null)" != "0 0 " ]; then
		fail "pack/same-pid/$fx" "exit status $(tr '\n' ' ' <"$D/pack.rc" 2>/dev/null) converting the pack" "$D/pack.err"
	elif grep -q WRONG_NAME "$D/pack.folded" "$D/pack-jit.folded"; then
		grep -h WRONG_NAME "$D/pack.folded" | head -n 5 >"$W/diff"
		fail "pack/same-pid/$fx" "the pack's conversion took names from /tmp/perf-$pid.map of this machine" "$W/diff"
	elif ! cmp -s "$D/exp" "$D/pack.folded"; then
		diff -u "$D/exp" "$D/pack.folded" --label expected/folded.txt --label pack | cut -c 1-200 >"$W/diff"
		also=
		cmp -s "$D/pack-before.folded" "$D/pack.folded" &&
			also=" (but no wrong name: the same output as before the map was put there, see pack/$fx/folded)"
		fail "pack/same-pid/$fx" "output differs from expected/folded.txt with a perf-$pid.map in /tmp$also" "$W/diff"
	elif [ -s "$D/exp-jit" ] && ! cmp -s "$D/exp-jit" "$D/pack-jit.folded"; then
		diff -u "$D/exp-jit" "$D/pack-jit.folded" --label expected/folded-jit.txt --label pack | cut -c 1-200 >"$W/diff"
		fail "pack/same-pid/$fx" "--jit output differs from expected/folded-jit.txt with a perf-$pid.map in /tmp" "$W/diff"
	else
		pass "pack/same-pid/$fx"
	fi
	if [ "$(tr '\n' ' ' <"$D/raw.rc" 2>/dev/null)" != "0 0 " ]; then
		fail "pack/same-pid/$fx/control" "exit status $(tr '\n' ' ' <"$D/raw.rc" 2>/dev/null) converting the recording" "$D/raw.err"
	elif grep -q WRONG_NAME "$D/raw.folded"; then
		pass "pack/same-pid/$fx/control"
	elif ! cmp -s "$D/exp" "$D/raw.folded"; then
		pass "pack/same-pid/$fx/control"
		echo "      the recording's conversion differs from expected/folded.txt, without the wrong names"
	else
		fail "pack/same-pid/$fx/control" "the recording converted with /tmp/perf-$pid.map and no --map-dir gave the expected output: the hazard is not shown" "$D/raw.err"
	fi
done

# ---------------------------------------------------------------------------------------------------
# Bad packs: the conversion fails (1, never a signal), names the pack, and leaves nothing behind.
if selected pack/bad && [[ $ok_packs == *" fp-callgraph "* ]]; then
	src=$W/p/fp-callgraph.perfpack
	# the undamaged pack must convert, or the failures below prove nothing
	run_pc "$W/bad/intact" -q -i "$src" -o "$W/bad/intact/out.folded"
	if [ "$rc" != 0 ]; then
		fail "pack/bad/intact" "the undamaged pack does not convert (exit status $rc), so the damaged ones prove nothing" "$W/bad/intact/err"
	fi
fi
if selected pack/bad && [[ $ok_packs == *" fp-callgraph "* ]] && [ "$rc" = 0 ]; then
	size=$(stat -c %s "$src")
	mkdir -p "$W/bad"
	head -c $((size / 2)) "$src" >"$W/bad/truncated.perfpack"
	cp "$src" "$W/bad/flipped.perfpack"
	mid=$((size / 2))
	b=$(od -An -tu1 -j "$mid" -N 1 "$src" | tr -d ' ')
	# shellcheck disable=SC2059
	printf "\\$(printf %03o $((b ^ 0xff)))" | dd of="$W/bad/flipped.perfpack" bs=1 seek="$mid" conv=notrunc status=none
	for kind in truncated flipped; do
		bp=$W/bad/$kind.perfpack
		O=$W/bad/out-$kind
		run_pc "$O" -q -i "$bp" -o "$O/out.folded"
		left=$(ls -A "$O" | grep -vx 'out\|err' | tr '\n' ' ')
		if [ "$rc" = 0 ]; then
			fail "pack/bad/$kind" "exit status 0: the pack $([ "$kind" = truncated ] && echo "cut at byte $mid" || echo "with byte $mid flipped") (of $size) was converted" "$O/err"
		elif [ "$rc" -ge 128 ]; then
			fail "pack/bad/$kind" "exit status $rc: a crash" "$O/err"
		elif ! grep -qF "$bp" "$O/err"; then
			fail "pack/bad/$kind" "exit status $rc, but stderr does not name $bp" "$O/err"
		elif [ -n "$left" ]; then
			fail "pack/bad/$kind" "exit status $rc, but files were left behind: $left" "$O/err"
		else
			pass "pack/bad/$kind"
		fi
	done
fi

# A pack whose sparse member declares 300 MB of holes in a few hundred bytes: refused as an archive
# bomb (the holes cost nothing until read, and a reader may read them), naming the pack
if selected pack/bad; then
	SB=$W/bad/sparse-bomb
	mkdir -p "$SB/t/files/root"
	printf 'perfpack 1\n' >"$SB/t/MANIFEST"
	truncate -s 300000000 "$SB/t/files/root/holes"
	printf 'x' >>"$SB/t/files/root/holes"
	if ! tar -C "$SB/t" -b1 --sparse --format=pax --sparse-version=1.0 --owner=0 --group=0 --mtime=@0 \
		--pax-option=delete=atime,delete=ctime -cf "$SB/bomb.tar" MANIFEST files/root/holes 2>"$SB/tar.err" ||
		! zstd -q -f --check "$SB/bomb.tar" -o "$SB/bomb.perfpack" 2>>"$SB/tar.err"; then
		skip pack/bad/sparse-bomb "GNU tar or zstd cannot make the sparse pack: $(head -n 1 "$SB/tar.err")"
	else
		run_pc "$SB/out" -q -i "$SB/bomb.perfpack" -o "$SB/out/out.folded"
		if [ "$rc" != 1 ]; then
			fail pack/bad/sparse-bomb "exit status $rc, expected 1" "$SB/out/err"
		elif ! grep -qF "$SB/bomb.perfpack" "$SB/out/err" || ! grep -q "archive bomb" "$SB/out/err"; then
			fail pack/bad/sparse-bomb "the message does not name the pack and the archive bomb" "$SB/out/err"
		else
			pass pack/bad/sparse-bomb
		fi
	fi
	rm -rf "$SB/t"
fi

# ---------------------------------------------------------------------------------------------------
# Batch mode over packs: two fixtures of the same build-id (callgraph e1bab191...) packed from two
# symbol trees, the whole tree and one without the debug files: each output is its own pack's,
# folded as perf made it, svg as the recording gives it.
if selected pack/batch; then
	a=fp-callgraph b=fp-stripped-debuglink-nodebug
	if [[ $ok_packs != *" $a "* ]] || [[ $ok_packs != *" $b "* ]]; then
		skip pack/batch "the pack of $a or $b was not made (a FAIL above says why)"
	else
		B=$W/batch
		mkdir -p "$B/in" "$B/ref"
		ln -f "$W/p/$a.perfpack" "$B/in/$a.perfpack"
		ln -f "$W/p/$b.perfpack" "$B/in/$b.perfpack"
		fixture "$FIX/fp-callgraph"
		"$PERFCONV" -q "${args[@]}" -o "$B/ref/$a.svg" 2>/dev/null
		"$PERFCONV" -q -i "$FIX/fp-stripped-debuglink/perf.data" --symfs "$W/symfs-nodebug" --kallsyms "$ROOT/kallsyms" \
			-o "$B/ref/$b.svg" 2>/dev/null
		iso -- "$PERFCONV" -O "$B/out" -j 2 -f folded,svg "$B/in/" >"$B/stdout" 2>"$B/err"
		rc=$?
		bad=
		[ "$rc" = 0 ] || bad="exit status $rc"
		for p in "$a|$FIX/fp-callgraph/expected/folded.txt" "$b|$FIX/fp-stripped-debuglink/expected/folded-nodebug.txt"; do
			n=${p%%|*} e=${p#*|}
			# as the default mode draws it, runs of unnamed frames folded
			expected_as "$e" >"$B/ref/$n.folded" && e=$B/ref/$n.folded
			for ext in folded svg; do
				mapfile -t got < <(find "$B/out" -type f -name "$n.*$ext" 2>/dev/null)
				if [ "${#got[@]}" != 1 ]; then
					bad="${bad:-${#got[@]} outputs $n.*$ext in $B/out, expected 1}"
					continue
				fi
				if [ "$ext" = folded ]; then
					if ! cmp -s "$e" "${got[0]}"; then
						diff -u "$e" "${got[0]}" --label "${e#"$B"/}" --label batch >>"$B/err"
						bad="${bad:-${got[0]#"$B"/} differs from ${e#"$B"/} (perf output, runs folded)}"
					fi
				elif ! cmp -s "$B/ref/$n.svg" "${got[0]}"; then
					bad="${bad:-${got[0]#"$B"/} differs from the svg of the recording}"
				fi
			done
		done
		if [ -n "$bad" ]; then fail pack/batch "$bad" "$B/err"; else pass pack/batch; fi
	fi
fi

# ---------------------------------------------------------------------------------------------------
# Holes: a pack holds of each ELF file and .NET image only what perfconv reads, the rest as holes
# of sparse members (the cases above show that nothing read is missing).
#   pack/holes/FX/size       the pack is at most a third (fp: a half) of one holding the files whole
#                            (PERFCONV_PACK_WHOLE=1)
#   pack/holes/FX/tar        GNU tar extracts the same files from it as from the pack written with
#                            the holes as runs of zeros (PERFCONV_PACK_SPARSE=0, the packs before
#                            sparse members), and the holes are not in its tar stream
#   pack/holes/FX/zero-runs  that pack converts, in the isolation, as the sparse one does
holes_case() {
	local id=$1 fx=$2 most=$3 H=$W/holes/$1 what=
	shift 3
	mkdir -p "$H/s" "$H/z"
	if [[ $ok_packs != *" $id "* ]]; then
		skip "pack/holes/$fx/*" "$NOPACK"
		return
	fi
	local pk=$W/p/$id.perfpack
	if ! PERFCONV_PACK_WHOLE=1 "$PERFCONV" -q "$@" -o "$H/whole.perfpack" 2>"$H/err" ||
		! PERFCONV_PACK_SPARSE=0 "$PERFCONV" -q "$@" -o "$W/p/$id-zero.perfpack" 2>>"$H/err"; then
		fail "pack/holes/$fx/size" "exit status $? packing with PERFCONV_PACK_WHOLE=1 or PERFCONV_PACK_SPARSE=0" "$H/err"
		return
	fi
	local s w
	s=$(stat -c %s "$pk") w=$(stat -c %s "$H/whole.perfpack")
	if [ $((s * most)) -gt "$w" ]; then
		fail "pack/holes/$fx/size" "the pack has $s bytes, more than 1/$most of the $w of the files whole"
	else
		pass "pack/holes/$fx/size"
		echo "      $s bytes, the files whole $w"
	fi
	tar -C "$H/s" --zstd -xf "$pk" 2>"$H/err" || what="tar cannot extract the pack"
	[ -n "$what" ] || tar -C "$H/z" --zstd -xf "$W/p/$id-zero.perfpack" 2>>"$H/err" || what="tar cannot extract the zero-run pack"
	# (but /proc: the two packs are made at different times, and a process of this machine
	# that has one of the recording's pids then has its comm read, and packed, by one only)
	if [ -z "$what" ]; then
		for d in s z; do grep -v "	proc	" "$H/$d/MANIFEST" >"$H/$d.manifest"; done
		{ diff -r -x proc -x MANIFEST "$H/s" "$H/z" && diff "$H/s.manifest" "$H/z.manifest"; } >"$H/err" 2>&1 ||
			what="the sparse and the zero-run packs hold other bytes"
	fi
	if [ -z "$what" ] && [ "$(zstd -dc "$pk" | wc -c)" -ge "$(zstd -dc "$W/p/$id-zero.perfpack" | wc -c)" ]; then
		what="the sparse pack's tar stream is not shorter than the zero-run pack's: no holes"
	fi
	if [ -n "$what" ]; then fail "pack/holes/$fx/tar" "$what" "$H/err"; else pass "pack/holes/$fx/tar"; fi
	iso -- bash -c 'for p in "$2" "$3"; do for f in folded perf.txt; do "$1" -q -i "$p" -o "$p.$f" || exit; done; done' \
		isolate "$PERFCONV" "$pk" "$W/p/$id-zero.perfpack" 2>"$H/err"
	local rc=$?
	if [ "$rc" != 0 ]; then
		fail "pack/holes/$fx/zero-runs" "exit status $rc converting the packs in the isolation" "$H/err"
	elif ! cmp -s "$pk.folded" "$W/p/$id-zero.perfpack.folded" || ! cmp -s "$pk.perf.txt" "$W/p/$id-zero.perfpack.perf.txt"; then
		fail "pack/holes/$fx/zero-runs" "the zero-run pack converts to other folded or perf-script output"
	else
		pass "pack/holes/$fx/zero-runs"
	fi
}
if selected pack/holes; then
	fixture "$FIX/dotnet-aspnet" &&
		holes_case dotnet-aspnet-names dotnet-aspnet 3 -i "$in" --symfs "$ROOT" --kallsyms "$FIX/dotnet-aspnet/kallsyms" --map-dir "$FIX/dotnet-aspnet/maps"
	fixture "$FIX/fp-callgraph" && holes_case fp-callgraph fp-callgraph 2 "${args[@]}"
	fixture "$FIX/dwarf-libc-dbg" && PERFCONV_DEBUG_DIR=$PERFCONV_DEBUG_DIR holes_case dwarf-libc-dbg dwarf-libc-dbg 2 "${args[@]}"
fi

echo "# packing and the recordings' conversions took $t_pack s, the packs' conversions $t_conv s"
exit 0
