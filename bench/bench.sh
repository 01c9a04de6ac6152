#!/usr/bin/env bash
# bench/bench.sh - perfconv against `perf script` on one large frame-pointer recording.
#
# Records (once; later runs reuse bench/work/perf.data) a cpu-clock recording with call graphs
# of a CPU-bound workload (one copy per CPU, built from fixtures/bin-src/callgraph.c), until the
# file holds at least BENCH_MB megabytes.  Only the workload's processes are recorded (no -a), so
# whatever else the machine runs does not change the input.  Then it times, on the same file with a warm page cache,
#   perfconv -q -i perf.data -o out.folded
#   perf script -i perf.data > /dev/null
# and prints both wall times, their ratio, perfconv's throughput and perfconv's peak RSS.
# (stackcollapse-perf.pl is not shipped, so the full `perf script | stackcollapse-perf.pl`
# pipeline is not timed; perf script alone is a lower bound for it.)
#
#   PERFCONV=./perfconv  BENCH_MB=50  BENCH_FRESH=1 (record again)  BENCH_PERIOD_NS=50000
# `make bench` builds perfconv, installs linux-perf when missing, and runs this.
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
PERFCONV=${PERFCONV:-./perfconv}
WORK=bench/work
DATA=$WORK/perf.data
TARGET_MB=${BENCH_MB:-50}
PERIOD_NS=${BENCH_PERIOD_NS:-20000} # cpu-clock period: 50 kHz per CPU
mkdir -p "$WORK"

say() { printf 'bench: %s\n' "$*"; }

if [ ! -x "$PERFCONV" ]; then
	say "no perfconv binary at '$PERFCONV' (run make, or make bench)"
	exit 1
fi
if ! command -v perf >/dev/null 2>&1; then
	say "perf is not installed (scripts/install-deps.sh --bench installs linux-perf); nothing to compare"
	exit 0
fi

size_mb() { echo $(($(stat -c %s "$1") / 1000000)); }

# record SECONDS: record the workload, one copy per CPU, for SECONDS.
record() {
	local secs=$1 n
	n=$(nproc 2>/dev/null || echo 2)
	# shellcheck disable=SC2016 # the script is for the inner bash
	perf record -q -N -g -e cpu-clock -c "$PERIOD_NS" -o "$DATA.new" -- \
		bash -c 'for _ in $(seq "$2"); do
				(end=$((SECONDS + $1)); while [ "$SECONDS" -lt "$end" ]; do "$3" 100; done) &
			done; wait' workload "$secs" "$n" "$WORK/callgraph" >/dev/null 2>"$WORK/record.log"
	mv -f "$DATA.new" "$DATA"
}

if [ -n "${BENCH_FRESH-}" ] || [ ! -s "$DATA" ]; then
	if ! perf record -q -o "$WORK/probe.data" -e cpu-clock -g true >"$WORK/record.log" 2>&1; then
		say "perf record does not work here, so there is nothing to benchmark:"
		sed 's/^/    /' "$WORK/record.log" | head -n 5
		rm -f "$WORK/probe.data"
		exit 0
	fi
	rm -f "$WORK/probe.data"
	gcc -O1 -fno-omit-frame-pointer -g -o "$WORK/callgraph" fixtures/bin-src/callgraph.c
	secs=5
	say "recording $secs s of $WORK/callgraph, one per CPU (cpu-clock every ${PERIOD_NS} ns, -g)"
	record "$secs"
	got=$(size_mb "$DATA")
	if [ "$got" -lt "$TARGET_MB" ]; then
		secs=$((secs * TARGET_MB * 12 / 10 / (got > 0 ? got : 1) + 1))
		say "$got MB is less than $TARGET_MB MB: recording $secs s"
		record "$secs"
	fi
else
	say "reusing $DATA (BENCH_FRESH=1 records a new one)"
fi

bytes=$(stat -c %s "$DATA")
say "input: $DATA, $((bytes / 1000000)) MB"
cat "$DATA" >/dev/null # the same warm page cache for both

# measure OUT CMD...: run CMD with stdout to OUT; prints "WALL_SECONDS MAXRSS_KB" (wall time to the
# millisecond, peak RSS from getrusage(RUSAGE_CHILDREN) in a fresh python, so of CMD alone).
measure() {
	local out=$1
	shift
	python3 - "$out" "$@" <<'EOF'
import resource, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t = time.monotonic()
with open(out, "wb") as f:
    rc = subprocess.run(cmd, stdout=f).returncode
wall = time.monotonic() - t
if rc != 0:
    sys.exit("bench: %s exited with status %d" % (cmd[0], rc))
print("%.3f %d" % (wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
EOF
}

read -r pc_wall pc_rss < <(measure /dev/null "$PERFCONV" -q -i "$DATA" -o "$WORK/out.folded")
read -r ps_wall ps_rss < <(measure /dev/null perf script -i "$DATA")

python3 - "$bytes" "$pc_wall" "$pc_rss" "$ps_wall" "$ps_rss" "$WORK/out.folded" <<'EOF'
import sys
size, pc_wall, pc_rss, ps_wall, ps_rss, folded = sys.argv[1:]
size, pc_wall, ps_wall = int(size), max(float(pc_wall), 0.001), max(float(ps_wall), 0.001)
stacks = sum(1 for _ in open(folded, encoding="latin-1"))
print("bench: perfconv -q -i perf.data -o out.folded   %8.2f s  %7.1f MB/s  peak RSS %6.1f MB  (%d stacks)"
      % (pc_wall, size / 1e6 / pc_wall, int(pc_rss) / 1024, stacks))
print("bench: perf script -i perf.data > /dev/null      %8.2f s  %7.1f MB/s  peak RSS %6.1f MB"
      % (ps_wall, size / 1e6 / ps_wall, int(ps_rss) / 1024))
print("bench: perfconv is %.1fx faster than perf script alone" % (ps_wall / pc_wall))
EOF
