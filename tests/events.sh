#!/usr/bin/env bash
# tests/events.sh - the .NET runtime's events (converter/events/) against another reader: TraceEvent's
# EventPipeEventSource, PerfView's own nettrace parser (tests/interop/nettrace, NuGet
# Microsoft.Diagnostics.Tracing.TraceEvent 4.0.0, cached in its .nuget/ folder), reads each nettrace of
# fixtures/dotnet-events and prints its events counted by provider, id and version, and the payload fields
# perfconv decodes, one line per event; `test_events --dump` prints the same lines from perfconv's reader.
# Both are sorted (TraceEvent orders events by time, perfconv keeps the file's order) and must be equal.
# The workload's own truth (GCs, exceptions, allocation bytes, the clock) is tests/unit/test_events.c's.
#
#   events/traceevent/app       app.nettrace (GCs, allocation ticks, JIT, exceptions, rundown)
#   events/traceevent/sampled   sampled.nettrace (allocation samples; TraceEvent 4.0.0 counts them only)
#   events/cut                  the stream cut inside its rundown: perfconv still reads every GC, says it is cut
#   events/cli                  perfconv --events: the report's GC, allocation and exception lines against the
#                               workload's truth, -o and -q, a cut stream, and the errors (exit 1, the file named)
#   events/convert/runtime      -i perf.data --events -f runtime: the report of the conversion, against the truth
#                               (GCs and induced GCs by generation, pauses, the 3:1 allocation, exceptions, JIT);
#                               under --pid-map, the process named by the recording's pid
#   events/convert/same         with --events and nothing asked of them, the same samples and stacks, frame for
#                               frame: only JIT frames the recording leaves [unknown] are named, by the stream's
#                               method events; under --perf-compat every output is the same bytes
#   events/convert/jit-names    --alloc's allocation sites named by the stream's method events (the fixture has
#                               no perf map); a recording with both names its JIT frames the same from either
#                               (tests/record.sh's record/events-names)
#   events/convert/during-gc    --during gc: the samples inside the pauses are native code (runtime, libc,
#                               kernel) far more often than those outside; refused without perf record -k mono
#   events/convert/alloc        --alloc: the allocated types at the leaves, the two sites' bytes 3:1 within 10%,
#                               in every format, --diff too; refused without --events
#   events/convert/pack         a pack made with --events converts to the same runtime, --alloc and --during gc
#                               outputs without --events, elsewhere (isolated: no fixtures, /tmp, HOME)
#   events/convert/errors       a corrupt stream or one of another process: the file and offset named, nothing
#                               written; a warning for a process the recording does not have
#
# TraceEvent names two things its own way, which the comparison maps back: the runtime's GCDynamicEvent
# (id 39) is counted under id 65524, and the EventPipe provider's ProcessInfo under its GUID.
# Skipped without dotnet or when the package cannot be restored; CONSUMERS=0 skips the TraceEvent cases.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" events
UNIT=${UNIT_DIR:-build/tests}/test_events
D=$FIX/dotnet-events

# the share, in perf-script text on stdin, of samples whose leaf is native runtime code (libcoreclr,
# libclrjit), libc or the kernel: "NATIVE ALL"
leaf_share() {
	awk '/^[^ \t]/ { want = 1; n++; next }
	     want && /^[ \t]/ { want = 0; if ($0 ~ /\((\[kernel\.kallsyms\]|.*libcoreclr\.so|.*libclrjit\.so|.*libc\.so\.6)\)$/) nat++ }
	     END { print nat + 0, n + 0 }'
}

# bytes by leaf frame of folded text on stdin: "BYTES LEAF" lines
leaf_bytes() {
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, a, ";"); s[a[k]] += n } END { for (l in s) print s[l], l }' | sort -k1,1nr
}

convert_cases() {
	local P=$D/perf.data E=$D/app.nettrace
	if selected events/convert/runtime; then
		(
			t() { sed -n "s/^truth $1 //p" "$D/truth.txt"; }
			"$PERFCONV" -q -i "$P" --events "$E" -f runtime -o "$TMP/rt.runtime.txt" || exit 1
			r=$TMP/rt.runtime.txt
			grep -q "^process $(t pid) (.*app.nettrace): .*stream complete\$" "$r" || exit 1
			grep -Eq "^GCs +$(t 'collection-count 0'): gen0 [0-9]+, gen1 [0-9]+, gen2 $(t 'collection-count 2')\$" "$r" || exit 1
			# forced GCs by the generation collected: GC.Collect(1) may collect generation 2 too
			set -- $(sed -n 's/^  induced  *\([0-9]*\): gen0 \([0-9]*\), gen1 \([0-9]*\), gen2 \([0-9]*\) .*/\1 \2 \3 \4/p' "$r")
			[ $# = 4 ] && [ "$1" = $(($(t 'gc-induced 0') + $(t 'gc-induced 1') + $(t 'gc-induced 2'))) ] &&
				[ "$2" = "$(t 'gc-induced 0')" ] && [ $(($3 + $4)) = $(($(t 'gc-induced 1') + $(t 'gc-induced 2'))) ] &&
				[ "$4" -ge "$(t 'gc-induced 2')" ] || exit 1
			grep -Eq "^pauses +$(t 'collection-count 0'): total [0-9.]+ ms, mean [0-9.]+ ms, max [0-9.]+ ms, p95 [0-9.]+ ms, [0-9.]+% of the time\$" "$r" || exit 1
			grep -Eq '^allocated +[0-9.]+ MiB in [0-9]+ allocation ticks, [0-9.]+ MiB/s$' "$r" || exit 1
			grep -Eq '^  [0-9.]+ MiB \(7[0-9]\.[0-9]%\)  System\.Int32\[\]$' "$r" || exit 1
			grep -Eq '^  [0-9.]+ MiB \(2[0-9]\.[0-9]%\)  EventsProbe\.Record$' "$r" || exit 1
			grep -Eq '^heap after GC gen0 .*, POH .*; largest total ' "$r" || exit 1
			grep -Eq '^JIT +[0-9]+ methods compiled, [0-9.]+ ms in the [0-9]+ whose end was seen$' "$r" || exit 1
			[ "$(grep -A5 '^JIT' "$r" | grep -Ec '^  [0-9.]+ ms  [^ ]')" = 5 ] || exit 1
			grep -q "^  $(t 'exceptions System.InvalidOperationException')  System.InvalidOperationException\$" "$r" || exit 1
			grep -q "^  $(t 'exceptions System.ArgumentException')  System.ArgumentException\$" "$r" || exit 1
			# each exception type's throwing frames add up to its count
			[ "$(awk '/^exceptions/ { on = 1; next } on && /^    [0-9]+  thrown in / { n += $1 } END { print n + 0 }' "$r")" = \
				$(($(t 'exceptions System.InvalidOperationException') + $(t 'exceptions System.ArgumentException'))) ] || exit 1
			# the recording's samples of the process, and those in the pauses, as --during gc keeps them
			n=$("$PERFCONV" -q -i "$P" -f perf-script --fields pid | awk -v p="$(t pid)" '$1 == p { n++ } END { print n + 0 }')
			g=$("$PERFCONV" -q -i "$P" --events "$E" --during gc -f perf-script | grep -c '^[^ 	]')
			grep -Eq "^recording +$n samples of process $(t pid) in [0-9.]+ s, $g \([0-9.]+%\) in GC pauses, which are [0-9.]+% of that time\$" "$r" || exit 1
			# the report of the conversion is the report of --events alone, and the frames that throw
			"$PERFCONV" -q --events "$E" | cmp -s - <(grep -v '^    [0-9]*  thrown in \|^recording ' "$r") || exit 1
			# a runtime in a pid namespace, laid on the recording's process (--pid-map, perfconv record):
			# the report heads with the pid its samples have
			"$PERFCONV" -q -i "$P" --events "$E" --pid-map "4242=$(t pid)" -f runtime -o "$TMP/ns.runtime.txt" || exit 1
			grep -q "^process 4242 (.*app.nettrace, pid $(t pid) in its namespace): .*stream complete\$" "$TMP/ns.runtime.txt" || exit 1
		) >"$TMP/crt.log" 2>&1
		if [ $? = 0 ]; then
			pass events/convert/runtime
		else
			fail events/convert/runtime "the runtime report does not say the workload's truth" "$TMP/rt.runtime.txt"
		fi
	fi
	if selected events/convert/same; then
		local f diffs= named
		# the same samples and stacks, frame for frame: only the JIT frames the recording alone
		# leaves [unknown] are named, by the runtime's method events; --perf-compat, which names no
		# JIT frame perf does not, gives the same bytes (trace.zip's log and pprof's comments hold
		# the command line, which differs)
		"$PERFCONV" -q -i "$P" -f perf-script -o "$TMP/same-a.perf-script" 2>>"$TMP/same.err"
		"$PERFCONV" -q -i "$P" --events "$E" -f perf-script -o "$TMP/same-b.perf-script" 2>>"$TMP/same.err"
		named=$(same_but_named "$TMP/same-a.perf-script" "$TMP/same-b.perf-script" 2>&1) || diffs=" perf-script ($named)"
		for f in folded svg speedscope perf-script top; do
			"$PERFCONV" -q --perf-compat -i "$P" -f "$f" -o "$TMP/same-a.$f" 2>>"$TMP/same.err"
			"$PERFCONV" -q --perf-compat -i "$P" --events "$E" -f "$f" -o "$TMP/same-b.$f" 2>>"$TMP/same.err"
			cmp -s "$TMP/same-a.$f" "$TMP/same-b.$f" && [ -s "$TMP/same-a.$f" ] || diffs="$diffs $f (--perf-compat)"
		done
		if [ -n "$diffs" ]; then
			fail events/convert/same "--events changed the default profile in:$diffs" "$TMP/same.err"
		elif [ "${named:-0}" -lt 1 ] 2>/dev/null; then
			fail events/convert/same "no JIT frame named by the stream's method events" "$TMP/same.err"
		else
			pass "events/convert/same ($named JIT frame lines named by the runtime's method events)"
		fi
	fi
	if selected events/convert/jit-names; then
		# the stream's method events name the JIT code of the allocation sites, which the recording
		# (no perf map) leaves unnamed: the two sites' frames under their types
		"$PERFCONV" -i "$P" --events "$E" --alloc -o "$TMP/jn.folded" 2>"$TMP/jn.err"
		if ! grep -q ';EventsProbe!EventsProbe\.Program::AllocInts;System\.Int32\[\] [0-9]*$' "$TMP/jn.folded" ||
			! grep -q ';EventsProbe!EventsProbe\.Program::AllocRecords;EventsProbe\.Record [0-9]*$' "$TMP/jn.folded" ||
			! grep -q "JIT frames (unique): .* by the runtime's method events, 0 unresolved" "$TMP/jn.err"; then
			fail events/convert/jit-names "the allocation sites' JIT frames are not named from the stream" "$TMP/jn.folded"
		else
			pass events/convert/jit-names
		fi
	fi
	if selected events/convert/during-gc; then
		local in all out_n out_all
		"$PERFCONV" -q -i "$P" --events "$E" --during gc -f perf-script -o "$TMP/gc.perf.txt" 2>"$TMP/gc.err"
		read -r in_n in_all < <(leaf_share <"$TMP/gc.perf.txt")
		"$PERFCONV" -q -i "$P" -f perf-script -o "$TMP/all.perf.txt" 2>>"$TMP/gc.err"
		read -r all_n all < <(leaf_share <"$TMP/all.perf.txt")
		out_n=$((all_n - in_n)) out_all=$((all - in_all))
		"$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" --events "$E" --during gc -o "$TMP/nomono.folded" 2>"$TMP/nomono.err"
		rc=$?
		# inside the pauses at least 90% native, outside at most 60%, and a few samples inside
		if [ "$in_all" -lt 5 ] || [ $((in_n * 100)) -lt $((in_all * 90)) ] || [ $((out_n * 100)) -gt $((out_all * 60)) ]; then
			fail events/convert/during-gc "native leaves: $in_n of $in_all inside the GC pauses, $out_n of $out_all outside" "$TMP/gc.err"
		elif [ $rc != 1 ] || ! grep -q "perf record -k mono" "$TMP/nomono.err" || [ -e "$TMP/nomono.folded" ]; then
			fail events/convert/during-gc "a recording without -k mono is not refused (exit $rc)" "$TMP/nomono.err"
		else
			pass "events/convert/during-gc (native leaves: $in_n of $in_all inside the pauses, $out_n of $out_all outside)"
		fi
	fi
	if selected events/convert/alloc; then
		(
			t() { awk -v k="truth $1 " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' "$D/truth.txt"; }
			"$PERFCONV" -q -i "$P" --events "$E" --alloc -o "$TMP/alloc.folded" || exit 1
			leaf_bytes <"$TMP/alloc.folded" >"$TMP/leaves"
			# the heaviest leaves are the two sites' types, 3:1 as the workload allocated them
			[ "$(head -2 "$TMP/leaves" | cut -d' ' -f2- | tr '\n' ,)" = "System.Int32[],EventsProbe.Record," ] || exit 1
			ints=$(sed -n 's/ System\.Int32\[\]$//p' "$TMP/leaves") recs=$(sed -n 's/ EventsProbe\.Record$//p' "$TMP/leaves")
			want=$(awk -v a="$(t 'alloc-bytes System.Int32[]')" -v b="$(t 'alloc-bytes EventsProbe.Record')" 'BEGIN { print a / b }')
			awk -v a="$ints" -v b="$recs" -v w="$want" 'BEGIN { r = a / b; exit !(r > w * 0.9 && r < w * 1.1) }' || exit 1
			echo "ratio $ints:$recs"
			# every output works on the allocation profile
			for f in svg speedscope pprof top perf-script; do
				"$PERFCONV" -q -i "$P" --events "$E" --alloc -f "$f" -o "$TMP/alloc.$f" && [ -s "$TMP/alloc.$f" ] || exit 1
			done
			grep -q 'System\.Int32\[\]' "$TMP/alloc.top" && grep -q 'System.Int32\[\]' "$TMP/alloc.svg" || exit 1
			# --diff compares with a base that brings its own events: a pack made with --events
			"$PERFCONV" -q -i "$P" --events "$E" -o "$TMP/base.perfpack" || exit 1
			"$PERFCONV" -q -i "$P" --events "$E" --alloc --diff "$TMP/base.perfpack" -f top -o "$TMP/alloc.diff.top" || exit 1
			grep -q 'System\.Int32\[\]' "$TMP/alloc.diff.top" || exit 1
			"$PERFCONV" -q -i "$P" --events "$E" --alloc --diff "$P" -f top -o "$TMP/alloc.diff2.top" 2>"$TMP/diff.err"
			[ $? = 1 ] && grep -q -- "--alloc reads the .NET runtime's events" "$TMP/diff.err" || exit 1
			# the allocation samples of .NET 10 weigh 100 KiB each
			"$PERFCONV" -q -i "$P" --events "$D/sampled.nettrace" --alloc -o "$TMP/sampled.folded" 2>/dev/null || exit 1
			leaf_bytes <"$TMP/sampled.folded" | head -1 | grep -q ' System\.Int32\[\]$' || exit 1
			# without the events --alloc says what it needs, and writes nothing
			"$PERFCONV" -q -i "$P" --alloc -o "$TMP/none.folded" 2>"$TMP/noev.err"
			[ $? = 1 ] && grep -q -- "--alloc reads the .NET runtime's events: give them with --events" "$TMP/noev.err" &&
				[ ! -e "$TMP/none.folded" ] || exit 1
		) >"$TMP/alloc.log" 2>&1
		if [ $? = 0 ]; then
			pass "events/convert/alloc ($(grep '^ratio' "$TMP/alloc.log"))"
		else
			cat "$TMP/leaves" >>"$TMP/alloc.log" 2>/dev/null
			fail events/convert/alloc "--alloc does not give the workload's allocations" "$TMP/alloc.log"
		fi
	fi
	if selected events/convert/pack; then
		(
			mkdir -p "$TMP/pk" "$TMP/pk/home" "$TMP/pk/tmp"
			cp "$P" "$E" "$TMP/pk/" || exit 1
			cd "$TMP/pk" || exit 1
			"$PERFCONV" -q -i perf.data --events app.nettrace -o ev.perfpack || exit 1
			for a in "-f runtime" "--alloc -f folded" "--during gc -f folded" "-f folded"; do
				n=$(echo "$a" | tr -d ' -')
				# shellcheck disable=SC2086
				"$PERFCONV" -q -i perf.data --events app.nettrace $a -o "direct.$n" || exit 1
			done
			rm perf.data app.nettrace
			# elsewhere: another HOME and TMPDIR, and where root may, a namespace without the fixtures,
			# /tmp or the .NET install
			run=(env HOME="$TMP/pk/home" TMPDIR="$TMP/pk/tmp")
			"$top/tests/tools/isolate.sh" -k "$TMP/pk" -k "$(dirname "$PERFCONV")" -x "$(cd "$top/$FIX" && pwd)" -- true 2>/dev/null &&
				run=("$top/tests/tools/isolate.sh" -k "$TMP/pk" -k "$(dirname "$PERFCONV")" -x "$(cd "$top/$FIX" && pwd)" -- "${run[@]}")
			for a in "-f runtime" "--alloc -f folded" "--during gc -f folded" "-f folded"; do
				n=$(echo "$a" | tr -d ' -')
				# shellcheck disable=SC2086
				"${run[@]}" "$PERFCONV" -q -i ev.perfpack $a -o "pack.$n" || exit 1
				cmp "direct.$n" "pack.$n" || exit 1
			done
			echo "${#run[@]}"
		) >"$TMP/pack.log" 2>&1
		if [ $? = 0 ]; then
			pass "events/convert/pack ($( [ "$(tail -1 "$TMP/pack.log")" -gt 3 ] && echo isolated || echo 'HOME and TMPDIR elsewhere'))"
		else
			fail events/convert/pack "the pack does not convert as the recording with --events does" "$TMP/pack.log"
		fi
	fi
	if selected events/convert/errors; then
		(
			# bytes of the stream's first event block overwritten: the file and the offset named, no output
			cp "$E" "$TMP/bad.nettrace"
			printf '\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377' |
				dd of="$TMP/bad.nettrace" bs=1 seek=2000 conv=notrunc 2>/dev/null
			"$PERFCONV" -q -i "$P" --events "$TMP/bad.nettrace" -f runtime -o "$TMP/bad.runtime.txt" 2>"$TMP/bad.err"
			[ $? = 1 ] && grep -q "'.*bad.nettrace': .* at offset [0-9]" "$TMP/bad.err" && [ ! -e "$TMP/bad.runtime.txt" ] || exit 1
			"$PERFCONV" -q -i "$P" --events "$TMP/missing.nettrace" -o "$TMP/m.folded" 2>"$TMP/m.err"
			[ $? = 1 ] && grep -q "missing.nettrace" "$TMP/m.err" && [ ! -e "$TMP/m.folded" ] || exit 1
			# a stream of a process the recording does not have: said, and the conversion goes on
			"$PERFCONV" -i "$FIX/fp-callgraph/perf.data" --events "$E" -o "$TMP/w.folded" 2>"$TMP/w.err" || exit 1
			grep -q "warning: '.*app.nettrace': process $(sed -n 's/^truth pid //p' "$D/truth.txt") is not in the recording" "$TMP/w.err" || exit 1
			# unless --pid-map names it
			pid=$(awk '/^[^ \t]/ { print $2; exit }' < <("$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" -f perf-script))
			"$PERFCONV" -i "$FIX/fp-callgraph/perf.data" --pid-map "$pid=$(sed -n 's/^truth pid //p' "$D/truth.txt")" \
				--events "$E" -o "$TMP/w2.folded" 2>"$TMP/w2.err" || exit 1
			! grep -q "is not in the recording" "$TMP/w2.err" || exit 1
		) >"$TMP/err.log" 2>&1
		if [ $? = 0 ]; then
			pass events/convert/errors
		else
			cat "$TMP/bad.err" "$TMP/w.err" "$TMP/w2.err" >>"$TMP/err.log" 2>/dev/null
			fail events/convert/errors "a bad stream or process is not reported as it should" "$TMP/err.log"
		fi
	fi
}
convert_cases

if [ ! -x "$UNIT" ]; then
	for c in events/traceevent/app events/traceevent/sampled events/cut; do
		selected "$c" && fail "$c" "'$UNIT' is not built (make)"
	done
	exit 0
fi

# events/cut: the bytes up to the rundown's last block, as a session cut before its end leaves them
if selected events/cut; then
	size=$(stat -c %s "$D/app.nettrace")
	head -c $((size - 3000)) "$D/app.nettrace" >"$TMP/cut.nettrace"
	if ! "$UNIT" --dump "$TMP/cut.nettrace" >"$TMP/cut.out" 2>"$TMP/cut.err"; then
		fail events/cut "the cut stream is refused" "$TMP/cut.err"
	elif ! grep -q 'complete 0, truncated 1' "$TMP/cut.err"; then
		fail events/cut "the cut is not reported" "$TMP/cut.err"
	elif [ "$(grep -c '^GCStart ' "$TMP/cut.out")" != "$(sed -n 's/^truth collection-count 0 //p' "$D/truth.txt")" ]; then
		fail events/cut "the cut stream lost GCs" "$TMP/cut.out"
	else
		pass "events/cut ($(cat "$TMP/cut.err"))"
	fi
fi

if selected events/cli; then
	(
		want_gcs=$(sed -n 's/^truth collection-count 0 //p' "$D/truth.txt")
		want_gen2=$(sed -n 's/^truth collection-count 2 //p' "$D/truth.txt")
		"$PERFCONV" --events "$D/app.nettrace" >"$TMP/report" 2>"$TMP/report.err" || exit 1
		grep -q "^process $(sed -n 's/^truth pid //p' "$D/truth.txt") (.*stream complete\$" "$TMP/report" || exit 1
		grep -Eq "^GCs +$want_gcs: gen0 [0-9]+, gen1 [0-9]+, gen2 $want_gen2\$" "$TMP/report" || exit 1
		grep -Eq '^  [0-9.]+ MiB \(7[0-9]\.[0-9]%\)  System\.Int32\[\]$' "$TMP/report" || exit 1
		grep -Eq '^  [0-9.]+ MiB \(2[0-9]\.[0-9]%\)  EventsProbe\.Record$' "$TMP/report" || exit 1
		grep -q '^  8  System.InvalidOperationException$' "$TMP/report" || exit 1
		grep -q '^  5  System.ArgumentException$' "$TMP/report" || exit 1
		grep -q "events, .* of other kinds" "$TMP/report.err" || exit 1
		"$PERFCONV" -q --events "$D/app.nettrace" -o "$TMP/report.o" 2>"$TMP/q.err" || exit 1
		cmp -s "$TMP/report" "$TMP/report.o" && [ ! -s "$TMP/q.err" ] || exit 1
		"$PERFCONV" --events "$D/sampled.nettrace" | grep -q '^allocated     about .* from [0-9]* allocation samples' || exit 1
		head -c $(($(stat -c %s "$D/app.nettrace") - 3000)) "$D/app.nettrace" >"$TMP/cut.nettrace"
		"$PERFCONV" -q --events "$TMP/cut.nettrace" | grep -q 'stream cut at offset [0-9]*, no rundown' || exit 1
		"$PERFCONV" --events "$D/perf.data" >/dev/null 2>"$TMP/e1"
		rc=$?
		[ $rc = 1 ] && grep -q "perf.data': unsupported input at offset 0: not a nettrace" "$TMP/e1" || exit 1
		"$PERFCONV" --events "$TMP/none.nettrace" >/dev/null 2>"$TMP/e2"
		rc=$?
		[ $rc = 1 ] && grep -q "cannot open '.*none.nettrace'" "$TMP/e2" || exit 1
	) >"$TMP/cli.log" 2>&1
	if [ $? = 0 ]; then
		pass events/cli
	else
		{ cat "$TMP/report" "$TMP/e1" "$TMP/e2"; } >>"$TMP/cli.log" 2>/dev/null
		fail events/cli "perfconv --events does not report the workload's truth" "$TMP/cli.log"
	fi
fi

interop() {
	local proj=$top/tests/interop/nettrace hash out log=$TMP/interop.log f name
	for f in app sampled; do
		selected "events/traceevent/$f" || continue
		consumers "events/traceevent/$f" || continue
		if ! command -v dotnet >/dev/null 2>&1; then
			skip "events/traceevent/$f" "dotnet is not installed"
			continue
		fi
		# a project that is not there is the test's own mistake, not a registry that is down
		if [ ! -f "$proj/NettraceCheck.csproj" ]; then
			fail "events/traceevent/$f" "no project at $proj"
			continue
		fi
		hash=$(cat "$proj/NettraceCheck.csproj" "$proj/Program.cs" | sha256sum | cut -c1-16)
		out=$proj/.build/$hash
		export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
		if [ ! -f "$out/NettraceCheck.dll" ]; then
			# packages are cached in tests/interop/nettrace/.nuget: once restored, no network is needed
			if ! (cd "$proj" && timeout 300 dotnet restore --packages .nuget) >"$log" 2>&1; then
				skip "events/traceevent/$f" "cannot restore Microsoft.Diagnostics.Tracing.TraceEvent (no NuGet registry?): $(grep -m1 -iE 'error|unable' "$log" | cut -c1-120)"
				continue
			fi
			if ! (cd "$proj" && timeout 600 dotnet build -c Release --no-restore -o "$out" --disable-build-servers \
				-nodeReuse:false -p:UseSharedCompilation=false) >>"$log" 2>&1; then
				fail "events/traceevent/$f" "tests/interop/nettrace does not build" "$log"
				continue
			fi
		fi
		name=events/traceevent/$f
		if ! dotnet "$out/NettraceCheck.dll" "$D/$f.nettrace" >"$TMP/te.out" 2>"$TMP/te.err"; then
			fail "$name" "TraceEvent did not read $f.nettrace" "$TMP/te.err"
			continue
		fi
		sed -e 's/^count Microsoft-Windows-DotNETRuntime 65524 0 /count Microsoft-Windows-DotNETRuntime 39 0 /' \
			-e 's/^count Provider(92f528a6-f5b8-5160-a7ee-b33da7739e29) /count Microsoft-DotNETCore-EventPipe /' \
			"$TMP/te.out" | sort >"$TMP/te.sorted"
		"$UNIT" --dump "$D/$f.nettrace" 2>"$TMP/ours.err" | sort >"$TMP/ours.sorted"
		if ! diff -u "$TMP/te.sorted" "$TMP/ours.sorted" --label TraceEvent --label perfconv >"$TMP/diff"; then
			fail "$name" "perfconv's reading differs from TraceEvent's" "$TMP/diff"
		elif [ "$(grep -c . "$TMP/ours.sorted")" -lt 1000 ]; then
			fail "$name" "too few lines to compare" "$TMP/ours.sorted"
		else
			pass "$name ($(grep -c . "$TMP/ours.sorted") lines equal, $(grep -c '^count ' "$TMP/ours.sorted") kinds of event)"
		fi
	done
}
interop
