#!/usr/bin/env bash
# tests/debuginfod.sh - debug files fetched by build-id, with Debian's real debuginfod server, and
# the summary about stripped binaries.  The stripped program of fp-stripped-debuglink is converted
# from a symfs copy without its debug files (as expected/folded-nodebug.txt was made with perf).
#
#   debuginfod/off         without DEBUGINFOD_URLS or --debuginfod no server is asked (a listening
#                          one gets no connection) and the output is perf's without the debug file
#   debuginfod/live        debuginfod -F on 127.0.0.1 over a directory holding the debug file:
#                          --debuginfod URL gives exactly perf's folded stacks WITH the debug file
#                          on disk (expected/folded.txt), the file lands in $DEBUGINFOD_CACHE_PATH
#                          as debuginfod-find puts it, and the summary says 1 fetched
#   debuginfod/env         the same through DEBUGINFOD_URLS, cached in ~/.cache/debuginfod_client
#   debuginfod/down        a port nothing listens on: the nodebug output, one warning, less than
#                          1.5 s more than the conversion without a server
#   debuginfod/slow        a server that never answers: --debuginfod-timeout 2 costs at most that
#                          (plus libdebuginfod's 1 s polling and 0.5 s), one warning, the nodebug output
#   debuginfod/pack        packed (-o NAME.perfpack) with the options of debuginfod/live while the
#                          server serves the debug file, into an emptied ~/.cache/debuginfod_client: the
#                          MANIFEST has a `file debuginfod HEX/debuginfo` line; then, with the server
#                          stopped, the pack converted in tests/tools/isolate.sh with no server
#                          configured (no DEBUGINFOD_URLS, no --debuginfod; $HOME, hence the client's
#                          cache, /tmp and the fixtures hidden) gives the bytes the conversion with
#                          the server gave (expected/folded.txt).  Last of the server cases: it stops
#                          the server.  Needs root (isolate.sh) and tar with --zstd.
#   debuginfod/stripped-summary   the binary without symbols, its lost frames, build-id and hint
#   debuginfod/not-found   binaries that are not there are "not found" (where it looked), not
#                          "stripped"; -v lists the PE images not read and why
#   debuginfod/dotnet-symbol      a library named libcoreclr.so, stripped with a .gnu_debuglink as
#                          Microsoft ships it: the summary gives the dotnet-symbol hint; with
#                          libcoreclr.so.dbg beside it, as dotnet-symbol --symbols writes it, its
#                          frames resolve (needs gcc, objcopy and perf record)
#
# Without the debuginfod package the server cases are skipped.  Run by tests/run.sh.
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2"  only cases whose name has a word
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" debuginfod
need_perfconv debuginfod
unset DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT XDG_CACHE_HOME

fixture "$FIX/fp-stripped-debuglink"
# perf's stacks without the debug file, as the default draws them: each run of unnamed frames of
# the stripped program one frame (tests/lib.sh)
NODEBUG_RUNS=$TMP/folded-nodebug.runs
expected_as "$exp/folded-nodebug.txt" >"$NODEBUG_RUNS"
NODEBUG=$TMP/nodebug
symfs_without_debug "$NODEBUG"
A=(-i "$in" --symfs "$NODEBUG" --kallsyms "$ROOT/kallsyms")
C=$TMP/case

nwarn() { grep -c 'warning: debuginfod' "$1"; }

# A server that accepts connections, logs them, and never answers.
cat >"$TMP/slow.py" <<'EOF'
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(sys.argv[2], 'a').write(self.path + '\n')
        time.sleep(120)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
s.daemon_threads = True
open(sys.argv[1], 'w').write(str(s.server_address[1]))
s.serve_forever()
EOF
SLOW_LOG=$TMP/slow.log
: >"$SLOW_LOG"
python3 "$TMP/slow.py" "$TMP/slow.port" "$SLOW_LOG" &
bg_pids+=($!)
for _ in $(seq 50); do [ -s "$TMP/slow.port" ] && break; sleep 0.1; done
SLOW_URL=http://127.0.0.1:$(cat "$TMP/slow.port")

# the conversion without any server: the time the others are measured against (a loaded
# machine or a sanitizer build makes it long)
secs run_pc "$C" "${A[@]}" -o "$C/o.folded"
base=$secs

if selected debuginfod/off; then
	# the default (no variable, no option) never asks, even with a server listening
	run_pc "$C" "${A[@]}" -o "$C/o.folded"
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$NODEBUG_RUNS" && [ ! -s "$SLOW_LOG" ] &&
		! grep -q 'debuginfod:' "$C/err"; then
		pass debuginfod/off
	else
		fail debuginfod/off "exit $rc; without DEBUGINFOD_URLS or --debuginfod nothing may be asked" "$C/err"
	fi
fi

if selected debuginfod/stripped-summary; then
	run_pc "$C" "${A[@]}" -o "$C/o.folded"
	if [ "$rc" = 0 ] && grep -q '^perfconv: 1 binary without symbols (stripped) cost [1-9][0-9]* frames in samples:$' "$C/err" &&
		grep -q '^perfconv:   /tmp/probe/fx/bin/stripped/callgraph: [1-9][0-9]* frames ([0-9]* addresses), build-id e1bab1914ae852a42a93b1cdcf1029d57e9c0acb$' "$C/err" &&
		grep -q 'hint: for distribution libraries set DEBUGINFOD_URLS or give --debuginfod URLS' "$C/err"; then
		pass debuginfod/stripped-summary
	else
		fail debuginfod/stripped-summary "the summary does not name the stripped binary, its lost frames and how to get them" "$C/err"
	fi
	# with the debug file on disk there is nothing to report
	run_pc "$C" -i "$in" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms" -o "$C/o.folded"
	grep -q 'without symbols' "$C/err" && fail debuginfod/stripped-summary-none "a binary with its debug file reported as stripped" "$C/err"
fi

# not-found: "stripped" only for a file that was read and has no symbol table.  The .NET
# recording converted with an empty --symfs: libcoreclr.so and the others are not there, so they
# are "not found" with where they were looked for, none is "stripped", and the dotnet-symbol hint
# (which needs the library) is not given; with -v the PE images whose ReadyToRun frames stay
# unnamed are listed, each with why.  Against the recorded file system libcoreclr.so is stripped.
DN=$FIX/dotnet-perfmap-only
if selected debuginfod/not-found && [ -d "$DN" ]; then
	if why=$(missing_runtime "$DN"); then
		skip debuginfod/not-found "$why"
	else
		mkdir -p "$TMP/emptyfs"
		run_pc "$C" -v -i "$DN/perf.data" --symfs "$TMP/emptyfs" --kallsyms "$ROOT/kallsyms" -o "$C/o.folded"
		cp "$C/err" "$TMP/nf.err"
		run_pc "$C" -i "$DN/perf.data" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms" -o "$C/o.folded"
		cat "$C/err" >>"$TMP/nf.err"
		if [ "$rc" = 0 ] &&
			grep -q "^perfconv: [0-9]* binaries without symbols (not found: looked for at the recorded path under '$TMP/emptyfs', and by build-id in the build-id cache) cost [0-9]* frames in samples:$" "$TMP/nf.err" &&
			grep -q "^perfconv:   /usr/share/dotnet/shared/Microsoft.NETCore.App/[0-9.]*/libcoreclr.so: [0-9]* frames" "$TMP/nf.err" &&
			[ "$(grep -c 'without symbols (stripped)' "$TMP/nf.err")" = 1 ] &&
			[ "$(grep -c "hint: for Microsoft's .NET runtime run 'dotnet-symbol" "$TMP/nf.err")" = 1 ] &&
			grep -q "^perfconv: ReadyToRun frames (unique): 0 resolved, \([0-9]*\) unresolved (\1 image not readable)$" "$TMP/nf.err" &&
			grep -q "^perfconv:   /usr/share/dotnet/shared/Microsoft.NETCore.App/[0-9.]*/System.Private.CoreLib.dll: [0-9]* unresolved, image not readable: not found at the recorded path under '$TMP/emptyfs'$" "$TMP/nf.err" &&
			grep -q "^perfconv: hint: ReadyToRun images not readable are looked for at their recorded path under --symfs '$TMP/emptyfs'" "$TMP/nf.err" &&
			sed -n '/without symbols (stripped)/,$p' "$TMP/nf.err" | grep -q '/libcoreclr.so: '; then
			pass debuginfod/not-found
		else
			fail debuginfod/not-found "missing binaries must be 'not found' (with where), stripped ones 'stripped', -v must list unreadable images, and a hint names --symfs" "$TMP/nf.err"
		fi
	fi
fi

if ! command -v debuginfod >/dev/null 2>&1; then
	for n in live env down slow pack; do
		selected "debuginfod/$n" && skip "debuginfod/$n" "debuginfod is not installed (scripts/install-deps.sh --test installs it)"
	done
else
	# the real server over a directory holding only the debug file
	mkdir -p "$TMP/srv"
	cp "$ROOT/tmp/probe/fx/bin/stripped/callgraph.debug" "$TMP/srv/"
	PORT=$(free_port)
	debuginfod -F -p "$PORT" -d "$TMP/debuginfod.sqlite" -t 0 -g 0 "$TMP/srv" >"$TMP/debuginfod.log" 2>&1 &
	DPID=$!
	bg_pids+=("$DPID")
	URL=http://127.0.0.1:$PORT
	# ready when its first scan has indexed the file
	for _ in $(seq 100); do
		curl -s "$URL/metrics" 2>/dev/null | grep -q '^scanned_files_total{source="file"} 1' && break
		sleep 0.1
	done

	if selected debuginfod/live; then
		export DEBUGINFOD_CACHE_PATH=$TMP/cache-live
		secs run_pc "$C" "${A[@]}" --debuginfod "$URL" -o "$C/o.folded"
		cached=$DEBUGINFOD_CACHE_PATH/e1bab1914ae852a42a93b1cdcf1029d57e9c0acb/debuginfo
		if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$exp/folded.txt" && cmp -s "$cached" "$TMP/srv/callgraph.debug" &&
			grep -q '^perfconv: debuginfod: 1 debug files fetched' "$C/err" && ! grep -q 'without symbols' "$C/err"; then
			pass "debuginfod/live (frames as with the debug file on disk, ${secs} s)"
		else
			fail debuginfod/live "exit $rc; the frames must resolve as with the debug file on disk (expected/folded.txt) and the file be cached" "$C/err"
		fi
		unset DEBUGINFOD_CACHE_PATH
	fi
	if selected debuginfod/env; then
		DEBUGINFOD_URLS="$URL" secs run_pc "$C" "${A[@]}" -o "$C/o.folded"
		if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$exp/folded.txt" &&
			[ -s "$HOME/.cache/debuginfod_client/e1bab1914ae852a42a93b1cdcf1029d57e9c0acb/debuginfo" ]; then
			pass "debuginfod/env (${secs} s)"
		else
			fail debuginfod/env "exit $rc; DEBUGINFOD_URLS must work as --debuginfod, cached in ~/.cache/debuginfod_client" "$C/err"
		fi
	fi
	if selected debuginfod/down; then
		export DEBUGINFOD_CACHE_PATH=$TMP/cache-down
		secs run_pc "$C" "${A[@]}" --debuginfod "http://127.0.0.1:$(free_port)" --debuginfod-timeout 2 -o "$C/o.folded"
		if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$NODEBUG_RUNS" && [ "$(nwarn "$C/err")" = 1 ] &&
			within 1.5; then
			pass "debuginfod/down (${secs} s, ${base} s without a server, one warning)"
		else
			fail debuginfod/down "exit $rc in ${secs} s (${base} s without a server): a server that is down must cost less than the timeout and one warning" "$C/err"
		fi
		unset DEBUGINFOD_CACHE_PATH
	fi
	if selected debuginfod/slow; then
		export DEBUGINFOD_CACHE_PATH=$TMP/cache-slow
		secs run_pc "$C" "${A[@]}" --debuginfod "$SLOW_URL" --debuginfod-timeout 2 -o "$C/o.folded"
		if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$NODEBUG_RUNS" && [ "$(nwarn "$C/err")" = 1 ] &&
			grep -q 'timed out' "$C/err" && [ -s "$SLOW_LOG" ] && within 3.5; then
			pass "debuginfod/slow (${secs} s with --debuginfod-timeout 2, ${base} s without a server, one warning)"
		else
			fail debuginfod/slow "exit $rc in ${secs} s (${base} s without a server): a slow server must cost at most the timeout (2 s, polled each second) and one warning" "$C/err"
		fi
		unset DEBUGINFOD_CACHE_PATH
	fi
	if selected debuginfod/pack; then
		P=$TMP/pk	# the pack and the outputs: all the isolation keeps of $TMP
		mkdir -p "$P"
		why=$(isolation_missing)
		# the client's cache: a new one (as debuginfod/live's), so that the packing conversion
		# fetches; the isolation hides it with the rest of $TMP
		export DEBUGINFOD_CACHE_PATH=$TMP/cache-pack
		cached=$DEBUGINFOD_CACHE_PATH/e1bab1914ae852a42a93b1cdcf1029d57e9c0acb/debuginfo
		[ -n "$why" ] || run_pc "$C" "${A[@]}" --debuginfod "$URL" -o "$P/fp.perfpack"
		if [ -n "$why" ]; then
			skip debuginfod/pack "$why"
		elif [ "$rc" != 0 ] || [ ! -s "$P/fp.perfpack" ] || [ ! -s "$cached" ] ||
			! grep -q '^perfconv: debuginfod: 1 debug files fetched' "$C/err"; then
			fail debuginfod/pack "exit $rc packing with --debuginfod: the pack must be written and the debug file fetched into $cached" "$C/err"
		else
			tar --zstd -xOf "$P/fp.perfpack" MANIFEST >"$P/MANIFEST" 2>"$P/tar.err"
			# the conversion with the server, as the pack's must be
			run_pc "$C" "${A[@]}" --debuginfod "$URL" -o "$P/server.folded"
			src=$rc
			# the server is gone from here on, and nothing names one
			kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
			if [ "$src" != 0 ] || ! cmp -s "$P/server.folded" "$exp/folded.txt"; then
				fail debuginfod/pack "exit $src; the conversion with the server must give expected/folded.txt" "$C/err"
			else
				pack_offline debuginfod/pack "$P" "$cached" \
					"^file	debuginfod	e1bab1914ae852a42a93b1cdcf1029d57e9c0acb/debuginfo	files/debuginfod/" \
					"$P/server.folded" 'without symbols\|debuginfod:' DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH
			fi
		fi
		unset DEBUGINFOD_CACHE_PATH
	fi
fi

if selected debuginfod/dotnet-symbol; then
	D=$TMP/dn
	mkdir -p "$D"
	if ! command -v perf >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1 || ! command -v objcopy >/dev/null 2>&1; then
		skip debuginfod/dotnet-symbol "needs perf, gcc and objcopy"
	else
		cat >"$D/lib.c" <<'EOF'
volatile unsigned long sink;
__attribute__((noinline, visibility("hidden"))) void coreclr_hot_loop(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * i; }
__attribute__((noinline)) void coreclr_entry(unsigned long n) { coreclr_hot_loop(n); sink++; }
EOF
		cat >"$D/main.c" <<'EOF'
void coreclr_entry(unsigned long n);
int main(void) { for (int i = 0; i < 20; i++) coreclr_entry(5000000); return 0; }
EOF
		# stripped with a .gnu_debuglink to libcoreclr.so.dbg, as Microsoft ships the runtime; the
		# debug file waits in sym/ for the second conversion
		mkdir -p "$D/sym"
		if gcc -O1 -g -fno-omit-frame-pointer -fPIC -shared -o "$D/libcoreclr.so" "$D/lib.c" &&
			objcopy --only-keep-debug "$D/libcoreclr.so" "$D/sym/libcoreclr.so.dbg" &&
			objcopy --strip-all --add-gnu-debuglink="$D/sym/libcoreclr.so.dbg" "$D/libcoreclr.so" &&
			gcc -O1 -fno-omit-frame-pointer -o "$D/app" "$D/main.c" -L"$D" -lcoreclr -Wl,-rpath,"$D" &&
			perf record -q -g -e cpu-clock -o "$D/perf.data" -- "$D/app" >/dev/null 2>"$D/rec.err"; then
			run_pc "$C" -i "$D/perf.data" --kallsyms /dev/null -o "$C/before.folded"
			before_ok=0
			grep -q "hint: for Microsoft's .NET runtime run 'dotnet-symbol --symbols" "$C/err" &&
				grep -q "^perfconv:   $D/libcoreclr.so: [1-9]" "$C/err" && ! grep -q coreclr_hot_loop "$C/before.folded" &&
				before_ok=1
			cp "$C/err" "$TMP/dn-before.err"
			# dotnet-symbol --symbols writes LIBRARY.dbg next to LIBRARY
			cp "$D/sym/libcoreclr.so.dbg" "$D/"
			run_pc "$C" -i "$D/perf.data" --kallsyms /dev/null -o "$C/after.folded"
			if [ "$before_ok" != 1 ]; then
				fail debuginfod/dotnet-symbol "without libcoreclr.so.dbg the summary must name the library and give the dotnet-symbol hint" "$TMP/dn-before.err"
			elif grep -q ';coreclr_hot_loop' "$C/after.folded" && ! grep -q 'without symbols' "$C/err"; then
				pass debuginfod/dotnet-symbol
			else
				fail debuginfod/dotnet-symbol "with libcoreclr.so.dbg beside the library its frames must resolve" "$C/after.folded"
			fi
		else
			skip debuginfod/dotnet-symbol "cannot build or record the test program: $(tail -1 "$D/rec.err" 2>/dev/null)"
		fi
	fi
fi
stop_bg
exit 0
