#!/usr/bin/env bash
# tests/pprof.sh - the pprof writer against its real readers, go tool pprof and protoc.
#
#   pprof/FIXTURE/protoc   every fixture converts to FIXTURE.pb.gz, a gzip file whose content
#                          `protoc --decode perftools.profiles.Profile profile.proto` accepts (the
#                          profile.proto perfconv is built from)
#   pprof/FIXTURE/go       (fixtures with expected/folded.txt or folded.txt.xz) `go tool pprof -raw` of it, turned
#                          into folded lines by the script's rules, equals perf's folded stacks line for line,
#                          and `go tool pprof -top` has the same flat totals and hottest functions:
#                          tests/pprof_check.py
#   pprof/content          sample types and units, labels, mappings with build-ids, the comment
#                          with the version and command line, the time span, source files, and
#                          -list with the sources putting spin's time on its loop (fp-callgraph)
#   pprof/names            -f pprof and the .pprof / .pb.gz endings give the same gzip file (never
#                          compressed twice); batch mode names it .pb.gz
#   pprof/off-cpu*, pprof/thread-time   time profiles: see below
#   pprof/lines/FIXTURE    functions' source files and locations' lines equal addr2line -i's
#   pprof/lines/compressed-debug   the same from a zlib-compressed debug file, through the symbol cache
#
# Without golang-go or protobuf-compiler (scripts/install-deps.sh --test) the cases that need them
# are skipped with a message.  Run by tests/run.sh; prints its lines ("ok", "FAIL", "skip").
#
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2"  only cases whose name has a word
#   PROFILE_PROTO        the profile.proto to decode with (default: Debian's, as the Makefile)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" pprof
need_perfconv pprof
PROTO=${PROFILE_PROTO:-/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto}

no_go= no_protoc=
command -v go >/dev/null 2>&1 || no_go="go is not installed (scripts/install-deps.sh --test installs golang-go)"
if ! command -v protoc >/dev/null 2>&1; then
	no_protoc="protoc is not installed (scripts/install-deps.sh --test installs protobuf-compiler)"
elif [ ! -f "$PROTO" ]; then
	no_protoc="no $PROTO (golang-github-google-pprof-dev)"
fi
# make asan: the readers check the format, which make check's identical output has shown
if [ "${CONSUMERS:-1}" = 0 ]; then
	no_go="CONSUMERS=0: the real consumer reads make check's identical output" no_protoc=$no_go
fi
# go tool pprof keeps fetched profiles and its settings under HOME; the test's own directory
export HOME=$TMP/home GOCACHE=$TMP/gocache GOFLAGS=-mod=mod
mkdir -p "$HOME"

# ---------------------------------------------------------------------------------------------------
C=$TMP/case
for dir in "$FIX"/*/; do
	dir=${dir%/}
	fixture_or_skip "$dir" || continue
	selected "pprof/$fx/" || continue
	out=$TMP/$fx.pb.gz
	# perf's folded stacks, kept as folded.txt or (the larger ones) folded.txt.xz, as the default
	# mode draws them: each run of unnamed frames of one binary one frame (tests/lib.sh)
	folded=$TMP/$fx.folded.txt
	expected_as "$exp/folded.txt" "${args[@]}" >"$folded" 2>/dev/null || folded=
	run_pc "$C" -q "${args[@]}" -o "$out"
	if [ "$rc" != 0 ] || ! gzip -t "$out" 2>/dev/null; then
		fail "pprof/$fx/protoc" "exit status $rc, or the output is not a gzip file" "$C/err"
		continue
	fi
	if selected "pprof/$fx/protoc"; then
		if [ -n "$no_protoc" ]; then
			skip "pprof/$fx/protoc" "$no_protoc"
		elif gzip -dc "$out" | protoc --decode perftools.profiles.Profile -I "$(dirname "$PROTO")" \
			"$(basename "$PROTO")" >"$C/decoded" 2>"$C/protoc.err" && grep -q '^sample_type {' "$C/decoded" &&
			{ [ -n "$folded" ] && [ ! -s "$folded" ] || grep -q '^sample {' "$C/decoded"; }; then
			pass "pprof/$fx/protoc"
		else
			fail "pprof/$fx/protoc" "protoc --decode refused it, or it has no sample types or no samples" "$C/protoc.err"
		fi
	fi
	if [ -n "$folded" ] && selected "pprof/$fx/go"; then
		if [ -n "$no_go" ]; then
			skip "pprof/$fx/go" "$no_go"
		elif python3 "$top/tests/pprof_check.py" "$out" "$folded" >"$C/check" 2>&1; then
			pass "pprof/$fx/go ($(head -c 160 "$C/check"))"
		else
			fail "pprof/$fx/go" "go tool pprof reads other stacks than perf's folded output" "$C/check"
		fi
	fi
done

if selected pprof/content; then
	fx=fp-callgraph
	fixture "$FIX/$fx"
	out=$TMP/content.pb.gz
	run_pc "$C" -q "${args[@]}" -o "$out"
	bad=
	if [ -n "$no_go" ]; then
		skip pprof/content "$no_go"
	elif [ "$rc" != 0 ]; then
		fail pprof/content "exit status $rc" "$C/err"
	else
		go tool pprof -symbolize=none -raw "$out" >"$C/raw" 2>"$C/raw.err"
		want=("PeriodType: cpu-clock:pppH nanoseconds" "samples/count cpu-clock:pppH/nanoseconds\\[dflt\\]"
			"Comment: perfconv " "Comment: .*-o $out" "Duration: 529\\."
			"thread:\\[callgraph\\]" "pid:\\[13555\\] tid:\\[13555\\]"
			"^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x1000 /tmp/probe/fx/bin/callgraph e1bab1914ae852a42a93b1cdcf1029d57e9c0acb \\[FN\\]\\[FL\\]\\[LN\\]$"
			"\\[kernel.kallsyms\\] [0-9a-f]\\{40\\} \\[FN\\]"
			"M=1 spin /tmp/probe/fx/bin/callgraph.c:[0-9]* s=0" "M=[0-9]* do_syscall_64 :0 s=0")
		for w in "${want[@]}"; do
			grep -q -- "$w" "$C/raw" || bad="${bad:-go tool pprof -raw lacks '$w'}"
		done
		# a location's address is the process address: spin's must lie in the executable's mapping
		python3 - "$C/raw" <<'EOF' || bad="${bad:-a location address lies outside its mapping}"
import re, sys
t = open(sys.argv[1]).read()
maps = {int(m[0]): (int(m[1], 16), int(m[2], 16)) for m in re.findall(r'^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/', t, re.M)}
for lid, addr, mid in re.findall(r'^\s*(\d+): (0x[0-9a-f]+) M=(\d+) ', t, re.M):
    lo, hi = maps[int(mid)]
    if not lo <= int(addr, 16) < hi:
        sys.exit(1)
EOF
		# with the sources (fixtures/bin-src), -list annotates spin's loop from the profile's lines
		go tool pprof -symbolize=none -trim_path=/tmp/probe/fx/bin -source_path="$FIX/bin-src" -list '^spin$' \
			"$out" >"$C/list" 2>&1
		grep -q '^ROUTINE =* spin in callgraph.c$' "$C/list" &&
			grep -Eq '^ +[1-9][0-9.]*m?s +[0-9.]+m?s +[0-9]+: +for \(unsigned long i' "$C/list" ||
			bad="${bad:-go tool pprof -list does not put the time of spin on its loop in callgraph.c}"
		if [ -z "$bad" ]; then pass pprof/content; else fail pprof/content "$bad" "$C/raw"; fi
	fi
fi

if selected pprof/names; then
	fixture "$FIX/fp-callgraph"
	bad=
	run_pc "$C" -q "${args[@]}" -o "$TMP/n.pb.gz"
	run_pc "$C" -q "${args[@]}" -o "$TMP/n.pprof"
	run_pc "$C" -q "${args[@]}" -f pprof -o "$TMP/n.out"
	for f in n.pb.gz n.pprof n.out; do
		# one gzip layer holding the protobuf (its first field is a sample type: tag 0x0a)
		[ "$(gzip -dc "$TMP/$f" 2>/dev/null | head -c 1 | od -An -tx1 | tr -d ' ')" = 0a ] ||
			bad="${bad:-$f is not one gzip layer over the profile}"
	done
	rm -rf "$TMP/bo"
	"$PERFCONV" -q -O "$TMP/bo" -f pprof,folded "${args[@]:2}" "$FIX/fp-callgraph/perf.data" 2>"$C/err"
	[ -s "$TMP/bo/perf.data.pb.gz" ] && [ -s "$TMP/bo/perf.data.folded" ] && gzip -t "$TMP/bo/perf.data.pb.gz" ||
		bad="${bad:-batch -f pprof,folded wrote no perf.data.pb.gz}"
	if [ -z "$bad" ]; then pass pprof/names; else fail pprof/names "$bad" "$C/err"; fi
fi
# Source files and lines: the fixtures whose programs have DWARF line tables (in the file, in a
# debug file found by build-id or debuglink; frame-pointer and DWARF-unwound stacks, C and C++
# with inlined frames): every location's file and line is what binutils' addr2line -i says for
# its address (tests/pprof_lines.py).
for fx in fp-callgraph fp-stripped-debuglink mt-threads dwarf-callgraph dwarf-cpp dwarf-recurse-pipe; do
	selected "pprof/lines/$fx" || continue
	if [ -n "$no_go" ] || ! command -v addr2line >/dev/null 2>&1; then
		skip "pprof/lines/$fx" "${no_go:-addr2line (binutils) is not installed}"
		continue
	fi
	fixture "$FIX/$fx" || continue
	run_pc "$C" -q "${args[@]}" -o "$TMP/lines.pb.gz"
	if [ "$rc" != 0 ]; then
		fail "pprof/lines/$fx" "exit status $rc" "$C/err"
	elif python3 "$top/tests/pprof_lines.py" "$TMP/lines.pb.gz" "$ROOT" >"$C/lines" 2>&1; then
		pass "pprof/lines/$fx ($(head -n 1 "$C/lines"))"
	else
		fail "pprof/lines/$fx" "source lines differ from addr2line's" "$C/lines"
	fi
done

# The same lines from a debug file whose DWARF is compressed (objcopy, as distributions ship
# them): read from the image inflated into the symbol cache, on the conversion that writes it
# and on the next one, which reads it.
if selected pprof/lines/compressed-debug; then
	if [ -n "$no_go" ] || ! command -v addr2line >/dev/null 2>&1 || ! command -v objcopy >/dev/null 2>&1; then
		skip pprof/lines/compressed-debug "${no_go:-addr2line or objcopy (binutils) is not installed}"
	elif fixture "$FIX/dwarf-cpp"; then
		zroot=$TMP/symfs-zdebug
		cp -Rs "$(cd "$ROOT" && pwd)" "$zroot"
		zdbg=$(cd "$zroot" && ls usr/lib/debug/.build-id/c9/*.debug)
		rm -f "$zroot/$zdbg"
		bad=
		objcopy --compress-debug-sections=zlib "$ROOT/$zdbg" "$zroot/$zdbg" || bad="objcopy could not compress $zdbg"
		for i in 1 2; do
			[ -z "$bad" ] || break
			XDG_CACHE_HOME=$TMP/xdg-lines run_pc "$C" -q -i "$in" --symfs "$zroot" --kallsyms "$ROOT/kallsyms" -o "$TMP/zlines.pb.gz"
			if [ "$rc" != 0 ]; then
				bad="conversion $i: exit status $rc"
			elif ! python3 "$top/tests/pprof_lines.py" "$TMP/zlines.pb.gz" "$ROOT" >"$C/lines" 2>&1; then
				bad="conversion $i: source lines differ from addr2line's"
			elif ! ls "$TMP"/xdg-lines/perfconv/dwarf/* >/dev/null 2>&1; then
				bad="conversion $i: no inflated image in the symbol cache"
			fi
		done
		if [ -z "$bad" ]; then pass "pprof/lines/compressed-debug ($(head -n 1 "$C/lines"), twice)"; else fail pprof/lines/compressed-debug "$bad" "$C/lines"; fi
	fi
fi

# Time profiles (--off-cpu, --thread-time) against the folded profile of the same conversion.
#   pprof/off-cpu-fixture   tracepoint-sched-switch --off-cpu: go tool pprof reads the folded stacks
#   pprof/off-cpu           a recording of tests/offcpu/ocwork.c (-e sched:sched_switch -g): the same,
#                           with sample types waits/count and off-cpu/nanoseconds (the default)
#   pprof/thread-time       -e sched:sched_switch -e cpu-clock, --thread-time: thread-time/nanoseconds
#                           equals the folded profile, on-cpu + off-cpu make it up per sample, and
#                           off-cpu holds exactly the stacks that end in [off-cpu: STATE]
# tc_check NAME PROFILE FOLDED WANT...: pprof_check.py, then each WANT in go tool pprof -raw's header.
tc_check() {
	local name=$1 prof=$2 folded=$3 w bad=
	shift 3
	if ! python3 "$top/tests/pprof_check.py" "$prof" "$folded" >"$C/check" 2>&1; then
		fail "$name" "go tool pprof reads other stacks than the folded profile" "$C/check"
		return 1
	fi
	go tool pprof -symbolize=none -raw "$prof" >"$C/raw" 2>"$C/raw.err"
	for w in "$@"; do
		grep -q -- "$w" "$C/raw" || bad="${bad:-go tool pprof -raw lacks '$w'}"
	done
	if [ -n "$bad" ]; then
		fail "$name" "$bad" "$C/raw"
		return 1
	fi
	gzip -dc "$prof" | protoc --decode perftools.profiles.Profile -I "$(dirname "$PROTO")" "$(basename "$PROTO")" \
		>/dev/null 2>"$C/protoc.err" || { fail "$name" "protoc --decode refused it" "$C/protoc.err"; return 1; }
}
oc_cases=()
for c in pprof/off-cpu-fixture pprof/off-cpu pprof/thread-time; do
	selected "$c" && oc_cases+=("$c")
done
if [ "${#oc_cases[@]}" -gt 0 ] && { [ -n "$no_go" ] || [ -n "$no_protoc" ]; }; then
	for c in "${oc_cases[@]}"; do skip "$c" "${no_go:-$no_protoc}"; done
	oc_cases=()
fi
for c in "${oc_cases[@]}"; do
	case $c in
	pprof/off-cpu-fixture)
		fixture "$FIX/tracepoint-sched-switch"
		run_pc "$C" -q "${args[@]}" --off-cpu -o "$TMP/ocf.folded" && [ "$rc" = 0 ] &&
			run_pc "$C" -q "${args[@]}" --off-cpu -o "$TMP/ocf.pb.gz"
		if [ "$rc" != 0 ]; then
			fail "$c" "exit status $rc" "$C/err"
		elif tc_check "$c" "$TMP/ocf.pb.gz" "$TMP/ocf.folded" "PeriodType: off-cpu nanoseconds" \
			"waits/count off-cpu/nanoseconds\\[dflt\\]$"; then
			pass "$c ($(head -c 160 "$C/check"))"
		fi
		;;
	pprof/off-cpu | pprof/thread-time)
		if ! command -v perf >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
			skip "$c" "needs perf and gcc"
			continue
		fi
		if [ ! -x "$TMP/ocwork" ] && ! gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$TMP/ocwork" \
			tests/offcpu/ocwork.c 2>"$TMP/gcc.log"; then
			fail "$c" "gcc could not build tests/offcpu/ocwork.c" "$TMP/gcc.log"
			continue
		fi
		n=${c#pprof/} ev=(-e sched:sched_switch) opt=--off-cpu
		[ "$n" = thread-time ] && ev+=(-e cpu-clock) opt=--thread-time
		if ! nice -n 10 perf record -q "${ev[@]}" -g -o "$TMP/$n.data" -- "$TMP/ocwork" "$TMP/$n.known" \
			>"$TMP/$n.rec.log" 2>&1; then
			skip "$c" "perf cannot record ${ev[*]} here (perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)): $(grep -m 1 -v '^$' "$TMP/$n.rec.log")"
			continue
		fi
		run_pc "$C" -q -i "$TMP/$n.data" "$opt" -o "$TMP/$n.folded" && [ "$rc" = 0 ] &&
			run_pc "$C" -q -i "$TMP/$n.data" "$opt" -o "$TMP/$n.pb.gz"
		if [ "$rc" != 0 ]; then
			fail "$c" "exit status $rc" "$C/err"
			continue
		fi
		if [ "$n" = off-cpu ]; then
			tc_check "$c" "$TMP/$n.pb.gz" "$TMP/$n.folded" "PeriodType: off-cpu nanoseconds" \
				"waits/count off-cpu/nanoseconds\\[dflt\\]$" || continue
			pass "$c ($(head -c 160 "$C/check"))"
			continue
		fi
		tc_check "$c" "$TMP/$n.pb.gz" "$TMP/$n.folded" "PeriodType: thread-time nanoseconds" \
			"samples/count thread-time/nanoseconds\\[dflt\\] on-cpu/nanoseconds off-cpu/nanoseconds$" || continue
		# the columns: on-cpu + off-cpu = thread-time; off-cpu is what folded puts under [off-cpu: S]
		if python3 - "$C/raw" "$TMP/$n.folded" >"$C/cols" 2>&1 <<'EOF'; then
import re, sys
on = off = 0
for line in open(sys.argv[1]):
    m = re.match(r'^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+):', line)
    if m:
        n, tt, a, b = map(int, m.groups())
        if a + b != tt or (a and b):
            sys.exit('a sample of %d ns has on-cpu %d and off-cpu %d' % (tt, a, b))
        on += a
        off += b
want_off = want_on = 0
for line in open(sys.argv[2]):
    stack, _, w = line.rstrip('\n').rpartition(' ')
    if re.search(r';\[off-cpu: \w+\]$', stack):
        want_off += int(w)
    else:
        want_on += int(w)
if (on, off) != (want_on, want_off) or not on or not off:
    sys.exit('on-cpu %d off-cpu %d ns, folded %d and %d' % (on, off, want_on, want_off))
print('on-cpu %.1f ms, off-cpu %.1f ms' % (on / 1e6, off / 1e6))
EOF
			pass "$c ($(cat "$C/cols"); $(head -c 120 "$C/check"))"
		else
			fail "$c" "$(tail -n 1 "$C/cols")" "$C/raw"
		fi
		;;
	esac
done
exit 0
