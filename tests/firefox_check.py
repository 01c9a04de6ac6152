#!/usr/bin/env python3
"""firefox_check.py - checks of perfconv's -f firefox files (tests/firefox.sh).

  firefox_check.py file FILE.fxprof.json [--folded-tid FOLDED] [--unit ns|count]
      The file as the Firefox Profiler's processed format (version 62, src/types/profile.ts)
      requires it: every table's columns as long as its length, every index in range, a stack's
      prefix before it, times that never go back; and, with --folded-tid (perf's
      stackcollapse-perf.pl --tid output, or perfconv's), each thread's total weight equal to
      the sum of its lines (ms * 1e6 = ns for tracing-ms weights; samples times the period that
      meta.extra names when every sample has the same one and the file counts them).
  firefox_check.py app OUT.json FILE.fxprof.json TOPDIR [--folded-tid FOLDED]
      What tests/firefox/app.cjs read out of the profiler: no problem on the page, the threads of
      the file, its categories, and per thread the call tree's total equal to FOLDED's and its
      functions by self time equal to perfconv -f top --tid=TID's (TOPDIR/TID.txt): the top five
      self values, and the name of each one perfconv names.
Prints what is wrong, one line each; exit status 1 when something is.
"""
import json
import sys
from collections import defaultdict
from decimal import Decimal

bad = []


def check(cond, msg):
    if not cond:
        bad.append(msg)
    return cond


def folded_totals(path, frameless=None):
    """(pid, tid) -> total, from 'comm-pid/tid;frames count' lines; frameless, when given, gets
    tid -> the weight of the lines with no frame (perf reset the sample's callchain)."""
    tot = defaultdict(int)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, n = line.rpartition(" ")
            head = stack.split(";", 1)[0]
            pidtid = head.rsplit("-", 1)[1]
            pid, tid = pidtid.split("/")
            tot[(pid if pid != "?" else None, int(tid))] += int(n)
            if frameless is not None and ";" not in stack:
                frameless[int(tid)] += int(n)
    return tot


def uniform_period(p):
    """The period every sample stands for when the file counts samples (meta.extra says it), else 1."""
    for sec in p["meta"].get("extra", []):
        for e in sec["entries"]:
            if e["label"].startswith("Each sample's period"):
                return int(e["value"])
    return 1


def as_units(v, weight_type):
    """A weight as the folded file counts it: ns for tracing-ms, as is otherwise."""
    if weight_type == "tracing-ms":
        return int((Decimal(repr(v)) * 1000000).to_integral_value())
    return int(round(v))


def table(tab, name, cols):
    n = tab.get("length")
    if not check(isinstance(n, int) and n >= 0, f"{name}: no length"):
        return 0
    for c in cols:
        check(isinstance(tab.get(c), list) and len(tab[c]) == n, f"{name}.{c}: not {n} long")
    return n


def check_file(path, folded=None):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        p = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        bad.append(f"not UTF-8 JSON: {e}")
        return None
    m = p["meta"]
    check(m.get("preprocessedProfileVersion") == 62, "meta.preprocessedProfileVersion is not 62")
    check(m.get("symbolicated") is True, "meta.symbolicated is not true")
    check(m.get("product") == "perfconv" and m.get("platform") == "Linux", "meta.product/platform")
    cats = m.get("categories", [])
    check(any(c["color"] == "grey" for c in cats), "no grey (default) category")
    sh = p["shared"]
    strings = sh["stringArray"]
    ns = len(strings)
    nst = table(sh["stackTable"], "stackTable", ["frame", "prefix"])
    nfr = table(sh["frameTable"], "frameTable", ["address", "inlineDepth", "category", "subcategory", "func",
                                                 "nativeSymbol", "innerWindowID", "line", "column"])
    nfu = table(sh["funcTable"], "funcTable", ["name", "isJS", "relevantForJS", "resource", "source",
                                               "lineNumber", "columnNumber"])
    nre = table(sh["resourceTable"], "resourceTable", ["lib", "name", "host", "type"])
    nsy = table(sh["nativeSymbols"], "nativeSymbols", ["libIndex", "address", "name", "functionSize"])
    nlib = len(p["libs"])
    for i in range(nst):
        fr, pre = sh["stackTable"]["frame"][i], sh["stackTable"]["prefix"][i]
        check(0 <= fr < nfr, f"stack {i}: frame {fr} out of range")
        check(pre is None or 0 <= pre < i, f"stack {i}: prefix {pre} not before it")
    ft = sh["frameTable"]
    for i in range(nfr):
        check(0 <= ft["func"][i] < nfu, f"frame {i}: func out of range")
        check(0 <= ft["category"][i] < len(cats), f"frame {i}: category out of range")
        check(ft["nativeSymbol"][i] is None or 0 <= ft["nativeSymbol"][i] < nsy, f"frame {i}: nativeSymbol")
        check(ft["inlineDepth"][i] >= 0, f"frame {i}: inlineDepth")
    for i in range(nfu):
        check(0 <= sh["funcTable"]["name"][i] < ns, f"func {i}: name out of range")
        r = sh["funcTable"]["resource"][i]
        check(r == -1 or 0 <= r < nre, f"func {i}: resource {r} out of range")
    for i in range(nre):
        lib = sh["resourceTable"]["lib"][i]
        check(lib is None or 0 <= lib < nlib, f"resource {i}: lib out of range")
        check(0 <= sh["resourceTable"]["name"][i] < ns, f"resource {i}: name")
    for i in range(nsy):
        check(0 <= sh["nativeSymbols"]["libIndex"][i] < nlib, f"nativeSymbol {i}: lib")
        check(0 <= sh["nativeSymbols"]["name"][i] < ns, f"nativeSymbol {i}: name")
    for lib in p["libs"]:
        for k in ("name", "path", "debugName", "debugPath", "breakpadId", "arch"):
            check(isinstance(lib.get(k), str), f"lib {lib.get('name')}: {k}")
    totals = {}
    for t in p["threads"]:
        s = t["samples"]
        n = table(s, f"thread {t['tid']} samples", ["stack", "timeDeltas"])
        if s["weight"] is not None:
            check(len(s["weight"]) == n, f"thread {t['tid']}: weights")
        check(all(0 <= x < nst for x in s["stack"]), f"thread {t['tid']}: a sample's stack out of range")
        check(all(d >= 0 for d in s["timeDeltas"]), f"thread {t['tid']}: time goes back")
        mk = t["markers"]
        nm = table(mk, f"thread {t['tid']} markers", ["name", "startTime", "endTime", "phase", "category", "data"])
        for i in range(nm):
            check(0 <= mk["name"][i] < ns, f"thread {t['tid']} marker {i}: name")
            d = mk["data"][i]
            check(d is None or any(sc["name"] == d.get("type") for sc in m["markerSchema"]),
                  f"thread {t['tid']} marker {i}: no schema for its type")
        w = s["weight"] if s["weight"] is not None else [1] * n
        key = (t["pid"], t["tid"])
        if s["weightType"] == "tracing-ms":
            v = int((sum((Decimal(repr(x)) for x in w), Decimal(0)) * 1000000).to_integral_value())
        elif s["weight"] is None:
            v = n * uniform_period(p)
        else:
            v = sum(int(x) for x in w)
        totals[key] = totals.get(key, 0) + v
    if folded:
        want = folded_totals(folded)
        for (pid, tid), v in sorted(want.items(), key=lambda kv: kv[0][1]):
            got = [x for (p_, t_), x in totals.items() if t_ == tid and (pid is None or p_ == pid)]
            check(got and got[0] == v, f"thread {pid}/{tid}: total {got[0] if got else None}, folded {v}")
        extra = [k for k, x in totals.items() if x and not any(t == k[1] for (_, t) in want)]
        check(not extra, f"threads the folded profile has not: {extra[:5]}")
    return p


def folded_name(n):
    """A .NET method's name as the folded output writes it: no signature, no tier tag."""
    if "!" in n and "(" in n:
        return n[:n.index("(")]
    return n


def strings_name(p, i):
    return p["shared"]["stringArray"][i]


def top_of(path):
    """perfconv -f top: [(self, total, name)] of the 'by self' table."""
    rows = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    i = next(k for k, l in enumerate(lines) if l.startswith("Top ") and "by self" in l) + 2
    while i < len(lines) and lines[i].strip():
        parts = lines[i].split(None, 5)
        rows.append((int(parts[0]), int(parts[3]), parts[5].rstrip() if len(parts) > 5 else ""))
        i += 1
    return rows


def check_app(out_json, fxfile, topdir, folded=None):
    res = [r for r in json.load(open(out_json)) if r["file"].endswith(fxfile.split("/")[-1])]
    if not check(res, f"no result for {fxfile}"):
        return
    r = res[0]
    for pr in r["problems"]:
        bad.append(f"page: {pr}")
    with open(fxfile, "rb") as f:
        p = json.loads(f.read().decode("utf-8"))
    want = [(t["name"], t["pid"], t["tid"]) for t in p["threads"]]
    got = [(t["name"], t["pid"], t["tid"]) for t in r.get("threads", [])]
    check(sorted(got) == sorted(want), f"the profiler has threads {got[:4]}..., the file {want[:4]}...")
    check([c[0] for c in r["meta"]["categories"]] == [c["name"] for c in p["meta"]["categories"]],
          "the profiler's categories differ from the file's")
    for t, ft in zip(r.get("threads", []), p["threads"]):
        mk = ft["markers"]
        want_m = sorted((strings_name(p, mk["name"][i]), (mk["data"][i] or {}).get("lost")) for i in range(mk["length"]))
        got_m = sorted((x["name"], (x["data"] or {}).get("lost")) for x in t["markers"])
        check(got_m == want_m, f"thread {t['tid']}: the profiler shows {len(got_m)} markers, the file has {len(want_m)}")
    frameless = defaultdict(int)
    fol = folded_totals(folded, frameless) if folded else {}
    for t in r.get("threads", []):
        wt = t["weightType"]
        per = uniform_period(p)
        unit = (lambda v: int((Decimal(repr(v)) * 1000000).to_integral_value())) if wt == "tracing-ms" else \
            (lambda v: round(v) * per)
        if fol:
            v = [x for (pid, tid), x in fol.items() if tid == t["tid"]] or [0]   # a thread of markers only
            check(unit(t["total"]) == v[0], f"thread {t['tid']} ({t['name']}): call tree total "
                  f"{unit(t['total'])}, folded {v[0] if v else None}")
        tp = f"{topdir}/{t['tid']}.txt"
        try:
            top = [x for x in top_of(tp) if x[0]][:5]   # the inverted tree's roots have self time
        except (OSError, StopIteration):
            continue
        # folded's names lose what stackcollapse-perf.pl tidies away, a .NET method's signature
        # and tier, which the profiler shows as speedscope does: its functions of one folded name
        # (a method jitted at two tiers) are added up as -f top adds them
        merged = defaultdict(int)
        for x in t["top"]:
            merged[folded_name(x["name"])] += unit(x["self"])
        # a sample whose callchain perf reset has no function in -f top; the profiler needs a
        # frame for it and draws "[unknown]"
        if frameless[int(t["tid"])] and "[unknown]" in merged:
            merged["[unknown]"] -= frameless[int(t["tid"])]
            if not merged["[unknown]"]:
                del merged["[unknown]"]
        mine = sorted(merged.values(), reverse=True)[:len(top)]
        check(sorted(mine) == sorted(s for s, _, _ in top),
              f"thread {t['tid']}: the call tree's top self {mine}, perfconv -f top's {[s for s, _, _ in top]}")
        floor = min((s for s, _, _ in top), default=0)
        for s, tot, name in top:
            if name.startswith("[") or not s:
                continue   # perf's unnamed frames: the folded form names them otherwise
            if s <= floor and len(top) == 5:
                continue   # ties at the end of the list: either tool may list another of them
            x = merged.get(name)
            check(x is not None and x == s,
                  f"thread {t['tid']}: {name} self {x if x is not None else 'missing'} in the call tree, {s} in -f top")


def main(argv):
    folded = None
    if "--folded-tid" in argv:
        k = argv.index("--folded-tid")
        folded = argv[k + 1]
        del argv[k:k + 2]
    if argv[1] == "file":
        check_file(argv[2], folded)
    elif argv[1] == "app":
        check_app(argv[2], argv[3], argv[4], folded)
    for b in bad[:20]:
        print(b)
    if len(bad) > 20:
        print(f"... and {len(bad) - 20} more")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
