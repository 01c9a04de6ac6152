#!/usr/bin/env bash
# tests/firefox.sh - the Firefox Profiler writer (-f firefox) against the profiler itself.
#
#   firefox/FIXTURE/valid      every fixture converts to FILE.fxprof.json, which is UTF-8 JSON in
#                              the processed format's version 62 (tables, indices, prefixes, times:
#                              tests/firefox_check.py file), and has per thread the total weight
#                              of perf's folded --tid output (expected/folded-tid.txt)
#   firefox/off-cpu            --off-cpu on tracepoint-sched-switch: weights in ms, per thread
#                              the totals of the folded --off-cpu --tid output
#   firefox/gzip, firefox/deterministic, firefox/truncated   a .gz name gives the same bytes
#                              compressed; two conversions give the same bytes; a cut recording
#                              fails naming the file and offset and leaves no file behind
#   firefox/markers            a recording made here with a one-page ring buffer (perf record -m 1)
#                              has LOST and LOST_SAMPLES records: as many PerfLost markers as
#                              perfconv --stats counts records (skipped where perf cannot record)
#   firefox/runtime-markers    dotnet-events with --events (perf record -k mono): as many GC markers
#                              as -f runtime's pauses, the 13 exceptions of truth.txt by type, the
#                              JIT of Spin's instantiations, every marker inside the samples' time;
#                              a recording without -k mono: no runtime marker, and a warning why
#   firefox/app/NAME           the Firefox Profiler (a production build of its repository,
#                              scripts/firefox-profiler.sh) in headless Debian chromium opens the
#                              file from a local server (/from-url/): no error, the file's threads
#                              and categories, per thread the call tree's total equal to the folded
#                              --tid totals and its functions by self time equal to perfconv -f
#                              top --tid's, the markers (tests/firefox/app.cjs, firefox_check.py
#                              app); the load time is in the ok line, screenshots in tests/out/;
#                              dotnet-runtime (dotnet-events with --events): its marker table,
#                              searched for GC, lists every GC marker (firefox-dotnet-runtime-markers.png)
#
# The app cases need the profiler's build (scripts/firefox-profiler.sh makes it once, into
# $XDG_CACHE_HOME/perfconv/firefox-profiler; without it they are skipped and say so), chromium,
# and playwright-core from tests/npm (installed by tests/speedscope.sh's npm ci, done here too).
#
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2"  only cases whose name has a word
#   CHROMIUM=/usr/bin/chromium   the browser;  FIREFOX_SHOTS=dir  where screenshots go
#   FIREFOX_APP=0        skip the app cases;  FIREFOX_EXTRA=FILE.data  also load this recording
# the profiler's build is in this user's cache, which lib.sh's empty HOME hides
FX_CACHE=${XDG_CACHE_HOME:-${TESTS_USER_HOME:-${HOME:-/root}}/.cache}
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" firefox
need_perfconv firefox
need_python firefox
NPM_DIR=$top/tests/npm
NM=$NPM_DIR/node_modules
SHOTS=${FIREFOX_SHOTS:-$top/tests/out}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
C=$TMP/case
CHECK=(python3 tests/firefox_check.py)

# check_file NAME FILE [--folded-tid F]: a conversion that exited $rc, checked by firefox_check.py
check_file() {
	local name=$1 file=$2
	shift 2
	if [ "$rc" != 0 ] || [ ! -s "$file" ]; then
		fail "$name" "exit status $rc, output $([ -s "$file" ] && echo written || echo missing)" "$C/err"
	elif "${CHECK[@]}" file "$file" "$@" >"$TMP/check.out" 2>&1; then
		pass "$name"
	else
		fail "$name" "firefox_check.py file" "$TMP/check.out"
	fi
}

for dir in "$FIX"/*/; do
	dir=${dir%/}
	fixture_or_skip "$dir" || continue
	selected "firefox/$fx/valid" || continue
	run_pc "$C" -q "${args[@]}" -o "$TMP/$fx.fxprof.json"
	# perf script without times: stackcollapse-perf.pl counted samples there, the profile weighs periods
	if [ -f "$exp/folded-tid.txt" ] && [ ! -f "$exp/perf-script-nocpu-notime.txt.xz" ]; then
		check_file "firefox/$fx/valid" "$TMP/$fx.fxprof.json" --folded-tid "$exp/folded-tid.txt"
	else
		check_file "firefox/$fx/valid" "$TMP/$fx.fxprof.json"
	fi
done

MT=$FIX/mt-threads
MT_ARGS=(-i "$MT/perf.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms")

if selected firefox/off-cpu; then
	TS=(-i "$FIX/tracepoint-sched-switch/perf.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms" --off-cpu)
	run_pc "$C" -q "${TS[@]}" --tid -o "$TMP/offcpu.folded"
	run_pc "$C" -q "${TS[@]}" -o "$TMP/offcpu.fxprof.json"
	if [ "$rc" = 0 ] && ! grep -q '"weightType":"tracing-ms"' "$TMP/offcpu.fxprof.json"; then
		fail firefox/off-cpu "the weights are not in ms (tracing-ms)"
	else
		check_file firefox/off-cpu "$TMP/offcpu.fxprof.json" --folded-tid "$TMP/offcpu.folded"
	fi
fi

if selected firefox/gzip; then
	run_pc "$C" -q "${MT_ARGS[@]}" -o "$TMP/mt.fxprof.json"
	run_pc "$C" -q "${MT_ARGS[@]}" -o "$TMP/mt.fxprof.json.gz"
	if [ "$rc" = 0 ] && [ "$(head -c2 "$TMP/mt.fxprof.json.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] &&
		gzip -dc "$TMP/mt.fxprof.json.gz" | cmp -s - "$TMP/mt.fxprof.json"; then
		pass firefox/gzip
	else
		fail firefox/gzip "exit status $rc, or not the plain file's bytes gzip-compressed" "$C/err"
	fi
fi

if selected firefox/deterministic; then
	run_pc "$C" -q "${MT_ARGS[@]}" -f firefox -o "$TMP/d1.json"
	run_pc "$C" -q "${MT_ARGS[@]}" -f firefox -o "$TMP/d2.json"
	if [ "$rc" = 0 ] && cmp -s "$TMP/d1.json" "$TMP/d2.json"; then
		pass firefox/deterministic
	else
		fail firefox/deterministic "two conversions differ"
	fi
fi

if selected firefox/truncated; then
	size=$(stat -c %s "$MT/perf.data")
	head -c $((size / 2)) "$MT/perf.data" >"$TMP/cut.data"
	run_pc "$C" -q -i "$TMP/cut.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms" -o "$TMP/cut.fxprof.json"
	if [ "$rc" != 0 ] && [ ! -e "$TMP/cut.fxprof.json" ] && grep -q "cut.data.*offset\|offset.*cut.data" "$C/err" &&
		[ -z "$(find "$TMP" -maxdepth 1 -name '*cut.fxprof*')" ]; then
		pass firefox/truncated
	else
		fail firefox/truncated "exit status $rc; a file left behind, or no file name and offset in the message" "$C/err"
	fi
fi

# A recording with lost events: a one-page ring buffer for a fast sampler and four busy processes.
LOST=
if selected firefox/markers || selected firefox/app/markers; then
	if perf record -q -m 1 -F 20000 -g -o "$TMP/lost.data" -- sh -c \
		'for i in 1 2 3 4; do dd if=/dev/zero bs=1k count=200000 2>/dev/null | md5sum >/dev/null & done; wait' \
		>"$TMP/lost.log" 2>&1 && [ -s "$TMP/lost.data" ]; then
		LOST=$TMP/lost.data
	fi
fi
if selected firefox/markers; then
	if [ -z "$LOST" ]; then
		skip firefox/markers "perf record cannot record here: $(head -c 200 "$TMP/lost.log" 2>/dev/null)"
	else
		run_pc "$C" --stats -i "$LOST"
		nlost=$(awk '/ LOST(_SAMPLES)? events:/ && !seen[$1]++ { n += $3 } END { print n + 0 }' "$C/out")
		run_pc "$C" -q -i "$LOST" -o "$TMP/lost.fxprof.json"
		got=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(sum(1 for t in p["threads"] for d in t["markers"]["data"] if d and d["type"] == "PerfLost"))' "$TMP/lost.fxprof.json" 2>&1)
		if [ "$nlost" = 0 ]; then
			skip firefox/markers "the recording lost nothing this time"
		elif [ "$got" != "$nlost" ]; then
			fail firefox/markers "$got PerfLost markers, perfconv --stats counts $nlost LOST and LOST_SAMPLES records"
		else
			run_pc "$C" -q -i "$LOST" --tid -o "$TMP/lost.folded"
			check_file firefox/markers "$TMP/lost.fxprof.json" --folded-tid "$TMP/lost.folded"
		fi
	fi
fi

EV=$FIX/dotnet-events
EV_ARGS=(-i "$EV/perf.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms")
if selected firefox/runtime-markers; then
	run_pc "$C" -q "${EV_ARGS[@]}" --events "$EV/app.nettrace" -f runtime
	pauses=$(awk '$1 == "pauses" { print $2 + 0 }' "$C/out")
	run_pc "$C" -q "${EV_ARGS[@]}" --events "$EV/app.nettrace" -o "$TMP/ev.fxprof.json"
	erc=$rc
	run_pc "$C" "${MT_ARGS[@]}" --events "$EV/app.nettrace" -o "$TMP/ev-nomono.fxprof.json"
	if ! got=$(python3 - "$TMP/ev.fxprof.json" "$EV/truth.txt" "${pauses:-0}" "$TMP/ev-nomono.fxprof.json" 2>&1 <<'PY'
import collections, json, sys
p = json.load(open(sys.argv[1]))
S = p["shared"]["stringArray"]
truth = collections.Counter()
for line in open(sys.argv[2]):
    w = line.split()
    if w[1] == "exceptions":
        truth[w[2]] = int(w[3])
last = 0
for t in p["threads"]:
    s = 0
    for d in t["samples"]["timeDeltas"]:
        s += d
    last = max(last, s)
n, exc, spin, bad = collections.Counter(), collections.Counter(), 0, []
for t in p["threads"]:
    m = t["markers"]
    for i in range(m["length"]):
        name, d, a, b = S[m["name"][i]], m["data"][i] or {}, m["startTime"][i], m["endTime"][i]
        n[name] += 1
        if d.get("type") == "DotNetException":
            exc[d["exception"]] += 1
        if d.get("type") == "DotNetJit" and "Spin" in d["method"]:
            spin += 1
        if not (0 <= a <= last) or (b is not None and not a <= b <= last) or m["phase"][i] != (b is not None):
            bad.append(f"{name} {a}..{b} outside 0..{last} or of the wrong phase")
if n["GC"] != int(sys.argv[3]):
    bad.append(f"{n['GC']} GC markers, -f runtime has {sys.argv[3]} pauses")
if exc != truth:
    bad.append(f"exceptions {dict(exc)}, truth.txt {dict(truth)}")
if spin < 12:
    bad.append(f"{spin} JIT markers of Spin, truth.txt has 12 instantiations")
q = json.load(open(sys.argv[4]))
if any(d and d.get("type", "").startswith("DotNet") for t in q["threads"] for d in t["markers"]["data"]):
    bad.append("runtime markers on a recording without -k mono")
print("; ".join(bad) if bad else f"{n['GC']} GC, {n['Exception']} exceptions, {n['JIT']} JIT ({spin} of Spin)")
sys.exit(bool(bad))
PY
	); then
		fail firefox/runtime-markers "$got"
	elif ! grep -q "not drawn as markers.*perf record -k mono" "$C/err"; then
		fail firefox/runtime-markers "no warning that a recording without -k mono gets no runtime markers" "$C/err"
	else
		rc=$erc
		check_file "firefox/runtime-markers ($got)" "$TMP/ev.fxprof.json"
	fi
fi

# ---- the profiler itself ----
apps=()
add_app() { selected "firefox/app/$1" && apps+=("$@"); }
add_app mt-threads
add_app dotnet-events
add_app dotnet-runtime
# ASP.NET Core with its perf map: named JIT frames (the screenshot in docs/firefox.png)
[ -d "$FIX/dotnet-aspnet" ] && ! missing_runtime "$FIX/dotnet-aspnet" >/dev/null && add_app dotnet-aspnet
[ -n "$LOST" ] && add_app markers
[ -n "${FIREFOX_EXTRA:-}" ] && add_app extra
[ ${#apps[@]} -gt 0 ] || exit 0
skip_apps() {
	local i
	for ((i = 0; i < ${#apps[@]}; i++)); do skip "firefox/app/${apps[i]}" "$1"; done
	exit 0
}
[ "${FIREFOX_APP:-1}" = 0 ] && skip_apps "FIREFOX_APP=0"
consumers firefox/app || exit 0
DIST=$(XDG_CACHE_HOME=$FX_CACHE scripts/firefox-profiler.sh --print-dir)/dist
[ -f "$DIST/index.html" ] && [ -f "$DIST/../.perfconv-built" ] ||
	skip_apps "no build of the Firefox Profiler in $(dirname "$DIST"): make it with scripts/firefox-profiler.sh"
[ -x "$CHROMIUM" ] || skip_apps "no chromium at $CHROMIUM (scripts/install-deps.sh --test)"
command -v node >/dev/null 2>&1 || skip_apps "node is needed"
if [ ! -d "$NM/playwright-core" ]; then
	(cd "$NPM_DIR" && npm ci --no-audit --no-fund --ignore-scripts) >"$TMP/npm.log" 2>&1 ||
		skip_apps "'npm ci' in tests/npm failed: $(grep -m1 -i 'err' "$TMP/npm.log")"
fi
mkdir -p "$SHOTS"
jobs=()
topdirs=()
for name in "${apps[@]}"; do
	case $name in
	mt-threads) a=("${MT_ARGS[@]}") ;;
	dotnet-events) a=(-i "$FIX/dotnet-events/perf.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms") ;;
	dotnet-runtime) a=("${EV_ARGS[@]}" --events "$EV/app.nettrace") ;;
	dotnet-aspnet) a=(-i "$FIX/dotnet-aspnet/perf.data" --symfs "$ROOT" --kallsyms "$FIX/dotnet-aspnet/kallsyms"
		--map-dir "$FIX/dotnet-aspnet/maps") ;;
	markers) a=(-i "$LOST") ;;
	extra) a=(-i "$FIREFOX_EXTRA") ;;
	esac
	d=$TMP/app-$name
	mkdir -p "$d/top"
	"$PERFCONV" -q "${a[@]}" -o "$d/$name.fxprof.json" 2>"$d/err" &&
		"$PERFCONV" -q "${a[@]}" -f folded --tid -o "$d/folded" 2>>"$d/err"
	# perfconv's own top functions of each thread
	for tid in $(sed -n 's/^[^;]*\/\([0-9]*\);.*/\1/p' "$d/folded" | sort -un | head -40); do
		"$PERFCONV" -q "${a[@]}" -f top --tid="$tid" --top 10 -o "$d/top/$tid.txt" 2>>"$d/err"
	done
	jobs+=("$name" "$d/$name.fxprof.json" "$SHOTS/firefox-$name.png")
done
MARKER_SEARCH=GC node tests/firefox/app.cjs "$NM" "$DIST" "$TMP/app.json" "${jobs[@]}" >"$TMP/app.log" 2>&1
for name in "${apps[@]}"; do
	d=$TMP/app-$name
	if [ ! -s "$TMP/app.json" ]; then
		fail "firefox/app/$name" "tests/firefox/app.cjs wrote nothing" "$TMP/app.log"
		continue
	fi
	# the marker table searched for GC: a row of each GC marker (its start, duration and name)
	if [ "$name" = dotnet-runtime ]; then
		ngc=$(python3 -c 'import json,sys; r=[r for r in json.load(open(sys.argv[1])) if r["name"]=="dotnet-runtime"][0]; print(sum(1 for x in r.get("markerRows", []) if x.endswith(" GC")))' "$TMP/app.json" 2>&1)
		want=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(sum(1 for t in p["threads"] for d in t["markers"]["data"] if d and d.get("type")=="DotNetGC"))' "$d/$name.fxprof.json")
		if [ "$ngc" != "$want" ] || [ "$want" = 0 ]; then
			fail "firefox/app/$name" "the marker table lists $ngc GC markers, the file has $want" "$TMP/app.log"
			continue
		fi
	fi
	if "${CHECK[@]}" app "$TMP/app.json" "$d/$name.fxprof.json" "$d/top" --folded-tid "$d/folded" >"$TMP/check.out" 2>&1; then
		info=$(python3 -c 'import json,sys; r=[r for r in json.load(open(sys.argv[1])) if r["name"]==sys.argv[2]][0]; print("loaded in %d ms, %d threads, %d markers" % (r["loadMs"], len(r["threads"]), sum(len(t["markers"]) for t in r["threads"])))' "$TMP/app.json" "$name")
		pass "firefox/app/$name ($info)"
	else
		fail "firefox/app/$name" "the profiler's view differs" "$TMP/check.out"
	fi
done
