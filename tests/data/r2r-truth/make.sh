#!/usr/bin/env bash
# tests/data/r2r-truth/make.sh - build the ReadyToRun ground-truth data of tests/r2r-truth.sh:
# the app of app/ (with its library lib/) published by the .NET SDK with crossgen2 and its r2rmaps,
# three ways (framework-dependent, linux-x64):
#   default/    -p:PublishReadyToRun=true -p:PublishReadyToRunEmitSymbols=true (what the SDK does)
#   split/      the same plus crossgen2 --hot-cold-splitting: methods with cold parts (HotColdMap)
#   composite/  the same plus -p:PublishReadyToRunComposite=true: truthapp.r2r.dll holds the code
#               of both assemblies, truthapp.dll and truthlib.dll are its component stubs
# Each directory keeps what a run needs (DLLs xz-compressed, runtimeconfig, deps) and crossgen2's
# *.ni.r2rmap files, the oracle.  Needs the .NET 10 SDK with NuGet reachable (the crossgen2 and
# runtime packs, ~210 MB in NUGET_PACKAGES).
#   FULL=1 make.sh OUTDIR   instead: the app and the whole framework published self-contained as one
#                           composite image (truthapp.r2r.dll), into OUTDIR (tests/r2r-truth.sh)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/r2r-truth-make.XXXXXX")
trap 'rm -rf "$work"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export NUGET_PACKAGES=${NUGET_PACKAGES:-$HOME/.nuget/packages}
common=(-c Release -r linux-x64 -p:PublishReadyToRun=true -p:PublishReadyToRunEmitSymbols=true
	--disable-build-servers -nodeReuse:false -p:UseSharedCompilation=false)

# publish NAME ARGS...: a clean copy of the sources published into $work/NAME
publish() {
	local name=$1
	shift
	rm -rf "$work/src"
	mkdir -p "$work/src"
	cp -R "$here/app" "$here/lib" "$work/src/"
	(cd "$work/src/app" && dotnet publish "${common[@]}" -o "$work/$name" "$@" >"$work/$name.log" 2>&1) || {
		grep -E 'error' "$work/$name.log" >&2 || tail -n 20 "$work/$name.log" >&2
		exit 1
	}
}

if [ "${FULL:-0}" = 1 ]; then
	out=${1:?FULL=1 needs an output directory}
	publish full --self-contained true -p:PublishReadyToRunComposite=true
	rm -rf "$out"
	mkdir -p "$(dirname "$out")"
	mv "$work/full" "$out"
	exit 0
fi

publish default --self-contained false
publish split --self-contained false -p:PublishReadyToRunCrossgen2ExtraArgs=--hot-cold-splitting
publish composite --self-contained false -p:PublishReadyToRunComposite=true
for b in default split composite; do
	rm -rf "${here:?}/$b"
	mkdir -p "$here/$b"
	for f in "$work/$b"/*.dll; do
		xz -9 -c "$f" >"$here/$b/$(basename "$f").xz"
	done
	cp "$work/$b"/*.r2rmap "$work/$b"/truthapp.runtimeconfig.json "$work/$b"/truthapp.deps.json "$here/$b/"
done
{
	echo "made by tests/data/r2r-truth/make.sh with .NET SDK $(dotnet --version)"
	ls "$NUGET_PACKAGES"/microsoft.netcore.app.crossgen2.linux-x64/ 2>/dev/null | sed 's/^/crossgen2 package /'
	dotnet --list-runtimes | sed -n 's/^Microsoft.NETCore.App \([^ ]*\) .*/runtime \1/p'
} >"$here/VERSIONS"
cat "$here/VERSIONS"
