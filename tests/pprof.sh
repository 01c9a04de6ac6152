#!/usr/bin/env bash
# tests/pprof.sh - the pprof writer against its real readers, go tool pprof and protoc.
#
#   pprof/FIXTURE/protoc   every fixture converts to FIXTURE.pb.gz, a gzip file whose content
#                          `protoc --decode perftools.profiles.Profile profile.proto` accepts (the
#                          profile.proto perfconv is built from)
#   pprof/FIXTURE/go       (fixtures with expected/folded.txt) `go tool pprof -raw` of it, turned into folded lines by the script's
#                          rules, equals perf's folded stacks (expected/folded.txt) line for line,
#                          and `go tool pprof -top` has the same flat totals and hottest functions:
#                          tests/pprof_check.py
#   pprof/content          sample types and units, labels, mappings with build-ids, the comment
#                          with the version and command line, the time span (fp-callgraph)
#   pprof/names            -f pprof and the .pprof / .pb.gz endings give the same gzip file (never
#                          compressed twice); batch mode names it .pb.gz
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
			{ [ -f "$exp/folded.txt" ] && [ ! -s "$exp/folded.txt" ] || grep -q '^sample {' "$C/decoded"; }; then
			pass "pprof/$fx/protoc"
		else
			fail "pprof/$fx/protoc" "protoc --decode refused it, or it has no sample types or no samples" "$C/protoc.err"
		fi
	fi
	if [ -f "$exp/folded.txt" ] && selected "pprof/$fx/go"; then
		if [ -n "$no_go" ]; then
			skip "pprof/$fx/go" "$no_go"
		elif python3 "$top/tests/pprof_check.py" "$out" "$exp/folded.txt" >"$C/check" 2>&1; then
			pass "pprof/$fx/go ($(head -c 160 "$C/check"))"
		elif [ "$fx" = dwarf-callgraph ]; then
			xfail "pprof/$fx/go" "user stacks need DWARF unwinding"
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
			"^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x1000 /tmp/probe/fx/bin/callgraph e1bab1914ae852a42a93b1cdcf1029d57e9c0acb \\[FN\\]"
			"\\[kernel.kallsyms\\] [0-9a-f]\\{40\\} \\[FN\\]" "M=1 spin :0")
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
# An off-CPU profile has no sample type in pprof yet: refused with a message, nothing written.
if selected pprof/off-cpu; then
	rm -f "$TMP/oc.pb.gz"
	mkdir -p "$C"
	"$PERFCONV" -q -i "$FIX/tracepoint-sched-switch/perf.data" --off-cpu -o "$TMP/oc.pb.gz" 2>"$C/err"
	rc=$?
	if [ "$rc" = 2 ] && [ ! -e "$TMP/oc.pb.gz" ] && grep -q 'pprof format has no sample type for waits' "$C/err"; then
		pass pprof/off-cpu
	else
		fail pprof/off-cpu "--off-cpu -o x.pb.gz must be refused (exit $rc)" "$C/err"
	fi
fi
exit 0
