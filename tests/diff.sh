#!/usr/bin/env bash
# tests/diff.sh - comparing two recordings: --diff BASE in folded (difffolded.pl's lines), svg (a
# differential flame graph) and top, --diff-normalize, the --fail-if-grown gate, and the top format
# alone.  The recordings are tests/data/diff/ (PROVENANCE.txt): a workload in two versions, one
# path three times heavier, one halved and one unchanged, and the first version recorded twice.
#   diff/folded          the folded diff equals difffolded.pl's output (as a set of lines), with -n too
#   diff/magnitude       the changed paths by the right factors, and top --diff lists them first
#   diff/gate-noise      the same work recorded twice passes --fail-if-grown 5
#   diff/gate-changed    the changed pair exits 3 and lists the grown function, only it, then how the
#                        gate counted and the CPU time of both
#   diff/top             -f top alone (and NAME.top.txt): the hottest functions by self and total
#   diff/pprof           go tool pprof -diff_base on the two pprof files: the same top changes; -f pprof
#                        --diff: one profile that go tool pprof -top reads as -diff_base's, and with
#                        --diff-normalize the same changes as -diff_base -normalize and top
#   diff/svg             the frames (title, place, width, color) equal flamegraph.pl's, --negate too
#   diff/svg-chromium    the same in headless Chromium, with search and zoom (svg_browser.py diff)
#   diff/refuse          speedscope and perf-script say why they have no diff view
#   diff/bad-base        a BASE that cannot be read is named, before the input is read
#   diff/pack            a pack as BASE gives the same diff as its recording
#   diff/filters         --time applies to both sides alike
#   diff/batch           -O DIR --diff BASE: every input compared with BASE, the gate over all
#   diff/usage           the options that need --diff
# Run by tests/run.sh; prints "ok    diff/NAME", "FAIL  diff/NAME: why" or "skip  diff/NAME: why".
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" diff
need_perfconv diff
need_python diff

D=$top/tests/data/diff
E=$D/expected
C=$TMP/case
PC=(-q --symfs "$D/root")

# ---------------------------------------------------------------------------------------------------
# diff/folded: the lines perfconv prints are the lines difffolded.pl printed for perfconv's own
# folded outputs of the two recordings (the script prints them in hash order: compared sorted)
if selected diff/folded; then
	ok=1
	for c in "v1a v2 v1a-v2.difffolded" "v1a v2 v1a-v2.n.difffolded --diff-normalize" "v1a v1b v1a-v1b.difffolded"; do
		read -r base new want opt <<<"$c"
		run_pc "$C" "${PC[@]}" -i "$D/$new.data" --diff "$D/$base.data" ${opt:+"$opt"}
		if [ "$rc" != 0 ]; then
			fail diff/folded "$new against $base: exit status $rc" "$C/err"
			ok=0
			break
		fi
		sort "$C/out" >"$TMP/got"
		if ! diff "$E/$want" "$TMP/got" >"$TMP/d"; then
			fail diff/folded "$new against $base ${opt-}: not difffolded.pl's lines ($want)" "$TMP/d"
			ok=0
			break
		fi
	done
	[ "$ok" = 1 ] && pass diff/folded
fi

# ---------------------------------------------------------------------------------------------------
# diff/pid: two recordings are two processes, so --pid names a process "comm-?" in a diff (as
# stackcollapse-perf.pl does), where a conversion of one recording names its pid
if selected diff/pid; then
	run_pc "$C" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data" --pid
	drc=$rc
	run_pc "$TMP/p" "${PC[@]}" -i "$D/v2.data" --pid
	if [ "$drc" != 0 ] || [ "$rc" != 0 ] || ! [ -s "$C/out" ]; then
		fail diff/pid "exit status $drc (diff), $rc (one recording)" "$C/err"
	elif grep -qv -- '^[^;]*-?;' "$C/out"; then
		fail diff/pid "a diff's --pid line names a pid" "$C/out"
	elif ! grep -q -- '^[^;]*-[0-9][0-9]*;' "$TMP/p/out"; then
		fail diff/pid "one recording's --pid lines name no pid" "$TMP/p/out"
	else
		pass diff/pid
	fi
fi

# ---------------------------------------------------------------------------------------------------
# diff/magnitude: path_grow three times heavier, path_shrink halved, path_steady unchanged (within
# the sampling's 5%), and the top report leads with the two changed paths, the right way round
if selected diff/magnitude; then
	run_pc "$C" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data"
	why=$(awk '
		{ n = split($1, f, ";"); for (i = 1; i <= n; i++) if (f[i] ~ /^path_/) { b[f[i]] += $2; w[f[i]] += $3 } }
		END {
			want["path_grow"] = 3; want["path_shrink"] = 0.5; want["path_steady"] = 1
			for (p in want) {
				if (!b[p]) { print p ": not in the base"; exit }
				r = w[p] / b[p]
				if (r < want[p] * 0.95 || r > want[p] * 1.05) { printf "%s: new/base %.3f, expected %g\n", p, r, want[p]; exit }
			}
		}' "$C/out")
	run_pc "$TMP/t" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data" -f top
	# the rows: base% new% change self-base% self-new% change function
	first=$(awk '/^Largest changes/ { t = 1; next } t && /^ *[0-9.]+%/ { print $NF, $3; n++ } n == 2 { exit }' "$TMP/t/out" | tr '\n' ' ')
	if [ "$rc" != 0 ]; then
		fail diff/magnitude "top --diff: exit status $rc" "$TMP/t/err"
	elif [ -n "$why" ]; then
		fail diff/magnitude "$why" "$C/out"
	elif ! [[ $first =~ ^path_grow\ \+(2[89]|3[0-2])\.[0-9][0-9]\ path_shrink\ -(2[1-5])\.[0-9][0-9]\ $ ]]; then
		fail diff/magnitude "top --diff does not lead with path_grow (about +30 points) and path_shrink (about -23): '$first'" "$TMP/t/out"
	elif ! grep -q "^base '.*v1a.data': 1.714 s of cpu-clock in 1714 samples (the columns in ns)$" "$TMP/t/out" ||
		! grep -q "^new  '.*v2.data': 1.996 s of cpu-clock in 1996 samples (the columns in ns)$" "$TMP/t/out"; then
		fail diff/magnitude "top --diff does not say how big each profile was, in time and samples" "$TMP/t/out"
	else
		pass diff/magnitude
	fi
fi

# ---------------------------------------------------------------------------------------------------
# the gate
if selected diff/gate-noise; then
	run_pc "$C" --symfs "$D/root" -i "$D/v1b.data" --diff "$D/v1a.data" --fail-if-grown 5 -o "$C/n.folded"
	if [ "$rc" != 0 ]; then
		fail diff/gate-noise "the same work recorded twice: exit status $rc, expected 0" "$C/err"
	elif grep -q 'fail-if-grown' "$C/err"; then
		fail diff/gate-noise "exit status 0, but a function is listed as grown" "$C/err"
	else
		pass diff/gate-noise
	fi
fi
if selected diff/gate-changed; then
	run_pc "$C" --symfs "$D/root" -i "$D/v2.data" --diff "$D/v1a.data" --fail-if-grown 5 -o "$C/c.folded"
	if [ "$rc" != 3 ]; then
		fail diff/gate-changed "path_grow grew by 30 points: exit status $rc, expected 3" "$C/err"
	elif ! grep -q "^  +30\.[0-9][0-9] .*path_grow$" "$C/err" || grep -q 'path_shrink\|path_steady' "$C/err"; then
		fail diff/gate-changed "path_grow, and only it, must be listed" "$C/err"
	elif ! grep -q "^  (grown: samples above the base's times [0-9.]*, .*standard errors" "$C/err" ||
		! grep -q "^  CPU time 1\.714 s -> 1\.996 s" "$C/err"; then
		fail diff/gate-changed "the list must end with how the gate counted and the CPU time of both" "$C/err"
	elif [ ! -s "$C/c.folded" ]; then
		fail diff/gate-changed "the output was not written" "$C/err"
	else
		# -q keeps the status and drops the list; a threshold above the growth passes
		run_pc "$TMP/q" -q --symfs "$D/root" -i "$D/v2.data" --diff "$D/v1a.data" --fail-if-grown 5 -o "$TMP/q.folded"
		rcq=$rc
		run_pc "$TMP/h" -q --symfs "$D/root" -i "$D/v2.data" --diff "$D/v1a.data" --fail-if-grown 31 -o "$TMP/h.folded"
		if [ "$rcq" != 3 ] || [ -s "$TMP/q/err" ]; then
			fail diff/gate-changed "with -q: exit status $rcq (expected 3) and nothing on stderr" "$TMP/q/err"
		elif [ "$rc" != 0 ]; then
			fail diff/gate-changed "--fail-if-grown 31 (above the growth): exit status $rc" "$TMP/h/err"
		else
			pass diff/gate-changed
		fi
	fi
fi

# ---------------------------------------------------------------------------------------------------
# diff/top: the format alone: spin has all the self time, main and the paths their totals
if selected diff/top; then
	run_pc "$C" "${PC[@]}" -i "$D/v2.data" -o "$C/v2.top.txt" --top 4
	t=$C/v2.top.txt
	if [ "$rc" != 0 ] || [ ! -s "$t" ]; then
		fail diff/top "exit status $rc, output $([ -s "$t" ] && echo written || echo missing)" "$C/err"
	elif ! awk '/by self/ { s = 1; next } s && /^ *[0-9]+ / { print; exit }' "$t" | grep -Eq '^ +1996000000 100\.00% 100\.00% +1996000000 100\.00%  spin$'; then
		fail diff/top "by self: spin, 100%, does not come first" "$t"
	elif ! awk '/by total/ { s = 1; next } s && /^ *[0-9]+ /' "$t" | grep -Eq ' 997000000  49\.95%  path_grow$'; then
		fail diff/top "by total: path_grow at 49.95% is missing" "$t"
	elif [ "$(awk '/by total/ { s = 1; next } s && /^ *[0-9]+ /' "$t" | wc -l)" != 4 ]; then
		fail diff/top "--top 4: not 4 rows" "$t"
	elif ! grep -q "^profile '.*v2.data': 1.996 s of cpu-clock in 1996 samples (the columns in ns)$" "$t"; then
		fail diff/top "cpu-clock's weights are nanoseconds: the profile line must say 1.996 s and 1996 samples" "$t"
	else
		pass diff/top
	fi
fi

# ---------------------------------------------------------------------------------------------------
# diff/pprof: go tool pprof -diff_base -normalize on perfconv's two pprof files: the same
# functions change by the same points (its cum%) as top --diff says
if selected diff/pprof; then
	# the conversions run in any case (make asan); go tool pprof reads them where it can
	run_pc "$C" "${PC[@]}" -i "$D/v1a.data" -o "$TMP/base.pb.gz"
	run_pc "$TMP/n" "${PC[@]}" -i "$D/v2.data" -o "$TMP/new.pb.gz"
	run_pc "$TMP/t" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data" -f top --top 3
	run_pc "$TMP/m" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data" -o "$TMP/diff.pb.gz"
	mrc=$rc
	run_pc "$TMP/mn" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data" --diff-normalize -o "$TMP/diffn.pb.gz"
	mrc=$((mrc + rc))
	if [ "$mrc" != 0 ] || ! gzip -t "$TMP/diff.pb.gz" "$TMP/diffn.pb.gz" 2>/dev/null; then
		fail diff/pprof "-f pprof --diff: exit status $mrc, or not a gzip file" "$TMP/m/err"
	elif ! command -v go >/dev/null 2>&1; then
		skip diff/pprof "go is not installed (scripts/install-deps.sh --test installs golang-go)"
	elif consumers diff/pprof; then
		export GOCACHE=$TMP/gocache GOFLAGS=-mod=mod
		go tool pprof -diff_base "$TMP/base.pb.gz" -normalize -top -cum "$TMP/new.pb.gz" >"$TMP/pp" 2>"$TMP/pp.err"
		prc=$?
		# pprof: "flat flat% sum% cum cum% name", the changes in cum, by size; perfconv: the rows of top
		pp=$(awk '/flat%/ { t = 1; next } t && NF >= 6 { v = $4; sub(/ns$/, "", v); sign = v < 0 ? "-" : "+";
			print $6, sign $5 }' "$TMP/pp" | head -3 | tr -d '%' | tr '\n' ' ')
		ours=$(awk '/^Largest changes/ { t = 1; next } t && /^ *[0-9.]+%/ { print $NF, $3 }' "$TMP/t/out" | head -3 | tr '\n' ' ')
		# -f pprof --diff: the one profile -diff_base makes (the base negated, labeled
		# pprof::base) reads the same in go tool pprof -top as the two files with -diff_base
		go tool pprof -diff_base "$TMP/base.pb.gz" -top -cum "$TMP/new.pb.gz" 2>/dev/null | sed -n '/flat%/,$p' >"$TMP/real"
		go tool pprof -top -cum "$TMP/diff.pb.gz" 2>"$TMP/m.err" | sed -n '/flat%/,$p' >"$TMP/ours"
		mn=$(go tool pprof -top -cum "$TMP/diffn.pb.gz" 2>/dev/null | awk '/flat%/ { t = 1; next } t && NF >= 6 {
			v = $4; sign = v ~ /^-/ ? "-" : "+"; print $6, sign $5 }' | head -3 | tr -d '%' | tr '\n' ' ')
		if [ "$prc" != 0 ]; then
			fail diff/pprof "go tool pprof -diff_base: exit status $prc" "$TMP/pp.err"
		elif [ -z "$pp" ] || [ "$pp" != "$ours" ]; then
			echo "pprof:    $pp" >"$TMP/d"
			echo "perfconv: $ours" >>"$TMP/d"
			cat "$TMP/pp" >>"$TMP/d"
			fail diff/pprof "the top changes differ" "$TMP/d"
		elif [ ! -s "$TMP/real" ] || ! diff "$TMP/real" "$TMP/ours" >"$TMP/d"; then
			fail diff/pprof "-f pprof --diff: go tool pprof -top is not -diff_base's" "$TMP/d"
		elif [ "$mn" != "$ours" ]; then
			echo "-f pprof --diff --diff-normalize: $mn" >"$TMP/d"
			echo "-f top --diff:                    $ours" >>"$TMP/d"
			fail diff/pprof "with --diff-normalize the top changes differ from top's" "$TMP/d"
		else
			pass diff/pprof
		fi
	fi
fi

# ---------------------------------------------------------------------------------------------------
# diff/svg: every frame as flamegraph.pl drew difffolded.pl's lines: title (with the change), x,
# width and color; --negate, --diff-normalize and the other direction (base widths) too
svg_frames() {
	python3 - "$1" <<'EOF'
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
for m in sorted(re.finditer(r'<title>([^<]*)</title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" '
                            r'height="[\d.]+" fill="([^"]+)"', s), key=lambda m: m.groups()):
    print(" ".join(m.groups()))
EOF
}
if selected diff/svg; then
	ok=1
	for c in "v1a v2 v1a-v2.diff.svg" "v1a v2 v1a-v2.negate.svg --negate" "v1a v2 v1a-v2.n.diff.svg --diff-normalize" \
		"v2 v1a v2-v1a.negate.svg --negate"; do
		read -r base new want opt <<<"$c"
		run_pc "$C" "${PC[@]}" -i "$D/$new.data" --diff "$D/$base.data" ${opt:+"$opt"} -o "$TMP/d.svg"
		if [ "$rc" != 0 ]; then
			fail diff/svg "$new against $base ${opt-}: exit status $rc" "$C/err"
			ok=0
			break
		fi
		if ! diff <(svg_frames "$E/$want") <(svg_frames "$TMP/d.svg") >"$TMP/d" ||
			[ "$(svg_frames "$TMP/d.svg" | grep -c 'rgb(255,255,255)$')" = "$(svg_frames "$TMP/d.svg" | wc -l)" ]; then
			fail diff/svg "$new against $base ${opt-}: the frames are not flamegraph.pl's ($want)" "$TMP/d"
			ok=0
			break
		fi
	done
	[ "$ok" = 1 ] && pass diff/svg
fi
if selected diff/svg-chromium && consumers diff/svg-chromium; then
	run_pc "$C" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data" -o "$TMP/page.svg"
	timeout 60 python3 "$top/tests/svg_browser.py" diff "$TMP/page.svg" "$E/v1a-v2.diff.svg" "$TMP/page.png" >"$TMP/b" 2>&1
	brc=$?
	if [ "$brc" = 77 ]; then
		skip diff/svg-chromium "$(head -1 "$TMP/b")"
	elif [ "$rc" != 0 ] || [ "$brc" != 0 ]; then
		fail diff/svg-chromium "conversion exit status $rc, browser check $brc" "$TMP/b"
	else
		pass diff/svg-chromium
	fi
fi

# ---------------------------------------------------------------------------------------------------
# diff/refuse: the formats without a diff view say so, and write nothing
if selected diff/refuse; then
	ok=1
	for c in "s.speedscope.json:speedscope has no diff view" "x.perf.txt:perf-script format has no diff view"; do
		out=${c%%:*} want=${c#*:}
		run_pc "$C" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data" -o "$C/$out"
		if [ "$rc" != 2 ] || ! grep -qF "$want" "$C/err" || [ -e "$C/$out" ]; then
			fail diff/refuse "-o $out: exit status $rc (expected 2), and a message with '$want'" "$C/err"
			ok=0
			break
		fi
	done
	[ "$ok" = 1 ] && pass diff/refuse
fi

# ---------------------------------------------------------------------------------------------------
# diff/bad-base: a BASE that is missing or not a recording: exit 1 with its name, before the input
# is read (no output, no summary of the input)
if selected diff/bad-base; then
	ok=1
	for b in "$TMP/missing.data" "$top/README.md"; do
		run_pc "$C" --symfs "$D/root" -i "$D/v2.data" --diff "$b" -o "$C/o.folded"
		if [ "$rc" != 1 ] || ! grep -q "^perfconv: --diff: '$b': " "$C/err" || [ -e "$C/o.folded" ] ||
			grep -q 'v2.data' "$C/err"; then
			fail diff/bad-base "--diff '$b': exit status $rc (expected 1), the message must name it, and only it" "$C/err"
			ok=0
			break
		fi
	done
	[ "$ok" = 1 ] && pass diff/bad-base
fi

# ---------------------------------------------------------------------------------------------------
# diff/pack: a pack of the base recording serves as BASE
if selected diff/pack; then
	run_pc "$C" "${PC[@]}" -i "$D/v1a.data" -o "$TMP/v1a.perfpack"
	run_pc "$TMP/p" -q -i "$D/v2.data" --symfs "$D/root" --diff "$TMP/v1a.perfpack"
	sort "$TMP/p/out" >"$TMP/got"
	if [ "$rc" != 0 ]; then
		fail diff/pack "exit status $rc" "$TMP/p/err"
	elif ! diff "$E/v1a-v2.difffolded" "$TMP/got" >"$TMP/d"; then
		fail diff/pack "not the diff of the recording" "$TMP/d"
	else
		pass diff/pack
	fi
fi

# ---------------------------------------------------------------------------------------------------
# diff/filters: --time 0%-50% keeps about half of each side (each in its own recording's time)
if selected diff/filters; then
	run_pc "$C" "${PC[@]}" -i "$D/v2.data" --diff "$D/v1a.data" --time 0%-50% -f top
	# the profile lines: "base 'FILE': 857.000 ms of cpu-clock in 857 samples (the columns in ns)"
	b=$(sed -n "s/^base .* in \([0-9]*\) samples.*/\1/p" "$C/out")
	n=$(sed -n "s/^new .* in \([0-9]*\) samples.*/\1/p" "$C/out")
	if [ "$rc" != 0 ] || [ -z "$b" ] || [ -z "$n" ]; then
		fail diff/filters "exit status $rc" "$C/err"
	elif ! awk -v b="$b" -v n="$n" 'BEGIN { exit !(b > 1714 * 0.4 && b < 1714 * 0.6 &&
			n > 1996 * 0.4 && n < 1996 * 0.6) }'; then
		fail diff/filters "--time 0%-50%: base $b of 1714 samples, new $n of 1996: not half of each" "$C/out"
	else
		pass diff/filters
	fi
fi

# ---------------------------------------------------------------------------------------------------
# diff/batch: every input against BASE; the gate fails the batch with 3 and names the grown file
if selected diff/batch; then
	mkdir -p "$TMP/in"
	cp "$D/v1b.data" "$D/v2.data" "$TMP/in/"
	# (batch mode names an output after its input: IN.data.folded)
	run_pc "$C" --symfs "$D/root" -O "$TMP/bo" -f folded,top --diff "$D/v1a.data" --fail-if-grown 5 "$TMP/in"
	sort "$TMP/bo/v2.data.folded" 2>/dev/null >"$TMP/got"
	if [ "$rc" != 3 ]; then
		fail diff/batch "exit status $rc, expected 3" "$C/err"
	elif ! diff "$E/v1a-v2.difffolded" "$TMP/got" >"$TMP/d"; then
		fail diff/batch "v2.folded is not the diff against the base" "$TMP/d"
	elif [ ! -s "$TMP/bo/v1b.data.top.txt" ] || ! grep -q "'.*v2.data': grew by more than 5 points" "$C/err" ||
		grep -q "v1b.data': grew" "$C/err" || ! grep -q '+30\.[0-9][0-9] .*path_grow' "$C/err"; then
		fail diff/batch "the outputs of both, and v2 (only) listed as grown" "$C/err"
	else
		pass diff/batch
	fi
fi

# ---------------------------------------------------------------------------------------------------
if selected diff/usage; then
	ok=1
	for a in "--fail-if-grown 5" "--negate" "--diff-normalize" "--diff $D/v1a.data --fail-if-grown x" "--top 0"; do
		# shellcheck disable=SC2086  # the words of a
		run_pc "$C" -q --symfs "$D/root" -i "$D/v2.data" $a
		if [ "$rc" != 2 ] || [ ! -s "$C/err" ]; then
			fail diff/usage "'$a': exit status $rc, expected 2 with a message" "$C/err"
			ok=0
			break
		fi
	done
	[ "$ok" = 1 ] && pass diff/usage
fi

