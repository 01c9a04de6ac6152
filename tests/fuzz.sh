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
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" fuzz
FZ=${FUZZ_DIR:-build/fuzz}

for src in fuzz/fuzz_*.c; do
	n=${src#fuzz/fuzz_}
	n=${n%.c}
	name=fuzz/$n
	selected "$name" || continue
	bin=$FZ/fuzz_$n
	if [ ! -x "$bin" ]; then
		skip "$name" "no $bin (make check builds it; set FUZZ_DIR)"
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
		fail "$name" "no regression inputs, and its FUZZ_SEEDS line names no file"
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
		fail "$name" "$bin '$bad' crashed or failed" "$TMP/out"
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
		fail "$name" "$bad" "$TMP/err"
	else
		pass "$name ($nreg regression inputs, $((${#inputs[@]} - nreg)) seeds)"
	fi
done
exit 0
