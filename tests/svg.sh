#!/usr/bin/env bash
# tests/svg.sh - the SVG flame graph writer.  For every fixture the SVG must convert, be well-formed
# and self-contained XML, and show by value exactly the folded profile of the same conversion: the
# count in each frame's <title> (written as flamegraph.pl writes it) must equal what the folded lines
# give that frame path (tests/svg_check.py), both with the default --minwidth and with --minwidth 0.
# Then: the height over the frames drawn, identical bytes from two runs, --pid/--tid/--event/--all
# (frame colors by kind), --inverted,
# --title, --width, --minwidth in pixels and in percent, bad option values, hostile names from a perf
# map, -o -, a corrupt input, and the page in headless Chromium (tests/svg_browser.py: no script
# error, search with its matched share, zoom, reset, a screenshot; skipped without Chromium), and a
# .NET recording there (labels from the method, search on full names, ReadyToRun frames green).
#
# Run by tests/run.sh; prints "ok    svg/NAME", "FAIL  svg/NAME: why" (with details indented) or
# "skip  svg/NAME: why".
#
#   PERFCONV, FIXTURES   as for tests/run.sh
#   FILTERS="w1 w2"      only cases whose name contains one of the words
#   SVG_SCREENSHOT=FILE  where the Chromium test saves its screenshot (default build/svg-chromium.png)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" svg
SHOT=${SVG_SCREENSHOT:-build/svg-chromium.png}
CHECK=$top/tests/svg_check.py
need_perfconv svg
need_python svg

# pc OUT ARGS...: run perfconv -q with ARGS writing OUT; its stderr goes to $TMP/err, status to $rc.
pc() {
	local out=$1
	shift
	rm -f "$out"
	"$PERFCONV" -q "$@" -o "$out" 2>"$TMP/err" </dev/null
	rc=$?
}

# by_value NAME MINWIDTH KINDS -- ARGS...: the SVG of ARGS (with --minwidth MINWIDTH when it is not
# "-") and the SVG of ARGS --minwidth 0 against the folded output of ARGS.  KINDS=1 also checks the
# colors against the frame kinds of the folded output of ARGS --all (JIT_NAMES: see svg_check.py).
by_value() {
	local name=$1 mw=$2 kinds=$3 mwargs=() cargs=()
	shift 4
	selected "$name" || return 0
	pc "$TMP/f.folded" "$@"
	if [ "$rc" != 0 ]; then
		fail "$name" "folded conversion: exit status $rc" "$TMP/err"
		return
	fi
	if [ "$kinds" = 1 ]; then
		pc "$TMP/fa.folded" "$@" --all
		cargs=(--kinds "$TMP/fa.folded")
		[ -n "${JIT_NAMES-}" ] && cargs+=(--jit-names "$JIT_NAMES")
	fi
	[ "$mw" != - ] && mwargs=(--minwidth "$mw")
	pc "$TMP/f.svg" "$@" "${mwargs[@]}"
	if [ "$rc" != 0 ] || [ ! -s "$TMP/f.svg" ]; then
		fail "$name" "exit status $rc, output $([ -s "$TMP/f.svg" ] && echo written || echo missing)" "$TMP/err"
		return
	fi
	pc "$TMP/f0.svg" "$@" --minwidth 0
	if [ "$rc" != 0 ] || [ ! -s "$TMP/f0.svg" ]; then
		fail "$name" "with --minwidth 0: exit status $rc" "$TMP/err"
		return
	fi
	if python3 "$CHECK" "$TMP/f.folded" "${cargs[@]}" "${mwargs[@]}" "$TMP/f.svg" --minwidth 0 "$TMP/f0.svg" \
		>"$TMP/check" 2>&1; then
		pass "$name"
	else
		fail "$name" "the SVG does not show the folded profile" "$TMP/check"
	fi
}

# ---------------------------------------------------------------------------------------------------
# Every fixture, by value, with the colors checked against the frame kinds.
for dir in "$FIX"/*/; do
	dir=${dir%/}
	fixture_or_skip "$dir" || continue
	# stackcollapse marks perf-map frames _[j], not perf inject's jitted-*.so: name those
	JIT_NAMES=
	[ "$fx" = node-jitdump ] && JIT_NAMES='^(JS|Builtin|BytecodeHandler|Bytecode|Stub|RegExp):'
	# .NET methods from jitted-*.so name their assembly: "void [System.Private.CoreLib] System.X::Y"
	[ "$fx" = dotnet-jitdump ] && JIT_NAMES='\[[A-Za-z][A-Za-z0-9_.]*\] |^stub<|^IL_STUB|^dynamicClass'
	by_value "svg/$fx" - 1 -- "${args[@]}"
done
JIT_NAMES=

FP=$FIX/fp-callgraph
S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms")
NODE=(-i "$FIX/node-perf-basic-prof/perf.data" "${S[@]}" --map-dir "$FIX/node-perf-basic-prof/maps")
by_value svg/tid - 0 -- -i "$FIX/mt-threads/perf.data" "${S[@]}" --tid
by_value svg/pid - 0 -- -i "$FIX/mt-threads/perf.data" "${S[@]}" --pid
by_value svg/event - 0 -- -i "$FIX/multi-event/perf.data" "${S[@]}" --event task-clock
by_value svg/addrs - 1 -- "${NODE[@]}" --addrs
by_value svg/inverted - 1 -- "${NODE[@]}" --inverted
by_value svg/minwidth-px 5 0 -- "${NODE[@]}"
by_value svg/minwidth-pct 2.5% 0 -- "${NODE[@]}"
by_value svg/width - 0 -- "${NODE[@]}" --width 640

# No sample of the event asked for: an empty folded file, and an SVG that says so.
by_value svg/no-samples - 0 -- -i "$FP/perf.data" "${S[@]}" --event no-such-event
if selected svg/no-samples; then
	pc "$TMP/empty.svg" -i "$FP/perf.data" "${S[@]}" --event no-such-event
	if [ "$rc" = 0 ] && grep -q '>No samples<' "$TMP/empty.svg" && ! grep -q '<g><title>' "$TMP/empty.svg"; then
		pass svg/no-samples/message
	else
		fail svg/no-samples/message "exit status $rc; expected an SVG without frames that says 'No samples'" "$TMP/err"
	fi
fi

# The checker must be able to fail: one count changed in a good SVG.
if selected svg/check-fails; then
	pc "$TMP/good.svg" -i "$FP/perf.data" "${S[@]}"
	pc "$TMP/good.folded" -i "$FP/perf.data" "${S[@]}"
	python3 - "$TMP/good.svg" "$TMP/bad.svg" <<'EOF'
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
# the last frame's count, one more
last = s.rfind("<title>")
m = re.compile(r" \(([\d,]+) samples").search(s, last)
n = int(m.group(1).replace(",", "")) + 1
open(sys.argv[2], "w", encoding="utf-8").write(s[:m.start(1)] + "{:,}".format(n) + s[m.end(1):])
EOF
	if python3 "$CHECK" "$TMP/good.folded" "$TMP/good.svg" >/dev/null 2>&1 &&
		! python3 "$CHECK" "$TMP/good.folded" "$TMP/bad.svg" >"$TMP/check" 2>&1 && grep -q 'path' "$TMP/check"; then
		pass svg/check-fails
	else
		fail svg/check-fails "svg_check.py did not catch a changed count" "$TMP/check"
	fi
fi

# ---------------------------------------------------------------------------------------------------
# The height follows the frames drawn: frames --minwidth leaves out do not count (flamegraph.pl
# takes the depth over the frames it keeps), so the deepest frame drawn is in the top row, with
# no empty rows above it.  dotnet-perfmap-all has one 128-deep stack 1.7 px wide: drawn at the
# default --minwidth, left out at 2 px and 5%, alone and in a --diff graph.
if selected svg/height-drawn; then
	PA=$FIX/dotnet-perfmap-all/perf.data
	bad=
	for args in "--minwidth 0.1" "--minwidth 2" "--minwidth 5%" "--diff $PA --minwidth 2" "--diff $PA --minwidth 0.1"; do
		# shellcheck disable=SC2086
		pc "$TMP/h.svg" -i "$PA" $args
		got=$(python3 -c '
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
ys = [float(y) for y in re.findall(r"</title><rect x=\"[\d.]+\" y=\"([\d.]+)\"", s)]
h = int(re.search(r"<svg [^>]*height=\"(\d+)\"", s).group(1))
print("%d %g" % (h, min(ys)) if ys else "none")' "$TMP/h.svg" 2>&1)
		[ "$rc" = 0 ] && [ "${got#* }" = 37 ] || bad="${bad:-$args: exit $rc, height and top frame '$got': the top row (y=37) must hold a frame}"
		echo "$args: $got" >>"$TMP/heights"
	done
	h1=$(sed -n 's/^--minwidth 0.1: \([0-9]*\) .*/\1/p' "$TMP/heights")
	h2=$(sed -n 's/^--minwidth 2: \([0-9]*\) .*/\1/p' "$TMP/heights")
	[ -n "$h1" ] && [ -n "$h2" ] && [ "$h2" -lt "$h1" ] || bad="${bad:---minwidth 2 (the deep stack left out) is not lower than 0.1 ($h2, $h1)}"
	if [ -z "$bad" ]; then pass svg/height-drawn; else fail svg/height-drawn "$bad" "$TMP/heights"; fi
fi

if selected svg/deterministic; then
	pc "$TMP/a.svg" -i "$FIX/cpu-systemwide/perf.data" "${S[@]}"
	pc "$TMP/b.svg" -i "$FIX/cpu-systemwide/perf.data" "${S[@]}"
	if [ "$rc" = 0 ] && [ -s "$TMP/a.svg" ] && cmp -s "$TMP/a.svg" "$TMP/b.svg"; then
		pass svg/deterministic
	else
		cmp "$TMP/a.svg" "$TMP/b.svg" >"$TMP/cmp" 2>&1
		fail svg/deterministic "two conversions of the same input differ (exit status $rc)" "$TMP/cmp"
	fi
fi

# --inverted: roots at the top, titled "Icicle Graph"; --title is escaped; --width sets the size.
if selected svg/layout; then
	pc "$TMP/i.svg" "${NODE[@]}" --inverted
	pc "$TMP/t.svg" "${NODE[@]}" --title 'a <b> & "c" '\''d'\''' --width 640
	python3 - "$TMP/i.svg" "$TMP/t.svg" >"$TMP/check" 2>&1 <<'EOF'
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
bad = []
def frames(p):
    r = ET.parse(p).getroot()
    return r, [g.find(NS + "rect") for g in r.find(".//%sg[@id='frames']" % NS)]
r, fr = frames(sys.argv[1])
title = r.find(".//%stext[@id='title']" % NS).text
if title != "Icicle Graph":
    bad.append("inverted title %r" % title)
ys = [float(x.get("y")) for x in fr]
if ys[0] != 36 or ys[0] != min(ys):
    bad.append("inverted: the root is at y=%s, not at the top (36); min %s" % (ys[0], min(ys)))
r, fr = frames(sys.argv[2])
title = r.find(".//%stext[@id='title']" % NS).text
if title != 'a <b> & "c" \'d\'':
    bad.append("--title gave %r" % title)
if r.get("width") != "640" or fr[0].get("width") != "620.0":
    bad.append("--width 640: svg width %s, root width %s" % (r.get("width"), fr[0].get("width")))
ys = [float(x.get("y")) for x in fr]
if ys[0] != max(ys):
    bad.append("flame: the root is not at the bottom")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
	if [ $? = 0 ]; then
		pass svg/layout
	else
		fail svg/layout "--inverted, --title or --width" "$TMP/check"
	fi
fi

# Bad option values: usage error (2), the option named, no output file.
for bad in "--width abc" "--width 10" "--width 1200px" "--minwidth -1" "--minwidth x" "--minwidth 200%"; do
	name="svg/bad-option/${bad// /=}"
	selected "$name" || continue
	# shellcheck disable=SC2086
	pc "$TMP/bad.svg" -i "$FP/perf.data" "${S[@]}" $bad
	if [ "$rc" = 2 ] && grep -q -- "${bad%% *}" "$TMP/err" && [ ! -e "$TMP/bad.svg" ]; then
		pass "$name"
	else
		fail "$name" "exit status $rc, expected 2 with ${bad%% *} named on stderr and no output" "$TMP/err"
	fi
done

# Hostile names: a copy of the node perf map whose names carry markup, quotes, bytes that are not
# UTF-8, a control character and great length.  The SVG must stay well-formed and show them.
if selected svg/hostile-names; then
	mkdir -p "$TMP/maps"
	for m in "$FIX"/node-perf-basic-prof/maps/*.map; do
		python3 - "$m" "$TMP/maps/$(basename "$m")" <<'EOF'
import sys
out = open(sys.argv[2], "wb")
for i, line in enumerate(open(sys.argv[1], "rb")):
    start, size, name = line.rstrip(b"\n").split(b" ", 2)
    extra = [b"<&>]]>", b"\xff\xfe", b"\x01\x7f", b"\xe2\x82", b"&amp;", b"\xc3\xa9t\xc3\xa9", b"x" * 300][i % 7]
    out.write(b"%s %s %s%s%s\n" % (start, size, extra, name, extra))
EOF
	done
	by_value svg/hostile-names - 0 -- -i "$FIX/node-perf-basic-prof/perf.data" "${S[@]}" --map-dir "$TMP/maps"
fi

if selected svg/stdout; then
	rm -f "$TMP/out"
	"$PERFCONV" -q -i "$FP/perf.data" "${S[@]}" -f svg -o - >"$TMP/out" 2>"$TMP/err"
	rc=$?
	pc "$TMP/file.svg" -i "$FP/perf.data" "${S[@]}"
	if [ "$rc" = 0 ] && [ -s "$TMP/out" ] && cmp -s "$TMP/out" "$TMP/file.svg"; then
		pass svg/stdout
	else
		fail svg/stdout "exit status $rc; -f svg -o - must write the same SVG as -o x.svg" "$TMP/err"
	fi
fi

# A corrupt input: exit 1, the file and the offset named, no SVG left behind.
if selected svg/corrupt-input; then
	head -c 3000 "$FP/perf.data" >"$TMP/cut.data"
	printf '\377%.0s' $(seq 64) >>"$TMP/cut.data"
	pc "$TMP/cut.svg" -i "$TMP/cut.data" "${S[@]}"
	if [ "$rc" = 1 ] && grep -q 'cut\.data' "$TMP/err" && grep -q offset "$TMP/err" &&
		[ -z "$(find "$TMP" -maxdepth 1 -name 'cut.svg*')" ]; then
		pass svg/corrupt-input
	else
		fail svg/corrupt-input "exit status $rc, expected 1 naming the file and the offset, and no output" "$TMP/err"
	fi
fi

# ---------------------------------------------------------------------------------------------------
# The page in a real browser.
if selected svg/chromium && consumers svg/chromium; then
	pc "$TMP/page.svg" "${NODE[@]}" --minwidth 0
	pc "$TMP/page.folded" "${NODE[@]}"
	mkdir -p "$(dirname "$SHOT")"
	timeout 60 python3 "$top/tests/svg_browser.py" test "$TMP/page.svg" "$TMP/page.folded" "$SHOT" '^JS:.*hot\.js' \
		>"$TMP/browser" 2>&1
	case $? in
	0) pass "svg/chromium (screenshot: $SHOT)" ;;
	77) skip svg/chromium "$(head -n 1 "$TMP/browser")" ;;
	*) fail svg/chromium "the page in headless Chromium" "$TMP/browser" ;;
	esac
fi
# A .NET recording in the browser: the labels start with the method (the script's rule is svg.c's),
# the search matches the full names the labels no longer show (the assembly and namespace), and
# ReadyToRun frames (PE images) are green as JIT code.  Its screenshot: tests/out/svg-dotnet-aspnet.png.
DA=$FIX/dotnet-aspnet
if selected svg/chromium-dotnet && consumers svg/chromium-dotnet; then
	if why=$(missing_runtime "$DA"); then
		skip svg/chromium-dotnet "$why"
	else
		DSHOT=$top/tests/out/svg-dotnet-aspnet.png
		DA_ARGS=(-i "$DA/perf.data" --symfs "$ROOT" --kallsyms "$DA/kallsyms" --map-dir "$DA/maps")
		pc "$TMP/dn.svg" "${DA_ARGS[@]}" --minwidth 0
		pc "$TMP/dn.folded" "${DA_ARGS[@]}"
		mkdir -p "$(dirname "$DSHOT")"
		timeout 60 python3 "$top/tests/svg_browser.py" test "$TMP/dn.svg" "$TMP/dn.folded" "$DSHOT" \
			'^Microsoft\.AspNetCore\.Server\.Kestrel\.Core!Microsoft\.AspNetCore\.Server\.Kestrel' >"$TMP/browser" 2>&1
		st=$?
		# a label cut from the assembly's name ("Micr..") is what this replaced
		python3 "$CHECK" "$TMP/dn.folded" "$TMP/dn.svg" >>"$TMP/browser" 2>&1 || st=1
		grep -q '>Micr\.\.<\|>Syst\.\.<' "$TMP/dn.svg" && { echo "a label cut from the assembly name" >>"$TMP/browser"; st=1; }
		case $st in
		0) pass "svg/chromium-dotnet (screenshot: tests/out/svg-dotnet-aspnet.png)" ;;
		77) skip svg/chromium-dotnet "$(head -n 1 "$TMP/browser")" ;;
		*) fail svg/chromium-dotnet "the .NET page in headless Chromium" "$TMP/browser" ;;
		esac
	fi
fi
# ReadyToRun code is managed code: without --perf-compat the frames of the framework's PE images
# (System.Private.CoreLib!...) are green, as JIT code
if selected svg/r2r-green; then
	pc "$TMP/r2r.svg" -i "$FIX/dotnet-perfmap-only/perf.data" "${S[@]}"
	got=$(python3 - "$TMP/r2r.svg" <<'PY'
import re, sys
n = green = 0
for t, r, g in re.findall(r"<title>(System\.Private\.CoreLib![^<]*)</title><rect [^>]*fill=\"rgb\((\d+),(\d+),", open(sys.argv[1]).read()):
    n += 1
    green += int(g) > int(r)
print("%d of %d" % (green, n))
PY
)
	if [ "$rc" = 0 ] && [ "${got%% of *}" = "${got##* of }" ] && [ "${got%% *}" -gt 0 ] 2>/dev/null; then
		pass svg/r2r-green
	else
		fail svg/r2r-green "System.Private.CoreLib frames green: $got (all expected)" "$TMP/err"
	fi
fi
exit 0
