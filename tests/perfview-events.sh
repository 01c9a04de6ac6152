#!/usr/bin/env bash
# tests/perfview-events.sh - the .NET runtime's events in a trace.zip: fixtures/dotnet-events/perf.data
# converted with --events app.nettrace, whose runtime events go in as perfcollect's LTTng CTF.
#   trace.zip-events-cpu        the CPU part: perf.data.txt as without --events but for the JIT frames the
#                               recording leaves [unknown], which the stream's method events name; the
#                               entries are the same plus the CTF's (metadata, channel0_N,
#                               index/channel0_N.idx under lttngTrace/auto-DATE/ust/uid/0/64-bit/)
#                               before perfcollect.log, which says what went in and what was left out
#   trace.zip-events-same       the same inputs give the same bytes, and -f trace.zip the same CTF
#   trace.zip-events-traceevent TraceEvent (tests/interop/perfview --runtime-events) reads the .nettrace
#                               (EventPipeEventSource, CreateFromEventPipeDataFile) and the zip
#                               (CtfTraceEventSource, CreateFromLttngTextDataFile, as PerfView opens it):
#                               tests/perfview_ctf.py requires every event at the same time, pid and tid
#                               with the same payload values, but those the log lists as left out or as
#                               written under an older version's name, and the same GCStats and JITStats
#   trace.zip-events-babeltrace babeltrace2, the LTTng project's reader, reads every event the log says was
#                               written, with lttng's names and fields: the 21 GCStart_V2 count 1 to 21
#                               (skipped without babeltrace2)
#   trace.zip-events-bad        a corrupt nettrace: exit 1 naming the stream and the offset, no archive;
#                               a stream cut short: converted, the log saying where it stops
#   trace.zip-events-report     --events without a trace.zip to write still prints the runtime report
#   trace.zip-events-pack       a pack made with --events gives the same CTF, without --events
#   trace.zip-events-packets    no padding after a packet's events, the metadata entry stored: TraceEvent
#                               takes a short read of a deflated entry where it skips padding or reads
#                               metadata for the end (it read 79,844 of the bench's 814,343 events)
#   trace.zip-events-streamed   a channel written into the archive as it fills (PERFCONV_CTF_STREAM_FROM
#                               4096: the fixture's channels are smaller than the default megabyte):
#                               the same CTF as copied channels, its entry before the metadata, the same
#                               bytes twice, and to a pipe; a stream corrupt near its end, after a channel
#                               was opened: exit 1 naming the offset, no file left
# Skipped without dotnet or when the TraceEvent package cannot be restored; CONSUMERS=0 skips TraceEvent.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" perfview-events
need_perfconv trace.zip-events
need_python trace.zip-events
D=$FIX/dotnet-events
NT=$D/app.nettrace
E=(-i "$D/perf.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms")

"$PERFCONV" -q "${E[@]}" -o "$TMP/plain.trace.zip" 2>"$TMP/plain.err" &&
	"$PERFCONV" -q "${E[@]}" --events "$NT" -o "$TMP/ev.trace.zip" 2>"$TMP/ev.err"
rc=$?
if [ $rc != 0 ]; then
	fail trace.zip-events "exit $rc converting with and without --events" "$TMP/ev.err"
	exit 0
fi
unzip -p "$TMP/ev.trace.zip" ev.trace/perfcollect.log >"$TMP/ev.log"

if selected trace.zip-events-cpu; then
	zipinfo -1 "$TMP/plain.trace.zip" | sed 's/^plain\.trace/ev.trace/' >"$TMP/plain.entries"
	zipinfo -1 "$TMP/ev.trace.zip" >"$TMP/ev.entries"
	ctf=$(grep -c '^ev\.trace/lttngTrace/auto-[0-9]*-[0-9]*/ust/uid/0/64-bit/\(metadata\|channel0_[0-9]*\|index/channel0_[0-9]*\.idx\)$' "$TMP/ev.entries")
	unzip -p "$TMP/plain.trace.zip" plain.trace/perf.data.txt >"$TMP/plain.txt"
	unzip -p "$TMP/ev.trace.zip" ev.trace/perf.data.txt >"$TMP/ev.txt"
	# the same samples and frames; only JIT frames the recording alone leaves unnamed get the names
	# of the runtime's method events
	if ! same_but_named "$TMP/plain.txt" "$TMP/ev.txt" >"$TMP/named" 2>&1 || [ "$(cat "$TMP/named")" = 0 ]; then
		fail trace.zip-events-cpu "perf.data.txt differs with --events in more than the JIT frames it names" "$TMP/named"
	elif ! diff -u "$TMP/plain.entries" <(grep -v /lttngTrace/ "$TMP/ev.entries") >"$TMP/diff"; then
		fail trace.zip-events-cpu "the entries besides the CTF differ" "$TMP/diff"
	elif [ "$(tail -n 1 "$TMP/ev.entries")" != ev.trace/perfcollect.log ] || [ "$ctf" -lt 3 ] ||
		[ "$ctf" != "$(grep -c /lttngTrace/ "$TMP/ev.entries")" ]; then
		fail trace.zip-events-cpu "want metadata, channels and their index under lttngTrace/auto-DATE/ust/uid/0/64-bit/, then the log" "$TMP/ev.entries"
	elif ! unzip -tq "$TMP/ev.trace.zip" >"$TMP/unzip" 2>&1; then
		fail trace.zip-events-cpu "unzip -t fails" "$TMP/unzip"
	elif ! grep -q "^Runtime events: $NT (pid 673): 2937 events, [0-9]* written as CTF$" "$TMP/ev.log" ||
		! grep -q '^Runtime events left out (no LTTng name TraceEvent reads): 845 Microsoft-Windows-DotNETRuntimeRundown MethodDCEndVerbose (event 144 version 1)$' "$TMP/ev.log" ||
		! grep -q '^Runtime events written under an older version.*: 1267 of event 10 version 4 as GCAllocationTick_V3$' "$TMP/ev.log"; then
		fail trace.zip-events-cpu "the log does not say what went in and what was left out" "$TMP/ev.log"
	else
		pass "trace.zip-events-cpu ($ctf CTF entries; $(cat "$TMP/named") JIT frame lines named by the runtime's method events)"
	fi
fi

if selected trace.zip-events-same; then
	mkdir -p "$TMP/byf"
	# under the same name: the log holds the command line
	cp "$TMP/ev.trace.zip" "$TMP/first.zip"
	"$PERFCONV" -q "${E[@]}" --events "$NT" -o "$TMP/ev.trace.zip" 2>"$TMP/err"
	# -f trace.zip: the command line in the log differs, the CTF must not
	"$PERFCONV" -q "${E[@]}" --events "$NT" -f trace.zip -o "$TMP/byf/ev.trace.zip" 2>>"$TMP/err"
	same=1
	for e in $(grep /lttngTrace/ "$TMP/ev.entries" 2>/dev/null || zipinfo -1 "$TMP/ev.trace.zip" | grep /lttngTrace/); do
		cmp -s <(unzip -p "$TMP/ev.trace.zip" "$e") <(unzip -p "$TMP/byf/ev.trace.zip" "$e") || same=0
	done
	if ! cmp -s "$TMP/ev.trace.zip" "$TMP/first.zip"; then
		fail trace.zip-events-same "a second conversion gives other bytes" "$TMP/err"
	elif [ $same = 0 ]; then
		fail trace.zip-events-same "-f trace.zip gives another CTF" "$TMP/err"
	else
		pass trace.zip-events-same
	fi
fi

if selected trace.zip-events-packets; then
	# TraceEvent skips a packet's padding and reads the metadata with bare reads of the entry's
	# stream, and takes a short read, which a deflated entry gives whenever the inflater's input
	# runs out, for the end: no padding after a packet's events, and the metadata stored
	if ! python3 - "$TMP/ev.trace.zip" >"$TMP/packets" 2>&1 <<'PY'
import struct, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
meta = [i for i in z.infolist() if i.filename.endswith('/metadata')]
assert len(meta) == 1 and meta[0].compress_type == zipfile.ZIP_STORED, 'the metadata is not stored'
n = 0
for i in z.infolist():
    if '/channel0_' not in i.filename or '/index/' in i.filename:
        continue
    b = z.read(i)
    off = 0
    while off < len(b):
        magic, = struct.unpack_from('<I', b, off)
        assert magic == 0xc1fc1fc1, '%s: no packet at %d' % (i.filename, off)
        content, size = struct.unpack_from('<QQ', b, off + 48)
        assert content == size, '%s: the packet at %d has %d bits of padding' % (i.filename, off, size - content)
        assert size % 8 == 0 and size >= 84 * 8, '%s: packet of %d bits at %d' % (i.filename, size, off)
        off += size // 8
        n += 1
    assert off == len(b), '%s: the last packet ends at %d of %d' % (i.filename, off, len(b))
print(n)
PY
	then
		fail trace.zip-events-packets "a channel's packets are padded, or the metadata is deflated" "$TMP/packets"
	else
		pass "trace.zip-events-packets ($(cat "$TMP/packets") packets without padding, the metadata stored)"
	fi
fi

if selected trace.zip-events-streamed; then
	mkdir -p "$TMP/st/ev" "$TMP/stp/ev"
	# twice under the same name (the log holds the command line)
	PERFCONV_CTF_STREAM_FROM=4096 "$PERFCONV" -q "${E[@]}" --events "$NT" -o "$TMP/st/ev/ev.trace.zip" 2>"$TMP/st.err" &&
		cp "$TMP/st/ev/ev.trace.zip" "$TMP/st/first.zip" &&
		PERFCONV_CTF_STREAM_FROM=4096 "$PERFCONV" -q "${E[@]}" --events "$NT" -o "$TMP/st/ev/ev.trace.zip" 2>>"$TMP/st.err" &&
		PERFCONV_CTF_STREAM_FROM=4096 "$PERFCONV" -q "${E[@]}" --events "$NT" -f trace.zip -o - 2>>"$TMP/st.err" |
		cat >"$TMP/stp/ev/ev.trace.zip"
	rc=$?
	same=1 n=0
	# to a pipe the archive's folder is the recording's name: "perf.trace/"
	ptop=$(zipinfo -1 "$TMP/stp/ev/ev.trace.zip" 2>/dev/null | head -n 1)
	for e in $(zipinfo -1 "$TMP/ev.trace.zip" | grep /lttngTrace/); do
		n=$((n + 1))
		cmp -s <(unzip -p "$TMP/ev.trace.zip" "$e") <(unzip -p "$TMP/st/ev/ev.trace.zip" "$e") || same=0
		cmp -s <(unzip -p "$TMP/ev.trace.zip" "$e") <(unzip -p "$TMP/stp/ev/ev.trace.zip" "$ptop${e#*/}") || same=0
	done
	# the streamed channel's entry is the first of the trace's: it was opened while the channels filled
	first=$(zipinfo -1 "$TMP/st/ev/ev.trace.zip" | grep /lttngTrace/ | head -n 1)
	# 1 KiB of 0xff at nine tenths of the stream: the fill fails with a channel's entry open
	mkdir -p "$TMP/st/bad"
	cp "$NT" "$TMP/st/late.nettrace"
	head -c 1024 /dev/zero | tr '\0' '\377' |
		dd of="$TMP/st/late.nettrace" bs=1 seek=$(($(wc -c <"$NT") * 9 / 10)) conv=notrunc 2>/dev/null
	PERFCONV_CTF_STREAM_FROM=4096 "$PERFCONV" -q "${E[@]}" --events "$TMP/st/late.nettrace" \
		-o "$TMP/st/bad/x.trace.zip" 2>"$TMP/st/bad.err"
	brc=$?
	if [ $rc != 0 ]; then
		fail trace.zip-events-streamed "exit $rc converting with a streamed channel" "$TMP/st.err"
	elif [ $n = 0 ] || [ $same = 0 ]; then
		fail trace.zip-events-streamed "a streamed channel gives another CTF ($n entries compared)" "$TMP/st.err"
	elif [ "${first##*/}" != channel0_0 ] && [ "${first##*/}" != channel0_1 ]; then
		fail trace.zip-events-streamed "no channel was streamed: the trace's first entry is $first" "$TMP/st.err"
	elif ! cmp -s "$TMP/st/ev/ev.trace.zip" "$TMP/st/first.zip"; then
		fail trace.zip-events-streamed "a second conversion gives other bytes" "$TMP/st.err"
	elif ! unzip -tq "$TMP/stp/ev/ev.trace.zip" >"$TMP/st.t" 2>&1; then
		fail trace.zip-events-streamed "the archive written to a pipe does not test clean" "$TMP/st.t"
	elif [ $brc != 1 ] || ! grep -q "'$TMP/st/late.nettrace'.* at offset [0-9][0-9]*" "$TMP/st/bad.err" ||
		[ -n "$(ls -A "$TMP/st/bad")" ]; then
		fail trace.zip-events-streamed "a stream corrupt late: want exit 1, the offset named, no file left; got $brc, $(ls -A "$TMP/st/bad")" "$TMP/st/bad.err"
	else
		pass "trace.zip-events-streamed ($n CTF entries the same, ${first##*/} streamed)"
	fi
fi

if selected trace.zip-events-pack; then
	mkdir -p "$TMP/pk/ev"
	"$PERFCONV" -q "${E[@]}" --events "$NT" -o "$TMP/pk/ev.perfpack" 2>"$TMP/pk.err" &&
		"$PERFCONV" -q -i "$TMP/pk/ev.perfpack" -o "$TMP/pk/ev/ev.trace.zip" 2>>"$TMP/pk.err"
	rc=$?
	same=1 n=0
	for e in $(zipinfo -1 "$TMP/ev.trace.zip" | grep /lttngTrace/); do
		n=$((n + 1))
		cmp -s <(unzip -p "$TMP/ev.trace.zip" "$e") <(unzip -p "$TMP/pk/ev/ev.trace.zip" "$e") || same=0
	done
	if [ $rc != 0 ]; then
		fail trace.zip-events-pack "exit $rc packing or converting the pack" "$TMP/pk.err"
	elif [ $n = 0 ] || [ $same = 0 ]; then
		fail trace.zip-events-pack "the pack's trace.zip has another CTF ($n entries compared)" "$TMP/pk.err"
	else
		pass "trace.zip-events-pack ($n CTF entries the same)"
	fi
fi

if selected trace.zip-events-babeltrace; then
	if ! command -v babeltrace2 >/dev/null 2>&1; then
		skip trace.zip-events-babeltrace "babeltrace2 is not installed (scripts/install-deps.sh --test)"
	else
		rm -rf "$TMP/bt" && mkdir -p "$TMP/bt" && (cd "$TMP/bt" && unzip -q "$TMP/ev.trace.zip")
		babeltrace2 "$TMP/bt/ev.trace/lttngTrace" >"$TMP/bt.txt" 2>"$TMP/bt.err"
		rc=$?
		want=$(sed -n 's/^Runtime events written as CTF: \([0-9]*\) in .*/\1/p' "$TMP/ev.log")
		counts=$(sed -n 's/.* DotNETRuntime:GCStart_V2: .*{ Count = \([0-9]*\), Depth = [0-9], Reason = [0-9]*, Type = [0-9]*, ClrInstanceID = 0, ClientSequenceNumber = [0-9]* }$/\1/p' "$TMP/bt.txt" | tr '\n' ' ')
		if [ $rc != 0 ] || [ "$(wc -l <"$TMP/bt.txt")" != "$want" ] || [ -s "$TMP/bt.err" ]; then
			fail trace.zip-events-babeltrace "exit $rc, $(wc -l <"$TMP/bt.txt") events, want $want" "$TMP/bt.err"
		elif [ "$counts" != "$(seq -s ' ' 1 21) " ] || ! grep -q ' vpid = 673, vtid = 673, procname = "EventsProbe" ' "$TMP/bt.txt"; then
			fail trace.zip-events-babeltrace "GCStart_V2's fields or the event context are not read back" "$TMP/bt.txt"
		else
			pass "trace.zip-events-babeltrace ($want events)"
		fi
	fi
fi

if selected trace.zip-events-bad; then
	d=$TMP/bad
	mkdir -p "$d/out"
	# an event block's header claiming 65535 bytes
	cp "$NT" "$d/bad.nettrace"
	printf '\377\377\377\177' | dd of="$d/bad.nettrace" bs=1 seek=447 conv=notrunc 2>/dev/null
	"$PERFCONV" -q "${E[@]}" --events "$NT" --events "$d/bad.nettrace" -o "$d/out/x.trace.zip" 2>"$d/err"
	rc=$?
	head -c 300000 "$NT" >"$d/cut.nettrace"
	"$PERFCONV" -q "${E[@]}" --events "$d/cut.nettrace" -o "$d/cut.trace.zip" 2>"$d/cut.err"
	crc=$?
	if [ $rc != 1 ] || ! grep -q "'$d/bad.nettrace'.* at offset [0-9][0-9]*" "$d/err" || [ -n "$(ls -A "$d/out")" ]; then
		fail trace.zip-events-bad "want exit 1, the stream and offset named, no file left; got $rc, $(ls -A "$d/out")" "$d/err"
	elif [ $crc != 0 ] || ! unzip -p "$d/cut.trace.zip" cut.trace/perfcollect.log |
		grep -q "^Runtime events: $d/cut.nettrace (pid 673): .*; the stream is cut short at offset [0-9]*"; then
		fail trace.zip-events-bad "a cut stream: exit $crc, or the log does not say where it stops" "$d/cut.err"
	else
		pass trace.zip-events-bad
	fi
fi

if selected trace.zip-events-report; then
	"$PERFCONV" -q --events "$NT" >"$TMP/report" 2>"$TMP/err"
	rc=$?
	if [ $rc = 0 ] && grep -q '^GCs  *21: gen0 13, gen1 4, gen2 4$' "$TMP/report"; then
		pass trace.zip-events-report
	else
		fail trace.zip-events-report "exit $rc, or no runtime report" "$TMP/report"
	fi
fi

interop() {
	local name=trace.zip-events-traceevent proj=$top/tests/interop/perfview hash out log=$TMP/interop.log nt
	nt=$(cd "$(dirname "$NT")" && pwd)/$(basename "$NT")
	consumers "$name" || return 0
	if ! command -v dotnet >/dev/null 2>&1; then
		skip "$name" "dotnet is not installed"
		return 0
	fi
	# a project that is not there is the test's own mistake, not a registry that is down
	if [ ! -f "$proj/PerfViewCheck.csproj" ]; then
		fail "$name" "no project at $proj"
		return 0
	fi
	hash=$(cat "$proj"/*.csproj "$proj"/*.cs | sha256sum | cut -c1-16)
	out=$proj/.build/$hash
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	if [ ! -f "$out/PerfViewCheck.dll" ]; then
		# packages are cached in tests/interop/perfview/.nuget: once restored, no network is needed
		if ! (cd "$proj" && timeout 300 dotnet restore --packages .nuget) >"$log" 2>&1; then
			skip "$name" "cannot restore Microsoft.Diagnostics.Tracing.TraceEvent (no NuGet registry?): $(grep -m1 -iE 'error|unable' "$log" | cut -c1-120)"
			return 0
		fi
		if ! (cd "$proj" && timeout 600 dotnet build -c Release --no-restore -o "$out") >>"$log" 2>&1; then
			fail "$name" "tests/interop/perfview does not build" "$log"
			return 0
		fi
	fi
	if ! (cd "$TMP" && dotnet "$out/PerfViewCheck.dll" --runtime-events "$nt" nt.txt) >"$TMP/nt.out" 2>&1; then
		fail "$name" "TraceEvent did not read the nettrace" "$TMP/nt.out"
	elif ! (cd "$TMP" && dotnet "$out/PerfViewCheck.dll" --runtime-events ev.trace.zip zip.txt) >"$TMP/zip.out" 2>&1; then
		fail "$name" "TraceEvent did not read the CTF of the trace.zip" "$TMP/zip.out"
	elif ! python3 "$top/tests/perfview_ctf.py" "$TMP/nt.txt" "$TMP/zip.txt" "$TMP/ev.log" >"$TMP/cmp" 2>&1; then
		grep -v '^count' "$TMP/cmp" >"$TMP/cmp.diff"
		fail "$name" "TraceEvent reads other events or stats from the trace.zip than from the nettrace" "$TMP/cmp.diff"
	else
		pass "$name ($(grep '^events ' "$TMP/cmp"); $(grep '^gc ' "$TMP/cmp" | cut -d' ' -f3-); $(grep '^jit ' "$TMP/cmp" | cut -d' ' -f3-))"
	fi
}
if selected trace.zip-events-traceevent; then
	interop
fi
