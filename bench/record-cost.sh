#!/usr/bin/env bash
# bench/record-cost.sh - what perfconv record costs a .NET service, against perf record alone.
#
# Builds fixtures/bin-src/dotnet/ProbeWeb (an ASP.NET Core minimal API; cached in
# build/dotnet-live/ProbeWeb-<hash>, as tests/aspnet-live.sh builds its apps), starts it on
# 127.0.0.1, warms it up, and loads it with bench/load.cjs (node: COST_CONC requests in flight on
# keep-alive connections, GET /work?n=COST_N) for COST_SECS seconds a run, in rounds of three
# configurations, COST_RUNS rounds (default 3; interleaved, so that a change of the machine's load
# falls on all three):
#   none      no recorder
#   perf      perf record -k mono -g -F 999 -p PID
#   perfconv  perfconv record -p PID (default events gc,exceptions,jit: its perf map switched on,
#             an EventPipe session with rundown, perf with --no-buildid and the build-ids
#             written by perfconv, then the pack)
# and prints every run's requests a second and the app's CPU time a request (user and system, from
# /proc/PID/stat around the load: what the recorder adds to the service's own work, which a
# loaded machine disturbs far less than it disturbs throughput), the medians, perfconv's median
# against perf's, and
# for perfconv the seconds from the end of the recording (its SIGINT, when the load ends) to the
# pack written (perfconv's exit), each run and the median.  Targets: perfconv within 5% of perf;
# the pack ready within 2 s.  Needs root, perf, node and the .NET 10 SDK with ASP.NET Core.
# COST_VARIANTS measures more configurations of perfconv record side by side, each a column in
# every round: "LABEL=ARGS;LABEL=ARGS" (ARGS: perfconv record's options, or BINARY -- OPTIONS for
# another build), e.g. COST_VARIANTS='default=;noevents=--dotnet-events none;gc=--dotnet-events gc'.
# Beside each round: the load average, and each recorder's own CPU (perf's, and perfconv's with
# its perf's) in ms per 1000 requests.  perfconv record runs with -v (its log has its perf's
# messages); COST_VERBOSE=1 prints its times of the stop on stderr (the sessions' rundown, perf's
# exit, the build-ids, the pack), the breakdown of the pack's seconds, and its perf's wake-ups.
# A run whose perf fails is made again, twice at most.
#
# COST_KEEP_THREADS=1 (the default) starts the service with none of its threads ending or
# starting during the runs, an experimental control: perf 6.1 attached with -p opens its
# events per thread, and when one of those threads ends perf keeps the hung-up descriptors in
# its poll set and spins on a CPU (poll returns POLLHUP at once, 7,000-10,000 times a second)
# until it stops: on 2 CPUs the requests a second of a run then measure whether a thread ended
# in it, not the recorder (docs/benchmark.md, "perf 6.1 spinning on an exited thread").  Left
# alone, ProbeWeb's thread-pool workers retire after 20 s idle, the tiered JIT's background
# worker after 4 s without methods to promote, and the pool injects workers now and then.  So:
#   DOTNET_ThreadPool_ThreadsToKeepAlive=-1      workers never retire (.NET 8+)
#   DOTNET_TC_BackgroundWorkerTimeoutMs=ffffffff the tiered JIT's worker waits for ever (hex)
#   DOTNET_ThreadPool_ForceMin/MaxWorkerThreads  the pool held at COST_POOL workers (hex)
# and a warm-up at 4 x COST_CONC requests in flight that makes all of them before the first run.
# Each round prints the threads that ended under each recorder (present at its start, gone at
# its end: the ones perf had opened events for) and perf's "Woken up N times" (a few when it
# does not spin; thousands when it does).  COST_KEEP_THREADS=0 runs the service as it comes.
#   PERFCONV=build/perfconv  COST_RUNS=3  COST_SECS=10  COST_CONC=8  COST_N=20000  COST_POOL=8
#   COST_WARM=5 (seconds of each of the two warm-ups)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
PERFCONV=${PERFCONV:-$top/build/perfconv}
RUNS=${COST_RUNS:-3} SECS=${COST_SECS:-10} CONC=${COST_CONC:-8} N=${COST_N:-20000}
KEEP=${COST_KEEP_THREADS:-1} POOL=${COST_POOL:-8} WARM=${COST_WARM:-5}
W=$(mktemp -d "${TMPDIR:-/tmp}/perfconv-cost.XXXXXX")
app= rec=
# (a wait for a killed process fails, which set -e would make the trap's last word: || true)
cleanup() {
	[ -n "$rec" ] && kill -INT "$rec" 2>/dev/null && { wait "$rec" 2>/dev/null || true; }
	[ -n "$app" ] && kill -KILL "$app" 2>/dev/null && { wait "$app" 2>/dev/null || true; }
	rm -rf "$W"
}
trap cleanup EXIT

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# shellcheck source=bench/probeweb.sh
. "$top/bench/probeweb.sh"
probeweb_build "$top" "$W" || { tail -20 "$W/build.log"; exit 1; }
bin=$probeweb
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
appenv=()
[ "$KEEP" = 1 ] && appenv=(DOTNET_ThreadPool_ThreadsToKeepAlive=-1 DOTNET_TC_BackgroundWorkerTimeoutMs=ffffffff
	DOTNET_ThreadPool_ForceMinWorkerThreads="$(printf %x "$POOL")" DOTNET_ThreadPool_ForceMaxWorkerThreads="$(printf %x "$POOL")")
env -u DOTNET_PerfMapEnabled "${appenv[@]}" "$bin/ProbeWeb" --urls "$url" >"$W/app.log" 2>&1 &
app=$!
for _ in $(seq 100); do curl -s -m 1 "$url/hello" >/dev/null 2>&1 && break; sleep 0.1; done
# warm-up: the pool grows to its workers under more requests than the runs have in flight, then
# the tiered JIT settles under the runs' own load
node bench/load.cjs "$url/work?n=$N" "$WARM" $((4 * CONC)) >/dev/null
node bench/load.cjs "$url/work?n=$N" "$WARM" "$CONC" >/dev/null

# app_ticks: the app's user + system CPU time so far, in clock ticks
app_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$app/stat"; }
tck=$(getconf CLK_TCK)
# load: "RPS CPU-MS-PER-1000-REQUESTS"
load() {
	local t0 t1 out
	t0=$(app_ticks)
	out=$(node bench/load.cjs "$url/work?n=$N" "$SECS" "$CONC")
	t1=$(app_ticks)
	echo "$out" | awk -v d=$((t1 - t0)) -v hz="$tck" '{ printf "%s %.1f\n", $2, ($6 > 0 ? d * 1000 / hz / $6 * 1000 : 0) }'
}
# wait_file GLOB: until a file matching it is non-empty (perf has started writing)
wait_file() {
	local f
	for _ in $(seq 300); do
		for f in $1; do [ -s "$f" ] && return 0; done
		sleep 0.05
	done
	return 1
}
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# tids: the app's threads now, one a line, sorted; ended FILE: how many of FILE's are gone now
tids() { ls "/proc/$app/task" | sort; }
ended() { tids | comm -23 "$1" - | wc -l; }
# woken LOG: perf's "Woken up N times" in a log, N ("?" when perf said nothing)
woken() { sed -n 's/.*Woken up \([0-9]*\) times.*/\1/p' "$1" | tail -1 | grep . || echo '?'; }
# ticks PID: a process's own user + system CPU time so far, in clock ticks (0 when gone)
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# per1k TICKS REQUESTS-A-SECOND: CPU ms per 1000 requests of the load
per1k() { awk -v d="$1" -v hz="$tck" -v r="$2" -v s="$SECS" 'BEGIN { printf "%.1f", (r > 0 ? d * 1000 / hz / (r * s) * 1000 : 0) }'; }

IFS=';' read -r -a variants <<<"${COST_VARIANTS:-perfconv=}"
nv=${#variants[@]}
printf '%-6s %18s %18s' run "none rps cpu" "perf rps cpu"
for v in "${variants[@]}"; do printf ' %18s %12s' "${v%%=*} rps cpu" "pack-ready-s"; done
printf '  %s\n' "recorders' own CPU ms/1000 req (perf; perfconv+its perf), perf's wake-ups, threads ended (perf; perfconv), load average"
for i in $(seq "$RUNS"); do
	la=$(cut -d' ' -f1 /proc/loadavg)
	none=$(load)

	tids >"$W/tids"
	# not the last round's file: wait_file would take it for this perf's, and the load would
	# start while perf still describes the process (a quarter of a second of its CPU)
	rm -f "$W/perf.data" "$W/perf.data.old"
	perf record -k mono -g -F 999 -p "$app" -o "$W/perf.data" >"$W/perf.log" 2>&1 &
	rec=$!
	wait_file "$W/perf.data"
	r0=$(ticks "$rec")
	perf=$(load)
	rcpu=$(per1k $(($(ticks "$rec") - r0)) "${perf%% *}")
	kill -INT "$rec"; wait "$rec" || true; rec=
	line="$none $perf" own="$rcpu" wok=$(woken "$W/perf.log") gone=$(ended "$W/tids")

	for v in "${variants[@]}"; do
		args=${v#*=} bin=$PERFCONV
		case "$args" in *' -- '*) bin=${args%% -- *} args=${args#* -- } ;; esac
		for attempt in 1 2 3; do
			rm -rf "$W/pc" && mkdir "$W/pc"
			tids >"$W/tids"
			# shellcheck disable=SC2086
			"$bin" record -v -q -p "$app" $args -o "$W/pc/cost.perfpack" >"$W/pc.log" 2>&1 &
			rec=$!
			wait_file "$W/pc/.cost.perfpack.record-*/perf.data"
			cperf=$(cat "/proc/$rec/task/$rec/children" 2>/dev/null | cut -d' ' -f1)
			r0=$(ticks "$rec") p0=$(ticks "${cperf:-0}")
			pc=$(load)
			r1=$(ticks "$rec") p1=$(ticks "${cperf:-0}")
			t=$(now)
			kill -INT "$rec" 2>/dev/null || echo "perfconv record ended before its SIGINT" >>"$W/pc.log"
			# perf 6.1 may exit with status 255 when a thread of the target ends while it opens
			# its events: such a run is made again, up to twice
			if ! wait "$rec"; then
				rec=
				[ "$attempt" != 3 ] && { sed "s/^/    [${v%%=*} $i failed, again] /" "$W/pc.log" >&2; continue; }
				cat "$W/pc.log"; exit 1
			fi
			rec=
			break
		done
		ready=$(echo "$(now) - $t" | bc -l)
		[ -s "$W/pc/cost.perfpack" ] || { echo "no pack"; cat "$W/pc.log"; exit 1; }
		[ -n "${COST_VERBOSE:-}" ] && grep -E 'ended|after the stop|packed|build-ids|again|Woken' "$W/pc.log" | sed "s/^/    [${v%%=*} $i] /" >&2
		line="$line $pc $ready"
		own="$own; $(per1k $((r1 - r0)) "${pc%% *}")+$(per1k $((p1 - p0)) "${pc%% *}")"
		wok="$wok; $(woken "$W/pc.log")" gone="$gone; $(ended "$W/tids")"
	done
	printf '%-6s %18s %18s' "$i" "$none" "$perf"
	set -- $line; shift 4
	while [ $# -gt 0 ]; do printf ' %18s %12.2f' "$1 $2" "$3"; shift 3; done
	printf '  %s, woken %s, ended %s, load %s\n' "$own" "$wok" "$gone" "$la"
	echo "$line" >>"$W/runs"
done
# columns of runs: none rps, none cpu, perf rps, perf cpu, then each variant's rps, cpu, ready
col() { awk -v c="$1" '{ print $c }' "$W/runs" | median; }
mn=$(col 1) cn=$(col 2) mp=$(col 3) cp=$(col 4)
printf '%-6s %18s %18s' median "$mn $cn" "$mp $cp"
for k in $(seq 0 $((nv - 1))); do printf ' %18s %12.2f' "$(col $((5 + 3 * k))) $(col $((6 + 3 * k)))" "$(col $((7 + 3 * k)))"; done
printf '\n'
for k in $(seq 0 $((nv - 1))); do
	v=${variants[$k]} mc=$(col $((5 + 3 * k))) cc=$(col $((6 + 3 * k))) mr=$(col $((7 + 3 * k)))
	name=${v%%=*}; [ "$nv" -gt 1 ] && echo "$name (${v#*=}):"
	awk -v n="$mn" -v p="$mp" -v c="$mc" -v cn="$cn" -v cp="$cp" -v cc="$cc" -v r="$mr" 'BEGIN {
		d = (c - p) / p * 100
		printf "requests/s: perf record %.1f%% of none, perfconv record %.1f%% of none; perfconv against perf: %+.1f%% (target within 5%%: %s)\n", p / n * 100, c / n * 100, d, (d >= -5 ? "met" : "MISSED")
		e = (cc - cp) / cp * 100
		printf "app CPU ms per 1000 requests: none %.1f, perf %.1f, perfconv %.1f; perfconv against perf: %+.1f%% (within 5%%: %s)\n", cn, cp, cc, e, (e <= 5 ? "met" : "MISSED")
		printf "end of recording to pack ready: median %.2f s (target 2 s: %s)\n", r, (r <= 2 ? "met" : "MISSED")
	}'
done
