#!/usr/bin/env bash
# tests/endian.sh - recordings of the other byte order, made from the fixtures by
# scripts/swap-endian.py (built here, nothing swapped is committed).
#
#   endian/FX/roundtrip   swapping twice gives the fixture back, and the swapped file is another
#                         file (magic "2ELIFREP", as a big-endian machine writes "PERFILE2")
#   endian/FX/perf        perf 6.1 prints the same `perf script` text for both files: perf is the
#                         oracle that the swapped file is right (skipped where perf is missing)
#   endian/FX/FORMAT      perfconv gives the same folded and perf-script output for both (and the
#                         same off-CPU profile for the sched_switch fixtures, and the same folded
#                         output for pipe-mode streams read from a pipe)
#   endian/FX/header      perfconv --header and --stats on the swapped file print what perf's
#                         report --header-only and --stats print for it (for a pipe-mode stream,
#                         what they print for the original: perf 6.1 leaves the feature ids of a
#                         swapped stream unswapped and prints no features)
#   endian/refuse         what the script cannot swap (compressed records) is an error
#
# perf 6.1 does not swap the prot and flags words of MMAP2 records (session.c's
# perf_event__mmap2_swap leaves them), so on a swapped file it misses PROT_EXEC on anonymous
# executable mappings and names them //anon instead of /tmp/perf-PID.map.  The swapped file has
# them in its own byte order, as a big-endian machine writes them; for the fixtures with such
# mappings the perf case compares after that one renaming, and checks that the renaming was needed.
#
# Run by tests/run.sh (one line per case).  PERFCONV, FIXTURES as for tests/run.sh; FILTERS="w1 w2"
# only cases whose name has a word.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" endian
need_perfconv endian
need_python endian
SWAP=$top/scripts/swap-endian.py

perf_ok=0
if command -v perf >/dev/null 2>&1 && perf script -f -i "$FIX/fp-callgraph/perf.data" -F ip >/dev/null 2>&1; then
	perf_ok=1
fi

# fixtures without compressed records: frame pointers, threads, two events, system-wide with
# IDENTIFIER, no time, build-ids in MMAP2, sched_switch tracepoints with RAW payloads, DWARF
# stacks (REGS_USER, STACK_USER), .NET and node with perf maps, and two pipe-mode streams
FXS="fp-callgraph mt-threads multi-event cpu-systemwide notime-per-thread buildid-mmap
tracepoint-sched-switch tracepoint-systemwide dwarf-callgraph dotnet-perfmap-all dotnet-perfmap-wxoff
node-perf-basic-prof pipe-mode dwarf-recurse-pipe"

for name in $FXS; do
	selected "endian/$name/" || continue
	fixture_or_skip "$FIX/$name" || continue
	d=$TMP/$name
	mkdir -p "$d/be" "$d/back"
	sw=$d/be/$(basename "$in")
	# same file name and modification time: --header prints it, trace.zip logs carry it
	if ! python3 "$SWAP" "$in" "$sw" 2>"$d/swap.err"; then
		fail "endian/$name/roundtrip" "scripts/swap-endian.py failed" "$d/swap.err"
		continue
	fi
	touch -r "$in" "$sw"
	pcargs=("${args[@]:2}")

	if selected "endian/$name/roundtrip"; then
		python3 "$SWAP" "$sw" "$d/back/perf.data" 2>"$d/swap.err"
		if [ "$(head -c 8 "$sw")" != 2ELIFREP ]; then
			fail "endian/$name/roundtrip" "the swapped file does not start with 2ELIFREP"
		elif cmp -s "$in" "$sw"; then
			fail "endian/$name/roundtrip" "the swapped file equals the input"
		elif ! cmp -s "$in" "$d/back/perf.data"; then
			fail "endian/$name/roundtrip" "swapping twice does not give the fixture back" "$d/swap.err"
		else
			pass "endian/$name/roundtrip"
		fi
	fi

	if selected "endian/$name/perf"; then
		if [ "$perf_ok" != 1 ]; then
			skip "endian/$name/perf" "perf is not installed or cannot read the fixtures"
		else
			ks=${args[5]}
			perf script -f -i "$in" --symfs "$ROOT" --kallsyms "$ks" >"$d/perf.orig" 2>/dev/null
			perf script -f -i "$sw" --symfs "$ROOT" --kallsyms "$ks" >"$d/perf.swapped" 2>"$d/perf.err"
			# perf 6.1's unswapped MMAP2 prot (see the top of this file)
			sed -E 's@\(/tmp/perf-[0-9]+\.map\)$@(//anon)@' "$d/perf.orig" >"$d/perf.orig-anon"
			if [ ! -s "$d/perf.orig" ]; then
				fail "endian/$name/perf" "perf script printed nothing for the fixture"
			elif cmp -s "$d/perf.orig" "$d/perf.swapped"; then
				pass "endian/$name/perf"
			elif ! cmp -s "$d/perf.orig" "$d/perf.orig-anon" && cmp -s "$d/perf.orig-anon" "$d/perf.swapped"; then
				pass "endian/$name/perf"
			else
				diff "$d/perf.orig" "$d/perf.swapped" >"$d/perf.diff"
				fail "endian/$name/perf" "perf script prints other text for the swapped file" "$d/perf.diff"
			fi
		fi
	fi

	fmts="folded perf-script"
	case $name in tracepoint-*) fmts="$fmts off-cpu" ;; esac
	[ "$(basename "$in")" = pipe.data ] && fmts="$fmts stdin"
	for f in $fmts; do
		selected "endian/$name/$f" || continue
		fa=(-f "$f")
		[ "$f" = off-cpu ] && fa=(--off-cpu -f folded)
		[ "$f" = stdin ] && fa=(-f folded)
		"$PERFCONV" -q -i "$in" "${pcargs[@]}" "${fa[@]}" -o "$d/pc.orig" 2>"$d/pc.err"
		rc1=$?
		if [ "$f" = stdin ]; then # a stream read from a pipe (the reader's streaming path)
			"$PERFCONV" -q -i - "${pcargs[@]}" -f folded -o "$d/pc.orig" <"$in" 2>"$d/pc.err"
			rc1=$?
			cat "$sw" | "$PERFCONV" -q -i - "${pcargs[@]}" -f folded -o "$d/pc.swapped" 2>>"$d/pc.err"
		else
			"$PERFCONV" -q -i "$sw" "${pcargs[@]}" "${fa[@]}" -o "$d/pc.swapped" 2>>"$d/pc.err"
		fi
		rc2=$?
		if [ "$rc1$rc2" != 00 ]; then
			fail "endian/$name/$f" "exit status $rc1 (fixture), $rc2 (swapped)" "$d/pc.err"
		elif [ ! -s "$d/pc.orig" ]; then
			fail "endian/$name/$f" "empty output: the case tests nothing" "$d/pc.err"
		elif cmp -s "$d/pc.orig" "$d/pc.swapped"; then
			pass "endian/$name/$f"
		else
			diff "$d/pc.orig" "$d/pc.swapped" >"$d/pc.diff"
			fail "endian/$name/$f" "output of the swapped file differs" "$d/pc.diff"
		fi
	done

	if selected "endian/$name/header"; then
		if [ "$perf_ok" != 1 ]; then
			skip "endian/$name/header" "perf is not installed or cannot read the fixtures"
		else
			# perf 6.1 does not swap the feature id of HEADER_FEATURE records, so in a
			# swapped stream it finds no features: there the reference is the original's
			ref=$sw
			[ "$(basename "$in")" = pipe.data ] && ref=$in
			perf report -f -i "$ref" --header-only >"$d/h.perf" 2>/dev/null
			perf report -f -i "$ref" --stats >>"$d/h.perf" 2>/dev/null
			"$PERFCONV" --header -i "$sw" >"$d/h.pc" 2>"$d/h.err"
			"$PERFCONV" --stats -i "$sw" >>"$d/h.pc" 2>>"$d/h.err"
			if cmp -s "$d/h.perf" "$d/h.pc"; then
				pass "endian/$name/header"
			else
				diff "$d/h.perf" "$d/h.pc" >"$d/h.diff"
				fail "endian/$name/header" "--header/--stats differ from perf report's on the swapped file" "$d/h.diff"
			fi
		fi
	fi
done

if selected endian/refuse; then
	bad=
	for f in compressed-zstd/perf.data dwarf-zstd/perf.data; do
		python3 "$SWAP" "$FIX/$f" "$TMP/refused" 2>"$TMP/refuse.err"
		rc=$?
		[ "$rc" = 1 ] && [ -s "$TMP/refuse.err" ] && [ ! -e "$TMP/refused" ] || bad="${bad:-$f: exit $rc, expected 1 with a message and no output}"
	done
	if [ -n "$bad" ]; then fail endian/refuse "$bad" "$TMP/refuse.err"; else pass endian/refuse; fi
fi
exit 0
