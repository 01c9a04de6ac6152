#!/usr/bin/env bash
# tests/dotnet-enable.sh - perfconv --enable-perfmap / --disable-perfmap on a running .NET app:
# a service started without DOTNET_PerfMapEnabled gets readable profiles without a restart.
#
# The app is aspnet-live.sh's ProbeApi (its build in build/dotnet-live/api-<hash> is reused, or
# made as aspnet-live.sh makes it), in its own pid and mount namespace with a private tmpfs /tmp
# (unshare: it is pid 1 there), started without DOTNET_PerfMapEnabled and warmed up under load
# from curl (127.0.0.1 only).  Cases:
#   dotnet-enable/enable     recorded (perf record -g -p HOSTPID) before and after
#                            `perfconv --enable-perfmap HOSTPID`, each recording converted with
#                            no flag while the app runs: after enabling at most DOTNET_ENABLE_MAX %
#                            (2) of the samples may hold an unnamed managed frame
#                            (tests/dotnet-resolution.py --check-unnamed); the ok line gives both
#                            shares.  Before it, a control: a request of a new kind (a malformed
#                            body: the exception path) makes the enabled perf map grow;
#   dotnet-enable/disable    `perfconv --disable-perfmap HOSTPID`, then seconds of load with new
#                            kinds of requests: neither the perf map nor the jitdump grows;
#   dotnet-enable/sidecar    perfconv run inside the app's pid and mount namespaces (nsenter -t
#                            HOSTPID -p -m) with the pid the app sees, 1: --enable-perfmap 1
#                            turns the map on again (the runtime writes it anew with its code);
#   dotnet-enable/err-*      each failure names the pid and says what to do, exit status 1:
#                            no-process (a pid that does not exist), not-dotnet (sleep),
#                            diagnostics-off (the app started with DOTNET_EnableDiagnostics=0),
#                            permission (perfconv as nobody on the app), and fake servers on a
#                            socket named for a sleep process: timeout (accepts, never answers:
#                            --timeout 1 must return in under 3 s), malformed (an HTTP answer),
#                            old-runtime (.NET 6/7's Error reply, UNKNOWN_COMMAND 0x80131385);
#                            the fake server also checks that the request is the 24 bytes of
#                            EnablePerfMap(all) and nothing else.
# Needs root (perf record -p, unshare, nsenter), perf, curl, python3 and the .NET 10 SDK with ASP.NET
# Core for the live cases; the fake-server cases need python3 only.
#
#   PERFCONV, FILTERS as tests/run.sh;  DOTNET_ENABLE_SECONDS=5 seconds recorded;
#   DOTNET_ENABLE_WARMUP=3 seconds of load first;  DOTNET_ENABLE_MAX=3 (percent; the aim is 2: measured
#   1.6 to 2.2 %, all of it W^X stubs the runtime made before the map was enabled, which it does
#   not replay, so a limit of 2 fails one run in three)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" dotnet-enable
SECS=${DOTNET_ENABLE_SECONDS:-5}
WARMUP=${DOTNET_ENABLE_WARMUP:-3}
MAX=${DOTNET_ENABLE_MAX:-3}

live_cases=() fake_cases=()
for c in enable disable sidecar err-diagnostics-off err-permission; do
	selected "dotnet-enable/$c" && live_cases+=("dotnet-enable/$c")
done
for c in err-no-process err-not-dotnet err-timeout err-malformed err-old-runtime; do
	selected "dotnet-enable/$c" && fake_cases+=("dotnet-enable/$c")
done
[ "${#live_cases[@]}" -eq 0 ] && [ "${#fake_cases[@]}" -eq 0 ] && exit 0
need_perfconv dotnet-enable

pids=() socks=() nsbin_copy= pc_copy=
cleanup() {
	local p
	# all at once first, so that they end together rather than one after the other
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do stop_pid "$p"; done
	rm -f "${socks[@]}"
	rm -rf "$TMP" ${nsbin_copy:+"$nsbin_copy"} ${pc_copy:+"$pc_copy"}
}
trap cleanup EXIT

# pc NAME ARGS...: run perfconv; stdout, stderr, status and seconds taken in $TMP/NAME.{out,err,rc,secs}
pc() {
	local n=$1 t0
	shift
	t0=$EPOCHREALTIME
	"$PERFCONV" "$@" >"$TMP/$n.out" 2>"$TMP/$n.err" </dev/null
	echo $? >"$TMP/$n.rc"
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f\n", b - a }' >"$TMP/$n.secs"
}
# expect_err CASE NAME PATTERN...: exit status 1 and every PATTERN (grep -E) on stderr
expect_err() {
	local c=$1 n=$2 p
	shift 2
	if [ "$(cat "$TMP/$n.rc")" != 1 ]; then
		fail "$c" "exit status $(cat "$TMP/$n.rc"), expected 1" "$TMP/$n.err"
		return 1
	fi
	for p; do
		if ! grep -qE -- "$p" "$TMP/$n.err"; then
			fail "$c" "stderr lacks /$p/" "$TMP/$n.err"
			return 1
		fi
	done
	pass "$c: $(head -c 150 "$TMP/$n.err" | head -n 1)..."
}

# ---- the cases without .NET: fake servers -------------------------------------------------------
if [ "${#fake_cases[@]}" -gt 0 ]; then
	if selected dotnet-enable/err-no-process; then
		# a pid that was just used and has ended; /proc/PID must not exist
		true &
		gone=$!
		wait "$gone"
		if [ -e "/proc/$gone" ]; then
			skip dotnet-enable/err-no-process "pid $gone was reused at once"
		else
			pc noproc --enable-perfmap "$gone"
			expect_err dotnet-enable/err-no-process noproc "no process $gone" "/proc/$gone does not exist"
		fi
	fi
	sleep 300 &
	sleeper=$!
	pids+=("$sleeper")
	# the forked shell becomes sleep when it has exec'd: under load that can be later than the
	# next command, and the message names the process by its comm
	for _ in $(seq 100); do
		[ "$(cat "/proc/$sleeper/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.05
	done
	if selected dotnet-enable/err-not-dotnet; then
		pc notdotnet --enable-perfmap "$sleeper"
		expect_err dotnet-enable/err-not-dotnet notdotnet "process $sleeper \(sleep\) is not a \.NET process" \
			"dotnet-diagnostic-$sleeper-\*-socket"
	fi
	# fake MODE: a server on the socket the runtime of $sleeper would make; it writes the request
	# it read to $TMP/fake.req
	fake() {
		local mode=$1 sock=/tmp/dotnet-diagnostic-$sleeper-0-socket
		rm -f "$sock" "$TMP/fake.req" "$TMP/fake.ready"
		socks+=("$sock")
		python3 - "$sock" "$mode" "$TMP/fake.req" "$TMP/fake.ready" <<'EOF' &
import os, socket, struct, sys, time
path, mode, req, ready = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(4)
open(ready, "w").close()
s.settimeout(30)
c, _ = s.accept()
c.settimeout(2)
data = b""
try:
    while len(data) < 64:
        b = c.recv(64)
        if not b:
            break
        data += b
        if len(data) >= 24:
            break
except socket.timeout:
    pass
open(req, "wb").write(data)
if mode == "malformed":
    c.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
elif mode == "old-runtime":
    c.sendall(b"DOTNET_IPC_V1\0" + struct.pack("<HBBHI", 24, 0xFF, 0xFF, 0, 0x80131385))
elif mode == "timeout":
    time.sleep(10)
c.close()
EOF
		pids+=($!)
		for _ in $(seq 50); do
			[ -e "$TMP/fake.ready" ] && break
			sleep 0.1
		done
	}
	# the request must be EnablePerfMap(all) and nothing more
	request_ok() {
		python3 -c '
import sys
want = b"DOTNET_IPC_V1\0" + bytes([24, 0, 4, 5, 0, 0, 1, 0, 0, 0])
sys.exit(0 if open(sys.argv[1], "rb").read() == want else 1)' "$TMP/fake.req"
	}
	if selected dotnet-enable/err-timeout; then
		fake timeout
		pc timeout --enable-perfmap "$sleeper" --timeout 1
		if awk -v s="$(cat "$TMP/timeout.secs")" 'BEGIN { exit !(s < 3) }'; then
			expect_err dotnet-enable/err-timeout timeout "process $sleeper \(sleep\).*no answer" "within 1 s" "--timeout"
		else
			fail dotnet-enable/err-timeout "--timeout 1 took $(cat "$TMP/timeout.secs") s" "$TMP/timeout.err"
		fi
	fi
	if selected dotnet-enable/err-malformed; then
		fake malformed
		pc malformed --enable-perfmap "$sleeper"
		sleep 0.2
		if ! request_ok; then
			fail dotnet-enable/err-malformed "the request was not the 24 bytes of EnablePerfMap(all): $(od -An -tx1 "$TMP/fake.req" | tr -s ' \n' ' ')"
		else
			expect_err dotnet-enable/err-malformed malformed "process $sleeper \(sleep\): malformed reply" "at offset 0"
		fi
	fi
	if selected dotnet-enable/err-old-runtime; then
		fake old-runtime
		pc old --enable-perfmap "$sleeper"
		expect_err dotnet-enable/err-old-runtime old "process $sleeper \(sleep\)" "UNKNOWN_COMMAND" "needs \.NET 8 or newer"
	fi
fi
[ "${#live_cases[@]}" -eq 0 ] && exit 0

# ---- the live cases ------------------------------------------------------------------------------
skip_live() {
	local c
	for c in "${live_cases[@]}"; do
		skip "$c" "$1"
	done
	exit 0
}
[ "$(id -u)" = 0 ] || skip_live "needs root (perf record -p, unshare, nsenter)"
command -v dotnet >/dev/null 2>&1 || skip_live "dotnet is not installed (the .NET 10 SDK is needed)"
command -v perf >/dev/null 2>&1 || skip_live "perf is not installed (scripts/install-deps.sh --bench)"
command -v python3 >/dev/null 2>&1 || skip_live "python3 is needed"
command -v curl >/dev/null 2>&1 || skip_live "curl is needed to load the app"
command -v unshare >/dev/null 2>&1 && command -v nsenter >/dev/null 2>&1 || skip_live "unshare and nsenter are needed"
sdk=$(dotnet --list-sdks 2>/dev/null | grep '^10\.' | tail -n 1)
[ -n "$sdk" ] || skip_live "no .NET 10 SDK (dotnet --list-sdks)"
dotnet --list-runtimes 2>/dev/null | grep -q '^Microsoft\.AspNetCore\.App 10\.' || skip_live "no ASP.NET Core 10 runtime"
perf record -q -e cpu-clock -o "$TMP/probe.data" -- true >"$TMP/perf-probe.log" 2>&1 ||
	skip_live "perf record does not work here ($(grep -m 1 -v '^$' "$TMP/perf-probe.log"))"
unshare --pid --mount --fork --mount-proc --propagation private sh -c 'mount -t tmpfs perfconv-ctmp /tmp' \
	>"$TMP/unshare.log" 2>&1 || skip_live "unshare with a tmpfs /tmp does not work here ($(head -n 1 "$TMP/unshare.log"))"

# the app, built as aspnet-live.sh builds it (the same directory, so each reuses the other's)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_HOME=$TMP/home NUGET_PACKAGES=$TMP/nuget
src=fixtures/bin-src/dotnet/ProbeApi
key=$({ cat "$src"/*; echo "$sdk"; } | sha256sum | cut -c1-16)
bin=$top/build/dotnet-live/api-$key
if ! dotnet_build "$src" "$bin" ProbeApi; then
	for c in "${live_cases[@]}"; do fail "$c" "dotnet build of $src failed" "$TMP/build.errors"; done
	exit 0
fi
# the private /tmp hides a tree cloned under /tmp: then the app and perfconv run from /var/tmp
nsbin=$bin nspc=$PERFCONV
case $bin in /tmp/*)
	nsbin_copy=$(mktemp -d /var/tmp/perfconv-enable.XXXXXX) && cp -a "$bin/." "$nsbin_copy/" && nsbin=$nsbin_copy ;;
esac
case $PERFCONV in /tmp/*)
	pc_copy=$(mktemp -d /var/tmp/perfconv-bin.XXXXXX) && cp "$PERFCONV" "$pc_copy/" && nspc=$pc_copy/$(basename "$PERFCONV") ;;
esac

orders_body "$TMP/body.json"
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
# record NAME: perf record -g -p $hostpid for SECS under load, then convert with no flag (the app
# still runs); sets share and samples
record() {
	local n=$1 rec
	perf record -q -g -p "$hostpid" -o "$TMP/$n.data" -- sleep "$SECS" >"$TMP/$n.rec.log" 2>&1 &
	rec=$!
	load "$url/orders" running "$rec" >"$TMP/$n.served"
	wait "$rec"
	"$PERFCONV" -i "$TMP/$n.data" -o "$TMP/$n.folded" >"$TMP/$n.log" 2>&1 </dev/null
	echo $? >"$TMP/$n.rc"
	share=$(measure "$TMP/$n.folded")
	samples=$(sed -n "s/^perfconv: '[^']*': \([0-9]*\) samples read.*/\1/p" "$TMP/$n.log")
}

# start_app NAME ENV...: ProbeApi in its own pid and mount namespace with a private /tmp, with
# no perf map setting in its environment but ENV; sets url and hostpid (false when it fails)
start_app() {
	local n=$1 port upid
	shift
	port=$(free_port)
	url=http://127.0.0.1:$port
	env -u DOTNET_PerfMapEnabled -u COMPlus_PerfMapEnabled -u DOTNET_EnableDiagnostics "$@" \
		unshare --pid --mount --fork --mount-proc --propagation private --kill-child \
		sh -c 'mount -t tmpfs -o size=256m perfconv-ctmp /tmp && cd "${0%/*}" && exec "$0" "$@"' \
		"$nsbin/ProbeApi" --urls "$url" >"$TMP/$n.app.log" 2>&1 &
	upid=$!
	pids+=("$upid")
	for _ in $(seq 200); do
		curl -s -m 1 "$url/hello" >/dev/null 2>&1 && break
		sleep 0.1
	done
	hostpid=$(cat "/proc/$upid/task/$upid/children" 2>/dev/null | awk '{ print $1 }')
	[ -n "$hostpid" ] && curl -s -m 2 "$url/hello" >/dev/null 2>&1 || return 1
	pids=("$hostpid" "${pids[@]}")
}

ns_cases=()
for c in enable disable sidecar err-permission; do
	selected "dotnet-enable/$c" && ns_cases+=("dotnet-enable/$c")
done
if [ "${#ns_cases[@]}" -gt 0 ]; then
	if ! start_app app; then
		for c in "${ns_cases[@]}"; do fail "$c" "the app did not start in its namespaces" "$TMP/app.app.log"; done
	else
		root=/proc/$hostpid/root/tmp
		map=$root/perf-1.map dump=$root/jit-1.dump
		load "$url/orders" before_time $((SECONDS + WARMUP)) >/dev/null
		if selected dotnet-enable/err-permission; then
			if ! command -v setpriv >/dev/null 2>&1; then
				skip dotnet-enable/err-permission "setpriv is not installed"
			else
				setpriv --reuid=65534 --regid=65534 --clear-groups "$PERFCONV" --enable-perfmap "$hostpid" \
					>"$TMP/perm.out" 2>"$TMP/perm.err" </dev/null
				echo $? >"$TMP/perm.rc"
				if grep -q 'Permission denied' "$TMP/perm.err" && ! grep -q 'permission denied' "$TMP/perm.err"; then
					skip dotnet-enable/err-permission "nobody cannot run $PERFCONV here"
				else
					expect_err dotnet-enable/err-permission perm "process $hostpid" "permission denied" "as root"
				fi
			fi
		fi
		if [ -e "$map" ] || [ -e "$dump" ]; then
			for c in enable disable sidecar; do
				selected "dotnet-enable/$c" && fail "dotnet-enable/$c" "the app wrote $map before it was asked to"
			done
		elif selected dotnet-enable/enable || selected dotnet-enable/disable || selected dotnet-enable/sidecar; then
			record before
			before=$share before_n=$samples
			pc enable --enable-perfmap "$hostpid"
			enabled=$(cat "$TMP/enable.rc")
			sleep 1
			s0=$(size "$map")
			# control: a malformed body takes the exception path, JIT code the map has not seen
			for _ in 1 2 3; do
				curl -s -m 5 -H 'Content-Type: application/json' --data-binary '{"orders": [' "$url/orders" >/dev/null
			done
			sleep 1
			s1=$(size "$map")
			if ! selected dotnet-enable/enable; then
				:	# the enabling is the other cases' start; its verdict is not asked for
			elif [ "$enabled" != 0 ]; then
				fail dotnet-enable/enable "perfconv --enable-perfmap $hostpid: exit status $enabled" "$TMP/enable.err"
			elif [ ! -s "$map" ] || [ ! -s "$dump" ]; then
				fail dotnet-enable/enable "after --enable-perfmap no perf map or jitdump in $root: $(ls "$root" | tr '\n' ' ')" "$TMP/enable.err"
			else
				record after
				if [ "$(cat "$TMP/after.rc")" != 0 ]; then
					fail dotnet-enable/enable "perfconv exited with status $(cat "$TMP/after.rc")" "$TMP/after.log"
				elif [ -z "$share" ]; then
					fail dotnet-enable/enable "tests/dotnet-resolution.py failed" "$TMP/after.folded.classes"
				elif grep -q 'is above' "$TMP/after.folded.classes"; then
					fail dotnet-enable/enable "after enabling $share of $samples samples (at most $MAX%; before: $before)" "$TMP/after.folded.classes"
				elif [ "$s1" -le "$s0" ]; then
					fail dotnet-enable/enable "control: the enabled perf map did not grow ($s0 bytes) on requests of a new kind"
				else
					pass "dotnet-enable/enable ($share of $samples samples after enabling; before: $before of $before_n; the map grew $((s1 - s0)) bytes on new requests)"
				fi
			fi
			if selected dotnet-enable/disable || selected dotnet-enable/sidecar; then
				pc disable --disable-perfmap "$hostpid"
				sleep 1
				m0=$(size "$map") d0=$(size "$dump")
				# new kinds of requests, then load
				curl -s -m 5 "$url/no-such-page" >/dev/null
				curl -s -m 5 -X PUT "$url/orders" >/dev/null
				curl -s -m 5 -H 'Content-Type: application/json' --data-binary '[1, 2]' "$url/orders" >/dev/null
				load "$url/orders" before_time $((SECONDS + SECS)) >/dev/null
				m1=$(size "$map") d1=$(size "$dump")
				if selected dotnet-enable/disable; then
					if [ "$(cat "$TMP/disable.rc")" != 0 ]; then
						fail dotnet-enable/disable "perfconv --disable-perfmap $hostpid: exit status $(cat "$TMP/disable.rc")" "$TMP/disable.err"
					elif [ "$m1" != "$m0" ] || [ "$d1" != "$d0" ]; then
						fail dotnet-enable/disable "after --disable-perfmap the perf map went from $m0 to $m1 bytes, the jitdump from $d0 to $d1"
					else
						pass "dotnet-enable/disable (perf map $m0 bytes, jitdump $d0 bytes before and after $SECS s of load and new requests)"
					fi
				fi
			fi
			if selected dotnet-enable/sidecar; then
				# perfconv in the app's pid and mount namespace: the app is pid 1 there.  Enabled
				# again, the runtime writes its files anew with the code it has now.
				m0=$(size "$map") h0=$(md5sum <"$map")
				nsenter -t "$hostpid" -p -m -- "$nspc" --enable-perfmap 1 >"$TMP/sidecar.out" 2>"$TMP/sidecar.err" </dev/null
				rc=$?
				sleep 2
				m1=$(size "$map") h1=$(md5sum <"$map")
				if [ "$rc" != 0 ]; then
					fail dotnet-enable/sidecar "nsenter -t $hostpid -p -m perfconv --enable-perfmap 1: exit status $rc" "$TMP/sidecar.err"
				elif [ "$m1" = 0 ] || [ "$h1" = "$h0" ]; then
					fail dotnet-enable/sidecar "the perf map was not written again after the sidecar's --enable-perfmap 1 ($m0 bytes, then $m1)" "$TMP/sidecar.err"
				else
					pass "dotnet-enable/sidecar (the perf map written again, $m0 then $m1 bytes: $(head -n 1 "$TMP/sidecar.err"))"
				fi
			fi
		fi
	fi
fi

if selected dotnet-enable/err-diagnostics-off; then
	if ! start_app nodiag DOTNET_EnableDiagnostics=0; then
		fail dotnet-enable/err-diagnostics-off "the app did not start" "$TMP/nodiag.app.log"
	else
		pc nodiag --enable-perfmap "$hostpid"
		expect_err dotnet-enable/err-diagnostics-off nodiag "process $hostpid \(ProbeApi" "DOTNET_EnableDiagnostics=0" "restart it"
	fi
fi
exit 0
