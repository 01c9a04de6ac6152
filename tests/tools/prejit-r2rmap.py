#!/usr/bin/env python3
# tests/tools/prejit-r2rmap.py MMAPS JITDUMP SYMFS OUTDIR - R2R maps made from the runtime's own
# [PreJIT] jitdump records (.NET 5+ logs every R2R method it starts to use), placed by the
# recording's MMAP2 lines (`perf script --show-mmap-events`): address -> file offset -> RVA
# through the PE section table, with the signature and file name of each image's debug entry 21.
# Prints the method names (cut at "(" as the folded output cuts them) that only R2R code has, so
# that a test can compare their weight with perf inject's output.  Used by tests/r2r.sh.
import sys, struct, re, os, collections
mmaps_txt, dump, symfs, outdir = sys.argv[1:5]
maps = []
for l in open(mmaps_txt):
    m = re.search(r'PERF_RECORD_MMAP2 \d+/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (?:0x)?([0-9a-f]+) .*\]: r-xp (\S+\.dll)$', l.strip())
    if m:
        maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4)))
d = open(dump, 'rb').read()
pos, recs = 40, []
while pos + 16 <= len(d):
    rid, size, ts = struct.unpack_from('<IIQ', d, pos)
    if size < 16:
        break
    if rid == 0:
        addr, csize = struct.unpack_from('<QQ', d, pos + 32)
        name = d[pos + 56:d.index(b'\0', pos + 56)].decode('utf-8', 'replace')
        recs.append((addr, csize, name))
    pos += size
def pe_info(path):
    pe = open(path, 'rb').read()
    lf = struct.unpack_from('<I', pe, 0x3c)[0]
    ns, osz = struct.unpack_from('<H', pe, lf + 6)[0], struct.unpack_from('<H', pe, lf + 20)[0]
    opt = lf + 24
    secs = [struct.unpack_from('<IIII', pe, opt + osz + 40 * i + 8) for i in range(ns)]
    ddir = opt + (112 if struct.unpack_from('<H', pe, opt)[0] == 0x20b else 96)
    drva, dsz = struct.unpack_from('<II', pe, ddir + 6 * 8)
    def r2o(r):
        for vs, va, rs, raw in secs:
            if va <= r < va + rs:
                return raw + r - va
    o = r2o(drva)
    for k in range(dsz // 28):
        typ, sz, _, ptr = struct.unpack_from('<IIII', pe, o + 28 * k + 12)
        if typ == 21 and pe[ptr:ptr + 4] == b'R2RM':
            sig = pe[ptr + 4:ptr + 20].hex().upper()
            name = pe[ptr + 24:pe.index(b'\0', ptr + 24)].decode()
            return secs, sig, name
    return secs, None, None
out = collections.defaultdict(list)
jit_names, r2r_names = set(), set()
for addr, csize, name in recs:
    short = name.split('(')[0]
    if not (name.endswith('[PreJIT]') or name.endswith('[PreJit-cold]')):
        jit_names.add(short)
        continue
    for st, ln, pg, path in maps:
        if st <= addr < st + ln:
            off = addr - st + pg
            secs, sig, mname = pe_info(symfs + path)
            for vs, va, rs, raw in secs:
                if raw <= off < raw + min(vs, rs):
                    out[path].append((va + off - raw, csize, name))
                    r2r_names.add(short)
            break
os.makedirs(outdir, exist_ok=True)
for path, ents in out.items():
    secs, sig, mname = pe_info(symfs + path)
    with open(os.path.join(outdir, mname), 'w') as f:
        f.write('FFFFFFFF 00 %s\nFFFFFFFE 00 1\nFFFFFFFD 00 2\nFFFFFFFC 00 3\nFFFFFFFB 00 1\n' % sig)
        for rva, csize, name in sorted(ents):
            f.write('%08X %02X %s\n' % (rva, csize, name))
for n in sorted(r2r_names - jit_names):
    print(n)
