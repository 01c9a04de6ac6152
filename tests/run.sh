#!/usr/bin/env bash
# tests/run.sh - perfconv's test driver: the unit tests, then every suite (the other tests/*.sh,
# each one concept: tests/folded.sh the golden tests, tests/cli.sh the command line, ...), and one
# summary.  It holds no case of its own; tests/layout.sh checks that every tests/*.sh is a suite
# listed here or one of its NOT_SUITES.  `make check` and `make asan` run it.
#
#   PERFCONV=path/to/perfconv   binary under test (default ./perfconv)
#   UNIT_DIR=build/tests        run every executable there as a unit test (make check sets it)
#   FUZZ_DIR=build/fuzz         the fuzz targets tests/fuzz.sh replays tests/regress/ through
#   FIXTURES=dir                fixture tree (default fixtures/ beside this directory)
#   TRUNCATE=0                  skip the truncation test; TRUNC_* variables tune it (tests/truncate.sh)
#   DOTNET_LIVE=0               skip the .NET end-to-end tests (dotnet-live.sh, aspnet-live.sh, dotnet-dwarf.sh,
#                               dotnet-enable.sh, diff-live.sh)
#   LIVE=0                      skip every suite that records with perf or runs .NET apps (also offcpu.sh)
#   CONSUMERS=0                 skip handing outputs to the real consumers (PerfView, Chromium, go tool pprof, protoc)
#   VARIANTS=N                  the per-option golden variants (--pid --tid --kernel --addrs --all) on one
#                               fixture in N (default 1: all; tests/folded.sh)
#   TEST_JOBS=N                 suites run at once (default: one more than the number of CPUs, which
#                               fills the time the suites wait for processes); the live ones run
#                               first, alone
#   tests/run.sh [WORD...]      run only the cases whose name contains one of the words
#   tests/run.sh --list         print the suites ("live NAME", "pool NAME") and the scripts that
#                               are not suites ("not NAME"), and do nothing else
#
# One line per case: "ok NAME", "FAIL NAME: why" (with the first lines of a diff or of stderr),
# "skip NAME: why", or "xfail NAME: why" for a known gap of the converter (counted as skipped).
# The last line is "N passed, N failed, N skipped"; the exit status is 1 when anything failed.

# The live suites record workloads whose waits have known lengths (off-CPU time, .NET apps under
# load), so they run first and alone; DOTNET_LIVE=0 leaves out all but offcpu.sh.
LIVE_SUITES=(offcpu.sh dotnet-live.sh aspnet-live.sh dotnet-dwarf.sh dotnet-enable.sh diff-live.sh record.sh)
# The others, the slowest first (as measured on 2 CPUs), so that the lanes end together
# (TRUNCATE=0 leaves truncate.sh out).
POOL_SUITES=(static.sh pack.sh perfview.sh folded.sh truncate.sh perf-identity.sh foreign.sh pprof.sh svg.sh tiers.sh
	perf-script.sh speedscope.sh firefox.sh batch.sh endian.sh r2r-truth.sh debuginfod.sh symsrv.sh r2r.sh
	diff.sh jit.sh dotnet-baseline.sh events.sh perfview-events.sh fuzz.sh preload.sh r2rcache.sh arm64.sh readme.sh
	running-kernel.sh layout.sh cli.sh man.sh)
# tests/*.sh that are not suites: what every script sources, and this driver
NOT_SUITES=(lib.sh run.sh)

if [ "${1-}" = --list ]; then
	printf 'live %s\n' "${LIVE_SUITES[@]}"
	printf 'pool %s\n' "${POOL_SUITES[@]}"
	printf 'not %s\n' "${NOT_SUITES[@]}"
	exit 0
fi

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" test
# the words to select cases by are the arguments (the suites get them as FILTERS)
filters=("$@")

# ---------------------------------------------------------------------------------------------------
# The suites print lines in the same format; they are counted here for the one summary.  The pool
# runs TEST_JOBS of them at a time, each into a file, while the unit tests take one lane;
# collect_suites prints them in order and counts them.  TEST_JOBS=1 runs them one after the other.
count_line() {
	case $1 in
	"ok "*) npass=$((npass + 1)) ;;
	"FAIL "*) nfail=$((nfail + 1)) ;;
	"skip "* | "xfail "*) nskip=$((nskip + 1)) ;;
	esac
}
# suite SCRIPT: run one now, printing and counting its lines as they come
suite() {
	local script=$1 line t0=$SECONDS
	while IFS= read -r line; do
		count_line "$line"
		printf '%s\n' "$line"
	done < <(FILTERS="${filters[*]}" "$top/tests/$script" || echo "FAIL  $script: tests/$script exited with status $?")
	echo "# $script took $((SECONDS - t0)) s"
}
# start_pool SCRIPT...: run them in the background, TEST_JOBS at a time, each one's lines into a file
mkdir -p "$TMP/suites"
pool=()
start_pool() {
	pool=("$@")
	(
		# stopped (the driver ended): its suites end too, and no other starts
		trap 'kill $(jobs -p) 2>/dev/null; exit 143' TERM
		for script in "$@"; do
			# the unit tests take one lane while they run
			while lanes=$TEST_JOBS && { [ -e "$TMP/suites/unit-done" ] || [ "$lanes" -eq 1 ] || lanes=$((lanes - 1)); } &&
				[ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do
				wait -n
			done
			(
				t0=$SECONDS
				# in the background, so that a TERM reaches the suite now, not when it is done
				FILTERS="${filters[*]}" "$top/tests/$script" &
				trap 'kill $! 2>/dev/null; exit 143' TERM
				wait $! || echo "FAIL  $script: tests/$script exited with status $?"
				echo "# $script took $((SECONDS - t0)) s"
			) >"$TMP/suites/$script.out" </dev/null &
		done
		wait
	) &
	pool_pid=$!
}
# collect_suites: wait for the pool, then print and count its lines in the order it was given
collect_suites() {
	local script line
	[ "${#pool[@]}" -gt 0 ] || return 0
	wait "$pool_pid"
	for script in "${pool[@]}"; do
		while IFS= read -r line; do
			count_line "$line"
			printf '%s\n' "$line"
		done <"$TMP/suites/$script.out"
	done
}
trap '[ -n "${pool_pid-}" ] && kill "$pool_pid" 2>/dev/null; rm -rf "$TMP"' EXIT
TEST_JOBS=${TEST_JOBS:-$(($(nproc 2>/dev/null || echo 1) + 1))}
[ "$TEST_JOBS" -ge 1 ] 2>/dev/null || TEST_JOBS=1

# unit_tests: every executable in UNIT_DIR; its output is shown when it fails.
unit_tests() {
	local t name
	[ -n "${UNIT_DIR-}" ] && [ -d "$UNIT_DIR" ] || return 0
	for t in "$UNIT_DIR"/*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		name=unit/$(basename "$t")
		selected "$name" || continue
		"$t" >"$TMP/unit.log" 2>&1 </dev/null
		rc=$?
		if [ "$rc" = 0 ]; then
			pass "$name"
		else
			fail "$name" "exit status $rc" "$TMP/unit.log"
		fi
	done
}

# Without a binary there is no suite to run: say so once instead of failing every case.
if [ ! -f "$PERFCONV" ] || [ ! -x "$PERFCONV" ]; then
	unit_tests
	fail "binary" "'$PERFCONV' is not an executable file (build it with make, or set PERFCONV)"
	echo "$npass passed, $nfail failed, $nskip skipped"
	exit 1
fi

if [ "${LIVE:-1}" != 0 ]; then
	for sub in "${LIVE_SUITES[@]}"; do
		[ "$sub" = offcpu.sh ] || [ "${DOTNET_LIVE:-1}" != 0 ] || continue
		suite "$sub"
	done
fi
bg=()
for sub in "${POOL_SUITES[@]}"; do
	[ "$sub" = truncate.sh ] && [ "${TRUNCATE:-1}" = 0 ] && continue
	bg+=("$sub")
done
start_pool "${bg[@]}"
unit_t0=$SECONDS
unit_tests
echo "# the unit tests took $((SECONDS - unit_t0)) s"
: >"$TMP/suites/unit-done"
collect_suites

echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
