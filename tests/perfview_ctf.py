#!/usr/bin/env python3
"""perfview_ctf.py - compares what TraceEvent reads of the .NET runtime's events from a .nettrace
with what it reads from the CTF perfconv wrote into a trace.zip (both printed by
tests/interop/perfview --runtime-events), with the zip's perfcollect.log saying which events
perfconv left out and which it wrote under an older version's name.

Usage: perfview_ctf.py NETTRACE.txt ZIP.txt perfcollect.log

Every event of the .nettrace must be in the zip at the same time, pid and tid, with the same
provider, id, name and payload, except:
  - the kinds the log lists as left out, which must be missing, as many as the log says;
  - the kinds the log lists as written under an older version's name: those read as that version,
    with the same payload names and values but for the fields that version does not have, which
    TraceEvent reads as 0 or empty.
No other event may be in the zip.  The GC and JIT lines (GCStats, JITStats) must be equal, but for
the heap size after a GC where GCHeapStats was written as an older version (without the POH).
Prints the counts by event name both ways and exits 1 on a difference.
"""
import re
import sys
from collections import Counter, defaultdict


DEFAULTS = {"0", "", "null", "00000000-0000-0000-0000-000000000000"}


# sums TraceEvent makes of the fields, which lose the fields an older version has not
SUMS = {"TotalHeapSize": "GenerationSize4", "TotalPromoted": "TotalPromotedSize4"}


def older_ok(f, z, fields):
    """Whether the zip's value z of field f may differ from the nettrace's: the field is not in
    the older version (read as 0 or empty), or is a sum of fields of which one is not."""
    name, want = f.split("=", 1)
    got = z.split("=", 1)[1]
    if got in DEFAULTS:
        return True
    part = SUMS.get(name)
    if part:
        vals = dict(x.split("=", 1) for x in fields)
        try:
            return int(want) - int(got) == int(vals.get(part, "x"))
        except ValueError:
            return False
    return False


def parse(path):
    events, other = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("E "):
                head, _, rest = line.partition("|")
                _, t, pid, tid, prov, eid, ver, name = head.split(" ", 7)
                fields = re.split(r"(?<!\\)\|", rest) if rest else []
                events.append(((int(t), int(pid), int(tid), prov, int(eid), name), int(ver), fields))
            else:
                other.append(line)
    return events, other


def main():
    nt, nt_other = parse(sys.argv[1])
    zp, zp_other = parse(sys.argv[2])
    left, older = {}, {}
    with open(sys.argv[3], encoding="utf-8") as f:
        for line in f:
            m = re.match(r"Runtime events left out .*: (\d+) (\S+) .*\(event (\d+) version (\d+)\)$", line)
            if m:
                left[(m.group(2), int(m.group(3)), int(m.group(4)))] = int(m.group(1))
            m = re.match(r"Runtime events written under an older version's name .*: (\d+) of event (\d+) version (\d+) as \S+?(?:_V(\d+))?$", line)
            if m:
                older[(int(m.group(2)), int(m.group(3)))] = int(m.group(4) or 0)
    bad = []
    # the zip's events by key, several per key in the order read
    zmap = defaultdict(list)
    for key, ver, fields in zp:
        zmap[key].append((ver, fields))
    seen_left = Counter()
    truncated = Counter()
    for key, ver, fields in nt:
        prov, eid = key[3], key[4]
        if (prov, eid, ver) in left:
            seen_left[(prov, eid, ver)] += 1
            continue
        cands = zmap.get(key)
        if not cands:
            bad.append(f"missing from the zip: {key} v{ver}")
            continue
        want_ver = older.get((eid, ver), ver) if prov == "Microsoft-Windows-DotNETRuntime" else ver
        for i, (zver, zfields) in enumerate(cands):
            if zver != want_ver:
                continue
            if want_ver == ver and zfields == fields:
                break
            if want_ver != ver and len(zfields) == len(fields):
                gone = [f.split("=", 1)[0] for f, z in zip(fields, zfields) if f != z]
                if all(z.split("=", 1)[0] == f.split("=", 1)[0] for f, z in zip(fields, zfields)) and \
                   all(older_ok(f, z, fields) for f, z in zip(fields, zfields) if f != z):
                    truncated[(key[5], ver, zver, ",".join(gone))] += 1
                    break
        else:
            bad.append(f"payload differs: {key} v{ver}\n  nettrace: {'|'.join(fields)}\n  zip:      "
                       + "\n            ".join(f"v{v} {'|'.join(f)}" for v, f in cands))
            continue
        cands.pop(i)
    for key, rest in zmap.items():
        for ver, fields in rest:
            bad.append(f"only in the zip: {key} v{ver}")
    # TraceEvent's parsers may not read every event left out even from the nettrace
    for k, n in left.items():
        if seen_left[k] > n:
            bad.append(f"the log says {n} events of {k} were left out; TraceEvent reads {seen_left[k]} from the nettrace")
    # GCStats and JITStats; the heap size after a GC needs GCHeapStats_V2's POH size
    ignore_after = (4, 2) in older
    def norm(lines):
        return [re.sub(r" after_mb=\S+", "", l) if ignore_after else l for l in lines]
    a, b = norm(nt_other), norm(zp_other)
    if a != b:
        import difflib
        bad.append("GC/JIT stats differ:\n" + "\n".join(difflib.unified_diff(a, b, "nettrace", "trace.zip", lineterm="")))
    if not any(l.startswith("gc ") for l in zp_other):
        bad.append("no GCStats from the zip")
    if not any(l.startswith("jit ") for l in zp_other):
        bad.append("no JITStats from the zip")
    cn = Counter(k[5] for k, _, _ in nt)
    cz = Counter(k[5] for k, _, _ in zp)
    for name in sorted(set(cn) | set(cz)):
        print(f"count {name} nettrace={cn[name]} zip={cz[name]}")
    for (name, v, zv, gone), n in sorted(truncated.items()):
        print(f"older {name} v{v} read as v{zv}: {n} events, without {gone or '(nothing: equal)'}")
    for l in zp_other:
        if l.startswith(("gc ", "jit ")):
            print(l)
    print(f"events nettrace={len(nt)} zip={len(zp)} left-out={sum(seen_left.values())}")
    if bad:
        for b_ in bad[:40]:
            print("DIFF " + b_)
        print(f"{len(bad)} differences")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
