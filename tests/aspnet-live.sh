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
#                               perfconv finds its files through /proc/PID/root/tmp.
# Each ok line gives the unnamed share before (perf 6.1's naming) and after, with the sample count.
# Needs root (perf record -p, unshare), perf, curl, python3 and the .NET 10 SDK with ASP.NET Core;
# skips with a reason otherwise.  The app is built once (offline) into build/dotnet-live/api-<hash
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
for c in aspnet-live/host aspnet-live/namespace aspnet-live/namespace-proc; do
	selected "$c" && cases+=("$c")
done
[ "${#cases[@]}" -eq 0 ] && exit 0

skip_all() {
	local c
	for c in "${cases[@]}"; do
		skip "$c" "$1"
	done
	exit 0
}

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

# Perf's naming, for the "before" share: --perf-compat where perfconv has it, else its default.
BEFORE_FLAGS=()
"$PERFCONV" --help 2>/dev/null | grep -q -- '--perf-compat' && BEFORE_FLAGS=(--perf-compat)

# The app's processes and the files the host run leaves in /tmp go when the script ends.
app_pids=() host_files=()
stop_app() {
	local p
	for p in "${app_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	app_pids=()
}
# ASPNET_LIVE_KEEP: the recordings and outputs are copied out before TMP goes
keep() {
	[ -n "${ASPNET_LIVE_KEEP-}" ] || return 0
	local k
	for k in host namespace; do
		[ -d "$TMP/$k" ] && mkdir -p "$ASPNET_LIVE_KEEP" && rm -rf "${ASPNET_LIVE_KEEP:?}/$k" &&
			cp -R "$TMP/$k" "$ASPNET_LIVE_KEEP/$k"
	done
}
trap 'stop_app; keep; rm -f "${host_files[@]}"; rm -rf "$TMP"' EXIT

# Build a copy of the sources, offline, so that no obj/ appears in the tree.
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
src=fixtures/bin-src/dotnet/ProbeApi
key=$({ cat "$src"/*; echo "$sdk"; } | sha256sum | cut -c1-16)
bin=$top/build/dotnet-live/api-$key
start=$SECONDS
if [ ! -x "$bin/ProbeApi" ]; then
	cp -R "$src" "$TMP/src"
	if ! (cd "$TMP/src" && timeout 180 dotnet build -c Release -o "$TMP/bin" --disable-build-servers \
		-nodeReuse:false -p:UseSharedCompilation=false) >"$TMP/build.log" 2>&1; then
		grep -E 'error|rror:' "$TMP/build.log" >"$TMP/build.errors"
		for c in "${cases[@]}"; do
			fail "$c" "dotnet build of $src failed" "$TMP/build.errors"
		done
		exit 0
	fi
	mkdir -p "$top/build/dotnet-live"
	rm -rf "$bin"
	mv "$TMP/bin" "$bin" || bin=$TMP/bin
fi
built=$((SECONDS - start))

# The request body: 200 orders, one in nine with an address the Regex rejects.
python3 - "$TMP/body.json" <<'EOF'
import json, sys
cats = ["book", "game", "tool", "food", "toys", "garden", "music", "sport"]
orders = [{"id": i, "sku": "%s-%05d" % (cats[i * 7 % len(cats)], i * 7919 % 100000),
           "email": "user%d@example%d.org" % (i, i % 13) if i % 9 else "broken-%d.example" % i,
           "quantity": 1 + i * 31 % 17, "price": round(1.5 + (i * 37 % 1000) / 7.0, 2),
           "tags": ["t%d" % (i % 5), "promo" if i % 4 == 0 else "std"]} for i in range(200)]
json.dump({"customer": "c-42", "orders": orders}, open(sys.argv[1], "w"))
EOF

# A port on the loopback interface that nothing listens on (bash's /dev/tcp tries to connect).
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || break
	done
	echo "$p"
}

# load URL UNTIL: POST the body to URL in batches of 200 requests on one keep-alive connection,
# while UNTIL (a command) succeeds, at most 100 batches.  Prints the number of requests answered.
load() {
	local url=$1 n=0 i ok=0 urls=()
	shift
	for i in $(seq 200); do
		urls+=("$url")
	done
	while "$@" && [ "$n" -lt 100 ]; do
		i=$(curl -s -m 30 -w '\n%{http_code}\n' -H 'Content-Type: application/json' \
			--data-binary @"$TMP/body.json" "${urls[@]}" 2>/dev/null | grep -c '^200$')
		ok=$((ok + i))
		n=$((n + 1))
	done
	echo "$ok"
}
before_time() { [ "$SECONDS" -lt "$1" ]; }
running() { kill -0 "$1" 2>/dev/null; }

# measure FILE: the unnamed share of FILE ("unnamed N%"); FILE.classes gets the measure's output,
# with the classification of the unnamed frames.
measure() {
	python3 tests/dotnet-resolution.py --check-unnamed "$MAX" --classify 12 "$1" >"$1.classes" 2>&1
	sed -n 's/^[^:]*: \(unnamed [0-9.]*%\) .*/\1/p' "$1.classes" | head -n 1
}

# run_case CASE: start the app (in namespaces for the namespace cases), load it, record it by
# attaching, convert and measure.  Sets d, hostpid, and the result line of each case it covers.
run_case() {
	local c=$1 port url upid=0 rec served t0
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
			if [ -z "${nsbin_copy:-}" ]; then
				nsbin_copy=$(mktemp -d /var/tmp/perfconv-aspnet.XXXXXX) && cp -a "$bin/." "$nsbin_copy/" &&
					trap 'rm -rf "$TMP" "$nsbin_copy"' EXIT
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
		fail "$c" "the app did not answer on $url within 20 s" "$d/app.log"
		return 1
	fi
	if [ "$upid" != 0 ]; then
		hostpid=$(cat "/proc/$upid/task/$upid/children" 2>/dev/null | awk '{ print $1 }')
		if [ -z "$hostpid" ] || [ "$(readlink "/proc/$hostpid/exe")" != "$nsbin/ProbeApi" ]; then
			fail "$c" "no ProbeApi process under unshare (pid $upid)"
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
		fail "$c" "perf record -g -p $hostpid failed" "$d/record.log"
		return 1
	fi
	echo "$served" >"$d/served"
	if [ "$upid" != 0 ]; then
		# while it runs: convert through /proc/PID/root/tmp, then copy its files out
		convert "$d" live -i "$d/perf.data" "${DEFAULT_FLAGS[@]}"
		cp "/proc/$hostpid/root/tmp/"perf-*.map "/proc/$hostpid/root/tmp/"jit-*.dump "$d/maps/" 2>/dev/null
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
if [ "${#ns[@]}" -gt 0 ]; then
	if ! unshare --pid --mount --fork --mount-proc --propagation private \
		sh -c 'mount -t tmpfs perfconv-ctmp /tmp' >"$TMP/unshare.log" 2>&1; then
		for c in "${ns[@]}"; do
			skip "$c" "unshare with a tmpfs /tmp does not work here ($(head -n 1 "$TMP/unshare.log"))"
		done
	elif run_case aspnet-live/namespace; then
		# perf 6.1 after the app ended: nothing of the container's /tmp
		convert "$d" before -i "$d/perf.data" "${BEFORE_FLAGS[@]}"
		before=$(measure "$d/before.folded")
		if selected aspnet-live/namespace; then
			if ! ls "$d"/maps/perf-*.map >/dev/null 2>&1; then
				fail aspnet-live/namespace "no perf map in the container's /tmp (/proc/$hostpid/root/tmp)"
			else
				convert "$d" after -i "$d/perf.data" --map-dir "$d/maps" "${DEFAULT_FLAGS[@]}"
				check aspnet-live/namespace "$d" after "$before"
			fi
		fi
		selected aspnet-live/namespace-proc && check aspnet-live/namespace-proc "$d" live "$before"
	fi
fi
exit 0
