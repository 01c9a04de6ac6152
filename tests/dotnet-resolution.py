#!/usr/bin/env python3
"""dotnet-resolution.py - how much of the managed (.NET) part of folded stacks is resolved.

Usage: tests/dotnet-resolution.py [--check-managed PCT] [--check-framework PCT] FOLDED...

Reads folded stacks (stackcollapse-perf.pl or perfconv output; FILE.xz is decompressed, and read
when FILE does not exist; '-' is stdin) and prints, weighted by the sample counts of the file:

  managed     the share of samples with managed frames whose managed part is fully resolved: no
              managed frame without a name (JIT code or a ReadyToRun image) and no [unknown] frame
              between the first and the last managed frame of the stack;
  framework   the share of samples with framework frames (ReadyToRun images of the shared framework,
              System.* / Microsoft.* / netstandard / mscorlib) whose framework frames all have a name.

How frames are told apart, in the default folded form (annotations _[j] _[k] _[i] are ignored):

  resolved managed    a CoreCLR method name, "... [Assembly] Namespace.Type::Method"; its assembly is
                      the [Assembly] token right before the declaring type; or perfconv's short
                      form (its default), "Assembly!Namespace.Type::Method"
  unresolved managed  "[unknown] " (JIT code in /memfd:doublemapper: stackcollapse-perf.pl splits
                      the module name "/memfd:doublemapper (deleted)" at its last " (" and keeps
                      "[unknown] "), "[perf-N.map]" (anonymous JIT memory not in the map),
                      "[jitted-N-M.so]", "[memfd:doublemapper...]", and "[Name.dll]" (a ReadyToRun
                      image without symbols; framework when Name is System.*, Microsoft.*, ...)
  unknown             "[unknown]": unresolved managed only inside the managed part of a stack

With --check-managed / --check-framework the exit status is 1 when a share, rounded to one decimal as
printed, is below PCT.
Stdlib only; run by tests/dotnet-live.sh and used for the baselines in fixtures/dotnet-*/PROVENANCE.txt.
"""
import lzma
import os
import re
import sys

ANNOT = re.compile(r"_\[[jki]\]$")
METHOD = re.compile(r"\[([A-Za-z_][\w.]*)\] [^ ]*::")
METHOD_SHORT = re.compile(r"^(?:\[\w+\] )?([A-Za-z_][\w.]*)![^ ]*::")
JIT_UNRESOLVED = re.compile(r"^(\[unknown\] |\[perf-\d+\.map\]|\[jitted-\d+-\d+\.so\]|\[/?memfd:doublemapper.*\])$")
IMAGE = re.compile(r"^\[([\w.]+?)(\.ni)?\.dll\]$")
FRAMEWORK = re.compile(r"^(System|Microsoft)(\.|$)|^(netstandard|mscorlib)$")


def classify(frame):
    """Return (kind, assembly): kind is 'ok', 'bad', 'unknown' or 'native'."""
    frame = ANNOT.sub("", frame)
    found = METHOD.findall(frame)
    if found:
        return "ok", found[-1]
    m = METHOD_SHORT.match(frame)
    if m:
        return "ok", m.group(1)
    if JIT_UNRESOLVED.match(frame):
        return "bad", None
    m = IMAGE.match(frame)
    if m:
        return "bad", m.group(1)
    if frame == "[unknown]":
        return "unknown", None
    return "native", None


def read(path):
    if path == "-":
        return sys.stdin.buffer.read()
    if not path.endswith(".xz") and not os.path.exists(path) and os.path.exists(path + ".xz"):
        path += ".xz"
    if path.endswith(".xz"):
        with lzma.open(path) as f:
            return f.read()
    with open(path, "rb") as f:
        return f.read()


def measure(data):
    total = managed = managed_ok = fw = fw_ok = 0
    for raw in data.decode("utf-8", "replace").splitlines():
        stack, _, count = raw.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [classify(f) for f in stack.split(";")[1:]]
        idx = [i for i, (k, _) in enumerate(frames) if k in ("ok", "bad")]
        if idx:
            managed += n
            part = frames[idx[0]:idx[-1] + 1]
            if all(k in ("ok", "native") for k, _ in part):
                managed_ok += n
        fwk = [k for k, a in frames if a and FRAMEWORK.search(a)]
        if fwk:
            fw += n
            if all(k == "ok" for k in fwk):
                fw_ok += n
    return total, managed, managed_ok, fw, fw_ok


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def main(argv):
    checks = {}
    files = []
    it = iter(argv)
    for a in it:
        if a in ("--check-managed", "--check-framework"):
            checks[a[8:]] = float(next(it))
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            files.append(a)
    if not files:
        print("usage: dotnet-resolution.py [--check-managed PCT] [--check-framework PCT] FOLDED...", file=sys.stderr)
        return 2
    status = 0
    for path in files:
        try:
            total, managed, managed_ok, fw, fw_ok = measure(read(path))
        except OSError as e:
            print("dotnet-resolution.py: cannot read '%s': %s" % (path, e.strerror), file=sys.stderr)
            return 2
        shares = {"managed": pct(managed_ok, managed), "framework": pct(fw_ok, fw)}
        print("%s: managed %.1f%% resolved (%.1f%% of the weight has managed frames); "
              "framework %.1f%% resolved (%.1f%% of the weight has framework frames)"
              % (path, shares["managed"], pct(managed, total), shares["framework"], pct(fw, total)))
        for what, floor in checks.items():
            if round(shares[what], 1) < floor:  # as printed: the baselines are written with one decimal
                print("%s: %s share %.1f%% is below %.1f%%" % (path, what, shares[what], floor))
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
