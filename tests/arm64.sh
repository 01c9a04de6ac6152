#!/usr/bin/env bash
# tests/arm64.sh - DWARF call graphs recorded on aarch64 (simpleperf's test data, in
# tests/data/foreign/simpleperf-*/ with their PROVENANCE), in the default mode:
#   arm64/pc/NAME       every sample's user stack starts at its pc, the one perf 6.1 reads from
#                       the same registers (uregs.txt.xz: perf's `perf script -F time,uregs
#                       --show-mmap-events`, made by tests/data/foreign/regen.sh), not at another
#                       register read with x86-64's numbers
#   arm64/apk-unwind    with --symfs holding the .apk that Android mapped the library from
#                       (base.apk.xz), the stack is unwound through the library's .eh_frame
#                       inside the .apk: the sample in BusyThreadFunc returns into
#                       /bionic/lib64/libc.so, as simpleperf's own test of this recording says
#                       (cmd_debug_unwind_test.cpp, unwind_embedded_lib_in_apk), at the return
#                       address the frame record in the copied stack holds (x29 + 8:
#                       BusyThreadFunc's FDE puts the CFA at x29 + 16 and lr at CFA - 8)
#   arm64/apk-names     the default mode names that frame from the library inside the .apk:
#                       BusyThreadFunc+0x6c (llvm-objdump -T: _Z14BusyThreadFuncPv at 0x4b138,
#                       0xd8 bytes; the pc is 0x4b1a4), checked against llvm-objdump where it is;
#                       --perf-compat prints no user frame (perf 6.1 on x86-64 has no arm64 unwinder)
#   arm64/apk-build-id  a library of another build-id in the .apk is not used: the pc alone
#   arm64/apk-pack      a pack made with that --symfs carries the .apk: converted without it, the
#                       same text as arm64/apk-unwind's conversion
#   arm64/apk-none      without the .apk: the pc alone (there is no CFI to go further)
#   arm64/other-arch/NAME  the same recording with its arch header made "riscv64", an architecture
#                       the unwinder does not know: no register is read; a sample taken in user
#                       mode keeps its own ip (which is its pc, perf's reading), one in the kernel
#                       no user frame
# Run by tests/run.sh.  PERFCONV and FILTERS as for tests/truncate.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" arm64
need_perfconv arm64
need_python arm64
DATA=tests/data/foreign
CHECK=$top/tests/arm64_check.py
FIELDS=(-f perf-script --fields time,ip,dso)

# check NAME DIR ARGS...: convert DIR's recording with ARGS, then tests/arm64_check.py
check() {
	local name=$1 dir=$2 opt=
	shift 2
	selected "$name" || return 0
	xz -dc "$dir/perf.data.xz" >"$TMP/perf.data"
	xz -dc "$dir/uregs.txt.xz" >"$TMP/uregs.txt"
	case ${1-} in --caller | --alone) opt=$1 && shift ;; esac
	run_pc "$TMP/c" "${FIELDS[@]}" -i "$TMP/perf.data" -o "$TMP/c.txt" "$@"
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc" "$TMP/c/err"
	elif python3 "$CHECK" "$TMP/uregs.txt" "$TMP/perf.data" "$TMP/c.txt" $opt >"$TMP/why"; then
		pass "$name"
	else
		fail "$name" "$(cat "$TMP/why")"
	fi
}

for n in perf_no_unwind perf_unwind_embedded_lib_in_apk; do
	check "arm64/pc/$n" "$DATA/simpleperf-$n"
done

apk=$DATA/simpleperf-perf_unwind_embedded_lib_in_apk
sym=$TMP/symfs/data/app/simpleperf.demo.cpp_api
mkdir -p "$sym"
xz -dc "$apk/base.apk.xz" >"$sym/base.apk"
check arm64/apk-unwind "$apk" --caller --symfs "$TMP/symfs"
if selected arm64/apk-names; then
	xz -dc "$apk/perf.data.xz" >"$TMP/perf.data"
	run_pc "$TMP/n" -f perf-script --symfs "$TMP/symfs" -i "$TMP/perf.data" -o "$TMP/n.txt"
	run_pc "$TMP/p" --perf-compat -f perf-script --symfs "$TMP/symfs" -i "$TMP/perf.data" -o "$TMP/p.txt"
	first=$(grep -v '(\[kernel\.kallsyms\])$' "$TMP/n.txt" | awk 'NR == 2 { print $1, $2 }')
	objdump_says=ok
	if command -v llvm-objdump >/dev/null 2>&1; then
		python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("lib/arm64-v8a/libnative-lib.so"))' \
			"$sym/base.apk" >"$TMP/lib.so"
		llvm-objdump -T "$TMP/lib.so" | grep -q '^000000000004b138 g  *DF \.text	00000000000000d8  *_Z14BusyThreadFuncPv$' ||
			objdump_says="llvm-objdump does not put _Z14BusyThreadFuncPv at 0x4b138, 0xd8 bytes"
	fi
	if [ "$objdump_says" != ok ]; then
		fail arm64/apk-names "$objdump_says"
	elif [ "$first" != "4b1a4 BusyThreadFunc+0x6c" ]; then
		fail arm64/apk-names "first user frame '$first', not '4b1a4 BusyThreadFunc+0x6c'" "$TMP/n.txt"
	elif grep -q 'libnative-lib\|libc\.so' "$TMP/p.txt"; then
		fail arm64/apk-names "--perf-compat prints a user frame" "$TMP/p.txt"
	else
		pass arm64/apk-names
	fi
fi
if selected arm64/apk-pack; then
	xz -dc "$apk/perf.data.xz" >"$TMP/perf.data"
	run_pc "$TMP/k" --symfs "$TMP/symfs" -i "$TMP/perf.data" -o "$TMP/x.perfpack"
	run_pc "$TMP/d" "${FIELDS[@]}" --symfs "$TMP/symfs" -i "$TMP/perf.data" -o "$TMP/d.txt"
	run_pc "$TMP/k2" "${FIELDS[@]}" -i "$TMP/x.perfpack" -o "$TMP/k.txt"
	if [ "$rc" != 0 ] || [ ! -s "$TMP/k.txt" ]; then
		fail arm64/apk-pack "the pack does not convert (exit status $rc)" "$TMP/k2/err"
	elif ! grep -q 'libc\.so' "$TMP/k.txt" || ! cmp -s "$TMP/d.txt" "$TMP/k.txt"; then
		fail arm64/apk-pack "the pack's conversion differs from the one with --symfs" "$TMP/k.txt"
	else
		pass arm64/apk-pack
	fi
fi
check arm64/apk-none "$apk" --alone --symfs "$TMP/nothing"
if selected arm64/apk-build-id; then
	# the same library with one byte of its build-id changed, in a copy of the .apk (stored, so
	# the note's bytes are the file's: .note.gnu.build-id at 0x250 in the library, its id at 0x260)
	python3 - "$sym/base.apk" "$TMP/other.apk" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
info = z.getinfo("lib/arm64-v8a/libnative-lib.so")
off = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
b = bytearray(open(sys.argv[1], "rb").read())
assert b[off:off + 4] == b"\x7fELF" and b[off + 0x25c:off + 0x260] == b"GNU\0"
b[off + 0x260] ^= 0xff
open(sys.argv[2], "wb").write(b)
PY
	mkdir -p "$TMP/other/data/app/simpleperf.demo.cpp_api"
	mv "$TMP/other.apk" "$TMP/other/data/app/simpleperf.demo.cpp_api/base.apk"
	check arm64/apk-build-id "$apk" --alone --symfs "$TMP/other"
fi

# other_arch NAME: DIR's recording with "aarch64\0" in its ARCH feature made "riscv64\0"
other_arch() {
	python3 - "$1" "$2" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b"aarch64\0") == 1
open(sys.argv[2], "wb").write(d.replace(b"aarch64\0", b"riscv64\0"))
PY
}
n=perf_unwind_embedded_lib_in_apk
if selected arm64/other-arch/$n; then
	xz -dc "$DATA/simpleperf-$n/perf.data.xz" >"$TMP/a.data"
	xz -dc "$DATA/simpleperf-$n/uregs.txt.xz" >"$TMP/uregs.txt"
	other_arch "$TMP/a.data" "$TMP/o.data"
	run_pc "$TMP/o" "${FIELDS[@]}" --symfs "$TMP/symfs" -i "$TMP/o.data" -o "$TMP/o.txt"
	if [ "$rc" != 0 ]; then
		fail "arm64/other-arch/$n" "exit status $rc" "$TMP/o/err"
	elif python3 "$CHECK" "$TMP/uregs.txt" "$TMP/o.data" "$TMP/o.txt" --alone >"$TMP/why"; then
		pass "arm64/other-arch/$n"
	else
		fail "arm64/other-arch/$n" "$(cat "$TMP/why")"
	fi
fi
n=perf_no_unwind
if selected arm64/other-arch/$n; then
	xz -dc "$DATA/simpleperf-$n/perf.data.xz" >"$TMP/a.data"
	other_arch "$TMP/a.data" "$TMP/o.data"
	run_pc "$TMP/o" "${FIELDS[@]}" -i "$TMP/o.data" -o "$TMP/o.txt"
	# every sample of this recording was taken in the kernel: kernel frames, then none
	users=$(grep -v -e '(\[kernel\.kallsyms\])$' -e ': *$' -e '^$' "$TMP/o.txt" | wc -l)
	kernels=$(grep -c '(\[kernel\.kallsyms\])$' "$TMP/o.txt")
	if [ "$rc" != 0 ]; then
		fail "arm64/other-arch/$n" "exit status $rc" "$TMP/o/err"
	elif [ "$users" != 0 ] || [ "$kernels" = 0 ]; then
		fail "arm64/other-arch/$n" "$users user frames, $kernels kernel frames" "$TMP/o.txt"
	else
		pass "arm64/other-arch/$n"
	fi
fi
