#!/usr/bin/env bash
# tests/readme.sh - the recipes of README.md and docs/recipes.md run as written, and the
# documentation's links resolve.
#   readme/N-NAME   the Nth ```sh block of README.md (NAME: its section's heading), run with bash -e in
#                   a fresh directory; it fails when a command fails, or when a file it writes
#                   (-o FILE, -O DIR, > FILE, and the EXPECT globs below) is missing or empty, or
#                   lacks the frame names it is about (CONTAINS below).  A block
#                   right after a line "<!-- not run: REASON -->" is reported as skipped with REASON;
#                   a block whose commands are not installed here is skipped, naming them.
#   readme/recipes/N-NAME   the same for the Nth ```sh block of docs/recipes.md, the recipes the
#                   README sends a reader on to
#   readme/blocks   every code block of README.md and docs/recipes.md is a ```sh block (none escapes
#                   this test)
#   readme/size     README.md is at most 9,500 bytes: the front door, read in five minutes, not the
#                   reference (the rest is in docs/)
#   readme/links    every relative link and image of README.md and docs/*.md names a file that exists,
#                   and an #anchor into a Markdown file names one of its headings (GitHub's slugs)
#
# The substitutions, the only differences from what a user runs:
#   perf       a stub first on PATH: `perf record ... [-o FILE]` copies the case's fixture recording
#              (FIXTURE below) to FILE (default perf.data) and runs nothing; other subcommands fail
#   perfconv   a wrapper first on PATH: runs $PERFCONV, and for a recording (-i FILE that is no pack)
#              adds the files of the machine it was recorded on: --symfs fixtures/root, the fixture's
#              kallsyms (else fixtures/root/kallsyms) and --map-dir with its maps/ (its /tmp);
#              a --symbol-server URL becomes one nothing listens on (127.0.0.1:1)
#   perf.data  the case's fixture recording is there from the start, for a block that converts what
#              an earlier section recorded, with the fixture's files BESIDE names (a nettrace)
#   incoming/  holds two packs made from fixtures/fp-callgraph and fixtures/dotnet-perfmap-only
#   boxes.txt  holds ":", GNU parallel's name for this machine, in place of ssh logins
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" readme
need_perfconv readme/recipes
need_python readme/recipes
README=$top/README.md
RECIPES=$top/docs/recipes.md

# the recording `perf record` gives in each section (by its heading's slug); fp-callgraph otherwise
declare -A FIXTURE=(
	[a-net-service]=dotnet-perfmap-only
	[a-service-in-a-container]=dotnet-container
	[other-runtimes]=node-perf-basic-prof
	[off-cpu-time]=tracepoint-sched-switch
	[gc-pauses-and-allocations]=dotnet-events
)
# files of the section's fixture a block finds beside perf.data, as an earlier block recorded them
declare -A BESIDE=(
	[gc-pauses-and-allocations]=app.nettrace
)
# sections whose `perf record`s give several recordings, one after the other, converted with their
# own symfs root: comparing two recordings gets the same work recorded twice (so its gate passes)
declare -A RECORDINGS=(
	[comparing-two-recordings]='tests/data/diff/v1a.data tests/data/diff/v1b.data'
)
declare -A ROOTS=(
	[comparing-two-recordings]=tests/data/diff/root
)
# what a recipe is for, in a file it writes: FILE:TEXT (grep -F), so that a recipe that converts
# without naming the frames it is about fails (the pack in the container recipe must carry the maps)
declare -A CONTAINS=(
	[a-native-program]='flame.folded:;main;'
	[a-net-service]='svc.svg:System.Private.CoreLib!System.'
	[a-service-in-a-container]='svc.svg:Probe!Probe.'
	[other-runtimes]='node.svg:JS:^requireBuiltin'
	[comparing-two-recordings]='diff.top.txt:path_grow'
	[gc-pauses-and-allocations]='alloc.svg:EventsProbe.Program::AllocInts'
)
# files a block writes that its command lines do not name (relative to the case's directory)
declare -A EXPECT=(
	[more-recordings-than-one-box]='incoming/*.trace.zip'
)

# ---------------------------------------------------------------------------------------------------
# The blocks of each document: one file each in $TMP/blocks/DOC: N-NAME.sh (the commands),
# N-NAME.skip (the reason, when marked), N-NAME.out (the files it writes), N-NAME.cmds (the commands
# it runs); $TMP/fences lists every fence of both documents
mkdir -p "$TMP/blocks/readme" "$TMP/blocks/recipes"
: >"$TMP/fences"
for doc in readme:"$README" recipes:"$RECIPES"; do
	python3 - "${doc#*:}" "$TMP/blocks/${doc%%:*}" >>"$TMP/fences" <<'EOF'
import os, re, shlex, sys
readme, out = sys.argv[1], sys.argv[2]
where = os.path.basename(readme)
lines = open(readme, encoding='utf-8').read().split('\n')
def slug(h):
    h = re.sub(r'[^\w\- ]', '', h.strip().lower())
    return h.replace(' ', '-')
section, n, i, prev = 'top', 0, 0, ''
while i < len(lines):
    l = lines[i]
    if l.startswith('#'):
        section = slug(l.lstrip('#'))
    if l.startswith('```'):
        lang = l[3:].strip()
        j = i + 1
        while j < len(lines) and not lines[j].startswith('```'):
            j += 1
        print(f'{where} {i + 1} {lang or "(none)"}')    # every fence, for readme/blocks
        if lang == 'sh':
            n += 1
            base = f'{out}/{n}-{section}'
            body = lines[i + 1:j]
            open(base + '.sh', 'w').write('\n'.join(body) + '\n')
            m = re.match(r'<!-- not run: (.*) -->$', prev)
            if m:
                open(base + '.skip', 'w').write(m.group(1) + '\n')
            # the logical command lines (continuations joined), their programs and their outputs
            text = '\n'.join(body).replace('\\\n', ' ')
            outs, cmds = [], []
            for cl in text.split('\n'):
                cl = cl.split(' #')[0].strip()
                if not cl or cl.startswith('#'):
                    continue
                try:
                    w = shlex.split(cl)
                except ValueError:
                    w = cl.split()
                while w and re.match(r'^\w+=', w[0]):
                    w = w[1:]
                if w:
                    cmds.append(w[0])
                for k, a in enumerate(w[:-1]):
                    if a in ('-o', '-O', '--output', '--output-dir', '>') and '{' not in w[k + 1]:
                        outs.append(w[k + 1])
            open(base + '.out', 'w').write(''.join(o + '\n' for o in outs))
            open(base + '.cmds', 'w').write(''.join(c + '\n' for c in sorted(set(cmds))))
        i = j
    prev = l if l.strip() else prev
    i += 1
EOF
done

# ---------------------------------------------------------------------------------------------------
# The stubs
STUB=$TMP/stub
mkdir -p "$STUB"
cat >"$STUB/perf" <<'EOF'
#!/usr/bin/env bash
# perf record stub (tests/readme.sh): the case's fixture recording in place of a new one
[ "${1-}" = record ] || { echo "perf stub: only 'perf record' is stubbed, not '$*'" >&2; exit 1; }
out=perf.data
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift ;;
	--) break ;;
	esac
	shift
done
if [ -n "${README_RECORDINGS-}" ]; then	# the next of the section's recordings
	read -r -a recs <<<"$README_RECORDINGS"
	n=$(cat .perf-records 2>/dev/null || echo 0)
	echo $((n + 1)) >.perf-records
	cp "$README_TOP/${recs[n % ${#recs[@]}]}" "$out"
	exit
fi
cp "$README_FIXTURE/perf.data" "$out"
EOF
cat >"$STUB/perfconv" <<'EOF'
#!/usr/bin/env bash
# perfconv wrapper (tests/readme.sh): a recording converts with the files of its machine
in=
for ((k = 1; k < $#; k++)); do
	case ${!k} in -i | --input) j=$((k + 1)); in=${!j} ;; esac
done
extra=()
if [ -n "$in" ] && [[ $in != *.perfpack ]]; then
	ks=$README_ROOT/kallsyms
	[ -f "$README_FIXTURE/kallsyms" ] && ks=$README_FIXTURE/kallsyms
	extra=(--symfs "$README_ROOT")
	[ -f "$ks" ] && extra+=(--kallsyms "$ks")
	[ -d "$README_FIXTURE/maps" ] && extra+=(--map-dir "$README_FIXTURE/maps")
fi
# a symbol server is one nothing listens on: no request leaves the machine, each costs a warning
args=()
for a in "$@"; do
	[ "${prev-}" = --symbol-server ] && a=http://127.0.0.1:1
	args+=("$a")
	prev=$a
done
exec "$PERFCONV" "${args[@]}" "${extra[@]}"
EOF
chmod +x "$STUB/perf" "$STUB/perfconv"
export README_ROOT=$top/$ROOT README_TOP=$top

# two packs for the transfer box and the shards
mkdir -p "$TMP/incoming"
for f in fp-callgraph dotnet-perfmap-only; do
	README_FIXTURE=$top/$FIX/$f PATH=$STUB:$PATH perfconv -q -i "$top/$FIX/$f/perf.data" -o "$TMP/incoming/$f.perfpack" ||
		fail readme/recipes "cannot make a pack of fixtures/$f"
done

# ---------------------------------------------------------------------------------------------------
# README.md's blocks in their order, then docs/recipes.md's: DOC/N-NAME.sh
blocks=$(for doc in readme recipes; do (cd "$TMP/blocks/$doc" && ls | grep '\.sh$' | sort -n | sed "s|^|$doc/|"); done)
for b in $blocks; do
	base=$TMP/blocks/${b%.sh}
	sh=$base.sh
	id=$(basename "$base")
	name=readme/$id
	[ "${b%%/*}" = recipes ] && name=readme/recipes/$id
	section=${id#*-}
	selected "$name" || continue
	if [ -f "$base.skip" ]; then
		skip "$name" "$(cat "$base.skip")"
		continue
	fi
	missing=
	while IFS= read -r c; do
		PATH=$STUB:$PATH command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done <"$base.cmds"
	if [ -n "$missing" ]; then
		skip "$name" "not installed:$missing (scripts/install-deps.sh --test)"
		continue
	fi
	d=$TMP/case/$id
	mkdir -p "$d"
	cp -r "$TMP/incoming" "$d/"
	echo : >"$d/boxes.txt"
	fx=$top/$FIX/${FIXTURE[$section]:-fp-callgraph}
	cp "$fx/perf.data" "$d/perf.data"
	for b in ${BESIDE[$section]-}; do
		cp "$fx/$b" "$d/"
	done
	(cd "$d" && README_FIXTURE=$fx README_RECORDINGS=${RECORDINGS[$section]-} README_ROOT=$top/${ROOTS[$section]:-$ROOT} \
		PATH=$STUB:$PATH timeout 60 bash -e -o pipefail "$sh") >"$d.stdout" 2>"$d.stderr" </dev/null
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc" "$d.stderr"
		continue
	fi
	empty=
	while IFS= read -r o; do
		[ -s "$d/$o" ] || { [ -d "$d/$o" ] && [ -n "$(ls -A "$d/$o")" ]; } || empty="$empty $o"
	done <"$base.out"
	for g in ${EXPECT[$section]-}; do
		# shellcheck disable=SC2086  # the glob is meant to expand
		set -- "$d"/$g
		[ -s "$1" ] || empty="$empty $g"
	done
	want=${CONTAINS[$section]-}
	if [ -n "$empty" ]; then
		fail "$name" "missing or empty:$empty" "$d.stderr"
	elif [ -n "$want" ] && ! grep -qF -- "${want#*:}" "$d/${want%%:*}"; then
		fail "$name" "${want%%:*} has no '${want#*:}': the recipe's frames are not named" "$d.stderr"
	else
		pass "$name"
	fi
done
[ -n "$(ls "$TMP/blocks/readme")" ] || fail readme/recipes "no \`\`\`sh block in README.md"
[ -n "$(ls "$TMP/blocks/recipes")" ] || fail readme/recipes "no \`\`\`sh block in docs/recipes.md"

# ---------------------------------------------------------------------------------------------------
if selected readme/blocks; then
	if grep -v ' sh$' "$TMP/fences" >"$TMP/other"; then
		sed 's/^\([^ ]*\) /\1 line /' "$TMP/other" >"$TMP/other.txt"
		fail readme/blocks "code blocks that are not \`\`\`sh, which this test would not run" "$TMP/other.txt"
	else
		pass readme/blocks
	fi
fi

if selected readme/size; then
	size=$(wc -c <"$README")
	if [ "$size" -le 9500 ]; then
		pass readme/size
	else
		fail readme/size "README.md has $size bytes, more than 9,500: move the reference into docs/"
	fi
fi

if selected readme/links; then
	python3 - "$README" "$top"/docs/*.md >"$TMP/links" <<'EOF'
import os, re, sys
def slug(h):
    return re.sub(r'[^\w\- ]', '', h.strip().lower()).replace(' ', '-')
def anchors(path):
    text = re.sub(r'```.*?```', '', open(path, encoding='utf-8').read(), flags=re.S)
    return {slug(l.lstrip('#')) for l in text.split('\n') if l.startswith('#')}
for md in sys.argv[1:]:
    text = re.sub(r'```.*?```', '', open(md, encoding='utf-8').read(), flags=re.S)
    text = re.sub(r'`[^`\n]*`', '', text)
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'^[a-z]+:', target):
            continue
        path, _, anchor = target.partition('#')
        full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        where = os.path.relpath(md)
        if not os.path.exists(full):
            print(f'{where}: {target}: no such file')
        elif anchor and full.endswith('.md') and anchor not in anchors(full):
            print(f'{where}: {target}: no heading #{anchor} in {os.path.relpath(full)}')
EOF
	if [ -s "$TMP/links" ]; then
		fail readme/links "links that do not resolve" "$TMP/links"
	else
		pass readme/links
	fi
fi
