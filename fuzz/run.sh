#!/usr/bin/env bash
# fuzz/run.sh - run the libFuzzer targets that `make fuzz` built, each for FUZZ_SECONDS.
#
#   fuzz/run.sh BUILD_DIR [NAME...]     NAME: reader, perfmap, elf, ... (default: every target built)
#   FUZZ_SECONDS=60  FUZZ_MAX_LEN=...   (libFuzzer's -max_len; default: the largest seed)
#   FUZZ_RUNS=N      stop after N executions instead (-runs=N; FUZZ_SECONDS, when also set, caps the
#                    time), for a campaign (fuzz/campaign.sh)
#   FUZZ_KEEP=0      leave fuzz/corpus/ and fuzz/runs.txt alone (a try that should not count)
#   FUZZ_TIMEOUT=10  seconds one input may take (libFuzzer's -timeout, wall-clock time: where jobs
#                    are stopped and resumed, SIGSTOP, raise it or every stop reports a timeout)
#
# A target is one file, fuzz/fuzz_NAME.c, defining LLVMFuzzerTestOneInput; its line
#   // FUZZ_SEEDS: glob...
# names the files that seed its corpus (paths from the top directory; globs that match nothing
# are ignored).  A run starts from the seeds, from the corpus kept in git (fuzz/corpus/NAME, what
# earlier runs on any machine found) and from the working corpus of this build directory
# (BUILD_DIR/corpus/NAME, where libFuzzer writes); crashes go to BUILD_DIR/crashes/NAME/.
# After the run the three are merged (libFuzzer's -merge=1: the smallest inputs that keep every
# feature) back into fuzz/corpus/NAME, unless that would pass FUZZ_CORPUS_MAX bytes (default
# 2000000), and the run is appended to fuzz/runs.txt, which docs/fuzzing.md's figures add up:
#   DATE COMMIT NAME EXECUTIONS EXEC/S SECONDS CORPUS_FILES CRASHES
# (COMMIT ends in "+" when converter/ or fuzz/*.c differ from it.)  Commit both after a run.
# One line per target on stdout:
#   fuzz NAME: N runs in S s (R exec/s), corpus C files, crashes K
# An optional "// FUZZ_ASAN_OPTIONS: a=b:c=d" line adds to ASAN_OPTIONS for that target.
# An optional "// FUZZ_MAX_LEN: BYTES" line caps the input size (libFuzzer's -max_len) for parsers
# whose large seeds would slow every run down; FUZZ_MAX_LEN overrides it for all targets.
# SIGINT to the libFuzzer process (fuzz_NAME under BUILD_DIR/run/) ends a run early, recorded
# like any other.  The exit status is 1 when a target found a crash: fix it, then copy the input into
# tests/regress/NAME/ so that tests/fuzz.sh replays it in every `make check`.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
B=${1:?usage: fuzz/run.sh BUILD_DIR [NAME...]}
shift
SECS=${FUZZ_SECONDS:-60}
limit=(-max_total_time="$SECS")
if [ -n "${FUZZ_RUNS:-}" ]; then
	limit=(-runs="$FUZZ_RUNS" -max_total_time="${FUZZ_SECONDS:-0}")
fi
names=("$@")
if [ "${#names[@]}" -eq 0 ]; then
	for f in fuzz/fuzz_*.c; do
		n=${f#fuzz/fuzz_}
		names+=("${n%.c}")
	done
fi
keep=${FUZZ_KEEP:-1}
cmax=${FUZZ_CORPUS_MAX:-2000000}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- converter 'fuzz/*.c' 'fuzz/*.h' 2>/dev/null || commit=$commit+
status=0
for n in "${names[@]}"; do
	bin=$B/fuzz/fuzz_$n
	if [ ! -x "$bin" ]; then
		echo "fuzz $n: no binary $bin (make fuzz builds it)"
		status=1
		continue
	fi
	corpus=$B/corpus/$n crashes=$B/crashes/$n kept=fuzz/corpus/$n
	mkdir -p "$corpus" "$crashes"
	dirs=("$corpus")
	[ -d "$kept" ] && dirs+=("$kept")
	# shellcheck disable=SC2207 # the globs are meant to expand
	seeds=($(sed -n 's|^// FUZZ_SEEDS:||p' "fuzz/fuzz_$n.c"))
	for g in "${seeds[@]}"; do
		for s in $g; do
			[ -f "$s" ] || continue
			# large seeds slow every run down: the small fixtures cover the same records
			[ "$(stat -c %s "$s")" -le "${FUZZ_SEED_MAX:-400000}" ] || continue
			cp -n "$s" "$corpus/seed-$(sha1sum "$s" | cut -c1-16)" 2>/dev/null
		done
	done
	maxlen=()
	ml=${FUZZ_MAX_LEN:-$(sed -n 's|^// FUZZ_MAX_LEN: *||p' "fuzz/fuzz_$n.c")}
	[ -n "$ml" ] && maxlen=(-max_len="$ml")
	log=$B/fuzz-$n.log
	# a copy of the binary runs, so that a rebuild during a long run does not replace it under libFuzzer
	mkdir -p "$B/run"
	cp "$bin" "$B/run/fuzz_$n"
	start=$SECONDS
	day=$(date -u +%FT%TZ)
	# this run's crashes are the files it writes: an earlier run's, kept in $crashes until
	# someone removes them, are not counted again
	touch "$B/run/start-$n"
	aopts=${ASAN_OPTIONS:-detect_leaks=1}
	extra=$(sed -n 's|^// FUZZ_ASAN_OPTIONS: *||p' "fuzz/fuzz_$n.c")
	[ -n "$extra" ] && aopts=$aopts:$extra
	ASAN_OPTIONS=$aopts "$B/run/fuzz_$n" "${limit[@]}" -print_final_stats=1 \
		-timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -artifact_prefix="$crashes/" "${maxlen[@]}" "${dirs[@]}" >"$log" 2>&1
	rc=$?
	took=$((SECONDS - start))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	# libFuzzer's slow-unit-* files are inputs that took longer than 10 s of wall-clock time (on a
	# busy machine a niced run can be kept off the CPU that long): not crashes
	ncrash=$(find "$crashes" -type f ! -name 'slow-unit-*' -newer "$B/run/start-$n" | wc -l)
	echo "fuzz $n: ${runs:-0} runs in $took s (${rate:-0} exec/s), corpus $(find "$corpus" -type f | wc -l) files, crashes $ncrash"
	echo "$(date -u +%FT%TZ) $n ${runs:-0} $took" >>"$B/fuzz-history.txt"
	if [ "$keep" != 0 ] && [ "${runs:-0}" -gt 0 ]; then
		echo "$day $commit $n $runs ${rate:-0} $took $(find "$corpus" -type f | wc -l) $ncrash" >>fuzz/runs.txt
		# the kept corpus: the smallest inputs that keep every feature of the three sources
		m=$B/merge/$n
		rm -rf "$m"
		mkdir -p "$m"
		ASAN_OPTIONS=$aopts "$B/run/fuzz_$n" -merge=1 -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
			"${maxlen[@]}" "$m" "${dirs[@]}" >"$B/merge-$n.log" 2>&1
		size=$(du -sb "$m" | cut -f1)
		nm=$(find "$m" -type f | wc -l)
		if [ "$nm" = 0 ]; then
			echo "fuzz $n: merge failed, $kept left as it was (see $B/merge-$n.log)"
		elif [ "$size" -gt "$cmax" ]; then
			echo "fuzz $n: merged corpus is $size bytes (over $cmax), $kept left as it was"
		else
			mkdir -p "$kept"
			find "$kept" -type f -delete
			mv "$m"/* "$kept"/
			echo "fuzz $n: kept corpus $kept: $nm files, $size bytes"
		fi
	fi
	# SIGINT ends a run early (libFuzzer prints its figures and exits 72): it counts, as above
	if [ "$rc" = 72 ] && [ "$ncrash" = 0 ] && grep -q 'libFuzzer: run interrupted' "$log"; then
		echo "fuzz $n: interrupted after ${runs:-0} runs"
	elif [ "$rc" != 0 ] || [ "$ncrash" -gt 0 ]; then
		echo "fuzz $n: FAILED (exit $rc), see $log and $crashes/"
		grep -m 3 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/    /'
		status=1
	fi
done
exit $status
