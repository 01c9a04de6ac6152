#!/usr/bin/env bash
# tests/r2r-truth.sh - ReadyToRun method names from the image's own metadata (`perfconv --r2r-dump`)
# against the two real oracles, with tests/tools/r2r-truth.py:
#   - crossgen2's r2rmap of the image (tests/data/r2r-truth: an app and its library published by
#     the SDK, three ways: default, hot/cold split, framework-dependent composite; make.sh there):
#     *-r2rmap   the r2rmap style is crossgen2's file line for line (RVA, length, name);
#     *-runtime  the runtime style names, at each r2rmap entry's RVA and with its length, the same
#                method: owner type, method name, parameter and return types, [PreJIT] tag;
#   - the [PreJIT] records of the runtime's own jitdump (DOTNET_PerfMapEnabled=2, with
#     DOTNET_PerfMapStubGranularity=2 that 10.0.12 needs), placed by the process's mappings:
#     prejit-*   the runtime style line at the record's RVA is the record's name byte for byte:
#                framework  a run of the default build, every framework and app image it used;
#                split      cold parts, [PreJit-cold];  composite  the composite image;
#                fixture    fixtures/dotnet-jitdump's jitdump, placed by its perf.data's MMAP2;
#   - detects-change: one changed character in perfconv's output makes each comparison fail;
#   - full-composite (R2R_TRUTH_FULL=1 only: ~2-9 min and ~210 MB of NuGet packages): the app
#     and the whole framework published self-contained as one composite image (200,000 methods),
#     r2rmap, runtime style and a run's [PreJIT] records; kept in build/r2r-truth/ for the next run.
# The live runs need the .NET 10 runtime (dotnet); without it they skip.  Prints "ok    NAME",
# "FAIL  NAME: why" or "skip  NAME: why" lines for tests/run.sh.
#
#   PERFCONV          binary under test;  FILTERS="w1 w2"  only cases whose name has one of the words
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" r2r-truth
need_python r2r-truth
need_perfconv r2r-truth
DATA=$top/tests/data/r2r-truth
TOOL=$top/tests/tools/r2r-truth.py
RULES=(--asm Truth.App=truthapp --asm Truth.Lib=truthlib)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# the installed .NET 10 runtime, for the live runs and the framework's reference assemblies
RTDIR=
if command -v dotnet >/dev/null 2>&1; then
	RTDIR=$(dotnet --list-runtimes 2>/dev/null | sed -n 's/^Microsoft.NETCore.App \(10\.[^ ]*\) \[\(.*\)\]$/\2\/\1/p' | tail -n 1)
fi
[ -n "$RTDIR" ] && [ -d "$RTDIR" ] || RTDIR=

# unpack BUILD: the build's DLLs and files in $TMP/BUILD
unpack() {
	local b=$1 f
	[ -d "$TMP/$b" ] && return 0
	mkdir -p "$TMP/$b"
	for f in "$DATA/$b"/*; do
		case $f in
		*.xz) xz -dc "$f" >"$TMP/$b/$(basename "$f" .xz)" ;;
		*) cp "$f" "$TMP/$b/" ;;
		esac
	done
}

# summary FILE: the tool's first result line, cut to "N of M (P%)"
summary() { sed -n 's/.*: \([0-9]* of [0-9]* ([0-9.]*%)\)$/\1/p' "$1" | head -n 1; }

# static BUILD STYLE: each r2rmap of BUILD against perfconv's STYLE (r2rmap or runtime) output
static() {
	local b=$1 style=$2 name=r2r-truth/$1-$2 map img bad= res=
	selected "$name" || return 0
	unpack "$b"
	for map in "$TMP/$b"/*.ni.r2rmap; do
		img=${map%.ni.r2rmap}.dll
		"$PERFCONV" --r2r-dump "$img" --r2r-dump-style "$style" >"$img.$style" 2>"$img.$style.err"
		rc=$?
		if [ "$rc" != 0 ]; then
			fail "$name" "perfconv --r2r-dump $(basename "$img") --r2r-dump-style $style: exit status $rc" "$img.$style.err"
			return
		fi
		if [ "$style" = r2rmap ]; then
			python3 "$TOOL" r2rmap "$map" "$img.$style" >"$img.$style.cmp" 2>&1
		else
			python3 "$TOOL" runtime "$map" "$img.$style" "${RULES[@]}" --ref-dir "$TMP/$b" \
				${RTDIR:+--ref-dir "$RTDIR"} >"$img.$style.cmp" 2>&1
		fi
		[ $? = 0 ] || bad="$bad $img.$style.cmp"
		res="$res, $(basename "$img") $(summary "$img.$style.cmp")"
	done
	if [ -n "$bad" ]; then
		# shellcheck disable=SC2086
		cat $bad >"$TMP/$b-$style.cmp"
		fail "$name" "perfconv's $style style differs from crossgen2's r2rmap:${res#,}" "$TMP/$b-$style.cmp"
	elif [ "$b" = split ] && [ "$style" = runtime ] && ! grep -q '\[PreJit-cold\]$' "$TMP/$b/truthapp.dll.runtime"; then
		fail "$name" "no [PreJit-cold] line: the hot/cold split image has cold parts (HotColdMap)"
	else
		pass "$name (${res#, })"
	fi
}

for b in default split composite; do
	static "$b" r2rmap
	static "$b" runtime
done

# --- the runtime's [PreJIT] records ----------------------------------------------------------------
# run BUILD: the build's app run once with a jitdump; its /proc/self/maps is copied by the app
# at the end.  Sets why (empty when the run worked); the jitdump is $TMP/BUILD.dump.
run() {
	local b=$1
	why=
	[ -f "$TMP/$b.dump" ] && return 0
	if [ -z "$RTDIR" ]; then
		why="no .NET 10 runtime (dotnet --list-runtimes)"
		return
	fi
	unpack "$b"
	mkdir -p "$TMP/$b.jd"
	DOTNET_PerfMapEnabled=2 DOTNET_PerfMapStubGranularity=2 DOTNET_PerfMapJitDumpPath=$TMP/$b.jd \
		timeout 120 dotnet "$TMP/$b/truthapp.dll" "$TMP/$b.maps" >"$TMP/$b.run.log" 2>&1 </dev/null
	rc=$?
	if [ "$rc" != 0 ] || [ ! -s "$TMP/$b.maps" ]; then
		why="the app's run failed (exit status $rc)"
		return
	fi
	mv "$TMP/$b.jd"/jit-*.dump "$TMP/$b.dump" 2>/dev/null || why="the runtime wrote no jitdump"
}

# prejit NAME BUILD MIN [--only IMAGE]...: the records of BUILD's run; at least MIN of them
prejit() {
	local name=$1 b=$2 min=$3 n out imgs
	shift 3
	selected "$name" || return 0
	run "$b"
	if [ -n "$why" ]; then
		case $why in
		no*) skip "$name" "$why" ;;
		*) fail "$name" "$why" "$TMP/$b.run.log" ;;
		esac
		return
	fi
	out=$TMP/${name#r2r-truth/}.cmp
	PERFCONV=$PERFCONV python3 "$TOOL" prejit "$TMP/$b.dump" "$TMP/$b.maps" "$@" >"$out" 2>&1
	rc=$?
	n=$(summary "$out")
	if [ "$rc" != 0 ]; then
		fail "$name" "[PreJIT] names differ from perfconv's: $n" "$out"
	elif [ "${n%% *}" -lt "$min" ]; then
		fail "$name" "only ${n%% *} [PreJIT] records (at least $min expected): the run did not reach the code" "$out"
	elif [ "$b" = split ] && ! grep -q '^cold parts: [1-9]' "$out"; then
		fail "$name" "no [PreJit-cold] record in the run of the hot/cold split build" "$out"
	else
		imgs=$(sed -n 's/^images: //p' "$out")
		pass "$name ($n byte for byte in $(($(tr -cd , <<<"$imgs" | wc -c) + 1)) images: $(cut -c1-120 <<<"$imgs")...)"
	fi
}

prejit r2r-truth/prejit-framework default 1000
prejit r2r-truth/prejit-split split 50 --only /truthapp.dll --only /truthlib.dll
prejit r2r-truth/prejit-composite composite 50 --only /truthapp.r2r.dll

# fixtures/dotnet-jitdump: the jitdump of a recorded .NET 10.0.12 run; the image bases from the
# MMAP2 records of its perf.data; the images are the installed framework (the fixture's runtime).
if selected r2r-truth/prejit-fixture; then
	FX=$FIX/dotnet-jitdump
	dump=$(ls "$FX"/maps/jit-*.dump.xz 2>/dev/null | head -n 1)
	if [ ! -f "$FX/perf.data" ] || [ -z "$dump" ]; then
		fail r2r-truth/prejit-fixture "no fixtures/dotnet-jitdump with its jitdump"
	elif why=$(missing_runtime "$FX"); then
		skip r2r-truth/prejit-fixture "$why"
	else
		xz -dc "$dump" >"$TMP/fixture.dump"
		PERFCONV=$PERFCONV python3 "$TOOL" prejit "$TMP/fixture.dump" "$FX/perf.data" --symfs "$ROOT" >"$TMP/fixture.cmp" 2>&1
		rc=$?
		n=$(summary "$TMP/fixture.cmp")
		if [ "$rc" != 0 ]; then
			fail r2r-truth/prejit-fixture "[PreJIT] names differ from perfconv's: $n" "$TMP/fixture.cmp"
		elif [ "${n%% *}" -lt 300 ]; then
			fail r2r-truth/prejit-fixture "only ${n%% *} [PreJIT] records compared, the fixture has 306" "$TMP/fixture.cmp"
		else
			pass "r2r-truth/prejit-fixture ($n byte for byte; $(sed -n 's/^images: //p' "$TMP/fixture.cmp"))"
		fi
	fi
fi

# --- each comparison can fail: perfconv's output with one character changed ---------------------
if selected r2r-truth/detects-change; then
	unpack default
	cat >"$TMP/mutant" <<EOF
#!/bin/sh
# perfconv with one character of one name changed (Native::SumPtr, a method the app runs)
"$PERFCONV" "\$@" | sed 's/Native::SumPtr(/Native::SumPts(/'
EOF
	chmod +x "$TMP/mutant"
	m=$TMP/default/truthapp
	missed=
	"$TMP/mutant" --r2r-dump "$m.dll" --r2r-dump-style r2rmap >"$m.mut" 2>/dev/null
	python3 "$TOOL" r2rmap "$m.ni.r2rmap" "$m.mut" >"$TMP/mut.cmp" 2>&1 && missed="$missed r2rmap"
	"$TMP/mutant" --r2r-dump "$m.dll" >"$m.mut" 2>/dev/null
	python3 "$TOOL" runtime "$m.ni.r2rmap" "$m.mut" "${RULES[@]}" >>"$TMP/mut.cmp" 2>&1 && missed="$missed runtime"
	run default
	if [ -z "$why" ]; then
		PERFCONV=$TMP/mutant python3 "$TOOL" prejit "$TMP/default.dump" "$TMP/default.maps" --only /truthapp.dll >>"$TMP/mut.cmp" 2>&1 &&
			missed="$missed prejit"
	fi
	if [ -n "$missed" ]; then
		fail r2r-truth/detects-change "a changed name passed:$missed" "$TMP/mut.cmp"
	elif [ "$(grep -c 'SumPts' "$TMP/mut.cmp")" -lt "$([ -z "$why" ] && echo 3 || echo 2)" ]; then
		fail r2r-truth/detects-change "the changed name is not among the reported mismatches" "$TMP/mut.cmp"
	else
		pass "r2r-truth/detects-change (r2rmap, runtime$([ -z "$why" ] && echo ', prejit'))"
	fi
fi

# --- the whole framework as one composite image (opt-in) ------------------------------------------
if selected r2r-truth/full-composite; then
	if [ "${R2R_TRUTH_FULL:-0}" != 1 ]; then
		skip r2r-truth/full-composite "set R2R_TRUTH_FULL=1 (publishes app and framework as one self-contained composite: minutes, ~210 MB of NuGet packages)"
	elif [ -z "$RTDIR" ] || ! dotnet --list-sdks 2>/dev/null | grep -q '^10\.'; then
		skip r2r-truth/full-composite "no .NET 10 SDK"
	else
		key=$({ cat "$DATA"/app/* "$DATA"/lib/* "$DATA/make.sh"; dotnet --version; } | sha256sum | cut -c1-16)
		full=$top/build/r2r-truth/full-$key
		start=$SECONDS
		if [ ! -f "$full/truthapp.r2r.ni.r2rmap" ]; then
			FULL=1 NUGET_PACKAGES=${NUGET_PACKAGES:-$top/build/r2r-truth/nuget} "$DATA/make.sh" "$full" >"$TMP/full.log" 2>&1 ||
				{ fail r2r-truth/full-composite "make.sh FULL=1 failed" "$TMP/full.log"; full=; }
		fi
		built=$((SECONDS - start))
		if [ -n "$full" ]; then
			res=
			for style in r2rmap runtime; do
				"$PERFCONV" --r2r-dump "$full/truthapp.r2r.dll" --r2r-dump-style $style >"$TMP/full.$style" 2>"$TMP/full.$style.err"
				if [ $style = r2rmap ]; then
					python3 "$TOOL" r2rmap "$full/truthapp.r2r.ni.r2rmap" "$TMP/full.$style" >"$TMP/full.$style.cmp" 2>&1
				else
					python3 "$TOOL" runtime "$full/truthapp.r2r.ni.r2rmap" "$TMP/full.$style" "${RULES[@]}" --ref-dir "$full" >"$TMP/full.$style.cmp" 2>&1
				fi
				[ $? = 0 ] || res="$res $style"
			done
			mkdir -p "$TMP/full.jd"
			DOTNET_PerfMapEnabled=2 DOTNET_PerfMapStubGranularity=2 DOTNET_PerfMapJitDumpPath=$TMP/full.jd \
				timeout 120 "$full/truthapp" "$TMP/full.maps" >"$TMP/full.run.log" 2>&1 </dev/null
			PERFCONV=$PERFCONV python3 "$TOOL" prejit "$TMP"/full.jd/jit-*.dump "$TMP/full.maps" >"$TMP/full.prejit.cmp" 2>&1 || res="$res prejit"
			cat "$TMP"/full.*.cmp >"$TMP/full.cmp"
			sum="r2rmap $(summary "$TMP/full.r2rmap.cmp"), runtime $(summary "$TMP/full.runtime.cmp"), [PreJIT] $(summary "$TMP/full.prejit.cmp"); built in ${built}s"
			if [ -n "$res" ]; then
				fail r2r-truth/full-composite "differs in:$res ($sum)" "$TMP/full.cmp"
			else
				pass "r2r-truth/full-composite ($sum)"
			fi
		fi
	fi
fi
exit 0
