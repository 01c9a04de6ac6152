#!/usr/bin/env bash
# tests/truncate.sh - perfconv on truncated inputs.  Every fixture input is cut at a selection of
# record boundaries, one byte either side of them, inside the file header, the attrs and feature
# sections, and at random places.  For each cut perfconv (under `timeout`) must:
#   - exit 0 or 1: never a signal, never a hang (124), never a sanitizer report;
#   - when it exits 1, name the file and say "offset" on stderr (even with -q);
#   - when it exits 1, leave no output file and no temporary file behind; when it exits 0, leave
#     exactly the output file.
# Run by tests/run.sh; prints "ok    truncate/FIXTURE" or "FAIL  truncate/FIXTURE: ..." per fixture.
#
#   PERFCONV, FIXTURES   as for tests/run.sh
#   TRUNC_RECORDS=16     record boundaries per input (the first ones, the last ones, the rest spread)
#   TRUNC_RANDOM=8       random cuts per input;  TRUNC_SEED=1 their seed
#   TRUNC_TIMEOUT=10     seconds per run;  TRUNC_JOBS=nproc  fixtures cut in parallel
#   FILTERS="w1 w2"      only fixtures whose "truncate/NAME" contains one of the words
set -u
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
FIX=${FIXTURES:-fixtures}
ROOT=$FIX/root
PERFCONV=${PERFCONV:-./perfconv}
case $PERFCONV in
*/*) PERFCONV=$(cd "$(dirname "$PERFCONV")" 2>/dev/null && pwd)/$(basename "$PERFCONV") ;;
esac
RECORDS=${TRUNC_RECORDS:-16}
RANDOM_CUTS=${TRUNC_RANDOM:-8}
SEED=${TRUNC_SEED:-1}
TIMEOUT=${TRUNC_TIMEOUT:-10}
JOBS=${TRUNC_JOBS:-$(nproc 2>/dev/null || echo 2)}

if [ ! -f "$PERFCONV" ] || [ ! -x "$PERFCONV" ]; then
	echo "FAIL  truncate: '$PERFCONV' is not an executable file"
	exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "skip  truncate: python3 is needed to find record boundaries"
	exit 0
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfconv-trunc.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
export HOME=$TMP/home
mkdir -p "$HOME"

# cuts.py RECORDS RANDOM SEED FILE...: one line per file, "FILE off off ...", the offsets sorted,
# all smaller than the file size.
cat >"$TMP/cuts.py" <<'EOF'
import random, struct, sys

records, nrandom, seed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]

def cuts(path):
    data = open(path, "rb").read()
    n = len(data)
    out = {0, 1, 7, 8, 9, 15, 16, 17}
    if data[:8] == b"PERFILE2":
        e = "<"
    elif data[:8] == b"2ELIFREP":
        e = ">"
    else:
        e = None
    q = lambda off: struct.unpack_from(e + "Q", data, off)[0] if off + 8 <= n else 0
    bounds = []
    if e and q(8) == 16:
        # Pipe mode: records from byte 16 to the end.  HEADER_TRACING_DATA (66) and AUXTRACE (71)
        # carry a payload after header.size.
        start, end, pipe = 16, n, True
    elif e:
        attr_size = q(16)
        a_off, a_size, d_off, d_size = q(24), q(32), q(40), q(48)
        start, end, pipe = d_off, d_off + d_size, False
        # File header end, attrs section (each attr and its ids section), data section, and the
        # feature section table after the data with every feature it points to.
        # A cut inside the feature section leaves every feature offset beyond the end of the file:
        # the start of the table, the first feature and the middle of the last one are enough.
        marks = [104, a_off, a_off + a_size, d_off, end, end + 8]
        if attr_size:
            for a in range(a_off, a_off + a_size, attr_size)[:4]:
                marks += [a + attr_size - 16, q(a + attr_size - 16)]
        nfeat = sum(bin(b).count("1") for b in data[72:104]) if n >= 104 else 0
        if nfeat:
            last = end + 16 * (nfeat - 1)
            marks += [q(end), q(last) + q(last + 8) // 2]
        for m in marks:
            out.update((m - 1, m, m + 1))
    else:
        start, end, pipe = 0, 0, False
    off = start
    while off + 8 <= min(end, n):
        typ, misc, size = struct.unpack_from(e + "IHH", data, off)
        if size < 8:
            break
        bounds.append(off)
        nxt = off + size
        if pipe and typ == 66 and off + 12 <= n:
            nxt += struct.unpack_from(e + "I", data, off + 8)[0]
        elif typ == 71:
            nxt += q(off + 8)
        off = nxt
    bounds.append(off)
    if len(bounds) > records:
        head = records // 4
        tail = records // 4
        mid = records - head - tail
        step = (len(bounds) - head - tail) / (mid + 1)
        pick = bounds[:head] + bounds[len(bounds) - tail:]
        pick += [bounds[head + int(step * (i + 1))] for i in range(mid)]
    else:
        pick = bounds
    for b in pick:
        out.update((b - 1, b, b + 1, b + 4))
    rnd = random.Random("%s:%s:%d" % (seed, path, n))
    out.update(rnd.randrange(n) for _ in range(nrandom))
    return sorted(c for c in out if 0 <= c < n)

for path in sys.argv[4:]:
    print(path, *cuts(path))
EOF

# check_cut FX IN CUT: run one cut; print a failure line (and return 1) when it misbehaves.
check_cut() {
	local fx=$1 in=$2 cut=$3 w=$TMP/w-$1
	local f=$w/cut-$fx-$cut.data
	mkdir -p "$w/out"
	head -c "$cut" "$in" >"$f"
	timeout -k 2 "$TIMEOUT" "$PERFCONV" -q -i "$f" --symfs "$ROOT" --kallsyms "$ROOT/kallsyms" \
		-o "$w/out/out.folded" >"$w/stdout" 2>"$w/stderr" </dev/null
	local rc=$? why=
	local left
	left=$(ls -A "$w/out")
	if grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$w/stderr"; then
		why="sanitizer report"
	elif [ "$rc" -ge 124 ]; then
		why="exit status $rc (timeout or signal)"
	elif [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
		why="exit status $rc, expected 0 or 1"
	elif [ "$rc" = 1 ] && ! grep -qF "cut-$fx-$cut.data" "$w/stderr"; then
		why="exit 1 but stderr does not name the file"
	elif [ "$rc" = 1 ] && ! grep -qiw 'offset' "$w/stderr"; then
		why="exit 1 but stderr does not give the offset"
	elif [ "$rc" = 1 ] && [ -n "$left" ]; then
		why="exit 1 but files were left in the output directory: $left"
	elif [ "$rc" = 0 ] && [ "$left" != out.folded ]; then
		why="exit 0 but the output directory holds '$left' instead of out.folded alone"
	fi
	rm -rf "$f" "$w/out"
	if [ -n "$why" ]; then
		echo "cut at $cut of $(wc -c <"$in") bytes: $why"
		head -n 3 "$w/stderr" | sed 's/^/    /'
		return 1
	fi
	return 0
}

# check_pipe_cut FX IN CUT: the same cut fed through stdin (-i -), for pipe-mode inputs.
check_pipe_cut() {
	local fx=$1 in=$2 cut=$3 w=$TMP/w-$1
	mkdir -p "$w"
	head -c "$cut" "$in" | timeout -k 2 "$TIMEOUT" "$PERFCONV" -q -i - --symfs "$ROOT" \
		--kallsyms "$ROOT/kallsyms" -o - >/dev/null 2>"$w/stderr"
	local rc=$? why=
	if grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$w/stderr"; then
		why="sanitizer report"
	elif [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
		why="exit status $rc, expected 0 or 1"
	elif [ "$rc" = 1 ] && ! grep -qiw 'offset' "$w/stderr"; then
		why="exit 1 but stderr does not give the offset"
	fi
	if [ -n "$why" ]; then
		echo "stdin cut at $cut of $(wc -c <"$in") bytes: $why"
		head -n 3 "$w/stderr" | sed 's/^/    /'
		return 1
	fi
	return 0
}

# fixture FX IN: all cuts of one input; the report goes to $TMP/res-FX.
fixture() {
	local fx=$1 in=$2 n=0 bad=0 cut
	local cuts
	cuts=$(python3 "$TMP/cuts.py" "$RECORDS" "$RANDOM_CUTS" "$SEED" "$in" | cut -d' ' -f2-)
	{
		for cut in $cuts; do
			n=$((n + 1))
			check_cut "$fx" "$in" "$cut" || bad=$((bad + 1))
			if [ "${in##*/}" = pipe.data ]; then
				n=$((n + 1))
				check_pipe_cut "$fx" "$in" "$cut" || bad=$((bad + 1))
			fi
		done
		echo "$n $bad"
	} >"$TMP/log-$fx" 2>&1
	n=$(tail -n 1 "$TMP/log-$fx" | cut -d' ' -f1)
	bad=$(tail -n 1 "$TMP/log-$fx" | cut -d' ' -f2)
	if [ "$bad" = 0 ]; then
		echo "ok    truncate/$fx ($n cuts)"
	else
		echo "FAIL  truncate/$fx: $bad of $n cuts misbehaved"
		sed '$d' "$TMP/log-$fx" | head -n 16 | sed 's/^/      | /'
	fi >"$TMP/res-$fx"
}

selected() {
	[ -z "${FILTERS-}" ] && return 0
	local f
	for f in $FILTERS; do
		case $1 in *"$f"*) return 0 ;; esac
	done
	return 1
}

names=()
for dir in "$FIX"/*/; do
	dir=${dir%/}
	fx=$(basename "$dir")
	[ -d "$dir/expected" ] || continue
	selected "truncate/$fx" || continue
	for input in "$dir/pipe.data" "$dir/perf.data" "$dir/perf.jit.data"; do
		[ -f "$input" ] || continue
		name=$fx
		[ "${input##*/}" = perf.jit.data ] && name=$fx-jit
		names+=("$name")
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
			wait -n
		done
		fixture "$name" "$input" &
	done
done
wait
for name in "${names[@]}"; do
	cat "$TMP/res-$name" 2>/dev/null || echo "FAIL  truncate/$name: no result (the worker died)"
done
