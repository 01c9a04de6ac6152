#!/usr/bin/env bash
# tests/static.sh - the one-file perfconv of `make static` (build-static/perfconv), run where no
# shared library is: a mount namespace (unshare -m, root) whose /usr/lib, /usr/lib64 and so /lib and
# /lib64 are empty tmpfs mounts.  Its outputs must be the normal build's, byte for byte.
#
#   static/linked      file says statically linked, ldd not a dynamic executable, no INTERP header
#   static/empty       in the namespace the library directories are empty and the normal build
#                      cannot even start (the proof that the namespace hides what it should)
#   static/dotnet      dotnet-perfmap-all (ELF symbols of the runtime, .NET names from its perf map)
#                      to folded, svg and trace.zip: the normal build's bytes
#   static/pack        dotnet-perfmap-all packed by each build (the same bytes; both here, as the MANIFEST
#                      names the host's files it saw), the pack converted by the static one in the
#                      namespace to folded, svg and trace.zip: the normal build's bytes
#   static/events      the runtime report of fixtures/dotnet-events/app.nettrace: the normal build's
#   static/symsrv      a symbol server named by host name (localhost, from /etc/hosts) and by address:
#                      the debug file comes, as in tests/symsrv.sh (expected/folded.txt)
#   static/debuginfod  --debuginfod says this build has no client, and the conversion goes on
#
# The executable is STATIC_PERFCONV (default build-static/perfconv).  When ISA-L, libcurl,
# libarchive and libzstd were built once (~/.cache/perfconv/static-libs/lib), `make static NO_DEPS=1` brings it
# up to date first; without them every case is skipped, since their first build takes minutes: run
# `make static` once.
#
# Run by tests/run.sh.   PERFCONV, FIXTURES as for tests/run.sh;  FILTERS="w1 w2"  only those cases
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" static
need_perfconv static
# the archives make static links, in the cache of the user running the tests (lib.sh made HOME a
# temporary directory)
LIBS_DIR=${STATIC_LIBS_DIR:-${XDG_CACHE_HOME:-$TESTS_USER_HOME/.cache}/perfconv/static-libs}
unset PERFCONV_SYMBOL_SERVERS DEBUGINFOD_URLS XDG_CACHE_HOME
cases=(static/linked static/empty static/dotnet static/pack static/events static/symsrv static/debuginfod)
any=0
for c in "${cases[@]}"; do selected "$c" && any=1; done
[ "$any" = 1 ] || exit 0

SP=${STATIC_PERFCONV:-build-static/perfconv}
L=$LIBS_DIR/lib
if [ -z "${STATIC_PERFCONV-}" ] && [ -f $L/libisal.a ] && [ -f $L/libcurl.a ] &&
	[ -f $L/libarchive.a ] && [ -f $L/libzstd.a ]; then
	# not the make that runs the tests, if one does: the variables of its command line reach its
	# recipes' environment (make asan's BUILD and SAN_CFLAGS), and are its own
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN_CFLAGS -u BUILD -u PERFCONV make static NO_DEPS=1 STATIC_LIBS_DIR="$LIBS_DIR" >"$TMP/make.log" 2>&1 || {
		for c in "${cases[@]}"; do fail "$c" "make static failed" "$TMP/make.log"; done
		exit 0
	}
fi
[ -x "$SP" ] || skip_all "no $SP: 'make static' builds it once (four libraries from Debian's sources, minutes)"
SP=$(cd "$(dirname "$SP")" && pwd)/$(basename "$SP")
[ "$(id -u)" = 0 ] || skip_all "not root: the empty library directories are tmpfs mounts in a mount namespace"
unshare -m --propagation private true 2>/dev/null || skip_all "unshare -m fails here"

# The namespace's mounts are made by mount(8), itself a dynamic executable: it runs through a copy
# of its loader and libraries in $TMP/rt, which the mounts do not hide.
mkdir -p "$TMP/rt"
mount_bin=$(command -v mount)
interp=
while read -r a b c _; do
	case $b in
	"=>") [ -f "$c" ] && cp -L "$c" "$TMP/rt/" ;;
	*) [ -f "$a" ] && interp=$a && cp -L "$a" "$TMP/rt/" ;;
	esac
done < <(ldd "$mount_bin")
[ -n "$interp" ] || skip_all "ldd names no loader of $mount_bin"
loader=$TMP/rt/$(basename "$interp")
# the library directories, as the paths /lib and /lib64 resolve to (Debian 12's merged /usr)
libdirs=()
while read -r d; do libdirs+=("$d"); done < <(for d in /lib /lib64 /usr/lib /usr/lib64 /usr/lib32 /usr/libx32 /usr/local/lib; do
	[ -d "$d" ] && realpath "$d"
done | sort -u)

# bare CMD...: CMD in a new mount namespace whose library directories are empty tmpfs mounts.
# bare --count: instead, how many entries each of those directories has there (bash builtins only,
# nothing dynamic runs after the mounts)
bare() {
	unshare -m --propagation private -- bash -c '
		loader=$1 rt=$2 mount_bin=$3 n=$4
		shift 4
		dirs=("${@:1:n}")
		shift "$n"
		for d in "${dirs[@]}"; do
			"$loader" --library-path "$rt" "$mount_bin" -t tmpfs -o mode=755 nolibs "$d" ||
				{ echo "static: cannot mount a tmpfs on $d" >&2; exit 125; }
		done
		if [ "$1" = --count ]; then
			shopt -s nullglob dotglob
			for d in "${dirs[@]}"; do f=("$d"/*); echo "$d ${#f[@]}"; done
			exit 0
		fi
		exec "$@"
	' bare "$loader" "$TMP/rt" "$mount_bin" "${#libdirs[@]}" "${libdirs[@]}" "$@"
}

# both NAME OUT ARGS...: the normal build (here) and the static one (bare, or where=env here)
# convert ARGS into OUT's format; sets $d to the case's directory and $why to what differs, empty when the bytes are equal.
# Both run as $TMP/run/perfconv with the same empty HOME and output path: a trace.zip's log and a
# pack's MANIFEST say the command line and the build-id cache.
run=$TMP/run/perfconv
mkdir -p "$TMP/run"
both() {
	local name=$1 out=$2
	shift 2
	d=$TMP/$name
	mkdir -p "$d/dyn" "$d/sta"
	why=
	rm -rf "$d/home" "$d/o" && mkdir -p "$d/home" "$d/o" && cp "$PERFCONV" "$run"
	HOME=$d/home "$run" -q "$@" ${out:+-o "$d/o/$out"} >"$d/dyn.out" 2>"$d/dyn.err" </dev/null ||
		{ why="the normal build failed (exit $?)"; cp "$d/dyn.err" "$d/log"; return; }
	[ -z "$out" ] || mv "$d/o/$out" "$d/dyn/$out"
	rm -rf "$d/home" "$d/o" && mkdir -p "$d/home" "$d/o" && cp "$SP" "$run"
	HOME=$d/home ${where:-bare} "$run" -q "$@" ${out:+-o "$d/o/$out"} >"$d/sta.out" 2>"$d/sta.err" </dev/null ||
		{ why="the static build failed in the namespace (exit $?)"; cp "$d/sta.err" "$d/log"; return; }
	[ -z "$out" ] || mv "$d/o/$out" "$d/sta/$out"
	if [ -n "$out" ] && ! cmp "$d/dyn/$out" "$d/sta/$out" >"$d/log" 2>&1; then
		why="$out differs from the normal build's"
	elif ! cmp -s "$d/dyn.out" "$d/sta.out"; then
		diff "$d/dyn.out" "$d/sta.out" >"$d/log"
		why="the standard output differs"
	elif [ -z "$out" ] && [ ! -s "$d/dyn.out" ]; then
		why="no output on stdout"
	fi
}

if selected static/linked; then
	f=$(file -b "$SP" 2>&1)
	l=$(ldd "$SP" 2>&1 | sed "s/^[[:space:]]*//")
	if [[ $f != *"statically linked"* ]]; then
		fail static/linked "file says: $f"
	elif [[ $l != *"not a dynamic executable"* ]]; then
		fail static/linked "ldd says: $l"
	elif readelf -lW "$SP" | grep -q INTERP; then
		fail static/linked "it has a program interpreter"
	else
		pass "static/linked ($(wc -c <"$SP") bytes; ldd: $l)"
	fi
fi

if selected static/empty; then
	out=$(bare --count 2>&1)
	bare "$PERFCONV" --version >"$TMP/dyn-bare.out" 2>&1
	drc=$?
	bare "$SP" --version >"$TMP/sta-bare.out" 2>&1
	src=$?
	if [ "$(echo "$out" | awk '$2 != 0' | wc -l)" != 0 ] || [ "$(echo "$out" | wc -l)" != "${#libdirs[@]}" ]; then
		fail static/empty "the library directories are not empty in the namespace: $(echo "$out" | tr '\n' ' ')"
	elif [ "$drc" = 0 ]; then
		fail static/empty "the normal build started without its libraries" "$TMP/dyn-bare.out"
	elif [ "$src" != 0 ]; then
		fail static/empty "the static build does not start there (exit $src)" "$TMP/sta-bare.out"
	else
		pass "static/empty (${libdirs[*]} empty; the normal build exits $drc there)"
	fi
fi

# the .NET fixture of static/dotnet and static/pack: its runtime's binaries are read from
# /usr/share/dotnet, where it was recorded
norun=$(missing_runtime "$FIX/dotnet-perfmap-all")

if selected static/dotnet; then
	if [ -n "$norun" ]; then
		skip static/dotnet "$norun"
	else
		fixture "$FIX/dotnet-perfmap-all"
		bad=
		for out in out.folded out.svg out.trace.zip; do
			both dotnet "$out" "${args[@]}"
			[ -n "$why" ] && { bad=$why; break; }
		done
		if [ -n "$bad" ]; then
			fail static/dotnet "$bad" "$d/log"
		else
			pass "static/dotnet (folded, svg, trace.zip of $fx)"
		fi
	fi
fi

if selected static/pack && [ -n "$norun" ]; then
	skip static/pack "$norun"
elif selected static/pack; then
	# the .NET runtime's binaries are members of megabytes, which zstd's worker threads compress
	# to other bytes than a libzstd.a without them does.  Packed here: in the namespace the
	# MANIFEST would lack the host's files it lists as seen and not taken
	fixture "$FIX/dotnet-perfmap-all"
	where=env both pack fp.perfpack "${args[@]}"
	P=$TMP/pack
	bad=$why
	if [ -z "$bad" ]; then
		cp "$P/dyn/fp.perfpack" "$TMP/fp.perfpack"
		for out in out.folded out.svg out.trace.zip; do
			both pack "$out" -i "$TMP/fp.perfpack"
			[ -n "$why" ] && { bad="from the pack: $why"; break; }
		done
	fi
	if [ -n "$bad" ]; then
		fail static/pack "$bad" "$d/log"
	else
		pass "static/pack (the same pack of $(wc -c <"$TMP/fp.perfpack") bytes; folded, svg, trace.zip from it)"
	fi
fi

if selected static/events; then
	both events "" --events "$FIX/dotnet-events/app.nettrace"
	if [ -n "$why" ]; then
		fail static/events "$why" "$d/log"
	else
		pass static/events
	fi
fi

if selected static/symsrv; then
	fixture "$FIX/fp-stripped-debuglink"
	symfs_without_debug "$TMP/nodebug-root"
	srv=$TMP/srv/_.debug/elf-buildid-sym-e1bab1914ae852a42a93b1cdcf1029d57e9c0acb
	mkdir -p "$srv"
	cp "$ROOT/tmp/probe/fx/bin/stripped/callgraph.debug" "$srv/_.debug"
	: >"$TMP/srv.log"
	python3 "$top/tests/tools/serve-symbols.py" "$TMP/srv" "$TMP/srv.port" "$TMP/srv.log" &
	bg_pids+=("$!")
	for _ in $(seq 50); do [ -s "$TMP/srv.port" ] && break; sleep 0.1; done
	port=$(cat "$TMP/srv.port" 2>/dev/null)
	bad=
	for host in localhost 127.0.0.1; do
		c=$TMP/symsrv-$host
		mkdir -p "$c/home"
		HOME=$c/home bare "$SP" -q -i "$in" --symfs "$TMP/nodebug-root" --kallsyms "$ROOT/kallsyms" \
			--symbol-server "http://$host:$port" -o "$c/out.folded" >"$c/out" 2>"$c/err" </dev/null
		rc=$?
		if [ "$rc" != 0 ]; then
			bad="--symbol-server http://$host:$port: exit $rc"; cp "$c/err" "$TMP/symsrv.log"; break
		elif ! expected "$exp/folded.txt" | cmp -s - "$c/out.folded"; then
			bad="--symbol-server http://$host:$port: not expected/folded.txt (the debug file did not come)"
			cp "$c/err" "$TMP/symsrv.log"; break
		fi
	done
	if [ -n "$bad" ]; then
		fail static/symsrv "$bad" "$TMP/symsrv.log"
	elif [ "$(wc -l <"$TMP/srv.log")" != 2 ]; then
		fail static/symsrv "the server got $(wc -l <"$TMP/srv.log") requests, not 2" "$TMP/srv.log"
	else
		pass "static/symsrv (by name through /etc/hosts and by address)"
	fi
	stop_bg
fi

if selected static/debuginfod; then
	fixture "$FIX/fp-callgraph"
	c=$TMP/debuginfod
	mkdir -p "$c/home"
	HOME=$c/home bare "$SP" "${args[@]}" --debuginfod http://127.0.0.1:9 -o "$c/out.folded" >"$c/out" 2>"$c/err" </dev/null
	rc=$?
	if [ "$rc" != 0 ]; then
		fail static/debuginfod "exit $rc" "$c/err"
	elif ! grep -q "this static build of perfconv has no debuginfod client" "$c/err"; then
		fail static/debuginfod "no message says the client is missing" "$c/err"
	elif ! expected "$exp/folded.txt" | cmp -s - "$c/out.folded"; then
		fail static/debuginfod "the conversion did not go on as without servers" "$c/err"
	else
		pass static/debuginfod
	fi
fi
