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
#
# TraceEvent names two things its own way, which the comparison maps back: the runtime's GCDynamicEvent
# (id 39) is counted under id 65524, and the EventPipe provider's ProcessInfo under its GUID.
# Skipped without dotnet or when the package cannot be restored; CONSUMERS=0 skips the TraceEvent cases.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" events
UNIT=${UNIT_DIR:-build/tests}/test_events
D=$FIX/dotnet-events

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
