#!/usr/bin/env bash
# tests/perf-identity.sh - wherever perf 6.1 names a frame, perfconv's default gives it the same
# name; the default only adds names where perf has none.  For every fixture, one batch run with
# --perf-compat (whose output the golden suites hold to perf's own) and one without write every
# format; tests/tools/perf_identity.py compares them:
#   perf-identity/FX/script     perf-script text, sample by sample and frame by frame
#   perf-identity/FX/trace.zip  the trace's perf.data.txt, the same way
#   perf-identity/FX/folded, /speedscope, /svg   no name of perf's loses weight, totals equal
# The default runs with --dotnet-names keep, so that .NET names are compared in the runtime's
# form (the short display form is a rewriting of the same name, tested in test_jit).
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
	"$PERFCONV" -q "${base[@]}" --dotnet-names keep -O "$TMP/d" -f "$FORMATS" "${inputs[@]}" >"$TMP/err.d" 2>&1
	rc_d=$?
	if [ "$rc_c" != 0 ] || [ "$rc_d" != 0 ]; then
		cat "$TMP/err.c" "$TMP/err.d" >"$TMP/err"
		fail "perf-identity/$fx" "a conversion failed (exit $rc_c with --perf-compat, $rc_d by default)" "$TMP/err"
		continue
	fi
	b=$(basename "${inputs[0]}")
	for kind in script trace.zip folded speedscope svg; do
		name=perf-identity/$fx/$kind
		selected "$name" || continue
		case $kind in
		script) c=$TMP/c/$b.perf.txt d=$TMP/d/$b.perf.txt ;;
		trace.zip)
			for m in c d; do
				python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
n = [x for x in z.namelist() if x.endswith("/perf.data.txt")][0]
open(sys.argv[2], "wb").write(z.read(n))' "$TMP/$m/$b.trace.zip" "$TMP/$m/trace.txt" || true
			done
			c=$TMP/c/trace.txt d=$TMP/d/trace.txt kind=script ;;
		folded) c=$TMP/c/$b.folded d=$TMP/d/$b.folded ;;
		speedscope) c=$TMP/c/$b.speedscope.json d=$TMP/d/$b.speedscope.json ;;
		svg) c=$TMP/c/$b.svg d=$TMP/d/$b.svg ;;
		esac
		if [ ! -f "$c" ] || [ ! -f "$d" ]; then
			fail "$name" "no output ($(basename "$c"))"
		elif python3 "$CHECK" "$kind" "$c" "$d" >"$TMP/out" 2>&1; then
			pass "$name ($(tail -n 1 "$TMP/out"))"
		else
			fail "$name" "the default disagrees with perf's names" "$TMP/out"
		fi
	done
done
