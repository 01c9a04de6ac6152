#!/usr/bin/env bash
# fuzz/campaign.sh - a long fuzzing campaign: each target in turn until it has run N executions.
#
#   fuzz/campaign.sh BUILD_DIR N NAME...      e.g. fuzz/campaign.sh build-fuzz 10000000 unwind jitdump
#
# N counts every run recorded in fuzz/runs.txt, on any machine: a target that has 4,000,000 there
# runs 6,000,000 more for N = 10^7, and one that has N already is skipped.  Targets run one after
# the other (one libFuzzer process: the machine is shared) through fuzz/run.sh, which starts from
# the corpus kept in git (fuzz/corpus/NAME), merges what the run found back into it and appends the
# run to fuzz/runs.txt; commit both afterwards, and the next campaign, here or elsewhere, goes on
# from there.  Each target's libFuzzer log is kept as BUILD_DIR/campaign/NAME-DATE.log.
# Run it under `nice -n 19`.  FUZZ_SECONDS caps each target's time (libFuzzer's -max_total_time).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
B=${1:?usage: fuzz/campaign.sh BUILD_DIR N NAME...}
N=${2:?usage: fuzz/campaign.sh BUILD_DIR N NAME...}
shift 2
mkdir -p "$B/campaign"
status=0
for n in "$@"; do
	done=$(awk -v n="$n" '!/^#/ && $3 == n { s += $4 } END { printf "%d", s }' fuzz/runs.txt 2>/dev/null || echo 0)
	if [ "${done:-0}" -ge "$N" ]; then
		echo "fuzz $n: $done executions in fuzz/runs.txt, nothing to do"
		continue
	fi
	day=$(date -u +%FT%TZ)
	FUZZ_RUNS=$((N - ${done:-0})) fuzz/run.sh "$B" "$n" || status=1
	cp "$B/fuzz-$n.log" "$B/campaign/$n-$day.log"
done
exit $status
