#!/usr/bin/env bash
# tests/data/r2r/composite/make.sh - regenerate the composite ReadyToRun test data: two assemblies
# (src/app: app.dll, src/lib: fmt.dll, with generic, nested, array, byref and function pointer
# signatures) compiled by crossgen2 into one composite app.r2r.dll with its component stubs
# app.dll and fmt.dll, and fmt.dll alone into single/fmt.dll; each with crossgen2's own r2rmap
# (--perfmap, format 1), the oracle of test_ecma.  Needs the .NET 10 SDK with NuGet reachable
# (the crossgen2 package comes from a ReadyToRun publish) and runtime 10.0.12 for the references.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
cp -r "$here/src/app" "$here/src/lib" "$work/"
(cd "$work/app" && dotnet build -c Release -o ../il >/dev/null)
cg=$(ls ~/.nuget/packages/microsoft.netcore.app.crossgen2.linux-x64/*/tools/crossgen2 | tail -n 1)
refs='/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/*.dll'
common=(-r "$refs" --targetos:linux --targetarch:x64 -O --perfmap --perfmap-format-version:1)
"$cg" "$work/il/app.dll" "$work/il/fmt.dll" --composite --inputbubble --out:"$here/app.r2r.dll" \
	--perfmap-path:"$here" "${common[@]}"
"$cg" "$work/il/fmt.dll" --out:"$here/single/fmt.dll" --perfmap-path:"$here/single" "${common[@]}"
