#!/usr/bin/env bash
# tests/perf-script.sh - the perf-script text writer against perf 6.1's own output.
#   - golden: every fixture x every expected perf script file, byte for byte:
#     script-default*.txt (no --fields: perf script's defaults), perf-script.txt (the -F list
#     comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace), perf-script-nocpu*.txt (the same
#     list, which perf refuses for samples without cpu/time: perfconv must print the rest and
#     say so once on stderr; and the list without those fields, which perf accepts);
#   - gzip: a *.perf.txt.gz output decompresses to the same bytes;
#   - flamescope: Flamescope's regexes (app/perf/regexp.py) match every sample header and
#     frame line, the first line is a sample and times never go back;
#   - live-perf: when perf can record here, fresh recordings (with and without callchains, with
#     perf record -c) against perf script itself, with several field lists;
#   - flamescope-name: a warning for output names Flamescope would refuse;
#   - errors: a bad --fields is a usage error (2); corrupt tracing data names the file and
#     the offset, exits 1 and leaves no output file.
# Run by tests/run.sh; prints lines in its format ("ok    NAME", "FAIL  NAME: why" or "skip  NAME:
# why").  PERFCONV, FIXTURES and FILTERS="w1 w2" as for tests/truncate.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" perf-script

FULL=comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace
have_py=1
command -v python3 >/dev/null 2>&1 || have_py=0

# flamescope NAME=FILE...: Flamescope's parse rules on each FILE, one python run for all of them;
# prints an ok or FAIL line per NAME.
flamescope() {
	python3 - "$@" <<'EOF'
import re, sys
event_regexp = re.compile(r" +([0-9.]+): .+?:")
frame_regexp = re.compile(r"^[\t ]*[0-9a-fA-F]+ (.+) \((.*?)\)$")
for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    text = open(path, "rb").read().decode("utf-8", "replace")
    lines = text.split("\n")
    bad, last, first = [], -1.0, None
    if "\r" in text:
        bad.append("CR in the output")
    for n, l in enumerate(lines, 1):
        if l == "" or l.startswith("#"):
            continue
        if first is None:
            first = l
            if l.startswith("\t") or not event_regexp.search(l):
                bad.append("%d: the first line is not a sample header: %r" % (n, l))
        if l.startswith("\t"):
            if not frame_regexp.match(l):
                bad.append("%d: frame line: %r" % (n, l))
            continue
        m = event_regexp.search(l)
        if not m:
            bad.append("%d: sample header: %r" % (n, l))
            continue
        t = float(m.group(1))
        if t < last:
            bad.append("%d: time goes back: %s after %s" % (n, t, last))
        last = t
    if first is None:
        bad.append("no sample")
    if bad:
        print("FAIL  %s: Flamescope would not parse the output" % name)
        for b in bad[:10]:
            print("      | " + b)
    else:
        print("ok    %s" % name)
EOF
}

# check NAME EXPECTED WARN ARGS...: convert with ARGS to NAME.perf.txt, compare with EXPECTED.
# WARN: a stderr pattern that must appear exactly once ("" = stderr must be empty).
check() {
	local name=$1 exp=$2 warn=$3
	shift 3
	selected "$name" || return 0
	local d=$TMP/case
	rm -rf "$d"
	mkdir -p "$d"
	if ! expected "$exp" >"$d/expected"; then
		fail "$name" "no $exp"
		return
	fi
	"$PERFCONV" "$@" -o "$d/out.perf.txt" >"$d/stdout" 2>"$d/err" </dev/null
	local rc=$?
	if [ "$rc" != 0 ] || [ ! -f "$d/out.perf.txt" ]; then
		fail "$name" "exit status $rc" "$d/err"
		return
	fi
	if ! cmp -s "$d/expected" "$d/out.perf.txt"; then
		diff -u "$d/expected" "$d/out.perf.txt" --label "$exp" --label perfconv >"$d/diff"
		fail "$name" "output differs from $exp" "$d/diff"
		return
	fi
	grep -v '^perfconv: .*: [0-9]* samples read\|^perfconv: unresolved frames\|^perfconv: JIT frames\|^perfconv: ReadyToRun frames\|^perfconv: R2R maps come from\|^perfconv: [0-9]* user stacks unwound with DWARF\|^perfconv: [0-9]* binar[iesy]* without symbols\|^perfconv:   \|^perfconv: hint: \|^perfconv: debuginfod: ' "$d/err" >"$d/err2"
	if [ -z "$warn" ]; then
		if [ -s "$d/err2" ]; then
			fail "$name" "unexpected warnings" "$d/err2"
			return
		fi
	elif [ "$(grep -c -- "$warn" "$d/err2")" != 1 ]; then
		fail "$name" "stderr must say once: $warn" "$d/err2"
		return
	fi
	pass "$name"
}

fs_files=()
for dir in "$FIX"/*/; do
	dir=${dir%/}
	fixture_or_skip "$dir" || continue
	# the deep recursion's stacks are longer than their 4 KB copies: perfconv says so, once
	cut=
	[ "$fx" = dwarf-recurse-pipe ] && cut="user stacks cut short"

	check "$fx/script-default" "$exp/script-default.txt" "$cut" "${args[@]}"
	if [ -e "$exp/perf-script.txt" ] || [ -e "$exp/perf-script.txt.xz" ]; then
		check "$fx/perf-script" "$exp/perf-script.txt" "" "${args[@]}" --fields "$FULL"
	fi
	if [ -e "$exp/perf-script-nocpu.txt" ] || [ -e "$exp/perf-script-nocpu.txt.xz" ]; then
		check "$fx/perf-script-nocpu" "$exp/perf-script-nocpu.txt" "have no cpu: the cpu field is left out" \
			"${args[@]}" --fields "$FULL"
		check "$fx/perf-script-nocpu-list" "$exp/perf-script-nocpu.txt" "$cut" "${args[@]}" \
			--fields comm,pid,tid,time,period,event,ip,sym,dso,trace
	fi
	if [ -e "$exp/perf-script-nocpu-notime.txt" ] || [ -e "$exp/perf-script-nocpu-notime.txt.xz" ]; then
		check "$fx/perf-script-nocpu-notime" "$exp/perf-script-nocpu-notime.txt" "have no time: the time field is left out" \
			"${args[@]}" --fields "$FULL"
		check "$fx/perf-script-nocpu-notime-list" "$exp/perf-script-nocpu-notime.txt" "" "${args[@]}" \
			--fields comm,pid,tid,period,event,ip,sym,dso,trace
	fi
	# fp-stripped-debuglink without any debug file: a symfs copy without the two .debug files
	if [ -e "$exp/script-default-nodebug.txt.xz" ] && selected "$fx/script-default-nodebug"; then
		nodebug=$TMP/symfs-nodebug
		symfs_without_debug "$nodebug"
		check "$fx/script-default-nodebug" "$exp/script-default-nodebug.txt" "" -i "$in" --symfs "$nodebug" \
			--kallsyms "$ROOT/kallsyms"
		rm -rf "$nodebug"
	fi

	# gzip output: the same bytes once decompressed
	if selected "$fx/perf-script-gz"; then
		d=$TMP/gz
		rm -rf "$d"
		mkdir -p "$d"
		if ! "$PERFCONV" -q "${args[@]}" -o "$d/out.perf.txt.gz" 2>"$d/err" </dev/null; then
			fail "$fx/perf-script-gz" "exit status $?" "$d/err"
		elif ! "$PERFCONV" -q "${args[@]}" -f perf-script -o "$d/plain" 2>"$d/err" </dev/null; then
			fail "$fx/perf-script-gz" "plain conversion failed" "$d/err"
		elif ! gzip -t "$d/out.perf.txt.gz" 2>"$d/err"; then
			fail "$fx/perf-script-gz" "not a valid gzip file" "$d/err"
		elif ! gzip -dc "$d/out.perf.txt.gz" | cmp -s - "$d/plain"; then
			fail "$fx/perf-script-gz" "decompressed output differs from the plain output"
		else
			pass "$fx/perf-script-gz"
		fi
	fi

	# Flamescope reads perf script text with timestamps: checked below, all files at once (a
	# recording without them, notime-per-thread, is nothing Flamescope can read: no case)
	if [ "$fx" != notime-per-thread ] && selected "$fx/flamescope"; then
		mkdir -p "$TMP/fs"
		if ! "$PERFCONV" -q "${args[@]}" --fields "$FULL" -f perf-script -o "$TMP/fs/$fx.txt" 2>"$TMP/fs/err" </dev/null; then
			fail "$fx/flamescope" "conversion failed" "$TMP/fs/err"
		else
			fs_files+=("$fx/flamescope=$TMP/fs/$fx.txt")
		fi
	fi
done
if [ "${#fs_files[@]}" -gt 0 ]; then
	if [ "$have_py" = 0 ]; then
		skip flamescope "python3 is needed (scripts/install-deps.sh --test)"
	else
		flamescope "${fs_files[@]}"
	fi
fi

# --fields errors are usage errors, named on stderr
if selected perf-script/fields-usage; then
	bad=
	for f in 'comm,nosuch' '' 'sw:comm' '+pid,cpu' 'comm,sym'; do
		"$PERFCONV" -q -i "$FIX/fp-callgraph/perf.data" -f perf-script --fields "$f" -o "$TMP/u.perf.txt" \
			>/dev/null 2>"$TMP/u.err" </dev/null
		rc=$?
		if [ "$rc" != 2 ] || ! grep -q -- '--fields' "$TMP/u.err" || [ -e "$TMP/u.perf.txt" ]; then
			bad="'$f': exit status $rc"
			break
		fi
	done
	if [ -n "$bad" ]; then
		fail perf-script/fields-usage "$bad" "$TMP/u.err"
	else
		pass perf-script/fields-usage
	fi
fi

# +field/-field change perf script's defaults: "-F +pid" prints "pid/tid" where "tid" was
if selected perf-script/fields-relative; then
	d=$TMP/rel
	mkdir -p "$d"
	in=$FIX/tracepoint-sched-switch/perf.data
	if "$PERFCONV" -q -i "$in" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms" --fields +pid,-symoff,+period \
		-o "$d/out.perf.txt" 2>"$d/err" </dev/null &&
		cmp -s "$d/out.perf.txt" "$FIX/tracepoint-sched-switch/expected/perf-script.txt"; then
		pass perf-script/fields-relative
	else
		diff "$FIX/tracepoint-sched-switch/expected/perf-script.txt" "$d/out.perf.txt" >"$d/diff" 2>&1
		fail perf-script/fields-relative "+pid,-symoff,+period on the defaults must give the perf-script.txt fields" "$d/diff"
	fi
fi

# The same for tracepoints, in file and pipe mode: payloads with kernel function pointers
# (timer:hrtimer_start's function=%ps, named in file mode only, as perf does) and perf's
# pipe-mode defaults.
if selected perf-script/live-perf-tracepoints; then
	d=$TMP/livetp
	mkdir -p "$d"
	wl=$ROOT/tmp/probe/fx/bin/sleeper
	ev=sched:sched_switch,sched:sched_wakeup,timer:hrtimer_start
	if ! command -v perf >/dev/null 2>&1; then
		skip perf-script/live-perf-tracepoints "perf is not installed"
	elif ! perf record -q -N -g -e "$ev" -o "$d/tp.data" -- "$wl" >/dev/null 2>"$d/rec.err" ||
		! perf record -q -N -g -e "$ev" -o - -- "$wl" 2>>"$d/rec.err" >"$d/pipe.data"; then
		skip perf-script/live-perf-tracepoints "perf cannot record tracepoints here ($(head -n 1 "$d/rec.err"))"
	else
		bad=
		for in in tp pipe; do
			for f in "" "$FULL"; do
				perf script -i "$d/$in.data" ${f:+-F "$f"} >"$d/perf.txt" 2>/dev/null
				src=$d/$in.data
				[ "$in" = pipe ] && src=-
				"$PERFCONV" -q -i "$src" -f perf-script ${f:+--fields "$f"} -o "$d/pc.txt" 2>"$d/err" <"$d/$in.data"
				if [ ! -s "$d/perf.txt" ] || ! cmp -s "$d/perf.txt" "$d/pc.txt"; then
					diff -u "$d/perf.txt" "$d/pc.txt" --label perf --label perfconv >"$d/diff" 2>&1
					bad="$in.data with fields '${f:-default}'"
					break 2
				fi
			done
		done
		if [ -n "$bad" ]; then
			fail perf-script/live-perf-tracepoints "output differs from perf script on $bad" "$d/diff"
		else
			pass perf-script/live-perf-tracepoints
		fi
	fi
fi

# a tracepoint recording without its tracing data still converts: payloads left out, said once
if selected perf-script/no-tracing-data; then
	d=$TMP/notd
	mkdir -p "$d"
	if [ "$have_py" = 0 ]; then
		skip perf-script/no-tracing-data "python3 is needed"
	else
		python3 - "$FIX/tracepoint-sched-switch/perf.data" "$d/notd.data" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[72] &= ~(1 << 1)     # the TRACING_DATA bit of the header's feature bitmap
open(sys.argv[2], "wb").write(d)
EOF
		"$PERFCONV" -i "$d/notd.data" --kallsyms "$ROOT/kallsyms" -f perf-script -o "$d/out.txt" 2>"$d/err" </dev/null
		rc=$?
		if [ "$rc" = 0 ] && [ "$(grep -c 'no tracing data' "$d/err")" = 1 ] && [ "$(grep -c '^sleeper' "$d/out.txt")" = 60 ] &&
			! grep -q 'prev_comm' "$d/out.txt"; then
			pass perf-script/no-tracing-data
		else
			fail perf-script/no-tracing-data "exit $rc; want 0, one warning and 60 samples without payloads" "$d/err"
		fi
	fi
fi

# a hostile event format (here a division by the next pid, 0 in the first sample) makes
# libtraceevent divide by zero: the payloads are lost with a warning, the conversion is not
if selected perf-script/hostile-format; then
	d=$TMP/hostile
	mkdir -p "$d"
	if [ "$have_py" = 0 ]; then
		skip perf-script/hostile-format "python3 is needed"
	else
		python3 - "$FIX/tracepoint-sched-switch/perf.data" "$d/div.data" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
i = d.find(b'print fmt: "prev_comm')
j = d.find(b", REC->next_prio", i)
assert i > 0 and j > i
d[j:j + 16] = b",9/REC->next_pid"
open(sys.argv[2], "wb").write(d)
EOF
		"$PERFCONV" -i "$d/div.data" --kallsyms "$ROOT/kallsyms" -f perf-script -o "$d/out.txt" 2>"$d/err" </dev/null
		rc=$?
		if [ "$rc" = 0 ] && grep -q "tracepoint payloads are left out" "$d/err" && [ "$(grep -c '^sleeper' "$d/out.txt")" = 60 ]; then
			pass perf-script/hostile-format
		else
			fail perf-script/hostile-format "exit $rc; want 0, a warning and 60 samples" "$d/err"
		fi
	fi
fi

# Flamescope refuses paths with characters outside [a-zA-Z0-9.,/_%+: -\\]: a warning says so
if selected perf-script/flamescope-name; then
	d=$TMP/fsname
	mkdir -p "$d"
	in=$FIX/fp-callgraph/perf.data
	"$PERFCONV" -i "$in" --kallsyms "$ROOT/kallsyms" -o "$d/a~b.perf.txt" 2>"$d/err1" </dev/null
	rc1=$?
	"$PERFCONV" -i "$in" --kallsyms "$ROOT/kallsyms" -o "$d/a b(1).perf.txt" 2>"$d/err2" </dev/null
	rc2=$?
	if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && grep -q "a~b.perf.txt': Flamescope" "$d/err1" && ! grep -q Flamescope "$d/err2"; then
		pass perf-script/flamescope-name
	else
		cat "$d/err1" "$d/err2" >"$d/err"
		fail perf-script/flamescope-name "'~' must be warned about, ' ', '(' and ')' not (exit $rc1, $rc2)" "$d/err"
	fi
fi

# perf itself as the oracle on fresh recordings: what the fixtures do not have (samples
# without callchains, perf record -c, which leaves PERIOD out of the samples), several field lists.
if selected perf-script/live-perf; then
	d=$TMP/live
	mkdir -p "$d"
	wl=$ROOT/tmp/probe/fx/bin/callgraph
	if ! command -v perf >/dev/null 2>&1; then
		skip perf-script/live-perf "perf is not installed (scripts/install-deps.sh --bench installs linux-perf)"
	elif ! perf record -q -N -e cpu-clock -c 200000 -o "$d/nog.data" -- "$wl" >/dev/null 2>"$d/rec.err" ||
		! perf record -q -N -g -e cpu-clock -c 200000 -o "$d/g.data" -- "$wl" >/dev/null 2>>"$d/rec.err"; then
		skip perf-script/live-perf "perf record is not allowed here ($(head -n 1 "$d/rec.err"))"
	else
		bad=
		for in in nog g; do
			for f in "" comm,pid,tid,time,period,event,ip,sym,dso,symoff comm,tid,event,ip,dso comm,pid,time,ip,sym comm,tid,ip; do
				perf script -i "$d/$in.data" ${f:+-F "$f"} >"$d/perf.txt" 2>/dev/null
				"$PERFCONV" -q -i "$d/$in.data" -f perf-script ${f:+--fields "$f"} -o "$d/pc.txt" 2>"$d/err" </dev/null
				if [ ! -s "$d/perf.txt" ] || ! cmp -s "$d/perf.txt" "$d/pc.txt"; then
					diff -u "$d/perf.txt" "$d/pc.txt" --label perf --label perfconv >"$d/diff" 2>&1
					bad="$in.data with fields '${f:-default}'"
					break 2
				fi
			done
		done
		if [ -n "$bad" ]; then
			fail perf-script/live-perf "output differs from perf script on $bad" "$d/diff"
		else
			pass perf-script/live-perf
		fi
	fi
fi

# corrupt tracing data: an error naming the file and the offset, no output file
if selected perf-script/corrupt-tracing-data; then
	if [ "$have_py" = 0 ]; then
		skip perf-script/corrupt-tracing-data "python3 is needed"
	else
		d=$TMP/corrupt
		mkdir -p "$d"
		python3 - "$FIX/tracepoint-sched-switch/perf.data" "$d" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
magic = b"\x17\x08\x44tracing"
at = data.find(magic)
assert at > 0, "no tracing data"
hp = data.find(b"header_page\0", at)
bad1 = bytearray(data); bad1[hp:hp + 6] = b"HEADER"                   # no header_page
bad2 = bytearray(data); bad2[hp + 12:hp + 20] = (1 << 40).to_bytes(8, "little")  # size past the end
open(sys.argv[2] + "/bad1.data", "wb").write(bad1)
open(sys.argv[2] + "/bad2.data", "wb").write(bad2)
open(sys.argv[2] + "/where", "w").write("%d %d\n" % (hp, hp + 12))
EOF
		read -r off1 off2 <"$d/where"
		bad=
		for k in 1 2; do
			f=$d/bad$k.data
			want=$off1
			[ "$k" = 2 ] && want=$off2
			"$PERFCONV" -q -i "$f" --kallsyms "$ROOT/kallsyms" -f perf-script -o "$d/out$k.perf.txt" \
				>/dev/null 2>"$d/err" </dev/null
			rc=$?
			if [ "$rc" != 1 ] || ! grep -q "'$f'.*offset $want" "$d/err" || [ -e "$d/out$k.perf.txt" ] ||
				ls "$d" | grep -q tmp; then
				bad="bad$k: exit status $rc, want 1, the file name and offset $want, and no output file"
				break
			fi
		done
		if [ -n "$bad" ]; then
			fail perf-script/corrupt-tracing-data "$bad" "$d/err"
		else
			pass perf-script/corrupt-tracing-data
		fi
	fi
fi
exit 0
