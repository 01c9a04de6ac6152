#!/usr/bin/env python3
"""events-clock.py - lay the runtime's GC pauses over perf's samples, to check that both are on one clock.

    events-clock.py SCRIPT PAUSES [PID]

SCRIPT is `perf script -F comm,tid,time,ip,dso --ns -G` text (or perfconv's -f perf-script with the same
fields) of a `perf record -k mono` recording; PAUSES is `test_events --pauses FILE.nettrace` of the same run
(GCSuspendEEBegin to GCRestartEEEnd, in the nettrace's QPC ticks, which are ns).  While the runtime is
suspended for a GC the app's threads run the GC: samples inside the pauses should end in libcoreclr, libc or
the kernel far more often than samples elsewhere.  The pauses are also moved by a few offsets: if the clocks
agree, the share falls as soon as they move by more than a pause's length.  Prints one line per offset.
"""
import re
import sys

NATIVE = re.compile(r'libcoreclr|libc\.so|libc-|kernel\.kallsyms|libclrgc')


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    pid = sys.argv[3] if len(sys.argv) > 3 else None
    samples = []
    for line in open(sys.argv[1], errors='replace'):
        m = re.match(r'\s*(.*?)\s+(\d+)\s+(\d+)\.(\d{9}):\s+[0-9a-f]+\s+\((.*)\)', line)
        if not m:
            continue
        if pid and m.group(2) != pid:
            continue
        t = int(m.group(3)) * 1000000000 + int(m.group(4))
        samples.append((t, bool(NATIVE.search(m.group(5)))))
    pauses = []
    for line in open(sys.argv[2]):
        f = line.split()
        if f and f[0] == 'pause':
            pauses.append((int(f[1]), int(f[2])))
    total = sum(e - b for b, e in pauses)
    native_all = sum(1 for _, n in samples if n)
    print(f'samples {len(samples)}, native {100.0 * native_all / max(1, len(samples)):.1f}%; '
          f'pauses {len(pauses)}, {total / 1e6:.3f} ms in all')
    for off_us in (0, -200, 200, -500, 500, -2000, 2000, -10000, 10000):
        off = off_us * 1000
        inside = [n for t, n in samples if any(b + off <= t <= e + off for b, e in pauses)]
        share = 100.0 * sum(inside) / len(inside) if inside else 0.0
        print(f'offset {off_us / 1000:+.1f} ms: {len(inside)} samples inside, {share:.0f}% native')


if __name__ == '__main__':
    main()
