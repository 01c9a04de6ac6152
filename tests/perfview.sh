#!/usr/bin/env bash
# tests/perfview.sh - the PerfView .trace.zip writer on every fixture.  For each one:
#   trace.zip-entries  the archive holds exactly NAME.trace/, NAME.trace/perf.data.txt, the perf maps
#                      and jitdumps of JIT frames, and NAME.trace/perfcollect.log, in that order;
#   trace.zip-unzip    `unzip -t` passes, and zipinfo shows Unix attributes (drwxr-xr-x for the folder,
#                      -rw-r--r-- for files, made on "unx") and deflate for files (perf.data.txt is
#                      marked super fast, defS: it is deflated at level 1 on worker threads);
#   trace.zip-fold     perf.data.txt read with PerfView's grammar (tests/perfview_check.py, old and new
#                      PerfView alike) and summed into folded stacks equals perfconv's folded output,
#                      with and without --tid: same frames, same counts;
#   trace.zip-perfscript  perf.data.txt has perf's own samples, header fields and frame lines
#                      (expected/perf-script*.txt, from perf 6.1);
# plus the log, chunking, determinism, --include-perf-data, stdout and bad-input cases, and
#   trace.zip-perfview  PerfView's own parser (TraceEvent, tests/interop/perfview) reads each archive:
#                      its samples, frames, thread and process frames folded equal perfconv's folded
#                      output, and its CPU stack view loads every sample but the last of each CPU.
#                      Skipped when dotnet is missing or the TraceEvent package cannot be restored.
#
# Run by tests/run.sh; prints "ok    NAME", "FAIL  NAME: why" or "skip  NAME: why".
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2"  only cases containing one of the words
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" perfview
CHECK=$top/tests/perfview_check.py
# Debian's python3 when there is one: a version manager's shim costs seconds a call
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
need_perfconv trace.zip

for tool in python3 unzip zipinfo; do
	if ! command -v $tool >/dev/null 2>&1; then
		skip trace.zip "$tool is not installed (scripts/install-deps.sh --test installs it)"
		exit 0
	fi
done

S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms")

# no_pid: folded --tid lines with the pid of "comm-PID/TID" made "?", as stackcollapse-perf.pl
# prints it for perf's default text (the tid alone) and the checkers of PerfView's reading fold,
# sorted again by stack as the script sorts
no_pid() {
	python3 -c '
import re, sys
lines = [re.sub(rb"^([^;]*)--?[0-9]+/(-?[0-9]+)(?=[; ])", rb"\1-?/\2", l) for l in sys.stdin.buffer.read().splitlines()]
lines.sort(key=lambda l: l.rsplit(b" ", 1)[0])
sys.stdout.buffer.write(b"".join(l + b"\n" for l in lines))'
}

# the jitdump perf inject used, where perfconv looks for it (--map-dir)
if [ -f "$FIX/node-jitdump/jit-15218.dump.xz" ]; then
	mkdir -p "$TMP/jitmaps"
	xz -dc "$FIX/node-jitdump/jit-15218.dump.xz" >"$TMP/jitmaps/jit-15218.dump"
fi

fixtures=()
declare -A fxargs fxdebug
for dir in "$FIX"/*/; do
	dir=${dir%/}
	fixture "$dir" || continue
	sel=0
	for c in entries unzip fold fold-tid perfscript perfview; do selected "$fx/trace.zip-$c" && sel=1; done
	[ $sel = 1 ] || continue
	if why=$(missing_runtime "$dir"); then
		skip "$fx/*" "$why"
		continue
	fi
	entries=("$fx.trace/" "$fx.trace/perf.data.txt")
	# the container's jitdump (jit-1.dump in its /tmp, the map directory here), named for the
	# host pid of the process whose frames it names, as perfcollect copies it
	[ "$fx" = dotnet-container ] && entries+=("$fx.trace/jit-15191.dump")
	if [ -d "$dir/maps" ]; then
		# the maps perf itself read (its text names them); W^X .NET code is not anonymous memory,
		# so there perf, and perfconv with --perf-compat, read none
		for m in "$dir"/maps/perf-*.map; do
			[ -f "$m" ] || continue
			ptxt=$(ls "$dir"/expected/perf-script*.txt* "$dir"/expected/script-default.txt* 2>/dev/null | head -n 1)
			if [ -n "$ptxt" ] && ! { xz -dcf "$ptxt" | grep -q "(/tmp/perf-[0-9]*\\.map)"; }; then
				continue
			fi
			entries+=("$fx.trace/$(basename "$m")")
		done
	fi
	if [ "$fx" = node-jitdump ] && [ -f "$TMP/jitmaps/jit-15218.dump" ]; then
		args+=(--map-dir "$TMP/jitmaps")
		entries+=("$fx.trace/jit-15218.dump")
	fi
	entries+=("$fx.trace/perfcollect.log")
	d=$TMP/$fx
	fixtures+=("$fx")
	mkdir -p "$d"
	zip=$d/$fx.trace.zip
	fxargs[$fx]="${args[*]}"
	fxdebug[$fx]=$PERFCONV_DEBUG_DIR
	"$PERFCONV" -q "${args[@]}" -o "$zip" >"$d/out" 2>"$d/err"
	rc=$?
	if [ $rc != 0 ] || [ ! -s "$zip" ]; then
		fail "$fx/trace.zip" "exit status $rc, no archive" "$d/err"
		continue
	fi

	# entries
	if selected "$fx/trace.zip-entries"; then
		zipinfo -1 "$zip" >"$d/entries" 2>&1
		printf '%s\n' "${entries[@]}" >"$d/want"
		if diff -u "$d/want" "$d/entries" >"$d/diff"; then
			pass "$fx/trace.zip-entries"
		else
			fail "$fx/trace.zip-entries" "entry list differs" "$d/diff"
		fi
	fi

	# archive integrity and Unix attributes
	if selected "$fx/trace.zip-unzip"; then
		if ! unzip -t "$zip" >"$d/unzip" 2>&1; then
			fail "$fx/trace.zip-unzip" "unzip -t failed" "$d/unzip"
		elif ! zipinfo "$zip" | awk '
			/^d/ { if ($1 != "drwxr-xr-x" || $3 != "unx" || $6 != "stor") bad = 1; n++ }
			/^-/ { if ($1 != "-rw-r--r--" || $3 != "unx" || $6 !~ /^def[NXFS]$/) bad = 1; n++ }
			END { exit bad || n < 3 }' >/dev/null; then
			zipinfo "$zip" >"$d/zipinfo" 2>&1
			fail "$fx/trace.zip-unzip" "zipinfo does not show unx -rw-r--r--/drwxr-xr-x entries" "$d/zipinfo"
		else
			pass "$fx/trace.zip-unzip"
		fi
	fi

	# perf.data.txt by value, through PerfView's grammar; --tid folds as stackcollapse-perf.pl does
	# perf's default text, with "?" for the pid (perfconv's default names it: no_pid)
	for opt in "" --tid; do
		name=$fx/trace.zip-fold${opt:+-tid}
		selected "$name" || continue
		"$PERFCONV" -q "${args[@]}" $opt -o - 2>"$d/err" | no_pid >"$d/ref.folded"
		if ! "$PY" "$CHECK" fold "$zip" $opt >"$d/pv.folded" 2>"$d/err"; then
			fail "$name" "PerfView's grammar does not read perf.data.txt" "$d/err"
		# perf.data.txt keeps every frame; the default's folded output draws a run of unnamed
		# frames of one binary as one (tests/lib.sh)
		elif folds_runs "${args[@]}" && ! python3 tests/tools/fold_runs.py <"$d/pv.folded" >"$d/pv.runs"; then
			fail "$name" "tests/tools/fold_runs.py failed"
		elif folds_runs "${args[@]}" && ! mv "$d/pv.runs" "$d/pv.folded"; then
			fail "$name" "cannot move $d/pv.runs"
		elif diff -u "$d/ref.folded" "$d/pv.folded" --label "perfconv folded" --label "perf.data.txt via PerfView's grammar" >"$d/diff"; then
			pass "$name"
		else
			fail "$name" "samples of perf.data.txt differ from the folded output" "$d/diff"
		fi
	done

	# against perf's own text with the fields of perf.data.txt (a fixture without one, such as
	# fixed-period, has no case)
	ref=
	if selected "$fx/trace.zip-perfscript"; then
		for f in perf-script perf-script-nocpu perf-script-nocpu-notime; do
			if expected "$exp/$f.txt" >"$d/perf.txt" 2>/dev/null; then
				ref=$f
				break
			fi
		done
	fi
	if [ -n "$ref" ]; then
		if "$PY" "$CHECK" perfscript "$zip" "$d/perf.txt" >"$d/out" 2>"$d/err"; then
			pass "$fx/trace.zip-perfscript"
		else
			fail "$fx/trace.zip-perfscript" "perf.data.txt differs from $ref.txt" "$d/err"
		fi
	fi
done

# The log: what was done, and the cpu warning exactly when samples have no cpu.
if selected trace.zip-log; then
	d=$TMP/log
	mkdir -p "$d"
	"$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" "${S[@]}" -o "$d/nocpu.trace.zip" 2>"$d/err"
	"$PERFCONV" -q -i "$FIX/cpu-sample-cpu/perf.data" "${S[@]}" -o "$d/cpu.trace.zip" 2>>"$d/err"
	unzip -p "$d/nocpu.trace.zip" nocpu.trace/perfcollect.log >"$d/nocpu.log" 2>>"$d/err"
	unzip -p "$d/cpu.trace.zip" cpu.trace/perfcollect.log >"$d/cpu.log" 2>>"$d/err"
	n=$(expected "$FIX/fp-callgraph/expected/stats.txt" | awk '/SAMPLE events:/ { print $NF }')
	why=
	grep -q '^perfconv [0-9]' "$d/nocpu.log" || why="no version line"
	grep -q "^Command line: .*-o $d/nocpu.trace.zip" "$d/nocpu.log" || why="${why:+$why; }no command line"
	grep -q "^Input: $FIX/fp-callgraph/perf.data " "$d/nocpu.log" || why="${why:+$why; }no input line"
	grep -q "^Samples: $n read, $n written" "$d/nocpu.log" || why="${why:+$why; }no sample count $n"
	grep -q '^Event: cpu-clock' "$d/nocpu.log" || why="${why:+$why; }no event line"
	grep -q 'symbols' "$d/nocpu.log" || why="${why:+$why; }no symbol sources"
	grep -q '^Unresolved frames' "$d/nocpu.log" || why="${why:+$why; }no unresolved counts"
	grep -q 'no cpu field: PerfView will weight' "$d/nocpu.log" || why="${why:+$why; }no cpu warning without cpu"
	grep -q 'no cpu field' "$d/cpu.log" && why="${why:+$why; }cpu warning although samples have a cpu"
	grep -q '^Fields: comm,pid,tid,cpu,time' "$d/cpu.log" || why="${why:+$why; }cpu missing from the fields"
	if [ -z "$why" ]; then pass trace.zip-log; else fail trace.zip-log "$why" "$d/nocpu.log"; fi
fi

# ... and on stderr too: the log is read in PerfView, long after the recording could have been
# made again with --sample-cpu; -q silences it, as every warning
if selected trace.zip-nocpu-stderr; then
	d=$TMP/nocpu-stderr
	mkdir -p "$d"
	"$PERFCONV" -i "$FIX/fp-callgraph/perf.data" "${S[@]}" -o "$d/nocpu.trace.zip" 2>"$d/nocpu.err"
	"$PERFCONV" -i "$FIX/cpu-sample-cpu/perf.data" "${S[@]}" -o "$d/cpu.trace.zip" 2>"$d/cpu.err"
	"$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" "${S[@]}" -o "$d/q.trace.zip" 2>"$d/q.err"
	why=
	grep -q "^perfconv: warning: '$d/nocpu.trace.zip': [0-9]* of [0-9]* samples have no CPU field: .*--sample-cpu" "$d/nocpu.err" ||
		why="no warning on stderr for samples without a cpu"
	grep -q 'CPU field' "$d/cpu.err" && why="${why:+$why; }a warning although the samples have a cpu"
	[ -s "$d/q.err" ] && why="${why:+$why; }-q does not silence it"
	if [ -z "$why" ]; then pass trace.zip-nocpu-stderr; else fail trace.zip-nocpu-stderr "$why" "$d/nocpu.err"; fi
fi

# perf.data.txt is cut into chunks that worker threads format and deflate, each with the previous
# chunk's last bytes as dictionary, in a ring of slots.  Chunks of one sample each
# (PERFCONV_TEXT_CHUNK=1: thousands of chunks, the ring wrapping hundreds of times) and of a few
# samples must give the same text as the default, in an archive that unzip -t passes; and so must
# a chunk's deflated bytes that outgrow their first room (PERFCONV_DEFLATE_OUT=1: one byte, grown
# again and again while igzip goes on where it stopped, within a piece and at its end).
if selected trace.zip-chunks; then
	d=$TMP/chunks
	mkdir -p "$d"
	bad=
	for fx in dotnet-aspnet multi-event tracepoint-systemwide; do
		"$PERFCONV" -q -i "$FIX/$fx/perf.data" "${S[@]}" -o "$d/x.trace.zip" 2>"$d/err" &&
			unzip -p "$d/x.trace.zip" x.trace/perf.data.txt >"$d/default.txt" 2>>"$d/err" ||
			bad="${bad:-$fx: the default conversion failed}"
		for c in 1 3000; do
			PERFCONV_TEXT_CHUNK=$c "$PERFCONV" -q -i "$FIX/$fx/perf.data" "${S[@]}" -o "$d/x.trace.zip" 2>>"$d/err" &&
				unzip -tq "$d/x.trace.zip" >/dev/null 2>>"$d/err" &&
				unzip -p "$d/x.trace.zip" x.trace/perf.data.txt 2>>"$d/err" | cmp -s - "$d/default.txt" ||
				bad="${bad:-$fx: chunks of $c bytes give another perf.data.txt, or a broken archive}"
		done
		# a worker formats and deflates its chunk a piece at a time (PERFCONV_TEXT_PIECE=1: one
		# sample a piece, each longer than the piece), and takes its dictionary from the previous
		# chunk's last samples formatted again (chunks of 100000 bytes: some of their samples)
		for cp in "100000 " " 1" "100000 1" "3000 4096" " 4096"; do
			c=${cp% *} pc=${cp#* }
			PERFCONV_TEXT_PIECE=$pc PERFCONV_TEXT_CHUNK=$c "$PERFCONV" -q -i "$FIX/$fx/perf.data" "${S[@]}" -o "$d/x.trace.zip" 2>>"$d/err" &&
				unzip -tq "$d/x.trace.zip" >/dev/null 2>>"$d/err" &&
				unzip -p "$d/x.trace.zip" x.trace/perf.data.txt 2>>"$d/err" | cmp -s - "$d/default.txt" ||
				bad="${bad:-$fx: chunks of ${c:-the default} bytes in pieces of ${pc:-the default} bytes give another perf.data.txt, or a broken archive}"
		done
		for c in 3000 ""; do
			PERFCONV_DEFLATE_OUT=1 PERFCONV_TEXT_PIECE=${c:+1} PERFCONV_TEXT_CHUNK=$c "$PERFCONV" -q -i "$FIX/$fx/perf.data" "${S[@]}" -o "$d/x.trace.zip" 2>>"$d/err" &&
				unzip -tq "$d/x.trace.zip" >/dev/null 2>>"$d/err" &&
				unzip -p "$d/x.trace.zip" x.trace/perf.data.txt 2>>"$d/err" | cmp -s - "$d/default.txt" ||
				bad="${bad:-$fx: deflated chunks grown from one byte of room (chunks of ${c:-the default} bytes) give another perf.data.txt, or a broken archive}"
		done
		[ -s "$d/default.txt" ] || bad="${bad:-$fx: empty perf.data.txt}"
	done
	if [ -z "$bad" ]; then pass trace.zip-chunks; else fail trace.zip-chunks "$bad" "$d/err"; fi
fi

# The same input gives the same bytes (entry times come from the recording, not the clock).
if selected trace.zip-deterministic; then
	d=$TMP/det
	mkdir -p "$d/a" "$d/b"
	cp "$FIX/mono-jitmap/perf.data" "$d/in.data"
	touch -d '2024-05-06 07:08:10 UTC' "$d/in.data"
	a=(-q -i "$d/in.data" "${S[@]}" --map-dir "$FIX/mono-jitmap/maps")
	(cd "$d/a" && "$PERFCONV" "${a[@]}" -o x.trace.zip) 2>"$d/err"
	sleep 1
	(cd "$d/b" && "$PERFCONV" "${a[@]}" -o x.trace.zip) 2>>"$d/err"
	if ! cmp -s "$d/a/x.trace.zip" "$d/b/x.trace.zip"; then
		fail trace.zip-deterministic "two conversions of the same input differ" "$d/err"
	elif ! zipinfo -T "$d/a/x.trace.zip" | grep -q ' 20240506\.070810 x.trace/perf.data.txt$'; then
		zipinfo -T "$d/a/x.trace.zip" >"$d/zi"
		fail trace.zip-deterministic "entry times are not the recording's (2024-05-06 07:08:10)" "$d/zi"
	else
		pass trace.zip-deterministic
	fi
fi

# --include-perf-data adds the recording byte for byte; with stdin it is an error.
if selected trace.zip-include-perf-data; then
	d=$TMP/inc
	mkdir -p "$d"
	in=$FIX/fp-callgraph/perf.data
	"$PERFCONV" -q -i "$in" "${S[@]}" --include-perf-data -o "$d/x.trace.zip" 2>"$d/err"
	rc=$?
	if [ $rc != 0 ]; then
		fail trace.zip-include-perf-data "exit status $rc" "$d/err"
	elif ! unzip -p "$d/x.trace.zip" x.trace/perf.data | cmp -s - "$in"; then
		fail trace.zip-include-perf-data "x.trace/perf.data is not the recording"
	elif [ "$(zipinfo -1 "$d/x.trace.zip" | tr '\n' ' ')" != "x.trace/ x.trace/perf.data.txt x.trace/perf.data x.trace/perfcollect.log " ]; then
		zipinfo -1 "$d/x.trace.zip" >"$d/l"
		fail trace.zip-include-perf-data "entries" "$d/l"
	else
		pass trace.zip-include-perf-data
	fi
	# the archive's writeback is started every MiB while it is written (sync_file_range;
	# PERFCONV_WRITEBACK_STEP=4096 here, every 4 KiB), seen with strace where it is
	# installed, and its bytes are those of an archive written without it
	w=(-q -i "$in" "${S[@]}" --include-perf-data -o "$d/wb.trace.zip")
	if command -v strace >/dev/null; then
		# LeakSanitizer cannot run under ptrace (make asan): the run without strace checks leaks
		PERFCONV_WRITEBACK_STEP=4096 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -f -o "$d/trace" -e trace=sync_file_range "$PERFCONV" "${w[@]}" 2>"$d/err"
	else
		PERFCONV_WRITEBACK_STEP=4096 "$PERFCONV" "${w[@]}" 2>"$d/err"
	fi
	rc=$?
	n=$(grep -c 'sync_file_range(.*SYNC_FILE_RANGE_WRITE) = 0' "$d/trace" 2>/dev/null)
	cp "$d/wb.trace.zip" "$d/wb1.zip" 2>/dev/null
	"$PERFCONV" "${w[@]}" 2>>"$d/err"
	# the log names the command, the only part that differs
	if [ $rc != 0 ]; then
		fail trace.zip-writeback "exit status $rc" "$d/err"
	elif ! unzip -tq "$d/wb1.zip" >/dev/null 2>>"$d/err" || ! unzip -p "$d/wb1.zip" wb.trace/perf.data | cmp -s - "$in"; then
		fail trace.zip-writeback "a broken archive, or wb.trace/perf.data is not the recording" "$d/err"
	elif ! cmp -s <(unzip -p "$d/wb1.zip" wb.trace/perf.data.txt) <(unzip -p "$d/wb.trace.zip" wb.trace/perf.data.txt) ||
		[ "$(zipinfo -1 "$d/wb1.zip")" != "$(zipinfo -1 "$d/wb.trace.zip")" ]; then
		fail trace.zip-writeback "the archive differs from one written without writeback every 4 KiB"
	elif [ -s "$d/trace" ] && [ "${n:-0}" -lt 2 ]; then
		fail trace.zip-writeback "writeback started ${n:-0} times while writing, want one after each write past 4 KiB" "$d/trace"
	else
		pass trace.zip-writeback
	fi
	cat "$FIX/pipe-mode/pipe.data" | "$PERFCONV" -q -i - "${S[@]}" --include-perf-data -o "$d/y.trace.zip" 2>"$d/err"
	rc=$?
	if [ $rc = 1 ] && grep -q 'include-perf-data' "$d/err" && [ -z "$(ls "$d" | grep '^y\.')" ]; then
		pass trace.zip-include-perf-data-stdin
	else
		fail trace.zip-include-perf-data-stdin "want exit 1, a message and no output file; got $rc" "$d/err"
	fi
fi

# -f trace.zip to a pipe: the archive is complete, its folder named after the input.
if selected trace.zip-stdout; then
	d=$TMP/stdout
	mkdir -p "$d"
	"$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" "${S[@]}" -f trace.zip -o - 2>"$d/err" | cat >"$d/out.zip"
	if unzip -t "$d/out.zip" >"$d/t" 2>&1 && [ "$(zipinfo -1 "$d/out.zip" | head -1)" = "perf.trace/" ] &&
		"$PY" "$CHECK" fold "$d/out.zip" >/dev/null 2>>"$d/err"; then
		pass trace.zip-stdout
	else
		cat "$d/t" >>"$d/err"
		fail trace.zip-stdout "the archive written to a pipe is not valid" "$d/err"
	fi
fi

# Bad input: a clear error naming the file and the offset, no archive left behind.
if selected trace.zip-bad-input; then
	d=$TMP/bad
	mkdir -p "$d/out"
	head -c 70000 "$FIX/fp-callgraph/perf.data" >"$d/cut.data"
	"$PERFCONV" -q -i "$d/cut.data" "${S[@]}" -o "$d/out/x.trace.zip" 2>"$d/err"
	rc=$?
	if [ $rc = 1 ] && grep -q "cut.data.*offset" "$d/err" && [ -z "$(ls -A "$d/out")" ]; then
		pass trace.zip-bad-input
	else
		fail trace.zip-bad-input "want exit 1, the file and offset named, no file left; got $rc, $(ls -A "$d/out")" "$d/err"
	fi
fi

# PerfView's own parser on every archive made above (fixture paths have no spaces: fxargs splits).
interop() {
	local name=trace.zip-perfview proj=$top/tests/interop/perfview
	consumers "$name" || return
	if ! command -v dotnet >/dev/null 2>&1; then
		skip "$name" "dotnet is not installed"
		return
	fi
	local hash out log=$TMP/interop.log
	# a project that is not there is the test's own mistake, not a registry that is down
	if [ ! -f "$proj/PerfViewCheck.csproj" ]; then
		fail "$name" "no project at $proj"
		return
	fi
	hash=$(cat "$proj"/*.csproj "$proj"/*.cs | sha256sum | cut -c1-16)
	out=$proj/.build/$hash
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	if [ ! -f "$out/PerfViewCheck.dll" ]; then
		# packages are cached in tests/interop/perfview/.nuget: once restored, no network is needed
		if ! (cd "$proj" && timeout 300 dotnet restore --packages .nuget) >"$log" 2>&1; then
			skip "$name" "cannot restore Microsoft.Diagnostics.Tracing.TraceEvent (no NuGet registry?): $(grep -m1 -iE 'error|unable' "$log" | cut -c1-120)"
			return
		fi
		if ! (cd "$proj" && timeout 600 dotnet build -c Release --no-restore -o "$out") >>"$log" 2>&1; then
			fail "$name" "tests/interop/perfview does not build" "$log"
			return
		fi
	fi
	local fx d mode want got events cpus ss
	for fx in "${fixtures[@]}"; do
		selected "$fx/$name" || continue
		d=$TMP/$fx
		[ -f "$d/$fx.trace.zip" ] || continue
		mode=names
		# perf-map and jitted frames: PerfView rewrites their names (module from the text), so only
		# the number of frames is compared
		case " ${fxargs[$fx]} " in *" --map-dir "*) mode=depth ;; esac
		# shellcheck disable=SC2086
		# PerfViewCheck folds as stackcollapse-perf.pl --tid, with "?" for the pid
		PERFCONV_DEBUG_DIR=${fxdebug[$fx]} "$PERFCONV" -q ${fxargs[$fx]} --tid -o - 2>"$d/err" | no_pid >"$d/tid.folded"
		# PerfView strips the brackets of "([vdso])": stackcollapse's [[vdso]] is PerfView's [vdso]
		if [ $mode = names ]; then
			sed 's/\[\[\([^];]*\)\]\]/[\1]/g' "$d/tid.folded"
		else
			awk '{ w = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); k = f[1]; for (i = 2; i <= n; i++) k = k ";f"; s[k] += w }
			     END { for (k in s) print k, s[k] }' "$d/tid.folded" | sort
		fi >"$d/pv-want.folded"
		if ! dotnet "$out/PerfViewCheck.dll" "$d/$fx.trace.zip" $mode "$d/pv-got.folded" >"$d/pv.out" 2>"$d/pv.err"; then
			fail "$fx/$name" "TraceEvent did not read the archive" "$d/pv.err"
			continue
		fi
		# the default's folded output draws a run of unnamed frames of one binary as one
		# shellcheck disable=SC2086
		if [ $mode = names ] && folds_runs ${fxargs[$fx]}; then
			python3 tests/tools/fold_runs.py <"$d/pv-got.folded" >"$d/pv-got.runs" && mv "$d/pv-got.runs" "$d/pv-got.folded"
		fi
		if ! diff -u "$d/pv-want.folded" "$d/pv-got.folded" --label "perfconv --tid" --label "TraceEvent ($mode)" >"$d/diff"; then
			fail "$fx/$name" "PerfView's samples differ from the folded output" "$d/diff"
			continue
		fi
		read -r events cpus ss _ < <(sed 's/[a-z]*=//g' "$d/pv.out")
		want=$(unzip -p "$d/$fx.trace.zip" "$fx.trace/perfcollect.log" | sed -n 's/^Samples: [0-9]* read, \([0-9]*\) written.*/\1/p')
		if [ "$events" != "$want" ]; then
			fail "$fx/$name" "TraceEvent read $events samples, perfconv wrote $want"
		elif ! grep -q ' sched:' "$d/pv-got.folded" 2>/dev/null && ! unzip -p "$d/$fx.trace.zip" "$fx.trace/perf.data.txt" | grep -q -m1 ' sched:' &&
			[ "$ss" != $((events - cpus)) ]; then
			fail "$fx/$name" "the CPU stack view has $ss samples, not $events less one per CPU ($cpus)" "$d/pv.out"
		else
			pass "$fx/$name ($(cat "$d/pv.out"))"
		fi
	done
}
for fx in "${fixtures[@]}"; do
	if selected "$fx/trace.zip-perfview"; then
		interop
		break
	fi
done
