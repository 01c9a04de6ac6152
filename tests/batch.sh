#!/usr/bin/env bash
# tests/batch.sh - batch mode, sample filters, progress and atomic output, on the real fixtures.
#
#   batch/*     perfconv -O DIR [-j N] [-f LIST] FILE|DIR...: output names, one output per format
#               equal to the single-file conversion, a bad input and a crashed worker reported while
#               the others convert, a worker's inputs one after another as if each were alone,
#               up-to-date skipping and --force, inputs never modified
#   filter/*    --pid=, --tid=, --comm, --time against `perf script` with the same filter (per-thread
#               sums of the sample periods must be equal), the "--pid N" usage error, a filter that
#               keeps nothing (an error naming what is there), --comm in the folded spelling
#   progress/*  the progress line under a pseudo-terminal: shown, rate-limited, erased, silenced by -q
#   write/*     write errors: /dev/full, a full tmpfs, a read-only directory, a missing one (reported
#               before the conversion, naming the output); partial files removed
#
# Run by tests/run.sh (one line per case in its format: ok / FAIL / skip).
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2" only cases whose name has a word
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" batch
# write/read-only runs perfconv as another user, who needs to reach the files in TMP
chmod 755 "$TMP"
S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms")
need_perfconv batch

# The input tree of a transfer box: two hosts with the same file name, a pipe capture under a name
# that only its magic identifies, a truncated recording, and files that are not recordings.
IN=$TMP/in
mkdir -p "$IN/host1" "$IN/host2" "$IN/host3/sub" "$IN/empty"
cp "$FIX/fp-callgraph/perf.data" "$IN/host1/perf.data"
cp "$FIX/mt-threads/perf.data" "$IN/host2/perf.data"
cp "$FIX/pipe-mode/pipe.data" "$IN/host3/sub/capture-1"
head -c 60000 "$FIX/cpu-systemwide/perf.data" >"$IN/host3/cut.data"
echo "not a recording" >"$IN/host3/notes.txt"
ln -s .. "$IN/host3/loop"
sums() { find "$IN" -type f -print0 | sort -z | xargs -0 sha256sum; }
sums >"$TMP/sums.before"

# single IN OUT: the single-file conversion, the reference for the batch outputs
single() { "$PERFCONV" -q -i "$1" "${S[@]}" -o "$2"; }

O=$TMP/out
if selected batch/tree; then
	"$PERFCONV" -O "$O" -j 2 "${S[@]}" "$IN" >"$TMP/b.out" 2>"$TMP/b.err"
	rc=$?
	bad=
	[ "$rc" = 1 ] || bad="exit status $rc, expected 1 (one input is truncated)"
	for f in host1/perf.data host2/perf.data host3/sub/capture-1; do
		if [ ! -f "$O/$f.folded" ]; then
			bad="${bad:-no $O/$f.folded}"
			continue
		fi
		single "$IN/$f" "$TMP/ref.folded"
		cmp -s "$TMP/ref.folded" "$O/$f.folded" || bad="${bad:-$f.folded differs from the single-file conversion}"
	done
	[ -e "$O/host3/cut.data.folded" ] && bad="${bad:-an output was written for the truncated input}"
	[ -e "$O/host3/notes.txt.folded" ] && bad="${bad:-notes.txt was taken for a recording}"
	grep -q "FAIL '$IN/host3/cut.data': .*offset [0-9]" "$TMP/b.err" || bad="${bad:-no FAIL line naming cut.data and its offset}"
	n_ok=$(grep -c "^perfconv: ok   '" "$TMP/b.err")
	[ "$n_ok" = 3 ] || bad="${bad:-$n_ok ok lines, expected 3}"
	grep -qE "^perfconv: ok   '$IN/host1/perf.data': 2121 samples, [0-9.]+ s, [0-9.]+% of sampled frames unresolved$" "$TMP/b.err" ||
		bad="${bad:-the per-file line of host1 lacks samples, seconds or the share of sampled frames unresolved}"
	grep -q "^perfconv: 4 files: 3 converted, 0 up to date, 1 failed; " "$TMP/b.err" || bad="${bad:-wrong summary line}"
	[ -s "$TMP/b.out" ] && bad="${bad:-batch mode wrote to stdout}"
	[ -n "$(find "$O" -name '*.tmp.*')" ] && bad="${bad:-temporary files left behind}"
	if [ -n "$bad" ]; then fail batch/tree "$bad" "$TMP/b.err"; else pass batch/tree; fi
fi

if selected batch/uptodate; then
	rm -rf "$O"
	"$PERFCONV" -q -O "$O" "${S[@]}" "$IN/host1" >/dev/null 2>&1
	before=$(stat -c %Y.%y "$O/perf.data.folded" 2>/dev/null)
	sleep 0.05
	"$PERFCONV" -O "$O" "${S[@]}" "$IN/host1" 2>"$TMP/u.err"
	rc1=$?
	after=$(stat -c %Y.%y "$O/perf.data.folded" 2>/dev/null)
	"$PERFCONV" -O "$O" --force "${S[@]}" "$IN/host1" 2>"$TMP/f.err"
	forced=$(stat -c %Y.%y "$O/perf.data.folded" 2>/dev/null)
	touch "$IN/host1/perf.data"
	"$PERFCONV" -q -O "$O" "${S[@]}" "$IN/host1" 2>/dev/null
	touched=$(stat -c %Y.%y "$O/perf.data.folded" 2>/dev/null)
	cp -p "$FIX/fp-callgraph/perf.data" "$IN/host1/perf.data" # back to the recorded mtime
	if [ -z "$before" ] || [ "$rc1" != 0 ] || [ "$before" != "$after" ] || ! grep -q "skip '.*': up to date" "$TMP/u.err"; then
		fail batch/uptodate "an output newer than its input was converted again (exit $rc1)" "$TMP/u.err"
	elif [ "$forced" = "$after" ] || ! grep -q "1 converted" "$TMP/f.err"; then
		fail batch/uptodate "--force did not convert again" "$TMP/f.err"
	elif [ "$touched" = "$forced" ]; then
		fail batch/uptodate "an input newer than its output was not converted again"
	else
		pass batch/uptodate
	fi
fi

# A conversion that hangs (here: a FIFO nobody writes, whose open blocks, as a stalled network
# file system would) is stopped by --timeout; the files around it convert.
if selected batch/timeout; then
	rm -rf "$O"
	rm -f "$TMP/stuck.data"
	mkfifo "$TMP/stuck.data"
	start=$SECONDS
	"$PERFCONV" -O "$O" -j 2 --timeout 1 "${S[@]}" "$IN/host1/perf.data" "$TMP/stuck.data" "$IN/host3/sub/capture-1" 2>"$TMP/t.err"
	rc=$?
	secs=$((SECONDS - start))
	nout=$(find "$O" -type f -name '*.folded' -size +0 | wc -l)
	left=$(find "$O" -name '*.tmp.*' -o -name 'stuck*' | wc -l)
	if [ "$rc" = 1 ] && grep -q "FAIL '$TMP/stuck.data': stopped after 1 s (--timeout)" "$TMP/t.err" &&
		grep -q "3 files: 2 converted, 0 up to date, 1 failed" "$TMP/t.err" && [ "$nout" = 2 ] &&
		[ "$left" = 0 ] && [ "$secs" -lt 10 ]; then
		pass batch/timeout
	else
		fail batch/timeout "exit $rc, $nout outputs, $left leftovers in ${secs}s: expected 1, 2, 0, the stuck file stopped" "$TMP/t.err"
	fi
	rm -f "$TMP/stuck.data"
	"$PERFCONV" -i "$FIX/fp-callgraph/perf.data" --timeout 5 -o /dev/null 2>"$TMP/t2.err"
	rc=$?
	if [ "$rc" = 2 ] && grep -q -- "--timeout needs -O OUTDIR" "$TMP/t2.err"; then
		pass batch/timeout-usage
	else
		fail batch/timeout-usage "exit $rc: --timeout without -O must be a usage error" "$TMP/t2.err"
	fi
fi

if selected batch/crash; then
	rm -rf "$O"
	PERFCONV_TEST_CRASH=host2 "$PERFCONV" -O "$O" -j 2 "${S[@]}" "$IN/host1" "$IN/host2" 2>"$TMP/c.err"
	rc=$?
	# both directories hold a perf.data: the outputs are named after the whole paths
	outs=$(find "$O" -type f)
	if [ "$rc" = 1 ] && grep -q "FAIL '$IN/host2/perf.data': the conversion crashed (signal 6" "$TMP/c.err" &&
		[ "$outs" = "$O/${IN#/}/host1/perf.data.folded" ] && [ -s "$outs" ]; then
		pass batch/crash
	else
		fail batch/crash "exit $rc: a crashed worker must be a failed file with its signal while the others convert" "$TMP/c.err"
	fi
fi

# A worker converts one input after another: a crash takes only the input it was converting
# (the parent starts another worker for the rest), and nothing of one conversion reaches the
# next, --time in percent (resolved against each recording's own sample times) included.
if selected batch/worker-crash; then
	rm -rf "$O"
	PERFCONV_TEST_CRASH=host2 "$PERFCONV" -O "$O" -j 1 "${S[@]}" "$IN/host1/perf.data" "$IN/host2/perf.data" \
		"$IN/host3/sub/capture-1" 2>"$TMP/wc.err"
	rc=$?
	n=$(find "$O" -type f -name '*.folded' -size +0 | wc -l)
	if [ "$rc" = 1 ] && grep -q "FAIL '$IN/host2/perf.data': the conversion crashed (signal 6" "$TMP/wc.err" &&
		grep -q "^perfconv: 3 files: 2 converted, 0 up to date, 1 failed" "$TMP/wc.err" && [ "$n" = 2 ] &&
		[ -s "$O/capture-1.folded" ]; then
		pass batch/worker-crash
	else
		fail batch/worker-crash "exit $rc, $n outputs: a crash in one worker must fail that input alone, the one after it converts" "$TMP/wc.err"
	fi
fi

if selected batch/worker-many; then
	rm -rf "$O"
	"$PERFCONV" -q -O "$O" -j 1 --time 50% "${S[@]}" "$IN/host2/perf.data" "$IN/host1/perf.data" \
		"$FIX/cpu-systemwide/perf.data" "$FIX/multi-event/perf.data" 2>"$TMP/wm.err"
	rc=$?
	bad=
	[ "$rc" = 0 ] || bad="exit status $rc"
	for f in "$IN/host1/perf.data" "$IN/host2/perf.data" "$FIX/cpu-systemwide/perf.data" "$FIX/multi-event/perf.data"; do
		out=$O/${f#/}.folded
		[ -f "$out" ] || out=$O/$(basename "$f").folded
		"$PERFCONV" -q -i "$f" --time 50% "${S[@]}" -o "$TMP/ref.folded" 2>/dev/null
		if [ ! -s "$out" ]; then
			bad="${bad:-no output for $f}"
		elif ! cmp -s "$TMP/ref.folded" "$out"; then
			bad="${bad:-$out differs from the single conversion of $f}"
		fi
	done
	if [ -n "$bad" ]; then fail batch/worker-many "$bad" "$TMP/wm.err"; else pass batch/worker-many; fi
fi

if selected batch/names; then
	# file arguments with the same name: each is named after its whole path; a file given twice once
	rm -rf "$O"
	"$PERFCONV" -q -O "$O" "${S[@]}" "$IN/host1/perf.data" "$IN/host2/perf.data" "$IN/host2/../host2/perf.data" 2>"$TMP/n.err"
	rc=$?
	a=$O/${IN#/}/host1/perf.data.folded b=$O/${IN#/}/host2/perf.data.folded
	n=$(find "$O" -type f | wc -l)
	if [ "$rc" = 0 ] && [ -s "$a" ] && [ -s "$b" ] && [ "$n" = 2 ] && ! cmp -s "$a" "$b"; then
		pass batch/names
	else
		fail batch/names "exit $rc, $n files; expected $a and $b" "$TMP/n.err"
	fi
fi

if selected batch/jobs; then
	rm -rf "$TMP/j1" "$TMP/j2"
	"$PERFCONV" -q -O "$TMP/j1" -j 1 "${S[@]}" "$IN" "$FIX/multi-event/perf.data" 2>/dev/null
	"$PERFCONV" -q -O "$TMP/j2" -j 3 "${S[@]}" "$IN" "$FIX/multi-event/perf.data" 2>/dev/null
	if [ -s "$TMP/j1/perf.data.folded" ] && diff -r "$TMP/j1" "$TMP/j2" >"$TMP/j.diff" 2>&1; then
		pass batch/jobs
	else
		fail batch/jobs "-j 3 and -j 1 give different files" "$TMP/j.diff"
	fi
fi

# same A B: equal files; for zip archives (trace.zip), whose top directory is named after the output
# and whose log holds the command line, equal entries apart from those two; for pprof profiles, whose
# comment holds it, equal go tool pprof -raw apart from the comments.
same() {
	cmp -s "$1" "$2" && return 0
	# pprof profiles hold the command line in a comment: the same profile read by go tool pprof
	if [ "$(head -c 2 "$1" | od -An -tx1 | tr -d ' ')" = 1f8b ] && command -v go >/dev/null 2>&1; then
		cmp -s <(go tool pprof -symbolize=none -raw "$1" 2>>"$TMP/go.err" | grep -v "^Comment:") \
			<(go tool pprof -symbolize=none -raw "$2" 2>>"$TMP/go.err" | grep -v "^Comment:") && return 0
	fi
	python3 - "$1" "$2" <<'EOF' 2>/dev/null
import sys, zipfile
def entries(p):
    z = zipfile.ZipFile(p)
    return {i.filename.split("/", 1)[-1]: z.read(i) for i in z.infolist()
            if not i.filename.endswith(".log") and not i.filename.endswith("/")}
a, b = entries(sys.argv[1]), entries(sys.argv[2])
sys.exit(0 if a and a == b else 1)
EOF
}

if selected batch/formats; then
	# every format of the registry from one read of each input, each equal to its single conversion
	# (but runtime, the report of the .NET runtime's events, which these recordings do not carry)
	fmts=$("$PERFCONV" --help | sed -n 's/^Formats: *//p' | tr ' ' ',' | sed 's/,runtime\b//')
	rm -rf "$O"
	"$PERFCONV" -q -O "$O" -f "$fmts" "${S[@]}" "$IN/host1" 2>"$TMP/fm.err"
	rc=$?
	bad=
	[ "$rc" = 0 ] || bad="exit status $rc"
	for f in ${fmts//,/ }; do
		out=$(find "$O" -type f -name "perf.data*" -newer "$TMP/sums.before" | while read -r p; do
			"$PERFCONV" -q -i "$IN/host1/perf.data" "${S[@]}" -f "$f" -o "$TMP/one" 2>/dev/null
			same "$TMP/one" "$p" && echo "$p"
		done | head -n 1)
		[ -n "$out" ] || bad="${bad:-no output equal to the single-file '$f' conversion}"
	done
	"$PERFCONV" -O "$O" -f folded,no-such-format "$IN/host1" >/dev/null 2>"$TMP/fm2.err"
	rc2=$?
	[ "$rc2" = 2 ] && grep -q no-such-format "$TMP/fm2.err" || bad="${bad:-an unknown format in the list: exit $rc2, expected 2}"
	if [ -n "$bad" ]; then cat "$TMP/go.err" >>"$TMP/fm.err" 2>/dev/null; fail batch/formats "$bad (formats: $fmts)" "$TMP/fm.err"; else pass batch/formats; fi
fi

if selected batch/usage; then
	bad=
	"$PERFCONV" -O "$O" >/dev/null 2>&1
	[ $? = 2 ] || bad="-O without inputs must be a usage error"
	"$PERFCONV" -O "$O" -o x "$IN" >/dev/null 2>&1
	[ $? = 2 ] || bad="${bad:--O with -o must be a usage error}"
	"$PERFCONV" -j 2 -i "$IN/host1/perf.data" >/dev/null 2>&1
	[ $? = 2 ] || bad="${bad:--j without -O must be a usage error}"
	"$PERFCONV" -O "$O" -j 0 "$IN" >/dev/null 2>&1
	[ $? = 2 ] || bad="${bad:--j 0 must be a usage error}"
	"$PERFCONV" -i "$IN/host1/perf.data" "$IN/host2/perf.data" >/dev/null 2>&1
	[ $? = 2 ] || bad="${bad:-several inputs without -O must be a usage error}"
	if [ -n "$bad" ]; then fail batch/usage "$bad"; else pass batch/usage; fi
fi

if selected batch/inputs-unchanged; then
	sums >"$TMP/sums.after"
	if cmp -s "$TMP/sums.before" "$TMP/sums.after"; then
		pass batch/inputs-unchanged
	else
		diff "$TMP/sums.before" "$TMP/sums.after" >"$TMP/sums.diff"
		fail batch/inputs-unchanged "an input changed" "$TMP/sums.diff"
	fi
fi

# ---------------------------------------------------------------------------------------------------
# Filters against perf script.  perfconv's --tid output names each thread ("comm-pid/tid"); the
# weight of each tid (sum of the folded counts) must be the sum of the periods of the samples that
# `perf script` prints for that tid with the same filter.
perf_ok=0
if command -v perf >/dev/null 2>&1 && perf script -i "$FIX/mt-threads/perf.data" -F tid,period >/dev/null 2>&1; then
	perf_ok=1
fi
filter_case() {
	local name=$1 fx=$2 pflt=$3
	shift 3
	selected "filter/$name" || return 0
	if [ "$perf_ok" != 1 ]; then
		skip "filter/$name" "perf is not installed or cannot read the fixtures (scripts/install-deps.sh --bench)"
		return
	fi
	local f=$FIX/$fx/perf.data
	eval "perf script -i \"\$f\" $pflt -F tid,period" 2>/dev/null |
		awk '{w[$1] += $2} END {for (t in w) print t, w[t]}' | sort >"$TMP/perf.w"
	"$PERFCONV" -q -i "$f" "${S[@]}" --tid "$@" -o - 2>"$TMP/pc.err" |
		awk '{split($1, a, ";"); n = split(a[1], b, "/"); w[b[n]] += $NF} END {for (t in w) print t, w[t]}' |
		sort >"$TMP/pc.w"
	if [ ! -s "$TMP/perf.w" ] && [ "$name" != pid-none ]; then
		fail "filter/$name" "perf script printed no samples: the case tests nothing"
	elif cmp -s "$TMP/perf.w" "$TMP/pc.w"; then
		pass "filter/$name"
	else
		diff "$TMP/perf.w" "$TMP/pc.w" >"$TMP/w.diff"
		cat "$TMP/pc.err" >>"$TMP/w.diff"
		fail "filter/$name" "per-thread weights differ from perf script $pflt" "$TMP/w.diff"
	fi
}
filter_case none mt-threads ""
filter_case pid mt-threads "--pid=16988" --pid=16988
filter_case pid-none mt-threads "--pid=16990" --pid=16990 # a thread, not a process: no samples (an error, filter/nothing-kept)
filter_case tid-list mt-threads "--tid=16991,16993" --tid=16991,16993
filter_case comm mt-threads "--comm w-alpha-0,w-beta-3" --comm w-alpha-0,w-beta-3
filter_case comm-pid mt-threads "--comm mt --pid=16988" --comm mt --pid=16988
filter_case time-abs mt-threads "--time 1291.5,1291.6" --time 1291.5,1291.6
filter_case time-open mt-threads "--time 1291.7," --time 1291.7,
filter_case time-ranges mt-threads "--time '1291.5,1291.55 1291.6,1291.62'" --time "1291.5,1291.55 1291.6,1291.62"
filter_case time-slice mt-threads "--time 10%/2" --time 10%/2
filter_case time-slices mt-threads "--time 10%/1,10%/3" --time 10%/1,10%/3
filter_case time-pct-range mt-threads "--time 0%-25%,50%-60%" --time 0%-25%,50%-60%
filter_case time-pct mt-threads "--time 30%" --time 30%
filter_case cpu-pid cpu-systemwide "--pid=0" --pid=0

if selected filter/batch; then
	# filters apply in batch mode too, before any format sees the samples
	rm -rf "$O"
	"$PERFCONV" -q -O "$O" --tid=16991 "${S[@]}" "$IN/host2" 2>/dev/null
	"$PERFCONV" -q -i "$IN/host2/perf.data" --tid=16991 "${S[@]}" -o "$TMP/ref.folded"
	if [ -s "$TMP/ref.folded" ] && cmp -s "$TMP/ref.folded" "$O/perf.data.folded" &&
		[ "$(wc -l <"$TMP/ref.folded")" -lt "$(wc -l <"$FIX/mt-threads/expected/folded.txt")" ]; then
		pass filter/batch
	else
		fail filter/batch "batch output with --tid=16991 differs from the single conversion, or filtered nothing"
	fi
fi

if selected filter/usage; then
	bad=
	for args in "--pid 16990" "--tid 16991,16993"; do
		# shellcheck disable=SC2086
		"$PERFCONV" -i "$FIX/mt-threads/perf.data" $args >/dev/null 2>"$TMP/u.err"
		rc=$?
		want=${args% *}=${args#* }
		[ "$rc" = 2 ] && grep -qF -- "$want" "$TMP/u.err" || bad="${bad:-'$args': exit $rc, expected 2 and a hint to write $want}"
	done
	for t in "1291.6,1291.5" "abc" "10%/x" "120%-130%" "1,2,3"; do
		"$PERFCONV" -i "$FIX/mt-threads/perf.data" --time "$t" -o - >/dev/null 2>"$TMP/u.err"
		rc=$?
		[ "$rc" = 2 ] && grep -qF -- "$t" "$TMP/u.err" || bad="${bad:---time '$t': exit $rc, expected 2 naming the value}"
	done
	"$PERFCONV" -i "$FIX/mt-threads/perf.data" --pid=x1 -o - >/dev/null 2>&1
	[ $? = 2 ] || bad="${bad:---pid=x1 must be a usage error}"
	# the bare flag is still the folded format's --pid
	"$PERFCONV" -q -i "$FIX/mt-threads/perf.data" "${S[@]}" --perf-compat --pid -o "$TMP/p.folded"
	cmp -s "$TMP/p.folded" "$FIX/mt-threads/expected/folded-pid.txt" || bad="${bad:---pid alone no longer gives folded-pid.txt}"
	if [ -n "$bad" ]; then fail filter/usage "$bad" "$TMP/u.err"; else pass filter/usage; fi
fi

if selected filter/nothing-kept; then
	# A filter that keeps no sample is an error before any output is written (an empty graph
	# looks like a broken one), naming the pids and comms the recording has, with their samples.
	bad=
	for args in "--pid=16990" "--tid=1" "--comm no-such-thread" "--time 1.0,2.0"; do
		rm -f "$TMP/nk.svg"
		# shellcheck disable=SC2086
		"$PERFCONV" -q -i "$FIX/mt-threads/perf.data" "${S[@]}" $args -o "$TMP/nk.svg" 2>"$TMP/nk.err"
		rc=$?
		[ "$rc" = 1 ] && [ ! -e "$TMP/nk.svg" ] && grep -qF -- "no sample matches $args" "$TMP/nk.err" &&
			grep -q "pids with samples: 16988 mt ([0-9]* samples)" "$TMP/nk.err" &&
			grep -q "comms: 'w-[a-z]*-[0-9]' ([0-9]* samples)" "$TMP/nk.err" ||
			bad="${bad:-'$args': exit $rc, expected 1, no output and the pids and comms present}"
	done
	# the folded output's spelling of a comm with a space (.NET_Finalizer) selects it
	DE=$FIX/dotnet-events/perf.data
	"$PERFCONV" -q -i "$DE" --comm '.NET Finalizer' -o "$TMP/nk-space.folded" 2>>"$TMP/nk.err"
	"$PERFCONV" -q -i "$DE" --comm .NET_Finalizer -o "$TMP/nk-under.folded" 2>>"$TMP/nk.err"
	[ -s "$TMP/nk-space.folded" ] && cmp -s "$TMP/nk-space.folded" "$TMP/nk-under.folded" &&
		grep -q '^\.NET_Finalizer;' "$TMP/nk-under.folded" ||
		bad="${bad:---comm .NET_Finalizer does not keep what --comm '.NET Finalizer' keeps}"
	# a --pid-map of a pid without samples warns, naming the pids that have some
	"$PERFCONV" -i "$DE" --pid-map 99999=1 -o "$TMP/nk-map.folded" 2>"$TMP/nk-map.err"
	rc=$?
	[ "$rc" = 0 ] && grep -q "warning: .*--pid-map 99999=1: pid 99999 has no samples.*pids with samples: 673 EventsProbe (607 samples)" \
		"$TMP/nk-map.err" || bad="${bad:---pid-map 99999=1: exit $rc, expected 0 and a warning naming pid 673}"
	cat "$TMP/nk-map.err" >>"$TMP/nk.err"
	if [ -n "$bad" ]; then fail filter/nothing-kept "$bad" "$TMP/nk.err"; else pass filter/nothing-kept; fi
fi

if selected filter/no-sample-time; then
	# percentages need the SAMPLE_TIME feature, which a pipe stream does not have
	"$PERFCONV" -q -i "$FIX/pipe-mode/pipe.data" --time 10%/1 -o "$TMP/nt.folded" 2>"$TMP/nt.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -q "pipe.data.*SAMPLE_TIME" "$TMP/nt.err" && [ ! -e "$TMP/nt.folded" ]; then
		pass filter/no-sample-time
	else
		fail filter/no-sample-time "exit $rc, expected 1 with a message about the missing sample times" "$TMP/nt.err"
	fi
fi

# ---------------------------------------------------------------------------------------------------
# Progress under a pseudo-terminal.  The input is fed through a pipe over about two seconds, so
# the conversion is long whatever the machine's speed.  The file mode, with its ETA, is tested on
# a fixture with the half-second delay taken away, and on a large recording too when there is one
# (bench/work or PROGRESS_INPUT).
if selected progress; then
	python3 - "$PERFCONV" "$FIX/pipe-mode/pipe.data" "${PROGRESS_INPUT:-bench/work/perf-50.data}" "$ROOT" "$FIX" <<'EOF'
import os, pty, re, select, subprocess, sys, time

perfconv, pipe_in, big, root, fixtures = sys.argv[1:6]

def run(args, feed=None, tty=True):
    """run perfconv with stderr on a pty (or a pipe); returns (rc, stderr bytes, seconds)"""
    if tty:
        master, slave = pty.openpty()
    else:
        master, slave = os.pipe()
    t = time.monotonic()
    p = subprocess.Popen([perfconv] + args, stdin=subprocess.PIPE if feed else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    if feed:
        data = open(feed, "rb").read()
        step = len(data) // 40 + 1
        for i in range(0, len(data), step):
            p.stdin.write(data[i:i + step]); p.stdin.flush(); time.sleep(0.05)
        p.stdin.close()
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 30)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    rc = p.wait()
    os.close(master)
    return rc, out, time.monotonic() - t

def check(name, rc, out, secs, want_eta):
    draws = out.count(b"\r\x1b[K")
    lines = re.findall(rb"\r\x1b\[K(perfconv: [^\r\n]*)(?=\r(?!\n))", out)
    why = None
    if rc != 0:
        why = "exit status %d" % rc
    elif not lines:
        why = "no progress line on the terminal"
    elif not re.search(rb"[0-9.]+ MB.* [0-9]+ samples, [0-9.]+ MB/s", lines[-1]):
        why = "the progress line lacks bytes, samples or rate: %r" % lines[-1]
    elif want_eta and b"ETA" not in lines[-1]:
        why = "no ETA for a file of known size: %r" % lines[-1]
    elif draws > 5 * secs + 3:
        why = "%d redraws in %.1f s: more than five a second" % (draws, secs)
    else:
        # the last line drawn must be erased ("\r ESC[K") before anything else is printed
        end = list(re.finditer(rb"\r\x1b\[K(perfconv: [^\r\n]*)(?=\r(?!\n))", out))[-1].end()
        if out[end:end + 4] != b"\r\x1b[K":
            why = "the progress line is not erased at the end: %r" % out[end:end + 40]
    print(("FAIL  %s: %s" % (name, why)) if why else "ok    %s" % name)

rc, out, secs = run(["-i", "-", "--symfs", root, "-o", "/dev/null"], feed=pipe_in)
check("progress/pipe", rc, out, secs, False)
rc, out, _ = run(["-q", "-i", "-", "-o", "/dev/null"], feed=pipe_in)
print("ok    progress/quiet" if rc == 0 and not out else "FAIL  progress/quiet: -q printed %r" % out[:80])
rc, out, _ = run(["-i", "-", "-o", "/dev/null"], feed=pipe_in, tty=False)
print("ok    progress/not-a-tty" if rc == 0 and b"\x1b[K" not in out else "FAIL  progress/not-a-tty: progress on a pipe")
# A file converts in well under the half second after which progress starts, so the delay is
# taken away; the bench recording (when there is one) is read too.
os.environ["PERFCONV_PROGRESS_DELAY"] = "0"
rc, out, secs = run(["-i", fixtures + "/multi-event/perf.data", "--symfs", root, "-o", "/dev/null"])
check("progress/file-eta", rc, out, secs, True)
if os.path.exists(big) and os.path.getsize(big) > 20_000_000:
    rc, out, secs = run(["-i", big, "-o", "/dev/null"])
    check("progress/file-eta-large", rc, out, secs, True)
del os.environ["PERFCONV_PROGRESS_DELAY"]
EOF
fi

# ---------------------------------------------------------------------------------------------------
# Write errors: the message names the path, the exit status is 1, no partial file stays.
if selected write/dev-full; then
	"$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" "${S[@]}" -o - >/dev/full 2>"$TMP/w.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -q "stdout.*No space left" "$TMP/w.err"; then
		pass write/dev-full
	else
		fail write/dev-full "exit $rc, expected 1 and 'No space left' for stdout" "$TMP/w.err"
	fi
fi
if selected write/tmpfs-full; then
	mnt=$TMP/small
	mkdir -p "$mnt"
	if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
		# leave one page free: the first folded file (host1's, 728 bytes) fits, the second does not
		mkdir -p "$mnt/out"
		dd if=/dev/zero of="$mnt/fill" bs=4096 count=14 2>/dev/null
		"$PERFCONV" -O "$mnt/out" "${S[@]}" "$IN/host1/perf.data" "$IN/host2/perf.data" "$IN/host3/sub/capture-1" 2>"$TMP/w.err"
		rc=$?
		left=$(find "$mnt" -name '*.tmp.*' | wc -l)
		if [ "$rc" = 1 ] && grep -q "No space left" "$TMP/w.err" && grep -q "$mnt/out/.*folded" "$TMP/w.err" && [ "$left" = 0 ]; then
			pass write/tmpfs-full
		else
			fail write/tmpfs-full "exit $rc, $left temporary files left; expected 1 and the path with 'No space left'" "$TMP/w.err"
		fi
		umount "$mnt"
	else
		skip write/tmpfs-full "cannot mount a small tmpfs here (needs root)"
	fi
fi
if selected write/read-only; then
	ro=$TMP/ro
	mkdir -p "$ro"
	chmod 555 "$ro"
	as_user=()
	if [ "$(id -u)" = 0 ]; then
		if command -v setpriv >/dev/null 2>&1 && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
			as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		fi
	fi
	if [ "$(id -u)" = 0 ] && [ "${#as_user[@]}" = 0 ]; then
		skip write/read-only "running as root without setpriv: permissions do not apply"
	else
		"${as_user[@]}" "$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" "${S[@]}" -o "$ro/out.folded" 2>"$TMP/w.err"
		rc=$?
		"${as_user[@]}" "$PERFCONV" -q -O "$ro/batch" "${S[@]}" "$IN/host1" 2>"$TMP/w2.err"
		rc2=$?
		if [ "$rc" = 1 ] && grep -q "$ro/out.folded.*Permission denied" "$TMP/w.err" && [ "$rc2" = 1 ] &&
			grep -q "$ro/batch.*Permission denied" "$TMP/w2.err" && [ -z "$(ls -A "$ro")" ]; then
			pass write/read-only
		else
			cat "$TMP/w2.err" >>"$TMP/w.err"
			fail write/read-only "exit $rc/$rc2, expected 1 with the path and 'Permission denied', nothing written" "$TMP/w.err"
		fi
	fi
	chmod 755 "$ro"
fi
# write/no-dir: an output in a directory that does not exist fails before the input is even
# opened (the input here does not exist either, and the message is about the output), names the
# output as given, never its temporary name; the same for a directory that is a file
if selected write/no-dir; then
	"$PERFCONV" -q -i "$TMP/no-such-input.data" "${S[@]}" -o "$TMP/nodir/out.svg" 2>"$TMP/nd.err"
	rc=$?
	: >"$TMP/afile"
	"$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" "${S[@]}" -o "$TMP/afile/out.folded" 2>>"$TMP/nd.err"
	rc2=$?
	if [ "$rc" = 1 ] && [ "$rc2" = 1 ] &&
		[ "$(head -n 1 "$TMP/nd.err")" = "perfconv: '$TMP/nodir/out.svg': write error: directory '$TMP/nodir' does not exist" ] &&
		grep -qx "perfconv: '$TMP/afile/out.folded': write error: '$TMP/afile' is not a directory" "$TMP/nd.err" &&
		! grep -q '\.tmp\.\|no-such-input' "$TMP/nd.err"; then
		pass write/no-dir
	else
		fail write/no-dir "exit $rc/$rc2; expected 1 and a message that leads with the output as given" "$TMP/nd.err"
	fi
fi
# batch/hints: a batch prints each file's warnings and lines on missing symbols (what a single
# conversion prints) right under its ok line, with -j 2 too, and joins paths typed with a slash
# at the end cleanly (hin/x.data, hout/x.data.folded; never hin//x.data)
if selected batch/hints; then
	rm -rf "$TMP/hout" "$TMP/hin"
	mkdir -p "$TMP/hin"
	cp "$FIX/fp-callgraph/perf.data" "$TMP/hin/x.data"
	cp "$FIX/dotnet-perfmap-only/perf.data" "$TMP/hin/y.data"
	ks=$(cd "$ROOT" && pwd)/kallsyms
	(cd "$TMP" && PERFCONV_TMP=$TMP/nothing "$PERFCONV" -v -j 2 -O hout/ --kallsyms "$ks" hin/ >/dev/null 2>"$TMP/h.err")
	rc=$?
	after_x=$(grep -A1 "^perfconv: ok   'hin/x.data': " "$TMP/h.err" | sed -n 2p)
	after_y=$(grep -A1 "^perfconv: ok   'hin/y.data': " "$TMP/h.err" | sed -n 2p)
	if [ "$rc" = 0 ] && [ -f "$TMP/hout/x.data.folded" ] && ! grep -q '//' "$TMP/h.err" &&
		grep -qx "perfconv:      -> 'hout/x.data.folded'" "$TMP/h.err" &&
		[[ $after_x == "perfconv: 1 binary without symbols (not found: "* ]] &&
		[[ $after_y == "perfconv: warning: no JIT symbols for pid 12516: no perf map, "*"'perfconv record')" ]] &&
		grep -q "^perfconv:   /tmp/probe/fx/bin/callgraph: 7763 frames" "$TMP/h.err"; then
		pass batch/hints
	else
		fail batch/hints "exit $rc; expected each file's warnings and symbol lines under its ok line, no '//'" "$TMP/h.err"
	fi
fi
# ---------------------------------------------------------------------------------------------------
# Faults in a batch over many recordings (every file-mode fixture, one directory each), three
# formats each, compared with a clean run of the same batch.
#   fault/kill-restart  the whole batch (parent and workers) killed with SIGKILL once it has
#                       written some outputs, then started again: the outputs present after the
#                       kill are whole, the second run converts only what is missing (and the
#                       formats missing of an input cut between two formats), removes the
#                       temporary files of the dead processes (a live process's stay), and
#                       ends with every output equal to the clean run's
#   fault/disk-full     a tmpfs of half the clean outputs' size as OUTDIR: the batch exits 1, the
#                       outputs it wrote are whole, each one missing is named on stderr, and no
#                       temporary file is left; then --force over the full disk keeps every
#                       output of the first run (nothing is lost, all still whole)
MANY=$TMP/many
mkdir -p "$MANY"
for d in "$FIX"/*/; do
	[ -f "$d/perf.data" ] && [ -d "$d/expected" ] || continue
	case $(basename "$d") in compressed-zstd | dwarf-zstd) continue ;; esac # slow to unwind, little to add
	mkdir -p "$MANY/$(basename "$d")"
	cp -p "$d/perf.data" "$MANY/$(basename "$d")/"
done
FM=(-f folded,perf-script,speedscope)
# outputs_equal CLEAN DIR: every final output in DIR equals CLEAN's; prints the first that differs
outputs_equal() {
	local f
	while IFS= read -r f; do
		cmp -s "$1/$f" "$2/$f" || {
			echo "$f"
			return 1
		}
	done < <(cd "$2" && find . -type f ! -name '*.tmp.*')
	return 0
}
if selected fault/; then
	rm -rf "$TMP/clean"
	"$PERFCONV" -q -O "$TMP/clean" -j 2 "${FM[@]}" "${S[@]}" "$MANY" 2>"$TMP/clean.err"
	nclean=$(find "$TMP/clean" -type f | wc -l)
	[ "$nclean" -ge 30 ] || fail fault/clean "the clean batch wrote $nclean outputs" "$TMP/clean.err"
fi

if selected fault/kill-restart; then
	K=$TMP/killed
	rm -rf "$K"
	# its own process group: the kill takes the parent and its workers at once, as a power loss would
	setsid "$PERFCONV" -q -O "$K" -j 2 "${FM[@]}" "${S[@]}" "$MANY" 2>/dev/null &
	bpid=$!
	# at least 7 outputs: with 2 workers and 3 formats, at least one input is complete
	for _ in $(seq 1 600); do
		[ "$(find "$K" -type f ! -name '*.tmp.*' 2>/dev/null | wc -l)" -ge 7 ] && break
		kill -0 "$bpid" 2>/dev/null || break
		sleep 0.02
	done
	kill -KILL -- -"$bpid" 2>/dev/null
	wait "$bpid" 2>/dev/null
	# the workers die a moment after the parent (a system call under way ends first, and may
	# still create a temporary file): count once none of the group runs
	for _ in $(seq 1 500); do
		ps -eo pgid=,stat= | awk -v g="$bpid" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }' || break
		sleep 0.02
	done
	ndone=$(find "$K" -type f ! -name '*.tmp.*' | wc -l)
	ntmp=$(find "$K" -type f -name '*.tmp.*' | wc -l)
	bad=
	[ "$ndone" -ge 7 ] && [ "$ndone" -lt "$nclean" ] || bad="the kill came after $ndone of $nclean outputs: not halfway"
	if [ -z "$bad" ] && ! first=$(outputs_equal "$TMP/clean" "$K"); then
		bad="after the kill, $first differs from the clean run's: a partial output under its final name"
	fi
	# a temporary file of a process that is gone, and one of a live process (this shell)
	sleep 0 &
	dead=$!
	wait "$dead"
	one=$(cd "$K" && find . -name '*.folded' | head -n 1)
	echo partial >"$K/$one.tmp.$dead.AbCdEf"
	echo partial >"$K/$one.tmp.$$.AbCdEf"
	"$PERFCONV" -O "$K" -j 2 "${FM[@]}" "${S[@]}" "$MANY" 2>"$TMP/restart.err"
	rc=$?
	[ "$rc" = 0 ] || bad="${bad:-the restarted batch exited with $rc}"
	[ -e "$K/$one.tmp.$$.AbCdEf" ] || bad="${bad:-the temporary file of a live process was removed}"
	rm -f "$K/$one.tmp.$$.AbCdEf"
	left=$(find "$K" -name '*.tmp.*' | wc -l)
	[ "$left" = 0 ] || bad="${bad:-$left temporary files left after the restart}"
	grep -q "removed $((ntmp + 1)) temporary files\? of an interrupted run" "$TMP/restart.err" ||
		bad="${bad:-no line saying that the $((ntmp + 1)) temporary files of the dead processes were removed}"
	grep -qE "[1-9][0-9]* up to date" "$TMP/restart.err" || bad="${bad:-the restart converted the finished inputs again}"
	diff -r "$TMP/clean" "$K" >"$TMP/restart.diff" 2>&1 || bad="${bad:-after the restart the outputs differ from the clean run}"
	if [ -n "$bad" ]; then
		cat "$TMP/restart.diff" >>"$TMP/restart.err"
		fail fault/kill-restart "$bad" "$TMP/restart.err"
	else
		pass fault/kill-restart
		echo "      killed after $ndone of $nclean outputs, $ntmp temporary files left by the kill"
	fi
fi

if selected fault/disk-full; then
	mnt=$TMP/full
	mkdir -p "$mnt"
	kb=$(( $(du -sk "$TMP/clean" | cut -f1) / 2 ))
	if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=${kb}k tmpfs "$mnt" 2>/dev/null; then
		"$PERFCONV" -O "$mnt/out" -j 1 "${FM[@]}" "${S[@]}" "$MANY" 2>"$TMP/full.err"
		rc=$?
		bad=
		nout=$(find "$mnt/out" -type f ! -name '*.tmp.*' | wc -l)
		ntmp=$(find "$mnt" -name '*.tmp.*' | wc -l)
		[ "$rc" = 1 ] || bad="exit status $rc, expected 1"
		[ "$nout" -gt 0 ] && [ "$nout" -lt "$nclean" ] || bad="${bad:-$nout of $nclean outputs written: the disk did not fill halfway}"
		[ "$ntmp" = 0 ] || bad="${bad:-$ntmp temporary files left}"
		if ! first=$(outputs_equal "$TMP/clean" "$mnt/out"); then
			bad="${bad:-$first differs from the clean run}"
		fi
		nmiss=0
		while IFS= read -r f; do
			[ -e "$mnt/out/$f" ] && continue
			nmiss=$((nmiss + 1))
			grep -qF "'$mnt/out/${f#./}'" "$TMP/full.err" || bad="${bad:-the missing output $f is not named on stderr}"
		done < <(cd "$TMP/clean" && find . -type f)
		grep -q "No space left on device" "$TMP/full.err" || bad="${bad:-no \"No space left on device\" on stderr}"
		grep -q " failed; " "$TMP/full.err" || bad="${bad:-no summary line}"
		# again with --force on the full disk: what was written stays, whole
		(cd "$mnt/out" && find . -type f | sort) >"$TMP/full.list1"
		"$PERFCONV" -q -O "$mnt/out" -j 2 --force "${FM[@]}" "${S[@]}" "$MANY" 2>"$TMP/full2.err"
		rc2=$?
		(cd "$mnt/out" && find . -type f | sort) >"$TMP/full.list2"
		[ "$rc2" = 1 ] || bad="${bad:---force on the full disk: exit status $rc2, expected 1}"
		comm -23 "$TMP/full.list1" "$TMP/full.list2" | grep -q . && bad="${bad:---force on the full disk lost outputs of the first run}"
		if ! first=$(outputs_equal "$TMP/clean" "$mnt/out"); then
			bad="${bad:-after --force, $first differs from the clean run}"
		fi
		[ "$(find "$mnt" -name '*.tmp.*' | wc -l)" = 0 ] || bad="${bad:---force left temporary files}"
		if [ -n "$bad" ]; then
			fail fault/disk-full "$bad" "$TMP/full.err"
		else
			pass fault/disk-full
			echo "      ${kb} KB disk: $nout of $nclean outputs written, $nmiss named as not written"
		fi
		umount "$mnt"
	else
		skip fault/disk-full "cannot mount a small tmpfs here (needs root)"
	fi
fi
exit 0
