#!/usr/bin/env bash
# tests/record.sh - perfconv record: from a live .NET process to a pack in one command.
#
# The app is dotnet-live.sh's Probe (a console app that burns CPU in known managed methods; its
# build in build/dotnet-live/<hash> is reused, or made as dotnet-live.sh makes it), run with a
# large round count and killed at the end.  Cases:
#   record/man            every option of `perfconv record --help` is in man/perfconv.1's RECORD
#                         section (the page's check in run.sh reads the main --help only);
#   record/err-*          each failure says what to do, before anything starts: no-process (a pid
#                         that does not exist, exit 1), no-dir and unwritable (-o in a missing
#                         directory and in /proc, exit 1), usage (an unknown event kind, exit 2),
#                         perf-fails (a perf on PATH that fails: its own stderr is shown, exit 1,
#                         nothing left in the output directory);
#   record/perf-restart   a perf that exits with status 255 and nothing said on its first start
#                         (as perf 6.1 may when a thread of its target ends while it starts): -v
#                         says it is started again, and the recording packs (exit 0);
#   record/err-formats    -f with an unknown format, with pack, and with a format of samples under
#                         --off-cpu: each a usage error (exit 2) naming it;
#   record/off-cpu        `--off-cpu -f folded,svg -- sh` of a shell that sleeps 0.3 s twice: the
#                         folded file beside the pack, converted in-process, weighs the sleeps'
#                         clock_nanosleep stacks at 0.5 s or more in ns, and the SVG is there;
#   record/thread-time    `--thread-time -f folded` of a shell that sleeps and spins: both
#                         [off-cpu: S] stacks and on-CPU stacks of the shell;
#   record/progress       the progress line (elapsed, samples perf has written so far, bytes) on a
#                         terminal (script(1)'s pseudo-terminal), rewritten with \r; none when
#                         stderr is a file;
#   record/err-advertise  `-- sleep 3`, and two connections to perfconv's diagnostic port that are
#                         no runtime's (another magic; pid 0): each refused with a warning that
#                         names the socket and the offset, and the recording packs as usual;
#   record/pid            `perfconv record -p PID --duration 3` of Probe started without a perf
#                         map: the pack converts to folded stacks in which Probe's managed frames
#                         are named (tests/dotnet-resolution.py: at least 90 % of the weight with
#                         managed frames has them all named), events/PID.nettrace is non-empty and
#                         starts with the nettrace magic, the pack carries it (events/0.nettrace)
#                         and its -f runtime names the process, the runtime holds no perf map open
#                         afterwards (it was off before: switched off again), no perf runs on, no
#                         work directory is left;
#   record/pid-on         the same of Probe started with DOTNET_PerfMapEnabled=1: its perf map is
#                         still open afterwards (it was on before);
#   record/namespace      Probe as pid 1 of its own pid and mount namespaces with a private tmpfs
#                         /tmp, recorded by its host pid: the socket and the perf map are found
#                         through /proc/PID/root, the frames named, the map off again, and the
#                         event stream, which names it pid 1, is laid on the host pid in the pack;
#   record/sidecar        the other way round: Probe on the host, perfconv in its own mount
#                         namespace with a private tmpfs /tmp (a sidecar container sharing the
#                         pid namespace): the socket is found through /proc/PID/root/tmp, the
#                         perf map switched on, named for the pid perf records and off again;
#   record/sidecar-noptrace  the same with perfconv stripped of CAP_SYS_PTRACE (setpriv): exit 1
#                         before anything starts, with the message that names the capability;
#   record/debug-files    `PERFCONV_SYMBOL_SERVERS=URL perfconv record -p PID` with the tests' symbol
#                         server (tests/tools/serve-symbols.py) serving the debug files of the
#                         runtime's libcoreclr.so and libclrjit.so (objcopy --only-keep-debug) at
#                         their build-id keys: both are asked for while perf records (said before
#                         the pack), and each library with samples has its debug file packed
#                         (MANIFEST: file symsrv),
#                         and a second recording with --offline asks nothing;
#   record/command        `perfconv record --duration 3 -- dotnet Probe.dll`: a pack with named
#                         frames and an event stream; the command does not outlive the recording;
#   record/startup        `perfconv record -- dotnet StartProbe.dll` (fixtures/bin-src/dotnet/
#                         StartProbe: a spin in a JIT-compiled method, then forced GCs, all within
#                         its first few hundred milliseconds): its runtime waits on perfconv's
#                         diagnostic port until the session is open (-v says it was suspended and
#                         resumed), so the method that runs only
#                         at the start is named in the folded stacks and the nettrace's GCs number
#                         what GC.CollectionCount printed;
#   record/alloc          `perfconv record --dotnet-events alloc -- dotnet EventsProbe.dll`
#                         (fixtures/bin-src/dotnet/EventsProbe: int[250] allocated in AllocInts,
#                         Record objects in AllocRecords): the pack's --alloc folded stacks have
#                         System.Int32[] as a leaf under AllocInts and EventsProbe.Record under
#                         AllocRecords, so the runtime's GCAllocationTick events carried stacks;
#   record/events-names   that pack's perf.data and stream converted without its perf map and jitdump
#                         (PERFCONV_TMP an empty directory): the stream's method events name every JIT
#                         frame, and the folded stacks, CPU and --alloc, equal the pack's, named by the
#                         runtime's perf map, but for the runtime's stubs the perf map and jitdump
#                         name too ("stub ReportStubBlock<...>": no methods, no method events);
#   record/build-ids      the pack's perf.data (perf ran with --no-buildid, perfconv wrote the
#                         section) lists, as `perf buildid-list` prints it, exactly the files
#                         perf script puts samples in that have a build-id, plus [vdso], each
#                         with the build-id readelf reads in the file (the kernel's as
#                         perf buildid-list -k reads it);
#   record/target-exits   without --duration, the app killed after 3 s: perf ends, and what was
#                         recorded is packed (exit 0), with no warning about its perf map;
#   record/sigint         without --duration, one SIGINT after 3 s: exit 0 and a pack;
#   record/sigint-twice   two SIGINTs: exit 130, nothing written (no pack, no events, no work
#                         directory), the perf map off again, no perf left.
# The live cases need root, perf, python3 and the .NET 10 SDK (unshare for record/namespace);
# LIVE=0 or DOTNET_LIVE=0 skips them.
#   PERFCONV, FILTERS as tests/run.sh;  RECORD_SECONDS=3 seconds recorded
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" record
SECS=${RECORD_SECONDS:-3}

cases=() live_cases=()
for c in man err-no-process err-no-dir err-unwritable err-usage err-perf-fails perf-restart err-formats off-cpu thread-time progress err-advertise; do
	selected "record/$c" && cases+=("record/$c")
done
for c in pid pid-on namespace sidecar sidecar-noptrace debug-files command startup alloc events-names build-ids target-exits sigint sigint-twice; do
	selected "record/$c" && live_cases+=("record/$c")
done
[ "${#cases[@]}" -eq 0 ] && [ "${#live_cases[@]}" -eq 0 ] && exit 0
need_perfconv record

pids=()
cleanup() {
	[ -n "${srv_pid:-}" ] && kill "$srv_pid" 2>/dev/null
	local p
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# pc NAME ARGS...: perfconv record; stdout, stderr and status in $TMP/NAME.{out,err,rc}
pc() {
	local n=$1
	shift
	"$PERFCONV" record "$@" >"$TMP/$n.out" 2>"$TMP/$n.err" </dev/null
	echo $? >"$TMP/$n.rc"
}
# expect_err CASE NAME STATUS PATTERN...: that exit status and every PATTERN (grep -E) on stderr
expect_err() {
	local c=$1 n=$2 st=$3 p
	shift 3
	if [ "$(cat "$TMP/$n.rc")" != "$st" ]; then
		fail "$c" "exit status $(cat "$TMP/$n.rc"), expected $st" "$TMP/$n.err"
		return 1
	fi
	for p; do
		if ! grep -qE -- "$p" "$TMP/$n.err"; then
			fail "$c" "stderr lacks /$p/" "$TMP/$n.err"
			return 1
		fi
	done
	pass "$c: $(head -n 1 "$TMP/$n.err" | cut -c1-150)"
}

# ---- without .NET ---------------------------------------------------------------------------
if selected record/man; then
	opts=$("$PERFCONV" record --help | grep -oE -- '^ +(-[A-Za-z0-9], +)?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+$')
	sed -n '/^\.Sh RECORD/,/^\.Sh /p' man/perfconv.1 | sed 's/\\-/-/g' >"$TMP/man-record.txt"
	missing=
	for o in $opts; do
		grep -qE -- "^\.It .*(Fl -${o#--}|$o)([^a-z0-9-]|\$)" "$TMP/man-record.txt" || missing="$missing $o"
	done
	if [ -z "$opts" ]; then
		fail record/man "perfconv record --help lists no option"
	elif [ -n "$missing" ]; then
		fail record/man "in perfconv record --help but not in man/perfconv.1's RECORD section:$missing"
	else
		pass "record/man ($(wc -w <<<"$opts") options)"
	fi
fi
if selected record/err-no-process; then
	true &
	gone=$!
	wait "$gone"
	if [ -e "/proc/$gone" ]; then
		skip record/err-no-process "pid $gone was reused at once"
	else
		pc noproc -p "$gone" --duration 1 -o "$TMP/noproc.perfpack"
		expect_err record/err-no-process noproc 1 "no process $gone" "give the pid of a running process"
	fi
fi
if selected record/err-no-dir; then
	pc nodir -p $$ --dotnet-events none --duration 1 -o "$TMP/missing/dir/x.perfpack"
	expect_err record/err-no-dir nodir 1 "output directory '$TMP/missing/dir' does not exist" "create it or give -o"
fi
if selected record/err-unwritable; then
	pc unwritable -p $$ --dotnet-events none --duration 1 -o /proc/x.perfpack
	expect_err record/err-unwritable unwritable 1 "cannot write in the output directory '/proc'" "give -o in a directory you can write"
fi
if selected record/err-usage; then
	pc usage --dotnet-events gc,disk -p $$ --duration 1
	expect_err record/err-usage usage 2 "unknown event kind 'disk'" "perfconv record --help"
fi
if selected record/err-perf-fails; then
	mkdir -p "$TMP/fakebin" "$TMP/fakeout"
	cat >"$TMP/fakebin/perf" <<'EOF'
#!/bin/sh
[ "$1" = --version ] && { echo "perf version 6.1.0"; exit 0; }
echo "Error: the fake perf cannot open its events (check /proc/sys/kernel/perf_event_paranoid)" >&2
exit 255
EOF
	chmod +x "$TMP/fakebin/perf"
	PATH=$TMP/fakebin:$PATH "$PERFCONV" record -p $$ --dotnet-events none --duration 1 -o "$TMP/fakeout/x.perfpack" \
		>"$TMP/perffail.out" 2>"$TMP/perffail.err" </dev/null
	echo $? >"$TMP/perffail.rc"
	if [ -n "$(ls -A "$TMP/fakeout")" ]; then
		fail record/err-perf-fails "left in the output directory: $(ls -A "$TMP/fakeout" | tr '\n' ' ')"
	else
		expect_err record/err-perf-fails perffail 1 "perf record failed \(exit status 255\)" \
			"perf: Error: the fake perf cannot open its events"
	fi
fi
if selected record/perf-restart; then
	# a perf that exits with status 255 and nothing said on its first start, as perf 6.1 does
	# when a thread of its target ends while it opens its events; the real one after
	mkdir -p "$TMP/flakybin" "$TMP/flaky"
	cat >"$TMP/flakybin/perf" <<EOF
#!/bin/sh
[ "\$1" = record ] && [ ! -e "$TMP/flaky.failed" ] && { : >"$TMP/flaky.failed"; exit 255; }
exec $(command -v perf) "\$@"
EOF
	chmod +x "$TMP/flakybin/perf"
	sleep 30 &
	spid=$!
	pids+=("$spid")
	PATH=$TMP/flakybin:$PATH "$PERFCONV" record -v -p "$spid" --dotnet-events none --duration 1 \
		-o "$TMP/flaky/x.perfpack" >"$TMP/flaky.out" 2>"$TMP/flaky.err" </dev/null
	echo $? >"$TMP/flaky.rc"
	if [ ! -e "$TMP/flaky.failed" ]; then
		fail record/perf-restart "the flaky perf never ran" "$TMP/flaky.err"
	elif [ "$(cat "$TMP/flaky.rc")" != 0 ] || [ ! -s "$TMP/flaky/x.perfpack" ]; then
		fail record/perf-restart "exit status $(cat "$TMP/flaky.rc"), pack: $(ls -A "$TMP/flaky" | tr '\n' ' ')" "$TMP/flaky.err"
	elif ! grep -q "perf exited with status 255 while it started; starting it again" "$TMP/flaky.err"; then
		fail record/perf-restart "no word of perf started again" "$TMP/flaky.err"
	else
		pass "record/perf-restart (perf started again; a pack of $(stat -c %s "$TMP/flaky/x.perfpack") bytes)"
	fi
fi
if selected record/err-formats; then
	pc fmt1 -f folded,flame -p $$ --duration 1
	pc fmt2 -f pack -p $$ --duration 1
	pc fmt3 --off-cpu -f folded,perf-script -p $$ --duration 1
	expect_err record/err-formats fmt1 2 "-f 'folded,flame': unknown format 'flame'" &&
		expect_err record/err-formats fmt2 2 "the pack is always made" &&
		expect_err record/err-formats fmt3 2 "--off-cpu makes a profile, and the perf-script format prints samples"
fi

# ---- live without .NET: the scheduler's events, the progress line ----------------------------
# can_trace CASE: root and a perf that records sched:sched_switch here (else the case is skipped)
can_trace() {
	if [ "${LIVE:-1}" = 0 ]; then
		skip "$1" "LIVE=0"
	elif [ "$(id -u)" != 0 ]; then
		skip "$1" "needs root"
	elif ! perf record -q -e sched:sched_switch -o "$TMP/tp.data" -- true >"$TMP/tp.log" 2>&1; then
		skip "$1" "perf cannot record sched:sched_switch here ($(grep -m 1 -v '^$' "$TMP/tp.log"))"
	else
		return 0
	fi
	return 1
}
if selected record/off-cpu && can_trace record/off-cpu; then
	mkdir -p "$TMP/oc"
	pc oc --dotnet-events none --off-cpu -f folded,svg -o "$TMP/oc/oc.perfpack" -- sh -c 'sleep 0.3; sleep 0.3'
	ns=$(awk '/clock_nanosleep/ { s += $NF } END { print s + 0 }' "$TMP/oc/oc.folded" 2>/dev/null)
	if [ "$(cat "$TMP/oc.rc")" != 0 ]; then
		fail record/off-cpu "exit status $(cat "$TMP/oc.rc")" "$TMP/oc.err"
	elif [ ! -s "$TMP/oc/oc.perfpack" ] || [ ! -s "$TMP/oc/oc.svg" ] || [ ! -s "$TMP/oc/oc.folded" ]; then
		fail record/off-cpu "no pack, folded or SVG beside it: $(ls "$TMP/oc" | tr '\n' ' ')" "$TMP/oc.err"
	elif [ "$ns" -lt 500000000 ]; then
		fail record/off-cpu "the sleeps weigh $ns ns in the folded stacks, expected 0.5 s or more" "$TMP/oc/oc.folded"
	elif ! grep -q 'Off-CPU Time Flame Graph' "$TMP/oc/oc.svg"; then
		fail record/off-cpu "the SVG is no off-CPU flame graph"
	else
		pass "record/off-cpu (the sleeps: $ns ns; folded and SVG beside the pack)"
	fi
fi
if selected record/thread-time && can_trace record/thread-time; then
	mkdir -p "$TMP/tt"
	pc tt --dotnet-events none --thread-time -f folded -o "$TMP/tt/tt.perfpack" -- \
		sh -c 'sleep 0.3; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'
	if [ "$(cat "$TMP/tt.rc")" != 0 ]; then
		fail record/thread-time "exit status $(cat "$TMP/tt.rc")" "$TMP/tt.err"
	elif ! grep -q '^sh;.*\[off-cpu: S\] [0-9]*$' "$TMP/tt/tt.folded"; then
		fail record/thread-time "no [off-cpu: S] stack of the shell in tt.folded" "$TMP/tt.err"
	elif ! grep '^sh;' "$TMP/tt/tt.folded" | grep -qv 'off-cpu'; then
		fail record/thread-time "no on-CPU stack of the shell in tt.folded" "$TMP/tt/tt.folded"
	else
		pass "record/thread-time ($(grep -c 'off-cpu' "$TMP/tt/tt.folded") off-CPU and $(grep -vc 'off-cpu' "$TMP/tt/tt.folded") on-CPU stacks)"
	fi
fi
if selected record/progress && can_trace record/progress; then
	mkdir -p "$TMP/prog"
	if ! command -v script >/dev/null 2>&1; then
		skip record/progress "no script(1) for a terminal"
	else
		# script(1) gives perfconv a terminal; its stderr comes out in the typescript
		script -qec "'$PERFCONV' record --dotnet-events none --duration 2 -o '$TMP/prog/tty.perfpack' -- sh -c 'while :; do :; done' </dev/null" \
			"$TMP/prog/typescript" >/dev/null 2>&1
		pc notty --dotnet-events none --duration 2 -o "$TMP/prog/notty.perfpack" -- sh -c 'while :; do :; done'
		if ! grep -aqE $'\rperfconv: record: [0-9]+ s, [0-9]+ samples, perf.data [0-9.]+ MB' "$TMP/prog/typescript"; then
			fail record/progress "no progress line with samples on the terminal" "$TMP/prog/typescript"
		elif grep -q 'samples, perf.data' "$TMP/notty.err"; then
			fail record/progress "a progress line though stderr is a file" "$TMP/notty.err"
		else
			pass "record/progress ($(grep -ao $'\r[^\r]*samples[^\r]*' "$TMP/prog/typescript" | tail -n 1 | tr -d '\r\n' | cut -c1-90))"
		fi
	fi
fi
if selected record/err-advertise && can_trace record/err-advertise; then
	mkdir -p "$TMP/adv"
	"$PERFCONV" record --dotnet-events gc -o "$TMP/adv/adv.perfpack" -- sleep 3 >"$TMP/adv.out" 2>"$TMP/adv.err" </dev/null &
	rec=$!
	sock=
	for _ in $(seq 100); do
		sock=$(ls "$TMP"/adv/.adv.perfpack.record-*/diag.sock 2>/dev/null) && [ -S "$sock" ] && break
		sleep 0.05
	done
	python3 -c '
import socket, sys
for msg in (b"ADVR_V2\0" + b"x" * 26, b"ADVR_V1\0" + b"x" * 16 + bytes(10)):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(msg)
    s.close()
' "$sock"
	wait "$rec"
	echo $? >"$TMP/adv.rc"
	if [ ! -s "$TMP/adv/adv.perfpack" ]; then
		fail record/err-advertise "no pack" "$TMP/adv.err"
	else
		expect_err record/err-advertise adv 0 \
			"warning: '[^']*/diag.sock': malformed advertise message at offset 6: not a runtime's advertise message" \
			"warning: '[^']*/diag.sock': malformed advertise message at offset 24: advertised pid 0 is no process's"
	fi
fi
[ "${#live_cases[@]}" -eq 0 ] && exit 0

# ---- live: Probe ----------------------------------------------------------------------------
cases=("${live_cases[@]}")
[ "${LIVE:-1}" != 0 ] && [ "${DOTNET_LIVE:-1}" != 0 ] || skip_all "LIVE=0 or DOTNET_LIVE=0"
[ "$(id -u)" = 0 ] || skip_all "needs root (perf record -p of another process)"
command -v dotnet >/dev/null 2>&1 || skip_all "dotnet is not installed (the .NET 10 SDK is needed)"
command -v perf >/dev/null 2>&1 || skip_all "perf is not installed (scripts/install-deps.sh --bench)"
need_python record/pid
sdk=$(dotnet --version 2>/dev/null)
dotnet --list-sdks 2>/dev/null | grep -q '^10\.' || skip_all "no .NET 10 SDK (dotnet --list-sdks)"
perf record -q -e cpu-clock -o "$TMP/probe.data" -- true >"$TMP/perf-probe.log" 2>&1 ||
	skip_all "perf record does not work here ($(grep -m 1 -v '^$' "$TMP/perf-probe.log"))"

# built as dotnet-live.sh builds it (the same directory, so each reuses the other's)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
key=$({ cat fixtures/bin-src/dotnet/Probe/*; echo "$sdk"; } | sha256sum | cut -c1-16)
bin=$top/build/dotnet-live/$key
if [ ! -x "$bin/Probe" ]; then
	cp -R fixtures/bin-src/dotnet/Probe "$TMP/src"
	if ! (cd "$TMP/src" && timeout 180 dotnet build -c Release -o "$TMP/bin" --disable-build-servers \
		-nodeReuse:false -p:UseSharedCompilation=false) >"$TMP/build.log" 2>&1; then
		grep -E 'error|rror:' "$TMP/build.log" >"$TMP/build.errors"
		for c in "${cases[@]}"; do fail "$c" "dotnet build of fixtures/bin-src/dotnet/Probe failed" "$TMP/build.errors"; done
		exit 0
	fi
	mkdir -p "$top/build/dotnet-live"
	rm -rf "$bin"
	mv "$TMP/bin" "$bin" || bin=$TMP/bin
fi

# build_app NAME: fixtures/bin-src/dotnet/NAME built into build/dotnet-live/<hash> (reused);
# prints its directory, or nothing when the build failed ($TMP/build-NAME.log says why)
build_app() {
	local k out
	k=$({ cat fixtures/bin-src/dotnet/"$1"/*; echo "$sdk"; } | sha256sum | cut -c1-16)
	out=$top/build/dotnet-live/$1-$k
	if [ ! -f "$out/$1.dll" ]; then
		rm -rf "$TMP/src-$1" "$TMP/bin-$1"
		cp -R fixtures/bin-src/dotnet/"$1" "$TMP/src-$1"
		(cd "$TMP/src-$1" && timeout 180 dotnet build -c Release -o "$TMP/bin-$1" --disable-build-servers \
			-nodeReuse:false -p:UseSharedCompilation=false) >"$TMP/build-$1.log" 2>&1 || return 0
		mkdir -p "$top/build/dotnet-live"
		rm -rf "$out"
		mv "$TMP/bin-$1" "$out" || out=$TMP/bin-$1
	fi
	echo "$out"
}

# start_probe ENV...: Probe, long enough for every case, without a perf map setting but ENV;
# sets app (false when it did not start: its diagnostics socket never appeared)
start_probe() {
	env -u DOTNET_PerfMapEnabled -u COMPlus_PerfMapEnabled "$@" "$bin/Probe" 1000000 >/dev/null 2>&1 &
	app=$!
	pids+=("$app")
	for _ in $(seq 100); do
		ls /tmp/dotnet-diagnostic-"$app"-*-socket >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
stop_app() {
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# map_open PID [NSPID]: the runtime holds its perf map open (it does while it writes it)
map_open() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -qE "/perf-${2:-$1}\.map$"
}
# perf_left DIR: a perf process still running whose command line names DIR
perf_left() {
	pgrep -f "perf record .*$1" >/dev/null 2>&1
}
# recording DIR: wait until perf has begun to write into the work directory in DIR (a loaded
# machine can take seconds to start perf, and a target that ends before leaves nothing recorded)
recording() {
	local f
	for _ in $(seq 300); do
		for f in "$1"/.*.record-*/perf.data; do
			[ -s "$f" ] && return 0
		done
		sleep 0.1
	done
	return 1
}
# same_stacks_but_stubs A B: folded stacks B equal A once the frames of the runtime's stubs, which
# perf maps and jitdumps name ("stub ...") and the method events do not, are [unknown] in both,
# stacks summed again; else the stacks that differ, and status 1
same_stacks_but_stubs() {
	python3 - "$1" "$2" <<'PY'
import collections, sys
def load(path, stubs):
    w = collections.Counter()
    for line in open(path, encoding="utf-8", errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = ["[unknown] " if stubs and f.startswith("stub ") else f for f in stack.split(";")]
        w[";".join(frames)] += int(n)
    return w
a, b = load(sys.argv[1], True), load(sys.argv[2], True)
diff = sorted(k for k in set(a) | set(b) if a[k] != b[k])
for k in diff[:20]:
    print(a[k], b[k], k)
sys.exit(1 if diff else 0)
PY
}
# check_pack CASE NAME PID: the pack NAME.perfpack and NAME.events/PID.nettrace; the folded
# stacks' managed frames named; no work directory or perf left.  True when all hold (nothing
# printed), else one FAIL line.
check_pack() {
	local c=$1 n=$2 pid=$3 d=$TMP/$2 res
	if [ "$(cat "$TMP/$n.rc")" != 0 ]; then
		fail "$c" "exit status $(cat "$TMP/$n.rc")" "$TMP/$n.err"
		return 1
	fi
	if [ ! -s "$d/$n.perfpack" ]; then
		fail "$c" "no pack $n.perfpack" "$TMP/$n.err"
		return 1
	fi
	if ! "$PERFCONV" -q -i "$d/$n.perfpack" -o "$d/$n.folded" 2>"$d/conv.err" </dev/null; then
		fail "$c" "the pack does not convert" "$d/conv.err"
		return 1
	fi
	res=$(python3 tests/dotnet-resolution.py "$d/$n.folded" 2>&1)
	if ! grep -q 'Probe!Probe.Program::Kernel' "$d/$n.folded"; then
		fail "$c" "no named frame of Probe.Program::Kernel in the pack's folded stacks ($res)"
		return 1
	fi
	if ! python3 - "$d/$n.folded" <<'EOF'; then
import sys
# the weight of the stacks with a managed frame, and of those with every managed frame named;
# the heaviest others go to the failure's file, to say which frames went unnamed
on = named = 0
unnamed = []
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    if "Probe!" not in stack or not n.isdigit():
        continue
    on += int(n)
    if "[unknown]" not in stack and "memfd:doublemapper" not in stack:
        named += int(n)
    else:
        unnamed.append((int(n), stack))
with open(sys.argv[1] + ".unnamed", "w") as f:
    f.write("%d of %d named; the heaviest stacks with an unnamed frame:\n" % (named, on))
    for n, stack in sorted(unnamed, reverse=True)[:8]:
        f.write("%d %s\n" % (n, stack))
sys.exit(0 if on and named >= 0.9 * on else 1)
EOF
		fail "$c" "fewer than 90 % of Probe's stacks fully named ($res)" "$d/$n.folded.unnamed"
		return 1
	fi
	if [ ! -s "$d/$n.events/$pid.nettrace" ] || [ "$(head -c 8 "$d/$n.events/$pid.nettrace")" != Nettrace ]; then
		fail "$c" "no nettrace stream $n.events/$pid.nettrace starting with 'Nettrace': $(ls -la "$d" "$d/$n.events" 2>&1 | tr '\n' ' ')"
		return 1
	fi
	if ls -a "$d" | grep -q '\.record-'; then
		fail "$c" "a work directory was left: $(ls -a "$d" | tr '\n' ' ')"
		return 1
	fi
	if perf_left "$d"; then
		fail "$c" "perf still runs: $(pgrep -af "perf record .*$d")"
		return 1
	fi
	return 0
}

if selected record/pid; then
	if ! start_probe; then
		fail record/pid "Probe did not start (no diagnostics socket)"
	elif map_open "$app"; then
		fail record/pid "Probe holds a perf map open though it was started without one"
	else
		mkdir -p "$TMP/pid"
		pc pid -p "$app" --duration "$SECS" -o "$TMP/pid/pid.perfpack"
		if check_pack record/pid pid "$app"; then
			if map_open "$app"; then
				fail record/pid "the perf map is still on afterwards, though it was off before" "$TMP/pid.err"
			elif ! grep -q "switched on for the recording" "$TMP/pid.err"; then
				fail record/pid "perfconv did not say it switched the perf map on" "$TMP/pid.err"
			elif ! tar --zstd -tf "$TMP/pid/pid.perfpack" 2>/dev/null | grep -q '^events/0\.nettrace$'; then
				fail record/pid "the pack does not carry the runtime's events (events/0.nettrace)" "$TMP/pid.err"
			elif ! "$PERFCONV" -q -i "$TMP/pid/pid.perfpack" -f runtime -o "$TMP/pid/pid.runtime.txt" 2>"$TMP/pid.rt.err" ||
				! grep -q "^process $app " "$TMP/pid/pid.runtime.txt"; then
				fail record/pid "the pack's runtime report does not name process $app" "$TMP/pid.rt.err"
			else
				pass "record/pid ($(python3 tests/dotnet-resolution.py "$TMP/pid/pid.folded" 2>&1 | sed 's/^[^:]*: //'); events $(stat -c %s "$TMP/pid/pid.events/$app.nettrace") bytes; the perf map off again)"
			fi
		fi
	fi
	stop_app "$app"
fi
if selected record/pid-on; then
	if ! start_probe DOTNET_PerfMapEnabled=1; then
		fail record/pid-on "Probe did not start (no diagnostics socket)"
	elif ! map_open "$app"; then
		fail record/pid-on "Probe started with DOTNET_PerfMapEnabled=1 holds no perf map open"
	else
		mkdir -p "$TMP/on"
		pc on -p "$app" --duration "$SECS" -o "$TMP/on/on.perfpack"
		if check_pack record/pid-on on "$app"; then
			if ! map_open "$app"; then
				fail record/pid-on "the perf map is off afterwards, though it was on before" "$TMP/on.err"
			else
				pass "record/pid-on (the perf map still on)"
			fi
		fi
	fi
	stop_app "$app"
fi
if selected record/namespace; then
	if ! command -v unshare >/dev/null 2>&1 ||
		! unshare --pid --mount --fork --mount-proc --propagation private sh -c 'mount -t tmpfs perfconv-rtmp /tmp' \
			>"$TMP/unshare.log" 2>&1; then
		skip record/namespace "unshare with a tmpfs /tmp does not work here ($(head -n 1 "$TMP/unshare.log" 2>/dev/null))"
	else
		# the private /tmp hides a build under /tmp: then the app runs from /var/tmp
		nsbin=$bin
		case $bin in /tmp/*)
			nsbin=$(mktemp -d /var/tmp/perfconv-record.XXXXXX) && cp -a "$bin/." "$nsbin/" ;;
		esac
		env -u DOTNET_PerfMapEnabled -u COMPlus_PerfMapEnabled \
			unshare --pid --mount --fork --mount-proc --propagation private --kill-child \
			sh -c 'mount -t tmpfs -o size=256m perfconv-rtmp /tmp && exec "$0" "$@"' \
			"$nsbin/Probe" 1000000 >/dev/null 2>&1 &
		upid=$!
		pids+=("$upid")
		hostpid=
		for _ in $(seq 100); do
			hostpid=$(awk '{ print $1 }' "/proc/$upid/task/$upid/children" 2>/dev/null)
			[ -n "$hostpid" ] && ls /proc/"$hostpid"/root/tmp/dotnet-diagnostic-1-*-socket >/dev/null 2>&1 && break
			sleep 0.1
		done
		if [ -z "$hostpid" ] || ! ls /proc/"$hostpid"/root/tmp/dotnet-diagnostic-1-*-socket >/dev/null 2>&1; then
			fail record/namespace "Probe did not start in its namespaces"
		else
			mkdir -p "$TMP/ns"
			pc ns -p "$hostpid" --duration "$SECS" -o "$TMP/ns/ns.perfpack"
			if check_pack record/namespace ns "$hostpid"; then
				"$PERFCONV" -q -i "$TMP/ns/ns.perfpack" -f runtime -o "$TMP/ns/ns.runtime.txt" 2>"$TMP/ns.rt.err"
				if map_open "$hostpid" 1; then
					fail record/namespace "the perf map is still on afterwards" "$TMP/ns.err"
				elif ! grep -q "^recording  *[1-9][0-9]* samples of process $hostpid" "$TMP/ns/ns.runtime.txt"; then
					fail record/namespace "the pack's runtime report does not lay the stream (pid 1 in its namespace) on process $hostpid" "$TMP/ns/ns.runtime.txt"
				else
					pass "record/namespace (pid 1 in its namespace, /tmp private; $(python3 tests/dotnet-resolution.py "$TMP/ns/ns.folded" 2>&1 | sed 's/^[^:]*: //'))"
				fi
			fi
		fi
		stop_app "$upid"
		[ "$nsbin" != "$bin" ] && rm -rf "$nsbin"
	fi
fi
# sidecar NAME WRAP...: perfconv record -p $app in a mount namespace of its own with a private
# /tmp, through WRAP (a command prefix, or nothing); the results in $TMP/NAME as pc leaves them
sidecar() {
	local n=$1 out
	shift
	out=$(mktemp -d /var/tmp/perfconv-sidecar.XXXXXX)
	# the sidecar's private /tmp hides whatever lies under /tmp (a checkout there): its own copy
	cp "$PERFCONV" "$out/perfconv"
	unshare --mount --propagation private sh -c 'mount -t tmpfs perfconv-sidecar /tmp && exec "$@"' sh \
		"$@" "$out/perfconv" record -p "$app" --duration "$SECS" -o "$out/$n.perfpack" \
		>"$TMP/$n.out" 2>"$TMP/$n.err" </dev/null
	echo $? >"$TMP/$n.rc"
	mkdir -p "$TMP/$n"
	rm -f "$out/perfconv"
	cp -R "$out/." "$TMP/$n/"
	rm -rf "$out"
}
can_sidecar() {
	command -v unshare >/dev/null 2>&1 &&
		unshare --mount --propagation private sh -c 'mount -t tmpfs perfconv-sidecar /tmp' >"$TMP/unshare.log" 2>&1
}
if selected record/sidecar; then
	if ! can_sidecar; then
		skip record/sidecar "unshare with a tmpfs /tmp does not work here ($(head -n 1 "$TMP/unshare.log" 2>/dev/null))"
	elif ! start_probe; then
		fail record/sidecar "Probe did not start (no diagnostics socket)"
	else
		sidecar sc
		if check_pack record/sidecar sc "$app"; then
			if ! grep -q "process $app (Probe): perf map and jitdump switched on" "$TMP/sc.err"; then
				fail record/sidecar "the perf map was not switched on through /proc/$app/root/tmp's socket" "$TMP/sc.err"
			elif map_open "$app"; then
				fail record/sidecar "the perf map is still on afterwards" "$TMP/sc.err"
			elif ! tar -I zstd -tf "$TMP/sc/sc.perfpack" 2>/dev/null | grep -q "perf-$app\.map"; then
				fail record/sidecar "the pack holds no perf-$app.map: $(tar -I zstd -tf "$TMP/sc/sc.perfpack" 2>&1 | tr '\n' ' ' | cut -c1-300)"
			else
				pass "record/sidecar (private /tmp; socket and perf-$app.map through /proc/$app/root; $(python3 tests/dotnet-resolution.py "$TMP/sc/sc.folded" 2>&1 | sed 's/^[^:]*: //'))"
			fi
		fi
	fi
	stop_app "$app"
fi
if selected record/sidecar-noptrace; then
	if ! can_sidecar || ! command -v setpriv >/dev/null 2>&1; then
		skip record/sidecar-noptrace "no unshare with a tmpfs /tmp, or no setpriv"
	elif ! start_probe; then
		fail record/sidecar-noptrace "Probe did not start (no diagnostics socket)"
	else
		sidecar scnp setpriv --bounding-set=-sys_ptrace
		if [ -n "$(ls -A "$TMP/scnp")" ]; then
			fail record/sidecar-noptrace "left in the output directory: $(ls -A "$TMP/scnp" | tr '\n' ' ')"
		else
			expect_err record/sidecar-noptrace scnp 1 "process $app \(Probe\) cannot be reached: /proc/$app/root: permission denied" \
				"without CAP_SYS_PTRACE" "--cap-add SYS_PTRACE"
		fi
	fi
	stop_app "$app"
fi
if selected record/debug-files; then
	if ! command -v objcopy >/dev/null 2>&1; then
		skip record/debug-files "no objcopy"
	elif ! start_probe; then
		fail record/debug-files "Probe did not start (no diagnostics socket)"
	else
		# the server's directory: the debug file of each runtime library at its SSQP key
		mkdir -p "$TMP/srv"
		keys=() libs=()
		for lib in libcoreclr.so libclrjit.so; do
			f=$(awk -v l="/$lib" '$NF ~ l"$" { print $NF; exit }' "/proc/$app/maps")
			bid=$(readelf -n "$f" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n 1)
			[ -n "$bid" ] || continue
			k=_.debug/elf-buildid-sym-$bid/_.debug
			mkdir -p "$TMP/srv/$(dirname "$k")"
			objcopy --only-keep-debug "$f" "$TMP/srv/$k"
			keys+=("$k")
			libs+=("$f")
		done
		: >"$TMP/srv.log"
		python3 tests/tools/serve-symbols.py "$TMP/srv" "$TMP/srv.port" "$TMP/srv.log" &
		srv_pid=$!
		for _ in $(seq 50); do [ -s "$TMP/srv.port" ] && break; sleep 0.1; done
		mkdir -p "$TMP/dbg" "$TMP/dbg-off"
		PERFCONV_SYMBOL_SERVERS=http://127.0.0.1:$(cat "$TMP/srv.port") XDG_CACHE_HOME=$TMP/dbg-cache \
			pc dbg -p "$app" --duration "$SECS" -o "$TMP/dbg/dbg.perfpack"
		asked=$(wc -l <"$TMP/srv.log")
		PERFCONV_SYMBOL_SERVERS=http://127.0.0.1:$(cat "$TMP/srv.port") XDG_CACHE_HOME=$TMP/dbg-cache-off \
			pc dbgoff --offline -p "$app" --duration 1 -o "$TMP/dbg-off/dbgoff.perfpack"
		tar --zstd -xOf "$TMP/dbg/dbg.perfpack" MANIFEST >"$TMP/dbg/MANIFEST" 2>&1
		# each asked for; packed with each library the samples' frames needed (the pack takes
		# what the conversion used: the JIT of a warmed-up app may have no sample)
		missing= packed=0
		for i in "${!keys[@]}"; do
			k=${keys[$i]}
			# once: the pack's conversion takes it from the cache
			[ "$(grep -cx "/$k" "$TMP/srv.log")" = 1 ] || missing="$missing asked-once:$k"
			if grep -q "^file[[:space:]]root[[:space:]]${libs[$i]}[[:space:]]" "$TMP/dbg/MANIFEST"; then
				grep -q "symsrv[[:space:]]$k" "$TMP/dbg/MANIFEST" || missing="$missing packed:$k"
				packed=$((packed + 1))
			fi
		done
		# fetched while recording: said before perf's own end and the pack
		fetched_line=$(grep -n 'debug files of the .NET runtime' "$TMP/dbg.err" | cut -d: -f1)
		packed_line=$(grep -n "^perfconv: packed" "$TMP/dbg.err" | cut -d: -f1)
		if [ "${#keys[@]}" != 2 ]; then
			fail record/debug-files "the build-ids of libcoreclr.so and libclrjit.so not found in Probe's maps"
		elif [ "$(cat "$TMP/dbg.rc")" != 0 ]; then
			fail record/debug-files "exit status $(cat "$TMP/dbg.rc")" "$TMP/dbg.err"
		elif [ -n "$missing" ]; then
			fail record/debug-files "not asked for or not packed:$missing" "$TMP/dbg/MANIFEST"
		elif [ "$packed" = 0 ]; then
			fail record/debug-files "no sample in either library: nothing to check in the pack" "$TMP/dbg/MANIFEST"
		elif ! grep -qE 'runtime \((libcoreclr.so, libclrjit.so|libclrjit.so, libcoreclr.so)\): 2 fetched while recording' "$TMP/dbg.err" ||
			[ -z "$packed_line" ] || [ "$fetched_line" -gt "$packed_line" ]; then
			fail record/debug-files "not said to be fetched while recording" "$TMP/dbg.err"
		elif [ "$(cat "$TMP/dbgoff.rc")" != 0 ] || [ "$(wc -l <"$TMP/srv.log")" != "$asked" ]; then
			fail record/debug-files "--offline: exit $(cat "$TMP/dbgoff.rc"), $(( $(wc -l <"$TMP/srv.log") - asked )) requests" "$TMP/dbgoff.err"
		else
			pass "record/debug-files (libcoreclr.so and libclrjit.so fetched while recording, $packed of them sampled and packed with its debug file; none asked for with --offline)"
		fi
		kill "$srv_pid" 2>/dev/null
		srv_pid=
	fi
	stop_app "$app"
fi
if selected record/command; then
	mkdir -p "$TMP/cmd"
	pc cmd --duration "$SECS" -o "$TMP/cmd/cmd.perfpack" -- dotnet "$bin/Probe.dll" 1000000
	cpid=$(sed -n "s/^perfconv: record: .* (\([0-9]*\)): runtime events in .*/\1/p" "$TMP/cmd.err" | head -n 1)
	if [ -z "$cpid" ]; then
		fail record/command "no runtime events from the command" "$TMP/cmd.err"
	elif check_pack record/command cmd "$cpid"; then
		if kill -0 "$cpid" 2>/dev/null; then
			fail record/command "the command $cpid still runs after the recording"
			kill -KILL "$cpid"
		else
			pass "record/command ($(python3 tests/dotnet-resolution.py "$TMP/cmd/cmd.folded" 2>&1 | sed 's/^[^:]*: //'))"
		fi
	fi
fi
if selected record/startup; then
	spbin=$(build_app StartProbe)
	if [ -z "$spbin" ]; then
		fail record/startup "dotnet build of fixtures/bin-src/dotnet/StartProbe failed" "$TMP/build-StartProbe.log"
	else
		mkdir -p "$TMP/startup"
		pc startup -v -o "$TMP/startup/startup.perfpack" -- dotnet "$spbin/StartProbe.dll"
		spid=$(sed -n 's/^truth pid //p' "$TMP/startup.out")
		gcs=$(sed -n 's/^truth collection-count 0 //p' "$TMP/startup.out")
		if [ -z "$spid" ] || [ -z "$gcs" ]; then
			fail record/startup "StartProbe printed no truth (its output: $(head -c 300 "$TMP/startup.out"))" "$TMP/startup.err"
		elif [ "$(cat "$TMP/startup.rc")" != 0 ]; then
			fail record/startup "exit status $(cat "$TMP/startup.rc")" "$TMP/startup.err"
		elif ! grep -q "process $spid (dotnet) connected to the diagnostic port, suspended" "$TMP/startup.err" ||
			! grep -q "process $spid (dotnet) resumed" "$TMP/startup.err"; then
			fail record/startup "the runtime did not wait on perfconv's diagnostic port" "$TMP/startup.err"
		elif ! "$PERFCONV" -q -i "$TMP/startup/startup.perfpack" -o "$TMP/startup/startup.folded" \
			2>"$TMP/startup/conv.err" </dev/null; then
			fail record/startup "the pack does not convert" "$TMP/startup/conv.err"
		elif ! grep -q 'StartProbe!StartProbe.Program::Early' "$TMP/startup/startup.folded"; then
			fail record/startup "Early, which runs only at the start, is not named in the folded stacks"
		elif ! "$PERFCONV" --events "$TMP/startup/startup.events/$spid.nettrace" >"$TMP/startup/report.txt" 2>&1; then
			fail record/startup "no readable nettrace startup.events/$spid.nettrace" "$TMP/startup/report.txt"
		else
			got=$(sed -n 's/^GCs  *\([0-9]*\):.*/\1/p' "$TMP/startup/report.txt")
			early=$(grep 'StartProbe.Program::Early' "$TMP/startup/startup.folded" | wc -l)
			if [ "$got" != "$gcs" ]; then
				fail record/startup "the nettrace holds ${got:-no} GCs, the app counted $gcs" "$TMP/startup/report.txt"
			else
				pass "record/startup (Early named in $early stacks; $got GCs in the nettrace, as the app counted)"
			fi
		fi
	fi
fi
if selected record/alloc || selected record/events-names; then
	epbin=$(build_app EventsProbe)
	if [ -z "$epbin" ]; then
		fail record/alloc "dotnet build of fixtures/bin-src/dotnet/EventsProbe failed" "$TMP/build-EventsProbe.log"
	else
		mkdir -p "$TMP/alloc"
		pc alloc -v --dotnet-events alloc -o "$TMP/alloc/alloc.perfpack" -- dotnet "$epbin/EventsProbe.dll"
		if [ "$(cat "$TMP/alloc.rc")" != 0 ]; then
			fail record/alloc "exit status $(cat "$TMP/alloc.rc")" "$TMP/alloc.err"
		elif ! "$PERFCONV" -q -i "$TMP/alloc/alloc.perfpack" --alloc -o "$TMP/alloc/alloc.folded" \
			2>"$TMP/alloc/conv.err" </dev/null; then
			fail record/alloc "the pack does not convert with --alloc" "$TMP/alloc/conv.err"
		else
			# the bytes of the stacks whose leaf is the type and which pass through the method
			ints=$(awk '/;EventsProbe!EventsProbe\.Program::AllocInts;System\.Int32\[\] [0-9]+$/ { n += $NF } END { print n + 0 }' "$TMP/alloc/alloc.folded")
			recs=$(awk '/;EventsProbe!EventsProbe\.Program::AllocRecords;EventsProbe\.Record [0-9]+$/ { n += $NF } END { print n + 0 }' "$TMP/alloc/alloc.folded")
			if [ "$ints" -eq 0 ] || [ "$recs" -eq 0 ]; then
				fail record/alloc "no allocation stacks System.Int32[] under AllocInts ($ints bytes) and EventsProbe.Record under AllocRecords ($recs bytes); the heaviest: $(sort -t' ' -k2 -rn "$TMP/alloc/alloc.folded" | awk '{ print $NF, $0 }' | sort -rn | head -3 | cut -c1-300 | tr '\n' ' ')" "$TMP/alloc.err"
			else
				pass "record/alloc (System.Int32[] under AllocInts: $ints bytes; EventsProbe.Record under AllocRecords: $recs bytes)"
			fi
		fi
		# The same recording without the runtime's perf map and jitdump: the stream's method
		# events name its JIT frames, and exactly as the perf map named them in the pack
		if selected record/events-names; then
			d=$TMP/alloc
			mkdir -p "$d/raw" "$d/notmp"
			if ! tar --zstd -xf "$d/alloc.perfpack" -C "$d/raw" perf.data events/0.nettrace 2>"$d/raw.err"; then
				fail record/events-names "the pack's perf.data and stream cannot be taken out" "$d/raw.err"
			else
				"$PERFCONV" -q -i "$d/alloc.perfpack" -o "$d/pack-cpu.folded" 2>>"$d/raw.err" </dev/null
				PERFCONV_TMP=$d/notmp "$PERFCONV" -i "$d/raw/perf.data" --events "$d/raw/events/0.nettrace" \
					-o "$d/raw-cpu.folded" 2>"$d/raw-cpu.err" </dev/null
				PERFCONV_TMP=$d/notmp "$PERFCONV" -q -i "$d/raw/perf.data" --events "$d/raw/events/0.nettrace" \
					--alloc -o "$d/raw-alloc.folded" 2>>"$d/raw.err" </dev/null
				n=$(sed -n "s/.*, \([0-9]*\) by the runtime's method events.*/\1/p" "$d/raw-cpu.err")
				# the perf map also names the runtime's stubs ("stub ReportStubBlock<...>"), which
				# are no methods and have no method events, and the jitdump the runtime stopped
				# writing (still in /tmp, where the recording says it is) may name one more
				if ! same_stacks_but_stubs "$d/pack-cpu.folded" "$d/raw-cpu.folded" >"$d/names.diff" 2>&1; then
					fail record/events-names "the stream's method events name the JIT frames otherwise than the perf map" "$d/names.diff"
				elif ! same_stacks_but_stubs "$d/alloc.folded" "$d/raw-alloc.folded" >"$d/names.diff" 2>&1; then
					fail record/events-names "--alloc's stacks differ without the perf map" "$d/names.diff"
				elif [ "${n:-0}" -lt 1 ]; then
					fail record/events-names "no JIT frame named by the stream's method events" "$d/raw-cpu.err"
				else
					pass "record/events-names ($n JIT frames named by the stream as by the perf map, $(wc -l <"$d/pack-cpu.folded") stacks the same)"
				fi
			fi
		fi
	fi
fi
if selected record/build-ids; then
	if ! command -v readelf >/dev/null 2>&1; then
		skip record/build-ids "no readelf"
	elif ! start_probe; then
		fail record/build-ids "Probe did not start"
	else
		mkdir -p "$TMP/bids"
		pc bids -v --dotnet-events none --duration "$SECS" -p "$app" -o "$TMP/bids/bids.perfpack"
		stop_app "$app"
		d=$TMP/bids
		if [ "$(cat "$TMP/bids.rc")" != 0 ]; then
			fail record/build-ids "exit status $(cat "$TMP/bids.rc")" "$TMP/bids.err"
		elif ! grep -q -- '--no-buildid' "$TMP/bids.err"; then
			fail record/build-ids "perf did not run with --no-buildid" "$TMP/bids.err"
		elif ! tar --zstd -xf "$d/bids.perfpack" -C "$d" perf.data 2>"$d/tar.err"; then
			fail record/build-ids "no perf.data in the pack" "$d/tar.err"
		else
			perf buildid-list -i "$d/perf.data" 2>/dev/null | sort -k2 >"$d/listed"
			# what perf's own pass would list: the files of the samples' addresses (perf 6.1
			# marks the sample's ip only), with the build-id each file has, and the vdso
			perf script -i "$d/perf.data" -F ip,dso -G 2>/dev/null | sed -n 's/.*(\(.*\))$/\1/p' | sort -u >"$d/hit"
			: >"$d/want"
			while read -r f; do
				case "$f" in
				'[kernel.kallsyms]')
					id=$(perf buildid-list -k 2>/dev/null) ;;
				/*)	id=$(readelf -n "$f" 2>/dev/null | sed -n 's/.*Build ID: //p' | head -1) ;;
				*)	id= ;;
				esac
				[ -n "$id" ] && echo "$id $f" >>"$d/want"
			done <"$d/hit"
			grep ' \[vdso\]$' "$d/listed" >>"$d/want"
			sort -k2 -u "$d/want" -o "$d/want"
			if ! grep -qv ' \[vdso\]$' "$d/want"; then
				fail record/build-ids "perf script puts no sample in a file with a build-id: nothing to compare" "$d/hit"
			elif ! diff "$d/want" "$d/listed" >"$d/diff"; then
				fail record/build-ids "the pack's build-ids differ from the files' with samples (< the files, > the pack)" "$d/diff"
			else
				pass "record/build-ids ($(wc -l <"$d/listed") files: $(awk '{ print $2 }' "$d/listed" | sed 's|.*/||' | tr '\n' ' ')$(sed -n 's/.*the build-ids of .* files with samples, in \(.*\)/in \1/p' "$TMP/bids.err"))"
			fi
		fi
	fi
fi
if selected record/target-exits; then
	if ! start_probe; then
		fail record/target-exits "Probe did not start"
	else
		mkdir -p "$TMP/exits"
		"$PERFCONV" record -p "$app" -o "$TMP/exits/exits.perfpack" >"$TMP/exits.out" 2>"$TMP/exits.err" </dev/null &
		rec=$!
		recording "$TMP/exits"
		sleep "$SECS"
		stop_app "$app"
		wait "$rec"
		echo $? >"$TMP/exits.rc"
		if check_pack record/target-exits exits "$app"; then
			# a runtime killed while it wrote its jitdump leaves its last record incomplete: that
			# warning is the conversion's truth about the dump, any other is the recording's fault
			if grep warning "$TMP/exits.err" | grep -qv "jit-$app\.dump': the last record, at offset [0-9]*, is incomplete"; then
				fail record/target-exits "a warning" "$TMP/exits.err"
			else
				pass "record/target-exits (packed what was recorded: $(sed -n "s/^perfconv: '[^']*': \([0-9]*\) samples read.*/\1/p" "$TMP/exits.err") samples)"
			fi
		fi
	fi
fi
# sig NAME COUNT: record Probe with no duration, then COUNT SIGINTs after SECS seconds
sig() {
	local n=$1 count=$2 rec i
	mkdir -p "$TMP/$n"
	"$PERFCONV" record -p "$app" -o "$TMP/$n/$n.perfpack" >"$TMP/$n.out" 2>"$TMP/$n.err" </dev/null &
	rec=$!
	recording "$TMP/$n"
	sleep "$SECS"
	# the second SIGINT within the stop, which takes 0.3 s on the idle machine (the sessions'
	# rundown and perf's last write, then the pack)
	for i in $(seq "$count"); do
		kill -INT "$rec"
		sleep 0.05
	done
	wait "$rec"
	echo $? >"$TMP/$n.rc"
}
if selected record/sigint; then
	if ! start_probe; then
		fail record/sigint "Probe did not start"
	else
		sig int1 1
		if check_pack record/sigint int1 "$app"; then
			if map_open "$app"; then
				fail record/sigint "the perf map is still on afterwards" "$TMP/int1.err"
			else
				pass "record/sigint (packed on one SIGINT)"
			fi
		fi
	fi
	stop_app "$app"
fi
if selected record/sigint-twice; then
	if ! start_probe; then
		fail record/sigint-twice "Probe did not start"
	else
		sig int2 2
		if [ "$(cat "$TMP/int2.rc")" != 130 ]; then
			fail record/sigint-twice "exit status $(cat "$TMP/int2.rc"), expected 130" "$TMP/int2.err"
		elif [ -n "$(ls -A "$TMP/int2")" ]; then
			fail record/sigint-twice "left in the output directory: $(ls -A "$TMP/int2" | tr '\n' ' ')"
		elif map_open "$app"; then
			fail record/sigint-twice "the perf map is still on afterwards" "$TMP/int2.err"
		elif perf_left "$TMP/int2"; then
			fail record/sigint-twice "perf still runs"
		else
			pass "record/sigint-twice (abandoned: nothing written, the perf map off again)"
		fi
	fi
	stop_app "$app"
fi
exit 0
