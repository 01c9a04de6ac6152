#!/usr/bin/env python3
"""tests/tools/jit-late.py OUTDIR - a small perf.data and jitdump (tests/jit.sh, jit/late-jitdump).

Process PID runs code of a binary that has no symbols (0x401000 in /usr/bin/fakenode) and
then JIT code in a memfd:doublemapper mapping; its jitdump (read at the first JIT frame, with
--map-dir) names the binary's code too, as V8's embedded builtins are named.  Then the
process maps more JIT code elsewhere and runs the binary's code again:

    t=1  0x401000          the jitdump is not read yet: [unknown] in /usr/bin/fakenode
    t=2  0x7f0000000010    JIT code: the jitdump is read, and names it
    t=3  0x401000          perfconv names it from the jitdump now (jitted-PID-2.so)

The callchain caches must not keep t=1's frame for t=3: the mapping between them is
elsewhere, but the JIT symbols changed since (the jitdump was read).  The recording has no
CLOCK_MONOTONIC clock, so the jitdump is looked up without time and its answers are cached.
"""
import os
import struct
import sys

PID = 4999999  # above any pid_max: never a live process
out = sys.argv[1]
os.makedirs(out, exist_ok=True)

IP, TID, TIME, CALLCHAIN, PERIOD = 1 << 0, 1 << 1, 1 << 2, 1 << 5, 1 << 8
sample_type = IP | TID | TIME | CALLCHAIN | PERIOD
# perf_event_attr, PERF_ATTR_SIZE_VER5 (112 bytes): software cpu-clock, period 1000
flags = (1 << 8) | (1 << 9)  # mmap, comm
attr = struct.pack('<IIQQQQQIIQQQQIiQIHH', 1, 112, 0, 1000, sample_type, 0, flags, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                   0, 0)
assert len(attr) == 112


def rec(typ, body, misc=0):
    body += b'\0' * (-len(body) % 8)
    return struct.pack('<IHH', typ, misc, 8 + len(body)) + body


def name(s):
    b = s.encode() + b'\0'
    return b + b'\0' * (-len(b) % 8)


def mmap2(start, length, pgoff, prot, flags, fname):
    return rec(10, struct.pack('<IIQQQIIQQII', PID, PID, start, length, pgoff, 0, 0, 0, 0, prot, flags) + name(fname),
               misc=2)  # PERF_RECORD_MISC_USER


def comm(s):
    return rec(3, struct.pack('<II', PID, PID) + name(s), misc=2)


def sample(t, ip):
    chain = [0xfffffffffffffe00, ip]  # PERF_CONTEXT_USER
    return rec(9, struct.pack('<QIIQQQ', ip, PID, PID, t, 1000, len(chain)) + b''.join(struct.pack('<Q', c) for c in chain),
               misc=2)


PROT_RX, MAP_PRIVATE, MAP_SHARED = 5, 2, 1
data = b''.join([
    comm('fakenode'),
    mmap2(0x400000, 0x10000, 0, PROT_RX, MAP_PRIVATE, '/usr/bin/fakenode'),
    sample(1, 0x401000),
    mmap2(0x7f0000000000, 0x1000, 0, PROT_RX, MAP_SHARED, '/memfd:doublemapper (deleted)'),
    sample(2, 0x7f0000000010),
    mmap2(0x7f0000100000, 0x1000, 0, PROT_RX, MAP_SHARED, '/memfd:doublemapper (deleted)'),
    sample(3, 0x401000),
])
hdr_size, attr_entry = 104, 112 + 16
attrs_off = hdr_size
data_off = attrs_off + attr_entry
hdr = struct.pack('<8sQQQQQQQQ', b'PERFILE2', hdr_size, attr_entry, attrs_off, attr_entry, data_off, len(data), 0, 0)
hdr += b'\0' * 32  # no features
with open(os.path.join(out, 'perf.data'), 'wb') as f:
    f.write(hdr + attr + struct.pack('<QQ', 0, 0) + data)


def code_load(t, addr, size, index, fname):
    body = struct.pack('<IIQQQQ', PID, PID, addr, addr, size, index) + fname.encode() + b'\0' + b'\xcc' * size
    return struct.pack('<IIQ', 0, 16 + len(body), t) + body


jd = struct.pack('<IIIIIIQQ', 0x4A695444, 1, 40, 62, 0, PID, 0, 0)
jd += code_load(0, 0x401000, 0x100, 2, 'Builtin:FakeBuiltin')
jd += code_load(0, 0x7f0000000000, 0x100, 3, 'LazyCompile:fakeJit')
with open(os.path.join(out, 'jit-%d.dump' % PID), 'wb') as f:
    f.write(jd)
