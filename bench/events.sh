#!/usr/bin/env bash
# bench/events.sh - a recording with a large .nettrace beside it: what --events costs.
#
# Records a .NET app under `perf record -q -a -k mono -g -F 999 -e cpu-clock` (the whole machine,
# as perfcollect records) and `dotnet-trace collect` (Microsoft-Windows-DotNETRuntime:0x40008019:5:
# GC verbose with allocation ticks, JIT, exceptions, loader, stacks) until the stream holds
# BENCH_EVENTS_MB (default 50) MB. BENCH_EVENTS_APP chooses the app:
#
#   load     (the default) bench/dotnet/EventsLoad, written to make the stream big fast:
#            allocations at two sites, an exception a millisecond, a forced GC every 50 ms;
#            dotnet-trace waits on a diagnostic port and the stream covers the app's whole life:
#            a stress of the events' path (about 30 events a sample, 5 MB of perf.data beside
#            50 MB of stream), whose ratio two CPUs bound (docs/benchmark.md)
#   service  fixtures/bin-src/dotnet/ProbeWeb, an ASP.NET Core minimal API, built and cached as
#            bench/record-cost.sh does (build/dotnet-live/ProbeWeb-<hash>), warmed up for 5 s,
#            then loaded with `node bench/load.cjs URL/work?n=2000 SECONDS 16` under perf while
#            dotnet-trace is attached by pid; SIGTERM stops dotnet-trace (with its rundown) once
#            the load ends: the kind of recording the 2x goal is about, at a real service's event
#            rate. That rate is low (8.8 MB in 300 s at 7,300 requests a second here, the rundown
#            included: 50 MB would take 29 minutes at that average, longer at the steady rate,
#            beside 900 MB or more of perf.data), so this input is recorded for BENCH_EVENTS_SECS
#            (default 300) seconds, not to a size
#   api      the same service loaded on `/orders?n=40` (forty orders made and serialized a request,
#            8 kB of JSON: the allocations of a typical API, so the stream grows by allocation ticks
#            and GCs), recorded until the stream holds the MB: a real service's recording with a
#            50 MB stream beside its perf.data, the recording the 2x goal is about
#
# For load the first recording is 5 s, for api 30 s; its size sizes the next, until the stream
# holds the MB.
# BENCH_EVENTS_SECS, when set, is the one recording's seconds for either app. Then it times, best
# of BENCH_RUNS (default 3) runs each, with peak RSS:
#
#   trace.zip                 perfconv -i perf.data -o X.trace.zip          (the recording alone)
#   trace.zip --events        the same with the stream's events in the zip   (goal: at most 2x on
#                             api; on load, a stress, its ratio is printed with no goal)
#   folded --events           perfconv -i perf.data --events S -o X.folded   (events read, not written)
#   runtime report            perfconv --events S                            (the stream alone)
#   dotnet-trace convert      dotnet-trace convert --format Speedscope S     (Microsoft's reader of the
#                             same stream, writing its own profile: the nearest job it does)
#
# and, before the rows, the recording's sizes: perf.data's samples and seconds, the stream's events
# and seconds, the events a sample and the stream's MB a second (what makes one input's ratio
# differ from the other's: the events to write beside each sample); after them, TraceEvent reading
# the timed archive's runtime events back against the stream's (exit 1 when they differ).
#
#   PERFCONV=./perfconv  BENCH_EVENTS_APP=load|service|api  BENCH_EVENTS_MB=50  BENCH_EVENTS_SECS=
#   BENCH_RUNS=3  BENCH_FRESH=1 (record again)  BENCH_EVENTS_TRACEEVENT=0 (no read back)
# Needs root (perf), the .NET 10 SDK (with ASP.NET Core for service and api), dotnet-trace
# (scripts/install-deps.sh --dotnet-trace) and, for service and api, node.
# The recording is kept in bench/work/events/ (load) or bench/work/events-APP/ (service, api).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
PERFCONV=${PERFCONV:-$top/build/perfconv}
MB=${BENCH_EVENTS_MB:-50}
RUNS=${BENCH_RUNS:-3}
APP=${BENCH_EVENTS_APP:-load}
case $APP in
load) W=$top/bench/work/events ;;
service | api) W=$top/bench/work/events-$APP ;;
*) printf 'bench events: BENCH_EVENTS_APP is load, service or api, not %s\n' "$APP" >&2; exit 2 ;;
esac
tools=${DOTNET_TOOLS:-$top/build/tools}
say() { printf 'bench events: %s\n' "$*"; }
mkdir -p "$W"
rm -f "$W"/best.*

command -v perf >/dev/null 2>&1 || { say "perf is not installed: nothing to measure"; exit 0; }
command -v dotnet >/dev/null 2>&1 || { say "the .NET SDK is not installed: nothing to measure"; exit 0; }
[ "$APP" != load ] && ! command -v node >/dev/null 2>&1 && { say "node is not installed: nothing to measure"; exit 0; }
[ -x "$tools/dotnet-trace" ] || DOTNET_TOOLS=$tools scripts/install-deps.sh --dotnet-trace >/dev/null ||
	{ say "dotnet-trace could not be installed"; exit 0; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

# every process the recording starts, stopped on any way out: a service or a tracer left behind
# would load the machine the timings run on
rec= tracer= app= tmp= partial=
cleanup() {
	[ -n "$rec" ] && kill -INT "$rec" 2>/dev/null && wait "$rec" 2>/dev/null
	[ -n "$tracer" ] && kill -TERM "$tracer" 2>/dev/null && wait "$tracer" 2>/dev/null
	[ -n "$app" ] && kill -KILL "$app" 2>/dev/null && wait "$app" 2>/dev/null
	[ -n "$tmp" ] && rm -rf "$tmp"
	# a recording cut short would be taken for the cached one next time
	[ -n "$partial" ] && rm -f "$W/perf.data" "$W/app.nettrace"
	rec= tracer= app= tmp= partial=
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# a signal interrupts a wait, not a foreground perf: perf runs as a job, so that the traps stop it
# record_load SECONDS: EventsLoad under perf and dotnet-trace, into $W/perf.data and $W/app.nettrace
record_load() {
	local secs=$1
	rm -f "$W/port.sock" "$W/app.nettrace"
	"$tools/dotnet-trace" collect --diagnostic-port "$W/port.sock" \
		--providers 'Microsoft-Windows-DotNETRuntime:0x40008019:5' -o "$W/app.nettrace" >"$W/trace.log" 2>&1 &
	tracer=$!
	for _ in $(seq 100); do [ -S "$W/port.sock" ] && break; sleep 0.1; done
	DOTNET_DiagnosticPorts=$W/port.sock perf record -q -a -k mono -g -F 999 -e cpu-clock -o "$W/perf.data" -- \
		"$W/bin/EventsLoad" "$secs" >"$W/app.log" 2>"$W/record.log" &
	rec=$!
	wait "$rec"
	rec=
	wait "$tracer"
	tracer=
}

# record_service SECONDS [PATH]: ProbeWeb, warmed up, then loaded on PATH (/work?n=2000) for SECONDS
# under perf and an attached dotnet-trace, into $W/perf.data and $W/app.nettrace
record_service() {
	local secs=$1 path=${2:-/work?n=2000} port url
	rm -f "$W/app.nettrace" "$W/perf.data" "$W/perf.data.old"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	url=http://127.0.0.1:$port
	"$bin/ProbeWeb" --urls "$url" >"$W/service.log" 2>&1 &
	app=$!
	for _ in $(seq 100); do curl -s -m 1 "$url/hello" >/dev/null 2>&1 && break; sleep 0.1; done
	# the tiered JIT settles and the pool grows before the recording, as a service runs
	node bench/load.cjs "$url$path" 5 16 >/dev/null
	"$tools/dotnet-trace" collect -p "$app" \
		--providers 'Microsoft-Windows-DotNETRuntime:0x40008019:5' -o "$W/app.nettrace" >"$W/trace.log" 2>&1 </dev/null &
	tracer=$!
	# the session has begun when the stream has its first bytes
	for _ in $(seq 200); do [ -s "$W/app.nettrace" ] && break; sleep 0.05; done
	perf record -q -a -k mono -g -F 999 -e cpu-clock -o "$W/perf.data" -- \
		node bench/load.cjs "$url$path" "$secs" 16 >"$W/app.log" 2>"$W/record.log" &
	rec=$!
	wait "$rec"
	rec=
	# a background job ignores SIGINT; dotnet-trace ends its session on SIGTERM as on Ctrl+C
	kill -TERM "$tracer"
	wait "$tracer"
	tracer=
	kill -TERM "$app"
	wait "$app"
	app=
}

# record_api SECONDS: the same on /orders?n=40
record_api() {
	record_service "$1" '/orders?n=40'
}

if [ -n "${BENCH_FRESH-}" ] || [ ! -s "$W/app.nettrace" ] || [ ! -s "$W/perf.data" ]; then
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfconv-events.XXXXXX")
	if [ "$APP" = load ]; then
		secs=5
		if [ ! -x "$W/bin/EventsLoad" ]; then
			rm -rf "$W/src" && cp -R bench/dotnet/EventsLoad "$W/src"
			(cd "$W/src" && dotnet build -c Release -o "$W/bin" --disable-build-servers -nodeReuse:false \
				-p:UseSharedCompilation=false) >"$W/build.log" 2>&1 || { say "dotnet build failed: $W/build.log"; exit 1; }
		fi
	else
		secs=30
		[ "$APP" = service ] && secs=${BENCH_EVENTS_SECS:-300}
		# shellcheck source=bench/probeweb.sh
		. "$top/bench/probeweb.sh"
		probeweb_build "$top" "$tmp" || { cp "$tmp/build.log" "$W/build.log"; say "dotnet build failed: $W/build.log"; exit 1; }
		bin=$probeweb
	fi
	[ -n "${BENCH_EVENTS_SECS-}" ] && secs=$BENCH_EVENTS_SECS
	partial=1
	while :; do
		say "recording $secs s of $APP"
		"record_$APP" "$secs"
		[ "$APP" = service ] || [ -n "${BENCH_EVENTS_SECS-}" ] && break
		got=$(($(stat -c %s "$W/app.nettrace" 2>/dev/null || echo 0) / 1000000))
		[ "$got" -ge "$MB" ] && break
		secs=$((secs * MB * 11 / 10 / (got > 0 ? got : 1) + 1))
	done
	partial=
	cleanup
fi
# the recording's sizes, from the files themselves (a cached recording has no other record of them)
"$PERFCONV" --events "$W/app.nettrace" >"$W/report.txt" 2>"$W/report.err"
samples=$("$PERFCONV" --stats -i "$W/perf.data" 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
psecs=$("$PERFCONV" --header -i "$W/perf.data" 2>/dev/null | awk '/sample duration/ { printf "%.1f", $(NF - 1) / 1000 }')
events=$(sed -n 's/.*: \([0-9]*\) events.*/\1/p' "$W/report.err" | head -n 1)
ssecs=$(sed -n '1s/.*: \([0-9.]*\) s of runtime events.*/\1/p' "$W/report.txt")
pbytes=$(stat -c %s "$W/perf.data") sbytes=$(stat -c %s "$W/app.nettrace")
say "$APP: $(cat "$W/app.log")"
awk -v pb="$pbytes" -v n="${samples:-0}" -v ps="${psecs:-0}" -v sb="$sbytes" -v e="${events:-0}" -v ss="${ssecs:-0}" 'BEGIN {
	printf "bench events: perf.data %.1f MB, %d samples in %.1f s; app.nettrace %.1f MB, %d events in %.1f s\n", pb / 1e6, n, ps, sb / 1e6, e, ss
	printf "bench events: %.2f events a sample, %.3f MB of stream a second of recording\n", (n > 0 ? e / n : 0), (ss > 0 ? sb / 1e6 / ss : 0)
}'

# best NAME CMD...: one more run of CMD: "WALL CPU RSS_KB" appended to $W/best.NAME
best() {
	local name=$1
	shift
	# the last command's output written back first (dotnet-trace convert's 40 MB of JSON): a run
	# that starts while the disk writes it waits for it, and the recording alone ran right after
	sync
	python3 - "$@" >>"$W/best.$name" <<'PY'
import os, subprocess, sys, time
t = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("bench: %s exited with status %d" % (" ".join(sys.argv[1:]), os.waitstatus_to_exitcode(status)))
print("%.3f %.3f %d" % (time.monotonic() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
PY
}
row() {	# best wall, best CPU, largest RSS in MB
	sort -n -k1,1 "$W/best.$1" | head -n 1 | awk '{ printf "%s ", $1 }'
	sort -n -k2,2 "$W/best.$1" | head -n 1 | awk '{ printf "%s ", $2 }'
	sort -n -k3,3 "$W/best.$1" | tail -n 1 | awk '{ printf "%.0f\n", $3 / 1024 }'
}

for _ in $(seq "$RUNS"); do
	best zip "$PERFCONV" -q -i "$W/perf.data" -o "$W/out.trace.zip"
	best zipev "$PERFCONV" -q -i "$W/perf.data" --events "$W/app.nettrace" -o "$W/out-events.trace.zip"
	best foldev "$PERFCONV" -q -i "$W/perf.data" --events "$W/app.nettrace" -o "$W/out.folded"
	best report "$PERFCONV" --events "$W/app.nettrace"
	best convert "$tools/dotnet-trace" convert --format Speedscope -o "$W/convert.speedscope.json" "$W/app.nettrace"
done
read -r zw zc zr <<<"$(row zip)"
printf '%-44s %9s %9s %8s %7s\n' "" "wall s" "cpu s" "RSS MB" "ratio"
for r in zip zipev foldev report convert; do
	[ -s "$W/best.$r" ] || continue
	read -r w c m <<<"$(row $r)"
	case $r in
	zip) label="trace.zip (the recording alone)" ;;
	zipev) label="trace.zip --events (goal: at most 2x)"
		[ "$APP" = load ] && label="trace.zip --events (stress input, no goal)" ;;
	foldev) label="folded --events" ;;
	report) label="runtime report of the stream alone" ;;
	convert) label="dotnet-trace convert --format Speedscope" ;;
	esac
	printf '%-44s %9s %9s %8s %7s\n' "$label" "$w" "$c" "$m" "$(awk -v a="$w" -v b="$zw" 'BEGIN { printf "%.2fx", a / b }')"
done

# What was timed is read whole: TraceEvent (tests/interop/perfview, which make check builds) reads
# the archive's runtime events and the stream's, and tests/perfview_ctf.py compares them, event by
# event, with GCStats and JITStats. BENCH_EVENTS_TRACEEVENT=0 skips it (a minute for 50 MB).
proj=$top/tests/interop/perfview
check=$proj/.build/$(cat "$proj"/*.csproj "$proj"/*.cs | sha256sum | cut -c1-16)/PerfViewCheck.dll
if [ "${BENCH_EVENTS_TRACEEVENT-}" = 0 ]; then
	:
elif [ ! -f "$check" ]; then
	say "TraceEvent's reader is not built (make check builds tests/interop/perfview): the archive is not read back"
elif ! (cd "$W" && dotnet "$check" --runtime-events "$W/app.nettrace" te-nt.txt && dotnet "$check" --runtime-events \
	out-events.trace.zip te-zip.txt) >"$W/te.log" 2>&1 ||
	! unzip -p "$W/out-events.trace.zip" '*/perfcollect.log' >"$W/te-ev.log" ||
	! python3 "$top/tests/perfview_ctf.py" "$W/te-nt.txt" "$W/te-zip.txt" "$W/te-ev.log" >"$W/te-cmp.txt" 2>&1; then
	say "TraceEvent does not read from the archive what it reads from the stream: $W/te-cmp.txt, $W/te.log"
	exit 1
else
	say "TraceEvent reads from the archive what it reads from the stream: $(grep '^events ' "$W/te-cmp.txt"), the same GCStats and JITStats"
fi
