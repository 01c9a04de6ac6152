#!/usr/bin/env bash
# tests/layout.sh - the tree keeps its shape: the pipeline's direction (docs/architecture.md), a
# file including project headers only from its own stage or an earlier one; cli/'s files calling
# each other one way (perfconv.c -> batch.c -> convert.c), never back; and no test suite that the
# driver does not run or that shadows a shared helper.
#   layout/stages   util < files < perffile < machine < native < jit < events < converter/ (session) < formats < cli
#   layout/cli      convert.c includes neither batch.h nor perfconv.c's; batch.c not perfconv.c's
#   layout/suites   every tests/*.sh is a suite tests/run.sh runs or one it lists as not a suite,
#                   and every name it lists is there, once
#   layout/helpers  no suite defines a function under the name of one of tests/lib.sh's helpers
#   layout/env      no getenv("PERFCONV_...") outside cli/env.c, which reads them all once
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

# A suite that the driver's list lacks would never run, and its cases would pass unseen.
# suite_gaps DIR: one line per script of DIR/*.sh that DIR/run.sh --list does not name, per name it
# lists that is not there, and per name listed twice.  The rule is also checked on a copy of the
# list with a script added, so that it can fail.
suite_gaps() {
	local dir=$1 f n kind
	if ! "$dir/run.sh" --list >"$TMP/list" 2>"$TMP/list.err" || [ ! -s "$TMP/list" ]; then
		echo "$dir/run.sh --list failed: $(head -n 1 "$TMP/list.err")"
		return
	fi
	for f in "$dir"/*.sh; do
		n=$(basename "$f")
		grep -qE "^(live|pool|not) $n\$" "$TMP/list" ||
			echo "$n is not run by run.sh (add it to its LIVE_SUITES or POOL_SUITES, or to NOT_SUITES if it is no suite)"
	done
	while read -r kind n; do
		[ -f "$dir/$n" ] || echo "run.sh lists $n ($kind), which is not there"
	done <"$TMP/list"
	cut -d' ' -f2 "$TMP/list" | sort | uniq -d | sed 's/$/ is listed twice in run.sh/'
}
if selected layout/suites; then
	suite_gaps tests >"$TMP/bad"
	mkdir -p "$TMP/suites"
	ln -s "$top"/tests/*.sh "$TMP/suites/"
	printf '#!/bin/sh\n' >"$TMP/suites/unlisted.sh"
	if [ -s "$TMP/bad" ]; then
		fail layout/suites "tests/*.sh and tests/run.sh's list of suites differ" "$TMP/bad"
	elif [ "$(suite_gaps "$TMP/suites")" != "unlisted.sh is not run by run.sh (add it to its LIVE_SUITES or POOL_SUITES, or to NOT_SUITES if it is no suite)" ]; then
		fail layout/suites "the check misses a script that is not in the list"
	else
		pass layout/suites
	fi
fi

# A suite's own copy of a helper of tests/lib.sh, under its name, would hide the shared one from
# that suite and drift from it.  shadows FILE...: one line per function FILE defines that lib.sh
# defines too; checked on a file that does define one, so that it can fail.
shadows() {
	local names
	names=$(sed -nE 's/^([a-z_][a-z0-9_]*)\(\) *\{.*/\1/p' tests/lib.sh | paste -sd'|')
	grep -nHE "^[[:space:]]*($names)\(\)" "$@" | sed 's/(.*/: a helper of tests\/lib.sh defined again/'
}
if selected layout/helpers; then
	shadows $(ls tests/*.sh | grep -vx tests/lib.sh) >"$TMP/bad"
	printf 'x() {\n\t:\n}\n\tload() { :; }\n' >"$TMP/shadow.sh"
	if [ -s "$TMP/bad" ]; then
		fail layout/helpers "suites define helpers of tests/lib.sh again" "$TMP/bad"
	elif [ "$(shadows "$TMP/shadow.sh" | wc -l)" != 1 ]; then
		fail layout/helpers "the check misses a suite's load() that shadows tests/lib.sh's"
	else
		pass layout/helpers
	fi
fi

# docs/architecture.md names every source file of the pipeline, so that a reader finds each in
# its folder's row.  undocumented DOC: the .c files of converter/, formats/ and cli/ it does not
# name; checked on a copy without one name, so that it can fail.
undocumented() {
	local f b
	for f in converter/*.c converter/*/*.c formats/*.c cli/*.c; do
		b=$(basename "$f")
		grep -qF "$b" "$1" || echo "$f"
	done
}
if selected layout/docs; then
	undocumented docs/architecture.md >"$TMP/bad"
	sed "s/kernel\\.c//g" docs/architecture.md >"$TMP/arch.md"
	if [ -s "$TMP/bad" ]; then
		fail layout/docs "docs/architecture.md does not name these files" "$TMP/bad"
	elif [ "$(undocumented "$TMP/arch.md")" != converter/kernel.c ]; then
		fail layout/docs "the check misses a file that docs/architecture.md does not name"
	else
		pass layout/docs
	fi
fi

# The PERFCONV_* variables are read in one place (cli/env.c) and handed down, so that the
# conversion below cli/ has no setting it did not get from its caller.  env_readers DIR...: one
# line per getenv("PERFCONV_ in the sources under DIR but outside cli/env.c; checked on a planted
# file that reads one, so that it can fail.
env_readers() {
	grep -rnF --include='*.[ch]' 'getenv("PERFCONV_' "$@" | grep -v '^cli/env\.c:'
}
if selected layout/env; then
	env_readers converter formats cli tests/unit fuzz >"$TMP/bad"
	mkdir -p "$TMP/envtree/converter"
	printf 'static const char *x(void) { return getenv("PERFCONV_X"); }\n' >"$TMP/envtree/converter/x.c"
	if [ -s "$TMP/bad" ]; then
		fail layout/env "PERFCONV_* variables read outside cli/env.c" "$TMP/bad"
	elif [ "$(cd "$TMP/envtree" && env_readers converter | wc -l)" != 1 ]; then
		fail layout/env "the check misses a getenv(\"PERFCONV_ outside cli/env.c"
	else
		pass layout/env
	fi
fi
