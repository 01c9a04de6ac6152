#!/usr/bin/env python3
"""grow-attrs.py IN OUT EXTRA - rewrite a perf.data file as a newer perf would write it:
every perf_event_attr is EXTRA bytes longer (attr.size grows, the new bytes are zero).

File mode: the attrs section is written again at the end of the file with entries of the new
size and the header points to it (the old section stays as unused bytes).  Pipe mode: every
HEADER_ATTR record (type 64) gets the longer attr before its ids.  Everything else is copied."""
import struct
import sys

PERF_MAGIC2 = b"PERFILE2"
HEADER_ATTR = 64


def grow_file(buf, extra):
    attr_size = struct.unpack_from("<Q", buf, 16)[0]
    attrs_off, attrs_size = struct.unpack_from("<QQ", buf, 24)
    out = bytearray(buf)
    new = bytearray()
    for i in range(attrs_size // attr_size):
        e = buf[attrs_off + i * attr_size: attrs_off + (i + 1) * attr_size]
        attr, ids = bytearray(e[:-16]), e[-16:]
        struct.pack_into("<I", attr, 4, len(attr) + extra)
        new += attr + bytes(extra) + ids
    pos = len(out)
    out += new
    struct.pack_into("<Q", out, 16, attr_size + extra)
    struct.pack_into("<QQ", out, 24, pos, len(new))
    return bytes(out)


def grow_pipe(buf, extra):
    out = bytearray(buf[:16])
    pos = 16
    while pos + 8 <= len(buf):
        rtype, misc, size = struct.unpack_from("<IHH", buf, pos)
        if size < 8:
            break
        rec = buf[pos:pos + size]
        if rtype == HEADER_ATTR:
            asize = struct.unpack_from("<I", rec, 8 + 4)[0]
            attr = bytearray(rec[8:8 + asize])
            struct.pack_into("<I", attr, 4, asize + extra)
            body = attr + bytes(extra) + rec[8 + asize:]
            out += struct.pack("<IHH", rtype, misc, 8 + len(body)) + body
        else:
            out += rec
            if rtype == 66 and size >= 12:  # HEADER_TRACING_DATA: its payload follows the record
                n = struct.unpack_from("<I", rec, 8)[0]
                out += buf[pos + size:pos + size + n]
                size += n
        pos += size
    out += buf[pos:]
    return bytes(out)


def main():
    src, dst, extra = sys.argv[1], sys.argv[2], int(sys.argv[3])
    buf = open(src, "rb").read()
    if buf[:8] != PERF_MAGIC2:
        sys.exit("grow-attrs.py: %s: not a little-endian perf.data file" % src)
    pipe = struct.unpack_from("<Q", buf, 8)[0] == 16
    open(dst, "wb").write(grow_pipe(buf, extra) if pipe else grow_file(buf, extra))


main()
