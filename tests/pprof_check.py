#!/usr/bin/env python3
"""pprof_check.py - a pprof profile, as `go tool pprof` reads it, against perf's folded stacks.

    pprof_check.py PROFILE FOLDED

Runs `go tool pprof -raw` and `go tool pprof -top` (every node, the value the script summed) on
PROFILE; FOLDED holds the folded stacks perf 6.1 + stackcollapse-perf.pl made from the same
recording (the fixture's expected/folded.txt).  The samples of the first event
(the first two values: a count and the sum of periods) are turned into folded lines with the
script's default rules (comm first, names cut at '(', ';' made ':', quotes dropped, a frame
without a symbol named [file]) and summed; they must equal FOLDED line for line, by periods or,
where the script counted samples, by counts.  TOP's flat values, summed by the same names, must
equal the leaf totals of FOLDED, and the five hottest functions must be the same.  Prints one
line: the totals and the hottest functions; exits 1 with the differences otherwise.
"""
import collections
import os
import re
import subprocess
import sys


def pprof(args):
    """go tool pprof's output (never symbolizing: the profile's names are the ones checked)."""
    r = subprocess.run(['go', 'tool', 'pprof', '-symbolize=none'] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(os.environ, PPROF_TMPDIR=os.environ.get('TMPDIR', '/tmp')))
    if r.returncode != 0:
        raise SystemExit('go tool pprof %s: exit %d: %s' % (' '.join(args), r.returncode,
                                                           r.stderr.decode(errors='replace')[-500:]))
    return r.stdout.decode('utf-8', errors='surrogateescape')


def tidy(name):
    """stackcollapse-perf.pl's tidying of one resolved function name (default options)."""
    name = name.replace(';', ':')
    if not re.search(r'\.\(.*\)\.', name):
        m = re.search(r'\((?!anonymous namespace\))', name)
        if m:
            name = name[:m.start()]
    return name.replace('"', '').replace("'", '')


def parse_raw(text):
    samples, locs, maps = [], {}, {}
    section = None
    cur = None
    for line in text.splitlines():
        if line in ('Samples:', 'Locations', 'Mappings'):
            section = line
            continue
        if section == 'Samples:':
            m = re.match(r'^\s+((?:-?\d+\s+)*-?\d+):((?: \d+)*)\s*$', line)
            if m:
                cur = {'values': [int(v) for v in m.group(1).split()],
                       'locs': [int(v) for v in m.group(2).split()], 'labels': {}}
                samples.append(cur)
                continue
            for k, v in re.findall(r'(\w+):\[([^\]]*)\]', line):
                if cur is not None:
                    cur['labels'][k] = v
        elif section == 'Locations':
            m = re.match(r'^\s*(\d+): (0x[0-9a-f]+)(?: M=(\d+))? (.*) (\S*):(\d+) s=\d+$', line)
            if m:
                locs[int(m.group(1))] = (int(m.group(3)) if m.group(3) else 0, m.group(4))
            elif line.strip() and locs:
                raise SystemExit('pprof_check: unexpected location line: %r' % line)
        elif section == 'Mappings':
            m = re.match(r'^(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (.*?)(?: [0-9a-f]{2,})?(?: (?:\[[A-Z]{2}\])+)?$', line)
            if m:
                maps[int(m.group(1))] = m.group(2).rstrip(" ")
    return samples, locs, maps


def is_unresolved(loc, maps):
    """perfconv names a frame without a symbol [file] (or the file, [vdso]), [unknown] without a map."""
    mid, name = loc
    path = maps.get(mid, '')
    return name == '[unknown]' or (mid and (name == '[%s]' % os.path.basename(path) or name == path))


def frame_name(loc, maps):
    """The folded text of a location: the line perf script prints for it, read with the script's
    frame pattern (so a file name holding ' (' splits the line where the script splits it)."""
    mid, name = loc
    path = maps.get(mid, '[unknown]') if mid else '[unknown]'
    func = '[unknown]' if is_unresolved(loc, maps) else name + '+0x0'
    m = re.match(r'^\s*(\w+)\s*(.+) \((.*)\)', '0 %s (%s)' % (func, path))
    if not m:
        return ''
    rawfunc, mod = re.sub(r'\+0x[\da-f]+$', '', m.group(2)), m.group(3)
    if rawfunc.startswith('('):
        return ''
    if rawfunc == '[unknown]':
        return '[%s]' % re.sub(r'.*/', '', mod) if mod != '[unknown]' else '[unknown]'
    return offsetless(tidy(rawfunc))


def offsetless(frame):
    """A symbol offset the script kept (a file name with ' (' in it: memfd:doublemapper (deleted)),
    which pprof does not carry: compared as +0x."""
    return re.sub(r'\+0x[0-9a-f]+ $', '+0x ', frame)


def main():
    profile, folded_path = sys.argv[1:3]
    samples, locs, maps = parse_raw(pprof(['-raw', profile]))
    expected = collections.Counter()
    with open(folded_path, encoding='utf-8', errors='surrogateescape') as f:
        for line in f:
            stack, _, w = line.rstrip('\n').rpartition(' ')
            expected[';'.join(offsetless(x) for x in stack.split(';'))] += int(w)
    if not samples and not expected:
        print('no samples, as perf')
        return 0
    by = {0: collections.Counter(), 1: collections.Counter()}
    # leaf frames the script drops (names starting with '('): their flat value goes, in folded,
    # to the first frame it keeps; per value index, (pprof name, folded leaf) -> value
    moved = {0: collections.Counter(), 1: collections.Counter()}
    for s in samples:
        if len(s['values']) < 2 or not s['values'][0]:
            continue        # a sample of another event
        comm = s['labels'].get('thread', '').replace(' ', '_')
        frames = [frame_name(locs[i], maps) for i in reversed(s['locs'])]
        kept = [x for x in frames if x]
        key = ';'.join([comm] + kept)
        by[0][key] += s['values'][0]
        by[1][key] += s['values'][1]
        if frames and not frames[-1]:
            for v in (0, 1):
                moved[v][(locs[s['locs'][0]][1], kept[-1] if kept else comm)] += s['values'][v]
    which = 1 if by[1] == expected else 0 if by[0] == expected else None
    if which is None:
        got = by[1] if sum(by[1].values()) == sum(expected.values()) else by[0]
        diff = [k for k in set(got) | set(expected) if got[k] != expected[k]]
        diff.sort(key=lambda k: -abs(got[k] - expected[k]))
        print('per-stack totals differ from perf\'s folded stacks (%d of %d lines; totals %d and %d '
              'periods, %d samples, expected %d):' % (len(diff), len(expected), sum(got.values()),
                                                      sum(by[1].values()), sum(by[0].values()),
                                                      sum(expected.values())))
        for k in diff[:8]:
            print('  pprof %d  folded %d  %s' % (got[k], expected[k], k[-200:]))
        return 1
    # the leaf (flat) totals of the folded stacks against -top's flat column
    leaf = collections.Counter()
    for stack, w in expected.items():
        parts = stack.split(';')
        leaf[parts[-1] if len(parts) > 1 else parts[0]] += w
    flat = collections.Counter()
    if True:
        for line in pprof(['-top', '-nodecount=100000000', '-nodefraction=0', '-edgefraction=0',
                           '-unit=ns', '-sample_index=%d' % which, profile]).splitlines():
            m = re.match(r'^\s*(\d+(?:\.\d+)?)(\w*)\s+[\d.]+%\s+[\d.]+%\s+\d+(?:\.\d+)?\w*\s+[\d.]+%\s+(.*)$', line)
            if m:
                flat[m.group(3)] += int(float(m.group(1)))
    # -top names functions: each gets the folded text of its locations
    folded_of = {}
    for loc in locs.values():
        folded_of.setdefault(loc[1], frame_name(loc, maps))
    tidy_flat = collections.Counter()
    for name, v in flat.items():
        if v:
            tidy_flat[folded_of.get(name, tidy(name))] += v
    for (name, leaf_name), v in moved[which].items():
        tidy_flat[folded_of.get(name, tidy(name))] -= v
        tidy_flat[leaf_name] += v
    tidy_flat = collections.Counter({k: v for k, v in tidy_flat.items() if v})
    leaf_nz = collections.Counter({k: v for k, v in leaf.items() if v})
    # a process with no frames at all has its comm as its leaf in folded, no function in pprof
    leaf_fn = collections.Counter({k: v for k, v in leaf_nz.items() if k in tidy_flat or
                                   not any(st.split(';')[0] == k and ';' not in st for st in expected)})
    if tidy_flat != leaf_fn:
        diff = sorted(set(tidy_flat) | set(leaf_fn), key=lambda k: -abs(tidy_flat[k] - leaf_fn[k]))
        diff = [k for k in diff if tidy_flat[k] != leaf_fn[k]]
        print('-top flat totals differ from the leaves of the folded stacks:')
        for k in diff[:8]:
            print('  top %d  folded %d  %s' % (tidy_flat[k], leaf_fn[k], k[-200:]))
        return 1
    hot = lambda c: [k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:5]]
    if hot(tidy_flat) != hot(leaf_fn):
        print('hottest functions differ: top %s, folded %s' % (hot(tidy_flat), hot(leaf_fn)))
        return 1
    print('%d %s in %d stacks; hottest: %s' % (sum(expected.values()), 'periods' if which else 'samples',
                                              len(expected), ', '.join(
                                                  '%s %.1f%%' % (k, 100.0 * tidy_flat[k] / sum(expected.values()))
                                                  for k in hot(tidy_flat)[:3])))
    return 0


if __name__ == '__main__':
    sys.exit(main())
