#!/usr/bin/env bash
# tests/aspnet-live.sh - an ASP.NET Core app under load, recorded by attaching to it, must convert
# into a readable profile: at most ASPNET_LIVE_MAX % (2 by default) of the samples may hold an
# unnamed managed or ReadyToRun frame (tests/dotnet-resolution.py --check-unnamed: a frame in a
# framework image or JIT code left as [X.dll], [unknown] or memfd:doublemapper).
#
# The app is fixtures/bin-src/dotnet/ProbeApi (POST /orders: System.Text.Json, a compiled Regex,
# Dictionary, LINQ OrderBy and Sum, StringBuilder), bound to 127.0.0.1 only, loaded by curl with
# keep-alive from this script (a bounded number of requests, all to 127.0.0.1), warmed up for
# ASPNET_LIVE_WARMUP seconds and then recorded for ASPNET_LIVE_SECONDS with
# DOTNET_PerfMapEnabled=1 and `perf record -g -p PID` only.  Cases:
#   aspnet-live/host            the app on the host; the runtime writes its files into /tmp
#                               (removed afterwards) and the recording converts with no flag;
#   aspnet-live/namespace       the app in its own pid and mount namespace with a private tmpfs /tmp
#                               (unshare; it is pid 1 there and writes perf-1.map), recorded from the
#                               host by its host pid; its /tmp files copied out while it runs, and the
#                               recording converted after it ended with --map-dir;
#   aspnet-live/namespace-proc  the same recording converted while the app still runs, with no flag:
#                               perfconv finds its files through /proc/PID/root/tmp;
#   aspnet-live/namespace-pack  the same recording, while the app runs, converted with no flag into
#                               every format (the references: the recording machine's outputs) and
#                               packed (-o app.perfpack); after the app ended, the pack converted to
#                               every format in a mount namespace that hides all this machine could
#                               name frames with (empty tmpfs over /tmp, the home, /usr/lib/debug,
#                               the .NET install and the app's folder, /dev/null over /proc/kallsyms)
#                               must give the references byte for byte, except what names the
#                               command line: trace.zip's perfcollect.log and pprof's comment that
#                               holds it.  Its ok line gives the unnamed share from the pack and of
#                               the recording converted without it in the same namespace, and the
#                               pack's size against the recording's.
#   aspnet-live/namespace-jitdump  the same recording, while the app runs (stopped meanwhile),
#                               converted with no flag into trace.zip and packed: the conversion
#                               reads the app's jitdump through /proc/PID/root/tmp/jit-1.dump (it is
#                               pid 1 in its namespace), and that same file must be in trace.zip,
#                               byte for byte, and in the pack.
# The others' ok lines give the unnamed share before (perf 6.1's naming) and after, with the sample
# count.
# Needs root (perf record -p, unshare, mount), perf, curl, python3 and the .NET 10 SDK with ASP.NET
# Core; skips with a reason otherwise.  The app is built once (offline) into build/dotnet-live/api-<hash
# of the sources and the SDK version>, which later runs (and make asan) reuse.
#
#   PERFCONV                 binary under test (default ./perfconv)
#   FILTERS="w1 w2"          only the cases whose name contains one of the words
#   ASPNET_LIVE_SECONDS=6    seconds recorded;  ASPNET_LIVE_WARMUP=3  seconds of load before it
#   ASPNET_LIVE_MAX=2        the largest unnamed share allowed, in percent
#   ASPNET_LIVE_KEEP=DIR     keep each case's recording, maps and outputs in DIR/CASE
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" aspnet-live
SECS=${ASPNET_LIVE_SECONDS:-6}
WARMUP=${ASPNET_LIVE_WARMUP:-3}
MAX=${ASPNET_LIVE_MAX:-2}
# The conversion "with no flag": the best names are perfconv's default.
DEFAULT_FLAGS=()

cases=()
for c in aspnet-live/host aspnet-live/namespace aspnet-live/namespace-proc aspnet-live/namespace-pack \
	aspnet-live/namespace-jitdump; do
	selected "$c" && cases+=("$c")
done
[ "${#cases[@]}" -eq 0 ] && exit 0

command -v dotnet >/dev/null 2>&1 || skip_all "dotnet is not installed (the .NET 10 SDK is needed)"
command -v perf >/dev/null 2>&1 || skip_all "perf is not installed (scripts/install-deps.sh --bench)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed (scripts/install-deps.sh --test)"
command -v curl >/dev/null 2>&1 || skip_all "curl is needed to load the app"
sdk=$(dotnet --list-sdks 2>/dev/null | grep '^10\.' | tail -n 1)
[ -n "$sdk" ] || skip_all "no .NET 10 SDK (dotnet --list-sdks)"
dotnet --list-runtimes 2>/dev/null | grep -q '^Microsoft\.AspNetCore\.App 10\.' ||
	skip_all "no ASP.NET Core 10 runtime (dotnet --list-runtimes)"
need_perfconv aspnet-live
if ! perf record -q -e cpu-clock -o "$TMP/probe.data" -- true >"$TMP/perf-probe.log" 2>&1; then
	skip_all "perf record does not work here ($(grep -m 1 -v '^$' "$TMP/perf-probe.log"))"
fi

# Perf's naming, for the "before" share.
BEFORE_FLAGS=(--perf-compat)

# The app's processes and the files the host run leaves in /tmp go when the script ends.
app_pids=() host_files=()
stop_app() {
	local p
	for p in "${app_pids[@]}"; do stop_pid "$p"; done
	app_pids=()
}
# ASPNET_LIVE_KEEP: the recordings and outputs are copied out before TMP goes
keep() {
	[ -n "${ASPNET_LIVE_KEEP-}" ] || return 0
	local k
	for k in host namespace namespace-pack; do
		[ -d "$TMP/$k" ] && mkdir -p "$ASPNET_LIVE_KEEP" && rm -rf "${ASPNET_LIVE_KEEP:?}/$k" &&
			cp -R "$TMP/$k" "$ASPNET_LIVE_KEEP/$k"
	done
}
# the app's copy when the tree lies under /tmp (see run_case)
nsbin_copy=
cleanup() {
	stop_app
	keep
	rm -f "${host_files[@]}"
	rm -rf "$TMP" ${nsbin_copy:+"$nsbin_copy"}
}
trap cleanup EXIT

# Build a copy of the sources, offline, so that no obj/ appears in the tree.
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
src=fixtures/bin-src/dotnet/ProbeApi
key=$({ cat "$src"/*; echo "$sdk"; } | sha256sum | cut -c1-16)
bin=$top/build/dotnet-live/api-$key
start=$SECONDS
if ! dotnet_build "$src" "$bin" ProbeApi; then
	for c in "${cases[@]}"; do
		fail "$c" "dotnet build of $src failed" "$TMP/build.errors"
	done
	exit 0
fi
built=$((SECONDS - start))

# The request body: 200 orders, one in nine with an address the Regex rejects.
orders_body "$TMP/body.json"

# run_case CASE [LABEL]: start the app (in namespaces for the namespace cases), load it, record it
# by attaching, convert and measure.  Sets d and hostpid; a failure is LABEL's (default CASE).
run_case() {
	local c=$1 label=${2:-$1} port url upid=0 rec served t0
	d=$TMP/${c#aspnet-live/}
	mkdir -p "$d/maps"
	port=$(free_port)
	url=http://127.0.0.1:$port
	t0=$SECONDS
	if [ "$c" = aspnet-live/host ]; then
		DOTNET_PerfMapEnabled=1 "$bin/ProbeApi" --urls "$url" >"$d/app.log" 2>&1 &
		hostpid=$!
		app_pids+=("$hostpid")
	else
		# The private /tmp hides whatever lies under the host's /tmp, the build too when the tree
		# was cloned there: then the app runs from a copy under /var/tmp.  Its working directory
		# (ASP.NET's content root) is its own directory, which stays visible.
		nsbin=$bin
		case $bin in
		/tmp/*)
			if [ -z "$nsbin_copy" ]; then
				nsbin_copy=$(mktemp -d /var/tmp/perfconv-aspnet.XXXXXX) && cp -a "$bin/." "$nsbin_copy/"
			fi
			nsbin=$nsbin_copy
			;;
		esac
		# a private /tmp (tmpfs) in a mount namespace, and a pid namespace where the app is pid 1
		DOTNET_PerfMapEnabled=1 unshare --pid --mount --fork --mount-proc --propagation private --kill-child \
			sh -c 'mount -t tmpfs -o size=256m perfconv-ctmp /tmp && cd "${0%/*}" && exec "$0" "$@"' \
			"$nsbin/ProbeApi" --urls "$url" >"$d/app.log" 2>&1 &
		upid=$!
		app_pids+=("$upid")
	fi
	for _ in $(seq 200); do
		curl -s -m 1 "$url/hello" >/dev/null 2>&1 && break
		sleep 0.1
	done
	if ! curl -s -m 2 "$url/hello" >/dev/null 2>&1; then
		fail "$label" "the app did not answer on $url within 20 s" "$d/app.log"
		return 1
	fi
	if [ "$upid" != 0 ]; then
		hostpid=$(cat "/proc/$upid/task/$upid/children" 2>/dev/null | awk '{ print $1 }')
		if [ -z "$hostpid" ] || [ "$(readlink "/proc/$hostpid/exe")" != "$nsbin/ProbeApi" ]; then
			fail "$label" "no ProbeApi process under unshare (pid $upid)"
			return 1
		fi
		# the app first: unshare does not pass SIGTERM on (--kill-child kills it if unshare dies)
		app_pids=("$hostpid" "$upid")
	else
		host_files+=("/tmp/perf-$hostpid.map" "/tmp/jit-$hostpid.dump" "/tmp/perfinfo-$hostpid.map")
	fi
	# warm up: the tiered JIT recompiles the hot methods in the first seconds of load
	load "$url/orders" before_time $((SECONDS + WARMUP)) >/dev/null
	perf record -q -g -p "$hostpid" -o "$d/perf.data" -- sleep "$SECS" >"$d/record.log" 2>&1 &
	rec=$!
	served=$(load "$url/orders" running "$rec")
	if ! wait "$rec" || [ ! -s "$d/perf.data" ]; then
		fail "$label" "perf record -g -p $hostpid failed" "$d/record.log"
		return 1
	fi
	echo "$served" >"$d/served"
	if [ "$upid" != 0 ]; then
		# while it runs: convert through /proc/PID/root/tmp, then copy its files out
		convert "$d" live -i "$d/perf.data" "${DEFAULT_FLAGS[@]}"
		cp "/proc/$hostpid/root/tmp/"perf-*.map "/proc/$hostpid/root/tmp/"jit-*.dump "$d/maps/" 2>/dev/null
		selected aspnet-live/namespace-pack && [ -n "$packw" ] && pack_live "$d"
		selected aspnet-live/namespace-jitdump && side_live "$d"
	fi
	stop_app
	echo $((SECONDS - t0)) >"$d/seconds"
	return 0
}

# convert DIR NAME ARGS...: perfconv ARGS -o DIR/NAME.folded; its summary in DIR/NAME.log.
convert() {
	local dir=$1 name=$2
	shift 2
	"$PERFCONV" "$@" -o "$dir/$name.folded" >"$dir/$name.log" 2>&1 </dev/null
	echo $? >"$dir/$name.rc"
}

# check CASE DIR NAME BEFORE: the verdict on DIR/NAME.folded, with the share BEFORE for the line.
check() {
	local c=$1 dir=$2 name=$3 before=$4 after samples
	if [ "$(cat "$dir/$name.rc")" != 0 ] || [ ! -s "$dir/$name.folded" ]; then
		fail "$c" "perfconv exited with status $(cat "$dir/$name.rc")" "$dir/$name.log"
		return
	fi
	after=$(measure "$dir/$name.folded")
	samples=$(sed -n "s/^perfconv: '[^']*': \([0-9]*\) samples read.*/\1/p" "$dir/$name.log")
	if [ -z "$after" ]; then
		fail "$c" "tests/dotnet-resolution.py failed" "$dir/$name.folded.classes"
	elif grep -q 'is above' "$dir/$name.folded.classes"; then
		fail "$c" "$after of $samples samples (at most $MAX% allowed; perf's naming: $before)" "$dir/$name.folded.classes"
	else
		pass "$c ($after of $samples samples, perf's naming $before; $(cat "$dir/served") requests; build ${built} s, case $(cat "$dir/seconds") s)"
	fi
}

# ---- aspnet-live/namespace-jitdump -------------------------------------------------------------
# side_live DIR: while the app runs, DIR/perf.data converted with no flag into DIR/side/app.trace.zip
# and DIR/side/app.perfpack (each with its .log and .rc), and the container's jitdump copied into
# DIR/side.  The app is stopped meanwhile, so that its jitdump stays as the conversions read it.
side_live() {
	local d=$1 e
	mkdir -p "$d/side"
	echo "$hostpid" >"$d/side/hostpid"
	kill -STOP "$hostpid"
	for e in trace.zip perfpack; do
		"$PERFCONV" -i "$d/perf.data" "${DEFAULT_FLAGS[@]}" -o "$d/side/app.$e" >"$d/side/app.$e.log" 2>&1 </dev/null
		echo $? >"$d/side/app.$e.rc"
	done
	cp "/proc/$hostpid/root/tmp/"jit-*.dump "$d/side/" 2>/dev/null
	kill -CONT "$hostpid"
}

# check_side DIR: the jitdump the conversion read through /proc/PID/root/tmp is what trace.zip and
# the pack hold of it.
check_side() {
	local c=aspnet-live/namespace-jitdump s=$1/side e dump member pid bad=
	pid=$(cat "$s/hostpid" 2>/dev/null)
	dump=$(ls "$s"/jit-*.dump 2>/dev/null | head -n 1)
	for e in trace.zip perfpack; do
		if [ "$(cat "$s/app.$e.rc" 2>/dev/null)" != 0 ]; then
			fail "$c" "perfconv -o app.$e exited with status $(cat "$s/app.$e.rc" 2>/dev/null)" "$s/app.$e.log"
			return
		fi
	done
	if [ -z "$dump" ]; then
		fail "$c" "no jitdump in the container's /tmp (/proc/$pid/root/tmp)"
		return
	fi
	if ! grep -q "[1-9][0-9]* by jitdumps" "$s/app.trace.zip.log"; then
		fail "$c" "the conversion named no frame from the container's jitdump" "$s/app.trace.zip.log"
		return
	fi
	unzip -Z1 "$s/app.trace.zip" >"$s/zip.list" 2>&1
	member=$(grep -m 1 '/jit-[0-9]*\.dump$' "$s/zip.list")
	if [ -z "$member" ]; then
		bad="trace.zip holds no jitdump (only $(tr '\n' ' ' <"$s/zip.list"))"
	elif ! unzip -p "$s/app.trace.zip" "$member" | cmp -s - "$dump"; then
		bad="trace.zip's $member is not the container's ${dump##*/}"
	fi
	tar --zstd -tf "$s/app.perfpack" >"$s/pack.list" 2>&1
	grep -qx "files/proc/$pid/root/tmp/${dump##*/}" "$s/pack.list" ||
		bad="${bad:+$bad; }the pack holds no files/proc/$pid/root/tmp/${dump##*/}"
	if [ -n "$bad" ]; then
		cat "$s/zip.list" "$s/pack.list" >"$s/lists"
		fail "$c" "$bad" "$s/lists"
	else
		pass "$c (${dump##*/} of pid $pid in trace.zip as $member and in the pack)"
	fi
}

# ---- aspnet-live/namespace-pack ----------------------------------------------------------------
# The formats, by the endings their outputs are named with (perfconv --help lists them).
PACK_ENDINGS=(folded perf.txt speedscope.json svg trace.zip pb.gz)

# pack_live DIR: while the app runs, the references, DIR/perf.data converted with no flag into
# DIR/ref/app.ENDING (each with its .log and .rc), and the pack, packw/app.perfpack (pack.log,
# pack.rc).  The app is stopped (SIGSTOP) meanwhile: its tiered JIT keeps compiling after the load
# ends and appends to its perf map, and the references and the pack must read the same files.
pack_live() {
	local d=$1 e t0=$SECONDS
	mkdir -p "$d/ref" "$packw"
	kill -STOP "$hostpid"
	for e in "${PACK_ENDINGS[@]}"; do
		"$PERFCONV" -i "$d/perf.data" "${DEFAULT_FLAGS[@]}" -o "$d/ref/app.$e" >"$d/ref/app.$e.log" 2>&1 </dev/null
		echo $? >"$d/ref/app.$e.rc"
	done
	"$PERFCONV" -i "$d/perf.data" "${DEFAULT_FLAGS[@]}" -o "$packw/app.perfpack" >"$packw/pack.log" 2>&1 </dev/null
	echo $? >"$packw/pack.rc"
	kill -CONT "$hostpid"
	echo $((SECONDS - t0)) >"$packw/live-seconds"
}

# isolated PERFCONV DIR ENDING...: in tests/tools/isolate.sh's mount namespace, which hides all of
# this machine that could name the recording's frames (empty tmpfs over /tmp, HOME, /usr/lib/debug,
# ~/.debug, the .NET install, and here /root, the user's home and the app's folder; /dev/null over
# /proc/kallsyms) and keeps DIR and PERFCONV's directory: DIR/app.perfpack converted into
# DIR/pack/app.ENDING, and the recording DIR/perf.data, without the pack, into DIR/raw/app.folded
# (each with its .log and .rc).  Exit status 125: no such namespace here.
isolated() {
	local pc=$1 w=$2 home
	shift 2
	home=$(getent passwd "$(id -u)" | cut -d: -f6)
	# shellcheck disable=SC2016  # the script's variables are its own
	tests/tools/isolate.sh -k "$w" -k "$(dirname "$pc")" -x /root -x "${home:-/root}" -x "$bin" -x "$nsbin" -- bash -c '
		pc=$1 w=$2
		shift 2
		mkdir -p "$w/pack" "$w/raw" || exit 125
		for e; do
			"$pc" -i "$w/app.perfpack" -o "$w/pack/app.$e" >"$w/pack/app.$e.log" 2>&1 </dev/null
			echo $? >"$w/pack/app.$e.rc"
		done
		"$pc" -i "$w/perf.data" -o "$w/raw/app.folded" >"$w/raw/app.folded.log" 2>&1 </dev/null
		echo $? >"$w/raw/app.folded.rc"' isolated "$pc" "$w" "$@"
}

# same_file NAME REF GOT: true when GOT is REF byte for byte; else a section on where they first
# differ and the head of a diff goes to $packw/differences.
same_file() {
	cmp -s "$2" "$3" && return 0
	{
		echo "== $1: $(cmp "$2" "$3" 2>&1 | head -n 1 | sed "s|$packw/||g; s|$TMP/||g")"
		timeout 20 diff "$2" "$3" | head -n 12 | cut -c 1-300
	} >>"$packw/differences"
	return 1
}

# same_zip REF GOT: the members of two trace.zip archives, their order, contents and attributes,
# all but perfcollect.log (it gives the command line and the input's path); differences to
# $packw/differences.
same_zip() {
	python3 - "$@" >>"$packw/differences" <<'EOF'
import sys, zipfile
a, b = (zipfile.ZipFile(f) for f in sys.argv[1:3])
na, nb = a.namelist(), b.namelist()
bad, attrs = [], []
if na != nb:
    bad.append("members %s, from the pack %s" % (na, nb))

def line_at(d, i):
    s = d.rfind(b"\n", 0, i) + 1
    e = d.find(b"\n", i)
    return d[s:e if e >= 0 else len(d)].decode(errors="replace")[:300]

for n in na:
    if n not in nb:
        continue
    ia, ib = a.getinfo(n), b.getinfo(n)
    for f in ("date_time", "external_attr", "create_system", "compress_type"):
        if getattr(ia, f) != getattr(ib, f):
            attrs.append("%s: %s %r, from the pack %r" % (n, f, getattr(ia, f), getattr(ib, f)))
    if n.endswith("/perfcollect.log"):
        continue
    da, db = a.read(n), b.read(n)
    if da == db:
        continue
    i, m = 0, min(len(da), len(db))
    while i < m and da[i:i + 65536] == db[i:i + 65536]:
        i += 65536
    while i < m and da[i] == db[i]:
        i += 1
    bad.append("%s: differs at byte %d, line %d (%d bytes, %d from the pack)\n< %s\n> %s" % (
        n, i, da.count(b"\n", 0, i) + 1, len(da), len(db), line_at(da, i), line_at(db, i)))
if bad or attrs:
    print("== trace.zip: " + "\n".join(bad + attrs))
sys.exit(1 if bad or attrs else 0)
EOF
}

# same_pprof REF GOT: two pprof profiles are equal byte for byte, or once decompressed but for
# the comment that holds the command line (it names the input); differences to $packw/differences.
same_pprof() {
	cmp -s "$1" "$2" && return 0
	python3 - "$@" >>"$packw/differences" <<'EOF' && return 0
import gzip, sys

def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return r, i

def fields(b):
    """The top-level fields of a Profile message: [number, bytes of the field, payload]."""
    out, i = [], 0
    while i < len(b):
        k, j = varint(b, i)
        t, p = k & 7, j
        if t == 0:
            _, j = varint(b, j)
        elif t == 2:
            n, p = varint(b, j)
            j = p + n
        elif t == 1:
            j += 8
        elif t == 5:
            j += 4
        else:
            raise ValueError("wire type %d at %d" % (t, i))
        out.append([k >> 3, b[i:j], b[p:j] if t == 2 else None])
        i = j
    return out

def command_line(fs):
    """The string-table index of the last comment, the command line (pprof.c writes it second)."""
    idx = []
    for num, raw, payload in fs:
        if num != 13:
            continue
        if payload is None:  # one varint
            idx.append(varint(raw, 1)[0])
        else:  # packed
            i = 0
            while i < len(payload):
                v, i = varint(payload, i)
                idx.append(v)
    return idx[-1] if len(idx) > 1 else None

p = []
for f in sys.argv[1:3]:
    fs = fields(gzip.decompress(open(f, "rb").read()))
    strings = [x for x in fs if x[0] == 6]
    ci = command_line(fs)
    cl = strings[ci][2].decode(errors="replace") if ci is not None else None
    if ci is not None:
        strings[ci][1] = b"<command line>"
    p.append((fs, cl))
(fa, ca), (fb, cb) = p
if [x[:2] for x in fa] == [x[:2] for x in fb]:
    sys.exit(0)
k = next((k for k in range(min(len(fa), len(fb))) if fa[k][:2] != fb[k][:2]), min(len(fa), len(fb)))
print("== pprof: the profiles differ from top-level field %d of %d (%d from the pack): field number %s, from the pack %s"
      % (k, len(fa), len(fb), fa[k][0] if k < len(fa) else "-", fb[k][0] if k < len(fb) else "-"))
for x, who in ((fa, "<"), (fb, ">")):
    if k < len(x):
        print("%s %r" % (who, x[k][1][:200]))
sys.exit(1)
EOF
	if command -v go >/dev/null 2>&1; then
		diff <(go tool pprof -raw "$1" 2>&1 | grep -v '^Comment:') <(go tool pprof -raw "$2" 2>&1 | grep -v '^Comment:') |
			head -n 12 | cut -c 1-300 >>"$packw/differences"
	fi
	return 1
}

# mb FILE: its size in MB (10^6 bytes), with one decimal
mb() { stat -c %s "$1" | awk '{ printf "%.1f MB", $1 / 1e6 }'; }

# check_pack DIR: the verdict of aspnet-live/namespace-pack on the recording DIR/perf.data, its
# references DIR/ref/app.* and the pack packw/app.perfpack (pack_live made them while the app ran).
check_pack() {
	local c=aspnet-live/namespace-pack d=$1 t0=$SECONDS e rc bad=() from_pack without samples
	if [ "$(cat "$packw/pack.rc" 2>/dev/null)" != 0 ] || [ ! -s "$packw/app.perfpack" ]; then
		fail "$c" "perfconv -o app.perfpack exited with status $(cat "$packw/pack.rc" 2>/dev/null)" "$packw/pack.log"
		return
	fi
	for e in "${PACK_ENDINGS[@]}"; do
		if [ "$(cat "$d/ref/app.$e.rc")" != 0 ]; then
			fail "$c" "the reference conversion -o app.$e exited with status $(cat "$d/ref/app.$e.rc")" "$d/ref/app.$e.log"
			return
		fi
	done
	# the app ended: its namespace, and the tmpfs /tmp that held its perf map, are gone
	if [ -e "/proc/$hostpid" ]; then
		fail "$c" "the app (pid $hostpid) still runs after it was stopped"
		return
	fi
	cp "$d/perf.data" "$packw/perf.data"
	isolated "$(command -v "$PERFCONV")" "$packw" "${PACK_ENDINGS[@]}" >"$packw/isolated.log" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$c" "no mount namespace without this machine's files (status $rc)" "$packw/isolated.log"
		return
	fi
	for e in "${PACK_ENDINGS[@]}"; do
		if [ "$(cat "$packw/pack/app.$e.rc")" != 0 ] || [ ! -s "$packw/pack/app.$e" ]; then
			fail "$c" "perfconv -i app.perfpack -o app.$e exited with status $(cat "$packw/pack/app.$e.rc")" "$packw/pack/app.$e.log"
			return
		fi
	done
	: >"$packw/differences"
	same_file folded "$d/ref/app.folded" "$packw/pack/app.folded" || bad+=(folded)
	same_file perf-script "$d/ref/app.perf.txt" "$packw/pack/app.perf.txt" || bad+=(perf-script)
	same_file speedscope "$d/ref/app.speedscope.json" "$packw/pack/app.speedscope.json" || bad+=(speedscope)
	same_file svg "$d/ref/app.svg" "$packw/pack/app.svg" || bad+=(svg)
	same_zip "$d/ref/app.trace.zip" "$packw/pack/app.trace.zip" || bad+=(trace.zip)
	same_pprof "$d/ref/app.pb.gz" "$packw/pack/app.pb.gz" || bad+=(pprof)
	# the unnamed share from the pack, and of the recording converted here without it
	from_pack=$(measure "$packw/pack/app.folded")
	without=
	[ "$(cat "$packw/raw/app.folded.rc")" = 0 ] && without=$(measure "$packw/raw/app.folded")
	samples=$(sed -n "s/^perfconv: '[^']*': \([0-9]*\) samples read.*/\1/p" "$packw/pack/app.folded.log")
	e="${from_pack:-unnamed ?} from the pack, ${without#unnamed } without it, ${samples:-?} samples"
	[ -n "$without" ] || e="${from_pack:-unnamed ?} from the pack (the conversion without it failed), ${samples:-?} samples"
	e="$e; pack $(mb "$packw/app.perfpack"), recording $(mb "$d/perf.data")"
	e="$e; case $(($(cat "$packw/live-seconds") + SECONDS - t0)) s"
	echo "#     $c: $(grep -m 1 "^perfconv: packed" "$packw/pack.log")"
	if [ "${#bad[@]}" -gt 0 ]; then
		fail "$c" "converted from the pack, ${bad[*]} differ from the recording machine's conversion ($e)"
		# each format's first 8 lines
		awk '/^== / { n = 0 } n++ < 8' "$packw/differences" | sed 's/^/      | /'
	elif [ -z "$from_pack" ] || [ -z "$without" ]; then
		fail "$c" "tests/dotnet-resolution.py or the conversion without the pack failed ($e)" "$packw/raw/app.folded.log"
	elif awk -v w="${without//[^0-9.]/}" -v m="$MAX" 'BEGIN { exit !(w <= m) }'; then
		# what the namespace hides named the frames: it did not hide them all
		fail "$c" "the recording converts as well without the pack, in the namespace that should hide its files ($e)" "$packw/raw/app.folded.log"
	else
		pass "$c (6 formats as on the recording machine; $e)"
	fi
}

if selected aspnet-live/host; then
	if run_case aspnet-live/host; then
		convert "$d" before -i "$d/perf.data" "${BEFORE_FLAGS[@]}"
		convert "$d" after -i "$d/perf.data" "${DEFAULT_FLAGS[@]}"
		check aspnet-live/host "$d" after "$(measure "$d/before.folded")"
	fi
	rm -f "${host_files[@]}"
fi

ns=()
selected aspnet-live/namespace && ns+=(aspnet-live/namespace)
selected aspnet-live/namespace-proc && ns+=(aspnet-live/namespace-proc)
selected aspnet-live/namespace-jitdump && ns+=(aspnet-live/namespace-jitdump)
packw=
if selected aspnet-live/namespace-pack; then
	# the pack case converts in tests/tools/isolate.sh's mount namespace
	if why=$(isolation_missing); then
		skip aspnet-live/namespace-pack "$why"
	else
		packw=$TMP/namespace-pack
		ns+=(aspnet-live/namespace-pack)
	fi
fi
if [ "${#ns[@]}" -gt 0 ]; then
	if ! unshare --pid --mount --fork --mount-proc --propagation private \
		sh -c 'mount -t tmpfs perfconv-ctmp /tmp' >"$TMP/unshare.log" 2>&1; then
		for c in "${ns[@]}"; do
			skip "$c" "unshare with a tmpfs /tmp does not work here ($(head -n 1 "$TMP/unshare.log"))"
		done
	elif run_case aspnet-live/namespace "${ns[0]}"; then
		if selected aspnet-live/namespace || selected aspnet-live/namespace-proc; then
			# perf 6.1 after the app ended: nothing of the container's /tmp
			convert "$d" before -i "$d/perf.data" "${BEFORE_FLAGS[@]}"
			before=$(measure "$d/before.folded")
		fi
		if selected aspnet-live/namespace; then
			if ! ls "$d"/maps/perf-*.map >/dev/null 2>&1; then
				fail aspnet-live/namespace "no perf map in the container's /tmp (/proc/$hostpid/root/tmp)"
			else
				convert "$d" after -i "$d/perf.data" --map-dir "$d/maps" "${DEFAULT_FLAGS[@]}"
				check aspnet-live/namespace "$d" after "$before"
			fi
		fi
		selected aspnet-live/namespace-proc && check aspnet-live/namespace-proc "$d" live "$before"
		[ -n "$packw" ] && check_pack "$d"
		selected aspnet-live/namespace-jitdump && check_side "$d"
	fi
fi
exit 0
