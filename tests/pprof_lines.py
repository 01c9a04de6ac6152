#!/usr/bin/env python3
"""pprof_lines.py - the source files and lines of a pprof profile against binutils' addr2line.

    pprof_lines.py PROFILE SYMFS

Reads PROFILE with `go tool pprof -raw` (no symbolization).  For every location in a mapping
whose file (under SYMFS, or its debug file in SYMFS/usr/lib/debug/.build-id) has a DWARF line
table, the DSO address (address - mapping start + file offset) is given to
`addr2line -i -e FILE`, which lists the source position of each function at the address,
innermost first.  The location must show the outermost position (the function the symbol
names), or, where a sample has several locations at one address (the inlined frames added
in front of the symbol's own, innermost first), the position at its place in that list.
Every position addr2line knows must be in the profile.  Prints the counts; exits 1 with the
differences otherwise.
"""
import collections
import os
import re
import subprocess
import sys


def pprof_raw(profile):
    r = subprocess.run(['go', 'tool', 'pprof', '-symbolize=none', '-raw', profile], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode:
        raise SystemExit('go tool pprof -raw: exit %d: %s' % (r.returncode, r.stderr.decode(errors='replace')[-400:]))
    return r.stdout.decode('utf-8', errors='surrogateescape')


def parse(text):
    samples, locs, maps = [], {}, {}
    section = None
    for line in text.splitlines():
        if line in ('Samples:', 'Locations', 'Mappings'):
            section = line
            continue
        if section == 'Samples:':
            m = re.match(r'^\s+(?:-?\d+\s+)*-?\d+:((?: \d+)*)\s*$', line)
            if m:
                samples.append([int(v) for v in m.group(1).split()])
        elif section == 'Locations':
            m = re.match(r'^\s*(\d+): (0x[0-9a-f]+)(?: M=(\d+))? (.*) (\S*):(\d+) s=\d+$', line)
            if m:
                locs[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3) or 0), m.group(4), m.group(5),
                                         int(m.group(6)))
        elif section == 'Mappings':
            m = re.match(r'^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+)(?: ([0-9a-f]{2,}))?', line)
            if m:
                maps[int(m.group(1))] = (int(m.group(2), 16), int(m.group(4), 16), m.group(5), m.group(6))
    return samples, locs, maps


def has_lines(path):
    r = subprocess.run(['readelf', '-S', '-W', path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return r.returncode == 0 and b'.debug_line' in r.stdout


def dwarf_file(symfs, path, build_id):
    """The file of a mapping with a line table: the file itself under SYMFS, else its debug file."""
    cands = [os.path.join(symfs, path.lstrip('/'))]
    if build_id:
        cands.append(os.path.join(symfs, 'usr/lib/debug/.build-id', build_id[:2], build_id[2:] + '.debug'))
    for c in cands:
        if os.path.isfile(c) and has_lines(c):
            return c
    return None


def addr2line(path, addrs):
    """addr2line -i's positions for each address, innermost first; [] for ??:0."""
    r = subprocess.run(['addr2line', '-i', '-a', '-e', path] + ['0x%x' % a for a in addrs],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    out, cur = {}, None
    for line in r.stdout.decode(errors='replace').splitlines():
        if re.match(r'^0x[0-9a-f]+$', line):
            cur = out.setdefault(int(line, 16), [])
            continue
        line = re.sub(r' \(discriminator \d+\)$', '', line)
        f, _, n = line.rpartition(':')
        if f != '??' and n.isdigit() and int(n):
            cur.append((f, int(n)))
    return out


def main():
    profile, symfs = sys.argv[1:3]
    samples, locs, maps = parse(pprof_raw(profile))
    # each location's place in the inline frames of its address (-1: the symbol's own frame)
    place = {}
    for s in samples:
        k = 0
        while k < len(s):
            j = k
            while (j + 1 < len(s) and s[j + 1] != s[j] and locs[s[j + 1]][:2] == locs[s[k]][:2]):
                j += 1
            for i in range(k, j + 1):
                place.setdefault(s[i], i - k if i < j else -1)
            k = j + 1
    files = {}
    by_file = collections.defaultdict(list)
    for lid, (addr, mid, name, src, line) in locs.items():
        if mid not in maps:
            continue
        start, off, path, bid = maps[mid]
        if path.startswith('[') or '(deleted)' in path:
            continue
        if (path, bid) not in files:
            files[(path, bid)] = dwarf_file(symfs, path, bid)
        if files[(path, bid)]:
            by_file[files[(path, bid)]].append((lid, addr - start + off))
    checked = named = 0
    bad = []
    for path, items in by_file.items():
        a2l = addr2line(path, sorted({a for _, a in items}))
        for lid, a in items:
            want = a2l.get(a, [])
            if not want:
                continue
            p = place.get(lid, -1)
            want = want[p] if 0 <= p < len(want) else want[-1]
            _, _, name, src, line = locs[lid]
            got = (src, line) if src else None
            checked += 1
            if got == want:
                named += 1
            else:
                bad.append('location %d %s at %s+0x%x: pprof %s, addr2line %s:%d' % (
                    lid, name, os.path.basename(path), a, '%s:%d' % got if got else 'none', want[0], want[1]))
    if bad or not checked:
        print('%d of %d locations differ from addr2line -i%s' % (len(bad), checked, '' if checked else
                                                                   ' (no location with a line table)'))
        for b in bad[:10]:
            print('  ' + b)
        return 1
    print('%d locations in %d files with DWARF lines: files and lines as addr2line -i; %d distinct files'
          % (checked, len(by_file), len({locs[lid][3] for items in by_file.values() for lid, _ in items
                                          if locs[lid][3]})))
    return 0


if __name__ == '__main__':
    sys.exit(main())
