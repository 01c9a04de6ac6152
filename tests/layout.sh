#!/usr/bin/env bash
# tests/layout.sh - the tree keeps the pipeline's direction (docs/architecture.md): a file
# includes project headers only from its own stage or an earlier one, and in cli/ the files
# call each other one way (perfconv.c -> batch.c -> convert.c), never back.
#   layout/stages   util < files < perffile < machine < native < jit < events < converter/ (session) < formats < cli
#   layout/cli      convert.c includes neither batch.h nor perfconv.c's; batch.c not perfconv.c's
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" layout

stage() {
	case $1 in
	converter/util/*) echo 0 ;;
	converter/files/*) echo 1 ;;
	converter/perffile/*) echo 2 ;;
	converter/machine/*) echo 3 ;;
	converter/native/*) echo 4 ;;
	converter/jit/*) echo 5 ;;
	converter/events/*) echo 6 ;;
	converter/*/*) echo 99 ;;     # a folder this test does not know: add it above
	converter/*) echo 7 ;;
	formats/*) echo 8 ;;
	cli/*) echo 9 ;;
	*) echo 10 ;;
	esac
}

if selected layout/stages; then
	: >"$TMP/bad"
	while IFS= read -r f; do
		s=$(stage "$f")
		if [ "$s" = 99 ]; then
			echo "$f: folder without a stage in tests/layout.sh" >>"$TMP/bad"
			continue
		fi
		while IFS= read -r inc; do
			[ -f "$inc" ] || { echo "$f: includes \"$inc\", which is not in the tree" >>"$TMP/bad"; continue; }
			t=$(stage "$inc")
			[ "$t" -le "$s" ] || echo "$f (stage $s) includes $inc (stage $t)" >>"$TMP/bad"
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done < <(find converter formats cli -name '*.[ch]' | sort)
	if [ -s "$TMP/bad" ]; then
		fail layout/stages "includes against the pipeline's direction" "$TMP/bad"
	else
		pass layout/stages
	fi
fi

if selected layout/cli; then
	: >"$TMP/bad"
	grep -l '#include "cli/batch.h"' cli/convert.c cli/convert.h >>"$TMP/bad" 2>/dev/null
	grep -l 'pfc_batch_run' cli/convert.c >>"$TMP/bad" 2>/dev/null
	grep -lE '^int main\(' cli/convert.c cli/batch.c >>"$TMP/bad" 2>/dev/null
	if [ -s "$TMP/bad" ]; then
		fail layout/cli "cli/ calls back against perfconv.c -> batch.c -> convert.c" "$TMP/bad"
	else
		pass layout/cli
	fi
fi
