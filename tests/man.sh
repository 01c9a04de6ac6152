#!/usr/bin/env bash
# tests/man.sh - the man page against the program: every long option and every format that
# --help lists has an entry in man/perfconv.1, no option's entry holds text that belongs under
# another's, and mandoc -Tlint finds nothing to warn about.  What the options do is tested by the
# suites of what they change; the command line's exit codes and streams by tests/cli.sh.
#   man/options, man/entries, man/lint
# Run by tests/run.sh; prints "ok    man/NAME", "FAIL  man/NAME: why" or "skip  man/lint: why".
# PERFCONV and FILTERS="w1 w2" as for tests/run.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" man
need_perfconv man
MAN=man/perfconv.1
help_text=$("$PERFCONV" --help 2>/dev/null </dev/null) || help_text=

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

