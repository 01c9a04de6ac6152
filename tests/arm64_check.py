#!/usr/bin/env python3
"""tests/arm64_check.py - check perfconv's user frames of an aarch64 DWARF recording against
perf 6.1's own reading of it and against the recording's bytes; for tests/arm64.sh.

  arm64_check.py UREGS PERF_DATA PERFCONV_TEXT [--caller | --alone]

UREGS is `perf script -F time,uregs --show-mmap-events` (perf names the arm64 registers: x0..x28,
x29, lr, sp, pc), PERFCONV_TEXT `perfconv -f perf-script --fields time,ip,dso`.  For every
sample, the first user frame must be perf's pc, as perf prints an address in a file: pc - map
start + offset, in the map's file.  With --caller the second user frame must be the caller
that the frame record of the sample's function gives: the word at x29 + 8 of the copied stack
(found in PERF_DATA right after the sample's registers, which end x29 lr sp pc, and the u64
size of the copy), less one; and no third frame.  With --alone the pc must be the only user
frame.  Prints one line on failure, exits 1.
"""
import re
import struct
import sys

MAP = re.compile(r"PERF_RECORD_MMAP2? [^\[]*\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0)[^\]]*\]: (\S+) (.*)$")


def fail(msg):
    print(msg)
    sys.exit(1)


def main():
    uregs, data, text = sys.argv[1:4]
    caller = "--caller" in sys.argv[4:]
    alone = "--alone" in sys.argv[4:]
    maps, samples = [], []
    time = None
    for line in open(uregs, encoding="utf-8", errors="replace"):
        m = MAP.search(line)
        if m:
            if "x" in m.group(4):
                maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(5)))
            continue
        s = line.split()
        if s and re.fullmatch(r"[0-9]+\.[0-9]+:", s[0]):
            time = s.pop(0)
        if s and s[0].startswith("ABI:") and time:
            regs = dict(kv.split(":", 1) for kv in s[1:])
            samples.append((time, {k: int(v, 16) for k, v in regs.items()}))
            time = None

    def where(addr):
        for start, size, pgoff, name in reversed(maps):
            if start <= addr < start + size:
                return addr - start + pgoff, name
        fail("0x%x is in no executable map of perf's" % addr)

    got, cur = {}, None
    for line in open(text, encoding="utf-8", errors="replace"):
        s = line.strip()
        if re.fullmatch(r"[0-9]+\.[0-9]+:", s):
            cur = s
            got[cur] = []
        elif s and cur and not s.endswith("([kernel.kallsyms])"):
            m = re.fullmatch(r"([0-9a-f]+) \((.*)\)", s)
            if not m:
                fail("unexpected frame line: " + s)
            got[cur].append((int(m.group(1), 16), m.group(2)))
    if not samples:
        fail("no sample with user registers in " + uregs)
    raw = open(data, "rb").read()
    for time, r in samples:
        frames = got.get(time)
        if not frames:
            fail("%s: no user frame (perf's pc 0x%x)" % (time, r["pc"]))
        want = where(r["pc"])
        if frames[0] != want:
            fail("%s: first user frame %x (%s), perf's pc is %x (%s)" % (time, frames[0][0], frames[0][1], want[0], want[1]))
        if alone and len(frames) != 1:
            fail("%s: user frames after the pc: %s" % (time, frames[1:]))
        if not caller:
            continue
        key = struct.pack("<4Q", r["x29"], r["lr"], r["sp"], r["pc"])
        at = raw.find(key)
        if at < 0 or raw.find(key, at + 1) >= 0:
            fail("%s: the registers are not once in the recording" % time)
        copy = at + 32 + 8
        off = r["x29"] + 8 - r["sp"]
        (ra,) = struct.unpack_from("<Q", raw, copy + off)
        want = where(ra - 1)
        if frames[1:] != [want]:
            fail("%s: user frames after the pc %s, the frame record at x29 gives %x (%s)" % (time, frames[1:], want[0], want[1]))
    print("%d samples" % len(samples))


main()
