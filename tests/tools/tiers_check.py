#!/usr/bin/env python3
"""tiers_check.py - a default speedscope file against the file it must equal once rewritten
(tests/tiers.sh).

  tiers_check.py speedscope KEEP DEFAULT   DEFAULT holds KEEP's stacks (a .NET conversion with
                                           --keep-tiers) with the tier tag after each parameter
                                           list taken out, the stacks that became one added up,
                                           and no tag; KEEP must have some
  tiers_check.py runs COMPAT DEFAULT       DEFAULT holds COMPAT's stacks (--perf-compat, names
                                           the same) with each run of consecutive frames of one
                                           file that have no name ("[libx.so]") made one frame

Profiles are compared in order, by name and unit; stacks as lists of (frame name, file), with
their weights added up per profile.  Prints a summary and exits 0, or what differs and exits 1.
"""
import json
import re
import sys

TIER = re.compile(r"(?<=\))\[[A-Z][A-Za-z0-9_-]*\]$")


def load(path):
    doc = json.load(open(path, encoding="utf-8"))
    frames = [(f["name"], f.get("file")) for f in doc["shared"]["frames"]]
    return doc, frames


def stacks(doc, frames, rewrite):
    out = []
    for p in doc["profiles"]:
        w = {}
        for st, wt in zip(p["samples"], p["weights"]):
            k = tuple(rewrite([frames[i] for i in st]))
            w[k] = w.get(k, 0) + wt
        out.append((p["name"], p["unit"], w))
    return out


def strip(fs):
    return [(TIER.sub("", n), f) for n, f in fs]


def fold(fs):
    out = []
    for f in fs:
        if out and f == out[-1] and f[0].startswith("[") and f[0] != "[unknown]":
            continue
        out.append(f)
    return out


def compare(a, b):
    errors = []
    if [(n, u) for n, u, _ in a] != [(n, u) for n, u, _ in b]:
        errors.append("profiles differ: %r / %r" % ([n for n, _, _ in a][:5], [n for n, _, _ in b][:5]))
    for (n, _, x), (_, _, y) in zip(a, b):
        if x != y:
            only = [k for k in x if x.get(k) != y.get(k)][:3]
            errors.append("profile %r: %d stacks expected, %d written; e.g. %r" % (n, len(x), len(y), only))
    return errors


def main(argv):
    if len(argv) != 4 or argv[1] not in ("speedscope", "runs"):
        sys.exit(__doc__)
    (da, fa), (db, fb) = load(argv[2]), load(argv[3])
    if argv[1] == "speedscope":
        tagged = sum(1 for n, _ in fa if TIER.search(n))
        left = sum(1 for n, _ in fb if TIER.search(n))
        errors = compare(stacks(da, fa, strip), stacks(db, fb, lambda x: x))
        if not tagged:
            errors.append("no tier tag in %s: nothing to merge" % argv[2])
        if left:
            errors.append("%d frames keep a tier tag by default" % left)
        summary = "%d frames with a tier tag; %d frames, %d with --keep-tiers" % (tagged, len(fb), len(fa))
    else:
        before = sum(len(s) for p in da["profiles"] for s in p["samples"])
        after = sum(len(s) for p in db["profiles"] for s in p["samples"])
        errors = compare(stacks(da, fa, fold), stacks(db, fb, lambda x: x))
        if after >= before:
            errors.append("no run folded: %d frames in the samples, %d with --perf-compat" % (after, before))
        summary = "%d frames in the samples, %d with --perf-compat" % (after, before)
    if errors:
        print("\n".join(errors[:10]))
        sys.exit(1)
    print(summary)


if __name__ == "__main__":
    main(sys.argv)
