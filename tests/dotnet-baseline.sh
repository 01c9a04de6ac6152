#!/usr/bin/env bash
# tests/dotnet-baseline.sh - perfconv must resolve at least as much of the .NET fixtures as perf does.
# For each fixtures/dotnet-* directory, tests/dotnet-resolution.py measures perf's expected folded
# stacks (the numbers must be the ones written in its PROVENANCE.txt, so the measure itself cannot
# drift) and perfconv's folded output (with the fixture's maps/ as --map-dir); perfconv's shares of
# fully resolved managed and framework samples must not be lower than perf's.  Unlike the golden
# tests, this keeps passing when perfconv names frames that perf leaves unknown.
#
# Prints lines in tests/run.sh's format: "ok    dotnet-baseline/FIXTURE (perf: ..., perfconv: ...)".
#
#   PERFCONV, FIXTURES   as for tests/run.sh
#   FILTERS="w1 w2"      only the cases whose name contains one of the words
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" dotnet-baseline

# "managed N%, framework N%" out of a dotnet-resolution.py line
short() { sed -n '1s/^\([^:]*: \)\{0,1\}managed \([0-9.]*%\) resolved.*framework \([0-9.]*%\) resolved.*/managed \2, framework \3/p' <<<"$1"; }

for dir in "$FIX"/dotnet-*/; do
	dir=${dir%/}
	fx=$(basename "$dir")
	name=dotnet-baseline/$fx
	selected "$name" || continue
	[ -f "$dir/PROVENANCE.txt" ] || continue
	[ -d "$dir/expected" ] || continue	# dotnet-events: runtime events, no CPU profile of perf's to compare
	if ! command -v python3 >/dev/null 2>&1; then
		skip "$name" "python3 is needed (scripts/install-deps.sh --test)"
		continue
	fi
	if why=$(missing_runtime "$dir"); then
		skip "$name" "$why"
		continue
	fi
	in=$dir/perf.data
	[ -f "$dir/perf.jit.data" ] && in=$dir/perf.jit.data
	exp=$dir/expected/folded.txt
	[ -f "$exp" ] || exp=$exp.xz

	# perf's shares, as written in PROVENANCE.txt.
	perf_line=$(python3 tests/dotnet-resolution.py "$exp" 2>&1 | sed 's/^[^:]*: //')
	written=$(sed -n 's/^ *tests\/dotnet-resolution.py: //p' "$dir/PROVENANCE.txt")
	if [ "$perf_line" != "$written" ]; then
		printf 'now:     %s\nwritten: %s\n' "$perf_line" "$written" >"$TMP/provenance"
		fail "$name" "tests/dotnet-resolution.py on $exp gives another result than $dir/PROVENANCE.txt" "$TMP/provenance"
		continue
	fi
	managed=$(sed -n 's/^managed \([0-9.]*\)% resolved.*/\1/p' <<<"$perf_line")
	framework=$(sed -n 's/.*framework \([0-9.]*\)% resolved.*/\1/p' <<<"$perf_line")

	# with the default names: as perf reads it (the injected file where there is one), and from the raw
	# recording: the jitdump read directly, W^X code looked up in the perf map
	for mode in default resolve-jit; do
		if [ "$mode" = default ]; then
			case_name=$name
			args=(-q -i "$in" --symfs "$FIX/root" --kallsyms "$dir/kallsyms")
		else
			case_name=$name/resolve-jit
			args=(-q -i "$dir/perf.data" --symfs "$FIX/root" --kallsyms "$dir/kallsyms" --resolve-jit)
		fi
		[ -d "$dir/maps" ] && args+=(--map-dir "$dir/maps")
		"$PERFCONV" "${args[@]}" -o "$TMP/out.folded" >"$TMP/out" 2>"$TMP/err" </dev/null
		rc=$?
		if [ "$rc" != 0 ] || [ ! -s "$TMP/out.folded" ]; then
			fail "$case_name" "perfconv exited with status $rc" "$TMP/err"
			continue
		fi
		ours=$(python3 tests/dotnet-resolution.py --check-managed "$managed" --check-framework "$framework" "$TMP/out.folded" 2>&1)
		st=$?
		detail="perf: $(short "$perf_line"), perfconv: $(short "$ours")"
		if [ "$st" = 0 ]; then
			pass "$case_name ($detail)"
		else
			fail "$case_name" "perfconv resolves less than perf ($detail)"
		fi
		rm -f "$TMP/out.folded"
	done
done
exit 0
