#!/usr/bin/env bash
# static-libs.sh - the static archives `make static` needs that Debian 12 does not ship, or ships
# with dependencies it does not ship, built from Debian's own source packages into DIR/lib
# (libisal.a, libcurl.a, libarchive.a, libzstd.a), each once: a later run whose DIR/lib/NAME.stamp names the
# same source version and recipe does nothing for it.
#
#   scripts/static-libs.sh DIR
#
# ISA-L: Debian ships libisal.so only; its Makefile.unx builds the archive with nasm, from the
# version of the installed libisal-dev, so that trace.zip deflates to the same bytes as the
# dynamic build's.  libcurl: Debian's libcurl.a needs the static archives of nghttp2, librtmp,
# libssh2, libpsl, Kerberos and OpenLDAP, which Debian does not ship; this one is configured for
# HTTP and HTTPS (OpenSSL, whose archives Debian ships) and nothing else, all symsrv.c asks of it.
# libarchive: Debian's libarchive.a is there, but its table of formats brings in the xar writer,
# which needs libxml2 and so ICU (30 MB of data); this one has no xar and no crypto, and the tar,
# pax and zstd code packs use.  libzstd: Debian's libzstd.a is zstd's single-threaded default,
# which refuses the worker threads that packs compress with (and whose frames are other bytes);
# this one is the same source with ZSTD_MULTITHREAD, as Debian's libzstd.so is built.
# Sources come through apt-get with a private list of deb-src lines made from the machine's own
# Debian sources, in DIR/apt: the machine's apt configuration is left alone.
set -euo pipefail

dir=${1:?usage: static-libs.sh DIR}
mkdir -p "$dir/lib" "$dir/src" "$dir/apt/lists/partial"
dir=$(cd "$dir" && pwd)
jobs=$(nproc 2>/dev/null || echo 1)

# source package and version of the installed -dev package the headers come from
src_of() {
	dpkg-query -W -f='${source:Package}=${source:Version}' "$1"
}

# The recipes: configure flags are part of the stamp, so that a changed recipe builds again.
isal_src=$(src_of libisal-dev)
isal_recipe="make -f Makefile.unx"
curl_src=$(src_of libcurl4-openssl-dev)
curl_recipe="--disable-shared --enable-static --with-openssl --without-libpsl --without-nghttp2
	--without-libidn2 --without-librtmp --without-libssh2 --without-brotli --without-zstd --without-zlib
	--without-gssapi --disable-ldap --disable-ldaps --disable-rtsp --disable-dict --disable-telnet
	--disable-tftp --disable-pop3 --disable-imap --disable-smb --disable-smtp --disable-gopher
	--disable-mqtt --disable-ftp --disable-file --disable-manual --disable-ntlm --disable-docs
	--enable-threaded-resolver --with-ca-bundle=/etc/ssl/certs/ca-certificates.crt
	--with-ca-path=/etc/ssl/certs"
zstd_src=$(src_of libzstd-dev)
zstd_recipe="make -C lib libzstd.a-mt"
archive_src=$(src_of libarchive-dev)
archive_recipe="--disable-maintainer-mode --disable-shared --enable-static --disable-bsdtar --disable-bsdcat --disable-bsdcpio
	--without-xml2 --without-expat --without-nettle --without-openssl --without-lz4 --without-libb2
	--without-mbedtls --disable-acl --disable-xattr --with-zstd --with-lzma --with-zlib --with-bz2lib"

# fresh NAME SRC RECIPE: DIR/lib/NAME.a is there and was built from SRC by RECIPE
fresh() {
	[ -f "$dir/lib/$1.a" ] && [ "$(cat "$dir/lib/$1.stamp" 2>/dev/null)" = "$2 $3" ]
}
if fresh libisal "$isal_src" "$isal_recipe" && fresh libcurl "$curl_src" "$curl_recipe" &&
	fresh libarchive "$archive_src" "$archive_recipe" && fresh libzstd "$zstd_src" "$zstd_recipe"; then
	exit 0
fi

apt_opts=(-q -o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache")
# deb-src twins of the machine's Debian entries, one-line and deb822 alike
{
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		sed -n 's/^[[:space:]]*deb[[:space:]]\(.*debian.*\)$/deb-src \1/p' || true
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; ORS = "\n\n" } /URIs:[^\n]*debian/ && /Types:[^\n]*deb/ {
			sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f"
	done
} >"$dir/apt/sources.list.new"
# deb822 stanzas cannot share a file with one-line entries: they go to a .sources file
if grep -q '^Types:' "$dir/apt/sources.list.new"; then
	grep -v '^deb-src ' "$dir/apt/sources.list.new" >"$dir/apt/debian.sources"
	grep '^deb-src ' "$dir/apt/sources.list.new" >"$dir/apt/sources.list" || true
	apt_opts+=(-o "Dir::Etc::SourceParts=$dir/apt/parts")
	mkdir -p "$dir/apt/parts"
	mv "$dir/apt/debian.sources" "$dir/apt/parts/debian.sources"
else
	mv "$dir/apt/sources.list.new" "$dir/apt/sources.list"
fi
rm -f "$dir/apt/sources.list.new"
touch "$dir/apt/sources.list"
mkdir -p "$dir/apt/cache/archives/partial"
echo "static-libs.sh: fetching Debian's source lists (deb-src)" >&2
apt-get "${apt_opts[@]}" update >&2

# fetch SRC: unpack the source package SRC (NAME=VERSION) into DIR/src, print its directory; the
# exact version when the mirror still has it, else its current one (the same upstream series)
fetch() {
	local want=$1 name=${1%%=*}
	rm -rf "${dir:?}/src/$name"
	mkdir -p "$dir/src/$name"
	(cd "$dir/src/$name" && { apt-get "${apt_opts[@]}" source "$want" >&2 2>"$dir/src/$name.err" ||
		{ echo "static-libs.sh: $want is gone from the mirror; using its current $name" >&2;
		  apt-get "${apt_opts[@]}" source "$name" >&2; }; })
	find "$dir/src/$name" -mindepth 1 -maxdepth 1 -type d | head -n 1
}

# built NAME SRC RECIPE FILE: FILE becomes DIR/lib/NAME.a, stamped
built() {
	cp "$4" "$dir/lib/$1.a"
	echo "$2 $3" >"$dir/lib/$1.stamp"
}

# autotools NAME SRC RECIPE TARGET ARCHIVE: configure with RECIPE, make TARGET, keep ARCHIVE
autotools() {
	local src
	src=$(fetch "$2")
	echo "static-libs.sh: building $1.a in $src" >&2
	# shellcheck disable=SC2086  # the recipe is words
	(cd "$src" && ./configure $3 >"$dir/src/$1-configure.log" 2>&1 &&
		make -j"$jobs" $4 >"$dir/src/$1.log" 2>&1) ||
		{ tail -n 20 "$dir/src/$1-configure.log" "$dir/src/$1.log" >&2; exit 1; }
	built "$1" "$2" "$3" "$src/$5"
}

if ! fresh libisal "$isal_src" "$isal_recipe"; then
	src=$(fetch "$isal_src")
	echo "static-libs.sh: building libisal.a in $src" >&2
	# shellcheck disable=SC2086  # the recipe is words
	make -C "$src" $isal_recipe -j"$jobs" lib_name=bin/isa-l.a bin/isa-l.a >"$dir/src/libisal.log" 2>&1 ||
		{ tail -n 20 "$dir/src/libisal.log" >&2; exit 1; }
	built libisal "$isal_src" "$isal_recipe" "$src/bin/isa-l.a"
fi
fresh libcurl "$curl_src" "$curl_recipe" ||
	autotools libcurl "$curl_src" "$curl_recipe" "-C lib" lib/.libs/libcurl.a
fresh libarchive "$archive_src" "$archive_recipe" ||
	autotools libarchive "$archive_src" "$archive_recipe" libarchive.la .libs/libarchive.a
if ! fresh libzstd "$zstd_src" "$zstd_recipe"; then
	src=$(fetch "$zstd_src")
	echo "static-libs.sh: building libzstd.a (with worker threads) in $src" >&2
	# shellcheck disable=SC2086  # the recipe is words
	(cd "$src" && $zstd_recipe -j"$jobs" >"$dir/src/libzstd.log" 2>&1) ||
		{ tail -n 20 "$dir/src/libzstd.log" >&2; exit 1; }
	built libzstd "$zstd_src" "$zstd_recipe" "$src/lib/libzstd.a"
fi
