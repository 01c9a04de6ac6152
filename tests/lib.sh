# tests/lib.sh - what every test script of perfconv starts with, sourced as
#   . "$(dirname "$0")/lib.sh" NAME
# NAME names the temporary directory (perfconv-NAME.XXXXXX).  After it:
#   - the shell runs with set -u and LC_ALL=C, in the top directory of the tree ($top);
#   - PERFCONV (default ./perfconv) is absolute when it names a path, FIX is the fixture tree
#     (FIXTURES, default fixtures) and ROOT its symfs root; PERFCONV and FIXTURES are exported;
#   - TMP is a fresh directory, removed on exit (INT and TERM exit 130) after the processes of
#     bg_pids are stopped, and HOME an empty directory in it: no build-id cache (~/.debug) or
#     configuration of this machine may reach the conversions;
#   - filters holds the words of FILTERS (tests/run.sh passes its arguments so), and selected,
#     pass, skip, xfail and fail print the result lines that tests/run.sh counts.
# The helpers below them, in this order (a suite does not define its own under these names):
#   consumers (CONSUMERS=0); need_perfconv and need_python, which stop a script that cannot run;
#   expected, run_pc, folds_runs, expected_as and golden (a folded conversion against an expected
#   file, as the default mode folds it); for the fixtures
#   fixture, jit_fixture, missing_runtime, fixture_or_skip and symfs_without_debug; skip_all;
#   for the ASP.NET apps' load orders_body, load, before_time, running and measure; pack_offline
#   (a pack converted in tests/tools/isolate.sh); stop_pid and stop_bg (processes started in the
#   background); isolation_missing; free_port; secs and within (time taken).

# shellcheck shell=bash disable=SC2034  # rc, fx, exp, in and args are set for the scripts
set -u
export LC_ALL=C

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 1
PERFCONV=${PERFCONV:-./perfconv}
if [[ $PERFCONV == */* ]] && [ -d "$(dirname "$PERFCONV")" ]; then
	PERFCONV=$(cd "$(dirname "$PERFCONV")" && pwd)/$(basename "$PERFCONV")
fi
FIX=${FIXTURES:-fixtures}
ROOT=$FIX/root
export PERFCONV FIXTURES=$FIX

TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfconv-${1:-test}.XXXXXX") || exit 1
# the processes a script starts in the background and adds to bg_pids (servers, apps) are stopped
# with it; a script with a trap of its own calls stop_bg there
bg_pids=()
trap 'stop_bg; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
# the user's own home, for what a suite may reuse from it (the Firefox Profiler's build)
export TESTS_USER_HOME=${TESTS_USER_HOME:-$HOME}
export HOME=$TMP/home
mkdir -p "$HOME"
# no debuginfod server unless a test starts one (Debian's profile.d may set the variable)
unset DEBUGINFOD_URLS
# nor this machine's /usr/lib/debug (libc6-dbg's files), whose DWARF perf's addr2line and
# perfconv read for a file without any: the expected files were made with an empty one.  A
# fixture with its own debug/ directory stands in for it (fixture)
NODEBUG=$TMP/nodebug
mkdir -p "$NODEBUG"
export PERFCONV_DEBUG_DIR=$NODEBUG
# The tests' Python uses the standard library only.  Debian's interpreter starts in milliseconds;
# a version manager's shim first on PATH (pyenv's) takes up to seconds a start under load, which
# the hundreds of checker runs add up.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ] &&
	mkdir -p "$TMP/bin" && ln -sf /usr/bin/python3 "$TMP/bin/python3"; then
	export PATH=$TMP/bin:$PATH
fi

read -r -a filters <<<"${FILTERS-}"

# selected NAME: true when no filter was given or NAME contains one of the filter words.
selected() {
	[ "${#filters[@]}" -eq 0 ] && return 0
	local f
	for f in "${filters[@]}"; do
		case $1 in *"$f"*) return 0 ;; esac
	done
	return 1
}

# The result lines: "ok    NAME", "skip  NAME: why", "xfail NAME: why" (a known gap of the
# converter, counted as skipped) and "FAIL  NAME: why".  npass, nfail and nskip count them, for
# tests/run.sh's summary.
npass=0 nfail=0 nskip=0
pass() { npass=$((npass + 1)); echo "ok    $1"; }
skip() { nskip=$((nskip + 1)); echo "skip  $1: $2"; }
xfail() { nskip=$((nskip + 1)); echo "xfail $1: $2"; }
# fail NAME WHY [FILE]: FILE (a diff, stderr, a log) is shown below, indented, up to 20 lines.
fail() {
	nfail=$((nfail + 1))
	echo "FAIL  $1: $2"
	if [ -n "${3-}" ] && [ -s "$3" ]; then
		head -n 20 "$3" | sed 's/^/      | /'
		[ "$(wc -l <"$3")" -le 20 ] || echo "      | ..."
	fi
}

# need_perfconv NAME: without an executable PERFCONV, one FAIL line for the whole script, which
# then stops.
need_perfconv() {
	if [ ! -f "$PERFCONV" ] || [ ! -x "$PERFCONV" ]; then
		fail "$1" "'$PERFCONV' is not an executable file"
		exit 0
	fi
}

# consumers NAME: true unless CONSUMERS=0, else a skip line for NAME.  Cases that hand perfconv's
# output to a real consumer (PerfView's parser, speedscope and the SVG in Chromium, go tool pprof,
# protoc) check the format, which the sanitizer build writes byte for byte as make check's does:
# make asan sets CONSUMERS=0 and still runs every conversion of those cases.
consumers() {
	[ "${CONSUMERS:-1}" != 0 ] && return 0
	skip "$1" "CONSUMERS=0: the real consumer reads make check's identical output"
	return 1
}

# need_python NAME: without python3, one skip line for the whole script, which then stops.
need_python() {
	if ! command -v python3 >/dev/null 2>&1; then
		skip "$1" "python3 is needed (scripts/install-deps.sh --test)"
		exit 0
	fi
}

# expected FILE.txt: print an expected file, decompressing FILE.txt.xz; false when neither exists.
expected() {
	if [ -f "$1" ]; then
		cat "$1"
	elif [ -f "$1.xz" ]; then
		xz -dc "$1.xz"
	else
		return 1
	fi
}

# run_pc DIR ARGS...: run perfconv; its stdout, stderr and exit status go to DIR/out, DIR/err and
# $rc.  DIR is emptied first, so an output file written into it is new when it exists.
run_pc() {
	local d=$1
	shift
	rm -rf "$d"
	mkdir -p "$d"
	"$PERFCONV" "$@" >"$d/out" 2>"$d/err" </dev/null
	rc=$?
}

# folds_runs ARGS...: true when a folded conversion with ARGS is in the default mode, which draws
# a run of unnamed frames of one library as one frame (neither --perf-compat nor --addrs).
folds_runs() {
	local a
	for a in "$@"; do
		case $a in --perf-compat | --addrs) return 1 ;; esac
	done
	return 0
}

# expected_as FILE ARGS...: print perf's expected folded FILE (or its .xz) as a conversion with
# ARGS gives it: as it is with --perf-compat or --addrs, else with each run of unnamed frames of one
# library folded into one by tests/tools/fold_runs.py, from perf's text.  False when FILE is missing.
expected_as() {
	local exp=$1
	shift
	if folds_runs "$@"; then
		expected "$exp" >"$TMP/expected-perf" || return 1
		python3 tests/tools/fold_runs.py <"$TMP/expected-perf"
	else
		expected "$exp"
	fi
}

# golden NAME EXPECTED ARGS...: perfconv -q ARGS to a .folded file, which must equal EXPECTED (or
# its .xz) byte for byte.  EXPECTED missing fails the case: the fixtures are committed with theirs.
# In the default mode a stack's runs of unnamed frames of one library are one frame
# (expected_as); where that changes perf's file, the same conversion with --perf-compat must
# still give perf's file byte for byte.
golden() {
	local name=$1 exp=$2 d=$TMP/case what=
	shift 2
	selected "$name" || return 0
	if ! expected "$exp" >"$TMP/expected"; then
		fail "$name" "no $exp"
		return
	fi
	if folds_runs "$@"; then
		python3 tests/tools/fold_runs.py <"$TMP/expected" >"$TMP/expected-folded"
		if ! cmp -s "$TMP/expected" "$TMP/expected-folded"; then
			run_pc "$d" -q "$@" --perf-compat -o "$d/out.folded"
			if [ "$rc" != 0 ] || ! cmp -s "$TMP/expected" "$d/out.folded"; then
				fail "$name" "--perf-compat: exit status $rc or an output that differs from $exp" "$d/err"
				return
			fi
			mv "$TMP/expected-folded" "$TMP/expected"
			what=" (runs of unnamed frames folded as tests/tools/fold_runs.py folds perf's; --perf-compat: perf's)"
		fi
	fi
	run_pc "$d" -q "$@" -o "$d/out.folded"
	if [ "$rc" != 0 ] || [ ! -f "$d/out.folded" ]; then
		fail "$name" "exit status $rc, output $([ -f "$d/out.folded" ] && echo written || echo missing)" "$d/err"
	elif cmp -s "$TMP/expected" "$d/out.folded"; then
		pass "$name$what"
	else
		diff -u "$TMP/expected" "$d/out.folded" --label "$exp" --label perfconv >"$d/diff"
		fail "$name" "output differs from $exp${what:+ (runs folded)}" "$d/diff"
	fi
}

# fixture DIR: for a fixture (a directory of FIX with expected/ files: false for any other), the
# conversion its expected files were made from.  Sets
#   fx    its name;  exp  DIR/expected
#   in    pipe.data for pipe mode, else perf.jit.data (after perf inject --jit), else perf.data
#   PERFCONV_DEBUG_DIR  DIR/debug when the fixture has one (this machine's /usr/lib/debug when
#         perf made its expected files), else the empty directory
#   args  -i IN --symfs ROOT --kallsyms KALLSYMS, where KALLSYMS is the fixture's own kallsyms when
#         it has one (recorded on another kernel build), else ROOT/kallsyms; --perf-compat for
#         fixtures with JIT or .NET code (jit_fixture); then --map-dir DIR/maps
#         when it has the perf maps perf read from /tmp (always the last two words)
# A .NET fixture may need a runtime that is not installed here: see missing_runtime.
fixture() {
	local dir=$1 ks=$ROOT/kallsyms
	fx=$(basename "$dir")
	exp=$dir/expected
	[ -d "$exp" ] || return 1
	if [ -f "$dir/pipe.data" ]; then
		in=$dir/pipe.data
	elif [ -f "$dir/perf.jit.data" ]; then
		in=$dir/perf.jit.data
	else
		in=$dir/perf.data
	fi
	[ -f "$dir/kallsyms" ] && ks=$dir/kallsyms
	if [ -d "$dir/debug" ]; then
		PERFCONV_DEBUG_DIR=$(cd "$dir/debug" && pwd)
	else
		PERFCONV_DEBUG_DIR=$NODEBUG
	fi
	args=(-i "$in" --symfs "$ROOT" --kallsyms "$ks")
	# perf's expected files: where perfconv names more than perf by default (JIT and .NET
	# code), --perf-compat gives perf's names (tests/perf-identity.sh checks the default)
	jit_fixture "$fx" && args+=(--perf-compat)
	[ -d "$dir/maps" ] && args+=(--map-dir "$dir/maps")
	return 0
}

# jit_fixture NAME: the fixture has JIT or .NET code, whose names perfconv's default adds to perf's.
jit_fixture() {
	case $1 in dotnet-* | node-* | mono-*) return 0 ;; esac
	return 1
}

# missing_runtime DIR: the .NET fixtures' frames in libcoreclr.so and the framework resolve
# through ROOT/usr/share/dotnet, a link to the installed runtime, so they need the runtime version
# they were recorded with (DIR/DOTNET_RUNTIME).  When it is not installed, print why and succeed.
missing_runtime() {
	[ -f "$1/DOTNET_RUNTIME" ] || return 1
	local version
	version=$(cat "$1/DOTNET_RUNTIME")
	[ -d "/usr/share/dotnet/shared/Microsoft.NETCore.App/$version" ] && return 1
	echo "needs the .NET runtime $version in /usr/share/dotnet (recorded with it)"
}

# fixture_or_skip DIR: fixture DIR, but false, after a skip line for all of the fixture's cases
# (FX/*), when it needs a .NET runtime that is not installed.
fixture_or_skip() {
	fixture "$1" || return 1
	local why
	why=$(missing_runtime "$1") || return 0
	skip "$fx/*" "$why"
	return 1
}

# symfs_without_debug DIR: DIR becomes a copy of ROOT without the two .debug files of
# fp-stripped-debuglink, for its conversion with no debug file at all.
symfs_without_debug() {
	rm -rf "$1"
	cp -R "$ROOT" "$1" && chmod -R u+w "$1"
	rm -f "$1/tmp/probe/fx/bin/stripped/callgraph.debug" "$1"/usr/lib/debug/.build-id/e1/*.debug
}

# skip_all REASON: skip every case of the suite's "${cases[@]}" for REASON, and end the suite
skip_all() {
	local c
	for c in "${cases[@]}"; do
		skip "$c" "$1"
	done
	exit 0
}

# The ASP.NET test apps' request load (tests/aspnet-live.sh, tests/dotnet-enable.sh).
# orders_body FILE: the request body, 200 orders, one in nine with an address the app's Regex rejects
orders_body() {
	python3 - "$1" <<'EOF'
import json, sys
cats = ["book", "game", "tool", "food", "toys", "garden", "music", "sport"]
orders = [{"id": i, "sku": "%s-%05d" % (cats[i * 7 % len(cats)], i * 7919 % 100000),
           "email": "user%d@example%d.org" % (i, i % 13) if i % 9 else "broken-%d.example" % i,
           "quantity": 1 + i * 31 % 17, "price": round(1.5 + (i * 37 % 1000) / 7.0, 2),
           "tags": ["t%d" % (i % 5), "promo" if i % 4 == 0 else "std"]} for i in range(200)]
json.dump({"customer": "c-42", "orders": orders}, open(sys.argv[1], "w"))
EOF
}
# load URL UNTIL...: POST $TMP/body.json to URL in batches of 200 requests on one keep-alive
# connection while UNTIL (a command) succeeds, at most 100 batches; prints the number answered
load() {
	local url=$1 n=0 i ok=0 urls=()
	shift
	for i in $(seq 200); do urls+=("$url"); done
	while "$@" && [ "$n" -lt 100 ]; do
		i=$(curl -s -m 30 -w '\n%{http_code}\n' -H 'Content-Type: application/json' \
			--data-binary @"$TMP/body.json" "${urls[@]}" 2>/dev/null | grep -c '^200$')
		ok=$((ok + i))
		n=$((n + 1))
	done
	echo "$ok"
}
before_time() { [ "$SECONDS" -lt "$1" ]; }
running() { kill -0 "$1" 2>/dev/null; }
# measure FILE: the unnamed share of the folded stacks FILE ("unnamed N%", at most $MAX%);
# FILE.classes gets tests/dotnet-resolution.py's output, with the unnamed frames classified
measure() {
	python3 tests/dotnet-resolution.py --check-unnamed "$MAX" --classify 12 "$1" >"$1.classes" 2>&1
	sed -n 's/^[^:]*: \(unnamed [0-9.]*%\) .*/\1/p' "$1.classes" | head -n 1
}

# dotnet_build SRC BIN EXE [ARGS...]: the .NET project SRC built in Release into BIN (kept under
# build/ by the caller, keyed by the sources and the SDK, for the next run), unless BIN/EXE is there
# already; from a copy, so that no obj/ appears in the tree, and offline (no NuGet package).  ARGS go
# to dotnet build.  False when the build fails, its errors in $TMP/build.errors.
dotnet_build() {
	local src=$1 bin=$2 exe=$3 w=$TMP/dotnet-build
	shift 3
	[ -x "$bin/$exe" ] && return 0
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
	rm -rf "$w"
	mkdir -p "$w"
	cp -R "$src" "$w/src"
	if ! (cd "$w/src" && timeout 180 dotnet build -c Release -o "$w/bin" --disable-build-servers \
		-nodeReuse:false -p:UseSharedCompilation=false "$@") >"$TMP/build.log" 2>&1; then
		grep -E 'error|rror:' "$TMP/build.log" >"$TMP/build.errors"
		return 1
	fi
	mkdir -p "$(dirname "$bin")"
	rm -rf "$bin"
	mv "$w/bin" "$bin"
}

# pack_offline CASE DIR CACHE LINE REF FORBID VAR...: convert DIR/fp.perfpack in the isolation
# (tests/tools/isolate.sh: no network, the symbol cache CACHE hidden, VAR... unset) to
# DIR/pack.folded, and pass CASE when the pack needed nothing else: its MANIFEST (DIR/MANIFEST)
# holds a line matching LINE (the fetched file), the output equals REF (the conversion with the
# server) and no message matches FORBID (a stripped binary, a fetch).
pack_offline() {
	local case=$1 P=$2 cached=$3 line=$4 ref=$5 forbid=$6 bindir irc
	shift 6
	bindir=$(dirname "$(command -v "$PERFCONV")")
	"$top/tests/tools/isolate.sh" -k "$P" -k "$bindir" -x "$(cd "$FIX" && pwd)" -- bash -c '
		[ -e "$1" ] && { echo "the cache $1 is visible in the isolation" >&2; exit 99; }
		shift
		unset=()
		while [ "$1" != -- ]; do unset+=(-u "$1"); shift; done
		shift
		exec env "${unset[@]}" "$@"
	' isolate "$cached" "$@" -- "$PERFCONV" -i "$P/fp.perfpack" -o "$P/pack.folded" >"$P/iso.out" 2>"$P/iso.err" </dev/null
	irc=$?
	if ! grep -q "$line" "$P/MANIFEST"; then
		fail "$case" "the MANIFEST has no line '$line': the fetched debug file is not in the pack" "$P/MANIFEST"
	elif [ "$irc" != 0 ]; then
		fail "$case" "exit $irc converting the pack in the isolation without a server" "$P/iso.err"
	elif ! cmp -s "$P/pack.folded" "$ref"; then
		diff "$ref" "$P/pack.folded" >"$P/diff"
		fail "$case" "the pack without a server does not give what the conversion with the server gave" "$P/diff"
	elif grep -q "$forbid" "$P/iso.err"; then
		fail "$case" "the pack's conversion reports a stripped binary or a fetch" "$P/iso.err"
	else
		pass "$case (the debug file from the pack of $(wc -c <"$P/fp.perfpack") bytes, no server, no cache)"
	fi
}

# stop_pid PID: TERM, up to 5 s to exit (an app writes its perf map out), then KILL; reaped
stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# stop_bg: stop every process of bg_pids, and forget them
stop_bg() {
	local p
	for p in "${bg_pids[@]}"; do stop_pid "$p"; done
	bg_pids=()
}

# isolation_missing: print why tests/tools/isolate.sh (and the packs it checks, tar --zstd) cannot
# run here and succeed, or fail when they can
isolation_missing() {
	if [ "$(id -u)" != 0 ]; then
		echo "not root: tests/tools/isolate.sh needs a mount namespace and tmpfs mounts"
	elif ! "$top/tests/tools/isolate.sh" -- true 2>"$TMP/isolate-probe.err"; then
		echo "tests/tools/isolate.sh cannot run here: $(head -n 1 "$TMP/isolate-probe.err")"
	elif ! tar --zstd -cf /dev/null --files-from /dev/null 2>/dev/null; then
		echo "tar has no --zstd"
	else
		return 1
	fi
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on (the kernel's choice, then closed)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# secs CMD...: run it, $rc its status, $secs the elapsed seconds (two decimals)
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@"
	rc=$?
	t1=$(date +%s.%N)
	secs=$(python3 -c "print('%.2f' % ($t1 - $t0))")
}
# within EXTRA: the last secs took less than $base (the script's run that waited for nothing) + EXTRA
within() { python3 -c "import sys; sys.exit(not $secs < $base + $1)"; }

# same_but_named A B: perf script text B is A with frames A left [unknown] named (by the runtime's
# method events of --events) and nothing else changed: the same lines but frame lines that were
# [unknown] in A; prints how many frame lines were named, or why not (status 1)
same_but_named() {
	python3 - "$1" "$2" <<'PY'
import sys
a = open(sys.argv[1], 'rb').read().split(b'\n')
b = open(sys.argv[2], 'rb').read().split(b'\n')
if len(a) != len(b):
    sys.exit('%d lines against %d' % (len(a), len(b)))
named = 0
for i, (x, y) in enumerate(zip(a, b)):
    if x == y:
        continue
    if not x[:1].isspace() or not y[:1].isspace() or b'[unknown]' not in x or b'[unknown]' in y:
        sys.exit('line %d: %r against %r' % (i + 1, x, y))
    named += 1
print(named)
PY
}
