#!/usr/bin/env bash
# tests/diff-live.sh - --diff on two recordings of an ASP.NET Core app in two versions, where one
# endpoint's work changed: tests/diff/DiffApi, whose GET /quote (Pricing.Quote) does eight times the
# work in version 2 (-p:DefineConstants=V2) and /stock, /ship and /bill (Inventory.Count,
# Shipping.Plan, Billing.Total) the same.  Each version is started with DOTNET_PerfMapEnabled=1 on
# 127.0.0.1, loaded by curl on the four endpoints in turn, warmed up
# DIFF_LIVE_WARMUP seconds and recorded DIFF_LIVE_SECONDS with `perf record -g -p PID`.  Cases:
#   diff-live/dotnet   -f top --diff: Pricing.Quote tops the report, grown (only the frames that call
#                      it, whose total grows with it, may come first) (its share of the four
#                      methods' work from 1/4 to 8/11); Inventory.Count's share fell (by about a third of that); --fail-if-grown 5 exits 3 listing Quote first,
#                      version 1 against version 2 (the faster build) exits 0, and
#                      the folded diff has both methods on both sides (their JIT tiers stripped, so
#                      a tier that changed between the runs is no difference); go tool pprof
#                      -diff_base on the two pprof files (--strip-tiers) has Pricing.Quote first too
# Needs root (perf record -p), perf, curl, python3 and the .NET 10 SDK with ASP.NET Core; skips with
# a reason otherwise.  The versions are built once (offline) into build/dotnet-live/diffapi-<hash of
# the sources and the SDK version>-v1 and -v2, which later runs reuse.  About 25 s after the builds.
#
#   PERFCONV                 binary under test (default ./perfconv)
#   DIFF_LIVE_SECONDS=4      seconds recorded;  DIFF_LIVE_WARMUP=8  seconds of load before it (the JIT done)
#   DIFF_LIVE_KEEP=DIR       keep the recordings, maps and outputs in DIR
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" diff-live
SECS=${DIFF_LIVE_SECONDS:-4}
WARMUP=${DIFF_LIVE_WARMUP:-8}
name=diff-live/dotnet
selected "$name" || exit 0

command -v dotnet >/dev/null 2>&1 || { skip "$name" "dotnet is not installed (the .NET 10 SDK is needed)"; exit 0; }
command -v perf >/dev/null 2>&1 || { skip "$name" "perf is not installed (scripts/install-deps.sh --bench)"; exit 0; }
command -v curl >/dev/null 2>&1 || { skip "$name" "curl is needed to load the app"; exit 0; }
sdk=$(dotnet --list-sdks 2>/dev/null | grep '^10\.' | tail -n 1)
[ -n "$sdk" ] || { skip "$name" "no .NET 10 SDK (dotnet --list-sdks)"; exit 0; }
dotnet --list-runtimes 2>/dev/null | grep -q '^Microsoft\.AspNetCore\.App 10\.' ||
	{ skip "$name" "no ASP.NET Core 10 runtime (dotnet --list-runtimes)"; exit 0; }
need_perfconv diff-live
if ! perf record -q -e cpu-clock -o "$TMP/probe.data" -- true >"$TMP/perf-probe.log" 2>&1; then
	skip "$name" "perf record does not work here ($(grep -m 1 -v '^$' "$TMP/perf-probe.log"))"
	exit 0
fi

app_pid= loader_pid=
stop_app() {
	[ -n "$loader_pid" ] && kill "$loader_pid" 2>/dev/null && wait "$loader_pid" 2>/dev/null
	loader_pid=
	if [ -n "$app_pid" ]; then
		stop_pid "$app_pid"
		rm -f "/tmp/perf-$app_pid.map" "/tmp/perfinfo-$app_pid.map" "/tmp/jit-$app_pid.dump"
	fi
	app_pid=
}
# DIFF_LIVE_KEEP=DIR: the recordings, maps and outputs are copied there before TMP goes
trap 'stop_app; [ -n "${DIFF_LIVE_KEEP-}" ] && mkdir -p "$DIFF_LIVE_KEEP" && cp -R "$TMP/." "$DIFF_LIVE_KEEP/"; rm -rf "$TMP"' EXIT

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
src=tests/diff/DiffApi
key=$({ cat "$src"/*; echo "$sdk"; } | sha256sum | cut -c1-16)
t0=$SECONDS
for v in v1 v2; do
	defs=()
	[ "$v" = v2 ] && defs=(-p:DefineConstants=V2)
	if ! dotnet_build "$src" "$top/build/dotnet-live/diffapi-$key-$v" DiffApi "${defs[@]}"; then
		fail "$name" "dotnet build of $src ($v) failed" "$TMP/build.errors"
		exit 0
	fi
done
built=$((SECONDS - t0))

# load_endpoints URL: the four endpoints in turn, 25 of each a batch on one keep-alive connection, until killed
load_endpoints() {
	local urls=() i
	for i in $(seq 25); do
		urls+=("$1/quote" "$1/stock" "$1/ship" "$1/bill")
	done
	while :; do
		curl -s -m 30 "${urls[@]}" >/dev/null 2>&1 || sleep 0.1
	done
}

# record V: start version V, load it, record it; the recording is $TMP/V.data
record() {
	local v=$1 port url
	port=$(free_port)
	url=http://127.0.0.1:$port
	DOTNET_PerfMapEnabled=1 "$top/build/dotnet-live/diffapi-$key-$v/DiffApi" --urls "$url" >"$TMP/$v.log" 2>&1 &
	app_pid=$!
	for _ in $(seq 100); do
		curl -s -m 1 "$url/hello" >/dev/null 2>&1 && break
		sleep 0.1
	done
	load_endpoints "$url" &
	loader_pid=$!
	sleep "$WARMUP"
	perf record -q -g -F 999 -e cpu-clock -p "$app_pid" -o "$TMP/$v.data" -- sleep "$SECS" >"$TMP/$v.perf.log" 2>&1
	local prc=$?
	# converted while the app runs: its perf map is in /tmp
	"$PERFCONV" -q -i "$TMP/$v.data" -o "$TMP/$v.folded" 2>"$TMP/$v.err"
	cp "/tmp/perf-$app_pid.map" "$TMP/$v.map" 2>/dev/null
	stop_app
	return $prc
}

t1=$SECONDS
# perfconv says when a recording still held the JIT's warm-up ("still compiling"), which a
# loaded machine can stretch past DIFF_LIVE_WARMUP: then both are recorded again after a warm-up
# twice as long (and 2 s), as its message tells a user to
for attempt in 1 2; do
	if ! record v1 || ! record v2; then
		fail "$name" "perf record failed" "$TMP/v2.perf.log"
		exit 0
	fi
	# compared after both apps ended: their perf maps (copied out) given with --map-dir
	mkdir -p "$TMP/maps"
	for v in v1 v2; do
		pid=$(perf script -i "$TMP/$v.data" -F pid 2>/dev/null | head -n 1 | tr -d ' ')
		[ -n "$pid" ] && cp "$TMP/$v.map" "$TMP/maps/perf-$pid.map" 2>/dev/null
	done
	M=(--map-dir "$TMP/maps")
	"$PERFCONV" -q -i "$TMP/v2.data" "${M[@]}" --diff "$TMP/v1.data" -f top --top 30 >"$TMP/top.txt" 2>"$TMP/top.err"
	trc=$?
	"$PERFCONV" -i "$TMP/v2.data" "${M[@]}" --diff "$TMP/v1.data" --fail-if-grown 5 -o "$TMP/diff.folded" 2>"$TMP/gate.err"
	grc=$?
	# the other way round: version 1 is the faster build, and the other three endpoints, which serve
	# more requests in the same time, did not grow
	"$PERFCONV" -i "$TMP/v1.data" "${M[@]}" --diff "$TMP/v2.data" --fail-if-grown 5 -o "$TMP/faster.folded" 2>"$TMP/faster.err"
	frc=$?
	grep -q "still compiling" "$TMP/top.err" "$TMP/gate.err" "$TMP/faster.err" 2>/dev/null || break
	WARMUP=$((WARMUP * 2 + 2))
	[ "$attempt" = 1 ] && echo "# $name: a recording held the JIT's warm-up; recording again after $WARMUP s of load"
done
# pprof: the two profiles (tiers stripped) through go tool pprof -diff_base
pp=
if command -v go >/dev/null 2>&1; then
	export GOCACHE=$TMP/gocache GOFLAGS=-mod=mod
	for v in v1 v2; do
		"$PERFCONV" -q -i "$TMP/$v.data" "${M[@]}" --strip-tiers -o "$TMP/$v.pb.gz" 2>>"$TMP/pp.err"
	done
	go tool pprof -diff_base "$TMP/v1.pb.gz" -normalize -top -cum "$TMP/v2.pb.gz" 2>>"$TMP/pp.err" |
		awk '/flat%/ { t = 1; next } t && NF >= 6 { print $NF }' >"$TMP/pp.rows"
fi
# The frames that call Pricing.Quote (above it in a stack of the diff): their total share grows with
# Quote's (the endpoint's lambda that calls it, the request loop), so they may come before it in a
# list by total share; the first row that is not one of them must be Quote.
python3 - "$TMP/diff.folded" >"$TMP/callers" <<'PY'
import re, sys
callers = set()
for line in open(sys.argv[1]):
    frames = line.rsplit(" ", 2)[0].split(";")
    for i, f in enumerate(frames):
        if re.search(r"Pricing.*Quote", f):
            callers.update(frames[1:i])
            break
print("\n".join(sorted(callers)))
PY
# first_other FILE: the first line of FILE (a function name, or its last word) that names no caller
first_other() {
	python3 - "$TMP/callers" "$1" <<'PY'
import sys
callers = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
for l in open(sys.argv[2]):
    name = l.rstrip("\n")
    if name and not any(c == name or c.endswith(" " + name) or c.endswith(name) for c in callers):
        print(l, end="")
        break
PY
}
[ -s "$TMP/pp.rows" ] && pp=$(first_other "$TMP/pp.rows")
secs=$((SECONDS - t1))
# the rows: base% new% change self-base% self-new% change function
awk '/^Largest changes/ { t = 1; next } t && /^ *[0-9.]+%/' "$TMP/top.txt" >"$TMP/top.rows"
awk '{ n = $0; for (i = 1; i <= 6; i++) sub(/^ *[^ ]+/, "", n); sub(/^ +/, "", n); print n }' "$TMP/top.rows" >"$TMP/top.names"
first=$(first_other "$TMP/top.names")
row1=$([ -n "$first" ] && grep -m 1 -F -- "  $first" "$TMP/top.rows")
quote=$(grep -m 1 'Pricing.*Quote' "$TMP/top.txt")
count=$(grep -m 1 'Inventory.*Count' "$TMP/top.txt")
cat "$TMP/top.txt" "$TMP/gate.err" >"$TMP/detail"
if [ "$trc" != 0 ]; then
	fail "$name" "-f top --diff: exit status $trc" "$TMP/top.err"
elif ! [[ $row1 =~ Pricing.*Quote ]] || ! [[ $(awk '{ print $3 }' <<<"$row1") == +* ]]; then
	fail "$name" "Pricing.Quote does not top the diff report, grown (save for the frames that call it)" "$TMP/detail"
elif [ -z "$count" ] || [[ $(awk '{ print $3 }' <<<"$count") != -* ]]; then
	fail "$name" "Inventory.Count's share did not fall" "$TMP/detail"
elif [ "$grc" != 3 ] || ! grep -A1 -m1 'fail-if-grown' "$TMP/gate.err" | grep -q 'Pricing.*Quote'; then
	fail "$name" "--fail-if-grown 5: exit status $grc (expected 3, listing Pricing.Quote first)" "$TMP/detail"
elif [ "$frc" != 0 ]; then
	fail "$name" "--fail-if-grown 5 on the faster build against the slower: exit status $frc (expected 0)" "$TMP/faster.err"
elif command -v go >/dev/null 2>&1 && ! [[ $pp =~ Pricing.*Quote ]]; then
	fail "$name" "go tool pprof -diff_base: the top change is '$pp', not Pricing.Quote" "$TMP/pp.err"
elif grep -E '\[(OptimizedTier1|Tier0|Tier1|QuickJitted|Optimized|OptimizedTier1OSR|Tier1OSR|Instrumented[A-Za-z0-9]*)\]' "$TMP/diff.folded" >"$TMP/tiers"; then
	fail "$name" "a tier tag is left in the diff's names" "$TMP/tiers"
else
	pass "$name (${pp:+pprof -diff_base also first: ${pp##*!}; }Quote $(awk '{ print $1 " -> " $2 }' <<<"$quote"), Inventory.Count $(awk '{ print $3 }' <<<"$count") points; ${secs} s recording and converting, build ${built} s)"
fi
