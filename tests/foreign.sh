#!/usr/bin/env bash
# tests/foreign.sh - recordings made on other machines (public test data of other projects,
# tests/data/foreign/*/, each with its PROVENANCE) against perf 6.1's own text:
#   foreign/NAME          `perfconv --perf-compat -f perf-script` is byte for byte what
#                         `perf script` printed (script.txt.xz, made by regen.sh there).  A
#                         recording whose text depends on this machine's kernel (HOST-KERNEL:
#                         perf names its kernel addresses from this machine's /proc/kallsyms, or
#                         its [vdso] frames from its own vdso) is
#                         compared with the committed text where the kernel symbols are those it
#                         was made with (kallsyms.id), else with perf 6.1 run here and now, else
#                         skipped.  A difference listed in known-differences (NAME, a tab, the
#                         reason it is a deliberate choice) is reported as xfail with its reason;
#                         a listed recording that has become identical fails, so the list stays true.
#   foreign-default/NAME  without --perf-compat no kernel frame of these recordings (none was made
#                         on this machine's kernel) is named from this machine's symbols, and the
#                         summary says why those frames are unnamed and how to get their names; where
#                         perf's text does not depend on this machine, the default prints it too,
#                         byte for byte, but for the differences default-differences lists (NAME, a
#                         tab, why the default differs from perf there), reported as xfail.
# The last line is "# foreign: N of M identical".  PERFCONV and FILTERS as for tests/truncate.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" foreign
need_perfconv foreign

DATA=tests/data/foreign
KNOWN=$DATA/known-differences
DEFAULT_KNOWN=$DATA/default-differences
kid=$("$DATA/kallsyms-id.sh" 2>/dev/null)
same_kernel=0
[ -n "$kid" ] && [ "$kid" = "$(cat "$DATA/kallsyms.id" 2>/dev/null)" ] && same_kernel=1
have_perf=0
case $(perf version 2>/dev/null) in "perf version 6.1."*) have_perf=1 ;; esac

# known NAME [FILE]: the reason NAME is listed in FILE (known-differences), or false
known() {
	local f=${2:-$KNOWN}
	[ -f "$f" ] && awk -F '\t' -v n="$1" '$1 == n { print $2; f = 1 } END { exit !f }' "$f"
}

# judge CASE EXPECTED GOT LIST WHAT: pass CASE when GOT is EXPECTED byte for byte (and fail it if
# LIST still names it), xfail it with LIST's reason when it differs and is listed, else fail it with
# the diff; WHAT says what EXPECTED is.  Returns 0 when identical.
judge() {
	local case=$1 exp=$2 got=$3 list=$4 what=$5 why
	why=$(known "${case#*/}" "$list")
	if cmp -s "$exp" "$got"; then
		if [ -n "$why" ]; then
			fail "$case" "identical to $what, but listed in $list: remove it there"
		else
			pass "$case"
		fi
		return 0
	elif [ -n "$why" ]; then
		xfail "$case" "$why"
	else
		diff "$exp" "$got" >"$got.diff"
		fail "$case" "differs from $what" "$got.diff"
	fi
	return 1
}

identical=0 total=0
for dir in "$DATA"/*/; do
	dir=${dir%/}
	name=${dir##*/}
	[ -f "$dir/perf.data.xz" ] || continue
	selected "foreign/$name" || selected "foreign-default/$name" || continue
	d=$TMP/$name
	mkdir -p "$d"
	xz -dc "$dir/perf.data.xz" >"$d/perf.data"
	exp=$d/expected
	made=committed
	if [ -f "$dir/HOST-KERNEL" ] && [ "$same_kernel" = 0 ]; then
		if [ "$have_perf" = 1 ]; then
			perf script -i "$d/perf.data" --force >"$exp" 2>/dev/null
			made="perf 6.1 here (this kernel's symbols are not those of kallsyms.id)"
		else
			exp=
		fi
	else
		xz -dc "$dir/script.txt.xz" >"$exp"
	fi
	if selected "foreign/$name"; then
		if [ -z "$exp" ]; then
			skip "foreign/$name" "perf names its kernel from this machine's symbols, which are not those the expected text was made with, and perf 6.1 is not here to remake it"
		else
			total=$((total + 1))
			run_pc "$d/c" -q --perf-compat -f perf-script -i "$d/perf.data" -o "$d/c.txt"
			if [ "$rc" != 0 ] || [ ! -f "$d/c.txt" ]; then
				fail "foreign/$name" "exit status $rc" "$d/c/err"
			elif judge "foreign/$name" "$exp" "$d/c.txt" "$KNOWN" "perf 6.1's text ($made)"; then
				identical=$((identical + 1))
			fi
		fi
	fi
	if selected "foreign-default/$name"; then
		run_pc "$d/d" -f perf-script -i "$d/perf.data" -o "$d/d.txt"
		awk '/\(\[kernel\.kallsyms\]\)$/ && $(NF - 1) != "[unknown]"' "$d/d.txt" >"$d/named" 2>/dev/null
		named=$(wc -l <"$d/named")
		if [ "$rc" != 0 ]; then
			fail "foreign-default/$name" "exit status $rc" "$d/d/err"
		elif [ "$named" != 0 ]; then
			fail "foreign-default/$name" "$named kernel frames named from this machine's symbols" "$d/named"
		elif grep -q '(\[kernel\.kallsyms\])$' "$d/d.txt" &&
			! grep -q "kernel frames left unnamed: .*--kallsyms.*pack" "$d/d/err"; then
			fail "foreign-default/$name" "unnamed kernel frames, but the summary does not say why and how to name them" "$d/d/err"
		elif [ -f "$dir/HOST-KERNEL" ]; then
			pass "foreign-default/$name"
		else
			xz -dc "$dir/script.txt.xz" >"$d/perf.txt"
			judge "foreign-default/$name" "$d/perf.txt" "$d/d.txt" "$DEFAULT_KNOWN" \
				"perf 6.1's text, which does not depend on this machine"
		fi
	fi
	rm -f "$d/perf.data"
done
[ "$total" = 0 ] || echo "# foreign: $identical of $total identical"
