#!/usr/bin/env bash
# tests/run.sh - perfconv's test driver: unit tests, golden tests on every fixture, CLI tests, the
# man page test and the truncation test (tests/truncate.sh); the README's recipes and the links of the
# documentation in tests/readme.sh.  `make check` and `make asan` run it.
#
#   PERFCONV=path/to/perfconv   binary under test (default ./perfconv)
#   UNIT_DIR=build/tests        run every executable there as a unit test (make check sets it)
#   FUZZ_DIR=build/fuzz         the fuzz targets tests/fuzz.sh replays tests/regress/ through
#   FIXTURES=dir                fixture tree (default fixtures/ beside this directory)
#   TRUNCATE=0                  skip the truncation test; TRUNC_* variables tune it (tests/truncate.sh)
#   DOTNET_LIVE=0               skip the .NET end-to-end tests (dotnet-live.sh, aspnet-live.sh, dotnet-dwarf.sh,
#                               dotnet-enable.sh, diff-live.sh)
#   LIVE=0                      skip every suite that records with perf or runs .NET apps (also offcpu.sh)
#   CONSUMERS=0                 skip handing outputs to the real consumers (PerfView, Chromium, go tool pprof, protoc)
#   VARIANTS=N                  the per-option golden variants (--pid --tid --kernel --addrs --all) on one
#                               fixture in N (default 1: all)
#   TEST_JOBS=N                 sub-suites run at once beside the cases here (default: one more than the
#                               number of CPUs, which fills the time the suites wait for processes);
#                               the live ones run first, alone
#   tests/run.sh [WORD...]      run only the cases whose name contains one of the words
#
# One line per case: "ok NAME", "FAIL NAME: why" (with the first lines of a diff or of stderr),
# "skip NAME: why", or "xfail NAME: why" for a known gap of the converter (counted as skipped).
# The last line is "N passed, N failed, N skipped"; the exit status is 1 when anything failed.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" test
MAN=man/perfconv.1
# the words to select cases by are the arguments (the sub-suites get them as FILTERS)
filters=("$@")

# ---------------------------------------------------------------------------------------------------
# Sub-suites in their own scripts print lines in the same format; they are counted here for the one
# summary.  The live suites record workloads whose waits have known lengths (off-CPU time, .NET
# apps under load), so they run first and alone.  The others then run TEST_JOBS at a time (default:
# one more than the number of CPUs) beside the cases of this script, each into a file; collect_suites prints them
# in order and counts them.  TEST_JOBS=1 runs them one after the other.
count_line() {
	case $1 in
	"ok "*) npass=$((npass + 1)) ;;
	"FAIL "*) nfail=$((nfail + 1)) ;;
	"skip "* | "xfail "*) nskip=$((nskip + 1)) ;;
	esac
}
# suite SCRIPT: run one now, printing and counting its lines as they come
suite() {
	local script=$1 line t0=$SECONDS
	while IFS= read -r line; do
		count_line "$line"
		printf '%s\n' "$line"
	done < <(FILTERS="${filters[*]}" "$top/tests/$script" || echo "FAIL  $script: tests/$script exited with status $?")
	echo "# $script took $((SECONDS - t0)) s"
}
# start_pool SCRIPT...: run them in the background, TEST_JOBS at a time, each one's lines into a file
mkdir -p "$TMP/suites"
pool=()
start_pool() {
	pool=("$@")
	(
		trap 'kill $(jobs -p) 2>/dev/null' TERM
		for script in "$@"; do
			# the cases of this script take one lane while they run
			while lanes=$TEST_JOBS && { [ -e "$TMP/suites/cases-done" ] || [ "$lanes" -eq 1 ] || lanes=$((lanes - 1)); } &&
				[ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do
				wait -n
			done
			(
				t0=$SECONDS
				FILTERS="${filters[*]}" "$top/tests/$script" || echo "FAIL  $script: tests/$script exited with status $?"
				echo "# $script took $((SECONDS - t0)) s"
			) >"$TMP/suites/$script.out" </dev/null &
		done
		wait
	) &
	pool_pid=$!
}
# collect_suites: wait for the pool, then print and count its lines in the order it was given
collect_suites() {
	local script line
	[ "${#pool[@]}" -gt 0 ] || return 0
	wait "$pool_pid"
	for script in "${pool[@]}"; do
		while IFS= read -r line; do
			count_line "$line"
			printf '%s\n' "$line"
		done <"$TMP/suites/$script.out"
	done
}
trap '[ -n "${pool_pid-}" ] && kill "$pool_pid" 2>/dev/null; rm -rf "$TMP"' EXIT
TEST_JOBS=${TEST_JOBS:-$(($(nproc 2>/dev/null || echo 1) + 1))}
[ "$TEST_JOBS" -ge 1 ] 2>/dev/null || TEST_JOBS=1

if [ "${LIVE:-1}" != 0 ]; then
	# off-CPU and thread time on recordings made here (skipped where perf cannot record sched_switch)
	suite offcpu.sh
	# .NET end to end on this machine: build, record and convert a .NET app, and an ASP.NET Core
	# app under load, on the host and in a container
	if [ "${DOTNET_LIVE:-1}" != 0 ]; then
		suite dotnet-live.sh
		suite aspnet-live.sh
		suite dotnet-dwarf.sh
		# --enable-perfmap on a running app, and its failure messages
		suite dotnet-enable.sh
		# --diff on two versions of an ASP.NET Core app, one endpoint's work changed
		suite diff-live.sh
	fi
fi
# the slowest first, so that the lanes end together.  Truncation: every fixture cut at record
# boundaries, one byte either side and at random places (TRUNCATE=0 leaves it out).
bg=()
for sub in truncate.sh perfview.sh perf-script.sh svg.sh batch.sh pack.sh endian.sh speedscope.sh fuzz.sh \
	perf-identity.sh foreign.sh arm64.sh pprof.sh diff.sh jit.sh debuginfod.sh symsrv.sh r2r.sh r2rcache.sh r2r-truth.sh dotnet-baseline.sh events.sh layout.sh readme.sh; do
	[ "$sub" = truncate.sh ] && [ "${TRUNCATE:-1}" = 0 ] && continue
	bg+=("$sub")
done
start_pool "${bg[@]}"
cases_t0=$SECONDS

# outcome NAME WHY XFAIL_WHY DETAIL_FILE: report a mismatch.  With XFAIL_WHY set the mismatch is an
# expected failure, as long as the conversion itself exited 0 and wrote something.
mismatch() {
	local name=$1 why=$2 xwhy=$3 detail=$4 out=$5
	if [ -n "$xwhy" ]; then
		if [ "$rc" = 0 ] && [ -s "$out" ]; then
			xfail "$name" "$xwhy"
		else
			fail "$name" "exit status $rc, output $([ -s "$out" ] && echo written || echo missing) (it must convert even before: $xwhy)" "$TMP/case/err"
		fi
	elif [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc" "$TMP/case/err"
	elif [ ! -f "$out" ]; then
		fail "$name" "no output file" "$TMP/case/err"
	else
		fail "$name" "$why" "$detail"
	fi
}

# golden NAME EXPECTED XFAIL_WHY ARGS...: convert to a .folded file and compare it with EXPECTED.
# A match is ok even when XFAIL_WHY is set (the gap was closed; drop the xfail).
golden() {
	local name=$1 exp=$2 xwhy=$3
	shift 3
	selected "$name" || return 0
	local d=$TMP/case
	if ! expected "$exp" >"$TMP/expected"; then
		skip "$name" "no $exp"
		return
	fi
	run_pc "$d" -q "$@" -o "$d/out.folded"
	if [ "$rc" = 0 ] && [ -f "$d/out.folded" ] && cmp -s "$TMP/expected" "$d/out.folded"; then
		pass "$name"
		return
	fi
	[ -f "$d/out.folded" ] && diff -u "$TMP/expected" "$d/out.folded" --label "$exp" --label perfconv >"$d/diff"
	mismatch "$name" "output differs from $exp" "$xwhy" "$d/diff" "$d/out.folded"
}

# dwarf_image_cache NAME EXPECTED ARGS...: a conversion whose inline names come from compressed
# DWARF keeps the inflated image in the symbol cache (XDG_CACHE_HOME/perfconv/dwarf): the first
# conversion misses and writes it, the second reads it, an entry with a changed byte is
# reported, removed and written again, --no-cache writes nothing; the stacks are EXPECTED's
# every time.
dwarf_image_cache() {
	local name=$1 exp=$2 d=$TMP/case xdg=$TMP/xdg-dwarf entry want step
	shift 2
	selected "$name" || return 0
	expected "$exp" >"$TMP/expected" || { skip "$name" "no $exp"; return; }
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

# derive_all NAME XFAIL_WHY KERNEL_REF JIT_REF ARGS...: stackcollapse's --all is --kernel plus --jit,
# and no fixture has a folded-all file.  The --all output is right when its lines are sorted
# bytewise, removing its _[j] marks gives the --kernel file, and removing its _[k] marks gives the
# --jit file (folded.txt for fixtures without perf-map frames, where --jit marks nothing).
derive_all() {
	local name=$1 xwhy=$2 kref=$3 jref=$4
	shift 4
	selected "$name" || return 0
	local d=$TMP/case
	if ! expected "$kref" >"$TMP/kref" || ! expected "$jref" >"$TMP/jref"; then
		skip "$name" "no reference to derive --all from"
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
	mismatch "$name" "--all output does not match the --kernel and --jit references" "$xwhy" "$d/diff" "$d/out.folded"
}

# textcmp NAME EXPECTED SED_FILTER ARGS...: compare perfconv's stdout with EXPECTED, both filtered.
textcmp() {
	local name=$1 exp=$2 filter=$3
	shift 3
	selected "$name" || return 0
	local d=$TMP/case
	if ! expected "$exp" | sed -e "$filter" >"$TMP/expected" || [ ! -s "$TMP/expected" ]; then
		skip "$name" "no $exp"
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
# Unit tests: every executable in UNIT_DIR; its output is shown when it fails.
if [ -n "${UNIT_DIR-}" ] && [ -d "$UNIT_DIR" ]; then
	for t in "$UNIT_DIR"/*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		name=unit/$(basename "$t")
		selected "$name" || continue
		"$t" >"$TMP/unit.log" 2>&1 </dev/null
		rc=$?
		if [ "$rc" = 0 ]; then
			pass "$name"
		else
			fail "$name" "exit status $rc" "$TMP/unit.log"
		fi
	done
fi

# ---------------------------------------------------------------------------------------------------
# Without a binary there is nothing else to run: say so once instead of failing every case.
if [ ! -f "$PERFCONV" ] || [ ! -x "$PERFCONV" ]; then
	fail "binary" "'$PERFCONV' is not an executable file (build it with make, or set PERFCONV)"
	echo "$npass passed, $nfail failed, $nskip skipped"
	exit 1
fi

help_text=$("$PERFCONV" --help 2>/dev/null </dev/null) || help_text=
has_option() { grep -qE -- "--$1([^a-z0-9-]|\$)" <<<"$help_text"; }

# ---------------------------------------------------------------------------------------------------
# Golden tests: each fixture with each option, byte for byte against perf 6.1 + stackcollapse-perf.pl.
S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms")
MAP_WHY="JIT frames need the perf map and there is no --map-dir option yet"
CONTAINER_WHY="the map is perf-1.map (pid in the container), the samples have the host pid: needs container pid mapping"

for dir in "$FIX"/*/; do
	dir=${dir%/}
	# fx, exp, in (node-jitdump's expected files come from the injected perf.jit.data) and args
	fixture "$dir" || continue
	if why=$(missing_runtime "$dir"); then
		selected "$fx/" && skip "$fx/*" "$why"
		continue
	fi

	xwhy=
	# perf read /tmp/perf-PID.map; perfconv reads the fixture's copy through --map-dir, the last
	# two words of args.  A perfconv without the option cannot read it at all.
	if [ -d "$dir/maps" ] && ! has_option map-dir; then
		args=("${args[@]:0:${#args[@]}-2}")
		xwhy=$MAP_WHY
	fi

	# dotnet-container: the runtime named its map for its pid inside the container (perf-1.map);
	# perf's expected files were made with it renamed for the host pid.  folded-nomap.txt is perf
	# without any map: perfconv must give the same when it is not given the map directory.
	if [ "$fx" = dotnet-container ]; then
		[ -z "$xwhy" ] && xwhy=$CONTAINER_WHY
		golden "$fx/folded-nomap" "$exp/folded-nomap.txt" "" -i "$in" --symfs "$ROOT" --kallsyms "$dir/kallsyms" --perf-compat
	fi
	golden "$fx/folded" "$exp/folded.txt" "$xwhy" "${args[@]}"
	nfx=$((${nfx:-0} + 1))
	# VARIANTS=N (make asan: 3): the option variants below on one fixture in N only; their code is
	# the same for every input, and make check runs them on all
	if [ $(((nfx - 1) % ${VARIANTS:-1})) = 0 ]; then
		variants=1
	else
		variants=0
		selected "$fx/folded-" && skip "$fx/folded-{pid,tid,kernel,addrs,all}" "VARIANTS=${VARIANTS:-1}: on one fixture in ${VARIANTS:-1}"
	fi
	for opt in pid tid kernel addrs; do
		[ "$variants" = 1 ] || continue
		golden "$fx/folded-$opt" "$exp/folded-$opt.txt" "$xwhy" "${args[@]}" "--$opt"
	done
	jref=$exp/folded.txt
	if [ -f "$exp/folded-jit.txt" ]; then
		golden "$fx/folded-jit" "$exp/folded-jit.txt" "$xwhy" "${args[@]}" --jit
		jref=$exp/folded-jit.txt
	fi
	[ "$variants" = 1 ] && derive_all "$fx/folded-all" "$xwhy" "$exp/folded-kernel.txt" "$jref" "${args[@]}"
	# one event of several (stackcollapse-perf.pl --event-filter=EVENT)
	for ev in task-clock page-faults; do
		[ -f "$exp/folded-$ev.txt" ] && golden "$fx/folded-$ev" "$exp/folded-$ev.txt" "$xwhy" "${args[@]}" --event "$ev"
	done

	# fp-stripped-debuglink with no debug file at all: a symfs copy without the two .debug files.
	if [ -f "$exp/folded-nodebug.txt" ] && selected "$fx/folded-nodebug"; then
		nodebug=$TMP/symfs-nodebug
		symfs_without_debug "$nodebug"
		golden "$fx/folded-nodebug" "$exp/folded-nodebug.txt" "" -i "$in" --symfs "$nodebug" --kallsyms "$ROOT/kallsyms"
		rm -rf "$nodebug"
	fi

	textcmp "$fx/stats" "$exp/stats.txt" "" --stats -i "$in"
	textcmp "$fx/header" "$exp/header.txt" "/^# captured on/d" --header -i "$in"

	# A recording without a kernel build-id, from another kernel release (pipe-foreign), converted
	# without --kallsyms on a machine whose kernel is DIR/running (PERFCONV_RUNNING_KERNEL: its
	# kallsyms, notes and osrelease).  perf 6.1 names the kernel frames from the running kernel's
	# kallsyms (wrong ones, for another machine's recording) unless --symfs is given; --perf-compat
	# does the same, the default leaves them unnamed and says why and how to get names.  Only the
	# kernel lines are compared where there is no --symfs (the user frames are this machine's).
	if [ -d "$dir/running" ]; then
		klines() { grep -F '([kernel.kallsyms])' "$1"; }
		running_case() {	# NAME EXPECTED WHOLE(1: the whole output) STDERR-WORDS ARGS...
			local name=$1 e=$2 whole=$3 words=$4 d=$TMP/case w
			shift 4
			selected "$fx/$name" || return 0
			expected "$e" >"$TMP/rexp"
			rm -rf "$d"
			mkdir -p "$d"
			PERFCONV_RUNNING_KERNEL=$(cd "$dir/running" && pwd) "$PERFCONV" -i "$in" -f perf-script -o "$d/out" "$@" 2>"$d/err" </dev/null
			rc=$?
			if [ "$whole" = 1 ]; then
				cp "$TMP/rexp" "$d/want"
				cp "$d/out" "$d/got" 2>/dev/null
			else
				klines "$TMP/rexp" >"$d/want"
				klines "$d/out" >"$d/got" 2>/dev/null
			fi
			if [ "$rc" != 0 ]; then
				fail "$fx/$name" "exit status $rc" "$d/err"
				return
			fi
			for w in $words; do
				if ! grep -q -- "$w" "$d/err"; then
					fail "$fx/$name" "stderr does not say '$w'" "$d/err"
					return
				fi
			done
			if [ -z "$words" ] && grep -q "kernel frames left unnamed" "$d/err"; then
				fail "$fx/$name" "stderr says the kernel frames are unnamed" "$d/err"
			elif [ ! -s "$d/want" ] || ! cmp -s "$d/want" "$d/got"; then
				diff -u "$d/want" "$d/got" --label "$e" --label perfconv >"$d/diff"
				fail "$fx/$name" "kernel frames differ from $e" "$d/diff"
			else
				pass "$fx/$name"
			fi
		}
		running_case running-compat "$exp/script-default.txt" 0 "" --perf-compat
		running_case running-default "$exp/script-default-unnamed.txt" 0 \
			"left.unnamed another.kernel.release --kallsyms -f.pack"
		running_case running-compat-symfs "$exp/script-default-unnamed.txt" 1 "--symfs" \
			--perf-compat --symfs "$ROOT"
		running_case running-default-symfs "$exp/script-default-unnamed.txt" 1 "another.kernel.release" \
			--symfs "$ROOT"
		for v in "" -kernel-addrs; do	# folded, as perf script | stackcollapse-perf.pl
			PERFCONV_RUNNING_KERNEL=$(cd "$dir/running" && pwd) golden "$fx/folded-unnamed$v" \
				"$exp/folded-unnamed$v.txt" "" -i "$in" --symfs "$ROOT" ${v:+--kernel --addrs}
		done
		# the same release as the recording's: the default trusts it and names the frames
		if selected "$fx/running-same-release"; then
			mkdir -p "$TMP/samerel"
			cp "$dir/running/kallsyms" "$dir/running/notes" "$TMP/samerel/"
			"$PERFCONV" -i "$in" --header 2>/dev/null | sed -n 's/^# os release : //p' >"$TMP/samerel/osrelease"
			d=$TMP/case
			rm -rf "$d"
			mkdir -p "$d"
			PERFCONV_RUNNING_KERNEL=$TMP/samerel "$PERFCONV" -i "$in" -f perf-script -o "$d/out" 2>"$d/err" </dev/null
			klines "$d/out" >"$d/got"
			expected "$exp/script-default.txt" >"$TMP/rexp"
			klines "$TMP/rexp" >"$d/want"
			if [ -s "$TMP/samerel/osrelease" ] && cmp -s "$d/want" "$d/got"; then
				pass "$fx/running-same-release"
			else
				diff -u "$d/want" "$d/got" >"$d/diff"
				fail "$fx/running-same-release" "a running kernel of the recording's release must name the frames" "$d/diff"
			fi
		fi
	fi

	# A recording with a kernel build-id (fp-callgraph's 6ecd6ec2...), without --kallsyms: the running
	# kernel's symbols name its frames when its build-id (/sys/kernel/notes) is the recorded one,
	# whatever its release, and in neither mode when it is another (perf: dso__find_kallsyms).
	if [ "$fx" = fp-callgraph ] && selected "$fx/kernel-build-id"; then
		kid=6ecd6ec21ec69416e50a8aa6737e500901ddb47a
		for which in same other; do
			rk=$TMP/rk-$which
			mkdir -p "$rk"
			cp "$ROOT/kallsyms" "$rk/kallsyms"
			id=$kid
			[ "$which" = other ] && id=7ecd6ec21ec69416e50a8aa6737e500901ddb47a
			python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<III", 4, 20, 3) + b"GNU\0" + bytes.fromhex(sys.argv[1]))' "$id" >"$rk/notes"
			if [ "$which" = same ]; then
				echo "not-the-recorded-release" >"$rk/osrelease"
			else
				"$PERFCONV" -i "$in" --header 2>/dev/null | sed -n 's/^# os release : //p' >"$rk/osrelease"
			fi
		done
		expected "$exp/script-default.txt" | grep -F '([kernel.kallsyms])' >"$TMP/kwant"
		sed 's/^\(\t *[0-9a-f]*\) .*/\1 [unknown] ([kernel.kallsyms])/' "$TMP/kwant" >"$TMP/kunnamed"
		bad=
		for mode in "" --perf-compat; do
			for which in same other; do
				PERFCONV_RUNNING_KERNEL=$TMP/rk-$which "$PERFCONV" -i "$in" $mode -f perf-script -o "$TMP/kout" \
					2>"$TMP/kerr" </dev/null
				grep -F '([kernel.kallsyms])' "$TMP/kout" >"$TMP/kgot"
				want=$TMP/kwant
				[ "$which" = other ] && want=$TMP/kunnamed
				if [ ! -s "$want" ] || ! cmp -s "$want" "$TMP/kgot"; then
					bad="${bad:+$bad; }${mode:-default}, $which build-id: kernel lines differ"
				elif [ "$which" = other ] && ! grep -q "kernel build-id is not the running kernel's" "$TMP/kerr"; then
					bad="${bad:+$bad; }${mode:-default}, other build-id: no warning that says so"
				fi
			done
		done
		if [ -z "$bad" ]; then
			pass "$fx/kernel-build-id"
		else
			fail "$fx/kernel-build-id" "$bad" "$TMP/kerr"
		fi
	fi

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
			golden "$fx/compressed-debug" "$exp/folded.txt" "" -i "$in" --symfs "$zroot" --kallsyms "$ROOT/kallsyms"
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
		golden "$fx/unwind-cache-windows" "$exp/folded.txt" "" "${args[@]}"
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
		expected "$exp/folded.txt" >"$TMP/expected"
		cat "$in" | "$PERFCONV" -q -i - "${args[@]:2}" -o "$d/out.folded" >"$d/out" 2>"$d/err"
		rc=$?
		if [ "$rc" = 0 ] && cmp -s "$TMP/expected" "$d/out.folded"; then
			pass "$fx/stdin"
		else
			[ -f "$d/out.folded" ] && diff -u "$TMP/expected" "$d/out.folded" --label "$exp/folded.txt" --label perfconv >"$d/diff"
			mismatch "$fx/stdin" "output differs from $exp/folded.txt" "" "$d/diff" "$d/out.folded"
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
	golden "attr-size/$fx" "$FIX/$fx/expected/folded.txt" "" -i "$TMP/grown.data" "${S[@]}"
done

# ---------------------------------------------------------------------------------------------------
# Kernel symbols are read on a second thread while records are decoded.  The output must not depend
# on when that thread finishes: with it held back (PERFCONV_PRELOAD_DELAY_MS) and with a kallsyms cut
# short, so that sampled kernel addresses fall outside its range, the result must equal the one
# without the preload (PERFCONV_PRELOAD=0); the cut file must make perfconv convert a second time.
if selected preload; then
	grep -v $'\t' "$ROOT/kallsyms" | head -n "$(($(grep -vc $'\t' "$ROOT/kallsyms") / 2))" >"$TMP/kallsyms-cut"
	grep $'\t' "$ROOT/kallsyms" >>"$TMP/kallsyms-cut"
	retried=0
	for fx in cpu-systemwide tracepoint-systemwide fp-callgraph; do
		for ks in "$ROOT/kallsyms" "$TMP/kallsyms-cut"; do
			name=preload/$fx/$(basename "$ks")
			d=$TMP/case
			PERFCONV_PRELOAD=0 run_pc "$d" -i "$FIX/$fx/perf.data" --symfs "$ROOT" --kallsyms "$ks" --kernel --addrs -o - -q
			cp "$d/out" "$TMP/inline.folded"
			PERFCONV_PRELOAD_DELAY_MS=300 run_pc "$d" -v -i "$FIX/$fx/perf.data" --symfs "$ROOT" --kallsyms "$ks" \
				--kernel --addrs -o "$TMP/preload.folded"
			grep -q 'converting again' "$d/err" && retried=$((retried + 1))
			if [ "$rc" = 0 ] && [ -s "$TMP/inline.folded" ] && cmp -s "$TMP/inline.folded" "$TMP/preload.folded"; then
				pass "$name"
			else
				diff -u "$TMP/inline.folded" "$TMP/preload.folded" --label inline --label preload >"$d/diff" 2>&1
				fail "$name" "exit status $rc, or the preloaded kernel symbols changed the output" "$d/diff"
			fi
		done
	done
	# every format: pprof writes the kernel's range, which the kallsyms table stretches
	for fx in cpu-systemwide fp-callgraph; do
		bad=
		for f in $("$PERFCONV" --help | sed -n 's/^Formats: *//p'); do
			d=$TMP/case
			PERFCONV_PRELOAD=0 run_pc "$d" -q -i "$FIX/$fx/perf.data" "${S[@]}" --kernel -f "$f" -o "$TMP/out.$f"
			[ "$rc" = 0 ] && mv "$TMP/out.$f" "$TMP/inline.$f" || bad="${bad:-$f: exit status $rc}"
			PERFCONV_PRELOAD_DELAY_MS=300 run_pc "$d" -q -i "$FIX/$fx/perf.data" "${S[@]}" --kernel -f "$f" -o "$TMP/out.$f"
			[ "$rc" = 0 ] && cmp -s "$TMP/inline.$f" "$TMP/out.$f" || bad="${bad:-$f: exit status $rc, or the output differs with the kernel symbols read late}"
		done
		if [ -z "$bad" ]; then pass "preload/formats/$fx"; else fail "preload/formats/$fx" "$bad" "$d/err"; fi
	done
	if [ "$retried" -gt 0 ]; then
		pass preload/retried
	else
		fail preload/retried "no conversion with the cut kallsyms took the second pass: the test does not reach it"
	fi
fi

# ---------------------------------------------------------------------------------------------------
# CLI tests: exit codes (0 success, 1 conversion failed, 2 usage), messages and streams.
FP=$FIX/fp-callgraph
C=$TMP/case
if selected cli/help; then
	run_pc "$C" --help
	if [ "$rc" != 0 ]; then
		fail cli/help "exit status $rc, expected 0" "$C/err"
	elif ! grep -q -- '--input' "$C/out"; then
		fail cli/help "--help does not list --input on stdout" "$C/out"
	else
		pass cli/help
	fi
fi
if selected cli/help-short; then
	run_pc "$C" -h
	if [ "$rc" = 0 ] && [ "$(cat "$C/out")" = "$help_text" ]; then
		pass cli/help-short
	else
		fail cli/help-short "exit status $rc, or -h prints something else than --help" "$C/err"
	fi
fi
for v in --version -V; do
	selected "cli/version$v" || continue
	run_pc "$C" $v
	if [ "$rc" = 0 ] && grep -qi 'perfconv' "$C/out"; then
		pass "cli/version$v"
	else
		fail "cli/version$v" "exit status $rc, expected 0 and a version line naming perfconv on stdout" "$C/err"
	fi
done
if selected cli/unknown-option; then
	run_pc "$C" --no-such-option
	if [ "$rc" = 2 ] && grep -q 'no-such-option' "$C/err" && [ ! -s "$C/out" ]; then
		pass cli/unknown-option
	else
		fail cli/unknown-option "exit status $rc, expected 2, the option named on stderr and nothing on stdout" "$C/err"
	fi
fi
if selected cli/bad-format; then
	run_pc "$C" -q -i "$FP/perf.data" -f no-such-format -o -
	if [ "$rc" = 2 ] && grep -q 'no-such-format' "$C/err"; then
		pass cli/bad-format
	else
		fail cli/bad-format "exit status $rc, expected 2 with the format named on stderr" "$C/err"
	fi
fi
if selected cli/missing-input; then
	run_pc "$C" -q -i "$TMP/no-such-file.data" -o "$C/out.folded"
	if [ "$rc" != 1 ]; then
		fail cli/missing-input "exit status $rc, expected 1" "$C/err"
	elif ! grep -q 'no-such-file\.data' "$C/err"; then
		fail cli/missing-input "stderr does not name the file (errors must survive -q)" "$C/err"
	elif [ -e "$C/out.folded" ]; then
		fail cli/missing-input "an output file was left behind"
	else
		pass cli/missing-input
	fi
fi
if selected cli/bad-output; then
	run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -o "$TMP/no-such-dir/out.folded"
	if [ "$rc" = 1 ] && grep -q 'no-such-dir/out\.folded' "$C/err"; then
		pass cli/bad-output
	else
		fail cli/bad-output "exit status $rc, expected 1 with the output path named on stderr" "$C/err"
	fi
fi
if selected cli/stdout; then
	run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -f folded -o -
	expected "$FP/expected/folded.txt" >"$TMP/expected"
	if [ "$rc" = 0 ] && cmp -s "$TMP/expected" "$C/out"; then
		pass cli/stdout
	else
		{ diff -u "$TMP/expected" "$C/out" --label expected --label stdout; cat "$C/err"; } >"$C/diff"
		fail cli/stdout "exit status $rc; -o - must write the folded stacks to stdout" "$C/diff"
	fi
fi
if selected cli/output-names; then
	# A name means what it says: .gz is gzip in every format (the same bytes inside), a name
	# whose ending selects no format is a usage error listing them, and trace.zip refuses .gz.
	bad=
	expected "$FP/expected/folded.txt" >"$TMP/expected"
	rm -f "$C/o".*
	for name in o.folded.gz o.stacks.gz; do
		run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -o "$C/$name"
		[ "$rc" = 0 ] && gzip -t "$C/$name" 2>/dev/null && gzip -dc "$C/$name" | cmp -s - "$TMP/expected" ||
			bad="${bad:-$name: exit $rc, not the folded stacks gzip-compressed}"
	done
	run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -f folded -o "$C/o.gz"
	[ "$rc" = 0 ] && gzip -dc "$C/o.gz" 2>/dev/null | cmp -s - "$TMP/expected" || bad="${bad:--f folded -o o.gz: exit $rc, not gzip}"
	run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -o "$C/o.svg.gz"
	[ "$rc" = 0 ] && gzip -dc "$C/o.svg.gz" 2>/dev/null | grep -q '<svg' || bad="${bad:-o.svg.gz: exit $rc, not a gzip-compressed SVG}"
	for name in o.txt o.gz o.json noending; do
		run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -o "$C/$name"
		[ "$rc" = 2 ] && [ ! -e "$C/$name" ] && grep -q "'$C/$name': the name does not tell the format" "$C/err" &&
			grep -q '^  speedscope *\.speedscope\.json$' "$C/err" && grep -q '^  folded *\.folded ' "$C/err" ||
			bad="${bad:-$name: exit $rc, expected 2, no output and the list of formats and endings}"
	done
	run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -o "$C/o.trace.zip.gz"
	[ "$rc" = 2 ] && [ ! -e "$C/o.trace.zip.gz" ] && grep -q 'compressed already' "$C/err" ||
		bad="${bad:-o.trace.zip.gz: exit $rc, expected 2}"
	mkfifo "$TMP/fifo" && { cat "$TMP/fifo" >"$TMP/fifo.out" & }
	catpid=$!
	run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -o "$TMP/fifo"
	wait "$catpid"	# not the sub-suites running in the background
	[ "$rc" = 0 ] && [ -p "$TMP/fifo" ] && cmp -s "$TMP/fifo.out" "$TMP/expected" ||
		bad="${bad:--o FIFO: exit $rc; a FIFO has no ending: it gets the folded stacks, written in place}"
	rm -f "$TMP/fifo" "$TMP/fifo.out"
	if [ -z "$bad" ]; then pass cli/output-names; else fail cli/output-names "$bad" "$C/err"; fi
fi
if selected cli/quiet; then
	# -q silences everything but errors: a good conversion to a file prints nothing at all.
	run_pc "$C" -q -i "$FP/perf.data" "${S[@]}" -o "$C/out.folded"
	if [ "$rc" = 0 ] && [ ! -s "$C/out" ] && [ ! -s "$C/err" ] && [ -s "$C/out.folded" ]; then
		pass cli/quiet
	else
		fail cli/quiet "exit status $rc; with -q and -o FILE, stdout and stderr must stay empty" "$C/err"
	fi
fi

# ---------------------------------------------------------------------------------------------------
# Man page: every long option of --help is documented in man/perfconv.1, and mandoc finds no problem.
if selected man/options; then
	# Each option needs an .It entry (in OPTIONS): "Fl \-map\-dir" and "\-\-map\-dir" both count,
	# so compare against the page with "\-" read as "-".
	# The options are the first word of the indented option lines ("  -i, --input FILE  ...").
	opts=$(grep -oE -- '^ +(-[A-Za-z0-9], +)?--[a-z][a-z0-9-]*[a-z0-9]' <<<"$help_text" | grep -oE -- '--[a-z0-9-]+$' | sort -u)
	if [ ! -f "$MAN" ]; then
		fail man/options "$MAN is missing"
	elif [ -z "$opts" ]; then
		fail man/options "perfconv --help lists no long option"
	else
		sed 's/\\-/-/g' "$MAN" >"$TMP/man.txt"
		missing=
		for o in $opts; do
			grep -qE -- "^\.It .*(Fl -${o#--}|$o)([^a-z0-9-]|\$)" "$TMP/man.txt" || missing="$missing $o"
		done
		# and every format of the "Formats: a b c" line, as ".It Cm name" in OUTPUT FORMATS
		for f in $(sed -n 's/^Formats: *//p' <<<"$help_text"); do
			grep -qE "^\.It Cm $f( |\$)" "$TMP/man.txt" || missing="$missing format:$f"
		done
		if [ -n "$missing" ]; then
			fail man/options "in perfconv --help but not in $MAN:$missing"
		else
			pass man/options
		fi
	fi
fi
# man/entries: each paragraph sits under its own option's .It.  Text that slid under the wrong entry
# (the --map-dir sentences "Use it for maps copied ... are looked for there too" once sat under
# --strip-tiers) cannot be told from right text by its words in general, but one kind of slip is
# mechanical to see: an option that takes no argument has no place and no value of its own, so its
# entry may not speak of one.  In the OPTIONS entries of such options a line fails when it has an
# .Ar that no .Fl earlier in the same sentence owns, the word "there" as a place (not "there is/are"),
# or "copied".  The rule is checked against a page with the old slip put back, so that it can fail.
man_entries() { # FILE: one line per offending line of an entry
	awk '
/^\.Sh / { inopt = ($2 == "OPTIONS"); depth = 0; name = ""; next }
!inopt { next }
/^\.Bl/ { depth++ }
/^\.El/ { depth--; if (depth == 0) name = ""; next }
depth == 1 && /^\.It / {
	hdr = $0; name = hdr; sub(/^\.It Fl /, "", name); sub(/[ ,].*/, "", name); gsub(/\\/, "", name); name = "-" name
	flag = (hdr !~ /(^| )Ar /); fl_in_sentence = 0; next
}
name == "" || !flag { next }
{
	line = $0; plain = line; gsub(/\\/, "", plain)
	if (line ~ /(^|[ .])Fl /) fl_in_sentence = 1
	bad = ""
	if (line ~ /(^|[ .])Ar / && !fl_in_sentence) bad = "an argument (.Ar) of no option named in the sentence"
	else if (tolower(plain) ~ /(^|[^a-z])there([^a-z]|$)/ && tolower(plain) !~ /there (is|are|was|were|be)([^a-z]|$)/) bad = "a place (\"there\")"
	else if (plain ~ /(^|[^a-z])copied([^a-z]|$)/) bad = "files copied somewhere (\"copied\")"
	if (bad != "") printf "%s (takes no argument) speaks of %s: %s\n", name, bad, line
	# a sentence ends at a line that ends in a period (roff puts a sentence break there)
	if (plain ~ /\.( [^ ]*)?$/ && line !~ /^\.(Fl|Pq) /) fl_in_sentence = 0
}
' "$1"
}
if selected man/entries; then
	if [ ! -f "$MAN" ]; then
		fail man/entries "$MAN is missing"
	else
		# the slip of issue 24, put back under --strip-tiers in a copy of the page
		awk '{ print } /^\.It Fl \\-strip\\-tiers$/ { print "Use it for maps copied from the machine that made the recording."; print "The ReadyToRun maps are looked for there too." }' \
			"$MAN" >"$TMP/man-slip.1"
		man_entries "$MAN" >"$TMP/entries"
		if [ -s "$TMP/entries" ]; then
			fail man/entries "text under an option that takes no argument speaks of one (is it under the wrong .It?)" "$TMP/entries"
		elif [ "$(man_entries "$TMP/man-slip.1" | grep -c '^--strip-tiers ')" != 2 ]; then
			fail man/entries "the check misses the --map-dir text put back under --strip-tiers"
		else
			pass man/entries
		fi
	fi
fi
if selected man/lint; then
	if ! command -v mandoc >/dev/null 2>&1; then
		skip man/lint "mandoc is not installed (scripts/install-deps.sh --test installs it)"
	elif mandoc -Tlint -Wwarning "$MAN" >"$TMP/lint" 2>&1; then
		pass man/lint
	else
		fail man/lint "mandoc -Tlint -Wwarning $MAN" "$TMP/lint"
	fi
fi

# ---------------------------------------------------------------------------------------------------
echo "# the cases above took $((SECONDS - cases_t0)) s"
: >"$TMP/suites/cases-done"
# the other sub-suites, in the order they were started
collect_suites

echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
