#!/usr/bin/env bash
# fuzz/campaign.sh - a long fuzzing campaign: each target in turn until it has run N executions.
#
#   fuzz/campaign.sh BUILD_DIR N NAME...      e.g. fuzz/campaign.sh build-fuzz 10000000 unwind jitdump
#
# Targets run one after the other (one libFuzzer process: the machine is shared) through fuzz/run.sh
# with FUZZ_RUNS=N, on the corpus kept in BUILD_DIR/corpus/NAME, so a campaign stopped and started
# again goes on from where it was.  Each target's libFuzzer log is kept as BUILD_DIR/campaign/NAME-DATE.log
# and one line per target goes to BUILD_DIR/campaign/results.txt (the figures of docs/fuzzing.md):
#   DATE COMMIT NAME EXECUTIONS EXEC/S SECONDS CORPUS_FILES CRASHES
# Run it under `nice -n 15`.  FUZZ_SECONDS caps each target's time (libFuzzer's -max_total_time).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
B=${1:?usage: fuzz/campaign.sh BUILD_DIR N NAME...}
N=${2:?usage: fuzz/campaign.sh BUILD_DIR N NAME...}
shift 2
mkdir -p "$B/campaign"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
status=0
for n in "$@"; do
	day=$(date -u +%FT%TZ)
	FUZZ_RUNS=$N fuzz/run.sh "$B" "$n" | tee "$B/campaign/$n.last" || status=1
	cp "$B/fuzz-$n.log" "$B/campaign/$n-$day.log"
	# fuzz/run.sh's line: fuzz NAME: N runs in S s (R exec/s), corpus C files, crashes K
	sed -n "s/^fuzz $n: \([0-9]*\) runs in \([0-9]*\) s (\([0-9]*\) exec\/s), corpus \([0-9]*\) files, crashes \([0-9]*\)$/$day $commit $n \1 \3 \2 \4 \5/p" \
		"$B/campaign/$n.last" >>"$B/campaign/results.txt"
done
exit $status
