#!/usr/bin/env bash
# tests/data/r2r/make.sh - regenerate the ReadyToRun test data: publish r2rapp (Program.cs) with
# ReadyToRun code and its crossgen2 perf map, and record it with perf.  Needs the .NET SDK
# (dotnet, with NuGet reachable for the crossgen2 package) and perf.  The recording refers to
# /tmp/r2rapp/out/r2rapp.dll and to the shared framework of the SDK that ran it; tests/r2r.sh
# rebuilds that tree under a --symfs directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/r2rapp
rm -rf "$work"
mkdir -p "$work"
cp "$here/Program.cs" "$here/r2rapp.csproj" "$work/"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
(cd "$work" && dotnet publish -c Release -o out >/dev/null)
cp "$work/out/r2rapp.dll" "$work/out/r2rapp.ni.r2rmap" "$here/"
# frame pointers are enough: R2R and runtime code keep rbp frames
perf record -q -F 999 -g -o "$here/perf.data" dotnet "$work/out/r2rapp.dll" 1 >/dev/null
dotnet --list-runtimes | sed -n 's/^Microsoft.NETCore.App \([^ ]*\) .*/\1/p' >"$here/runtime-version"
echo "recorded with $(perf --version) and runtime $(cat "$here/runtime-version")"
