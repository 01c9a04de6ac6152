#!/usr/bin/env python3
"""fold_runs.py - perf's folded stacks as perfconv's default mode draws them, made from perf's
own output (the tests' oracle for the folding, which does not share its code).

  fold_runs.py [--strip-tiers] < perf.folded > default.folded

A run of consecutive unnamed frames of one library ("[libcoreclr.so];[libcoreclr.so]", with
the same _[k] or _[j] mark) becomes one frame; "[unknown]", a frame outside any mapping, is
not a library's and stays.  With --strip-tiers the .NET tier tag after a parameter list
("...)[OptimizedTier1]") is dropped too.  Stacks that became the same text are added up and
the lines sorted bytewise, as stackcollapse-perf.pl prints them.
"""
import re
import sys

UNNAMED = re.compile(rb"^\[[^;]*\] *(_\[[kj]\])?$")
NOMAP = re.compile(rb"_\[[kj]\]$")
TIER = re.compile(rb"(?<=\))\[[A-Z][A-Za-z0-9_-]*\]")


def fold(frames):
    out = []
    for f in frames:
        if out and f == out[-1] and UNNAMED.match(f) and NOMAP.sub(b"", f) != b"[unknown]":
            continue
        out.append(f)
    return out


def main(argv):
    strip = "--strip-tiers" in argv[1:]
    sums, order = {}, []
    for line in sys.stdin.buffer:
        line = line.rstrip(b"\n")
        if not line:
            continue
        stack, _, count = line.rpartition(b" ")
        frames = stack.split(b";")
        key = b";".join(frames[:1] + fold(frames[1:]))
        if strip:
            key = TIER.sub(b"", key)
        if key not in sums:
            sums[key] = 0
            order.append(key)
        sums[key] += int(count)
    out = sys.stdout.buffer
    for key in sorted(order):
        out.write(b"%s %d\n" % (key, sums[key]))


if __name__ == "__main__":
    main(sys.argv)
