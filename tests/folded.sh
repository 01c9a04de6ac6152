#!/usr/bin/env bash
# tests/folded.sh - the golden tests: every fixture converted with the options its expected files
# were made with (tests/lib.sh's fixture) and each option of stackcollapse-perf.pl, byte for byte
# against perf 6.1 + stackcollapse-perf.pl; --stats and --header against perf report; the same
# stacks from a pipe, from one thread, from compressed debug files and from longer attrs.  Which
# running kernel names a recording's frames is tests/running-kernel.sh's; the other formats are
# their own suites'.
#   FX/folded, FX/folded-{pid,tid,kernel,addrs,jit,all,EVENT,nodebug,nomap}, FX/pid-default, FX/stats, FX/header,
#   FX/stdin, FX/one-thread, FX/raw-perf.data, FX/dwarf-summary, FX/dwarf-cut,
#   FX/compressed-debug, FX/dwarf-image-cache, FX/unwind-cache-windows, attr-size/FX
# Run by tests/run.sh; prints "ok    NAME", "FAIL  NAME: why" or "skip  NAME: why".  PERFCONV,
# FIXTURES, FILTERS="w1 w2" and VARIANTS as for tests/run.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" folded
need_perfconv folded
S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms")

# dwarf_image_cache NAME EXPECTED ARGS...: a conversion whose inline names come from compressed
# DWARF keeps the inflated image in the symbol cache (XDG_CACHE_HOME/perfconv/dwarf): the first
# conversion misses and writes it, the second reads it, an entry with a changed byte is
# reported, removed and written again, --no-cache writes nothing; the stacks are EXPECTED's
# every time.
dwarf_image_cache() {
	local name=$1 exp=$2 d=$TMP/case xdg=$TMP/xdg-dwarf entry want step
	shift 2
	selected "$name" || return 0
	expected "$exp" >"$TMP/expected" || { fail "$name" "no $exp"; return; }
	rm -rf "$xdg"
	for step in "0 hit, 1 miss" "1 hit, 0 miss" corrupt "0 hit, 1 miss, corrupt" "1 hit, 0 miss" no-cache; do
		want="DWARF image cache: $step"
		case $step in
		corrupt)
			entry=$(ls "$xdg"/perfconv/dwarf/* 2>/dev/null | head -1)
			[ -f "$entry" ] || { fail "$name" "no entry in $xdg/perfconv/dwarf after a hit" /dev/null; return; }
			# a byte in the middle of the image, as a disk or an interrupted copy might leave it
			printf 'X' | dd of="$entry" bs=1 seek=$(($(wc -c <"$entry") / 2)) conv=notrunc status=none
			continue ;;
		"0 hit, 1 miss, corrupt") want="DWARF image cache: 0 hit, 1 miss, corrupt entries ignored and written again" ;;
		no-cache) rm -rf "$xdg" ;;
		esac
		XDG_CACHE_HOME=$xdg run_pc "$d" -v $([ "$step" = no-cache ] && echo --no-cache) "$@" -o "$d/out.folded"
		if [ "$rc" != 0 ] || ! cmp -s "$TMP/expected" "$d/out.folded"; then
			fail "$name" "step '$step': exit status $rc or stacks that differ from $exp" "$d/err"
			return
		fi
		if [ "$step" = no-cache ]; then
			if grep -q "DWARF image cache" "$d/err" || [ -e "$xdg/perfconv/dwarf" ]; then
				fail "$name" "--no-cache used or wrote the cache" "$d/err"
				return
			fi
		elif ! grep -qF "$want (" "$d/err"; then
			fail "$name" "step '$step': stderr lacks '$want'" "$d/err"
			return
		fi
	done
	pass "$name (miss, hit, a damaged entry rewritten, hit; --no-cache writes nothing)"
}

# derive_all NAME KERNEL_REF JIT_REF ARGS...: stackcollapse's --all is --kernel plus --jit,
# and no fixture has a folded-all file.  The --all output is right when its lines are sorted
# bytewise, removing its _[j] marks gives the --kernel file, and removing its _[k] marks gives the
# --jit file (folded.txt for fixtures without perf-map frames, where --jit marks nothing).
derive_all() {
	local name=$1 kref=$2 jref=$3
	shift 3
	selected "$name" || return 0
	local d=$TMP/case
	if ! expected_as "$kref" "$@" >"$TMP/kref" || ! expected_as "$jref" "$@" >"$TMP/jref"; then
		fail "$name" "no $kref or $jref to derive --all from"
		return
	fi
	run_pc "$d" -q --all "$@" -o "$d/out.folded"
	if [ "$rc" = 0 ] && [ -f "$d/out.folded" ] &&
		python3 - "$d/out.folded" "$TMP/kref" "$TMP/jref" >"$d/diff" 2>&1 <<'EOF'; then
import difflib, re, sys
out, kref, jref = (open(p, encoding="latin-1").read().splitlines(True) for p in sys.argv[1:4])
def strip(lines, mark):
    pat = re.compile(r"_\[" + mark + r"\](?=;| \d+\n?$)")
    return sorted(pat.sub("", l) for l in lines)
bad = False
if out != sorted(out):
    print("--all output is not sorted bytewise")
    bad = True
for mark, ref, what in (("j", kref, "--kernel"), ("k", jref, "--jit")):
    got = strip(out, mark)
    if got != ref:
        print("--all output without its _[%s] marks differs from the %s reference:" % (mark, what))
        sys.stdout.writelines(list(difflib.unified_diff(ref, got, "expected", "perfconv"))[:12])
        bad = True
sys.exit(1 if bad else 0)
EOF
		pass "$name"
		return
	fi
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc" "$d/err"
	elif [ ! -f "$d/out.folded" ]; then
		fail "$name" "no output file" "$d/err"
	else
		fail "$name" "--all output does not match the --kernel and --jit references" "$d/diff"
	fi
}

# pid_default NAME TID_REF ARGS...: by default --tid and --pid name each sample's pid where the
# script prints "?".  The expected lines are perf + stackcollapse-perf.pl's --tid (TID_REF) with
# each "?" made the pid that `perf script -F pid,tid` prints for that tid, and for --pid those
# lines with the tid left out and merged.  For JIT fixtures, whose default names more frames than
# perf's (their golden files are --perf-compat's), the weight of each name is compared instead.
pid_default() {
	local name=$1 ref=$2 d=$TMP/case a base=() how=lines
	shift 2
	selected "$name" || return 0
	[ -f "$ref" ] || [ -f "$ref.xz" ] || return 0
	if ! command -v perf >/dev/null 2>&1; then
		skip "$name" "perf is not installed (scripts/install-deps.sh --bench)"
		return
	fi
	for a in "$@"; do
		if [ "$a" = --perf-compat ]; then how=weights; else base+=("$a"); fi
	done
	# perf's stacks as the default draws them (each run of unnamed frames of one library one frame)
	if folds_runs "${base[@]}"; then
		expected "$ref" | python3 tests/tools/fold_runs.py >"$TMP/tid-ref"
	else
		expected "$ref" >"$TMP/tid-ref"
	fi
	if ! perf script -f -i "$in" -F pid,tid >"$TMP/pidtid" 2>"$TMP/perf-err" || [ ! -s "$TMP/pidtid" ]; then
		fail "$name" "perf script -F pid,tid printed nothing for $in" "$TMP/perf-err"
		return
	fi
	run_pc "$d" -q "${base[@]}" --tid -o "$TMP/tid.folded"
	[ "$rc" = 0 ] && run_pc "$d" -q "${base[@]}" --pid -o "$TMP/pid.folded"
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc" "$d/err"
	elif python3 - "$TMP/pidtid" "$TMP/tid-ref" "$TMP/tid.folded" "$TMP/pid.folded" "$how" >"$d/diff" 2>&1 <<'EOF'; then
import collections, difflib, re, sys
pidtid, ref, got_tid, got_pid, how = sys.argv[1:6]
pids = collections.defaultdict(set)
for l in open(pidtid):
    m = re.match(r"\s*(-?\d+)/(-?\d+)\s*$", l)
    if m:
        pids[m.group(2)].add(m.group(1))
head = re.compile(r"^(.*?)-\?/(\d+)((?:;.*)? \d+)$")
want_tid, want_pid = [], collections.Counter()
for l in open(ref, encoding="latin-1").read().splitlines():
    m = head.match(l)
    if not m or len(pids[m.group(2)]) != 1:
        print("%s: no single pid in perf script for this line: %s" % (ref, l[:120]))
        sys.exit(1)
    comm, tid, rest = m.groups()
    pid = next(iter(pids[tid]))
    want_tid.append("%s-%s/%s%s" % (comm, pid, tid, rest))
    stack, n = rest.rsplit(" ", 1)
    want_pid["%s-%s%s" % (comm, pid, stack)] += int(n)
bytewise = lambda s: s.encode("latin-1")
want = {"--tid": sorted(want_tid, key=bytewise),
        "--pid": sorted(("%s %d" % kv for kv in want_pid.items()), key=bytewise)}
got = {"--tid": open(got_tid, encoding="latin-1").read().splitlines(),
       "--pid": open(got_pid, encoding="latin-1").read().splitlines()}
def weights(lines):
    w = collections.Counter()
    for l in lines:
        stack, n = l.rsplit(" ", 1)
        w[stack.split(";", 1)[0]] += int(n)
    return ["%s %d" % kv for kv in sorted(w.items())]
bad = False
for opt in ("--tid", "--pid"):
    a, b = want[opt], got[opt]
    if how == "weights":
        a, b = weights(a), weights(b)
    if a != b:
        print("perfconv %s (%s) differs from perf's with perf script's pids:" % (opt, how))
        sys.stdout.writelines(l[:160] + "\n" for l in list(difflib.unified_diff(a, b, "expected", "perfconv", lineterm=""))[:12])
        bad = True
sys.exit(bad)
EOF
		pass "$name"
	else
		fail "$name" "the names' pids differ from perf script's" "$d/diff"
	fi
}

# textcmp NAME EXPECTED SED_FILTER ARGS...: compare perfconv's stdout with EXPECTED, both filtered.
textcmp() {
	local name=$1 exp=$2 filter=$3
	shift 3
	selected "$name" || return 0
	local d=$TMP/case
	if ! expected "$exp" | sed -e "$filter" >"$TMP/expected" || [ ! -s "$TMP/expected" ]; then
		fail "$name" "no $exp"
		return
	fi
	run_pc "$d" "$@"
	sed -e "$filter" "$d/out" >"$d/filtered"
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc" "$d/err"
	elif ! cmp -s "$TMP/expected" "$d/filtered"; then
		diff -u "$TMP/expected" "$d/filtered" --label "$exp" --label perfconv >"$d/diff"
		fail "$name" "output differs from $exp" "$d/diff"
	else
		pass "$name"
	fi
}

# ---------------------------------------------------------------------------------------------------
# Each fixture with each option, byte for byte against perf 6.1 + stackcollapse-perf.pl.
for dir in "$FIX"/*/; do
	dir=${dir%/}
	# fx, exp, in (node-jitdump's expected files come from the injected perf.jit.data) and args
	fixture "$dir" || continue
	if why=$(missing_runtime "$dir"); then
		selected "$fx/" && skip "$fx/*" "$why"
		continue
	fi

	# dotnet-container: the runtime named its map for its pid inside the container (perf-1.map);
	# perf's expected files were made with it renamed for the host pid.  folded-nomap.txt is perf
	# without any map: perfconv must give the same when it is not given the map directory.
	if [ "$fx" = dotnet-container ]; then
		golden "$fx/folded-nomap" "$exp/folded-nomap.txt" -i "$in" --symfs "$ROOT" --kallsyms "$dir/kallsyms" --perf-compat
	fi
	golden "$fx/folded" "$exp/folded.txt" "${args[@]}"
	nfx=$((${nfx:-0} + 1))
	# VARIANTS=N (make asan: 3): the option variants below on one fixture in N only; their code is
	# the same for every input, and make check runs them on all
	if [ $(((nfx - 1) % ${VARIANTS:-1})) = 0 ]; then
		variants=1
	else
		variants=0
		selected "$fx/folded-" && skip "$fx/folded-{pid,tid,kernel,addrs,all}" "VARIANTS=${VARIANTS:-1}: on one fixture in ${VARIANTS:-1}"
	fi
	# --pid and --tid: perf's default text has no pid, so the script prints "?" for it; that is
	# --perf-compat's output, and the default names the pid (pid_default).  dwarf-zstd: its
	# --perf-compat names some libc frames otherwise than perf 6.1 does (__libc_start_main_impl
	# for __libc_start_main_alias_2) while the default gives perf's; pid_default checks its lines.
	compat=()
	jit_fixture "$fx" || compat=(--perf-compat)
	for opt in pid tid kernel addrs; do
		[ "$variants" = 1 ] || continue
		case $opt in
		pid | tid)
			if [ "$fx" = dwarf-zstd ]; then
				selected "$fx/folded-$opt" && xfail "$fx/folded-$opt" "--perf-compat's libc names differ from perf's here"
			else
				golden "$fx/folded-$opt" "$exp/folded-$opt.txt" "${args[@]}" "${compat[@]}" "--$opt"
			fi ;;
		*) golden "$fx/folded-$opt" "$exp/folded-$opt.txt" "${args[@]}" "--$opt" ;;
		esac
	done
	[ "$variants" = 1 ] && pid_default "$fx/pid-default" "$exp/folded-tid.txt" "${args[@]}"
	jref=$exp/folded.txt
	# --jit where perf made a file for it (dotnet-aspnet's is compressed, folded-jit.txt.xz)
	if [ -f "$exp/folded-jit.txt" ] || [ -f "$exp/folded-jit.txt.xz" ]; then
		golden "$fx/folded-jit" "$exp/folded-jit.txt" "${args[@]}" --jit
		jref=$exp/folded-jit.txt
	fi
	[ "$variants" = 1 ] && derive_all "$fx/folded-all" "$exp/folded-kernel.txt" "$jref" "${args[@]}"
	# one event of several (stackcollapse-perf.pl --event-filter=EVENT)
	for ev in task-clock page-faults; do
		[ -f "$exp/folded-$ev.txt" ] && golden "$fx/folded-$ev" "$exp/folded-$ev.txt" "${args[@]}" --event "$ev"
	done

	# fp-stripped-debuglink with no debug file at all: a symfs copy without the two .debug files.
	if [ -f "$exp/folded-nodebug.txt" ] && selected "$fx/folded-nodebug"; then
		nodebug=$TMP/symfs-nodebug
		symfs_without_debug "$nodebug"
		golden "$fx/folded-nodebug" "$exp/folded-nodebug.txt" -i "$in" --symfs "$nodebug" --kallsyms "$ROOT/kallsyms"
		rm -rf "$nodebug"
	fi

	textcmp "$fx/stats" "$exp/stats.txt" "" --stats -i "$in"
	textcmp "$fx/header" "$exp/header.txt" "/^# captured on/d" --header -i "$in"

	# DWARF: the summary says how many user stacks were unwound, and no stack was cut by bad input.
	if [ "$fx" = dwarf-callgraph ] && selected "$fx/dwarf-summary"; then
		d=$TMP/case
		run_pc "$d" "${args[@]}" -o "$d/out.folded"
		if [ "$rc" = 0 ] && grep -q "147 user stacks unwound with DWARF" "$d/err" && ! grep -q "cut short" "$d/err"; then
			pass "$fx/dwarf-summary"
		else
			fail "$fx/dwarf-summary" "exit status $rc; stderr must count 147 unwound stacks and no cut ones" "$d/err"
		fi
	fi
	# A stack longer than its copy is cut where the copy ends, and the summary counts it.
	if [ "$fx" = dwarf-recurse-pipe ] && selected "$fx/dwarf-cut"; then
		d=$TMP/case
		run_pc "$d" "${args[@]}" -o "$d/out.folded"
		if [ "$rc" = 0 ] && grep -q "161 user stacks cut short: 161 by the end of the copied stack" "$d/err"; then
			pass "$fx/dwarf-cut"
		else
			fail "$fx/dwarf-cut" "exit status $rc; stderr must count the 161 stacks cut by their 4 KB copies" "$d/err"
		fi
	fi

	# Distribution debug files have compressed sections (libc6-dbg's: zlib); perfconv inflates
	# them itself for the inline lookups.  dwarf-cpp's library names its inlined functions from
	# its debug file: compressed (objcopy), the stacks must be the same as perf's.
	if [ "$fx" = dwarf-cpp ] && { selected "$fx/compressed-debug" || selected "$fx/dwarf-image-cache"; } &&
		command -v objcopy >/dev/null; then
		zroot=$TMP/symfs-zdebug
		rm -rf "$zroot"
		cp -Rs "$(cd "$ROOT" && pwd)" "$zroot"
		zdbg=$(cd "$zroot" && ls usr/lib/debug/.build-id/c9/*.debug)
		rm -f "$zroot/$zdbg"
		if objcopy --compress-debug-sections=zlib "$ROOT/$zdbg" "$zroot/$zdbg" &&
			readelf -SW "$zroot/$zdbg" | grep -q '\.debug_info .* C '; then
			golden "$fx/compressed-debug" "$exp/folded.txt" -i "$in" --symfs "$zroot" --kallsyms "$ROOT/kallsyms"
			dwarf_image_cache "$fx/dwarf-image-cache" "$exp/folded.txt" -i "$in" --symfs "$zroot" --kallsyms "$ROOT/kallsyms"
		else
			fail "$fx/compressed-debug" "objcopy could not compress $zdbg" /dev/null
		fi
		rm -rf "$zroot"
	fi

	# The unwound-stack cache turns itself off where it does not pay (few repeated stacks) and
	# back on to look again: windows of 4 lookups (off for 128 stacks) cross both ways several
	# times in these files, and the stacks must be the same as perf's.
	if [ "${fx#dwarf-}" != "$fx" ]; then
		export PERFCONV_UC_WINDOW=4
		golden "$fx/unwind-cache-windows" "$exp/folded.txt" "${args[@]}"
		unset PERFCONV_UC_WINDOW
	fi

	# A file is read on one thread and processed on another; on one thread (PERFCONV_PIPELINE=0)
	# every output must be the same: the stacks with all their detail, and the time-ordered stream.
	if selected "$fx/one-thread"; then
		d=$TMP/case
		rc2=0
		# the default names (more than --perf-compat's), so that JIT lookups run on both paths
		best=()
		for a in "${args[@]}"; do [ "$a" = --perf-compat ] || best+=("$a"); done
		run_pc "$d" -q "${best[@]}" --tid --kernel --addrs -o "$TMP/two.folded"; [ "$rc" = 0 ] || rc2=$rc
		run_pc "$d" -q "${best[@]}" -f perf-script -o "$TMP/two.txt"; [ "$rc" = 0 ] || rc2=$rc
		PERFCONV_PIPELINE=0 run_pc "$d" -q "${best[@]}" --tid --kernel --addrs -o "$TMP/one.folded"; [ "$rc" = 0 ] || rc2=$rc
		PERFCONV_PIPELINE=0 run_pc "$d" -q "${best[@]}" -f perf-script -o "$TMP/one.txt"; [ "$rc" = 0 ] || rc2=$rc
		if [ "$rc2" = 0 ] && [ -s "$TMP/one.folded" ] && cmp -s "$TMP/one.folded" "$TMP/two.folded" &&
			cmp -s "$TMP/one.txt" "$TMP/two.txt"; then
			pass "$fx/one-thread"
		else
			{ diff -u "$TMP/one.folded" "$TMP/two.folded"; diff -u "$TMP/one.txt" "$TMP/two.txt"; } >"$d/diff" 2>&1
			fail "$fx/one-thread" "exit status $rc2, or one thread and two give different outputs" "$d/diff"
		fi
	fi

	# Pipe mode through a real, unseekable pipe, as in `perf record -o - ... | perfconv -i -`.
	if [ -f "$dir/pipe.data" ] && selected "$fx/stdin"; then
		d=$TMP/case
		rm -rf "$d"
		mkdir -p "$d"
		expected_as "$exp/folded.txt" "${args[@]}" >"$TMP/expected"
		cat "$in" | "$PERFCONV" -q -i - "${args[@]:2}" -o "$d/out.folded" >"$d/out" 2>"$d/err"
		rc=$?
		if [ "$rc" != 0 ] || [ ! -f "$d/out.folded" ]; then
			fail "$fx/stdin" "exit status $rc, output $([ -f "$d/out.folded" ] && echo written || echo missing)" "$d/err"
		elif cmp -s "$TMP/expected" "$d/out.folded"; then
			pass "$fx/stdin"
		else
			diff -u "$TMP/expected" "$d/out.folded" --label "$exp/folded.txt" --label perfconv >"$d/diff"
			fail "$fx/stdin" "output differs from $exp/folded.txt" "$d/diff"
		fi
	fi

	# node-jitdump's perf.data before `perf inject --jit` has no expected file, but must convert.
	if [ "$in" != "$dir/perf.data" ] && [ -f "$dir/perf.data" ] && selected "$fx/raw-perf.data"; then
		d=$TMP/case
		run_pc "$d" -q -i "$dir/perf.data" "${S[@]}" -o "$d/out.folded"
		if [ "$rc" = 0 ] && [ -s "$d/out.folded" ]; then
			pass "$fx/raw-perf.data"
		else
			fail "$fx/raw-perf.data" "exit status $rc, output $([ -s "$d/out.folded" ] && echo written || echo missing)" "$d/err"
		fi
	fi
done

# ---------------------------------------------------------------------------------------------------
# A newer perf writes longer perf_event_attrs: the same recordings with 72 more attr bytes (file mode
# and pipe mode, tests/tools/grow-attrs.py) must give the same folded stacks.
for fx in fp-callgraph multi-event pipe-mode; do
	selected "attr-size/$fx" || continue
	in=$FIX/$fx/perf.data
	[ -f "$FIX/$fx/pipe.data" ] && in=$FIX/$fx/pipe.data
	if ! python3 tests/tools/grow-attrs.py "$in" "$TMP/grown.data" 72 2>"$TMP/grow.err"; then
		fail "attr-size/$fx" "tests/tools/grow-attrs.py failed" "$TMP/grow.err"
		continue
	fi
	golden "attr-size/$fx" "$FIX/$fx/expected/folded.txt" -i "$TMP/grown.data" "${S[@]}"
done
