#!/usr/bin/env python3
"""fuzz-seeds-nettrace.py [OUTDIR] - write fuzz_nettrace's seeds: small .nettrace streams cut from
fixtures/dotnet-events.

A whole stream is 400 KB: libFuzzer would skip it (fuzz/run.sh takes seeds up to 400,000 bytes) or
spend every run on it.  Each seed here is one fixture's stream header, its Trace object and all its
metadata blocks, then one stretch of the stream's other blocks (stack, event and sequence point
blocks in their order, up to about 12 KB: the early GCs, the allocation ticks, the exceptions, the
rundown at the end), then the end tag (a seed over 32 KB keeps its first 16 KB only, a cut
stream); and one seed is the first 4 KB, cut in the middle of an
object.  Files are named after the fixture and the stretch's offset.  Run from the top directory
after the fixture changes; the output is committed (OUTDIR defaults to fuzz/seeds/nettrace).
"""
import glob, os, struct, sys

BUDGET = 12000
CUT_OVER, CUT_TO = 32768, 16384


def objects(data):
    """(name, type bytes, body or None for Trace's fields, whole object bytes) after the stream header."""
    p = 8 + 4 + 20
    out = []
    while p < len(data) and data[p] == 5:
        start = p
        nlen = struct.unpack_from('<I', data, p + 3 + 8)[0]
        name = data[p + 15:p + 15 + nlen].decode()
        p += 15 + nlen + 1
        typ = data[start + 1:p]
        body = None
        if name == 'Trace':
            p += 16 + 8 + 8 + 16
        else:
            size = struct.unpack_from('<I', data, p)[0]
            p += 4
            p = (p + 3) & ~3
            body = data[p:p + size]
            p += size
        p += 1  # EndObject
        out.append((name, typ, body, data[start:p]))
    return out


def emit(out, typ, body):
    """a block object at the end of out, its body at the next 4-byte offset as the format wants"""
    out += b'\x05' + typ + struct.pack('<I', len(body))
    while len(out) % 4:
        out += b'\x00'
    out += body + b'\x06'


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else 'fuzz/seeds/nettrace'
    os.makedirs(outdir, exist_ok=True)
    for path in sorted(glob.glob('fixtures/dotnet-events/*.nettrace')):
        data = open(path, 'rb').read()
        base = os.path.basename(path).split('.')[0]
        objs = objects(data)
        head = bytearray(data[:8 + 4 + 20]) + objs[0][3]    # magic, header, Trace
        metas = [o for o in objs[1:] if o[0] == 'MetadataBlock']
        rest = [o for o in objs[1:] if o[0] != 'MetadataBlock']
        with open(os.path.join(outdir, base + '-head4k'), 'wb') as f:
            f.write(data[:4096])
        i = 0
        while i < len(rest):
            out = bytearray(head)
            for m in metas:
                emit(out, m[1], m[2])
            first, size = i, 0
            while i < len(rest) and size < BUDGET:
                emit(out, rest[i][1], rest[i][2])
                size += len(rest[i][2])
                i += 1
            out += b'\x01'
            # an event block of 100 KB makes a seed libFuzzer would cut anyway: keep its start, a cut stream
            if len(out) > CUT_OVER:
                out = out[:CUT_TO]
            with open(os.path.join(outdir, '%s-%03d' % (base, first)), 'wb') as f:
                f.write(out)


if __name__ == '__main__':
    main()
