#!/usr/bin/env bash
# tests/perf-identity.sh - wherever perf 6.1 names a frame, perfconv's default gives it the same
# name; the default only adds names where perf has none.  For every fixture, one batch run with
# --perf-compat (whose output the golden suites hold to perf's own) and one without write every
# format; tests/tools/perf_identity.py compares them:
#   perf-identity/FX/script     perf-script text, sample by sample and frame by frame
#   perf-identity/FX/trace.zip  the trace's perf.data.txt, the same way
#   perf-identity/FX/folded, /speedscope, /svg   no name of perf's loses weight, totals equal
# The default runs with --dotnet-names keep --keep-tiers, so that .NET names are compared in the
# runtime's form (the short display form and the merged tiers are rewritings of the same name,
# tested in test_jit and tests/tiers.sh).  Runs of unnamed frames the default folds are no names.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" identity
need_perfconv perf-identity
need_python perf-identity

CHECK=tests/tools/perf_identity.py
FORMATS=perf-script,folded,speedscope,svg,trace.zip

for dir in "$FIX"/*/; do
	dir=${dir%/}
	fixture "$dir" || continue
	selected "perf-identity/$fx/" || continue
	if why=$(missing_runtime "$dir"); then
		skip "perf-identity/$fx/*" "$why"
		continue
	fi
	# the fixture's arguments without --perf-compat
	base=()
	for a in "${args[@]}"; do
		[ "$a" = --perf-compat ] || base+=("$a")
	done
	# batch mode takes the input as an argument; -i stays out
	inputs=("${base[1]}")
	base=("${base[@]:2}")
	rm -rf "$TMP/c" "$TMP/d"
	"$PERFCONV" -q "${base[@]}" --perf-compat -O "$TMP/c" -f "$FORMATS" "${inputs[@]}" >"$TMP/err.c" 2>&1
	rc_c=$?
	"$PERFCONV" -q "${base[@]}" --dotnet-names keep --keep-tiers -O "$TMP/d" -f "$FORMATS" "${inputs[@]}" >"$TMP/err.d" 2>&1
	rc_d=$?
	if [ "$rc_c" != 0 ] || [ "$rc_d" != 0 ]; then
		cat "$TMP/err.c" "$TMP/err.d" >"$TMP/err"
		fail "perf-identity/$fx" "a conversion failed (exit $rc_c with --perf-compat, $rc_d by default)" "$TMP/err"
		continue
	fi
	# one interpreter checks every format of the fixture and prints the result lines
	python3 "$CHECK" --batch "perf-identity/$fx" "$TMP/c" "$TMP/d" "$(basename "${inputs[0]}")" >"$TMP/res"
	while IFS= read -r line; do
		case $line in
		"ok "*) npass=$((npass + 1)) ;;
		"FAIL "*) nfail=$((nfail + 1)) ;;
		esac
		printf '%s\n' "$line"
	done <"$TMP/res"
done
