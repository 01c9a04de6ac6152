#!/usr/bin/env python3
"""fuzz-seeds.py [OUTDIR] - write the reader's fuzz seeds: tiny perf.data files cut from the fixtures.

A whole recording makes every fuzz execution read hundreds of records; libFuzzer then runs a few dozen
inputs a second.  Each seed here is one fixture's file header and attributes (with their ids) plus one
thing (and the same of two aarch64 recordings of the foreign corpus): the first records of one record type (per sample layout, so callchains, user stacks and raw
tracepoint data each get theirs), one feature section, or the first records up to a few KB (COMM, MMAP2
and the first samples: a conversion that resolves something).  Pipe-mode fixtures give the same cuts
of the stream (its HEADER_ATTR records first).  Files are named after what they hold; OUTDIR defaults
to fuzz/seeds/reader.  Run from the top directory after the fixtures change; the output is committed.
"""
import glob, lzma, os, struct, sys

HDR = 104          # perf_file_header
PIPE_HDR = 16
MAX_RECS = 2       # records of one type per seed
SLICE = 4096       # bytes of the leading slice seed
MAX_FEAT = 16384   # feature payloads larger than this are left out (build-id lists of big systems)
COMPRESSED_FEAT, TRACING_FEAT = 27, 1
# recordings of another architecture (aarch64: its kernel addresses, its user registers), from
# the foreign corpus: their slices and whatever record layouts the fixtures lack
FOREIGN = ["simpleperf-perf_merge1", "simpleperf-perf_with_arm_regs"]
PIPE_KEEP = {64, 65, 66, 69, 80}   # HEADER_ATTR/EVENT_TYPE/TRACING_DATA, ID_INDEX, HEADER_FEATURE
RECTYPE = {1: "mmap", 2: "lost", 3: "comm", 4: "exit", 5: "throttle", 6: "unthrottle", 7: "fork",
           8: "read", 9: "sample", 10: "mmap2", 11: "aux", 12: "itrace", 13: "lost-samples",
           14: "switch", 15: "switch-cpu", 16: "namespaces", 17: "ksymbol", 18: "bpf", 19: "cgroup",
           20: "text-poke", 21: "aux-id", 64: "attr", 65: "event-type", 66: "tracing-data",
           67: "build-id", 68: "finished-round", 69: "id-index", 73: "thread-map", 74: "cpu-map",
           78: "event-update", 79: "time-conv", 80: "feature", 81: "compressed", 82: "finished-init"}


def records(d, pos, end):
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", d, pos)
        if size < 8 or pos + size > end:
            return
        yield pos, typ, d[pos:pos + size]
        pos += size


class FileData:
    """A file-mode perf.data: its attrs (with ids), data records and feature sections."""

    def __init__(self, d):
        (self.attr_size, a_off, a_size, self.d_off, self.d_size, _, _) = struct.unpack_from("<7Q", d, 16)
        self.bitmap = d[72:104]
        self.attrs = []
        for i in range(a_size // self.attr_size):
            e = d[a_off + i * self.attr_size:a_off + (i + 1) * self.attr_size]
            ids_off, ids_size = struct.unpack_from("<QQ", e, self.attr_size - 16)
            self.attrs.append((e[:self.attr_size - 16], d[ids_off:ids_off + ids_size]))
        self.recs = list(records(d, self.d_off, self.d_off + self.d_size))
        bits = int.from_bytes(self.bitmap, "little")
        self.feats = {}
        t = self.d_off + self.d_size
        for f in range(256):
            if bits >> f & 1:
                off, size = struct.unpack_from("<QQ", d, t)
                self.feats[f] = d[off:off + size]
                t += 16

    def build(self, recs, feats):
        """A perf.data with these records and feature sections (dict feature -> bytes)."""
        n = len(self.attrs)
        ids_at = HDR + n * self.attr_size
        entries, ids, off = b"", b"", ids_at
        for a, i in self.attrs:
            entries += a + struct.pack("<QQ", off, len(i))
            ids += i
            off += len(i)
        data = b"".join(recs)
        d_off = HDR + len(entries) + len(ids)
        t_off = d_off + len(data)
        table, payload = b"", b""
        p_off = t_off + 16 * len(feats)
        bits = 0
        for f in sorted(feats):
            bits |= 1 << f
            table += struct.pack("<QQ", p_off + len(payload), len(feats[f]))
            payload += feats[f]
        hdr = b"PERFILE2" + struct.pack("<8Q", HDR, self.attr_size, HDR, len(entries), d_off, len(data), 0, 0)
        hdr += bits.to_bytes(32, "little")
        assert len(hdr) == HDR
        return hdr + entries + ids + data + table + payload


def sample_type_of(attr):
    return struct.unpack_from("<Q", attr, 24)[0]


def file_seeds(name, d, out):
    f = FileData(d)
    base = {k: v for k, v in f.feats.items() if k == COMPRESSED_FEAT}
    tracing = {k: v for k, v in f.feats.items() if k == TRACING_FEAT and len(v) <= 4 * MAX_FEAT}
    layout = "st%x" % sample_type_of(f.attrs[0][0]) if f.attrs else "noattr"
    by_type = {}
    for _, typ, r in f.recs:
        by_type.setdefault(typ, []).append(r)
    for typ, rs in by_type.items():
        key = "file-%s-%s" % (RECTYPE.get(typ, "type%d" % typ), layout if typ == 9 else "")
        feats = dict(base)
        if typ == 9:
            feats.update(tracing)
        out.setdefault(key.rstrip("-"), (name, f.build(rs[:MAX_RECS], feats)))
    for feat, payload in f.feats.items():
        if len(payload) <= MAX_FEAT:
            out.setdefault("file-feat%02d" % feat, (name, f.build([], {feat: payload})))
    acc, size = [], 0
    for _, typ, r in f.recs:
        if size + len(r) > SLICE:
            break
        acc.append(r)
        size += len(r)
    out.setdefault("file-slice-" + name, (name, f.build(acc, {**base, **tracing})))


def pipe_seeds(name, d, out):
    hdr = d[:PIPE_HDR]
    recs = list(records(d, PIPE_HDR, len(d)))
    head = [r for _, typ, r in recs if typ in PIPE_KEEP and len(r) <= MAX_FEAT]
    by_type = {}
    for _, typ, r in recs:
        if typ not in PIPE_KEEP:
            by_type.setdefault(typ, []).append(r)
    for typ, rs in by_type.items():
        out.setdefault("pipe-%s-%s" % (RECTYPE.get(typ, "type%d" % typ), name),
                       (name, hdr + b"".join(head + rs[:MAX_RECS])))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "fuzz/seeds/reader"
    out = {}
    for path in sorted(glob.glob("fixtures/*/perf.data")):
        name = os.path.basename(os.path.dirname(path))
        d = open(path, "rb").read()
        if d[:8] == b"PERFILE2" and struct.unpack_from("<Q", d, 8)[0] == HDR:
            file_seeds(name, d, out)
    for name in FOREIGN:
        file_seeds(name, lzma.open("tests/data/foreign/%s/perf.data.xz" % name).read(), out)
    for path in sorted(glob.glob("fixtures/*/pipe.data")):
        d = open(path, "rb").read()
        if d[:8] == b"PERFILE2" and struct.unpack_from("<Q", d, 8)[0] == PIPE_HDR:
            pipe_seeds(os.path.basename(os.path.dirname(path)), d, out)
    os.makedirs(outdir, exist_ok=True)
    for old in glob.glob(os.path.join(outdir, "*.data")):
        os.remove(old)
    for key, (src, blob) in sorted(out.items()):
        with open(os.path.join(outdir, key + ".data"), "wb") as fh:
            fh.write(blob)
    print("%d seeds in %s (largest %d bytes)" % (len(out), outdir, max(len(b) for _, b in out.values())))


main()
