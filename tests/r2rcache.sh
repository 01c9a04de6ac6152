#!/usr/bin/env bash
# tests/r2rcache.sh - the symbol cache's ReadyToRun entries (converter/r2rframes.c, r2rcache.c):
# each .NET image's method names kept under its MVID in $XDG_CACHE_HOME/perfconv/r2r, on the .NET
# fixture dotnet-aspnet (its frames in the framework's ReadyToRun images), converted to folded
# without --perf-compat (which never uses the cache).
#
#   r2rcache/hit        the first conversion with an empty cache misses and writes an entry per
#                       image, the second hits every one (-v's "ReadyToRun method cache" line) and
#                       both give the bytes of a conversion with the cache off
#   r2rcache/corrupt    an entry with a byte changed on disk is reported corrupt, not used, the
#                       output the same; it is written again and the next conversion hits
#   r2rcache/off        --no-cache and PERFCONV_CACHE=0 leave no r2r directory
#   r2rcache/pack       a pack made after a hit holds the files a pack made without the cache holds,
#                       and converts (in tests/tools/isolate.sh, when it can run) to the same bytes
#
#   PERFCONV, FIXTURES   as for tests/run.sh;  FILTERS="w1 w2"  only cases whose name has a word
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" r2rcache
need_perfconv r2rcache
cases=(r2rcache/hit r2rcache/corrupt r2rcache/off r2rcache/pack)
DA=$FIX/dotnet-aspnet
[ -f "$DA/perf.data" ] || { fail r2rcache "no fixture $DA"; exit 0; }
why=$(missing_runtime "$DA") && skip_all "$why"
ARGS=(-i "$DA/perf.data" --symfs "$ROOT" --kallsyms "$DA/kallsyms" --map-dir "$DA/maps")
export XDG_CACHE_HOME=$TMP/xdg
R2R=$XDG_CACHE_HOME/perfconv/r2r

# conv NAME ARGS...: perfconv -v ARGS... -f folded -o TMP/NAME.folded, stderr in TMP/NAME.err
conv() {
	local n=$1
	shift
	"$PERFCONV" -v "${ARGS[@]}" "$@" -f folded -o "$TMP/$n.folded" 2>"$TMP/$n.err" </dev/null
}
# cacheline NAME: the -v line of the ReadyToRun method cache
cacheline() { grep -o 'ReadyToRun method cache: [0-9]* hit, [0-9]* miss[^(]*' "$TMP/$1.err" | sed 's/ *$//'; }

PERFCONV_CACHE=0 conv off0 || { fail r2rcache/hit "the conversion with the cache off failed" "$TMP/off0.err"; exit 0; }
[ -s "$TMP/off0.folded" ] || { fail r2rcache/hit "no output" "$TMP/off0.err"; exit 0; }

if selected r2rcache/hit || selected r2rcache/corrupt || selected r2rcache/pack; then
	rm -rf "$XDG_CACHE_HOME"
	conv first && conv second
	l1=$(cacheline first) l2=$(cacheline second)
	n=$(ls "$R2R" 2>/dev/null | wc -l)
	if [[ $l1 =~ ^'ReadyToRun method cache: 0 hit, '([0-9]+)' miss'$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] &&
		[ "${BASH_REMATCH[1]}" = "$n" ] && [ "$l2" = "ReadyToRun method cache: $n hit, 0 miss" ] &&
		cmp -s "$TMP/off0.folded" "$TMP/first.folded" && cmp -s "$TMP/off0.folded" "$TMP/second.folded"; then
		selected r2rcache/hit && pass "r2rcache/hit ($n images: '$l1', then '$l2')"
	else
		selected r2rcache/hit && fail r2rcache/hit "first '$l1', second '$l2', $n entries; outputs $(cmp "$TMP/off0.folded" "$TMP/first.folded" 2>&1) $(cmp "$TMP/off0.folded" "$TMP/second.folded" 2>&1)" "$TMP/second.err"
	fi
fi

if selected r2rcache/corrupt; then
	# the largest entry (System.Private.CoreLib's): one byte of its names changed
	e=$(ls -S "$R2R" | head -n 1)
	size=$(stat -c %s "$R2R/$e")
	printf '#' | dd of="$R2R/$e" bs=1 seek=$((size - 40)) conv=notrunc status=none
	conv corrupt
	lc=$(cacheline corrupt)
	written=$([ -s "$R2R/$e" ] && echo yes)
	conv after
	la=$(cacheline after)
	if [[ $lc == *"corrupt entries ignored and written again"* ]] && [[ $lc == *", 1 miss"* ]] &&
		cmp -s "$TMP/off0.folded" "$TMP/corrupt.folded" && [ "$written" = yes ] &&
		[[ $la == *" hit, 0 miss" ]] && cmp -s "$TMP/off0.folded" "$TMP/after.folded"; then
		pass "r2rcache/corrupt ('$lc', then '$la')"
	else
		fail r2rcache/corrupt "with the changed entry '$lc', entry written again: ${written:-no}, after '$la'; outputs $(cmp "$TMP/off0.folded" "$TMP/corrupt.folded" 2>&1)" "$TMP/corrupt.err"
	fi
fi

if selected r2rcache/off; then
	bad=
	for how in flag env; do
		rm -rf "$XDG_CACHE_HOME"
		if [ $how = flag ]; then
			conv off-$how --no-cache
		else
			PERFCONV_CACHE=0 conv off-$how
		fi
		[ -e "$R2R" ] && bad="$bad $how: $R2R exists;"
		grep -q 'ReadyToRun method cache' "$TMP/off-$how.err" && bad="$bad $how: -v reports the cache;"
		cmp -s "$TMP/off0.folded" "$TMP/off-$how.folded" || bad="$bad $how: another output;"
	done
	if [ -z "$bad" ]; then
		pass r2rcache/off
	else
		fail r2rcache/off "$bad"
	fi
fi

if selected r2rcache/pack; then
	# a warm cache (every image hits), then a pack; and a pack with the cache off
	rm -rf "$XDG_CACHE_HOME"
	conv warm
	"$PERFCONV" "${ARGS[@]}" -v -f pack -o "$TMP/hit.perfpack" 2>"$TMP/hit.err" </dev/null
	lh=$(cacheline hit)
	PERFCONV_CACHE=0 "$PERFCONV" -q "${ARGS[@]}" -f pack -o "$TMP/nocache.perfpack" 2>"$TMP/nocache.err" </dev/null
	tar --zstd -tf "$TMP/hit.perfpack" 2>/dev/null | sort >"$TMP/hit.list"
	tar --zstd -tf "$TMP/nocache.perfpack" 2>/dev/null | sort >"$TMP/nocache.list"
	nr=$(grep -c '\.dll$' "$TMP/hit.list")
	bad=
	[[ $lh == *" hit, 0 miss" ]] || bad="the pack's conversion did not hit: '$lh'"
	[ "$nr" -gt 0 ] || bad="${bad:-no .dll in the pack}"
	diff "$TMP/nocache.list" "$TMP/hit.list" >"$TMP/pack.diff" || bad="${bad:-the packs hold other files}"
	iso_note=
	if [ -z "$bad" ]; then
		# converted where none of the files are: all of them from the pack
		W=$TMP/w
		mkdir -p "$W"
		cp "$TMP/hit.perfpack" "$W/"
		bindir=$(dirname "$(command -v "$PERFCONV")")
		if "$top/tests/tools/isolate.sh" -k "$W" -k "$bindir" -x "$(cd "$FIX" && pwd)" -- \
			"$PERFCONV" -q --no-cache -i "$W/hit.perfpack" -f folded -o "$W/pack.folded" 2>"$TMP/iso.err" </dev/null; then
			cmp -s "$TMP/off0.folded" "$W/pack.folded" || bad="the pack made after a hit converts to other bytes"
		elif [ "$(id -u)" != 0 ]; then
			iso_note=", not converted: the isolation needs root"
		else
			bad="the pack's conversion failed"
		fi
	fi
	if [ -z "$bad" ]; then
		pass "r2rcache/pack ($nr .dll files in both packs$iso_note)"
	else
		fail r2rcache/pack "$bad" "$TMP/pack.diff"
	fi
fi
exit 0
