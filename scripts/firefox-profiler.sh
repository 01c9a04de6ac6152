#!/usr/bin/env bash
# firefox-profiler.sh - build the Firefox Profiler (https://github.com/firefox-devtools/profiler)
# for tests/firefox.sh, which loads perfconv's -f firefox files into it in headless Chromium.
#
#   scripts/firefox-profiler.sh [--print-dir]
#
# It clones the profiler at the pinned commit below from a local mirror when one is there
# ($FXPROF_MIRROR, default /work/.mirror/firefox-devtools+profiler/repo), else from GitHub, into
# $XDG_CACHE_HOME/perfconv/firefox-profiler/COMMIT (outside the repository), installs its npm
# packages with yarn 1 (from the npm registry, by its own yarn.lock) and makes the production
# build (dist/).  A finished build is kept and found again: the script then only prints its
# directory.  --print-dir prints the directory whether or not it is built, and builds nothing.
#
# The profiler asks for Node 24; its build (esbuild) runs on Node 20 as Debian's and NodeSource's
# packages give it, so the engine checks are skipped (--ignore-engines, and the preinstall
# script that checks the versions is not run).  Its postinstall steps are run by hand:
# patch-package (the profiler patches some of its packages); husky (git hooks) is not wanted.
set -euo pipefail

commit=622a37f90845dafb8ff748d053634c733364361f
mirror=${FXPROF_MIRROR:-/work/.mirror/firefox-devtools+profiler/repo}
dir=${XDG_CACHE_HOME:-$HOME/.cache}/perfconv/firefox-profiler/$commit

if [ "${1:-}" = --print-dir ]; then
	echo "$dir"
	exit 0
fi
if [ -f "$dir/dist/index.html" ] && [ -f "$dir/.perfconv-built" ]; then
	echo "$dir"
	exit 0
fi
command -v node >/dev/null && command -v npx >/dev/null || {
	echo "firefox-profiler.sh: node and npx are needed" >&2
	exit 1
}
mkdir -p "$(dirname "$dir")"
if [ ! -d "$dir/.git" ]; then
	rm -rf "$dir.tmp"
	if [ -d "$mirror" ]; then
		git clone -q --no-checkout "$mirror" "$dir.tmp"
	else
		git clone -q --no-checkout https://github.com/firefox-devtools/profiler "$dir.tmp"
	fi
	git -C "$dir.tmp" -c advice.detachedHead=false checkout -q "$commit"
	mv "$dir.tmp" "$dir"
fi
cd "$dir"
# The npm registry reachable here lacks iongraph-web 0.2.1 (the IonGraph view of SpiderMonkey's
# JIT, which perfconv's files never open): 0.1.16 stands in, resolved anew by yarn (the rest of
# yarn.lock is used as it is), and the view that needs it is left out.
if grep -q '"iongraph-web": "0.2.1"' package.json; then
	sed -i 's/"iongraph-web": "0.2.1"/"iongraph-web": "0.1.16"/' package.json
	python3 - <<'PY'
import re
s = open("yarn.lock").read()
s = re.sub(r'\niongraph-web@0\.2\.1:\n(?:  .*\n)+', '\n', s)
open("yarn.lock", "w").write(s)
PY
fi
# 0.1.16 has no React viewer: the view of an iongraph.json source renders nothing instead
cat > src/components/shared/IonGraphView.tsx <<'TSX'
/* perfconv's build: iongraph-web 0.2.1 is not on the registry it installs from. */
import type { LineTimings } from 'firefox-profiler/types';

type IonGraphViewProps = {
  readonly sourceCode: string;
  readonly timings: LineTimings;
};

export function IonGraphView(_props: IonGraphViewProps) {
  return <div />;
}
TSX
# npx runs from / : npm 11 refuses to run in a directory whose package.json asks for another Node
yarn=(env -C / npx --yes yarn@1.22.22 --cwd "$dir")
# yarn 1 can trip over its own parallel extraction into its cache ("the file appears to be
# corrupt"); a second run finds what the first one fetched
for try in 1 2 3; do
	"${yarn[@]}" install --ignore-engines --ignore-scripts --non-interactive --network-timeout 600000 >&2 && break
	[ $try = 3 ] && exit 1
	sleep 2
done
# esbuild's binary comes as an optional package; its install script only checks it
node node_modules/esbuild/install.js >&2
node node_modules/patch-package/index.js >&2
NODE_ENV=production node scripts/build.mjs >&2
# the service worker (yarn build-sw): the app registers /sw.js and fails on a page without it
node_modules/.bin/workbox generateSW workbox-config.js >&2
test -f dist/index.html
touch .perfconv-built
echo "$dir"
