#!/usr/bin/env python3
"""dotnet-resolution.py - how much of the managed (.NET) part of folded stacks is resolved.

Usage: tests/dotnet-resolution.py [--check-managed PCT] [--check-framework PCT]
                                  [--unnamed] [--check-unnamed PCT] [--classify N] FILE...

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

--unnamed adds a second line per file, the measure of a profile's readability: the share of ALL
samples whose stack holds at least one unnamed managed or ReadyToRun frame, that is a frame in a
managed image or a JIT region that has no method name:
  "[Name.dll]", "[Name.exe]", "[Name.dll+0xRVA]" (a PE image), "[unknown] " and "[memfd:...]"
  (W^X JIT code), "[perf-N.map]", "[jitted-N-M.so]", and "[unknown]" (no mapping at all) when it
  lies between two managed frames.  Managed frames are recognised in the runtime's form
  ("[Assembly] Type::Method") and in the short form ("Assembly!Type::Method").
FILE may also be perf-script text (perf script or perfconv -f perf-script, with the default
fields): each sample then weighs 1, frames are classified by their DSO (a .dll/.exe image,
/memfd:doublemapper, /tmp/perf-N.map, jitted-N-M.so, //anon with [unknown] as symbol), which the
folded form does not carry, and only the unnamed measure is printed.  --check-unnamed PCT: exit status 1 when that share, rounded to one
decimal, is above PCT.  --classify N lists the N heaviest kinds of unnamed frames (the image or
region, with the samples whose stack holds one).  --jit-only: frames of PE images are not counted,
for a converter that names JIT code but not yet ReadyToRun code.
Stdlib only; run by tests/dotnet-live.sh and used for the baselines in fixtures/dotnet-*/PROVENANCE.txt.
"""
import functools
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


@functools.lru_cache(maxsize=None)  # a profile repeats its frames
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


# The unnamed measure (--unnamed).  Kinds: 'managed' (a named method), 'unnamed', 'unknown' (no
# mapping: unnamed only between managed frames) and 'native'; with each, the class it is counted in.
SHORT_METHOD = re.compile(r"^[A-Za-z_][\w.]*![^ ]*::")
FOLDED_PE = re.compile(r"^\[([\w.-]+\.(?:dll|exe))(\+0x[0-9a-fA-F]+)?\]$", re.I)
FOLDED_JIT = re.compile(r"^(\[unknown\] |\[/?memfd:.*\])$")
FOLDED_REGION = re.compile(r"^\[(perf-\d+\.map|jitted-\d+-\d+\.so)\]$")
SCRIPT_FRAME = re.compile(r"^\s+[0-9a-f]+ (.*) \(((?:[^()]|\(deleted\))*)\)$")
SCRIPT_NOSYM = re.compile(r"^\[[^\]]*\](\+0x[0-9a-f]+)?$")
REGION_DSO = re.compile(r"^(perf-\d+\.map|jitted-\d+-\d+\.so|//anon|\[anon.*\]|anon_hugepage.*)$")
BETWEEN = "[unknown] between managed frames"


@functools.lru_cache(maxsize=None)  # a profile repeats its frames
def classify_folded(frame):
    frame = ANNOT.sub("", frame)
    if METHOD.search(frame) or SHORT_METHOD.search(frame):
        return "managed", None
    m = FOLDED_PE.match(frame)
    if m:
        return "unnamed", m.group(1)
    if FOLDED_JIT.match(frame):
        return "unnamed", "memfd:doublemapper (W^X JIT code)"
    m = FOLDED_REGION.match(frame)
    if m:
        return "unnamed", "JIT region " + re.sub(r"\d+", "N", m.group(1))
    if frame == "[unknown]":
        return "unknown", None
    return "native", None


@functools.lru_cache(maxsize=None)  # a profile repeats its frames
def classify_script(sym, dso):
    dso = dso.replace(" (deleted)", "")
    base = dso.rsplit("/", 1)[-1] if not dso.startswith("//") else dso
    nosym = bool(SCRIPT_NOSYM.match(sym))
    if re.search(r"\.(dll|exe)$", base, re.I):
        return ("unnamed", base) if nosym else ("managed", None)
    if base.startswith("memfd:"):
        return ("unnamed", "memfd:doublemapper (W^X JIT code)") if nosym else ("managed", None)
    if REGION_DSO.match(base):
        return ("unnamed", "JIT region " + re.sub(r"\d+", "N", base)) if nosym else ("managed", None)
    if dso == "[unknown]":
        return "unknown", None
    if METHOD.search(sym) or SHORT_METHOD.search(sym):
        return "managed", None
    return "native", None


def is_script(text):
    """Whether TEXT is perf-script text (frame lines) rather than folded stacks."""
    return any(SCRIPT_FRAME.match(l) for l in text[:65536].splitlines())


def stacks(text):
    """(weight, [(kind, class)...] from the root) for each stack of folded or perf-script text."""
    lines = text.splitlines()
    if is_script(text):
        frames = []
        for line in lines + [""]:
            m = SCRIPT_FRAME.match(line)
            if m:
                frames.append(classify_script(m.group(1), m.group(2)))
            elif not line.strip():
                if frames:
                    yield 1, frames[::-1]
                frames = []
        return
    for raw in lines:
        stack, _, count = raw.rpartition(" ")
        if stack and count.isdigit():
            yield int(count), [classify_folded(f) for f in stack.split(";")[1:]]


def measure_unnamed(text, jit_only=False):
    total = unnamed = 0
    classes = {}
    for n, frames in stacks(text):
        total += n
        idx = [i for i, (k, _) in enumerate(frames) if k in ("managed", "unnamed")]
        found = set(c for k, c in frames if k == "unnamed" and not (jit_only and FOLDED_PE.match("[%s]" % c)))
        if idx and any(k == "unknown" for k, _ in frames[idx[0]:idx[-1] + 1]):
            found.add(BETWEEN)
        if found:
            unnamed += n
            for c in found:
                classes[c] = classes.get(c, 0) + n
    return total, unnamed, classes


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def main(argv):
    checks = {}
    files = []
    unnamed_max = None
    show_unnamed = jit_only = False
    nclasses = 0
    it = iter(argv)
    for a in it:
        if a in ("--check-managed", "--check-framework"):
            checks[a[8:]] = float(next(it))
        elif a == "--check-unnamed":
            unnamed_max = float(next(it))
            show_unnamed = True
        elif a == "--unnamed":
            show_unnamed = True
        elif a == "--jit-only":
            jit_only = True
            show_unnamed = True
        elif a == "--classify":
            nclasses = int(next(it))
            show_unnamed = True
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
            data = read(path)
        except OSError as e:
            print("dotnet-resolution.py: cannot read '%s': %s" % (path, e.strerror), file=sys.stderr)
            return 2
        text = data.decode("utf-8", "replace")
        script = is_script(text)
        if script:  # only the unnamed measure reads perf-script text
            show_unnamed = True
        else:
            total, managed, managed_ok, fw, fw_ok = measure(data)
        shares = {} if script else {"managed": pct(managed_ok, managed), "framework": pct(fw_ok, fw)}
        if not script:
            print("%s: managed %.1f%% resolved (%.1f%% of the weight has managed frames); "
                  "framework %.1f%% resolved (%.1f%% of the weight has framework frames)"
                  % (path, shares["managed"], pct(managed, total), shares["framework"], pct(fw, total)))
        for what, floor in checks.items():
            if what in shares and round(shares[what], 1) < floor:  # as printed: the baselines are written with one decimal
                print("%s: %s share %.1f%% is below %.1f%%" % (path, what, shares[what], floor))
                status = 1
        if show_unnamed:
            all_, unnamed, classes = measure_unnamed(text, jit_only)
            share = pct(unnamed, all_)
            print("%s: unnamed %.1f%% (%d of %d %s an unnamed managed or ReadyToRun frame)"
                  % (path, share, unnamed, all_, "samples hold" if script else "by weight hold"))
            for c, w in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0]))[:nclasses]:
                print("  %6.2f%% %d  %s" % (pct(w, all_), w, c))
            if unnamed_max is not None and round(share, 1) > unnamed_max:
                print("%s: unnamed share %.1f%% is above %.1f%%" % (path, share, unnamed_max))
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
