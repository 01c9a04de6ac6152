#!/usr/bin/env bash
# tests/symsrv.sh - debug files fetched by build-id from symbol servers (--symbol-server,
# PERFCONV_SYMBOL_SERVERS), with a small HTTP server on 127.0.0.1 over a directory laid out by the
# SSQP key conventions (dotnet/diagnostics documentation/symbols/SSQP_Key_Conventions.md): the debug
# file of the stripped program of fp-stripped-debuglink at
# _.debug/elf-buildid-sym-e1bab1914ae852a42a93b1cdcf1029d57e9c0acb/_.debug.  Each server logs every
# request it gets, and stops by itself after five minutes.
#
#   symsrv/off       no option, no variable: the server gets no request, the output is perf's
#                    without the debug file (expected/folded-nodebug.txt)
#   symsrv/live      --symbol-server URL: exactly perf's frames WITH the debug file on disk
#                    (expected/folded.txt), one request for that key, the file in
#                    $XDG_CACHE_HOME/perfconv-symbols/<key>; a second run gives the same bytes and
#                    makes no request (the server's log keeps one line)
#   symsrv/order     with that cache and a debuginfod server that never answers: the cache serves
#                    first, debuginfod gets no request
#   symsrv/after-debuginfod   with --debuginfod too (on a server without the file): debuginfod is
#                    asked first, then the symbol server, whose file is used
#   symsrv/env       PERFCONV_SYMBOL_SERVERS="DOWN URL": the first is down (one warning), the second
#                    serves; cached under $HOME/.cache/perfconv-symbols
#   symsrv/down      a port nothing listens on: the nodebug output, one warning, less than 1.5 s
#                    more than without a server
#   symsrv/slow      a server that never answers: --symbol-server-timeout 2 costs at most that (plus
#                    1.5 s for a loaded machine), one warning that says 'timed out', the nodebug output
#   symsrv/slow-many the same with dotnet-perfmap-all, which has five binaries without symbols (the
#                    .NET runtime's): one request, one warning, one timeout for all of them
#   symsrv/miss      a server without the file (404): one request; a second conversion asks
#                    nothing (the summary says the miss is known), one with another server list asks
#                    again, as does one after the note of the miss is ten minutes old
#   symsrv/wrong     the key holds another ELF file (another build-id), then a file that is no ELF:
#                    refused with a warning naming what came, nothing cached, no temporary file left
#   symsrv/pack      packed (-o NAME.perfpack) with the server into an empty cache: the MANIFEST has a
#                    `file symsrv <key>` line; then, the server stopped, the pack converted in
#                    tests/tools/isolate.sh with no server named gives expected/folded.txt
#
# Run by tests/run.sh.   PERFCONV, FIXTURES as for tests/run.sh;  FILTERS="w1 w2"  only those cases
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" symsrv
need_perfconv symsrv
unset PERFCONV_SYMBOL_SERVERS DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT XDG_CACHE_HOME

fixture "$FIX/fp-stripped-debuglink"
# perf's stacks without the debug file, as the default draws them: each run of unnamed frames of
# the stripped program one frame (tests/lib.sh)
NODEBUG_RUNS=$TMP/folded-nodebug.runs
expected_as "$exp/folded-nodebug.txt" >"$NODEBUG_RUNS"
NODEBUG=$TMP/nodebug
symfs_without_debug "$NODEBUG"
A=(-i "$in" --symfs "$NODEBUG" --kallsyms "$ROOT/kallsyms")
C=$TMP/case
BID=e1bab1914ae852a42a93b1cdcf1029d57e9c0acb
KEY=_.debug/elf-buildid-sym-$BID/_.debug
DEBUG=$ROOT/tmp/probe/fx/bin/stripped/callgraph.debug

# serve NAME DIR|--slow: starts a server; its URL in $url, its log $TMP/NAME.log, its pid in $spid
serve() {
	: >"$TMP/$1.log"
	rm -f "$TMP/$1.port"
	python3 "$top/tests/tools/serve-symbols.py" "$2" "$TMP/$1.port" "$TMP/$1.log" &
	spid=$!
	bg_pids+=("$spid")
	for _ in $(seq 50); do [ -s "$TMP/$1.port" ] && break; sleep 0.1; done
	url=http://127.0.0.1:$(cat "$TMP/$1.port")
}
nwarn() { grep -c 'warning: symbol server' "$1"; }
nreq() { wc -l <"$TMP/$1.log" | tr -d ' '; }

# the symbol server's directory: only the debug file, at its key
mkdir -p "$TMP/srv/$(dirname "$KEY")"
cp "$DEBUG" "$TMP/srv/$KEY"
serve good "$TMP/srv"
GOOD=$url
GOOD_PID=$spid
serve slow --slow
SLOW=$url

# the conversion without any server: the time the others are measured against
secs run_pc "$C" "${A[@]}" -o "$C/o.folded"
base=$secs

if selected symsrv/off; then
	export XDG_CACHE_HOME=$TMP/cache-off
	run_pc "$C" "${A[@]}" -o "$C/o.folded"
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$NODEBUG_RUNS" && [ "$(nreq good)" = 0 ] &&
		! grep -q 'symbol server' "$C/err" && [ ! -e "$XDG_CACHE_HOME/perfconv-symbols" ]; then
		pass symsrv/off
	else
		fail symsrv/off "exit $rc; without --symbol-server or PERFCONV_SYMBOL_SERVERS no server may be asked" "$C/err"
	fi
	unset XDG_CACHE_HOME
fi

if selected symsrv/live || selected symsrv/order; then
	export XDG_CACHE_HOME=$TMP/cache-live
	cached=$XDG_CACHE_HOME/perfconv-symbols/$KEY
	: >"$TMP/good.log"
	secs run_pc "$C" "${A[@]}" --symbol-server "$GOOD" -o "$C/o.folded"
	first=$secs
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$exp/folded.txt" && cmp -s "$cached" "$DEBUG" &&
		[ "$(cat "$TMP/good.log")" = "/$KEY" ] && grep -q '^perfconv: symbol server: 1 debug files fetched' "$C/err" &&
		! grep -q 'without symbols\|warning' "$C/err"; then
		secs run_pc "$C" "${A[@]}" --symbol-server "$GOOD" -o "$C/o2.folded"
		if [ "$rc" = 0 ] && cmp -s "$C/o2.folded" "$exp/folded.txt" && [ "$(nreq good)" = 1 ] &&
			grep -q '^perfconv: symbol server: 0 debug files fetched (0.0 MB), 1 from the cache' "$C/err"; then
			pass "symsrv/live (frames as with the debug file on disk, ${first} s; again from the cache without a request, ${secs} s)"
		else
			fail symsrv/live "exit $rc; the second run must take the cached file without a request ($(nreq good) requests)" "$C/err"
		fi
	else
		fail symsrv/live "exit $rc; the frames must resolve as with the debug file on disk (expected/folded.txt), with one request for /$KEY, and the file be cached at $cached" "$C/err"
		sed 's/^/      | request /' "$TMP/good.log"
	fi
	if selected symsrv/order; then
		# the symbol server's cache comes before debuginfod, which would wait for its timeout
		: >"$TMP/slow.log"
		export DEBUGINFOD_CACHE_PATH=$TMP/dcache-order
		secs run_pc "$C" "${A[@]}" --symbol-server "$GOOD" --debuginfod "$SLOW" --debuginfod-timeout 5 -o "$C/o.folded"
		if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$exp/folded.txt" && [ "$(nreq slow)" = 0 ] && [ "$(nreq good)" = 1 ] &&
			! grep -q warning "$C/err"; then
			pass "symsrv/order (the cached file before debuginfod: no request to either, ${secs} s)"
		else
			fail symsrv/order "exit $rc; with the file in the symbol server's cache debuginfod must not be asked ($(nreq slow) requests)" "$C/err"
		fi
		unset DEBUGINFOD_CACHE_PATH
	fi
	unset XDG_CACHE_HOME
fi

if selected symsrv/after-debuginfod; then
	# debuginfod (which answers 404 here) is asked first, then the symbol server
	export XDG_CACHE_HOME=$TMP/cache-after DEBUGINFOD_CACHE_PATH=$TMP/dcache-after
	: >"$TMP/good.log"
	run_pc "$C" "${A[@]}" --debuginfod "$GOOD" --symbol-server "$GOOD" -o "$C/o.folded"
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$exp/folded.txt" &&
		[ "$(cat "$TMP/good.log")" = "$(printf '/buildid/%s/debuginfo\n/%s' "$BID" "$KEY")" ] &&
		grep -q '^perfconv: debuginfod: 0 debug files fetched (0.0 MB), 1 not on the servers' "$C/err" &&
		grep -q '^perfconv: symbol server: 1 debug files fetched' "$C/err"; then
		pass "symsrv/after-debuginfod (debuginfod asked first, then the symbol server)"
	else
		fail symsrv/after-debuginfod "exit $rc; debuginfod must be asked before the symbol server, which then serves" "$TMP/good.log"
	fi
	unset XDG_CACHE_HOME DEBUGINFOD_CACHE_PATH
fi

if selected symsrv/env; then
	: >"$TMP/good.log"
	down=http://127.0.0.1:$(free_port)
	PERFCONV_SYMBOL_SERVERS="$down $GOOD" run_pc "$C" "${A[@]}" -o "$C/o.folded"
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$exp/folded.txt" && cmp -s "$HOME/.cache/perfconv-symbols/$KEY" "$DEBUG" &&
		[ "$(nwarn "$C/err")" = 1 ] && grep -q "symbol server '$down'" "$C/err" && [ "$(nreq good)" = 1 ]; then
		pass "symsrv/env (the first server down: one warning, the second serves)"
	else
		fail symsrv/env "exit $rc; PERFCONV_SYMBOL_SERVERS must work as --symbol-server, servers in order, cached in ~/.cache/perfconv-symbols" "$C/err"
	fi
fi

if selected symsrv/miss; then
	export XDG_CACHE_HOME=$TMP/cache-miss
	mkdir -p "$TMP/empty"
	serve empty "$TMP/empty"
	EMPTY=$url
	note=$XDG_CACHE_HOME/perfconv-symbols/$KEY.missing
	run_pc "$C/1" "${A[@]}" --symbol-server "$EMPTY" -o "$C/1/o.folded"
	r1=$rc n1=$(nreq empty)
	run_pc "$C/2" "${A[@]}" --symbol-server "$EMPTY" -o "$C/2/o.folded"
	r2=$rc n2=$(nreq empty)
	run_pc "$C/3" "${A[@]}" --symbol-server "$EMPTY" --symbol-server "$GOOD" -o "$C/3/o.folded"
	r3=$rc n3=$(nreq empty)
	rm -rf "$XDG_CACHE_HOME/perfconv-symbols/$(dirname "$KEY")"
	run_pc "$C/4" "${A[@]}" --symbol-server "$EMPTY" -o "$C/4/o.folded"
	touch -d '11 minutes ago' "$note"
	run_pc "$C/4" "${A[@]}" --symbol-server "$EMPTY" -o "$C/4/o.folded"
	r4=$rc n4=$(nreq empty)
	why=
	if [ "$r1$r2$r3$r4" != 0000 ] || [ "$n1 $n2 $n3 $n4" != "1 1 2 4" ]; then
		why="exit $r1/$r2/$r3/$r4, requests after each run $n1 $n2 $n3 $n4 (want 1 1 2 4): a miss is remembered for ten minutes and for the same servers only"
	elif ! cmp -s "$C/1/o.folded" "$NODEBUG_RUNS" || ! cmp -s "$C/2/o.folded" "$NODEBUG_RUNS"; then
		why="without the file the output must be expected/folded-nodebug.txt"
	elif ! cmp -s "$C/3/o.folded" "$exp/folded.txt"; then
		why="the second server's file must name the frames (expected/folded.txt)"
	elif ! grep -q '^perfconv: symbol server: 0 debug files fetched (0.0 MB), 0 from the cache, 1 not on the servers (1 of them known from an earlier request)' "$C/2/err" ||
		grep -q warning "$C/2/err"; then
		why="the summary must say the miss was known, without a warning"
	fi
	if [ -z "$why" ]; then
		pass "symsrv/miss (requests 1, then none, then again with another server list and after ten minutes)"
	else
		fail symsrv/miss "$why" "$C/2/err"
	fi
	unset XDG_CACHE_HOME
fi

if selected symsrv/down; then
	export XDG_CACHE_HOME=$TMP/cache-down
	secs run_pc "$C" "${A[@]}" --symbol-server "http://127.0.0.1:$(free_port)" --symbol-server-timeout 2 -o "$C/o.folded"
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$NODEBUG_RUNS" && [ "$(nwarn "$C/err")" = 1 ] && within 1.5; then
		pass "symsrv/down (${secs} s, ${base} s without a server, one warning)"
	else
		fail symsrv/down "exit $rc in ${secs} s (${base} s without a server): a server that is down must cost less than the timeout and one warning" "$C/err"
	fi
	unset XDG_CACHE_HOME
fi

if selected symsrv/slow; then
	export XDG_CACHE_HOME=$TMP/cache-slow
	: >"$TMP/slow.log"
	secs run_pc "$C" "${A[@]}" --symbol-server "$SLOW" --symbol-server-timeout 2 -o "$C/o.folded"
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$NODEBUG_RUNS" && [ "$(nwarn "$C/err")" = 1 ] &&
		grep -q 'timed out' "$C/err" && [ "$(nreq slow)" = 1 ] && within 3.5; then
		pass "symsrv/slow (${secs} s with --symbol-server-timeout 2, ${base} s without a server, one warning)"
	else
		fail symsrv/slow "exit $rc in ${secs} s (${base} s without a server): a server that never answers must cost at most the timeout (2 s) and one warning" "$C/err"
	fi
	unset XDG_CACHE_HOME
fi

if selected symsrv/slow-many; then
	# five binaries without symbols (the .NET runtime's, and others): still one request, one
	# warning and one timeout, not one per binary
	M=$FIX/dotnet-perfmap-all
	MA=(-i "$M/perf.data" --symfs "$ROOT" --kallsyms "$M/kallsyms")
	export XDG_CACHE_HOME=$TMP/cache-many
	secs run_pc "$C" "${MA[@]}" -o "$C/o.folded"
	mbase=$secs
	cp "$C/o.folded" "$TMP/many-none.folded"
	: >"$TMP/slow.log"
	secs run_pc "$C" "${MA[@]}" --symbol-server "$SLOW" --symbol-server-timeout 2 -o "$C/o.folded"
	nbin=$(sed -n 's/^perfconv: \([0-9]*\) binaries without symbols.*/\1/p' "$C/err")
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$TMP/many-none.folded" && [ "${nbin:-0}" -ge 2 ] &&
		[ "$(nwarn "$C/err")" = 1 ] && [ "$(nreq slow)" = 1 ] && grep -q ' 1 failed' "$C/err" &&
		python3 -c "import sys; sys.exit(not $secs < $mbase + 3.5)"; then
		pass "symsrv/slow-many ($nbin binaries without symbols: one request, one warning, ${secs} s, ${mbase} s without a server)"
	else
		fail symsrv/slow-many "exit $rc in ${secs} s (${mbase} s without a server): $nbin binaries without symbols must cost one request ($(nreq slow)), one timeout and one warning" "$C/err"
	fi
	unset XDG_CACHE_HOME
fi

if selected symsrv/wrong; then
	export XDG_CACHE_HOME=$TMP/cache-wrong
	# another ELF file (the stripped program's runtime image has the build-id; take an ELF with
	# another: this machine's /bin/true) at the key, then bytes that are no ELF file
	mkdir -p "$TMP/wrong/$(dirname "$KEY")" "$TMP/junk/$(dirname "$KEY")"
	cp /bin/true "$TMP/wrong/$KEY"
	head -c 5000 /dev/urandom >"$TMP/junk/$KEY"
	serve wrong "$TMP/wrong"
	wurl=$url
	serve junk "$TMP/junk"
	jurl=$url
	run_pc "$C" "${A[@]}" --symbol-server "$wurl" --symbol-server "$jurl" -o "$C/o.folded"
	# the symbol servers' files only: the symbol cache (perfconv/elf) keeps the tables it read
	left=$(find "$XDG_CACHE_HOME/perfconv-symbols" -type f 2>/dev/null | wc -l)
	if [ "$rc" = 0 ] && cmp -s "$C/o.folded" "$NODEBUG_RUNS" && [ "$left" = 0 ] &&
		grep -q "symbol server '$wurl': the file sent for '/tmp/probe/fx/bin/stripped/callgraph' has build-id [0-9a-f]*; refused" "$C/err" &&
		! grep -q "has build-id $BID" "$C/err" &&
		grep -q "symbol server '$jurl': the file sent for .* is not an ELF file with a build-id; refused" "$C/err" &&
		[ "$(nreq wrong)" = 1 ] && [ "$(nreq junk)" = 1 ] && grep -q ' 1 refused' "$C/err"; then
		pass "symsrv/wrong (another build-id and no ELF file: both refused, nothing cached)"
	else
		fail symsrv/wrong "exit $rc; a file with another build-id, or no ELF file, must be refused with a warning and not cached ($left files left in the cache)" "$C/err"
	fi
	unset XDG_CACHE_HOME
fi

if selected symsrv/pack; then
	P=$TMP/pk
	mkdir -p "$P"
	why=$(isolation_missing)
	export XDG_CACHE_HOME=$TMP/cache-pack
	cached=$XDG_CACHE_HOME/perfconv-symbols/$KEY
	: >"$TMP/good.log"
	if [ -n "$why" ]; then
		skip symsrv/pack "$why"
	else
		run_pc "$C" "${A[@]}" --symbol-server "$GOOD" -o "$P/fp.perfpack"
		if [ "$rc" != 0 ] || [ ! -s "$P/fp.perfpack" ] || [ ! -s "$cached" ] || [ "$(nreq good)" != 1 ]; then
			fail symsrv/pack "exit $rc packing with --symbol-server: the pack must be written and the debug file fetched into $cached" "$C/err"
		else
			tar --zstd -xOf "$P/fp.perfpack" MANIFEST >"$P/MANIFEST" 2>"$P/tar.err"
			kill "$GOOD_PID" 2>/dev/null && wait "$GOOD_PID" 2>/dev/null
			pack_offline symsrv/pack "$P" "$cached" "^file	symsrv	$KEY	files/symsrv/" "$exp/folded.txt" \
				'without symbols\|symbol server' PERFCONV_SYMBOL_SERVERS XDG_CACHE_HOME
		fi
	fi
	unset XDG_CACHE_HOME
fi
stop_bg
exit 0
