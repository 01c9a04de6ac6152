#!/usr/bin/env python3
"""make-seeds.py PERF.DATA OUTPREFIX N: write N fuzz_unwind inputs from the samples of a
--call-graph dwarf recording (file mode, uncompressed): the executable mappings of the
sample's process, its user registers and its copied stack, in fuzz/fuzz_unwind.c's layout."""
import struct, sys

FILES = {"callgraph": 1, "libc.so.6": 2, "dwapp": 3, "libdwlib.so": 4}
path, prefix, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = open(path, "rb").read()
attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<QQQQQ", d, 16)
attr = d[attrs_off:attrs_off + attr_size]
sample_type = struct.unpack_from("<Q", attr, 24)[0]
regs_mask = struct.unpack_from("<Q", attr, 80)[0]
maps, out, pos, end = {}, 0, data_off, data_off + data_size
nregs = bin(regs_mask).count("1")
while pos + 8 <= end and out < want:
    typ, misc, size = struct.unpack_from("<IHH", d, pos)
    body = d[pos + 8:pos + size]
    if typ == 10:  # MMAP2
        pid, tid, start, ln, pgoff = struct.unpack_from("<IIQQQ", body, 0)
        name = body[64:].split(b"\0")[0].decode(errors="replace")
        fid = next((v for k, v in FILES.items() if name.endswith("/" + k)), 0)
        maps.setdefault(pid, []).append((start, start + ln, pgoff, fid))
    elif typ == 9 and size > 8192:  # a SAMPLE with a stack copy
        ip, pid, tid, t, addr, period, nr = struct.unpack_from("<QIIQQQQ", body, 0)
        p = 48 + 8 * nr
        abi = struct.unpack_from("<Q", body, p)[0]
        regs = body[p + 8:p + 8 + 8 * nregs]
        p += 8 + 8 * nregs
        ssz = struct.unpack_from("<Q", body, p)[0]
        stack = body[p + 8:p + 8 + ssz]
        dyn = struct.unpack_from("<Q", body, p + 8 + ssz)[0]
        sp = struct.unpack_from("<Q", regs, 8 * 7)[0]  # PERF_REG_X86_SP: the 8th of mask 0xff0fff
        ms = [m for m in maps.get(pid, []) if m[3] or m[0] <= sp < m[1]][-16:]
        blob = bytes([0, len(ms)])
        for s, e, off, fid in ms:
            blob += struct.pack("<QQQBB", s, e, off, fid, 0)
        blob += struct.pack("<Q", regs_mask) + regs + stack[:dyn]
        open("%s-%d.bin" % (prefix, out), "wb").write(blob)
        out += 1
    pos += size
