#!/usr/bin/env bash
# tests/dotnet-live.sh - end to end on this machine: build the .NET workload (fixtures/bin-src/dotnet/
# Probe), record it with perf and DOTNET_PerfMapEnabled=1, convert with perfconv, and check that the
# three managed call paths get their known shares of the samples (50 / 30 / 20 % of the work, within
# DOTNET_LIVE_TOLERANCE points, 5 by default).  The shares are printed on each ok / FAIL line.
#
# Two recordings:
#   dotnet-live/wxoff     DOTNET_EnableWriteXorExecute=0: JIT code in anonymous memory, resolved
#                         through the perf map as perf does;
#   dotnet-live/default   W^X on (the .NET default): JIT code runs from /memfd:doublemapper mappings.
#                         perf leaves those frames unresolved; perfconv --resolve-jit looks them up
#                         in the perf map.
#
# The runtime writes its perf map and jitdump into a private directory (DOTNET_PerfMapJitDumpPath),
# which perfconv reads with --map-dir; nothing is left in /tmp.  Needs root (or a perf_event_paranoid
# that allows cpu-clock sampling), perf, and the .NET 10 SDK; builds offline (no NuGet package).
# Prints lines in tests/run.sh's format; skips with a reason when a tool is missing or does not work.
#
#   PERFCONV             binary under test (default ./perfconv)
#   FILTERS="w1 w2"      only the cases whose name contains one of the words
#   DOTNET_LIVE_ROUNDS=200  work rounds of the workload (about 3.4 ms of CPU each)
#   DOTNET_LIVE_TOLERANCE=5 allowed distance of each share from 50 / 30 / 20, in percentage points
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" dotnet-live
ROUNDS=${DOTNET_LIVE_ROUNDS:-200}
TOL=${DOTNET_LIVE_TOLERANCE:-5}

cases=()
for c in dotnet-live/wxoff dotnet-live/default; do
	selected "$c" && cases+=("$c")
done
[ "${#cases[@]}" -eq 0 ] && exit 0

command -v dotnet >/dev/null 2>&1 || skip_all "dotnet is not installed (the .NET 10 SDK is needed)"
command -v perf >/dev/null 2>&1 || skip_all "perf is not installed (scripts/install-deps.sh --bench)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed (scripts/install-deps.sh --test)"
dotnet --list-sdks 2>/dev/null | grep -q '^10\.' || skip_all "no .NET 10 SDK (dotnet --list-sdks)"
if [ ! -f "$PERFCONV" ] || [ ! -x "$PERFCONV" ]; then
	for c in "${cases[@]}"; do
		fail "$c" "'$PERFCONV' is not an executable file"
	done
	exit 0
fi

if ! perf record -q -e cpu-clock -o "$TMP/probe.data" -- true >"$TMP/perf-probe.log" 2>&1; then
	skip_all "perf record does not work here ($(grep -m 1 -v '^$' "$TMP/perf-probe.log"))"
fi

# Build a copy of the sources, so that no obj/ appears in the tree; no build server stays behind.
# The build is kept in build/dotnet-live/<hash of the sources and SDK version> for the next run.
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
key=$({ cat fixtures/bin-src/dotnet/Probe/*; dotnet --version; } | sha256sum | cut -c1-16)
bin=$top/build/dotnet-live/$key
start=$SECONDS
if ! dotnet_build fixtures/bin-src/dotnet/Probe "$bin" Probe; then
	for c in "${cases[@]}"; do
		fail "$c" "dotnet build of fixtures/bin-src/dotnet/Probe failed" "$TMP/build.errors"
	done
	exit 0
fi
built=$((SECONDS - start))

for c in "${cases[@]}"; do
	d=$TMP/${c#dotnet-live/}
	mkdir -p "$d/maps"
	wx=()
	[ "$c" = dotnet-live/wxoff ] && wx=(DOTNET_EnableWriteXorExecute=0)
	if ! env DOTNET_PerfMapEnabled=1 DOTNET_PerfMapJitDumpPath="$d/maps" "${wx[@]}" \
		timeout 60 perf record -q -F 2999 -g -e cpu-clock -o "$d/perf.data" "$bin/Probe" "$ROUNDS" \
		>"$d/record.log" 2>&1; then
		fail "$c" "perf record of Probe failed" "$d/record.log"
		continue
	fi
	if ! ls "$d"/maps/perf-*.map >/dev/null 2>&1; then
		fail "$c" "the runtime wrote no perf map into DOTNET_PerfMapJitDumpPath"
		continue
	fi
	# --resolve-jit: look memfd:doublemapper code up in the perf map and read the jitdump
	"$PERFCONV" -q -i "$d/perf.data" --map-dir "$d/maps" --resolve-jit -o "$d/out.folded" >"$d/conv.log" 2>&1 </dev/null
	rc=$?
	if [ "$rc" != 0 ] || [ ! -s "$d/out.folded" ]; then
		fail "$c" "perfconv exited with status $rc" "$d/conv.log"
		continue
	fi
	# Shares of the three paths among the samples on any of them, by weight.
	python3 - "$d/out.folded" "$TOL" >"$d/shares" <<'EOF'
import sys
want = {"recursion": 50.0, "generic+lambda": 30.0, "linq": 20.0}
w = dict.fromkeys(want, 0)
total = 0
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    if not n.isdigit():
        continue
    n = int(n)
    total += n
    if "Outer+Inner::Recurse" in stack:
        w["recursion"] += n
    elif "PhaseGeneric" in stack or "Program::Accumulate" in stack:
        w["generic+lambda"] += n
    elif "PhaseLinq" in stack:
        w["linq"] += n
on = sum(w.values())
if not on:
    print("none")
    sys.exit(0)
share = {k: 100.0 * v / on for k, v in w.items()}
bad = [k for k in want if abs(share[k] - want[k]) > float(sys.argv[2])]
print("bad" if bad else "good",
      "paths %s %% (recursion/generic+lambda/linq, want 50/30/20 +-%s; %.0f%% of the samples on them)"
      % ("/".join("%.1f" % share[k] for k in want), sys.argv[2], 100.0 * on / total))
EOF
	read -r verdict detail <"$d/shares"
	res=$(python3 tests/dotnet-resolution.py "$d/out.folded" 2>&1 |
		sed -n 's/^.*: managed \([0-9.]*%\) resolved.*framework \([0-9.]*%\) resolved.*/managed frames resolved \1, framework \2/p')
	case $verdict in
	good) pass "$c ($detail; $res; build ${built} s, total $((SECONDS - start)) s)" ;;
	bad) fail "$c" "path shares out of range: $detail; $res" ;;
	*)
		sort -t' ' -k2 -rn "$d/out.folded" 2>/dev/null | head -n 3 | cut -c1-300 >"$d/heaviest"
		fail "$c" "no sample on the known managed paths ($res)" "$d/heaviest"
		;;
	esac
done
exit 0
