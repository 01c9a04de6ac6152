#!/usr/bin/env bash
# tests/preload.sh - kernel symbols are read on a thread of their own, from the first kernel
# address on, while records are decoded.  The output must not depend on when that thread is done:
# with it held back (PERFCONV_PRELOAD_DELAY_MS) and with a kallsyms cut short, it must equal the
# conversion without the preload (PERFCONV_PRELOAD=0), in every format.  Which kernel symbols name
# the frames is tests/folded.sh's and tests/running-kernel.sh's.
#   preload/FX/kallsyms, preload/FX/kallsyms-cut, preload/formats/FX, preload/retried
# Run by tests/run.sh; prints "ok    preload/NAME" or "FAIL  preload/NAME: why".  PERFCONV, FIXTURES
# and FILTERS="w1 w2" as for tests/run.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" preload
need_perfconv preload
# an empty perf map directory: a live suite's .NET process that happens to get a fixture's pid
# writes /tmp/perf-PID.map between the two conversions of a case
mkdir -p "$TMP/maps"
S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms" --map-dir "$TMP/maps")

# With the thread held back and a kallsyms cut short, so that sampled kernel addresses fall
# outside its range, the result must equal the one without the preload; the cut file must make
# perfconv convert a second time (preload/retried, which therefore runs the cut cases).
grep -v $'\t' "$ROOT/kallsyms" | head -n "$(($(grep -vc $'\t' "$ROOT/kallsyms") / 2))" >"$TMP/kallsyms-cut"
grep $'\t' "$ROOT/kallsyms" >>"$TMP/kallsyms-cut"
retried=0
for fx in cpu-systemwide tracepoint-systemwide fp-callgraph; do
	for ks in "$ROOT/kallsyms" "$TMP/kallsyms-cut"; do
		name=preload/$fx/$(basename "$ks")
		selected "$name" || { [ "$ks" = "$TMP/kallsyms-cut" ] && selected preload/retried; } || continue
		d=$TMP/case
		PERFCONV_PRELOAD=0 run_pc "$d" -i "$FIX/$fx/perf.data" --symfs "$ROOT" --kallsyms "$ks" --map-dir "$TMP/maps" --kernel --addrs -o - -q
		cp "$d/out" "$TMP/inline.folded"
		PERFCONV_PRELOAD_DELAY_MS=300 run_pc "$d" -v -i "$FIX/$fx/perf.data" --symfs "$ROOT" --kallsyms "$ks" \
			--map-dir "$TMP/maps" --kernel --addrs -o "$TMP/preload.folded"
		grep -q 'converting again' "$d/err" && retried=$((retried + 1))
		if [ "$rc" = 0 ] && [ -s "$TMP/inline.folded" ] && cmp -s "$TMP/inline.folded" "$TMP/preload.folded"; then
			pass "$name"
		else
			diff -u "$TMP/inline.folded" "$TMP/preload.folded" --label inline --label preload >"$d/diff" 2>&1
			fail "$name" "exit status $rc, or the preloaded kernel symbols changed the output" "$d/diff"
		fi
	done
done
# every format: pprof writes the kernel's range, which the kallsyms table stretches (but runtime,
# the report of the .NET runtime's events, which these recordings do not carry)
for fx in cpu-systemwide fp-callgraph; do
	selected "preload/formats/$fx" || continue
	bad=
	for f in $("$PERFCONV" --help | sed -n 's/^Formats: *//p' | sed 's/ runtime\b//'); do
		d=$TMP/case
		PERFCONV_PRELOAD=0 run_pc "$d" -q -i "$FIX/$fx/perf.data" "${S[@]}" --kernel -f "$f" -o "$TMP/out.$f"
		[ "$rc" = 0 ] && mv "$TMP/out.$f" "$TMP/inline.$f" || bad="${bad:-$f: exit status $rc}"
		PERFCONV_PRELOAD_DELAY_MS=300 run_pc "$d" -q -i "$FIX/$fx/perf.data" "${S[@]}" --kernel -f "$f" -o "$TMP/out.$f"
		[ "$rc" = 0 ] && cmp -s "$TMP/inline.$f" "$TMP/out.$f" || bad="${bad:-$f: exit status $rc, or the output differs with the kernel symbols read late}"
	done
	if [ -z "$bad" ]; then pass "preload/formats/$fx"; else fail "preload/formats/$fx" "$bad" "$d/err"; fi
done
if selected preload/retried; then
	if [ "$retried" -gt 0 ]; then
		pass preload/retried
	else
		fail preload/retried "no conversion with the cut kallsyms took the second pass: the test does not reach it"
	fi
fi
