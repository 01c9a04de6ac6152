#!/usr/bin/env bash
# tests/running-kernel.sh - a recording converted without --kallsyms takes its kernel symbols from
# the running kernel (PERFCONV_RUNNING_KERNEL stands in for /proc/kallsyms, /sys/kernel/notes and
# the release) only where that kernel is the recording's: by build-id when the recording has one,
# by release when not; --perf-compat trusts it as perf 6.1 does.  The golden tests with --kallsyms
# are tests/folded.sh's; the kernel's symbols read on their own thread, tests/preload.sh's.
#   pipe-foreign/running-{compat,default,compat-symfs,default-symfs,same-release},
#   pipe-foreign/folded-unnamed[-kernel-addrs], fp-callgraph/kernel-build-id[-cache]
# Run by tests/run.sh; prints "ok    NAME" or "FAIL  NAME: why".  PERFCONV, FIXTURES and
# FILTERS="w1 w2" as for tests/run.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" running-kernel
need_perfconv running-kernel

# klines FILE: the kernel frames of a perf-script text
klines() { grep -F '([kernel.kallsyms])' "$1"; }
# running_case NAME EXPECTED WHOLE STDERR-WORDS ARGS...: the fixture's perf-script text on DIR/running
# as the running kernel; WHOLE=1 compares the whole text with EXPECTED, else its kernel lines only
running_case() {
	local name=$1 e=$2 whole=$3 words=$4 d=$TMP/case w
	shift 4
	selected "$fx/$name" || return 0
	expected "$e" >"$TMP/rexp"
	rm -rf "$d"
	mkdir -p "$d"
	PERFCONV_RUNNING_KERNEL=$(cd "$dir/running" && pwd) "$PERFCONV" -i "$in" -f perf-script -o "$d/out" "$@" 2>"$d/err" </dev/null
	rc=$?
	if [ "$whole" = 1 ]; then
		cp "$TMP/rexp" "$d/want"
		cp "$d/out" "$d/got" 2>/dev/null
	else
		klines "$TMP/rexp" >"$d/want"
		klines "$d/out" >"$d/got" 2>/dev/null
	fi
	if [ "$rc" != 0 ]; then
		fail "$fx/$name" "exit status $rc" "$d/err"
		return
	fi
	for w in $words; do
		if ! grep -q -- "$w" "$d/err"; then
			fail "$fx/$name" "stderr does not say '$w'" "$d/err"
			return
		fi
	done
	if [ -z "$words" ] && grep -q "kernel frames left unnamed" "$d/err"; then
		fail "$fx/$name" "stderr says the kernel frames are unnamed" "$d/err"
	elif [ ! -s "$d/want" ] || ! cmp -s "$d/want" "$d/got"; then
		diff -u "$d/want" "$d/got" --label "$e" --label perfconv >"$d/diff"
		fail "$fx/$name" "kernel frames differ from $e" "$d/diff"
	else
		pass "$fx/$name"
	fi
}

# A recording without a kernel build-id, from another kernel release (pipe-foreign), converted
# without --kallsyms on a machine whose kernel is DIR/running (PERFCONV_RUNNING_KERNEL: its
# kallsyms, notes and osrelease).  perf 6.1 names the kernel frames from the running kernel's
# kallsyms (wrong ones, for another machine's recording) unless --symfs is given; --perf-compat
# does the same, the default leaves them unnamed and says why and how to get names.  Only the
# kernel lines are compared where there is no --symfs (the user frames are this machine's).
for dir in "$FIX"/*/; do
	dir=${dir%/}
	[ -d "$dir/running" ] && fixture "$dir" || continue
	running_case running-compat "$exp/script-default.txt" 0 "" --perf-compat
	running_case running-default "$exp/script-default-unnamed.txt" 0 \
		"left.unnamed another.kernel.release --kallsyms -f.pack"
	running_case running-compat-symfs "$exp/script-default-unnamed.txt" 1 "--symfs" \
		--perf-compat --symfs "$ROOT"
	running_case running-default-symfs "$exp/script-default-unnamed.txt" 1 "another.kernel.release" \
		--symfs "$ROOT"
	for v in "" -kernel-addrs; do	# folded, as perf script | stackcollapse-perf.pl
		PERFCONV_RUNNING_KERNEL=$(cd "$dir/running" && pwd) golden "$fx/folded-unnamed$v" \
			"$exp/folded-unnamed$v.txt" -i "$in" --symfs "$ROOT" ${v:+--kernel --addrs}
	done
	# the same release as the recording's: the default trusts it and names the frames
	if selected "$fx/running-same-release"; then
		mkdir -p "$TMP/samerel"
		cp "$dir/running/kallsyms" "$dir/running/notes" "$TMP/samerel/"
		"$PERFCONV" -i "$in" --header 2>/dev/null | sed -n 's/^# os release : //p' >"$TMP/samerel/osrelease"
		d=$TMP/case
		rm -rf "$d"
		mkdir -p "$d"
		PERFCONV_RUNNING_KERNEL=$TMP/samerel "$PERFCONV" -i "$in" -f perf-script -o "$d/out" 2>"$d/err" </dev/null
		klines "$d/out" >"$d/got"
		expected "$exp/script-default.txt" >"$TMP/rexp"
		klines "$TMP/rexp" >"$d/want"
		if [ -s "$TMP/samerel/osrelease" ] && cmp -s "$d/want" "$d/got"; then
			pass "$fx/running-same-release"
		else
			diff -u "$d/want" "$d/got" >"$d/diff"
			fail "$fx/running-same-release" "a running kernel of the recording's release must name the frames" "$d/diff"
		fi
	fi
done

# A recording with a kernel build-id (fp-callgraph's 6ecd6ec2...), without --kallsyms: the running
# kernel's symbols name its frames when its build-id (/sys/kernel/notes) is the recorded one,
# whatever its release, and in neither mode when it is another (perf: dso__find_kallsyms).
if fixture "$FIX/fp-callgraph" && selected "$fx/kernel-build-id"; then
	kid=6ecd6ec21ec69416e50a8aa6737e500901ddb47a
	for which in same other; do
		rk=$TMP/rk-$which
		mkdir -p "$rk"
		cp "$ROOT/kallsyms" "$rk/kallsyms"
		id=$kid
		[ "$which" = other ] && id=7ecd6ec21ec69416e50a8aa6737e500901ddb47a
		python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<III", 4, 20, 3) + b"GNU\0" + bytes.fromhex(sys.argv[1]))' "$id" >"$rk/notes"
		if [ "$which" = same ]; then
			echo "not-the-recorded-release" >"$rk/osrelease"
		else
			"$PERFCONV" -i "$in" --header 2>/dev/null | sed -n 's/^# os release : //p' >"$rk/osrelease"
		fi
	done
	expected "$exp/script-default.txt" | grep -F '([kernel.kallsyms])' >"$TMP/kwant"
	sed 's/^\(\t *[0-9a-f]*\) .*/\1 [unknown] ([kernel.kallsyms])/' "$TMP/kwant" >"$TMP/kunnamed"
	bad=
	for mode in "" --perf-compat; do
		for which in same other; do
			PERFCONV_RUNNING_KERNEL=$TMP/rk-$which "$PERFCONV" -i "$in" $mode -f perf-script -o "$TMP/kout" \
				2>"$TMP/kerr" </dev/null
			grep -F '([kernel.kallsyms])' "$TMP/kout" >"$TMP/kgot"
			want=$TMP/kwant
			[ "$which" = other ] && want=$TMP/kunnamed
			if [ ! -s "$want" ] || ! cmp -s "$want" "$TMP/kgot"; then
				bad="${bad:+$bad; }${mode:-default}, $which build-id: kernel lines differ"
			elif [ "$which" = other ] && ! grep -q "kernel build-id is not the running kernel's" "$TMP/kerr"; then
				bad="${bad:+$bad; }${mode:-default}, other build-id: no warning that says so"
			fi
		done
	done
	if [ -z "$bad" ]; then
		pass "$fx/kernel-build-id"
	else
		fail "$fx/kernel-build-id" "$bad" "$TMP/kerr"
	fi
fi

# The running kernel's symbols go through the symbol cache, keyed by the build-id of the same
# notes that say the kernel is the recording's: the stand-in's too.  Twice into an empty cache:
# a miss that writes the entry, then a hit, each naming the frames as without the cache.
if fixture "$FIX/fp-callgraph" && selected "$fx/kernel-build-id-cache"; then
	if [ ! -s "$TMP/rk-same/notes" ]; then
		skip "$fx/kernel-build-id-cache" "needs $fx/kernel-build-id's stand-in kernel: select that case too"
	else
		bad=
		rm -rf "$TMP/kxdg"
		for step in miss hit; do
			XDG_CACHE_HOME=$TMP/kxdg PERFCONV_RUNNING_KERNEL=$TMP/rk-same "$PERFCONV" -v -i "$in" -f perf-script \
				-o "$TMP/kout" 2>"$TMP/kerr-$step" </dev/null
			grep -F '([kernel.kallsyms])' "$TMP/kout" >"$TMP/kgot"
			want="0 hit, 1 miss"
			[ "$step" = hit ] && want="1 hit, 0 miss"
			if ! grep -q "^perfconv: kernel symbol cache: $want " "$TMP/kerr-$step"; then
				bad="${bad:+$bad; }the $step run does not say 'kernel symbol cache: $want'"
			elif [ ! -s "$TMP/kwant" ] || ! cmp -s "$TMP/kwant" "$TMP/kgot"; then
				bad="${bad:+$bad; }the $step run's kernel lines differ"
			fi
		done
		if [ -z "$bad" ]; then
			pass "$fx/kernel-build-id-cache"
		else
			cat "$TMP/kerr-miss" "$TMP/kerr-hit" >"$TMP/kerr"
			fail "$fx/kernel-build-id-cache" "$bad" "$TMP/kerr"
		fi
	fi
fi
