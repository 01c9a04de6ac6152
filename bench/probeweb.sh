# bench/probeweb.sh - sourced by the benches that load an ASP.NET service: fixtures/bin-src/dotnet/ProbeWeb
# built once for its sources and the SDK, kept in build/dotnet-live/ProbeWeb-<hash> (as
# tests/aspnet-live.sh keeps its apps).
#
# probeweb_build TOP WORK: sets probeweb to the directory holding the ProbeWeb executable, building it
# in WORK (a scratch directory; the log is WORK/build.log) when it is not there yet.  1 when the build
# failed.
probeweb_build() {
	local top=$1 work=$2 key
	key=$({ cat "$top"/fixtures/bin-src/dotnet/ProbeWeb/*; dotnet --version; } | sha256sum | cut -c1-16)
	probeweb=$top/build/dotnet-live/ProbeWeb-$key
	[ -x "$probeweb/ProbeWeb" ] && return 0
	rm -rf "$work/src" "$work/bin"
	cp -R "$top/fixtures/bin-src/dotnet/ProbeWeb" "$work/src"
	(cd "$work/src" && dotnet build -c Release -o "$work/bin" --disable-build-servers -nodeReuse:false \
		-p:UseSharedCompilation=false) >"$work/build.log" 2>&1 || return 1
	mkdir -p "$top/build/dotnet-live"
	rm -rf "$probeweb"
	mv "$work/bin" "$probeweb"
}
