#!/usr/bin/env bash
# tests/jit.sh - JIT symbol sources on real recordings: jitdumps read without perf inject,
# container pids, perf maps left by another process, hostile and unfinished jitdumps, and the
# .NET recordings under fixtures/dotnet-*/ when they are there.
#
#   - node-jitdump: its raw perf.data plus jit-15218.dump (before perf inject) must give, with
#     by default, exactly the folded files perf made from perf inject's perf.jit.data;
#   - the same with the dump renamed and rewritten as a container's (pid 1) and --pid-map;
#   - node-perf-basic-prof's map as a container's perf-1.map with --pid-map;
#   - a perf map of another process (node's map under mono's pid) is refused with a warning;
#   - a corrupt jitdump stops the conversion naming the dump and the offset, with no output;
#     a jitdump cut inside its last record is used up to that record, with a warning;
#   - by default, fixtures that perf resolves completely still give perf's output;
#   - the hints of a missing .NET perf map (ended, running, in a pid namespace) and the .NET 10
#     jitdump's cut last record, which costs no name;
#   - a real .NET 10 container recording (tests/data/dotnet-container): the pid from the jitdump
#     marker, --pid-map, short names, and another run's files refused.
#   - a synthetic recording (tests/tools/jit-late.py): a frame named before the jitdump was read
#     is named from it after the process's next mapping change, wherever that mapping is.
#
# Run by tests/run.sh; prints "ok    jit/NAME", "FAIL  jit/NAME: why" or "skip  jit/NAME: why".
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2"  only cases containing a word
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" jit
S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms")
# keep the host's /tmp and /proc out of the lookups: only the files given here count
export PERFCONV_TMP=$TMP/hosttmp PERFCONV_PROC=$TMP/proc
mkdir -p "$PERFCONV_TMP" "$PERFCONV_PROC"
need_perfconv jit

# run NAME ARGS...: perfconv to $TMP/out.folded; sets rc, stderr in $TMP/err
run() {
	rm -f "$TMP/out.folded" "$TMP/err"
	"$PERFCONV" "$@" -o "$TMP/out.folded" 2>"$TMP/err" </dev/null
	rc=$?
}

# same NAME EXPECTED ARGS...: the conversion must succeed and equal EXPECTED
same() {
	local name=$1 exp=$2 a
	shift 2
	selected "$name" || return 0
	# perf's stacks as the default draws them, each run of unnamed frames of one binary one frame
	expected_as "$exp" "$@" >"$TMP/same.exp" || { fail "$name" "no $exp"; return; }
	run "$@"
	# --pid and --tid: the names' pids made "?", as perf's files have them (stackcollapse-perf.pl
	# reads no pid in perf's default text); the JIT names of these cases need the default, which
	# names the pid (folded.sh's pid-default checks it)
	for a in "$@"; do
		case $a in --pid | --tid) [ "$rc" = 0 ] && pid_as_script "$TMP/out.folded" ;; esac
	done
	if [ "$rc" = 0 ] && cmp -s "$TMP/same.exp" "$TMP/out.folded"; then
		pass "$name"
	elif [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc" "$TMP/err"
	else
		diff -u "$TMP/same.exp" "$TMP/out.folded" --label "$exp" --label perfconv >"$TMP/diff"
		fail "$name" "output differs from $exp" "$TMP/diff"
	fi
}

# pid_as_script FILE: folded --pid/--tid lines with their "comm-PID" made "comm-?", sorted again by
# stack as stackcollapse-perf.pl sorts
pid_as_script() {
	python3 - "$1" <<'EOF'
import re, sys
lines = [re.sub(rb"^([^;]*)--?[0-9]+(/-?[0-9]+)?(?=[; ])", rb"\1-?\2", l) for l in open(sys.argv[1], "rb").read().splitlines()]
lines.sort(key=lambda l: l.rsplit(b" ", 1)[0])
open(sys.argv[1], "wb").write(b"".join(l + b"\n" for l in lines))
EOF
}

NJ=$FIX/node-jitdump
# ---------------------------------------------------------------------------------------------
# node-jitdump: the raw recording and its dump give perf inject's frames.
if [ -f "$NJ/jit-15218.dump.xz" ] && [ -f "$NJ/perf.data" ]; then
	D=$TMP/nj
	mkdir -p "$D"
	xz -dc "$NJ/jit-15218.dump.xz" >"$D/jit-15218.dump"
	same jit/node-jitdump/raw "$NJ/expected/folded.txt" -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$D"
	for opt in pid tid kernel addrs jit; do
		same "jit/node-jitdump/raw-$opt" "$NJ/expected/folded-$opt.txt" -i "$NJ/perf.data" "${S[@]}" \
			--resolve-jit --map-dir "$D" "--$opt"
	done

	# perf inject's output keeps working: its jitted-*.so name the frames, with or without the dump.
	same jit/node-jitdump/injected-resolve "$NJ/expected/folded.txt" -i "$NJ/perf.jit.data" "${S[@]}" --resolve-jit --map-dir "$D"

	if selected jit/node-jitdump/summary; then
		run -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$D"
		if [ "$rc" = 0 ] && grep -qE 'JIT frames \(unique\): 0 named by perf maps, [1-9][0-9]* by jitdumps' "$TMP/err"; then
			pass jit/node-jitdump/summary
		else
			fail jit/node-jitdump/summary "no summary line counting jitdump frames" "$TMP/err"
		fi
	fi

	# With --perf-compat the raw file gives what perf script gives on it: no jitdump names.
	if selected jit/node-jitdump/default; then
		run -i "$NJ/perf.data" "${S[@]}" --perf-compat --map-dir "$D"
		if [ "$rc" = 0 ] && ! grep -q 'JS:' "$TMP/out.folded" && grep -q 'JS:' "$NJ/expected/folded.txt"; then
			pass jit/node-jitdump/default
		else
			fail jit/node-jitdump/default "exit status $rc, or jitdump names with --perf-compat" "$TMP/err"
		fi
	fi

	# A container: the runtime was pid 1 in its namespace and wrote jit-1.dump.  The recording's
	# marker names jit-15218.dump, which is absent: --pid-map says which file is the process's.
	C=$TMP/container
	mkdir -p "$C"
	python3 - "$D/jit-15218.dump" "$C/jit-1.dump" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", b, 20, 1)          # header pid
open(sys.argv[2], "wb").write(b)
EOF
	same jit/node-jitdump/pid-map "$NJ/expected/folded.txt" -i "$NJ/perf.data" "${S[@]}" --pid-map 15218=1 --map-dir "$C"
	if selected jit/node-jitdump/pid-map-missing; then
		run -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$C"
		if [ "$rc" = 0 ] && grep -q "jit-15218.dump" "$TMP/err" && grep -q "none was found" "$TMP/err" &&
			! grep -q 'JS:' "$TMP/out.folded"; then
			pass jit/node-jitdump/pid-map-missing
		else
			fail jit/node-jitdump/pid-map-missing "without --pid-map the container's dump must not be used, and the warning must name the files looked for" "$TMP/err"
		fi
	fi
	# The pid in the dump's header must be the process's.
	if selected jit/node-jitdump/wrong-pid; then
		W=$TMP/wrongpid
		mkdir -p "$W"
		cp "$C/jit-1.dump" "$W/jit-15218.dump"
		run -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$W"
		if [ "$rc" = 0 ] && grep -q "written by pid 1, not by pid 15218" "$TMP/err" && ! grep -q 'JS:' "$TMP/out.folded"; then
			pass jit/node-jitdump/wrong-pid
		else
			fail jit/node-jitdump/wrong-pid "a dump written by another pid must be refused with a warning" "$TMP/err"
		fi
	fi

	# A --pid-map that gives an inner pid to a process whose dump has its host pid: the warning
	# names the two pids apart (it said "written by pid 15218, not by pid 15218").
	if selected jit/node-jitdump/pid-map-host-dump; then
		run -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$D" --pid-map 15218=1
		if [ "$rc" = 0 ] && grep -q "jit-15218.dump' was written by pid 15218, not by pid 1, which is what pid 15218 was in its pid namespace (from --pid-map): the dump has the host pid" "$TMP/err" &&
			! grep -q "written by pid \([0-9]*\), not by pid \1\b" "$TMP/err"; then
			pass jit/node-jitdump/pid-map-host-dump
		else
			fail jit/node-jitdump/pid-map-host-dump "the warning must tell the host pid from the pid in the namespace" "$TMP/err"
		fi
	fi

	# Hostile: the first record's total_size is 8 (smaller than a record header).
	if selected jit/node-jitdump/corrupt; then
		B=$TMP/bad
		mkdir -p "$B"
		python3 - "$D/jit-15218.dump" "$B/jit-15218.dump" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", b, 40 + 4, 8)
open(sys.argv[2], "wb").write(b)
EOF
		run -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$B"
		if [ "$rc" = 1 ] && grep -q "'$B/jit-15218.dump': corrupt record at offset 40" "$TMP/err" &&
			[ ! -e "$TMP/out.folded" ] && [ -z "$(ls "$TMP" | grep 'out.folded.tmp')" ]; then
			pass jit/node-jitdump/corrupt
		else
			fail jit/node-jitdump/corrupt "exit status $rc (want 1), the message must name the dump and offset 40, and no output may be left" "$TMP/err"
		fi
	fi

	# Unfinished: cut in the middle of the last record, as while the runtime still writes it (or
	# when it was killed).  Its code is not sampled, so it does not matter: no warning, the
	# records before it are used, and -v says it was incomplete.
	if selected jit/node-jitdump/unfinished; then
		U=$TMP/unfinished
		mkdir -p "$U"
		size=$(stat -c %s "$D/jit-15218.dump")
		head -c $((size - 100)) "$D/jit-15218.dump" >"$U/jit-15218.dump"
		run -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$U"
		cp "$TMP/err" "$TMP/err.quiet"
		ok=$([ "$rc" = 0 ] && ! grep -q "incomplete" "$TMP/err" && grep -q 'JS:' "$TMP/out.folded" && echo 1)
		run -v -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$U"
		if [ -n "$ok" ] && grep -q "^perfconv: pid 15218: jitdump '$U/jit-15218.dump': the last record, at offset [0-9]*, is incomplete; the records before it are used$" "$TMP/err"; then
			pass jit/node-jitdump/unfinished
		else
			cat "$TMP/err.quiet" >>"$TMP/err"
			fail jit/node-jitdump/unfinished "an unfinished last record whose code is not sampled: no warning, a -v note" "$TMP/err"
		fi
	fi
	# ... but when sampled JIT code is named by no record (and no perf map), the records after the
	# incomplete one may name it: one warning that says how many addresses are left unnamed (the
	# dump cut in its first code load: no method is named)
	if selected jit/node-jitdump/unfinished-sampled; then
		U=$TMP/unfinished-sampled
		mkdir -p "$U"
		python3 - "$D/jit-15218.dump" "$U/jit-15218.dump" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
pos = struct.unpack_from("<I", b, 8)[0]
while pos + 16 <= len(b):
    rid, size = struct.unpack_from("<II", b, pos)
    if rid == 0:
        break
    pos += size
open(sys.argv[2], "wb").write(b[:pos + size // 2])
EOF
		run -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$U"
		if [ "$rc" = 0 ] && [ "$(grep -c "is incomplete" "$TMP/err")" = 1 ] &&
			grep -q "^perfconv: warning: '$U/jit-15218.dump': the last record, at offset 104, a code load of 0x[0-9a-f]*-0x[0-9a-f]*, is incomplete: 63 sampled JIT addresses of pid 15218 (first 0x[0-9a-f]*) left unnamed: the records after it, not yet written when it was read, may name them" "$TMP/err"; then
			pass jit/node-jitdump/unfinished-sampled
		else
			fail jit/node-jitdump/unfinished-sampled "one warning that the incomplete record may name the sampled JIT code" "$TMP/err"
		fi
	fi

	# Architecture time stamps cannot be matched with the samples: the latest load wins, and
	# the warning says why.
	if selected jit/node-jitdump/untimed; then
		T=$TMP/untimed
		mkdir -p "$T"
		python3 - "$D/jit-15218.dump" "$T/jit-15218.dump" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<Q", b, 32, 1)          # JITDUMP_FLAGS_ARCH_TIMESTAMP
open(sys.argv[2], "wb").write(b)
EOF
		run -i "$NJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$T"
		if [ "$rc" = 0 ] && grep -q "without time.*architecture time stamps" "$TMP/err" && grep -q 'JS:' "$TMP/out.folded"; then
			pass jit/node-jitdump/untimed
		else
			fail jit/node-jitdump/untimed "a time-less lookup must work and say why" "$TMP/err"
		fi
	fi
else
	fail jit/node-jitdump "no fixtures/node-jitdump"
fi

# ---------------------------------------------------------------------------------------------
# Perf maps in a container, and maps of another process.
NB=$FIX/node-perf-basic-prof
MJ=$FIX/mono-jitmap
if [ -f "$NB/maps/perf-15051.map" ] && [ -f "$MJ/maps/perf-15917.map" ]; then
	P=$TMP/pm
	mkdir -p "$P"
	cp "$NB/maps/perf-15051.map" "$P/perf-1.map"
	same jit/node-perf-basic-prof/pid-map "$NB/expected/folded.txt" -i "$NB/perf.data" "${S[@]}" --pid-map 15051=1 --map-dir "$P"
	same jit/node-perf-basic-prof/pid-map-jit "$NB/expected/folded-jit.txt" -i "$NB/perf.data" "${S[@]}" --pid-map 15051=1 \
		--map-dir "$P" --jit

	if selected jit/mono-jitmap/foreign-map; then
		F=$TMP/foreign
		E=$TMP/empty
		mkdir -p "$F" "$E"
		cp "$NB/maps/perf-15051.map" "$F/perf-15917.map"
		"$PERFCONV" -q -i "$MJ/perf.data" "${S[@]}" --map-dir "$E" -o "$TMP/nomap.folded" 2>/dev/null
		run -i "$MJ/perf.data" "${S[@]}" --map-dir "$F"
		if [ "$rc" = 0 ] && grep -q "'$F/perf-15917.map' is not the perf map of pid 15917" "$TMP/err" &&
			cmp -s "$TMP/nomap.folded" "$TMP/out.folded"; then
			pass jit/mono-jitmap/foreign-map
		else
			fail jit/mono-jitmap/foreign-map "another process's map must be refused with a warning and not used" "$TMP/err"
		fi
	fi

	# --resolve-jit changes nothing where perf resolves every JIT frame.
	same jit/node-perf-basic-prof/resolve "$NB/expected/folded.txt" -i "$NB/perf.data" "${S[@]}" --resolve-jit --map-dir "$NB/maps"
	same jit/mono-jitmap/resolve "$MJ/expected/folded.txt" -i "$MJ/perf.data" "${S[@]}" --resolve-jit --map-dir "$MJ/maps"
	same jit/mono-jitmap/resolve-jit "$MJ/expected/folded-jit.txt" -i "$MJ/perf.data" "${S[@]}" --resolve-jit \
		--map-dir "$MJ/maps" --jit
else
	fail jit/perf-maps "no node-perf-basic-prof or mono-jitmap fixture"
fi
# ---------------------------------------------------------------------------------------------
# The .NET fixtures (fixtures/dotnet-*).  One recorded with a jitdump and perf inject: its raw
# perf.data plus the dump (kept as .xz, read as is) must give perf's files made from perf.jit.data
# (.NET names in the runtime's form, as perf prints them: --dotnet-names keep).
# The others have perf maps only for memfd:doublemapper code, which perf leaves unresolved: by
# default their managed stacks must be resolved (tests/dotnet-resolution.py's measure).
for dir in "$FIX"/dotnet-*/; do
	[ -d "$dir/maps" ] || continue
	dir=${dir%/}
	fx=$(basename "$dir")
	ks=$ROOT/kallsyms
	[ -f "$dir/kallsyms" ] && ks=$dir/kallsyms
	DS=(-i "$dir/perf.data" --symfs "$ROOT" --kallsyms "$ks" --map-dir "$dir/maps" --dotnet-names keep)
	if [ -f "$dir/perf.jit.data" ]; then
		for opt in "" pid tid kernel addrs jit; do
			name=jit/$fx/raw${opt:+-$opt}
			selected "$name" || continue
			expected_as "$dir/expected/folded${opt:+-$opt}.txt" ${opt:+--$opt} >"$TMP/exp.txt" || { fail "$name" "no expected file"; continue; }
			same "$name" "$TMP/exp.txt" "${DS[@]}" ${opt:+--$opt}
		done
		continue
	fi
	case $fx in
	dotnet-aspnet) continue ;;	# its managed stacks pass through ReadyToRun images (no R2R symbols here)
	esac
	selected "jit/$fx/resolve" || continue
	if ! command -v python3 >/dev/null 2>&1; then
		skip "jit/$fx/resolve" "python3 is needed (scripts/install-deps.sh --test)"
		continue
	fi
	run "${DS[@]}"
	if [ "$rc" = 0 ] && python3 tests/dotnet-resolution.py --check-managed 95 "$TMP/out.folded" >"$TMP/share" 2>&1; then
		pass "jit/$fx/resolve ($(grep -o 'managed [0-9.]*%' "$TMP/share" | head -1) resolved)"
	else
		cat "$TMP/share" >>"$TMP/err"
		fail "jit/$fx/resolve" "exit status $rc, or under 95% of the managed stacks resolved by default" "$TMP/err"
	fi
done

# ---------------------------------------------------------------------------------------------
# dotnet-attach (perf record -p: no jitdump marker is recorded) as if the app had run in a pid
# namespace as pid 1 and ended: its files, copied into --map-dir, are perf-1.map and jit-1.dump,
# and nothing tells that pid.  The map whose code lies in the process's JIT mappings is taken, and
# gives the same output as the files under the host pid; another process's map is not taken.
DA=$FIX/dotnet-attach
if [ -f "$DA/maps/perf-15572.map" ] && [ -f "$DA/maps/jit-15572.dump" ] && [ -f "$FIX/dotnet-perfmap-all/perf.data" ]; then
	A=$TMP/attach-ns
	O=$TMP/attach-other
	mkdir -p "$A" "$O"
	cp "$DA/maps/perf-15572.map" "$A/perf-1.map"
	cp "$DA/maps/jit-15572.dump" "$A/jit-1.dump"
	cp "$FIX"/dotnet-perfmap-all/maps/perf-*.map "$O/perf-1.map"
	DAS=(-i "$DA/perf.data" --symfs "$ROOT" --kallsyms "$DA/kallsyms" --resolve-jit)
	"$PERFCONV" -q "${DAS[@]}" --map-dir "$DA/maps" -o "$TMP/attach-host.folded" 2>/dev/null
	same jit/dotnet-attach/nspid-from-map "$TMP/attach-host.folded" "${DAS[@]}" --map-dir "$A"
	"$PERFCONV" -q "${DAS[@]}" --map-dir "$TMP/empty-maps" -o "$TMP/attach-nomap.folded" 2>/dev/null
	same jit/dotnet-attach/nspid-foreign-map "$TMP/attach-nomap.folded" "${DAS[@]}" --map-dir "$O"
	if selected jit/dotnet-attach/nspid-differs && cmp -s "$TMP/attach-host.folded" "$TMP/attach-nomap.folded"; then
		fail jit/dotnet-attach/nspid-differs "the perf map names nothing in dotnet-attach: the two cases above prove nothing"
	else
		selected jit/dotnet-attach/nspid-differs && pass jit/dotnet-attach/nspid-differs
	fi
else
	fail jit/dotnet-attach/nspid "no dotnet-attach or dotnet-perfmap-all fixture"
fi
# ---------------------------------------------------------------------------------------------
# A real .NET 10 container recording (tests/data/dotnet-container/PROVENANCE.txt): the runtime was
# pid 3 inside and wrote perf-3.map and jit-3.dump; perf recorded pid 22534.  No --pid-map: the
# jitdump marker gives the pid.  The framework's own files are left out (an empty --symfs), so
# the output does not depend on the .NET installation; the managed frames come from the dump.
DC=tests/data/dotnet-container
if [ -f "$DC/perf.data" ]; then
	M=$TMP/dc-maps
	Y=$TMP/dc-symfs
	mkdir -p "$M" "$Y"
	xz -dc "$DC/maps/jit-3.dump.xz" >"$M/jit-3.dump"
	xz -dc "$DC/maps/perf-3.map.xz" >"$M/perf-3.map"
	DA=(-i "$DC/perf.data" --symfs "$Y" --kallsyms /dev/null --map-dir "$M")
	if selected jit/dotnet-pidns/marker-pid; then
		run "${DA[@]}" --dotnet-names keep
		cp "$TMP/out.folded" "$TMP/dc.folded" 2>/dev/null
		missing=
		for f in 'Demo.Work.Program::Main' 'Demo.Work.Program::Outer;int64 [app] Demo.Work.Program::Inner' \
			'Demo.Work.Program::Lookup' \
			'System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]::FindValue'; do
			grep -qF "$f" "$TMP/out.folded" || missing="$missing '$f'"
		done
		if [ "$rc" = 0 ] && [ -z "$missing" ] && grep -qE 'JIT frames \(unique\): .* [1-9][0-9]* by jitdumps, .* 0 unresolved' "$TMP/err"; then
			pass jit/dotnet-pidns/marker-pid
		else
			fail jit/dotnet-pidns/marker-pid "exit status $rc; managed frames missing:${missing:- none}; or JIT frames left unresolved" "$TMP/err"
		fi
	fi
	if selected jit/dotnet-pidns/pid-map; then
		run "${DA[@]}" --dotnet-names keep --pid-map 22534=3
		if [ "$rc" = 0 ] && [ -s "$TMP/dc.folded" ] && cmp -s "$TMP/dc.folded" "$TMP/out.folded"; then
			pass jit/dotnet-pidns/pid-map
		else
			fail jit/dotnet-pidns/pid-map "--pid-map 22534=3 must give what the marker gives" "$TMP/err"
		fi
	fi
	# perf's own result: memfd:doublemapper frames stay unresolved with --perf-compat.
	if selected jit/dotnet-pidns/default; then
		run "${DA[@]}" --perf-compat
		if [ "$rc" = 0 ] && ! grep -q 'Demo.Work' "$TMP/out.folded" && grep -qE 'JIT frames .* [1-9][0-9]* unresolved' "$TMP/err"; then
			pass jit/dotnet-pidns/default
		else
			fail jit/dotnet-pidns/default "with --perf-compat the memfd frames must stay as perf shows them" "$TMP/err"
		fi
	fi
	if selected jit/dotnet-pidns/short-names; then
		run "${DA[@]}" --resolve-jit --dotnet-names short --strip-tiers
		if [ "$rc" = 0 ] && grep -qF ';app!Demo.Work.Program::Outer;app!Demo.Work.Program::Inner' "$TMP/out.folded" &&
			grep -qF 'System.Private.CoreLib!System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]::FindValue' "$TMP/out.folded" &&
			! grep -q 'int64 \[app\]' "$TMP/out.folded"; then
			pass jit/dotnet-pidns/short-names
		else
			fail jit/dotnet-pidns/short-names "short names missing" "$TMP/err"
		fi
	fi
	# While the process runs, its files are under /proc/PID/root/tmp and its pid inside the
	# container is the last NStgid field of /proc/PID/status.  A /proc tree made here stands in
	# for the live one (PERFCONV_PROC), with the container's /tmp under root/.
	if selected jit/dotnet-pidns/live; then
		L=$TMP/live-proc
		mkdir -p "$L/22534/root/tmp"
		printf 'Name:\tdotnet\nTgid:\t22534\nPid:\t22534\nNStgid:\t22534\t3\nNSpid:\t22534\t3\n' >"$L/22534/status"
		echo dotnet >"$L/22534/comm"
		cp "$M/perf-3.map" "$L/22534/root/tmp/"
		PERFCONV_PROC=$L run -i "$DC/perf.data" --symfs "$Y" --kallsyms /dev/null --dotnet-names keep
		perfmap_ok=$(grep -cE 'JIT frames \(unique\): [1-9][0-9]* named by perf maps, 0 by jitdumps, .* 0 unresolved' "$TMP/err")
		cp "$M/jit-3.dump" "$L/22534/root/tmp/"
		PERFCONV_PROC=$L run -i "$DC/perf.data" --symfs "$Y" --kallsyms /dev/null --dotnet-names keep
		dump_ok=$(grep -cE 'JIT frames \(unique\): 0 named by perf maps, [1-9][0-9]* by jitdumps, .* 0 unresolved' "$TMP/err")
		[ ! -s "$TMP/dc.folded" ] || cmp -s "$TMP/dc.folded" "$TMP/out.folded" || dump_ok=0
		# the pid now belongs to another program: its files are not the recorded process's
		echo bash >"$L/22534/comm"
		PERFCONV_PROC=$L run -i "$DC/perf.data" --symfs "$Y" --kallsyms /dev/null --dotnet-names keep
		if [ "$perfmap_ok" = 1 ] && [ "$dump_ok" = 1 ] && [ "$rc" = 0 ] && ! grep -q 'Demo.Work' "$TMP/out.folded" &&
			grep -q "looked for.*'$PERFCONV_TMP/jit-22534.dump'" "$TMP/err"; then
			pass jit/dotnet-pidns/live
		else
			fail jit/dotnet-pidns/live "the live process's perf map ($perfmap_ok) and jitdump ($dump_ok) must be found through /proc/PID/root/tmp and NStgid, and not when the pid runs another program" "$TMP/err"
		fi
	fi
	# The maps of another run with the same in-container pid: refused, never used.
	if selected jit/dotnet-pidns/stale; then
		X=$TMP/dc-stale
		mkdir -p "$X"
		python3 - "$M/jit-3.dump" "$M/perf-3.map" "$X" <<'EOF2'
import struct, sys
# the same files moved 1 GiB away, as another process's code heaps would be
shift = 1 << 30
b = bytearray(open(sys.argv[1], "rb").read())
pos = struct.unpack_from("<I", b, 8)[0]
while pos + 16 <= len(b):
    rid, size = struct.unpack_from("<II", b, pos)
    if rid == 0:
        vma, addr = struct.unpack_from("<QQ", b, pos + 24)
        struct.pack_into("<QQ", b, pos + 24, vma + shift, addr + shift)
    pos += size
open(sys.argv[3] + "/jit-3.dump", "wb").write(b)
with open(sys.argv[2]) as f, open(sys.argv[3] + "/perf-3.map", "w") as o:
    for line in f:
        a, rest = line.split(" ", 1)
        o.write("%x %s" % (int(a, 16) + shift, rest))
EOF2
		run -i "$DC/perf.data" --symfs "$Y" --kallsyms /dev/null --map-dir "$X" --resolve-jit
		if [ "$rc" = 0 ] && grep -q "jit-3.dump' is not the jitdump of pid 22534" "$TMP/err" &&
			grep -q "perf-3.map' is not the perf map of pid 22534" "$TMP/err" && ! grep -q 'Demo.Work' "$TMP/out.folded"; then
			pass jit/dotnet-pidns/stale
		else
			fail jit/dotnet-pidns/stale "maps of another process must be refused with a warning" "$TMP/err"
		fi
	fi
else
	fail jit/dotnet-pidns "no tests/data/dotnet-container"
fi
# jit/late-jitdump: a frame the callchain caches hold must be named again once the JIT
# symbols changed, at the process's next mapping change even when that mapping is elsewhere
# (tests/tools/jit-late.py tells the story); perfconv named it so when every mapping change
# started the caches over
if selected jit/late-jitdump && command -v python3 >/dev/null 2>&1; then
	L=$TMP/late
	rm -rf "$L" && python3 "$(dirname "$0")/tools/jit-late.py" "$L"
	printf 'fakenode;Builtin:FakeBuiltin 1000\nfakenode;LazyCompile:fakeJit 1000\nfakenode;[fakenode] 1000\n' >"$L/expect"
	run -q -i "$L/perf.data" --map-dir "$L" -f folded
	if [ "$rc" = 0 ] && cmp -s "$L/expect" "$TMP/out.folded"; then
		pass jit/late-jitdump
	else
		diff "$L/expect" "$TMP/out.folded" >"$TMP/diff" 2>&1
		cat "$TMP/err" >>"$TMP/diff"
		fail jit/late-jitdump "exit status $rc, or the binary's code named before the jitdump was read kept its old name" "$TMP/diff"
	fi
fi
# jit/dotnet-hints: what the warning on a missing perf map tells to do depends on the process.
# Gone: the map had to be copied before it ended, or the recording packed where it was made; still
# running (a /proc tree made here stands for it): --enable-perfmap; running in a pid namespace:
# the inner pid it names its files with, and --pid-map.  The .NET 10 jitdump's cut last record
# (a stub's code load) names none of the sampled code: no warning about it.
PO=$FIX/dotnet-perfmap-only
if selected jit/dotnet-hints && [ -f "$PO/perf.data" ]; then
	bad=
	H=$TMP/hints-proc
	mkdir -p "$H"
	PERFCONV_PROC=$H run -i "$PO/perf.data" --kallsyms /dev/null
	grep -q "no JIT symbols for pid 12516: no perf map, .*copy it out before the process ends, or pack the recording on the recording machine, -o X.perfpack" \
		"$TMP/err" || bad="${bad:-an ended process: the hint must say to copy the map before it ends or to pack}"
	cp "$TMP/err" "$TMP/hints.err"
	mkdir -p "$H/12516"
	echo Probe >"$H/12516/comm"
	printf 'Name:\tProbe\nTgid:\t12516\nPid:\t12516\nNStgid:\t12516\n' >"$H/12516/status"
	PERFCONV_PROC=$H run -i "$PO/perf.data" --kallsyms /dev/null
	grep -q "pid 12516 still runs: 'perfconv --enable-perfmap 12516'" "$TMP/err" ||
		bad="${bad:-a running process: the hint must name --enable-perfmap 12516}"
	cat "$TMP/err" >>"$TMP/hints.err"
	printf 'Name:\tProbe\nTgid:\t12516\nPid:\t12516\nNStgid:\t12516\t7\n' >"$H/12516/status"
	PERFCONV_PROC=$H run -i "$PO/perf.data" --kallsyms /dev/null
	grep -q "pid 12516 still runs, as pid 7 in its pid namespace, and its runtime names the map perf-7.map: .*--pid-map 12516=7" \
		"$TMP/err" || bad="${bad:-a process in a pid namespace: the hint must name perf-7.map and --pid-map 12516=7}"
	cat "$TMP/err" >>"$TMP/hints.err"
	# the real .NET 10 jitdump of dotnet-aspnet ends in a cut stub load that costs no name
	DA=$FIX/dotnet-aspnet
	run -i "$DA/perf.data" --kallsyms /dev/null --map-dir "$DA/maps"
	! grep -q "is incomplete" "$TMP/err" || bad="${bad:-dotnet-aspnet: a warning on the cut last record of the jitdump, which names no sampled code}"
	cat "$TMP/err" >>"$TMP/hints.err"
	if [ -z "$bad" ]; then pass jit/dotnet-hints; else fail jit/dotnet-hints "$bad" "$TMP/hints.err"; fi
fi
exit 0
