#!/usr/bin/env bash
# bench/events.sh - a recording with a large .nettrace beside it: what --events costs.
#
# Records bench/dotnet/EventsLoad (allocations at two sites, an exception a millisecond, a forced
# GC every 50 ms) under `perf record -a -k mono -g` (the whole machine, as perfcollect records) and
# `dotnet-trace collect` (GC verbose with
# allocation ticks, JIT, exceptions, loader, stacks) until the stream holds BENCH_EVENTS_MB
# (default 50) MB, then times, best of BENCH_RUNS (default 3) runs each, with peak RSS:
#
#   trace.zip                 perfconv -i perf.data -o X.trace.zip          (the recording alone)
#   trace.zip --events        the same with the stream's events in the zip   (goal: at most 2x)
#   folded --events           perfconv -i perf.data --events S -o X.folded   (events read, not written)
#   runtime report            perfconv --events S                            (the stream alone)
#   dotnet-trace convert      dotnet-trace convert --format Speedscope S     (Microsoft's reader of the
#                             same stream, writing its own profile: the nearest job it does)
#
#   PERFCONV=./perfconv  BENCH_EVENTS_MB=50  BENCH_RUNS=3  BENCH_FRESH=1 (record again)
# Needs root (perf), the .NET 10 SDK and dotnet-trace (scripts/install-deps.sh --dotnet-trace).
# The recording is kept in bench/work/events/.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
PERFCONV=${PERFCONV:-$top/build/perfconv}
MB=${BENCH_EVENTS_MB:-50}
RUNS=${BENCH_RUNS:-3}
W=$top/bench/work/events
tools=${DOTNET_TOOLS:-$top/build/tools}
say() { printf 'bench events: %s\n' "$*"; }
mkdir -p "$W"
rm -f "$W"/best.*

command -v perf >/dev/null 2>&1 || { say "perf is not installed: nothing to measure"; exit 0; }
command -v dotnet >/dev/null 2>&1 || { say "the .NET SDK is not installed: nothing to measure"; exit 0; }
[ -x "$tools/dotnet-trace" ] || DOTNET_TOOLS=$tools scripts/install-deps.sh --dotnet-trace >/dev/null ||
	{ say "dotnet-trace could not be installed"; exit 0; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# record SECONDS: EventsLoad under perf and dotnet-trace, into $W/perf.data and $W/app.nettrace
record() {
	local secs=$1 tracer
	rm -f "$W/port.sock" "$W/app.nettrace"
	"$tools/dotnet-trace" collect --diagnostic-port "$W/port.sock" \
		--providers 'Microsoft-Windows-DotNETRuntime:0x40008019:5' -o "$W/app.nettrace" >"$W/trace.log" 2>&1 &
	tracer=$!
	for _ in $(seq 100); do [ -S "$W/port.sock" ] && break; sleep 0.1; done
	DOTNET_DiagnosticPorts=$W/port.sock perf record -q -a -k mono -g -F 999 -e cpu-clock -o "$W/perf.data" -- \
		"$W/bin/EventsLoad" "$secs" >"$W/app.log" 2>"$W/record.log"
	wait "$tracer"
}

if [ -n "${BENCH_FRESH-}" ] || [ ! -s "$W/app.nettrace" ] || [ ! -s "$W/perf.data" ]; then
	if [ ! -x "$W/bin/EventsLoad" ]; then
		rm -rf "$W/src" && cp -R bench/dotnet/EventsLoad "$W/src"
		(cd "$W/src" && dotnet build -c Release -o "$W/bin" --disable-build-servers -nodeReuse:false \
			-p:UseSharedCompilation=false) >"$W/build.log" 2>&1 || { say "dotnet build failed: $W/build.log"; exit 1; }
	fi
	secs=5
	while :; do
		say "recording $secs s of EventsLoad"
		record "$secs"
		got=$(($(stat -c %s "$W/app.nettrace" 2>/dev/null || echo 0) / 1000000))
		[ "$got" -ge "$MB" ] && break
		secs=$((secs * MB * 11 / 10 / (got > 0 ? got : 1) + 1))
	done
fi
say "perf.data $(($(stat -c %s "$W/perf.data") / 1000000)) MB, app.nettrace $(($(stat -c %s "$W/app.nettrace") / 1000000)) MB ($(cat "$W/app.log"))"

# best NAME CMD...: one more run of CMD: "WALL CPU RSS_KB" appended to $W/best.NAME
best() {
	local name=$1
	shift
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
	zipev) label="trace.zip --events (goal: at most 2x)" ;;
	foldev) label="folded --events" ;;
	report) label="runtime report of the stream alone" ;;
	convert) label="dotnet-trace convert --format Speedscope" ;;
	esac
	printf '%-44s %9s %9s %8s %7s\n' "$label" "$w" "$c" "$m" "$(awk -v a="$w" -v b="$zw" 'BEGIN { printf "%.2fx", a / b }')"
done
