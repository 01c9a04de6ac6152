#!/usr/bin/env bash
# tests/tiers.sh - what the default mode's aggregate views draw differently from perf's text, each
# against an oracle that shares no code with it:
#   tiers/FX/speedscope  a .NET fixture's speedscope file by default holds the stacks of its
#                        --keep-tiers file with the tier tags ("...)[QuickJitted]") taken out and
#                        the stacks that became one added up (tests/tools/tiers_check.py), and no tag
#   tiers/FX/folded      the folded stacks likewise (tests/tools/fold_runs.py --strip-tiers)
#   tiers/FX/text        perf-script keeps the tags: the same bytes by default as with --keep-tiers,
#                        and --strip-tiers takes them out there too
#   tiers/FX/one-pass    one conversion to folded, perf-script and speedscope writes each file as
#                        a conversion to that format alone does
#   tiers/FX/compat      --perf-compat keeps the tags: the same bytes as with --keep-tiers
#   runs/FX/speedscope   a fixture without JIT code (whose default names are perf's): speedscope's
#                        stacks by default are those of --perf-compat with each run of unnamed
#                        frames of one library folded into one, and perf's when --perf-compat
# Run by tests/run.sh; prints "ok", "FAIL" or "skip" lines.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" tiers
need_perfconv tiers
need_python tiers
CHECK=tests/tools/tiers_check.py

# default_args: the fixture's arguments without --perf-compat
default_args() {
	local a
	dargs=()
	for a in "${args[@]}"; do [ "$a" = --perf-compat ] || dargs+=("$a"); done
}

# conv OUT ARGS...: perfconv -q ARGS -o OUT; false (and a FAIL for $name) when it fails
conv() {
	local out=$1
	shift
	"$PERFCONV" -q "$@" -o "$out" 2>"$TMP/err" </dev/null && [ -s "$out" ] && return 0
	fail "$name" "perfconv $* -o $(basename "$out") failed" "$TMP/err"
	return 1
}

for fx in dotnet-aspnet dotnet-jitdump; do
	dir=$FIX/$fx
	fixture "$dir" || continue
	if why=$(missing_runtime "$dir"); then
		selected "tiers/$fx/" && skip "tiers/$fx/*" "$why"
		continue
	fi
	selected "tiers/$fx/" || continue
	default_args
	D=$TMP/$fx
	mkdir -p "$D"
	name=tiers/$fx/speedscope
	if selected "$name" && conv "$D/d.speedscope.json" "${dargs[@]}" && conv "$D/k.speedscope.json" "${dargs[@]}" --keep-tiers; then
		if python3 "$CHECK" speedscope "$D/k.speedscope.json" "$D/d.speedscope.json" >"$D/res" 2>&1; then
			pass "$name ($(cat "$D/res"))"
		else
			fail "$name" "the default is not --keep-tiers with the tags taken out" "$D/res"
		fi
	fi
	name=tiers/$fx/folded
	if selected "$name" && conv "$D/d.folded" "${dargs[@]}" && conv "$D/k.folded" "${dargs[@]}" --keep-tiers; then
		python3 tests/tools/fold_runs.py --strip-tiers <"$D/k.folded" >"$D/k-stripped.folded"
		if cmp -s "$D/k-stripped.folded" "$D/d.folded"; then
			pass "$name"
		else
			diff -u "$D/k-stripped.folded" "$D/d.folded" >"$D/diff"
			fail "$name" "the default is not --keep-tiers with the tags taken out" "$D/diff"
		fi
	fi
	name=tiers/$fx/text
	if selected "$name" && conv "$D/d.perf.txt" "${dargs[@]}" && conv "$D/k.perf.txt" "${dargs[@]}" --keep-tiers &&
		conv "$D/s.perf.txt" "${dargs[@]}" --strip-tiers; then
		tags=$(grep -cE '\)\[[A-Z][A-Za-z0-9_-]*\]\+0x' "$D/d.perf.txt")
		left=$(grep -cE '\)\[[A-Z][A-Za-z0-9_-]*\]\+0x' "$D/s.perf.txt")
		if ! cmp -s "$D/d.perf.txt" "$D/k.perf.txt"; then
			fail "$name" "perf-script differs by default from --keep-tiers"
		elif [ "$tags" = 0 ] || [ "$left" != 0 ]; then
			fail "$name" "$tags frame lines with a tier tag by default, $left with --strip-tiers (expected some, then none)"
		else
			pass "$name ($tags frame lines with a tier tag, as with --keep-tiers; none with --strip-tiers)"
		fi
	fi
	name=tiers/$fx/one-pass
	if selected "$name" && [ -s "$D/d.folded" ] && [ -s "$D/d.perf.txt" ] && [ -s "$D/d.speedscope.json" ]; then
		rm -rf "$D/one"
		if ! "$PERFCONV" -q "${dargs[@]:2}" -O "$D/one" -f folded,perf-script,speedscope "${dargs[1]}" 2>"$TMP/err"; then
			fail "$name" "the conversion to three formats failed" "$TMP/err"
		else
			base=$D/one/$(basename "${dargs[1]}")
			bad=
			cmp -s "$base.folded" "$D/d.folded" || bad+=" folded"
			cmp -s "$base.perf.txt" "$D/d.perf.txt" || bad+=" perf-script"
			# speedscope's "name" is the input's file name in both
			cmp -s "$base.speedscope.json" "$D/d.speedscope.json" || bad+=" speedscope"
			if [ -z "$bad" ]; then pass "$name"; else fail "$name" "differs from its own conversion:$bad"; fi
		fi
	fi
	name=tiers/$fx/compat
	if selected "$name" && conv "$D/c.speedscope.json" "${args[@]}" && conv "$D/ck.speedscope.json" "${args[@]}" --keep-tiers; then
		# (dotnet-aspnet ran with W^X on: perf names none of its JIT frames, and shows no tag)
		tags=$(grep -cE '\)\[[A-Z][A-Za-z0-9_-]*\]"' "$D/c.speedscope.json")
		if cmp -s "$D/c.speedscope.json" "$D/ck.speedscope.json"; then
			pass "$name (the same bytes as with --keep-tiers, $tags frames with a tier tag)"
		else
			fail "$name" "--perf-compat's speedscope differs from --perf-compat --keep-tiers'"
		fi
	fi
done

for fx in cpu-systemwide tracepoint-systemwide; do
	dir=$FIX/$fx
	fixture "$dir" || continue
	name=runs/$fx/speedscope
	selected "$name" || continue
	D=$TMP/$fx
	mkdir -p "$D"
	if conv "$D/d.speedscope.json" "${args[@]}" && conv "$D/c.speedscope.json" "${args[@]}" --perf-compat; then
		if python3 "$CHECK" runs "$D/c.speedscope.json" "$D/d.speedscope.json" >"$D/res" 2>&1; then
			pass "$name ($(cat "$D/res"))"
		else
			fail "$name" "the default is not --perf-compat with its runs folded" "$D/res"
		fi
	fi
done
