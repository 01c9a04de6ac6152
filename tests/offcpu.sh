#!/usr/bin/env bash
# tests/offcpu.sh - off-CPU and thread time (--off-cpu, --thread-time) on recordings made here of a
# workload with known blocked times (tests/offcpu/ocwork.c: sleeps of 20 and 50 ms in sleep_a and
# sleep_b, a pipe read woken every 30 ms by another thread, a spinning thread as the control; the
# program measures its own blocked times, which are the expected values).  tests/offcpu_check.py
# compares; the measured values are printed on each ok / FAIL line.
#
#   offcpu/process, offcpu/process-switch   perf record -e sched:sched_switch -g -- ocwork, without and
#                                           with --switch-events: each function's off-CPU time and
#                                           sleep_a/sleep_b within OFFCPU_TOLERANCE % (5) of the
#                                           known values, the spinner (preempted only) under 1 %
#   offcpu/system, offcpu/system-switch     the same recorded system-wide (-a)
#   offcpu/pipe                             the same from a pipe-mode stream (perf record -o -)
#   offcpu/timehist, offcpu/timehist-all    perf sched record -g (-a, every switch and wakeup: what
#                                           timehist needs): per-thread totals of --off-cpu --tid (and
#                                           --off-cpu=all) against perf sched timehist --state, within
#                                           1 % and 1 ms; a recording that lost events or whose switches
#                                           of a workload thread are missing or out of order across CPUs
#                                           is made again where they differ (3 tries, then a skip)
#   offcpu/all                              --off-cpu=all also counts the spinner's preempted time
#   offcpu/thread-time                      -e sched:sched_switch -e cpu-clock: waits end in
#                                           [off-cpu: S] with the known weights, the spinner is on-CPU
#   offcpu/svg, offcpu/speedscope           titles and units say off-CPU time in ns; the SVG and the
#                                           speedscope weights equal the folded profile
#   offcpu/filters                          --comm, --tid= and --time keep only some intervals
#   offcpu/time-clip                        perf record -k 1 (CLOCK_MONOTONIC, the program's clock):
#                                           --time windows that start and end inside sleep_b's 50 ms
#                                           sleeps, one inside a single sleep, and both as two ranges:
#                                           sleep_b weighs the part of the program's own sleeps inside
#                                           the window (an interval is clipped to it)
#   offcpu/errors                           no sched_switch samples, --thread-time without cpu-clock,
#                                           a per-sample format, a bad --off-cpu value, --event
#   offcpu/dotnet-lock, offcpu/dotnet-frames  a .NET 10 app (tests/offcpu/dotnet: a thread sleeping
#                                           while it holds a lock, a thread blocked on that lock, the
#                                           main thread waiting synchronously for a task that awaits
#                                           Task.Delay; the app measures each), recorded with
#                                           --call-graph dwarf and --switch-events, converted with --resolve-jit: the
#                                           blocked thread's off-CPU time within twice
#                                           OFFCPU_TOLERANCE % of its lock waits, and each managed
#                                           method's waits (Holder > Thread.Sleep, WaitForLock >
#                                           Monitor.Enter, RunDelays > Task.SpinThenBlockingWait)
#                                           within it of the app's measure (offcpu_check.py dotnet).
#                                           Skipped without the .NET 10 SDK.
#
# Needs perf that can record sched:sched_switch (root, or perf_event_paranoid <= -1 and a readable
# tracefs) and gcc; skips with the reason otherwise.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" offcpu
TOL=${OFFCPU_TOLERANCE:-5}
need_perfconv offcpu
need_python offcpu

all_cases=(offcpu/process offcpu/process-switch offcpu/system offcpu/system-switch offcpu/pipe offcpu/timehist
	offcpu/timehist-all offcpu/all offcpu/thread-time offcpu/svg offcpu/speedscope offcpu/filters offcpu/time-clip
	offcpu/errors
	offcpu/dotnet-lock offcpu/dotnet-frames)
cases=()
for c in "${all_cases[@]}"; do
	selected "$c" && cases+=("$c")
done
[ "${#cases[@]}" -eq 0 ] && exit 0
want() {
	local c
	for c in "${cases[@]}"; do
		[ "$c" = "$1" ] && return 0
	done
	return 1
}

command -v perf >/dev/null 2>&1 || skip_all "perf is not installed (scripts/install-deps.sh --bench)"
command -v gcc >/dev/null 2>&1 || skip_all "gcc is needed to build the workload"
if ! perf record -q -e sched:sched_switch -o "$TMP/probe.data" -- true >"$TMP/probe.log" 2>&1; then
	skip_all "perf cannot record sched:sched_switch here (perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown); needs root or -1 and a readable tracefs: $(grep -m 1 -v '^$' "$TMP/probe.log"))"
fi
if ! gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$TMP/ocwork" tests/offcpu/ocwork.c 2>"$TMP/gcc.log"; then
	for c in "${cases[@]}"; do
		fail "$c" "gcc could not build tests/offcpu/ocwork.c" "$TMP/gcc.log"
	done
	exit 0
fi

# record NAME ARGS...: perf record ARGS -g -- ocwork into $TMP/NAME.data, known values in $TMP/NAME.known.
# Returns 1 (after a FAIL line for CASE) when perf fails.
record() {
	local name=$1 case=$2
	shift 2
	if ! perf record -q "$@" -g -o "$TMP/$name.data" -- "$TMP/ocwork" "$TMP/$name.known" >"$TMP/$name.rec.log" 2>&1 ||
		[ ! -s "$TMP/$name.known" ]; then
		fail "$case" "perf record $* failed" "$TMP/$name.rec.log"
		return 1
	fi
}

# convert CASE OUT ARGS...: perfconv ARGS -o OUT, stderr in OUT.err; a FAIL line when it fails.
convert() {
	local case=$1 out=$2
	shift 2
	if ! "$PERFCONV" "$@" -o "$out" 2>"$out.err"; then
		fail "$case" "perfconv $* exited with status $?" "$out.err"
		return 1
	fi
}

# known CASE NAME ARGS...: record with ARGS, convert with --off-cpu, compare with the known values.
known_case() {
	local case=$1 name=$2
	shift 2
	want "$case" || return 0
	record "$name" "$case" "$@" || return 0
	convert "$case" "$TMP/$name.folded" -i "$TMP/$name.data" --off-cpu || return 0
	# with --switch-events every interval ends at a switch-in: no hint that some did not
	if [[ " $* " == *" --switch-events "* ]] && grep -q "ended at the thread's next sample" "$TMP/$name.folded.err"; then
		fail "$case" "intervals ended at a next sample despite --switch-events" "$TMP/$name.folded.err"
		return 0
	fi
	if python3 tests/offcpu_check.py known "$TMP/$name.folded" "$TMP/$name.known" "$TOL" >"$TMP/$name.check" 2>&1; then
		pass "$case: $(head -n 1 "$TMP/$name.check")"
	else
		fail "$case" "$(tail -n 1 "$TMP/$name.check")" "$TMP/$name.check"
	fi
}

known_case offcpu/process proc -e sched:sched_switch
known_case offcpu/process-switch procsw -e sched:sched_switch --switch-events
known_case offcpu/system sys -a -e sched:sched_switch
known_case offcpu/system-switch syssw -a -e sched:sched_switch --switch-events

# a pipe-mode stream carries its tracing data as a record
if want offcpu/pipe; then
	if perf record -q -e sched:sched_switch -g -o - -- "$TMP/ocwork" "$TMP/pipe.known" 2>"$TMP/pipe.rec.log" |
		"$PERFCONV" -i - --off-cpu -o "$TMP/pipe.folded" 2>"$TMP/pipe.err" && [ -s "$TMP/pipe.known" ]; then
		if python3 tests/offcpu_check.py known "$TMP/pipe.folded" "$TMP/pipe.known" "$TOL" >"$TMP/pipe.check" 2>&1; then
			pass "offcpu/pipe: $(head -n 1 "$TMP/pipe.check")"
		else
			fail offcpu/pipe "$(tail -n 1 "$TMP/pipe.check")" "$TMP/pipe.check"
		fi
	else
		cat "$TMP/pipe.rec.log" "$TMP/pipe.err" >"$TMP/pipe.log"
		fail offcpu/pipe "perf record -o - | perfconv -i - --off-cpu failed" "$TMP/pipe.log"
	fi
fi

# perf sched timehist: its wait time is the time from a switch-out to the next switch-in.  perf sched
# record gives it what it needs: every CPU (-a), every switch and wakeup.  A recording that lost
# events, or whose switches of the workload's threads are missing or out of order across CPUs
# (offcpu_check.py exits 3), cannot be compared where the totals differ: it is made again, up to 3
# times, and the cases are skipped with the reason when none could be compared.
# timehist_round: record, convert, compare; sets th_fail, or th_retry (why the recording cannot be
# compared), or th_rc (offcpu_check.py's status by case)
timehist_round() {
	local c opt mode rc
	th_retry=
	if ! perf sched record -g -o "$TMP/sched.data" -- "$TMP/ocwork" "$TMP/sched.known" >"$TMP/sched.rec.log" 2>&1; then
		th_fail="perf sched record failed" th_log=$TMP/sched.rec.log
		return
	fi
	if ! perf sched timehist -i "$TMP/sched.data" --state >"$TMP/timehist.txt" 2>"$TMP/timehist.err" ||
		! perf script -i "$TMP/sched.data" -F tid,time,event,trace >"$TMP/sched.script" 2>>"$TMP/timehist.err"; then
		th_fail="perf sched timehist or perf script failed" th_log=$TMP/timehist.err
		return
	fi
	for c in offcpu/timehist offcpu/timehist-all; do
		want "$c" || continue
		opt=--off-cpu mode=
		[ "$c" = offcpu/timehist-all ] && opt=--off-cpu=all mode=all
		if ! "$PERFCONV" -i "$TMP/sched.data" "$opt" --tid -o "$TMP/$mode-th.folded" 2>"$TMP/$mode-th.err"; then
			th_fail="perfconv $opt --tid failed" th_log=$TMP/$mode-th.err
			return
		fi
		python3 tests/offcpu_check.py timehist "$TMP/$mode-th.folded" "$TMP/timehist.txt" "$TMP/sched.script" 1 $mode \
			>"$TMP/$mode-th.check" 2>&1
		rc=$?
		if [ $rc = 3 ]; then
			th_retry=$(tail -n 1 "$TMP/$mode-th.check")
			return
		elif [ $rc != 0 ] && grep -q 'events lost' "$TMP/$mode-th.err"; then
			th_retry="the recording lost events ($(grep -m 1 'events lost' "$TMP/$mode-th.err" | sed 's/^perfconv: //')): $(tail -n 1 "$TMP/$mode-th.check")"
			return
		fi
		th_rc[$c]=$rc
	done
}
if want offcpu/timehist || want offcpu/timehist-all; then
	declare -A th_rc
	th_fail= th_log= tries=0
	while [ $tries -lt 3 ]; do
		tries=$((tries + 1))
		th_rc=()
		timehist_round
		[ -z "$th_fail" ] && [ -n "$th_retry" ] || break
	done
	for c in offcpu/timehist offcpu/timehist-all; do
		want "$c" || continue
		mode=
		[ "$c" = offcpu/timehist-all ] && mode=all
		if [ -n "$th_fail" ]; then
			fail "$c" "$th_fail" "$th_log"
		elif [ -n "$th_retry" ]; then
			skip "$c" "$tries recordings could not be compared: $th_retry"
		elif [ "${th_rc[$c]-}" = 0 ]; then
			pass "$c: perfconv/timehist $(head -n 1 "$TMP/$mode-th.check")$([ $tries -gt 1 ] && echo " (recording $tries)")"
		else
			fail "$c" "$(tail -n 1 "$TMP/$mode-th.check")" "$TMP/$mode-th.check"
		fi
	done
fi

# the recording of offcpu/process, or a new one when that case was not selected
proc_data() {
	[ -s "$TMP/proc.data" ] || record proc "$1" -e sched:sched_switch
}

if want offcpu/all && proc_data offcpu/all &&
	convert offcpu/all "$TMP/blocked.folded" -i "$TMP/proc.data" --off-cpu &&
	convert offcpu/all "$TMP/all.folded" -i "$TMP/proc.data" --off-cpu=all; then
	blocked=$(python3 tests/offcpu_check.py sum "$TMP/blocked.folded" '^oc-(sleeper|reader|writer);')
	all_blocked=$(python3 tests/offcpu_check.py sum "$TMP/all.folded" '^oc-(sleeper|reader|writer);')
	spin=$(python3 tests/offcpu_check.py sum "$TMP/all.folded" '^oc-spinner;')
	# the spinner's switches out while still runnable, as perf prints them: on an idle machine
	# with a CPU to spare it may never be preempted, and there is nothing to count
	preempted=$(perf script -i "$TMP/proc.data" -F trace 2>/dev/null |
		grep -c 'prev_comm=oc-spinner .*prev_state=R[+ ]')
	# preempted time comes on top; the spinner only ever waits to run again
	if [ "$spin" = 0 ] && [ "$preempted" = 0 ] && [ "$all_blocked" -ge "$blocked" ]; then
		skip offcpu/all "the spinner was never preempted in this recording (perf script shows no switch of it while runnable)"
	elif [ "$all_blocked" -ge "$blocked" ] && [ "$spin" -gt 0 ] && grep -q 'runnable' "$TMP/blocked.folded.err"; then
		pass "offcpu/all: spinner $((spin / 1000)) us runnable; the other threads $((blocked / 1000)) -> $((all_blocked / 1000)) us"
	else
		fail offcpu/all "spinner $spin ns runnable, the other threads $blocked -> $all_blocked ns" "$TMP/all.folded.err"
	fi
fi

if want offcpu/thread-time && record tt offcpu/thread-time -e sched:sched_switch -e cpu-clock &&
	convert offcpu/thread-time "$TMP/tt.folded" -i "$TMP/tt.data" --thread-time; then
	if python3 tests/offcpu_check.py thread-time "$TMP/tt.folded" "$TMP/tt.known" "$TOL" >"$TMP/tt.check" 2>&1; then
		pass "offcpu/thread-time: $(head -n 1 "$TMP/tt.check")"
	else
		fail offcpu/thread-time "$(tail -n 1 "$TMP/tt.check")" "$TMP/tt.check"
	fi
fi

if want offcpu/svg && proc_data offcpu/svg &&
	convert offcpu/svg "$TMP/oc.svg" -i "$TMP/proc.data" --off-cpu &&
	convert offcpu/svg "$TMP/svg.folded" -i "$TMP/proc.data" --off-cpu &&
	convert offcpu/svg "$TMP/tt.svg" -i "$TMP/proc.data" --off-cpu --title 'x<y' --inverted; then
	why=
	python3 tests/svg_check.py "$TMP/svg.folded" "$TMP/oc.svg" >"$TMP/svg.check" 2>&1 || why="svg_check.py: the SVG is not the folded profile"
	grep -q '>Off-CPU Time Flame Graph</text>' "$TMP/oc.svg" || why="no off-CPU title"
	grep -q '<title>all ([0-9,]* ns, 100%)</title>' "$TMP/oc.svg" || why="the root's title does not count ns"
	grep -q '>x&lt;y</text>' "$TMP/tt.svg" || why="--title is not used"
	if [ -z "$why" ]; then
		pass offcpu/svg
	else
		fail offcpu/svg "$why" "$TMP/svg.check"
	fi
fi

if want offcpu/speedscope && proc_data offcpu/speedscope &&
	convert offcpu/speedscope "$TMP/oc.speedscope.json" -i "$TMP/proc.data" --off-cpu &&
	convert offcpu/speedscope "$TMP/ss.folded" -i "$TMP/proc.data" --off-cpu; then
	if python3 - "$TMP/oc.speedscope.json" "$TMP/ss.folded" >"$TMP/ss.check" 2>&1 <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
units = {p["unit"] for p in d["profiles"]}
# the threads' profiles; the first, "all threads", weighs its process's threads again
total = sum(sum(p["weights"]) for p in d["profiles"] if not p["name"].endswith(" all threads"))
folded = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
assert units == {"nanoseconds"}, units
assert d["name"].endswith("(off-CPU time)"), d["name"]
assert total == folded, (total, folded)
assert all(p["endValue"] == sum(p["weights"]) for p in d["profiles"])
EOF
		pass offcpu/speedscope
	else
		fail offcpu/speedscope "unit, name or weights differ from the folded profile" "$TMP/ss.check"
	fi
fi

if want offcpu/filters && proc_data offcpu/filters &&
	convert offcpu/filters "$TMP/f-all.folded" -i "$TMP/proc.data" --off-cpu --tid &&
	convert offcpu/filters "$TMP/f-comm.folded" -i "$TMP/proc.data" --off-cpu --comm oc-sleeper; then
	why=
	tid=$(sed -n 's/^oc-reader-[^/]*\/\([0-9]*\);.*/\1/p' "$TMP/f-all.folded" | head -n 1)
	convert offcpu/filters "$TMP/f-tid.folded" -i "$TMP/proc.data" --off-cpu --tid="$tid" || tid=
	# the last 40 % of the recording: the sleeper is in sleep_b then.  sleep_a's sleeps come first
	# and are mostly left out (on a loaded machine the program's start can take long enough that
	# the window begins inside them: that part counts, offcpu/time-clip checks it exactly)
	convert offcpu/filters "$TMP/f-time.folded" -i "$TMP/proc.data" --off-cpu --time 60%-100% --comm oc-sleeper || tid=
	if [ -z "$tid" ]; then
		:
	else
		[ -s "$TMP/f-comm.folded" ] && ! grep -qv '^oc-sleeper;' "$TMP/f-comm.folded" || why="--comm kept other threads"
		[ -s "$TMP/f-tid.folded" ] && ! grep -qv '^oc-reader;' "$TMP/f-tid.folded" || why="--tid= kept other threads"
		ta=$(python3 tests/offcpu_check.py sum "$TMP/f-time.folded" ';sleep_a;')
		tb=$(python3 tests/offcpu_check.py sum "$TMP/f-time.folded" ';sleep_b;')
		fa=$(python3 tests/offcpu_check.py sum "$TMP/f-all.folded" ';sleep_a;')
		fb=$(python3 tests/offcpu_check.py sum "$TMP/f-all.folded" ';sleep_b;')
		[ "$tb" -gt 0 ] && [ "$tb" -le "$fb" ] && [ $((ta * 2)) -lt "$fa" ] ||
			why="--time 60%-100%: sleep_a $ta of $fa ns, sleep_b $tb of $fb ns"
		a=$(python3 tests/offcpu_check.py sum "$TMP/f-all.folded" '^oc-sleeper')
		b=$(python3 tests/offcpu_check.py sum "$TMP/f-comm.folded" '^oc-sleeper')
		[ "$a" = "$b" ] || why="--comm changed the sleeper's total ($a, $b)"
		if [ -z "$why" ]; then
			pass offcpu/filters
		else
			fail offcpu/filters "$why"
		fi
	fi
fi

# --time clips intervals: windows placed inside the sleeps by the program's own clock
nsec() { printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000)); }
if want offcpu/time-clip; then
	if ! perf record -q -k 1 -e sched:sched_switch -g -o "$TMP/clip.data" -- "$TMP/ocwork" "$TMP/clip.known" \
		"$TMP/clip.sleeps" >"$TMP/clip.rec.log" 2>&1 || [ "$(wc -l <"$TMP/clip.sleeps")" != 5 ]; then
		fail offcpu/time-clip "perf record -k 1 failed" "$TMP/clip.rec.log"
	else
		why= res=
		{ read -r _ _; read -r b1 _; read -r _ _; read -r b3 _; read -r b4 _; } <"$TMP/clip.sleeps"
		# 10 ms of the 2nd sleep, the 3rd, 5 ms of the 4th; 20 ms in the middle of the 5th
		w1="$((b1 + 40000000)),$((b3 + 5000000))" w2="$((b4 + 10000000)),$((b4 + 30000000))"
		for w in "$w1" "$w2" "$w1 $w2"; do
			t=
			for r in $w; do
				t="$t${t:+ }$(nsec "${r%,*}"),$(nsec "${r#*,}")"
			done
			# shellcheck disable=SC2086  # the ranges are separate arguments
			if ! convert offcpu/time-clip "$TMP/clip.folded" -i "$TMP/clip.data" --off-cpu --comm oc-sleeper --time "$t"; then
				why=-
				break
			elif python3 tests/offcpu_check.py clip "$TMP/clip.folded" "$TMP/clip.sleeps" "$TOL" $w >"$TMP/clip.check" 2>&1; then
				res="$res${res:+; }$(head -n 1 "$TMP/clip.check" | sed 's/; sleep_a.*//')"
			else
				why="--time '$t': $(tail -n 1 "$TMP/clip.check" 2>/dev/null)"
				break
			fi
		done
		if [ -z "$why" ]; then
			pass "offcpu/time-clip: $res"
		elif [ "$why" != - ]; then
			fail offcpu/time-clip "$why" "$TMP/clip.check"
		fi
	fi
fi

if want offcpu/errors; then
	why=
	perf record -q -e cpu-clock -g -o "$TMP/clock.data" -- "$TMP/ocwork" "$TMP/clock.known" >/dev/null 2>&1
	"$PERFCONV" -i "$TMP/clock.data" --off-cpu -o "$TMP/e1.folded" 2>"$TMP/e1.err"
	rc=$?
	{ [ $rc = 1 ] && grep -q 'perf record -e sched:sched_switch' "$TMP/e1.err" && [ ! -e "$TMP/e1.folded" ]; } ||
		why="no sched_switch: exit $rc, $(head -c 200 "$TMP/e1.err")"
	if proc_data offcpu/errors; then
		"$PERFCONV" -i "$TMP/proc.data" --thread-time -o "$TMP/e2.folded" 2>"$TMP/e2.err"
		rc=$?
		{ [ $rc = 1 ] && grep -q 'cpu-clock' "$TMP/e2.err"; } || why="thread-time without cpu-clock: exit $rc"
		"$PERFCONV" -i "$TMP/proc.data" --off-cpu -f perf-script -o "$TMP/e3.txt" 2>"$TMP/e3.err"
		rc=$?
		[ $rc = 2 ] || why="--off-cpu -f perf-script: exit $rc"
		"$PERFCONV" -i "$TMP/proc.data" --off-cpu=some -o "$TMP/e4.folded" 2>"$TMP/e4.err"
		rc=$?
		[ $rc = 2 ] || why="--off-cpu=some: exit $rc"
		"$PERFCONV" -i "$TMP/proc.data" --off-cpu --event cpu-clock -o "$TMP/e5.folded" 2>"$TMP/e5.err"
		rc=$?
		[ $rc = 2 ] || why="--off-cpu --event: exit $rc"
	fi
	if [ -z "$why" ]; then
		pass offcpu/errors
	else
		fail offcpu/errors "$why" "$TMP/e1.err"
	fi
fi

# .NET: build tests/offcpu/dotnet (kept in build/offcpu-dotnet/<hash of the sources and SDK>), record it
# with its perf map, convert with --resolve-jit
dotnet_skip() {
	local c
	for c in offcpu/dotnet-lock offcpu/dotnet-frames; do
		want "$c" && skip "$c" "$1"
	done
}
dotnet_fail() {
	local c
	for c in offcpu/dotnet-lock offcpu/dotnet-frames; do
		want "$c" && fail "$c" "$1" "$2"
	done
}
dotnet_run() {
	local key bin m c
	if ! command -v dotnet >/dev/null 2>&1 || ! dotnet --list-sdks 2>/dev/null | grep -q '^10\.'; then
		dotnet_skip "no .NET 10 SDK (dotnet --list-sdks)"
		return
	fi
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
	key=$({ cat tests/offcpu/dotnet/*; dotnet --version; } | sha256sum | cut -c1-16)
	bin=$top/build/offcpu-dotnet/$key
	if ! dotnet_build tests/offcpu/dotnet "$bin" OffCpu; then
		dotnet_fail "dotnet build of tests/offcpu/dotnet failed" "$TMP/build.errors"
		return
	fi
	mkdir -p "$TMP/dnmaps"
	# DWARF call graphs: the waits are in glibc's futex wait, which keeps no frame pointer, so
	# a -g chain ends there; the DWARF walk crosses glibc and libcoreclr on their CFI, and the
	# managed code (JIT and ReadyToRun) on its frame pointers (--resolve-jit).  --switch-events: the
	# lock waiter is woken by a futex and often switched in from the idle task or another process,
	# which a sched_switch of this process does not show; without it such a wait lasts until the
	# waiter's next sample, after it has spun for the next round (10% too much seen on a busy
	# machine).  -m 8M: DWARF samples of 32 KiB overflow the default buffer, and a lost switch
	# record also stretches a wait.
	if ! env DOTNET_PerfMapEnabled=1 DOTNET_PerfMapJitDumpPath="$TMP/dnmaps" timeout 60 perf record -q -k 1 \
		-m 8M -e sched:sched_switch --switch-events --call-graph dwarf,32768 -o "$TMP/dn.data" "$bin/OffCpu" "$TMP/dn.known" \
		>"$TMP/dn.rec.log" 2>&1 || [ ! -s "$TMP/dn.known" ]; then
		dotnet_fail "perf record of the .NET app failed" "$TMP/dn.rec.log"
		return
	fi
	for m in '' =all; do
		if ! "$PERFCONV" -i "$TMP/dn.data" --off-cpu$m --tid --resolve-jit --map-dir "$TMP/dnmaps" \
			-o "$TMP/dn$m.folded" 2>"$TMP/dn.err"; then
			dotnet_fail "perfconv --off-cpu$m --resolve-jit failed" "$TMP/dn.err"
			return
		fi
	done
	for c in offcpu/dotnet-lock offcpu/dotnet-frames; do
		want "$c" || continue
		if python3 tests/offcpu_check.py dotnet "$TMP/dn.folded" "$TMP/dn=all.folded" "$TMP/dn.known" \
			"$((TOL * 2))" "${c#offcpu/dotnet-}" >"$TMP/dn.check" 2>&1; then
			pass "$c: $(head -n 1 "$TMP/dn.check")"
		else
			fail "$c" "$(tail -n 1 "$TMP/dn.check")" "$TMP/dn.check"
		fi
	done
}
if want offcpu/dotnet-lock || want offcpu/dotnet-frames; then
	dotnet_run
fi
exit 0
