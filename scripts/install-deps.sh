#!/usr/bin/env bash
# install-deps.sh - install the Debian packages perfconv needs, and only those that are missing.
#
#   scripts/install-deps.sh            build dependencies
#   scripts/install-deps.sh --test     build + test dependencies (make check, make asan)
#   scripts/install-deps.sh --bench    build + benchmark dependencies (make bench)
#   scripts/install-deps.sh --fuzz     build + fuzzing dependencies (make fuzz)
#   scripts/install-deps.sh --static   build + what make static builds ISA-L, libcurl, libarchive with
#   scripts/install-deps.sh --dotnet-trace   also Microsoft's dotnet-trace from NuGet, into build/tools/
#                                      (DOTNET_TOOLS=DIR elsewhere): fixtures/bin-src/dotnet/record-events.sh
#   scripts/install-deps.sh --list     print the packages that would be checked, install nothing
#
# When everything is installed this costs one dpkg-query call and prints nothing, so `make check` can
# run it every time.  Otherwise it runs `apt-get update` once and `apt-get install` for the missing
# packages, non-interactively; as root directly, else through sudo when sudo exists.
# On a system without dpkg/apt it prints a note and succeeds: install the equivalents yourself.
set -euo pipefail

build_pkgs=(make gcc pkg-config libelf-dev libdw-dev libzstd-dev libxxhash-dev zlib1g-dev libdeflate-dev libisal-dev
	libtraceevent-dev liblzma-dev libiberty-dev xz-utils
	libprotobuf-c-dev protobuf-c-compiler golang-github-google-pprof-dev libdebuginfod-dev libarchive-dev
	libcurl4-openssl-dev)
# (golang-github-google-pprof-dev only for its profile.proto, compiled by protoc-c at build time;
# libarchive-dev for packs, the tar archives in zstd that converter/files/packwrite.c writes and packread.c reads;
# libcurl4-openssl-dev for curl/curl.h: converter/native/symsrv.c loads libcurl only when symbol
# servers are named)
# The test harness (tests/run.sh, tests/truncate.sh) needs python3 and the usual coreutils/diffutils;
# mandoc lints man/perfconv.1; tests/speedscope.sh loads speedscope files into the speedscope app
# in headless chromium (its npm packages come from tests/npm/package.json, with the machine's node/npm).
# tests/svg.sh loads an SVG flame graph in headless chromium; unzip (unzip -t, zipinfo) checks the
# trace.zip archives; tests/aspnet-live.sh loads its ASP.NET Core app with curl.
# `make asan` uses gcc's -fsanitize=address,undefined: libasan/libubsan come with gcc itself, so clang
# is not needed.
# tests/pprof.sh reads the pprof output with go tool pprof (golang-go) and protoc --decode.
# tests/debuginfod.sh serves a debug file with Debian's debuginfod server on 127.0.0.1 (curl asks
# it when its scan is done).
# tests/readme.sh runs the recipes of the README and docs/recipes.md as written, one of which
# shards packs over machines with GNU parallel (Debian's parallel; its --sshlogin form is the one a
# user runs, -j 2 here).
# tests/perfview-events.sh reads trace.zip's LTTng CTF with babeltrace2 too.
test_pkgs=(python3 mandoc chromium unzip golang-go protobuf-compiler debuginfod curl parallel babeltrace2)
# bench/bench.sh records with perf, and zips perf script's text as perfcollect does.
bench_pkgs=(linux-perf zip)
# make fuzz builds the fuzz/ targets with clang's libFuzzer (-fsanitize=fuzzer), which Debian ships
# apart from the compiler.
fuzz_pkgs=(clang-14 libclang-rt-14-dev)
# make static builds ISA-L (nasm) and libcurl (OpenSSL's archives in libssl-dev) from their Debian
# source packages (dpkg-dev unpacks them), scripts/static-libs.sh; the other archives come with the
# -dev packages above.
static_pkgs=(nasm dpkg-dev libssl-dev)
# fixtures/bin-src/dotnet/record-events.sh records the runtime's events with dotnet-trace, a .NET tool
# on NuGet (not a Debian package): installed with the SDK's `dotnet tool install`, at a pinned version.
dotnet_trace_version=10.0.750501
dotnet_trace=0

want=("${build_pkgs[@]}")
list_only=0
for arg in "$@"; do
	case $arg in
	--test) want+=("${test_pkgs[@]}") ;;
	--bench) want+=("${bench_pkgs[@]}") ;;
	--fuzz) want+=("${fuzz_pkgs[@]}") ;;
	--static) want+=("${static_pkgs[@]}") ;;
	--dotnet-trace) dotnet_trace=1 ;;
	--list) list_only=1 ;;
	-h | --help)
		sed -n '2,16s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*)
		echo "install-deps.sh: unknown option '$arg'" >&2
		exit 2
		;;
	esac
done

if [ "$dotnet_trace" = 1 ] && [ "$list_only" = 0 ]; then
	tools=${DOTNET_TOOLS:-$(cd "$(dirname "$0")/.." && pwd)/build/tools}
	if [ ! -x "$tools/dotnet-trace" ]; then
		command -v dotnet >/dev/null 2>&1 || { echo "install-deps.sh: dotnet-trace needs the .NET SDK" >&2; exit 1; }
		DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
			dotnet tool install --tool-path "$tools" dotnet-trace --version "$dotnet_trace_version" >&2
	fi
fi

if [ "$list_only" = 1 ]; then
	printf '%s\n' "${want[@]}"
	exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps.sh: no dpkg/apt-get here; install the equivalents of: ${want[*]}" >&2
	exit 0
fi

# One dpkg-query for all packages.  Unknown packages are reported on stderr and left out of stdout;
# a package is present only when its status ends in "ok installed" ("install" or "hold").
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${want[@]}" 2>/dev/null || true)
missing=()
for p in "${want[@]}"; do
	if ! grep -qE "^$p(:[a-z0-9]+)? [a-z]+ ok installed\$" <<<"$installed"; then
		missing+=("$p")
	fi
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	sudo=()
elif command -v sudo >/dev/null 2>&1; then
	sudo=(sudo)
else
	echo "install-deps.sh: missing packages: ${missing[*]}" >&2
	echo "install-deps.sh: not root and no sudo; run as root: apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "install-deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q </dev/null
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" </dev/null
