#!/usr/bin/env python3
"""svg_check.py - checks SVG flame graphs by value against the folded stacks of the same
conversion (tests/svg.sh runs it).

  svg_check.py FOLDED [--kinds FOLDED_ALL [--jit-names REGEX]] [--minwidth PX|PCT%] SVG
               [[--minwidth PX|PCT%] SVG]...

Each SVG must be well-formed XML and self-contained.  Each frame's <title> holds its name and
count as flamegraph.pl writes them ("name (1,234 samples, 5.67%)"); the frames are read back in
document order (preorder, depth from the rectangle's y) into frame paths, and the counts per path
must equal the sums the folded lines give their prefixes: exactly the paths at least --minwidth
wide (pixels, or a percentage of the whole; it applies to the SVGs after it, default 0.1), names
shown as flamegraph.pl shows them (one trailing _[k]/_[j]/_[i]/_[w] removed, invalid UTF-8 and
control characters replaced).  A label is the name or a cut of it; a .NET name
("Assembly!Namespace.Type::Method(params)") that does not fit shows "Type::Method(params)", or
its method first, cut.  Rectangles must nest inside their parents and be as wide as their
count.  With --kinds, FOLDED_ALL (the same conversion with --all) tells each frame's kind and the
fill must be in its hue family: _[k] orange, _[j] green, the process and the root grey blue, others
red or orange, or green exactly when their name matches --jit-names (JIT code stackcollapse-perf.pl
does not mark, such as perf inject's jitted-*.so).  Prints nothing and exits 0 when all is well;
else prints what differs (at most 10 lines per SVG) and exits 1.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
XPAD, FRAME_H, YPAD1, YPAD2, FRAME_PAD = 10, 16, 36, 34, 1
TITLE = re.compile(r"^(.*) \(([\d,]+) (?:samples|ns), ([\d.]+)%\)$", re.S)
ANNOT = re.compile(r"_\[[kwij]\]$")
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\ufffe\uffff]")


def dotnet_parts(name):
    """A .NET name "Assembly!Namespace.Type::Method(params)": (type start, method start), as
    svg.c's pfc_svg_dotnet_parts finds them; None for any other name."""
    bang = name.find("!")
    if bang <= 0 or re.search(r"[:(<\[ \t]", name[:bang]):
        return None
    depth, dot = 0, 0
    for i in range(bang + 1, len(name) - 1):
        c = name[i]
        if c in "[<(":
            depth += 1
        elif c in "]>)" and depth > 0:
            depth -= 1
        elif depth == 0 and c == ".":
            dot = i
        elif depth == 0 and c == ":" and name[i + 1] == ":":
            return (dot + 1 if dot else bang + 1, i + 2) if i + 2 < len(name) else None
    return None


def label_ok(lbl, name):
    """A label is the name, or a cut of it ("..."..); a .NET name's label that does not fit
    starts at its type or its method, never with the assembly cut ("Micr..")."""
    if not lbl or lbl == name:
        return True
    parts = dotnet_parts(name)
    if parts is None:
        return lbl.endswith("..") and name.startswith(lbl[:-2])
    t, m = parts
    return lbl in (name[t:], name[m:]) or (lbl.endswith("..") and name[m:].startswith(lbl[:-2]))


def shown(raw):
    """A folded name as the SVG shows it."""
    name = raw.decode("utf-8", "replace")
    return CONTROL.sub("\ufffd", ANNOT.sub("", name))


def annotation(raw):
    m = re.search(rb"_\[([kwij])\]$", raw)
    return m.group(1).decode() if m else ""


def perl_split(stack):
    parts = stack.split(b";")
    while parts and parts[-1] == b"":
        parts.pop()
    return parts


def family(fill):
    m = re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill or "")
    if not m:
        return "bad"
    r, g, b = map(int, m.groups())
    if r >= 225 and 130 <= g <= 190 and b <= 40:
        return "orange"
    if g >= 170 and r <= 120 and b <= 110:
        return "green"
    if r >= 200 and g <= 130 and b == g:
        return "red"
    if b > r and b >= 205:
        return "greyblue"
    return "other"


def load_folded(path):
    """Weight per shown path, the kind of each path's last frame, and the total."""
    want, kind, total = {}, {}, 0
    with open(path, "rb") as f:
        for line in f:
            stack, _, count = line.rstrip(b"\n").rpartition(b" ")
            w = int(count)
            total += w
            path = ("all",)
            want[path] = want.get(path, 0) + w
            for depth, raw in enumerate(perl_split(stack), 1):
                path = path + (shown(raw),)
                want[path] = want.get(path, 0) + w
                kind.setdefault(path, "process" if depth == 1 else annotation(raw))
    return want, kind, total


def check_svg(svg, want, total, minwidth, pct, kind, jit_names):
    errors = []
    text = open(svg, "rb").read()
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        return ["not well-formed XML: %s" % e]
    for bad in (rb"<image", rb"href", rb"@import", rb"<foreignObject", rb"src="):
        if bad in text:
            errors.append("not self-contained: the file contains %r" % bad.decode())
    if re.search(rb"url\((?!#)", text):
        errors.append("not self-contained: url() to something else than an element of the file")
    width = float(root.get("width"))
    height = float(root.get("height"))
    script = "".join(s.text or "" for s in root.iter(NS + "script"))
    inverted = "inverted: true" in script
    per = (width - 2 * XPAD) / total if total else 0
    if pct:
        min_value = total * minwidth / 100.0
    else:
        min_value = minwidth / per if per > 0 else 0

    frames = root.find(".//%sg[@id='frames']" % NS)
    if frames is None:
        return ["no <g id=\"frames\">"]
    got, boxes, stack = {}, {}, []
    for n, g in enumerate(frames):
        title = g.find(NS + "title")
        rect = g.find(NS + "rect")
        label = g.find(NS + "text")
        if title is None or rect is None or label is None:
            errors.append("frame %d lacks a title, rect or text" % n)
            continue
        m = TITLE.match(title.text or "")
        if not m:
            errors.append("frame %d: title %r is not 'name (N samples, P%%)'" % (n, title.text))
            continue
        name, count, share = m.group(1), int(m.group(2).replace(",", "")), m.group(3)
        x, y, w = float(rect.get("x")), float(rect.get("y")), float(rect.get("width"))
        d = (y - YPAD1) / FRAME_H if inverted else (height - YPAD2 - y + FRAME_PAD) / FRAME_H - 1
        if d != int(d) or d < 0:
            errors.append("frame %d (%s): y=%s is not on a row" % (n, name, rect.get("y")))
            continue
        d = int(d)
        if d > len(stack) or (n == 0) != (d == 0):
            errors.append("frame %d (%s): depth %d does not follow preorder" % (n, name, d))
            continue
        del stack[d:]
        if stack:
            px, pw = boxes[tuple(stack)][-1]
            if x < px - 0.05 or x + w > px + pw + 0.15:
                errors.append("frame %d (%s): [%.1f, %.1f] outside its parent [%.1f, %.1f]" %
                              (n, name, x, x + w, px, px + pw))
        stack.append(name)
        path = tuple(stack)
        boxes.setdefault(path, []).append((x, w))
        got[path] = got.get(path, 0) + count
        if abs(w - count * per) > 0.15:
            errors.append("frame %d (%s): width %.1f for %d of %d" % (n, name, w, count, total))
        exp_share = "100" if n == 0 else "%.2f" % (100.0 * count / total if total else 0)
        if share != exp_share:
            errors.append("frame %d (%s): share %s%%, expected %s%%" % (n, name, share, exp_share))
        lbl = label.text or ""
        if not label_ok(lbl, name):
            errors.append("frame %d: label %r is not a cut of %r (a .NET name's: from its type or method)" %
                          (n, lbl, name))
        if kind is not None:
            k = "process" if n == 0 else kind.get(path, "?")
            fam = family(rect.get("fill"))
            if k == "process":
                ok = fam == "greyblue"
            elif k == "k":
                ok = fam == "orange" or "vdso" in name
            elif k == "j" or (jit_names and jit_names.search(name)):
                ok = fam == "green"
            else:
                ok = fam in ("red", "orange")
            if not ok:
                errors.append("frame %d (%s, kind %r): fill %s is %s" % (n, name, k, rect.get("fill"), fam))

    expect = {p: v for p, v in want.items() if len(p) == 1 or v >= min_value} if total else {}
    for p in sorted(set(expect) | set(got)):
        if expect.get(p) != got.get(p):
            errors.append("path %s: folded %s, svg %s" % (";".join(p), expect.get(p), got.get(p)))
    return errors


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__.strip())
    want, _, total = load_folded(argv[1])
    minwidth, pct, kind, jit_names, status = 0.1, False, None, None, 0
    i = 2
    while i < len(argv):
        if argv[i] == "--minwidth":
            pct = argv[i + 1].endswith("%")
            minwidth = float(argv[i + 1].rstrip("%"))
            i += 2
        elif argv[i] == "--kinds":
            _, kind, _ = load_folded(argv[i + 1])
            i += 2
        elif argv[i] == "--jit-names":
            jit_names = re.compile(argv[i + 1])
            i += 2
        else:
            errors = check_svg(argv[i], want, total, minwidth, pct, kind, jit_names)
            for e in errors[:10]:
                print("%s: %s" % (os.path.basename(argv[i]), e))
            if len(errors) > 10:
                print("%s: ... %d more" % (os.path.basename(argv[i]), len(errors) - 10))
            status |= 1 if errors else 0
            i += 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
