#!/usr/bin/env bash
# tests/dotnet-dwarf.sh - DWARF call graphs through JIT code, end to end on this machine: the .NET
# workload (fixtures/bin-src/dotnet/Probe, W^X off so that JIT code is anonymous memory named by the
# perf map) recorded with -g (frame pointers) and with --call-graph dwarf.  perf's unwinder stops at
# the first frame without CFI; perfconv (with --resolve-jit, which also turns on the frame-pointer
# walk through code without CFI) crosses the managed frames on their frame-pointer chain and goes
# back to CFI in libcoreclr.  Checks, by managed frames (names with "::") per sample of the Probe
# thread: dwarf with --resolve-jit gives at least 80 % of what the frame-pointer recording gives,
# and more than twice what the unwinding perf does (without --resolve-jit) gives.  The numbers are
# printed on the ok / FAIL line.  Needs root (or perf_event_paranoid allowing cpu-clock), perf and
# the .NET 10 SDK; skips with a reason otherwise.
#
#   PERFCONV             binary under test (default ./perfconv)
#   FILTERS="w1 w2"      only the cases whose name contains one of the words
#   DOTNET_DWARF_ROUNDS  Probe's work rounds (default 100)
set -u
. "$(dirname "$0")/lib.sh" dotnet-dwarf
ROUNDS=${DOTNET_DWARF_ROUNDS:-100}
c=dotnet-dwarf/jit-frames
selected "$c" || exit 0

command -v dotnet >/dev/null 2>&1 || { skip "$c" "dotnet is not installed (the .NET 10 SDK is needed)"; exit 0; }
command -v perf >/dev/null 2>&1 || { skip "$c" "perf is not installed"; exit 0; }
dotnet --list-sdks 2>/dev/null | grep -q '^10\.' || { skip "$c" "no .NET 10 SDK (dotnet --list-sdks)"; exit 0; }
if ! perf record -q -e cpu-clock -o "$TMP/probe.data" -- true >"$TMP/perf-probe.log" 2>&1; then
	skip "$c" "perf record does not work here"
	exit 0
fi

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
# the same build directory as tests/dotnet-live.sh: one build serves both
key=$({ cat fixtures/bin-src/dotnet/Probe/*; dotnet --version; } | sha256sum | cut -c1-16)
bin=$top/build/dotnet-live/$key
if ! dotnet_build fixtures/bin-src/dotnet/Probe "$bin" Probe; then
	fail "$c" "dotnet build of fixtures/bin-src/dotnet/Probe failed" "$TMP/build.errors"
	exit 0
fi

# managed frames per sample of the Probe thread in perf-script text
count() {
	python3 - "$1" <<'EOF2'
import sys
samples = frames = 0
probe = False
for line in open(sys.argv[1], errors="replace"):
    if not line.strip():
        continue
    if not line.startswith("\t"):
        probe = line.startswith("Probe ")
        samples += probe
    elif probe and "::" in line:
        frames += 1
print("%.2f" % (frames / samples if samples else 0))
EOF2
}

for mode in fp dwarf; do
	d=$TMP/$mode
	mkdir -p "$d/maps"
	cg=(-g)
	[ "$mode" = dwarf ] && cg=(--call-graph dwarf)
	if ! env DOTNET_PerfMapEnabled=1 DOTNET_PerfMapJitDumpPath="$d/maps" DOTNET_EnableWriteXorExecute=0 \
		timeout 60 perf record -q -F 999 "${cg[@]}" -e cpu-clock -o "$d/perf.data" "$bin/Probe" "$ROUNDS" \
		>"$d/record.log" 2>&1; then
		fail "$c" "perf record ($mode) of Probe failed" "$d/record.log"
		exit 0
	fi
	"$PERFCONV" -q -i "$d/perf.data" --map-dir "$d/maps" --resolve-jit -f perf-script -o "$d/beyond.txt" 2>"$d/err" &&
		"$PERFCONV" -q -i "$d/perf.data" --map-dir "$d/maps" --perf-compat -f perf-script -o "$d/perf.txt" 2>>"$d/err" || {
		fail "$c" "perfconv failed on the $mode recording" "$d/err"
		exit 0
	}
done
fp=$(count "$TMP/fp/beyond.txt")
dw=$(count "$TMP/dwarf/beyond.txt")
pf=$(count "$TMP/dwarf/perf.txt")
# back to CFI: some stack has a libcoreclr frame after (below) a managed one
back=$(awk '/^\t/ && /::/ { m = 1; next } /^\t/ && m && /libcoreclr/ { n++ } /^$/ { m = 0 } END { print n + 0 }' "$TMP/dwarf/beyond.txt")
detail="managed frames per sample: dwarf $dw, frame pointers $fp, dwarf as perf unwinds $pf; $back native frames below managed ones"
if python3 -c "import sys; d, f, p = map(float, sys.argv[1:]); sys.exit(0 if d >= 0.8 * f and d > 2 * p else 1)" "$dw" "$fp" "$pf" &&
	[ "$back" -gt 0 ]; then
	pass "$c ($detail)"
else
	fail "$c" "$detail"
fi
exit 0
