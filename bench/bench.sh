#!/usr/bin/env bash
# bench/bench.sh - perfconv in every output format against `perf script` and `perf report` on large
# frame-pointer recordings, in one run.
#
# Records (once; later runs reuse bench/work/perf-MB.data) cpu-clock recordings with call graphs of a
# CPU-bound workload (one copy per CPU, built from fixtures/bin-src/callgraph.c) until each file holds
# at least MB megabytes, for each MB of BENCH_SIZES.  Only the workload's processes are recorded (no
# -a), so whatever else the machine runs does not change the input.  Then, on each file with a warm
# page cache, it times, BENCH_RUNS times each (default 3; once on the huge input below), keeping
# each command's best wall and best CPU time (the runs least disturbed by whatever else the machine
# runs; every command runs once a round, so a disturbance costs one run of one command; those that
# take less than a second or two, perfconv's and cat, BENCH_SHORT_RUNS times a round, default 3)
#   perfconv -q -i perf.data -f FORMAT -o out      for every format of the registry (perfconv --help)
#   perfconv -q -O dir -f ALL,FORMATS perf.data    every format from one read (batch mode)
#   perf script -i perf.data > /dev/null
#   perf report -i perf.data --stdio > /dev/null
#   perfcollect's pipeline for a PerfView trace: perf script -F comm,pid,tid,cpu,time,period,event,ip,
#     sym,dso,trace (without cpu when the samples have none, as perfcollect retries) > NAME.trace/
#     perf.data.txt, then zip -r NAME.trace.zip NAME.trace (what perfconv's trace.zip replaces)
# and, on a --call-graph dwarf recording of BENCH_DWARF_MB (default 100) MB made the same way, perfconv
# folded against perf script (which unwinds every sample again),
# and prints a table: wall and CPU seconds, MB/s and samples/s (by wall time), peak RSS, and how
# many times faster than perf script each run is; then, per input, perfconv's trace.zip against
# perfcollect's pipeline (wall and CPU ratios) and the peak RSS of every format; last, one line per
# speed target with this run's figure and "met" or "MISSED" (folded within 5x of cat, the other
# formats and packs within 2x of folded, firefox within 1.5x of speedscope, the .NET recording's trace.zip, svg and batch at least 8x
# the pipeline by wall and by CPU, DWARF at least 8x perf script by the median wall time and within
# 100 MB of RSS).
# BENCH_HUGE=1 (not for CI: it records BENCH_HUGE_MB, default 2000, MB and needs about three times
# that on disk) adds a recording of at least 2 GB, on which every format is to stay within 300 MB of
# RSS and folded within 5 s; perf script and the pipeline are left out there unless BENCH_HUGE_PERF=1.  perf script alone is a lower bound for the
# `perf script | stackcollapse-perf.pl` pipeline.  On a shared machine wall times vary with the load;
# CPU seconds (user + system, all threads) vary less, and the ratios are given for both.
#
#   PERFCONV=./perfconv  BENCH_SIZES="50 200"  BENCH_FRESH=1 (record again)  BENCH_PERIOD_NS=20000
#   BENCH_RUNS=3  BENCH_SHORT_RUNS=3 (the short commands' runs a round)  BENCH_HUGE_RUNS=1
#   BENCH_PERF=0 (skip perf script / perf report / the perfcollect pipeline)
#   BENCH_HUGE=1 BENCH_HUGE_MB=2000 BENCH_HUGE_PERIOD_NS=10000 BENCH_HUGE_PERF=0
# `make bench` builds perfconv, installs linux-perf when missing, and runs this.
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
PERFCONV=${PERFCONV:-./perfconv}
WORK=bench/work
SIZES=${BENCH_SIZES-${BENCH_MB:-50 200}} # BENCH_SIZES="" : only the DWARF run
HUGE_MB=
if [ "${BENCH_HUGE:-0}" = 1 ]; then
	HUGE_MB=${BENCH_HUGE_MB:-2000}
	SIZES="$SIZES $HUGE_MB"
fi
PERIOD_NS=${BENCH_PERIOD_NS:-20000} # cpu-clock period: 50 kHz per CPU
RUNS=${BENCH_RUNS:-3}
SHORT=${BENCH_SHORT_RUNS:-3}
mkdir -p "$WORK"
rm -f "$WORK"/best.*	# a section skipped this run leaves no figure behind

say() { printf 'bench: %s\n' "$*"; }

if [ ! -x "$PERFCONV" ]; then
	say "no perfconv binary at '$PERFCONV' (run make, or make bench)"
	exit 1
fi
if ! command -v perf >/dev/null 2>&1; then
	say "perf is not installed (scripts/install-deps.sh --bench installs linux-perf); nothing to compare"
	exit 0
fi

size_mb() { echo $(($(stat -c %s "$1") / 1000000)); }

# period DATA: the cpu-clock period DATA is recorded with (the huge recording samples faster, to be
# made in minutes)
period() {
	if [ -n "$HUGE_MB" ] && [ "$1" = "$WORK/perf-$HUGE_MB.data" ]; then
		echo "${BENCH_HUGE_PERIOD_NS:-10000}"
	else
		echo "$PERIOD_NS"
	fi
}

# record DATA SECONDS: record the workload, one copy per CPU, for SECONDS.
record() {
	local data=$1 secs=$2 n period
	n=$(nproc 2>/dev/null || echo 2)
	period=$(period "$data")
	# shellcheck disable=SC2016 # the script is for the inner bash
	perf record -q -N -g -e cpu-clock -c "$period" -o "$data.new" -- \
		bash -c 'for _ in $(seq "$2"); do
				(end=$((SECONDS + $1)); while [ "$SECONDS" -lt "$end" ]; do "$3" 100; done) &
			done; wait' workload "$secs" "$n" "$WORK/callgraph" >/dev/null 2>"$WORK/record.log"
	mv -f "$data.new" "$data"
}

# get DATA MB: make sure DATA holds a recording of at least MB megabytes.
get() {
	local data=$1 target=$2 secs got
	if [ -z "${BENCH_FRESH-}" ] && [ -s "$data" ]; then
		say "reusing $data (BENCH_FRESH=1 records a new one)"
		return
	fi
	if ! perf record -q -o "$WORK/probe.data" -e cpu-clock -g true >"$WORK/record.log" 2>&1; then
		say "perf record does not work here, so there is nothing to benchmark:"
		sed 's/^/    /' "$WORK/record.log" | head -n 5
		rm -f "$WORK/probe.data"
		exit 0
	fi
	rm -f "$WORK/probe.data"
	[ -x "$WORK/callgraph" ] || gcc -O1 -fno-omit-frame-pointer -g -o "$WORK/callgraph" fixtures/bin-src/callgraph.c
	secs=5
	say "recording $secs s of $WORK/callgraph, one per CPU (cpu-clock every $(period "$data") ns, -g)"
	record "$data" "$secs"
	got=$(size_mb "$data")
	while [ "$got" -lt "$target" ]; do
		secs=$((secs * target * 12 / 10 / (got > 0 ? got : 1) + 1))
		say "$got MB is less than $target MB: recording $secs s"
		record "$data" "$secs"
		got=$(size_mb "$data")
	done
}

# best NAME OUT CMD...: append "WALL CPU RSS_KB" of one more run of CMD to $WORK/best.NAME.  The
# times and peak RSS are CMD's own, from wait4: RUSAGE_CHILDREN would also count whatever the
# python3 launcher ran before the interpreter (a pyenv shim costs half a second of CPU).
best() {
	local name=$1 out=$2
	shift 2
	python3 - "$out" "$@" >>"$WORK/best.$name" <<'EOF2'
import os, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t = time.monotonic()
with open(out, "wb") as f:
    p = subprocess.Popen(cmd, stdout=f)
    _, status, ru = os.wait4(p.pid, 0)
wall = time.monotonic() - t
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("bench: %s exited with status %d" % (" ".join(cmd), os.waitstatus_to_exitcode(status)))
print("%.3f %.3f %d" % (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
EOF2
}
# best_row NAME: the best wall, best CPU and largest RSS of the runs of NAME
best_row() {
	sort -n -k1,1 "$WORK/best.$1" | head -n 1 | cut -d' ' -f1 | tr '\n' ' '
	sort -n -k2,2 "$WORK/best.$1" | head -n 1 | cut -d' ' -f2 | tr '\n' ' '
	sort -n -k3,3 "$WORK/best.$1" | tail -n 1 | cut -d' ' -f3
}
formats=$("$PERFCONV" --help | sed -n 's/^Formats: *//p')
# --no-cache rows only where the binary has the kernel symbol cache (an older one, for a "before")
nocache=0
"$PERFCONV" --help | grep -q -- --no-cache && nocache=1
all=${formats// /,}
rows=$WORK/rows.txt
: >"$rows"
# the kernel symbol cache's figures: a conversion with an empty cache misses and writes the entry,
# the next one hits (on the 1-second recording below, made for the small rows)
kdemo=${SIZES%% *}
if [ -n "$kdemo" ] && [ -s "$WORK/perf-$kdemo.data" ]; then
	rm -rf "$WORK/xdg"
	for i in 1 2; do
		XDG_CACHE_HOME=$PWD/$WORK/xdg "$PERFCONV" -v -i "$WORK/perf-$kdemo.data" -o /dev/null 2>&1 |
			sed -n "s|^perfconv: kernel symbol cache:|bench: kernel symbol cache, conversion $i with an empty cache:|p"
	done
	[ ! -d "$WORK/xdg/perfconv/kallsyms" ] || ls -l "$WORK/xdg/perfconv/kallsyms" | awk 'NR > 1 {print "bench: kernel symbol cache entry: " $5 " bytes"}'
	rm -rf "$WORK/xdg"
fi
for mb in $SIZES; do
	data=$WORK/perf-$mb.data
	get "$data" "$mb"
	bytes=$(stat -c %s "$data")
	samples=$("$PERFCONV" --stats -i "$data" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	say "input: $data, $((bytes / 1000000)) MB, $samples samples"
	cat "$data" >/dev/null # the same warm page cache for all
	runs=$RUNS
	[ "$mb" = "$HUGE_MB" ] && runs=${BENCH_HUGE_RUNS:-1}
	do_perf=${BENCH_PERF:-1}
	[ "$mb" = "$HUGE_MB" ] && do_perf=${BENCH_HUGE_PERF:-0}
	fields=comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace
	if [ "$do_perf" != 0 ]; then
		# perfcollect's pipeline; perf script refuses cpu on samples without one, and
		# perfcollect then asks again without it
		perf script -i "$data" -F "$fields" 2>/dev/null | head -c 1 | grep -q . || fields=${fields/cpu,/}
		command -v zip >/dev/null 2>&1 || say "zip is not installed: no perfcollect pipeline to compare trace.zip with"
	fi
	rm -f "$WORK/best.$mb-"*
	# every command once a round, RUNS rounds: a disturbance of the machine hits one run of one
	# command, and each keeps its best; the short ones (perfconv's, cat) SHORT times a round, in
	# turns, so that a disturbance lasting a few seconds does not cover all of their runs
	short=$SHORT
	[ "$mb" = "$HUGE_MB" ] && short=1
	for _ in $(seq "$runs"); do
		for _ in $(seq "$short"); do
			for f in $formats; do
				best "$mb-perfconv-$f" /dev/null "$PERFCONV" -q -i "$data" -f "$f" -o "$WORK/out.$f"
				[ "$mb" = "$HUGE_MB" ] && rm -f "$WORK/out.$f"
			done
			# (not on the huge input: each format alone says what it needs there)
			if [ "$formats" != folded ] && [ "$mb" != "$HUGE_MB" ]; then
				rm -rf "$WORK/batch"
				best "$mb-perfconv-all-formats" /dev/null "$PERFCONV" -q -O "$WORK/batch" -f "$all" "$data"
				rm -rf "$WORK/batch"
			fi
			# reading the file once: the floor of any converter
			best "$mb-cat" /dev/null cat "$data"
			# the same conversion reading /proc/kallsyms as before the kernel symbol cache
			[ $nocache = 0 ] || best "$mb-perfconv-folded-no-cache" /dev/null "$PERFCONV" -q --no-cache -i "$data" -f folded -o "$WORK/out.folded"
		done
		if [ "$do_perf" != 0 ]; then
			best "$mb-perf-script" /dev/null perf script -i "$data"
			best "$mb-perf-report" /dev/null perf report -i "$data" --stdio
			if command -v zip >/dev/null 2>&1; then
				rm -rf "$WORK/pc" && mkdir -p "$WORK/pc/pc.trace"
				# shellcheck disable=SC2016 # for the inner bash
				best "$mb-perfcollect-pipeline" /dev/null bash -c 'perf script -i "$1" -F "$2" >"$3/pc.trace/perf.data.txt" 2>/dev/null &&
					cd "$3" && zip -q -r pc.trace.zip pc.trace' pipeline "$data" "$fields" "$WORK/pc"
				rm -rf "$WORK/pc"
			fi
		fi
	done
	names=()
	for f in $formats all-formats; do names+=("perfconv-$f"); done
	for n in "${names[@]}" perfconv-folded-no-cache cat perf-script perf-report perfcollect-pipeline; do
		if [ -s "$WORK/best.$mb-$n" ]; then
			echo "$mb $bytes $samples $n $(best_row "$mb-$n")" >>"$rows"
		fi
	done
	# what the text of perf-script costs: its size, and its time beyond folded's (formatting
	# every sample's frames and writing them; trace.zip's perf.data.txt is that text too)
	if [ -s "$WORK/out.perf-script" ] && [ -s "$WORK/best.$mb-perfconv-folded" ] && [ -s "$WORK/best.$mb-perfconv-perf-script" ]; then
		python3 - "$(stat -c %s "$WORK/out.perf-script")" "$(best_row "$mb-perfconv-perf-script")" "$(best_row "$mb-perfconv-folded")" "$mb" <<'EOF2'
import sys
size = int(sys.argv[1]); pw, pc = map(float, sys.argv[2].split()[:2]); fw, fc = map(float, sys.argv[3].split()[:2])
print("bench: %s MB  perf-script writes %.0f MB of text in %.2f s wall, %.2f s CPU: %.2f s wall (%.2f s CPU) more than "
      "folded, %.0f MB of text a second" % (sys.argv[4], size / 1e6, pw, pc, pw - fw, pc - fc, size / 1e6 / max(pw - fw, 0.001)))
EOF2
	fi
	rm -f "$WORK/best.$mb-"*
	rm -f "$WORK"/out.*
done

# Small recordings (BENCH_SMALL=0 skips): a live ASP.NET Core recording (below; BENCH_ASPNET=0 skips
# it), the .NET fixture dotnet-aspnet (an ASP.NET Core app, its
# perf map and jitdump in maps/, its kernel's symbols) and a 1-second recording of the workload above
# on this machine's kernel (whose symbols come from /proc/kallsyms or the cache), each converted to
# trace.zip and to svg against perfcollect's pipeline; then 20 copies of each, and 20 packs of each,
# converted to trace.zip and svg with -O -j 2 against the pipeline run 20 times, two at a time (the
# copies also to trace.zip alone, the pipeline's one output).
if [ "${BENCH_SMALL:-1}" != 0 ] && [ "${BENCH_PERF:-1}" != 0 ] && command -v zip >/dev/null 2>&1; then
	small_fp=$WORK/perf-small.data
	if [ -n "${BENCH_FRESH-}" ] || [ ! -s "$small_fp" ]; then
		[ -x "$WORK/callgraph" ] || gcc -O1 -fno-omit-frame-pointer -g -o "$WORK/callgraph" fixtures/bin-src/callgraph.c
		record "$small_fp" 1
	fi
	net=fixtures/dotnet-aspnet
	smalls="net fp"
	# a live ASP.NET Core recording of BENCH_ASPNET_SECONDS (default 10) under load (three clients,
	# -F 4999: a few MB), on this kernel,
	# with the runtime's perf map and jitdump in /tmp where perf script finds them too (kept in
	# bench/work/aspnet-maps/ and put back in /tmp for a later run); needs the .NET SDK
	aspnet=$WORK/aspnet.data
	if [ "${BENCH_ASPNET:-1}" != 0 ] && command -v dotnet >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
		if [ -n "${BENCH_FRESH-}" ] || [ ! -s "$aspnet" ]; then
			rm -rf "$WORK/probeweb-src" "$WORK/probeweb" "$WORK/aspnet-maps"
			cp -R fixtures/bin-src/dotnet/ProbeWeb "$WORK/probeweb-src"
			if (cd "$WORK/probeweb-src" && timeout 300 dotnet build -c Release -o "$PWD/../probeweb" --disable-build-servers) \
				>"$WORK/record.log" 2>&1; then
				say "recording $WORK/probeweb/ProbeWeb for ${BENCH_ASPNET_SECONDS:-10} s under load"
				DOTNET_PerfMapEnabled=1 perf record -q -F 4999 -g -e cpu-clock -o "$aspnet.new" -- \
					"$WORK/probeweb/ProbeWeb" --urls http://127.0.0.1:5119 >>"$WORK/record.log" 2>&1 &
				precord=$!
				for _ in $(seq 100); do curl -s -m 1 http://127.0.0.1:5119/hello >/dev/null 2>&1 && break; sleep 0.2; done
				end=$((SECONDS + ${BENCH_ASPNET_SECONDS:-10}))
				for _ in 1 2 3; do	# three clients
					while [ $SECONDS -lt $end ]; do
						curl -s -m 10 "http://127.0.0.1:5119/work?n=1000000" "http://127.0.0.1:5119/hello" >/dev/null 2>&1 || break
					done &
				done
				wait $(jobs -p | grep -vx "$precord")
				app=$(pgrep -P "$precord" || true)
				[ -n "$app" ] && kill -TERM "$app"
				wait "$precord" || true
				if [ -s "$aspnet.new" ]; then
					mv -f "$aspnet.new" "$aspnet"
					mkdir -p "$WORK/aspnet-maps"
					[ -n "$app" ] && cp /tmp/perf-"$app".map /tmp/jit-"$app".dump "$WORK/aspnet-maps/" 2>/dev/null || true
				fi
			else
				say "dotnet build of ProbeWeb failed: no ASP.NET recording (see $WORK/record.log)"
			fi
		fi
		if [ -s "$aspnet" ]; then
			cp -n "$WORK"/aspnet-maps/* /tmp/ 2>/dev/null || true
			smalls="aspnet $smalls"
		fi
	fi
	for small in $smalls; do
		if [ $small = aspnet ]; then
			data=$aspnet
			opts=()
			popts=()
		elif [ $small = net ]; then
			data=$net/perf.data
			opts=(--map-dir "$net/maps" --kallsyms "$net/kallsyms")
			popts=(--kallsyms "$net/kallsyms")
		else
			data=$small_fp
			opts=()
			popts=()
		fi
		bytes=$(stat -c %s "$data")
		samples=$("$PERFCONV" --stats -i "$data" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
		say "small input ($small): $data, $((bytes / 1000)) kB, $samples samples"
		fields=comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace
		perf script -i "$data" "${popts[@]}" -F "$fields" 2>/dev/null | head -c 1 | grep -q . || fields=${fields/cpu,/}
		rm -rf "$WORK/b20" && mkdir -p "$WORK/b20/in" "$WORK/b20/packs"
		for i in $(seq -w 1 20); do cp "$data" "$WORK/b20/in/rec$i.data"; done
		"$PERFCONV" -q -i "$data" "${opts[@]}" -f pack -o "$WORK/b20/one.pack"
		for i in $(seq -w 1 20); do cp "$WORK/b20/one.pack" "$WORK/b20/packs/rec$i.pack"; done
		# the symbol cache's figures on this input: two conversions with an empty cache, the
		# first misses and writes the entries, the second hits (kernel symbols, ELF tables,
		# ReadyToRun method names, inflated DWARF)
		if [ $nocache = 1 ]; then
			rm -rf "$WORK/xdg"
			for i in 1 2; do
				XDG_CACHE_HOME=$PWD/$WORK/xdg "$PERFCONV" -v -i "$data" "${opts[@]}" -f trace.zip -o "$WORK/out.trace.zip" 2>&1 |
					sed -n "s|^perfconv: \([a-zA-Z]* [a-z]*\) cache:|bench: $small: \1 cache, conversion $i with an empty cache:|p"
			done
			# packs' compressed members: the first pack misses and keeps them, the second hits
			for i in 1 2; do
				XDG_CACHE_HOME=$PWD/$WORK/xdg "$PERFCONV" -v -i "$data" "${opts[@]}" -f pack -o "$WORK/out.pack" 2>&1 |
					sed -n -e "s|^perfconv: pack frame cache:|bench: $small: pack frame cache, pack $i with the symbols cached:|p" \
						-e "s|^perfconv: pack members known by their files' identity, not hashed:|bench: $small: pack $i, members known by their files' identity, not hashed:|p"
			done
			for k in kallsyms elf r2r dwarf pack pack-sum; do
				[ ! -d "$WORK/xdg/perfconv/$k" ] ||
					echo "bench: $small: $k cache entries: $(find "$WORK/xdg/perfconv/$k" -type f | wc -l), $(du -sk "$WORK/xdg/perfconv/$k" | cut -f1) kB"
			done
			rm -rf "$WORK/xdg"
		fi
		rm -f "$WORK/best.small-"*
		# shellcheck disable=SC2016 # for the inner bash
		pipeline='d=$(mktemp -d "$(cd "$3" && pwd)/pc.XXXXXX") && mkdir "$d/pc.trace" &&
			perf script -i "$1" "${@:4}" -F "$2" >"$d/pc.trace/perf.data.txt" 2>/dev/null &&
			cd "$d" && zip -q -r pc.trace.zip pc.trace && cd / && rm -rf "$d"'
		for _ in $(seq "$RUNS"); do
			# the short commands (all but the pipeline run 20 times) SHORT times a round, as above
			for _ in $(seq "$SHORT"); do
				best small-perfconv-trace.zip /dev/null "$PERFCONV" -q -i "$data" "${opts[@]}" -f trace.zip -o "$WORK/out.trace.zip"
				best small-perfconv-svg /dev/null "$PERFCONV" -q -i "$data" "${opts[@]}" -f svg -o "$WORK/out.svg"
				best small-perfconv-folded /dev/null "$PERFCONV" -q -i "$data" "${opts[@]}" -f folded -o "$WORK/out.folded"
				[ $nocache = 0 ] || best small-perfconv-folded-no-cache /dev/null "$PERFCONV" -q --no-cache -i "$data" "${opts[@]}" -f folded -o "$WORK/out.folded"
				best small-perfconv-pack /dev/null "$PERFCONV" -q -i "$data" "${opts[@]}" -f pack -o "$WORK/out.pack"
				best small-perfcollect-pipeline /dev/null bash -c "$pipeline" pipeline "$data" "$fields" "$WORK" "${popts[@]}"
				rm -rf "$WORK/b20/out"
				best small-batch20-perfconv-trace.zip+svg /dev/null "$PERFCONV" -q -O "$WORK/b20/out" -j 2 -f trace.zip,svg "${opts[@]}" "$WORK/b20/in"
				rm -rf "$WORK/b20/out"
				# what the pipeline writes, alone: the same output on both sides
				best small-batch20-perfconv-trace.zip /dev/null "$PERFCONV" -q -O "$WORK/b20/out" -j 2 -f trace.zip "${opts[@]}" "$WORK/b20/in"
				rm -rf "$WORK/b20/out"
				best small-batch20-perfconv-packs-trace.zip+svg /dev/null "$PERFCONV" -q -O "$WORK/b20/out" -j 2 -f trace.zip,svg "$WORK/b20/packs"
				rm -rf "$WORK/b20/out"
			done
			# shellcheck disable=SC2016 # for the inner bash
			best small-batch20-perfcollect-pipeline /dev/null bash -c 'ls "$1"/in/*.data | xargs -P 2 -I{} bash -c "$2" pipeline {} "$3" "$4" "${@:5}"' \
				b20 "$WORK/b20" "$pipeline" "$fields" "$WORK" "${popts[@]}"
		done
		for n in perfconv-trace.zip perfconv-svg perfconv-folded perfconv-folded-no-cache perfconv-pack perfcollect-pipeline \
			batch20-perfconv-trace.zip+svg batch20-perfconv-trace.zip batch20-perfconv-packs-trace.zip+svg batch20-perfcollect-pipeline; do
			[ -s "$WORK/best.small-$n" ] && echo "small-$small $bytes $samples $n $(best_row "small-$n")" >>"$rows"
		done
		rm -f "$WORK/best.small-"*
		rm -rf "$WORK/b20" "$WORK"/out.*
	done
fi

# DWARF: a --call-graph dwarf recording of at least BENCH_DWARF_MB megabytes (default 100; 0 skips)
# of the dwarf-* fixtures' workload (C++ without frame pointers, a shared library, libc), made
# here and not kept in the repository, converted to folded stacks against `perf script`.  Each
# command runs BENCH_DWARF_RUNS times (default 3), alternating, and keeps its best wall and best
# CPU time (the least disturbed by whatever else the machine runs).  `cat FILE` is timed too:
# reading the recording alone, the floor of any converter, bounds the ratio any of them can reach.
DWARF_MB=${BENCH_DWARF_MB:-100}
DWARF_RUNS=${BENCH_DWARF_RUNS:-3}
if [ "$DWARF_MB" != 0 ]; then
	data=$WORK/dwarf-$DWARF_MB.data
	if [ -n "${BENCH_FRESH-}" ] || [ ! -s "$data" ]; then
		fixtures/bin-src/dwarf/build.sh "$WORK/dwarf-bin" >/dev/null
		secs=4
		while :; do
			say "recording $WORK/dwarf-bin/dwapp for $secs s with --call-graph dwarf"
			perf record -q -e cpu-clock -c 250000 --call-graph dwarf -o "$data.new" -- \
				"$WORK/dwarf-bin/dwapp" threads $((secs * 1000)) >/dev/null 2>"$WORK/record.log"
			mv -f "$data.new" "$data"
			got=$(size_mb "$data")
			[ "$got" -ge "$DWARF_MB" ] && break
			secs=$((secs * DWARF_MB * 12 / 10 / (got > 0 ? got : 1) + 1))
		done
	fi
	bytes=$(stat -c %s "$data")
	samples=$("$PERFCONV" --stats -i "$data" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	say "input: $data, $((bytes / 1000000)) MB, $samples samples (--call-graph dwarf)"
	cat "$data" >/dev/null
	rm -f "$WORK"/best.dwarf-*
	for _ in $(seq "$DWARF_RUNS"); do
		best dwarf-perfconv /dev/null "$PERFCONV" -q -i "$data" -f folded -o "$WORK/out.dwarf.folded"
		[ "${BENCH_PERF:-1}" = 0 ] || best dwarf-perf /dev/null perf script -i "$data"
		best dwarf-cat /dev/null cat "$data"
		[ "$nocache" = 0 ] || best dwarf-perfconv-nocache /dev/null "$PERFCONV" -q --no-cache -i "$data" -f folded -o "$WORK/out.dwarf.folded"
	done
	# the symbol cache on this input: two conversions with an empty cache (the kernel's table,
	# the ELF tables, libc's inflated DWARF for the inline frames)
	rm -rf "$WORK/xdg"
	for i in 1 2; do
		XDG_CACHE_HOME=$PWD/$WORK/xdg "$PERFCONV" -v -i "$data" -o /dev/null 2>&1 |
			sed -n "s|^perfconv: \([a-zA-Z]* [a-z]*\) cache:|bench: dwarf: \1 cache, conversion $i with an empty cache:|p"
	done
	for k in kallsyms elf dwarf; do
		[ ! -d "$WORK/xdg/perfconv/$k" ] || echo "bench: dwarf: $k cache entries: $(find "$WORK/xdg/perfconv/$k" -type f | wc -l), $(du -sk "$WORK/xdg/perfconv/$k" | cut -f1) kB"
	done
	rm -rf "$WORK/xdg"
	echo "dwarf $bytes $samples perfconv-folded $(best_row dwarf-perfconv)" >>"$rows"
	[ "$nocache" = 0 ] || echo "dwarf $bytes $samples perfconv-folded-no-cache $(best_row dwarf-perfconv-nocache)" >>"$rows"
	[ "${BENCH_PERF:-1}" = 0 ] || echo "dwarf $bytes $samples perf-script $(best_row dwarf-perf)" >>"$rows"
	echo "dwarf $bytes $samples cat-(read-only) $(best_row dwarf-cat)" >>"$rows"
	if [ "${BENCH_PERF:-1}" != 0 ]; then
		python3 - "$WORK/best.dwarf-perfconv" "$WORK/best.dwarf-perf" "$WORK/best.dwarf-cat" <<'EOF2'
import statistics, sys
def rows(f):
    return [list(map(float, l.split())) for l in open(f) if l.strip()]
def best(f):
    r = rows(f)
    return min(x[0] for x in r), max(min(x[1] for x in r), 0.001), max(x[2] for x in r) / 1024
def median(f):
    r = rows(f)
    return statistics.median(x[0] for x in r), max(statistics.median(x[1] for x in r), 0.001)
pw, pc, pr = best(sys.argv[1]); sw, sc, sr = best(sys.argv[2]); cw, cc, cr = best(sys.argv[3])
mpw, mpc = median(sys.argv[1]); msw, msc = median(sys.argv[2])
print("bench: dwarf: perfconv folded %.1fx faster than perf script by wall time (%.3f s against %.3f s), "
      "%.1fx by CPU time (%.3f s against %.3f s); peak RSS %.0f MB against %.0f MB (best of %d)" %
      (sw / pw, pw, sw, sc / pc, pc, sc, pr, sr, len(rows(sys.argv[1]))))
print("bench: dwarf: median of the same runs: %.1fx by wall time (%.3f s against %.3f s), %.1fx by CPU time "
      "(goal: 8x by the median wall time, peak RSS at most 100 MB)" % (msw / mpw, mpw, msw, msc / mpc))
print("bench: dwarf: reading the file alone (cat) takes %.2f s wall, %.2f s CPU: no converter reading it "
      "can be more than %.1fx (wall) / %.1fx (CPU) faster than perf script here" % (cw, cc, sw / cw, sc / cc))
EOF2
	fi
fi

python3 - "$rows" "$HUGE_MB" "$WORK" <<'EOF2'
import sys
rows = [l.split() for l in open(sys.argv[1])]
huge = sys.argv[2] if len(sys.argv) > 2 else ""
print("bench: %-8s %-38s %8s %8s %9s %12s %9s %9s %9s" %
      ("input", "command", "wall s", "CPU s", "MB/s", "samples/s", "RSS MB", "x wall", "x CPU"))
for mb in dict.fromkeys(r[0] for r in rows):
    rs = [r for r in rows if r[0] == mb]
    ref = [r for r in rs if r[3] == "perf-script"]
    rw, rc = (float(ref[0][4]), float(ref[0][5])) if ref else (None, None)
    for r in rs:
        size, samples, name = int(r[1]), int(r[2] or 0), r[3]
        wall, cpu, rss = max(float(r[4]), 0.001), max(float(r[5]), 0.001), int(r[6]) / 1024
        xw = "%8.1fx" % (rw / wall) if rw else "%9s" % "-"
        xc = "%8.1fx" % (rc / cpu) if rc else "%9s" % "-"
        print("bench: %-8s %-38s %8.2f %8.2f %9.1f %12.0f %9.1f %s %s" %
              ("%d MB" % (size // 1000000) if mb.isdigit() else mb, name, wall, cpu, size / 1e6 / wall,
               samples / wall, rss, xw, xc))
print("bench: x wall / x CPU: how many times faster than perf script (wall time / CPU time)")
for mb in dict.fromkeys(r[0] for r in rows):
    rs = {r[3]: r for r in rows if r[0] == mb}
    if mb == "dwarf":
        continue
    w = lambda n: max(float(rs[n][4]), 0.001)
    c = lambda n: max(float(rs[n][5]), 0.001)
    if not mb.isdigit():
        # small recordings: against perfcollect's pipeline, single and in a batch of 20
        for n in ("perfconv-trace.zip", "perfconv-svg", "perfconv-folded", "perfconv-pack"):
            if n in rs and "perfcollect-pipeline" in rs:
                print("bench: %s  %s: %.3f s wall, %.1fx faster than perfcollect's pipeline (%.3f s) by wall, %.1fx by CPU"
                      % (mb, n[9:], w(n), w("perfcollect-pipeline") / w(n), w("perfcollect-pipeline"),
                         c("perfcollect-pipeline") / c(n)))
        for n in ("batch20-perfconv-trace.zip+svg", "batch20-perfconv-trace.zip", "batch20-perfconv-packs-trace.zip+svg"):
            if n in rs and "batch20-perfcollect-pipeline" in rs:
                print("bench: %s  %s (-j 2): %.2f s, %.1f recordings/s against the pipeline's %.1f/s (trace.zip only, 2 at a "
                      "time): %.1fx by wall, %.1fx by CPU" % (mb, n, w(n), 20 / w(n), 20 / w("batch20-perfcollect-pipeline"),
                                                  w("batch20-perfcollect-pipeline") / w(n), c("batch20-perfcollect-pipeline") / c(n)))
        if "perfconv-folded-no-cache" in rs and "perfconv-folded" in rs:
            print("bench: %s  kernel symbol cache: folded %.3f s wall %.3f s CPU with it, %.3f s wall %.3f s CPU without (--no-cache)"
                  % (mb, w("perfconv-folded"), c("perfconv-folded"), w("perfconv-folded-no-cache"), c("perfconv-folded-no-cache")))
        if "perfconv-pack" in rs and "perfconv-folded" in rs:
            print("bench: %s  pack: %.2fx the time of folded (wall), %.2fx (CPU)" %
                  (mb, w("perfconv-pack") / w("perfconv-folded"), c("perfconv-pack") / c("perfconv-folded")))
        continue
    if "cat" in rs and "perfconv-folded" in rs:
        print("bench: %d MB  folded %.3f s against reading the file once (cat) %.3f s: %.1fx the floor (wall), %.1fx (CPU)" %
              (int(rs["cat"][1]) // 1000000, w("perfconv-folded"), w("cat"), w("perfconv-folded") / w("cat"), c("perfconv-folded") / c("cat")))
        print("bench: %d MB  against folded (wall): %s" % (int(rs["cat"][1]) // 1000000, ", ".join("%s %.2fx" % (n[9:], w(n) / w("perfconv-folded"))
              for n in rs if n.startswith("perfconv-") and n != "perfconv-folded")))
    if "perfconv-folded-no-cache" in rs and "perfconv-folded" in rs:
        print("bench: %d MB  kernel symbol cache: folded %.3f s wall %.3f s CPU with it, %.3f s wall %.3f s CPU without (--no-cache)"
              % (int(rs["perfconv-folded"][1]) // 1000000, w("perfconv-folded"), c("perfconv-folded"), w("perfconv-folded-no-cache"), c("perfconv-folded-no-cache")))
    size = int(next(iter(rs.values()))[1])
    tz, pl = rs.get("perfconv-trace.zip"), rs.get("perfcollect-pipeline")
    if tz and pl:
        print("bench: %d MB  trace.zip: perfconv %.2f s wall %.2f s CPU, perfcollect's perf script -F + zip -r "
              "%.2f s wall %.2f s CPU: %.1fx wall, %.1fx CPU" %
              (size // 1000000, float(tz[4]), float(tz[5]), float(pl[4]), float(pl[5]),
               float(pl[4]) / max(float(tz[4]), 0.001), float(pl[5]) / max(float(tz[5]), 0.001)))
    print("bench: %d MB  peak RSS MB: %s" % (size // 1000000, ", ".join(
        "%s %.0f" % (n[len("perfconv-"):], int(r[6]) / 1024) for n, r in rs.items() if n.startswith("perfconv-"))))
# the targets, each with this run's figure: met or MISSED
work = sys.argv[3] if len(sys.argv) > 3 else ""
targets = []
def target(what, value, goal, ok, unit="x"):
    targets.append("bench: target %-58s %7.2f%s  (goal %s): %s" % (what, value, unit, goal, "met" if ok else "MISSED"))
for mb in dict.fromkeys(r[0] for r in rows):
    rs = {r[3]: r for r in rows if r[0] == mb}
    w = lambda n: max(float(rs[n][4]), 0.001)
    c = lambda n: max(float(rs[n][5]), 0.001)
    if mb.isdigit() and mb != huge and "perfconv-folded" in rs:
        if "cat" in rs:
            target("%d MB folded against cat, wall" % (int(rs["cat"][1]) // 1000000), w("perfconv-folded") / w("cat"),
                   "at most 5x", w("perfconv-folded") / w("cat") <= 5)
        for n in rs:
            # the text formats: the output's own size rules (the bench prints what writing it costs)
            if n.startswith("perfconv-") and n not in ("perfconv-folded", "perfconv-perf-script", "perfconv-trace.zip",
                                                       "perfconv-all-formats", "perfconv-folded-no-cache"):
                target("%d MB %s against folded, wall" % (int(rs[n][1]) // 1000000, n[9:]), w(n) / w("perfconv-folded"),
                       "at most 2x", w(n) / w("perfconv-folded") <= 2)
        # the Firefox Profiler's file holds every sample's time: beside speedscope's aggregate
        if "perfconv-firefox" in rs and "perfconv-speedscope" in rs:
            for what, f in (("wall", w), ("CPU", c)):
                x = f("perfconv-firefox") / f("perfconv-speedscope")
                target("%d MB firefox against speedscope, %s" % (int(rs["perfconv-firefox"][1]) // 1000000, what), x,
                       "at most 1.5x", x <= 1.5)
    elif mb.startswith("small-"):
        if "perfcollect-pipeline" in rs and mb in ("small-aspnet",):
            for n in ("perfconv-trace.zip", "perfconv-svg"):
                if n in rs:
                    x = min(w("perfcollect-pipeline") / w(n), c("perfcollect-pipeline") / c(n))
                    target("%s %s against the pipeline, wall and CPU" % (mb, n[9:]), x, "at least 8x", x >= 8)
            n = "batch20-perfconv-trace.zip+svg"
            if n in rs and "batch20-perfcollect-pipeline" in rs:
                x = min(w("batch20-perfcollect-pipeline") / w(n), c("batch20-perfcollect-pipeline") / c(n))
                target("%s batch of 20 against the pipeline, wall and CPU" % mb, x, "at least 8x", x >= 8)
        if "perfconv-pack" in rs and "perfconv-folded" in rs:
            target("%s pack against folded, wall" % mb, w("perfconv-pack") / w("perfconv-folded"), "at most 2x",
                   w("perfconv-pack") / w("perfconv-folded") <= 2)
if work:
    import os, statistics
    def rowsof(f):
        return [list(map(float, l.split())) for l in open(f) if l.strip()] if os.path.exists(f) else []
    pc, ps = rowsof(work + "/best.dwarf-perfconv"), rowsof(work + "/best.dwarf-perf")
    if pc and ps:
        x = statistics.median(r[0] for r in ps) / max(statistics.median(r[0] for r in pc), 0.001)
        target("dwarf folded against perf script, median wall", x, "at least 8x", x >= 8)
        rss = max(r[2] for r in pc) / 1024
        target("dwarf folded peak RSS", rss, "at most 100 MB", rss <= 100, " MB")
for t in targets:
    print(t)
if huge:
    rs = {r[3]: r for r in rows if r[0] == huge}
    worst = max((int(r[6]) / 1024 for n, r in rs.items() if n.startswith("perfconv-")), default=0)
    fold = float(rs["perfconv-folded"][4]) if "perfconv-folded" in rs else -1
    print("bench: huge input: largest RSS %.0f MB (goal 300 MB: %s), folded %.2f s (goal 5 s: %s)" %
          (worst, "met" if worst <= 300 else "MISSED", fold, "met" if 0 <= fold <= 5 else "MISSED"))
EOF2
