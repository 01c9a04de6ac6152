#!/usr/bin/env bash
# tests/speedscope.sh - the speedscope writer against speedscope itself.
#
#   speedscope/FIXTURE/valid       every fixture converts to FILE.speedscope.json, which is UTF-8
#                                  JSON, validates against the schema shipped in the npm package
#                                  speedscope (ajv), passes the importer's semantic checks, and has
#                                  per thread the total weight of perf's folded --tid output
#                                  (expected/folded-tid.txt): tests/speedscope/check.cjs
#   speedscope/FIXTURE/by-process  the same with --speedscope-by process (and -f speedscope): one
#                                  profile per process, each the sum of its threads
#   speedscope/multi-event/task-clock, speedscope/stdin, speedscope/deterministic,
#   speedscope/hostile-names       --event, a pipe on stdin, the same bytes from the same input,
#                                  frame names with quotes, control bytes and invalid UTF-8
#   speedscope/bad-by, speedscope/unknown-event, speedscope/truncated   errors: exit status,
#                                  message, no file left behind
#   speedscope/dotnet-aspnet/active, speedscope/dotnet-aspnet/process-name   a .NET recording opens
#                                  on all its threads in one profile (check.cjs checks it is their
#                                  samples); a process is named after its main thread
#   speedscope/app/NAME            the speedscope app (npm package) in headless Debian chromium
#                                  loads the file and shows what it holds: tests/speedscope/app.cjs;
#                                  its screenshot is kept in tests/out/
#
# The npm packages (tests/npm/package.json, exact versions) are installed with `npm ci` into
# tests/npm/node_modules on first use.  Without node/npm, or when the install fails, the cases
# that need them are skipped with a message; without chromium (scripts/install-deps.sh --test)
# the app cases are.  Run by tests/run.sh; prints its lines ("ok", "FAIL", "skip").
#
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2"  only cases whose name has a word
#   CHROMIUM=/usr/bin/chromium   the browser;  SPEEDSCOPE_SHOTS=dir  where screenshots go
#   SPEEDSCOPE_APP=0     skip the app cases (they take about 10 to 30 s)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" speedscope
NPM_DIR=$top/tests/npm
NM=$NPM_DIR/node_modules
SHOTS=${SPEEDSCOPE_SHOTS:-$top/tests/out}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
need_perfconv speedscope

# The npm packages: installed once, again when package-lock.json changes.
tools=
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	tools="node and npm are needed (the machine's Node.js)"
elif [ ! -f "$NM/.package-lock.json" ] || [ "$NPM_DIR/package-lock.json" -nt "$NM/.package-lock.json" ]; then
	if ! (cd "$NPM_DIR" && npm ci --no-audit --no-fund --ignore-scripts) >"$TMP/npm.log" 2>&1 ||
		[ ! -f "$NM/speedscope/dist/release/file-format-schema.json" ]; then
		tools="'npm ci' in tests/npm failed: $(grep -m1 -i 'err' "$TMP/npm.log")"
		rm -rf "$NM"
	fi
fi

# check NAME FILE ARGS...: queue FILE (a conversion that exited $rc) for tests/speedscope/check.cjs,
# which checks every queued file in one node process (run_checks).
: >"$TMP/jobs"
check() {
	local name=$1 file=$2
	shift 2
	if [ "$rc" != 0 ] || [ ! -s "$file" ]; then
		fail "$name" "exit status $rc, output $([ -s "$file" ] && echo written || echo missing)" "$TMP/case/err"
	elif [ -n "$tools" ]; then
		skip "$name" "$tools"
	else
		(IFS=$'\t' && echo "$name"$'\t'"$file"$'\t'"$*") >>"$TMP/jobs"
	fi
}
run_checks() {
	[ -s "$TMP/jobs" ] || return 0
	node tests/speedscope/check.cjs "$NM" --batch "$TMP/jobs" 2>&1 ||
		fail speedscope/check "tests/speedscope/check.cjs exited with status $?"
	: >"$TMP/jobs"
}

# ---------------------------------------------------------------------------------------------------
S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms")
C=$TMP/case
for dir in "$FIX"/*/; do
	dir=${dir%/}
	fixture_or_skip "$dir" || continue
	# cpu-clock and task-clock periods are nanoseconds; other events count
	unit=none
	grep -m1 '^# event : name = ' "$exp/header.txt" | grep -qE 'name = (cpu|task)-clock' && unit=nanoseconds
	# stackcollapse-perf.pl sums periods, except when perf script prints no time: then it counts
	# samples, and perf script's own periods are the reference
	folded=()
	if [ -f "$exp/perf-script-nocpu-notime.txt.xz" ]; then
		xz -dc "$exp/perf-script-nocpu-notime.txt.xz" >"$TMP/$fx.script.txt"
		folded+=(--script "$TMP/$fx.script.txt")
	else
		[ -f "$exp/folded-tid.txt" ] && folded+=(--folded-tid "$exp/folded-tid.txt")
		[ -f "$exp/folded.txt" ] && folded+=(--folded "$exp/folded.txt")
	fi

	if selected "speedscope/$fx/valid" || selected "speedscope/$fx/by-process"; then
		run_pc "$C" -q "${args[@]}" -o "$TMP/$fx.speedscope.json"
		selected "speedscope/$fx/valid" &&
			check "speedscope/$fx/valid" "$TMP/$fx.speedscope.json" --name "$(basename "$in")" --unit "$unit" "${folded[@]}"
		if selected "speedscope/$fx/by-process"; then
			[ -s "$TMP/$fx.speedscope.json" ] || run_pc "$C" -q "${args[@]}" -o "$TMP/$fx.speedscope.json"
			run_pc "$C" -q "${args[@]}" -f speedscope --speedscope-by process -o "$TMP/$fx.process.json"
			check "speedscope/$fx/by-process" "$TMP/$fx.process.json" --by process --unit "$unit" \
				--threads-of "$TMP/$fx.speedscope.json"
		fi
	fi
	if [ -f "$exp/folded-task-clock.txt" ] && selected "speedscope/$fx/task-clock"; then
		run_pc "$C" -q "${args[@]}" --event task-clock -o "$TMP/$fx.task.speedscope.json"
		check "speedscope/$fx/task-clock" "$TMP/$fx.task.speedscope.json" --unit nanoseconds \
			--folded "$exp/folded-task-clock.txt"
	fi
done

# A .NET recording: the viewer opens on all the threads of the process (activeProfileIndex 0,
# "ProbeWeb (14802) all threads", whose requests ran on four thread-pool workers: the busiest,
# 14905, has 30% of the weight), the threads' own profiles after it as before; and
# --speedscope-by process names the process after its main thread (pid == tid: "ProbeWeb"), also
# when --tid leaves only worker threads' samples (it was ".NET TP Worker (14802)").
DA=$FIX/dotnet-aspnet
DA_ARGS=(-i "$DA/perf.data" --symfs "$ROOT" --kallsyms "$DA/kallsyms" --map-dir "$DA/maps")
if [ -d "$DA" ] && ! why=$(missing_runtime "$DA"); then
	if selected speedscope/dotnet-aspnet/active; then
		run_pc "$C" -q "${DA_ARGS[@]}" -o "$TMP/dotnet-aspnet.speedscope.json"
		got=$(python3 - "$TMP/dotnet-aspnet.speedscope.json" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
P = d["profiles"]
a = d["activeProfileIndex"]
# the sum of the thread profiles of the opened one's process
pid = P[a]["name"].rsplit("(", 1)[1].split(")")[0]
threads = sum(p["endValue"] for p in P if p["name"].endswith(")") and p["name"].rsplit("(", 1)[1].startswith(pid + "/"))
print("%s %d/%d %s" % (P[a]["name"], a + 1, len(P), "its threads' total" if P[a]["endValue"] == threads else
      "not its threads' total: %d, %d" % (P[a]["endValue"], threads)))
PY
)
		want="ProbeWeb (14802) all threads 1/18 its threads' total"
		if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
			pass "speedscope/dotnet-aspnet/active (opens on $got)"
		else
			fail speedscope/dotnet-aspnet/active "opens on '$got', expected '$want'" "$C/err"
		fi
	fi
	if selected speedscope/dotnet-aspnet/process-name; then
		names=
		for t in "" --tid=14905,14850; do
			run_pc "$C" -q "${DA_ARGS[@]}" ${t:+"$t"} --speedscope-by process -f speedscope -o "$TMP/da-p.json"
			names+="$(python3 -c 'import json,sys; print(",".join(p["name"] for p in json.load(open(sys.argv[1]))["profiles"]))' "$TMP/da-p.json" 2>&1);"
		done
		if [ "$names" = "ProbeWeb (14802);ProbeWeb (14802);" ]; then
			pass speedscope/dotnet-aspnet/process-name
		else
			fail speedscope/dotnet-aspnet/process-name "profiles named '$names', expected 'ProbeWeb (14802)' both times" "$C/err"
		fi
	fi
elif [ ! -d "$DA" ]; then
	selected speedscope/dotnet-aspnet && fail speedscope/dotnet-aspnet "no fixture $DA"
elif selected speedscope/dotnet-aspnet; then
	skip speedscope/dotnet-aspnet/active "$why"
	skip speedscope/dotnet-aspnet/process-name "$why"
fi

# A pipe-mode stream on stdin, written to stdout: the name is "stdin".
PM=$FIX/pipe-mode
if selected speedscope/stdin && [ -f "$PM/pipe.data" ]; then
	rm -rf "$C" && mkdir -p "$C"
	cat "$PM/pipe.data" | "$PERFCONV" -q -i - "${S[@]}" -f speedscope -o - >"$TMP/stdin.json" 2>"$C/err"
	rc=$?
	check speedscope/stdin "$TMP/stdin.json" --name stdin --folded-tid "$PM/expected/folded-tid.txt"
fi

# The same input gives the same bytes, whatever path names it and wherever the output goes.
if selected speedscope/deterministic; then
	why=
	for fx in mt-threads cpu-systemwide; do
		run_pc "$C" -q -i "$FIX/$fx/perf.data" "${S[@]}" -o "$TMP/a.speedscope.json"
		cp "$FIX/$fx/perf.data" "$TMP/perf.data"
		run_pc "$C" -q -i "$TMP/perf.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms" -f speedscope -o -
		if [ ! -s "$TMP/a.speedscope.json" ] || ! cmp -s "$TMP/a.speedscope.json" "$C/out"; then
			why="$fx: two conversions differ"
			break
		fi
	done
	if [ -z "$why" ]; then pass speedscope/deterministic; else fail speedscope/deterministic "$why"; fi
fi

# Frame names are untrusted bytes: a perf map whose names hold quotes, backslashes, control bytes,
# invalid UTF-8 and U+2028 must still give valid UTF-8 JSON, with each bad byte as U+FFFD.
NB=$FIX/node-perf-basic-prof
if [ -d "$NB/maps" ] && { selected speedscope/hostile-names || selected speedscope/app/hostile-names; }; then
	mkdir -p "$TMP/maps"
	for m in "$NB"/maps/*.map; do
		# "START SIZE name" -> "START SIZE name" + the suffix (on every line: the sampled ones get it)
		python3 - "$m" "$TMP/maps/$(basename "$m")" <<'EOF'
import sys
suffix = b' "q" back\\slash \x01\x1f tab\t bad\xff\xc3( caf\xc3\xa9 \xe2\x80\xa8 end'
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "wb") as o:
    for line in f:
        o.write(line.rstrip(b"\n") + suffix + b"\n")
EOF
	done
	run_pc "$C" -q -i "$NB/perf.data" "${S[@]}" --map-dir "$TMP/maps" -o "$TMP/hostile.speedscope.json"
	if selected speedscope/hostile-names; then
		# the suffix as it must read: each bad byte one U+FFFD, the rest as it was
		want=$(printf '%s' ' "q" back\slash '$'\x01\x1f'' tab'$'\t'' bad'$'\xef\xbf\xbd\xef\xbf\xbd''( caf'$'\xc3\xa9'' '$'\xe2\x80\xa8'' end' |
			od -An -tx1 | tr -d ' \n')
		check speedscope/hostile-names "$TMP/hostile.speedscope.json" --folded-tid "$NB/expected/folded-tid.txt" \
			--frame-suffix-hex "$want"
	fi
fi
run_checks

# Errors: a bad --speedscope-by is a usage error; an event that is not there, and a truncated
# input, fail with a message and leave no file.
if selected speedscope/bad-by; then
	run_pc "$C" -q -i "$FIX/fp-callgraph/perf.data" --speedscope-by fibers -o "$C/x.speedscope.json"
	if [ "$rc" = 2 ] && grep -q fibers "$C/err" && [ ! -e "$C/x.speedscope.json" ]; then
		pass speedscope/bad-by
	else
		fail speedscope/bad-by "exit status $rc, expected 2 with 'fibers' named on stderr and no file" "$C/err"
	fi
fi
if selected speedscope/unknown-event; then
	run_pc "$C" -q -i "$FIX/fp-callgraph/perf.data" "${S[@]}" --event no-such-event -o "$C/x.speedscope.json"
	if [ "$rc" = 1 ] && grep -q "no-such-event" "$C/err" && [ -z "$(ls "$C" | grep -v '^out$\|^err$')" ]; then
		pass speedscope/unknown-event
	else
		fail speedscope/unknown-event "exit status $rc, expected 1, the event named and no file left" "$C/err"
	fi
fi
if selected speedscope/truncated; then
	in=$FIX/fp-callgraph/perf.data
	head -c $(($(stat -c %s "$in") / 2)) "$in" >"$TMP/cut.data"
	run_pc "$C" -q -i "$TMP/cut.data" "${S[@]}" -o "$C/x.speedscope.json"
	if [ "$rc" = 1 ] && grep -q 'cut\.data' "$C/err" && grep -q offset "$C/err" &&
		[ -z "$(ls "$C" | grep -v '^out$\|^err$')" ]; then
		pass speedscope/truncated
	else
		fail speedscope/truncated "exit status $rc, expected 1, the file and offset named, no file left" "$C/err"
	fi
fi

# ---------------------------------------------------------------------------------------------------
# The real app: speedscope's bundle in headless chromium loads the files and shows their profiles.
app=()
for name in mt-threads hostile-names dotnet-aspnet; do
	selected "speedscope/app/$name" || continue
	f=$TMP/$name.speedscope.json
	[ "$name" = hostile-names ] && f=$TMP/hostile.speedscope.json
	if [ "$name" = dotnet-aspnet ] && [ ! -s "$f" ]; then
		# the app opens on all the threads of ProbeWeb: "(1/18)" in its toolbar (app.cjs)
		run_pc "$C" -q "${DA_ARGS[@]}" -o "$f"
	fi
	if [ -n "$tools" ]; then
		skip "speedscope/app/$name" "$tools"
		continue
	fi
	if [ "${SPEEDSCOPE_APP:-1}" = 0 ]; then
		skip "speedscope/app/$name" "SPEEDSCOPE_APP=0"
		continue
	fi
	consumers "speedscope/app/$name" || continue
	if [ ! -x "$CHROMIUM" ]; then
		skip "speedscope/app/$name" "no $CHROMIUM (scripts/install-deps.sh --test installs chromium)"
		continue
	fi
	if [ ! -s "$f" ]; then
		run_pc "$C" -q -i "$FIX/$name/perf.data" "${S[@]}" -o "$f"
		[ -s "$f" ] || { fail "speedscope/app/$name" "cannot convert $name" "$C/err"; continue; }
	fi
	mkdir -p "$SHOTS"
	app+=("speedscope/app/$name" "$f" "$SHOTS/speedscope-$name.png")
done
if [ "${#app[@]}" -gt 0 ]; then
	timeout 180 node tests/speedscope/app.cjs "$NM" "${app[@]}" 2>&1 | sed "s|; screenshot $top/|; screenshot |"
	[ "${PIPESTATUS[0]}" = 124 ] && fail speedscope/app "tests/speedscope/app.cjs was stopped after 180 s"
fi
exit 0
