# perfconv — GNU make build.  CFLAGS/LDFLAGS are the user's; project flags live in ALL_CFLAGS.
#
#   make                 build ./perfconv (objects in build/)
#   make check           install missing Debian packages (skip with NO_DEPS=1), build, run all tests
#   make asan            the same tests with an ASan+UBSan build in build-asan/
#   make static          one statically linked executable, build-static/perfconv (docs/static.md)
#   make demo            convert fixtures/fp-callgraph into demo/flame.folded and demo/flame.svg
#   make bench           bench/bench.sh: perfconv against perf script on a large recording
#   make fuzz            build the fuzz/fuzz_*.c targets with clang's libFuzzer, run each FUZZ_SECONDS
#   make install         PREFIX=/usr/local DESTDIR= bindir= mandir=
#   V=1 shows the commands; DEVELOPER=1 turns warnings into errors.
PREFIX ?= /usr/local
bindir ?= $(PREFIX)/bin
mandir ?= $(PREFIX)/share/man
man1dir ?= $(mandir)/man1
DESTDIR ?=
INSTALL ?= install

CC ?= cc
CFLAGS ?= -O2 -g
PKGS := libelf libdw libzstd libxxhash zlib libdeflate libisal libtraceevent liblzma libprotobuf-c libdebuginfod libarchive libcurl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libdebuginfod, libcurl, libarchive: their headers only; debuginfod.c and symsrv.c load them
# when servers are named, packar.c when a pack is read or written
PKG_LIBS := $(shell pkg-config --libs $(filter-out libdebuginfod libcurl libarchive,$(PKGS)) 2>/dev/null)

ALL_CFLAGS = -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -I. -I$(BUILD)/gen $(PKG_CFLAGS) $(DEVELOPER_CFLAGS) $(SAN_CFLAGS) $(STATIC_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(STATIC_LDFLAGS) $(LDFLAGS)
LIBS = $(PKG_LIBS) -liberty -lm -pthread

# `make static` sets STATIC=1 for its own sub-make, whose objects go to build-static/.  Every
# library is linked in, the ones that perfconv otherwise loads when needed too (PFC_STATIC:
# libarchive, libcurl; libdebuginfod has no static archive and is left out).  libisal.a, a
# libcurl.a for HTTP and HTTPS only, a libarchive.a without xar (whose libxml2 brings ICU) and a
# libzstd.a with worker threads (as Debian's libzstd.so; its libzstd.a has none) are built from
# Debian's sources by scripts/static-libs.sh into ~/.cache/perfconv/static-libs/lib, searched
# first (a cache of the machine's, not the checkout's: a fresh clone links at once); the others are
# Debian's own archives.
STATIC_BUILD := build-static
STATIC_LIBS_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/perfconv/static-libs
ifeq ($(STATIC),1)
STATIC_CFLAGS = -DPFC_STATIC
STATIC_LDFLAGS = -static -L$(STATIC_LIBS_DIR)/lib
LIBS = -lisal -lcurl -larchive -ldw -lelf -lzstd -lxxhash -ldeflate -ltraceevent -llzma -lbz2 -lz \
	-lprotobuf-c -lssl -lcrypto -liberty -lm -pthread
# the archives static-libs.sh builds: a new one links again
STATIC_ARCHIVES = $(addprefix $(STATIC_LIBS_DIR)/lib/,libisal.a libcurl.a libarchive.a libzstd.a)
$(BUILD)/perfconv: $(STATIC_ARCHIVES)
# glibc's archive warns at each call that needs its shared NSS modules or loader at run time.
# These four are dropped, the others shown: getaddrinfo (libcurl) and gethostbyname (OpenSSL's
# BIO, unused) resolve through /etc/hosts and DNS with the files and dns code glibc links in
# (tests/static.sh names a server localhost in a namespace without libraries); getpwuid_r is
# libcurl's .netrc lookup, which only CURLOPT_NETRC turns on and symsrv.c never sets; dlopen is
# libtraceevent's plugin loader, which perfconv never calls.
STATIC_LD_QUIET = awk '/: in function / { held = $$0; next } \
	/warning: Using .(getaddrinfo|gethostbyname|getpwuid_r|dlopen). in statically linked/ { held = ""; next } \
	{ if (held != "") print held; held = ""; print } END { if (held != "") print held }'
endif

ifeq ($(DEVELOPER),1)
DEVELOPER_CFLAGS = -Werror
endif

# `make asan` sets these for its own sub-make; the objects go to build-asan/, never mixed with build/.
# Unlike the fuzz build it has libelf map ELF files, as perfconv does.  (With ELF_C_READ, libelf
# 0.188 loses the buffers of the sections it read before an elf_rawfile of the same file: the
# inflated DWARF image, dwimage.c, reads its sections with elf_rawdata instead.)
# The sanitizer runtimes are linked in statically: each of the thousands of short perfconv runs of
# the test suite then skips the dynamic linker's symbol lookups into libasan and libubsan, and
# LeakSanitizer's exit scan no longer reads libubsan's 6 MB of zero-filled data (about 20% of the
# CPU time of a small conversion).
ASAN_BUILD := build-asan
ASAN_CFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -static-libasan -static-libubsan
SAN_CFLAGS ?=

ifneq ($(V),1)
Q = @
QUIET_CC = @echo '  CC      '$@;
QUIET_LINK = @echo '  LINK    '$@;
QUIET_GEN = @echo '  GEN     '$@;
MAKEFLAGS += --no-print-directory
endif

BUILD ?= build
LIB_SRCS := $(wildcard converter/*.c) $(wildcard converter/*/*.c) $(wildcard formats/*.c)
CLI_SRCS := $(wildcard cli/*.c)
# profile.proto (pprof's format) as Debian ships it with golang-github-google-pprof-dev; protoc-c
# generates its C encoder into $(BUILD)/gen at build time.
PROFILE_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
PROTOC_C ?= protoc-c
GEN_OBJS := $(BUILD)/gen/profile.pb-c.o
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(GEN_OBJS)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# Fuzz targets: one file each, fuzz/fuzz_NAME.c.  make check links them with fuzz/standalone.c
# (a main that runs the target on files) to replay tests/regress/; make fuzz links them with libFuzzer.
FUZZ_SRCS := $(wildcard fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_MAIN ?= fuzz/standalone.c

# Everything is rebuilt when the compiler, the flags or the libraries change (CFLAGS=..., DEVELOPER=1).
FLAGS_FILE := $(BUILD)/.flags
FLAGS_NOW := $(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(LIBS)
PKG_MISSING = $(shell for p in $(PKGS); do pkg-config --exists $$p 2>/dev/null || echo $$p; done)

# The binary the tests run; `make asan` points it at the sanitizer build.
PERFCONV ?= $(BUILD)/perfconv
DEPS_SCRIPT := scripts/install-deps.sh

all: perfconv

perfconv: $(BUILD)/perfconv
	$(Q)cp $< $@

$(BUILD)/perfconv: $(LIB_OBJS) $(CLI_OBJS)
ifeq ($(STATIC),1)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS) 2>$@.ld; rc=$$?; \
		$(STATIC_LD_QUIET) $@.ld >&2; rm -f $@.ld; exit $$rc
else
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
endif

$(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h &: $(PROFILE_PROTO)
	@mkdir -p $(BUILD)/gen
	$(QUIET_GEN)$(PROTOC_C) --c_out=$(BUILD)/gen --proto_path=$(dir $(PROFILE_PROTO)) $(notdir $(PROFILE_PROTO))

$(BUILD)/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c $(FLAGS_FILE)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/formats/pprof.o: $(BUILD)/gen/profile.pb-c.h

$(BUILD)/%.o: %.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -MMD -MP -MF $@.d -o $@ $(filter %.c %.o,$^) $(LIBS)

$(FLAGS_FILE): FORCE
	@mkdir -p $(BUILD)
	@if ! pkg-config --exists $(PKGS) 2>/dev/null; then \
		echo "perfconv: pkg-config cannot find: $(or $(PKG_MISSING),pkg-config itself)" >&2; \
		echo "perfconv: run scripts/install-deps.sh (or 'make check', which runs it)" >&2; \
		exit 1; \
	fi
	@echo '$(subst ','\'',$(FLAGS_NOW))' >$@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(BUILD)/fuzz/%: fuzz/%.c $(FUZZ_MAIN) $(LIB_OBJS) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(FUZZ_LINK_CFLAGS) $(ALL_LDFLAGS) -MMD -MP -MF $@.d -o $@ $(filter %.c %.o,$^) $(LIBS)

unit: $(UNIT_BINS)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(UNIT_BINS:=.d) $(FUZZ_BINS:=.d)

# --- dependencies -----------------------------------------------------------------------------------
# One dpkg-query when everything is there; NO_DEPS=1 skips it (other distributions, no root).
deps:
ifneq ($(NO_DEPS),1)
	$(Q)$(DEPS_SCRIPT) $(DEPS_ARGS)
endif

# --- tests ------------------------------------------------------------------------------------------
# check installs first, then re-reads this Makefile in a sub-make so that pkg-config sees the new
# packages.  test-run is the part both check and asan share: unit tests and tests/run.sh, one summary.
# Both build with one job per CPU (BUILD_JOBS) unless make was given -j itself.
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
JOBS_FLAG = $(if $(filter -j%,$(MAKEFLAGS))$(findstring jobserver,$(MAKEFLAGS)),,-j$(BUILD_JOBS))
check:
	$(Q)$(MAKE) deps DEPS_ARGS=--test
	$(Q)$(MAKE) $(JOBS_FLAG) all
	$(Q)$(MAKE) $(JOBS_FLAG) test-run

test-run: $(PERFCONV) $(UNIT_BINS) $(FUZZ_BINS)
	$(Q)PERFCONV='$(PERFCONV)' UNIT_DIR='$(BUILD)/tests' FUZZ_DIR='$(BUILD)/fuzz' tests/run.sh

# The sanitizer run cuts each input at fewer places than make check does (TRUNC_RECORDS=3 and
# TRUNC_RANDOM=1 against 20 and 8; the cuts in the header, attrs and feature sections are the same),
# runs the per-option golden variants on one fixture in three (VARIANTS=3: the same code for every
# input), leaves out the live suites (LIVE=0: recordings made with perf, .NET apps built and run),
# whose conversions make check has run, and the real consumers (CONSUMERS=0: PerfView's parser,
# Chromium, go tool pprof, protoc read output identical to make check's); every committed recording
# is still converted under the sanitizers, in every format.  make check and make asan together take
# about 10 minutes on 2 CPUs.
asan:
	$(Q)$(MAKE) deps DEPS_ARGS=--test
	$(Q)ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:exitcode=99:detect_leaks=1$${ASAN_OPTIONS:+:$$ASAN_OPTIONS} \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99$${UBSAN_OPTIONS:+:$$UBSAN_OPTIONS} \
	TRUNC_RECORDS=$${TRUNC_RECORDS:-3} TRUNC_RANDOM=$${TRUNC_RANDOM:-1} LIVE=$${LIVE:-0} VARIANTS=$${VARIANTS:-3} \
	CONSUMERS=$${CONSUMERS:-0} \
	$(MAKE) $(JOBS_FLAG) test-run BUILD=$(ASAN_BUILD) SAN_CFLAGS='$(ASAN_CFLAGS)' PERFCONV=$(ASAN_BUILD)/perfconv

# --- one static executable ------------------------------------------------------------------------
# build-static/perfconv runs on a kernel alone (tests/static.sh checks it in a mount namespace
# with empty library directories).  The first run fetches and builds ISA-L, libcurl, libarchive
# and libzstd (ten to twenty minutes on 2 busy CPUs), later runs reuse them.  It is not part of
# make check, whose tests/static.sh brings the executable up to date only once those are built.
static:
	$(Q)$(MAKE) deps DEPS_ARGS=--static
	$(Q)scripts/static-libs.sh $(STATIC_LIBS_DIR)
	$(Q)$(MAKE) $(JOBS_FLAG) $(STATIC_BUILD)/perfconv BUILD=$(STATIC_BUILD) STATIC=1

# --- fuzzing ---------------------------------------------------------------------------------------
# clang-14 with libFuzzer (scripts/install-deps.sh --fuzz); objects in build-fuzz/.  The library is
# compiled with -fsanitize=fuzzer-no-link so that coverage reaches every parser; each target is linked
# with -fsanitize=fuzzer instead of fuzz/standalone.c.  fuzz/run.sh seeds and runs them.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang-14
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# Small arena blocks: a fuzz run converts a few records, and fresh megabytes per run (each page
# faulted in and poisoned by ASan) cost more than the conversion.  The block-boundary code then
# runs in most inputs, too.  ELF files are read, not mapped (converter/native/elfread.h).
FUZZ_DEFS := -DPFC_ELF_C_READ=ELF_C_READ -DPFC_ORDER_BLOCK_SIZE=4096 -DPFC_ORDER_QUEUE_CAP=64 -DPFC_RAW_BLOCK_SHIFT=9 \
	-DPFC_INTERN_BLOCK_SIZE=1024 -DPFC_PIPELINE_RING=64 -DPFC_PIPELINE_BATCH=16

fuzz: fuzz-build
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh build-fuzz $(FUZZ_TARGETS)

fuzz-build:
	$(Q)$(MAKE) deps DEPS_ARGS=--fuzz
	$(Q)$(MAKE) fuzz-bins BUILD=build-fuzz CC=$(FUZZ_CC) FUZZ_MAIN= \
		SAN_CFLAGS='$(FUZZ_SAN) $(FUZZ_DEFS) -fsanitize=fuzzer-no-link' FUZZ_LINK_CFLAGS='-fsanitize=fuzzer'

# The campaign of docs/fuzzing.md: each target until fuzz/runs.txt adds up to FUZZ_RUNS executions,
# one after the other, from and back into the corpus kept in fuzz/corpus/.
FUZZ_RUNS ?= 10000000
FUZZ_CAMPAIGN ?= unwind jitdump pe r2rmap tpformat perfmap ecma kallsyms elf srcline reader pack nettrace
fuzz-campaign: fuzz-build
	$(Q)nice -n 19 fuzz/campaign.sh build-fuzz $(FUZZ_RUNS) $(FUZZ_CAMPAIGN)

fuzz-bins: $(FUZZ_BINS)

# --- demo and bench ---------------------------------------------------------------------------------
DEMO_IN := fixtures/fp-callgraph/perf.data
DEMO_OUT := demo/flame.folded
DEMO_SVG := demo/flame.svg

demo:
	$(Q)$(MAKE) deps
	$(Q)$(MAKE) all
	@mkdir -p $(dir $(DEMO_OUT))
	$(Q)./perfconv -i $(DEMO_IN) --symfs fixtures/root --kallsyms fixtures/root/kallsyms -o $(DEMO_OUT)
	$(Q)./perfconv -q -i $(DEMO_IN) --symfs fixtures/root --kallsyms fixtures/root/kallsyms -o $(DEMO_SVG)
	@echo
	@echo "Folded stacks of $(DEMO_IN) are in $(DEMO_OUT); the first lines:"
	@head -n 10 $(DEMO_OUT)
	@echo
	@echo "Feed them to flamegraph.pl (FlameGraph) or speedscope, or open the flame graph $(DEMO_SVG)."

bench:
	$(Q)$(MAKE) deps DEPS_ARGS=--bench
	$(Q)$(MAKE) all
	$(Q)PERFCONV=./perfconv bench/bench.sh

# --- install ----------------------------------------------------------------------------------------
install: all
	$(INSTALL) -d -m 755 '$(DESTDIR)$(bindir)' '$(DESTDIR)$(man1dir)'
	$(INSTALL) -m 755 perfconv '$(DESTDIR)$(bindir)/perfconv'
	$(INSTALL) -m 644 man/perfconv.1 '$(DESTDIR)$(man1dir)/perfconv.1'

uninstall:
	rm -f '$(DESTDIR)$(bindir)/perfconv' '$(DESTDIR)$(man1dir)/perfconv.1'

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(STATIC_BUILD) build-fuzz perfconv demo

FORCE:

.PHONY: all clean unit deps check test-run asan static demo bench fuzz fuzz-build fuzz-campaign fuzz-bins install uninstall FORCE
