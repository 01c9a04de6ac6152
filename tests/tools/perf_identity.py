#!/usr/bin/env python3
"""perf_identity.py - perfconv's default names never disagree with perf's (tests/perf-identity.sh).

  perf_identity.py KIND COMPAT DEFAULT
  perf_identity.py --batch NAME CDIR DDIR BASE

COMPAT is a conversion with --perf-compat (perf 6.1's names, which the golden tests hold to
perf's own output), DEFAULT the same conversion without it.  The default may name frames that
perf leaves unnamed; wherever perf has a name, the default must give the same one.

  script   perf-script text or trace.zip's perf.data.txt: sample by sample, the header lines are
           equal; a frame perf names ("[unknown]" is no name) is the same line in both; an
           unnamed one may differ; the default may add the functions inlined at a frame's
           address (more lines of the same address and DSO) that perf did not read.
  folded   folded stacks; the totals are equal and a frame name of COMPAT that is a name (not
           [unknown] or a bare [dso]) has at least its COMPAT weight in DEFAULT (counted once per
           stack): a name perf gives is never taken away, only added to.
  speedscope, svg   the same as folded, on the stacks of a speedscope file (every profile, by
           frame name) or on the frames of an SVG flame graph (a frame under another of the same
           name is not counted again).

Prints one summary line (frames compared, names added) and exits 0, or prints what disagrees
(at most 10 lines) and exits 1.  With --batch, every kind is checked on the outputs a batch run
wrote for BASE into CDIR (--perf-compat) and DDIR (the default), and one result line per kind is
printed in tests/run.sh's format ("ok    NAME/KIND (summary)" or "FAIL  NAME/KIND: ..." with the
disagreements below): one interpreter for a fixture instead of one per kind.
"""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
import zipfile

UNNAMED = re.compile(r"^\[.*\]\s*(_\[[kwij]\])?$")


def frame_name(line):
    """The symbol of a frame line "ADDR SYM (DSO)"; the DSO may hold parentheses itself
    ("/memfd:doublemapper (deleted)"), so its opening one is found by balance from the end."""
    body = line.strip().split(b" ", 1)[-1]
    if not body.endswith(b")"):
        return body
    depth = 0
    for i in range(len(body) - 1, -1, -1):
        depth += {41: 1, 40: -1}.get(body[i], 0)
        if depth == 0:
            return body[:i].rstrip(b" ")
    return body


def frame_addr(line):
    return line.strip().split(b" ", 1)[0]


def by_address(frames):
    """Runs of consecutive frame lines with the same address (a function and those inlined in it)."""
    out = []
    for l in frames:
        if out and frame_addr(out[-1][-1]) == frame_addr(l):
            out[-1].append(l)
        else:
            out.append([l])
    return out


class Disagree(Exception):
    pass


def fail(errors):
    lines = errors[:10]
    if len(errors) > 10:
        lines.append("... and %d more" % (len(errors) - 10))
    raise Disagree("\n".join(lines))


def samples(path):
    """Blocks of lines separated by blank lines: (header lines, frame lines)."""
    out, cur = [], []
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            if not line:
                if cur:
                    out.append(cur)
                cur = []
            else:
                cur.append(line)
    if cur:
        out.append(cur)
    return out


def check_script(compat, default):
    a, b = samples(compat), samples(default)
    errors = []
    if len(a) != len(b):
        fail(["%d samples with --perf-compat, %d by default" % (len(a), len(b))])
    frames = added = 0
    for n, (x, y) in enumerate(zip(a, b)):
        fx = [l for l in x if l.startswith(b"\t")]
        fy = [l for l in y if l.startswith(b"\t")]
        hx = [l for l in x if not l.startswith(b"\t")]
        hy = [l for l in y if not l.startswith(b"\t")]
        if hx != hy:
            errors.append("sample %d: header differs: %r / %r" % (n + 1, x[:1], y[:1]))
            continue
        # Frames are compared address by address: the default may add the functions
        # inlined at an address that perf did not read (from a debug file perf did not
        # find), as more lines of that address; perf's named lines must all be there.
        gx, gy = by_address(fx), by_address(fy)
        if len(gx) != len(gy):
            errors.append("sample %d: %d frame addresses with --perf-compat, %d by default" % (n + 1, len(gx), len(gy)))
            continue
        for ax, ay in zip(gx, gy):
            frames += len(ax)
            named_x = [l for l in ax if frame_name(l) != b"[unknown]"]
            k = 0
            for l in ay:
                if k < len(named_x) and l == named_x[k]:
                    k += 1
            if k < len(named_x):
                errors.append("sample %d: perf names %s, the default %s" % (
                    n + 1, b" | ".join(l.strip() for l in ax).decode("latin-1"),
                    b" | ".join(l.strip() for l in ay).decode("latin-1")))
            added += sum(1 for l in ay if frame_name(l) != b"[unknown]") - len(named_x)
    if errors:
        fail(errors)
    return "%d samples, %d frames: every named frame the same, %d names added" % (len(a), frames, added)


def named(name):
    return not UNNAMED.match(name)


def weights(stacks):
    """Total weight, and inclusive weight per frame name (each name once per stack)."""
    total, w = 0, {}
    for frames, count in stacks:
        total += count
        for name in set(frames):
            w[name] = w.get(name, 0) + count
    return total, w


def folded_stacks(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            yield stack.split(";"), int(count)


def speedscope_stacks(path):
    doc = json.load(open(path, encoding="utf-8"))
    names = [fr["name"] for fr in doc["shared"]["frames"]]
    for p in doc["profiles"]:
        for s, wt in zip(p["samples"], p["weights"]):
            yield [names[i] for i in s], wt


def svg_weights(path):
    """Inclusive weight per name from the frames of an SVG (preorder, depth from y)."""
    ns = "{http://www.w3.org/2000/svg}"
    title = re.compile(r"^(.*) \(([\d,]+) samples, [\d.]+%\)$", re.S)
    root = ET.parse(path).getroot()
    w, total, path_ = {}, 0, []
    for g in root.iter(ns + "g"):
        t, r = g.find(ns + "title"), g.find(ns + "rect")
        if t is None or r is None:
            continue
        m = title.match(t.text or "")
        if not m:
            continue
        name, count = m.group(1), int(m.group(2).replace(",", ""))
        y = float(r.get("y"))
        while path_ and path_[-1][0] <= y:
            path_.pop()
        if name == "all" and not path_:
            total = count
        elif all(p[1] != name for p in path_):
            w[name] = w.get(name, 0) + count
        path_.append((y, name))
    return total, w


def check_weights(kind, ca, da):
    (ta, wa), (tb, wb) = ca, da
    errors = []
    if ta != tb:
        errors.append("totals differ: %d with --perf-compat, %d by default" % (ta, tb))
    names = 0
    for name, weight in sorted(wa.items()):
        if not named(name):
            continue
        names += 1
        if wb.get(name, 0) < weight:
            errors.append("%s: perf's %r weighs %d, the default's %d" % (kind, name, weight, wb.get(name, 0)))
    if errors:
        fail(errors)
    added = sum(1 for n in wb if named(n) and n not in wa)
    return "total %d, %d names of perf's kept, %d names added" % (ta, names, added)


def check(kind, compat, default):
    if kind == "script":
        return check_script(compat, default)
    if kind == "folded":
        return check_weights(kind, weights(folded_stacks(compat)), weights(folded_stacks(default)))
    if kind == "speedscope":
        return check_weights(kind, weights(speedscope_stacks(compat)), weights(speedscope_stacks(default)))
    if kind == "svg":
        return check_weights(kind, svg_weights(compat), svg_weights(default))
    sys.exit(__doc__)


def trace_text(zip_path, out):
    z = zipfile.ZipFile(zip_path)
    entry = [x for x in z.namelist() if x.endswith("/perf.data.txt")][0]
    with open(out, "wb") as f:
        f.write(z.read(entry))
    return out


def batch(name, cdir, ddir, base):
    files = {"script": ".perf.txt", "folded": ".folded", "speedscope": ".speedscope.json", "svg": ".svg"}
    ok = True
    for kind in ("script", "trace.zip", "folded", "speedscope", "svg"):
        case = "%s/%s" % (name, kind)
        try:
            if kind == "trace.zip":
                c = trace_text(os.path.join(cdir, base + ".trace.zip"), os.path.join(cdir, "trace.txt"))
                d = trace_text(os.path.join(ddir, base + ".trace.zip"), os.path.join(ddir, "trace.txt"))
                summary = check("script", c, d)
            else:
                summary = check(kind, os.path.join(cdir, base + files[kind]), os.path.join(ddir, base + files[kind]))
            print("ok    %s (%s)" % (case, summary))
        except Disagree as e:
            ok = False
            print("FAIL  %s: the default disagrees with perf's names" % case)
            for line in str(e).splitlines():
                print("      | " + line)
        except (OSError, IndexError, ValueError, KeyError, ET.ParseError) as e:
            ok = False
            print("FAIL  %s: cannot compare the outputs: %s" % (case, e))
    return ok


def main(argv):
    if len(argv) == 6 and argv[1] == "--batch":
        sys.exit(0 if batch(*argv[2:]) else 1)
    if len(argv) != 4:
        sys.exit(__doc__)
    try:
        print(check(*argv[1:]))
    except Disagree as e:
        print(e)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv)
