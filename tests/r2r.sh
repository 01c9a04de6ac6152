#!/usr/bin/env bash
# tests/r2r.sh - .NET ReadyToRun images and the native runtime, on a real recording
# (tests/data/r2r: an app published with crossgen2 and its r2rmap, recorded with perf 6.1).
# Each case builds a --symfs tree in a temporary directory:
#   - the app's frames resolve through r2rapp.ni.r2rmap found next to the DLL, in --map-dir (also
#     in a symbol server cache layout) or at the symfs root, and through a crossgen1-style
#     r2rapp.ni.{MVID}.map;
#   - the per-method sample counts equal what perf's own frame offsets give through the map
#     (the PE section table is read here independently, in python);
#   - without a map, or with a map or perfinfo-PID.map of another build, the frames stay
#     [r2rapp.dll] exactly as perf prints them, with a warning and the reason in the summary;
#   - --r2r-rva names them by method RVA instead;
#   - damaged images never crash the conversion;
#   - on fixtures/dotnet-jitdump (when present), maps made from the runtime's [PreJIT] records name
#     the R2R frames of the raw recording with the weights perf gives after perf inject;
#   - native: the SDK's own libcoreclr.so, with a libcoreclr.so.dbg made by objcopy beside it,
#     resolves through .gnu_debuglink to the same names perf 6.1 gives on the same tree.
# Run by tests/run.sh; prints "ok    r2r/NAME", "FAIL  r2r/NAME: why" or "skip  r2r/NAME: why".
#
#   PERFCONV          binary under test;  FILTERS="w1 w2"  only cases whose name has one of the words
#   The data is regenerated with tests/data/r2r/make.sh (needs the .NET SDK and perf).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" r2r
DATA=$top/tests/data/r2r
APPDIR=/tmp/r2rapp/out          # where the recording saw the app
RT_VERSION=$(cat "$DATA/runtime-version" 2>/dev/null)
RT_DIR=/usr/share/dotnet/shared/Microsoft.NETCore.App/$RT_VERSION
need_python r2r

# tree NAME [FILES...]: a fresh symfs tree with the app directory; echoes its path
tree() {
	local t=$TMP/$1
	shift
	rm -rf "$t"
	mkdir -p "$t$APPDIR"
	cp "$DATA/r2rapp.dll" "$t$APPDIR/"
	for f in "$@"; do cp "$DATA/$f" "$t$APPDIR/"; done
	echo "$t"
}

# conv OUT ARGS...: perfconv on the recording; stderr to OUT.err; status in $rc.  No kernel
# symbols (an empty kallsyms): kernel frames do not matter here, and reading /proc/kallsyms for
# every run would cost most of the time.
: >"$TMP/kallsyms"
conv() {
	local out=$1
	shift
	"$PERFCONV" -i "$DATA/perf.data" -o "$out" --kallsyms "$TMP/kallsyms" --dotnet-names keep "$@" 2>"$out.err"
	rc=$?
}

# methods FOLDED: "count name" per R2R frame name of the app (weighted by the period)
methods() {
	python3 - "$1" <<'EOF'
import sys, collections
c = collections.Counter()
for l in open(sys.argv[1]):
    stack, n = l.rstrip('\n').rsplit(' ', 1)
    for f in stack.split(';'):
        if 'Program::' in f or f.startswith('[r2rapp.dll'):
            c[f] += int(n)
for k in sorted(c):
    print(c[k], k)
EOF
}

# What perf's own frame offsets give through the map: perf prints the file offset of each
# frame in r2rapp.dll; the section table turns it into an RVA, the map into a name.
expect_from_perf() {
	HOME=$TMP/home perf script -i "$DATA/perf.data" --symfs "$1" -F period,ip,sym,dso 2>/dev/null |
	python3 -c '
import sys, struct, re, collections
pe = open(sys.argv[1], "rb").read()
lfanew = struct.unpack_from("<I", pe, 0x3c)[0]
nsec, optsz = struct.unpack_from("<H", pe, lfanew + 6)[0], struct.unpack_from("<H", pe, lfanew + 20)[0]
secs = []
for i in range(nsec):
    o = lfanew + 24 + optsz + 40 * i
    vsize, va, rawsz, raw = struct.unpack_from("<IIII", pe, o + 8)
    secs.append((va, raw, min(vsize, rawsz)))
meth = []
for l in open(sys.argv[2]):
    rva, ln, name = l.rstrip("\n").split(" ", 2)
    if int(rva, 16) < 0xFFFFFFF0:
        meth.append((int(rva, 16), int(ln, 16), name.split("(")[0]))
c = collections.Counter()
period = 0
for l in sys.stdin:
    if re.match(r"^\s*\d+\s*$", l):
        period = int(l)
        continue
    m = re.match(r"\s*([0-9a-f]+) (\S+) \((.*)\)$", l)
    if not m or not m.group(3).endswith("/r2rapp.dll"):
        continue
    off = int(m.group(1), 16)
    rva = [va + off - raw for va, raw, n in secs if raw <= off < raw + n]
    name = [n for r, ln, n in meth if rva and r <= rva[0] < r + ln]
    c[name[0] if name else "[r2rapp.dll]"] += period
for k in sorted(c):
    print(c[k], k)
' "$DATA/r2rapp.dll" "$DATA/r2rapp.ni.r2rmap"
}

have_perf=0
command -v perf >/dev/null 2>&1 && perf script --help >/dev/null 2>&1 && have_perf=1

# --- the map next to the DLL: names, and the counts perf's offsets give -----------------------------
if selected r2r/map-next-to-dll; then
	T=$(tree next r2rapp.ni.r2rmap)
	conv "$TMP/next.folded" --symfs "$T"
	methods "$TMP/next.folded" >"$TMP/next.methods"
	if [ "$rc" != 0 ]; then
		fail r2r/map-next-to-dll "exit status $rc" "$TMP/next.folded.err"
	elif ! grep -q ' System.Int64 Program::Leaf$' "$TMP/next.methods" ||
	     ! grep -q ' System.Int64 Program::Middle$' "$TMP/next.methods" ||
	     grep -q 'r2rapp.dll' "$TMP/next.methods"; then
		fail r2r/map-next-to-dll "Leaf and Middle must resolve, no [r2rapp.dll] frame may stay" "$TMP/next.methods"
	elif ! grep -Eq 'ReadyToRun frames \(unique\): [1-9][0-9]* resolved' "$TMP/next.folded.err"; then
		fail r2r/map-next-to-dll "no ReadyToRun summary line" "$TMP/next.folded.err"
	elif [ "$have_perf" = 1 ]; then
		expect_from_perf "$T" >"$TMP/next.expect"
		if diff -u "$TMP/next.expect" "$TMP/next.methods" >"$TMP/next.diff"; then
			pass r2r/map-next-to-dll
		else
			fail r2r/map-next-to-dll "per-method counts differ from perf's frames through the map" "$TMP/next.diff"
		fi
	else
		pass "r2r/map-next-to-dll (perf not installed: counts not compared)"
	fi
fi

# --- the map in --map-dir, or at the symfs root ------------------------------------------------------
if selected r2r/map-dir; then
	T=$(tree mapdir)
	mkdir -p "$TMP/maps"
	cp "$DATA/r2rapp.ni.r2rmap" "$TMP/maps/"
	conv "$TMP/mapdir.folded" --symfs "$T" --map-dir "$TMP/maps"
	methods "$TMP/mapdir.folded" >"$TMP/mapdir.methods"
	T2=$(tree root)
	cp "$DATA/r2rapp.ni.r2rmap" "$T2/"
	conv "$TMP/root.folded" --symfs "$T2"
	methods "$TMP/root.folded" >"$TMP/root.methods"
	T3=$(tree next3 r2rapp.ni.r2rmap)
	conv "$TMP/next3.folded" --symfs "$T3"
	# a symbol server cache: <name>/r2rmap-v1-<signature>/<name>, lower case
	T4=$(tree cache)
	key=r2rapp.ni.r2rmap/r2rmap-v1-25cccfc76ada1deaee52fd576ec81fff
	mkdir -p "$TMP/cache/$key"
	cp "$DATA/r2rapp.ni.r2rmap" "$TMP/cache/$key/"
	conv "$TMP/cache.folded" --symfs "$T4" --map-dir "$TMP/cache"
	if ! cmp -s "$TMP/cache.folded" "$TMP/next3.folded"; then
		fail r2r/map-dir "a map in a symbol server cache in --map-dir is not found" "$TMP/cache.folded.err"
	elif ! cmp -s "$TMP/mapdir.folded" "$TMP/next3.folded"; then
		fail r2r/map-dir "--map-dir gives another output than the map next to the DLL" "$TMP/mapdir.methods"
	elif ! cmp -s "$TMP/root.folded" "$TMP/next3.folded"; then
		fail r2r/map-dir "a map at the symfs root gives another output than the map next to the DLL" "$TMP/root.methods"
	else
		pass r2r/map-dir
	fi
fi

# --- no map: perf's bytes ----------------------------------------------------------------------------
# With the map's names folded back to [r2rapp.dll] (and equal stacks merged), the output with a map
# must be the output without one: resolution changes nothing else.
unmap() {
	python3 - "$1" <<'EOF'
import sys, collections
c = collections.OrderedDict()
for l in open(sys.argv[1]):
    stack, n = l.rstrip('\n').rsplit(' ', 1)
    s = ';'.join('[r2rapp.dll]' if 'Program::' in f else f for f in stack.split(';'))
    c[s] = c.get(s, 0) + int(n)
for k in sorted(c):
    print(k, c[k])
EOF
}
if selected r2r/no-map; then
	T=$(tree nomap)
	conv "$TMP/nomap.folded" --symfs "$T" --perf-compat
	T2=$(tree withmap r2rapp.ni.r2rmap)
	conv "$TMP/withmap.folded" --symfs "$T2"
	# the default draws a run of unnamed frames of one binary as one (tests/tools/fold_runs.py):
	# every side is compared with its runs folded
	unmap "$TMP/withmap.folded" | python3 tests/tools/fold_runs.py >"$TMP/withmap.unmapped"
	python3 tests/tools/fold_runs.py <"$TMP/nomap.folded" >"$TMP/nomap.runs"
	# without --perf-compat the image's metadata names the same frames
	conv "$TMP/meta.folded" --symfs "$T"
	unmap "$TMP/meta.folded" | python3 tests/tools/fold_runs.py >"$TMP/meta.unmapped"
	if [ "$rc" != 0 ]; then
		fail r2r/no-map "exit status $rc" "$TMP/meta.folded.err"
	elif ! grep -q '\[r2rapp.dll\]' "$TMP/nomap.folded"; then
		fail r2r/no-map "with --perf-compat, frames in the DLL must show as [r2rapp.dll], as perf prints them" "$TMP/nomap.folded"
	elif ! diff -u "$TMP/withmap.unmapped" "$TMP/nomap.runs" >"$TMP/nomap.diff"; then
		fail r2r/no-map "the output without a map is not the output with one, names folded back" "$TMP/nomap.diff"
	elif grep -q '\[r2rapp.dll\]' "$TMP/meta.folded" || ! cmp -s "$TMP/withmap.unmapped" "$TMP/meta.unmapped"; then
		fail r2r/no-map "without a map the metadata must name every frame of the DLL, and nothing else may change" "$TMP/meta.folded"
	elif ! grep -Eq 'ReadyToRun frames \(unique\): [1-9][0-9]* resolved \([1-9][0-9]* named from the images. metadata\)' "$TMP/meta.folded.err"; then
		fail r2r/no-map "the summary must say the metadata named them" "$TMP/meta.folded.err"
	else
		pass r2r/no-map
	fi
fi

# --- a map of another build: unresolved, with a warning --------------------------------------------
if selected r2r/signature-mismatch; then
	T=$(tree mismatch)
	sed '1s/^FFFFFFFF 00 25/FFFFFFFF 00 26/' "$DATA/r2rapp.ni.r2rmap" >"$T$APPDIR/r2rapp.ni.r2rmap"
	conv "$TMP/mismatch.folded" --symfs "$T"
	T2=$(tree nomap2)
	conv "$TMP/nomap2.folded" --symfs "$T2"
	if [ "$rc" != 0 ] || ! cmp -s "$TMP/mismatch.folded" "$TMP/nomap2.folded"; then
		fail r2r/signature-mismatch "a map with another signature must leave the frames as without a map" "$TMP/mismatch.folded.err"
	elif ! grep -q "warning: '.*r2rapp.ni.r2rmap': not used for '$APPDIR/r2rapp.dll': map signature 26" "$TMP/mismatch.folded.err"; then
		fail r2r/signature-mismatch "no warning naming the map and the signatures" "$TMP/mismatch.folded.err"
	else
		# a map with no header at all cannot be checked: not used either
		grep -v '^FFFFFFF' "$DATA/r2rapp.ni.r2rmap" >"$T$APPDIR/r2rapp.ni.r2rmap"
		conv "$TMP/nohdr.folded" --symfs "$T"
		if cmp -s "$TMP/nohdr.folded" "$TMP/nomap2.folded" && grep -q 'no signature line' "$TMP/nohdr.folded.err"; then
			pass r2r/signature-mismatch
		else
			fail r2r/signature-mismatch "a map without its header must not be used" "$TMP/nohdr.folded.err"
		fi
	fi
fi

# --- crossgen1 map (<Name>.ni.{MVID}.map, RVAs, no header) and perfinfo-PID.map -----------------
MVID='{8497809e-72d8-460a-9c89-3a2a331061a5}'
if selected r2r/crossgen1-perfinfo; then
	T=$(tree cg1)
	grep -v '^FFFFFFF' "$DATA/r2rapp.ni.r2rmap" | sed 's/^/00000000/' >"$T$APPDIR/r2rapp.ni.$MVID.map"
	conv "$TMP/cg1.folded" --symfs "$T"
	T2=$(tree cg2 r2rapp.ni.r2rmap)
	conv "$TMP/cg2.folded" --symfs "$T2"
	# the process's pid, as the folded --pid names give it
	pid=$("$PERFCONV" -q -i "$DATA/perf.data" --pid --kallsyms "$TMP/kallsyms" --symfs "$T" | sed -n 's/^dotnet-\([0-9][0-9]*\);.*/\1/p' | sort -u | head -n 1)
	mkdir -p "$TMP/pi-good" "$TMP/pi-bad"
	printf 'ImageLoad;%s/System.Private.CoreLib.dll;{00000000-0000-0000-0000-000000000001};0;\nImageLoad;%s/r2rapp.dll;%s;00007F9201340000;\n' \
		"$RT_DIR" "$APPDIR" "$(echo "$MVID" | tr a-f A-F)" >"$TMP/pi-good/perfinfo-$pid.map"
	printf 'ImageLoad;%s/r2rapp.dll;{11111111-72d8-460a-9c89-3a2a331061a5};\n' "$APPDIR" >"$TMP/pi-bad/perfinfo-$pid.map"
	conv "$TMP/pigood.folded" --symfs "$T2" --map-dir "$TMP/pi-good"
	conv "$TMP/pibad.folded" --symfs "$T2" --map-dir "$TMP/pi-bad"
	conv "$TMP/pibadrva.folded" --symfs "$T2" --map-dir "$TMP/pi-bad" --r2r-rva
	T3=$(tree cg3)
	conv "$TMP/cg3.folded" --symfs "$T3" --perf-compat    # [r2rapp.dll], as perf prints them
	# as the default draws it: each run of unnamed frames of one binary one frame
	python3 tests/tools/fold_runs.py <"$TMP/cg3.folded" >"$TMP/cg3.runs"
	if [ -z "$pid" ]; then
		fail r2r/crossgen1-perfinfo "no pid in the --pid output"
	elif ! cmp -s "$TMP/cg1.folded" "$TMP/cg2.folded"; then
		fail r2r/crossgen1-perfinfo "a crossgen1 map gives other names than the r2rmap" "$TMP/cg1.folded.err"
	elif ! cmp -s "$TMP/pigood.folded" "$TMP/cg2.folded"; then
		fail r2r/crossgen1-perfinfo "a perfinfo with the image's MVID must change nothing" "$TMP/pigood.folded.err"
	elif ! cmp -s "$TMP/pibad.folded" "$TMP/cg3.runs" ||
	     ! grep -q "pid $pid loaded MVID {11111111-72d8-460a-9c89-3a2a331061a5} (perfinfo-$pid.map), the file has $MVID" "$TMP/pibad.folded.err"; then
		fail r2r/crossgen1-perfinfo "a perfinfo MVID other than the file's must leave the frames unresolved, with a warning" "$TMP/pibad.folded.err"
	elif ! cmp -s "$TMP/pibadrva.folded" "$TMP/cg3.runs"; then
		fail r2r/crossgen1-perfinfo "--r2r-rva must not name frames from a file other than the one that ran" "$TMP/pibadrva.folded.err"
	else
		pass r2r/crossgen1-perfinfo
	fi
fi

# --- --r2r-rva: frames named by method RVA, perf's counts kept ------------------------------------
if selected r2r/rva; then
	# an image whose metadata cannot be read (its root signature damaged): --r2r-rva still names
	# the frames by the method RVAs of its RUNTIME_FUNCTIONS
	T=$(tree rva)
	python3 - "$T$APPDIR/r2rapp.dll" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b"BSJB")
assert i > 0
b[i:i + 4] = b"XXXX"
open(sys.argv[1], "wb").write(b)
EOF
	conv "$TMP/rva.folded" --symfs "$T" --r2r-rva
	methods "$TMP/rva.folded" >"$TMP/rva.methods"
	T2=$(tree rva2 r2rapp.ni.r2rmap)
	conv "$TMP/rva2.folded" --symfs "$T2" --r2r-rva
	# the RUNTIME_FUNCTIONS of the image start where the map's methods do
	methods "$TMP/rva2.folded" | sed -e 's/System.Int64 Program::Leaf/[r2rapp.dll+0x10a80]/' \
		-e 's/System.Int64 Program::Middle/[r2rapp.dll+0x10ad0]/' -e 's/System.Int32 Program::Main/[r2rapp.dll+0x10ae0]/' |
		sort -k2 >"$TMP/rva2.methods"
	sort -k2 "$TMP/rva.methods" >"$TMP/rva.sorted"
	if [ "$rc" != 0 ] || ! grep -q ' \[r2rapp.dll+0x10a80\]$' "$TMP/rva.methods"; then
		fail r2r/rva "no [r2rapp.dll+0x10a80] frame (Leaf's RVA)" "$TMP/rva.methods"
	elif ! diff -u "$TMP/rva2.methods" "$TMP/rva.sorted" >"$TMP/rva.diff"; then
		fail r2r/rva "frames by RVA do not match the map's methods" "$TMP/rva.diff"
	else
		pass r2r/rva
	fi
fi

# --- --resolve-jit without a map: names from the image's own metadata -------------------------------
# The frames must fall into the same methods, with the same weights, as through crossgen2's map
# (both named down to "Type::Method" to compare: folded output drops the parameters and the
# runtime's tier tag); a map that matches still wins; an image laid
# out otherwise than the process mapped it (another build) names nothing and says so.
methodkey() {
	python3 - "$1" <<'EOF'
import sys, re, collections
c = collections.Counter()
for l in open(sys.argv[1]):
    stack, n = l.rstrip('\n').rsplit(' ', 1)
    fr = []
    for f in stack.split(';'):
        m = re.search(r'([^ \[\]]+::[^( ]+)', f)
        fr.append(m.group(1) if m and 'Program::' in f else f)
    c[';'.join(fr)] += int(n)
for k in sorted(c):
    print(k, c[k])
EOF
}
if selected r2r/metadata; then
	T=$(tree meta)
	conv "$TMP/meta.folded" --symfs "$T" --resolve-jit
	T2=$(tree metamap r2rapp.ni.r2rmap)
	conv "$TMP/metamap.folded" --symfs "$T2" --resolve-jit
	methodkey "$TMP/meta.folded" >"$TMP/meta.keys"
	methodkey "$TMP/metamap.folded" >"$TMP/metamap.keys"
	# another build: .text 4 KiB longer, the sections after it moved
	T3=$(tree metaother)
	python3 - "$DATA/r2rapp.dll" "$T3$APPDIR/r2rapp.dll" <<'EOF'
import sys, struct
d = bytearray(open(sys.argv[1], 'rb').read())
lf = struct.unpack_from('<I', d, 0x3c)[0]
ns, osz = struct.unpack_from('<H', d, lf + 6)[0], struct.unpack_from('<H', d, lf + 20)[0]
text = lf + 24 + osz
va, rsz, raw = struct.unpack_from('<III', d, text + 12)
end = raw + rsz
struct.pack_into('<I', d, text + 16, rsz + 0x1000)
for i in range(1, ns):
    o = text + 40 * i
    struct.pack_into('<I', d, o + 20, struct.unpack_from('<I', d, o + 20)[0] + 0x1000)
d[end:end] = bytes(0x1000)
open(sys.argv[2], 'wb').write(d)
EOF
	conv "$TMP/metaother.folded" --symfs "$T3" --resolve-jit
	if [ "$rc" != 0 ]; then
		fail r2r/metadata "exit status $rc" "$TMP/metaother.folded.err"
	elif grep -q 'r2rapp.dll' "$TMP/meta.folded" || ! grep -q ';int64 \[r2rapp\] Program::Leaf' "$TMP/meta.folded"; then
		fail r2r/metadata "every frame of the app must be named from its metadata, in the runtime's style" "$TMP/meta.folded"
	elif ! grep -Eq 'ReadyToRun frames \(unique\): [1-9][0-9]* resolved \([1-9][0-9]* named from the images. metadata\), [0-9]+ unresolved' "$TMP/meta.folded.err"; then
		fail r2r/metadata "the summary must count the frames named from metadata" "$TMP/meta.folded.err"
	elif ! diff -u "$TMP/metamap.keys" "$TMP/meta.keys" >"$TMP/meta.diff"; then
		fail r2r/metadata "metadata names other methods than crossgen2's map" "$TMP/meta.diff"
	elif grep -q '\[r2rapp\]' "$TMP/metamap.folded"; then
		fail r2r/metadata "a matching map must win over the metadata" "$TMP/metamap.folded"
	elif ! grep -q '\[r2rapp.dll\]' "$TMP/metaother.folded" ||
	     ! grep -q "warning: '$T3$APPDIR/r2rapp.dll': not the image that ran: no section of the file is mapped at offset 0x0 for 0x2000 bytes" "$TMP/metaother.folded.err"; then
		fail r2r/metadata "an image of another layout must name nothing, with a warning" "$TMP/metaother.folded.err"
	else
		pass r2r/metadata
	fi
fi

# --- damaged images: a warning or nothing, never a crash -------------------------------------------
if selected r2r/damaged; then
	T=$(tree damaged r2rapp.ni.r2rmap)
	bad=
	for cut in 0 2 64 200 300 400 511 512 1000 2000 4000 6000; do
		head -c $cut "$DATA/r2rapp.dll" >"$T$APPDIR/r2rapp.dll"
		conv "$TMP/damaged.folded" --symfs "$T"
		[ "$rc" = 0 ] || { bad="cut at $cut: exit status $rc"; break; }
	done
	if [ -z "$bad" ]; then
		python3 - "$DATA/r2rapp.dll" "$T$APPDIR/r2rapp.dll" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
lfanew = int.from_bytes(d[0x3c:0x40], 'little')
d[lfanew + 6:lfanew + 8] = (500).to_bytes(2, 'little')     # 500 sections
open(sys.argv[2], 'wb').write(d)
EOF
		conv "$TMP/damaged.folded" --symfs "$T"
		if [ "$rc" != 0 ]; then
			bad="500 sections: exit status $rc"
		elif ! grep -q "warning: '$T$APPDIR/r2rapp.dll': bad PE image at offset [0-9]*: PE image with 500 sections" "$TMP/damaged.folded.err"; then
			bad="no warning naming the file and offset for a bad PE header"
		fi
	fi
	if [ -n "$bad" ]; then
		fail r2r/damaged "$bad" "$TMP/damaged.folded.err"
	else
		pass r2r/damaged
	fi
fi

# --- a real .NET 10 recording (fixtures/dotnet-jitdump): R2R maps made from the runtime's [PreJIT]
# jitdump records must name the framework's R2R frames of the raw perf.data with the weights perf
# gives after `perf inject --jit` (expected/folded.txt).  Names that JIT-compiled code also has are
# left out: resolving those needs the jitdump itself.
if selected r2r/prejit-fixture; then
	FX=$FIX/dotnet-jitdump
	case $FX in /*) ;; *) FX=$top/$FX ;; esac
	dump=$(ls "$FX"/maps/jit-*.dump "$FX"/maps/jit-*.dump.xz 2>/dev/null | head -n 1)
	if [ ! -f "$FX/perf.data" ] || [ -z "$dump" ]; then
		fail r2r/prejit-fixture "no fixtures/dotnet-jitdump with its jitdump"
	elif [ "$have_perf" != 1 ]; then
		skip r2r/prejit-fixture "perf is needed to list the recording's mappings"
	elif [ ! -f "$(dirname "$FX")/root/usr/share/dotnet/shared/Microsoft.NETCore.App/$(tr -dc '0-9.' <"$FX/DOTNET_RUNTIME" 2>/dev/null)/System.Private.CoreLib.dll" ]; then
		skip r2r/prejit-fixture "the fixture's .NET runtime is not installed (see $FX/DOTNET_RUNTIME)"
	else
		case $dump in
		*.xz) xz -dc "$dump" >"$TMP/prejit.dump" ;;
		*) cp "$dump" "$TMP/prejit.dump" ;;
		esac
		perf script -i "$FX/perf.data" --show-mmap-events 2>/dev/null | grep 'PERF_RECORD_MMAP2' >"$TMP/prejit.mmaps"
		python3 "$top/tests/tools/prejit-r2rmap.py" "$TMP/prejit.mmaps" "$TMP/prejit.dump" "$(dirname "$FX")/root" \
			"$TMP/prejit-maps" >"$TMP/prejit.only"
		"$PERFCONV" -i "$FX/perf.data" -o "$TMP/prejit.folded" --symfs "$(dirname "$FX")/root" \
			--kallsyms "$FX/kallsyms" --map-dir "$TMP/prejit-maps" --dotnet-names keep 2>"$TMP/prejit.err"
		rc=$?
		python3 - "$TMP/prejit.only" "$TMP/prejit.folded" "$FX/expected/folded.txt" >"$TMP/prejit.cmp" <<'EOF2'
import sys, collections
only = set(l.rstrip('\n') for l in open(sys.argv[1]))
def weights(fn):
    c = collections.Counter()
    for l in open(fn):
        stack, n = l.rstrip('\n').rsplit(' ', 1)
        for f in stack.split(';'):
            if f in only:
                c[f] += int(n)
    return c
a, b = weights(sys.argv[2]), weights(sys.argv[3])
for n in sorted(set(a) | set(b)):
    if a[n] != b[n]:
        print('perfconv %d perf %d %s' % (a[n], b[n], n))
print('%d names' % len(set(b)))
EOF2
		if [ "$rc" != 0 ]; then
			fail r2r/prejit-fixture "exit status $rc" "$TMP/prejit.err"
		elif [ "$(wc -l <"$TMP/prejit.cmp")" != 1 ] || grep -q '^0 names' "$TMP/prejit.cmp"; then
			fail r2r/prejit-fixture "R2R frames differ from perf inject's" "$TMP/prejit.cmp"
		else
			pass "r2r/prejit-fixture ($(cat "$TMP/prejit.cmp") of R2R methods, same weights as perf inject)"
		fi
	fi
fi

# --- native runtime: libcoreclr.so + libcoreclr.so.dbg through .gnu_debuglink, as perf -------------
if selected r2r/native-debuglink; then
	if [ -z "$RT_VERSION" ] || [ ! -f "$RT_DIR/libcoreclr.so" ]; then
		skip r2r/native-debuglink "the .NET runtime $RT_VERSION of the recording is not installed ($RT_DIR)"
	elif ! command -v objcopy >/dev/null 2>&1 || ! command -v readelf >/dev/null 2>&1; then
		skip r2r/native-debuglink "objcopy and readelf (binutils) are needed"
	else
		T=$TMP/native
		mkdir -p "$T$RT_DIR"
		cp "$RT_DIR/libcoreclr.so" "$T$RT_DIR/"
		# a symbol every 4 KiB of .text, added to a copy, then split off as perf's build does
		python3 - "$RT_DIR/libcoreclr.so" >"$TMP/addsyms" <<'EOF'
import sys, subprocess, re
out = subprocess.check_output(['readelf', '-SW', sys.argv[1]]).decode()
m = re.search(r'\] \.text\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)', out)
addr, size = int(m.group(1), 16), int(m.group(2), 16)
for o in range(0, size, 0x1000):
    print('--add-symbol=clr_text_%06x=.text:0x%x,function,global' % (addr + o, o))
EOF
		cp "$RT_DIR/libcoreclr.so" "$TMP/withsyms.so"
		if ! readelf -p .gnu_debuglink "$RT_DIR/libcoreclr.so" 2>/dev/null | grep -q 'libcoreclr.so.dbg'; then
			fail r2r/native-debuglink "the SDK's libcoreclr.so has no .gnu_debuglink to libcoreclr.so.dbg"
		elif ! objcopy @"$TMP/addsyms" "$TMP/withsyms.so" 2>"$TMP/objcopy.err" ||
		     ! objcopy --only-keep-debug "$TMP/withsyms.so" "$T$RT_DIR/libcoreclr.so.dbg" 2>>"$TMP/objcopy.err"; then
			fail r2r/native-debuglink "objcopy failed" "$TMP/objcopy.err"
		else
			conv "$TMP/native.folded" --symfs "$T"
			python3 - "$TMP/native.folded" >"$TMP/native.names" <<'EOF'
import sys, collections
c = collections.Counter()
for l in open(sys.argv[1]):
    stack, n = l.rstrip('\n').rsplit(' ', 1)
    for f in stack.split(';'):
        if f.startswith('clr_text_') or f == '[libcoreclr.so]':
            c[f] += int(n)
for k in sorted(c):
    print(c[k], k)
EOF
			if [ "$rc" != 0 ] || ! grep -q ' clr_text_' "$TMP/native.names"; then
				fail r2r/native-debuglink "libcoreclr.so frames did not resolve from libcoreclr.so.dbg" "$TMP/native.names"
			elif [ "$have_perf" = 1 ]; then
				perf script -i "$DATA/perf.data" --symfs "$T" -F period,ip,sym,dso 2>/dev/null | python3 -c '
import sys, re, collections
c = collections.Counter()
period = 0
for l in sys.stdin:
    if re.match(r"^\s*\d+\s*$", l):
        period = int(l)
        continue
    m = re.match(r"\s*[0-9a-f]+ (\S+) \((.*/libcoreclr\.so)\)$", l)
    if m:
        s = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
        c["[libcoreclr.so]" if s == "[unknown]" else s] += period
for k in sorted(c):
    print(c[k], k)
' >"$TMP/native.perf"
				if diff -u "$TMP/native.perf" "$TMP/native.names" >"$TMP/native.diff"; then
					pass r2r/native-debuglink
				else
					fail r2r/native-debuglink "libcoreclr.so names differ from perf's on the same tree" "$TMP/native.diff"
				fi
			else
				pass "r2r/native-debuglink (perf not installed: not compared)"
			fi
		fi
	fi
fi
exit 0
