#!/usr/bin/env bash
# tests/fuzz.sh - replays the inputs of tests/regress/ and the fuzz seeds through the fuzz targets.
#
# tests/regress/NAME/* are inputs that once broke the parser of fuzz/fuzz_NAME.c (kept after the fix),
# plus hand-made edge cases.  Each is run through that target as built by `make check` (linked with
# fuzz/standalone.c; under ASan/UBSan in `make asan`), which must exit 0 without a sanitizer report.
# The reader's inputs also go through perfconv itself: exit 0 or 1, never a signal; on 1 the message
# names the file and no output file is left.  The seeds named by each target's FUZZ_SEEDS line are
# replayed too, so a target that no longer builds or runs shows up here and not only in `make fuzz`.
#
#   FUZZ_DIR=build/fuzz    where the targets are (make check sets it);  PERFCONV, FILTERS as run.sh
set -u
export LC_ALL=C
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
PERFCONV=${PERFCONV:-./perfconv}
FZ=${FUZZ_DIR:-build/fuzz}
read -r -a filters <<<"${FILTERS-}"
selected() {
	[ "${#filters[@]}" -eq 0 ] && return 0
	local f
	for f in "${filters[@]}"; do
		case $1 in *"$f"*) return 0 ;; esac
	done
	return 1
}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfconv-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
export HOME=$TMP/home
mkdir -p "$HOME"

for src in fuzz/fuzz_*.c; do
	n=${src#fuzz/fuzz_}
	n=${n%.c}
	name=fuzz/$n
	selected "$name" || continue
	bin=$FZ/fuzz_$n
	if [ ! -x "$bin" ]; then
		echo "skip  $name: no $bin (make check builds it; set FUZZ_DIR)"
		continue
	fi
	inputs=()
	[ -d "tests/regress/$n" ] && while IFS= read -r f; do inputs+=("$f"); done < <(find "tests/regress/$n" -type f ! -name '*.md' | sort)
	nreg=${#inputs[@]}
	# shellcheck disable=SC2207 # the globs are meant to expand
	for g in $(sed -n 's|^// FUZZ_SEEDS:||p' "$src"); do
		for f in $g; do
			[ -f "$f" ] && [ "$(stat -c %s "$f")" -le 400000 ] && inputs+=("$f")
		done
	done
	if [ "${#inputs[@]}" = 0 ]; then
		echo "skip  $name: no regression inputs or seeds"
		continue
	fi
	bad=
	for f in "${inputs[@]}"; do
		if ! timeout 60 "$bin" "$f" >"$TMP/out" 2>&1; then
			bad="$f"
			break
		fi
	done
	if [ -n "$bad" ]; then
		echo "FAIL  $name: $bin '$bad' crashed or failed"
		head -n 15 "$TMP/out" | sed 's/^/      | /'
		continue
	fi
	# the reader's regression inputs through the command line as well
	if [ "$n" = reader ] && [ "$nreg" -gt 0 ]; then
		for f in "${inputs[@]:0:$nreg}"; do
			rm -f "$TMP/o.folded"
			timeout 60 "$PERFCONV" -q -i "$f" -o "$TMP/o.folded" >/dev/null 2>"$TMP/err"
			rc=$?
			if [ "$rc" != 0 ] && { [ "$rc" != 1 ] || ! grep -qF "$f" "$TMP/err" || [ -e "$TMP/o.folded" ]; }; then
				bad="perfconv -i '$f': exit $rc (0 or 1 naming the file, and no output on 1)"
				break
			fi
		done
	fi
	if [ -n "$bad" ]; then
		echo "FAIL  $name: $bad"
		head -n 15 "$TMP/err" | sed 's/^/      | /'
	else
		echo "ok    $name ($nreg regression inputs, $((${#inputs[@]} - nreg)) seeds)"
	fi
done
exit 0
