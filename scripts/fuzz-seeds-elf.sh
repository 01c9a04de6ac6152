#!/bin/sh
# fuzz-seeds-elf.sh [OUTDIR] - write the ELF target's seeds that are cut from fixtures too large to seed
# it whole.  The C library's debug file of the fixtures holds 8,200 symbols (310 KB): every run of
# fuzz_elf on a mutation of it loaded, demangled and sorted all of them, and copying and mapping an
# input of that size cost more than the parser.  The cut keeps the file's sections, program headers and
# build-id and, of its symbols, the first of each kind (type, binding, section index: FUNC and IFUNC,
# TLS, ABS, undefined ...) and one in 64 of the others: some 200.  OUTDIR defaults to fuzz/seeds/elf.
# Run from the top directory after the fixtures change (needs binutils' objcopy); the output is committed.
set -eu
out=${1:-fuzz/seeds/elf}
libc=fixtures/root/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
mkdir -p "$out"
LC_ALL=C readelf -sW "$libc" 2>/dev/null | awk '
	$1 ~ /^[0-9]+:$/ && $8 != "" {
		k = $4 " " $5 " " $7
		if (!(k in seen) || ++n % 64 == 0) print $8
		seen[k] = 1
	}' | sed 's/@.*//' | sort -u >"$tmp"
objcopy --strip-all --keep-symbols="$tmp" "$libc" "$out/libc-cut.debug"
