#!/usr/bin/env bash
# tests/cli.sh - the command line's contract, apart from any format: exit status (0 success, 1 a
# conversion that failed, 2 a usage error), which stream gets what, -q, and what an output name
# means (its ending picks the format, .gz compresses, a FIFO is written in place).  The options'
# documentation is tests/man.sh's; each format's bytes are their own suites'.
#   cli/help, cli/help-short, cli/version-*, cli/unknown-option, cli/bad-format, cli/missing-input,
#   cli/bad-output, cli/stdout, cli/output-names, cli/quiet
# Run by tests/run.sh; prints "ok    cli/NAME" or "FAIL  cli/NAME: why".  PERFCONV, FIXTURES and
# FILTERS="w1 w2" as for tests/run.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" cli
need_perfconv cli
S=(--symfs "$ROOT" --kallsyms "$ROOT/kallsyms")
FP=$FIX/fp-callgraph
C=$TMP/case
help_text=$("$PERFCONV" --help 2>/dev/null </dev/null) || help_text=

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
	wait "$catpid"
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
