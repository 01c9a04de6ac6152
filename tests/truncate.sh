#!/usr/bin/env bash
# tests/truncate.sh - perfconv on truncated inputs.  Every fixture input is cut at a selection of
# record boundaries, one byte either side of them, inside the file header, the attrs and feature
# sections, and at random places.  For each cut perfconv must:
#   - exit 0 or 1: never a signal, never a hang (TRUNC_TIMEOUT), never a sanitizer report;
#   - when it exits 1, name the file and say "offset" on stderr (even with -q);
#   - when it exits 1, leave no output file and no temporary file behind; when it exits 0, leave
#     exactly the output file.
# A plain cut inside the data section contradicts the header's data size, which a reader can reject
# before it decodes any record.  So each such cut is also tried as an "r" cut: the header's
# data.size is set to end at the cut and the feature bitmap is cleared, which makes a file whose
# last record is partial (or, at a boundary, a valid shorter recording).  Pipe-mode inputs are also
# fed through stdin.
#
# Run by tests/run.sh; prints "ok    truncate/FIXTURE (N cuts)" or "FAIL  truncate/FIXTURE: ..."
# followed by the first bad cuts.
#
#   PERFCONV, FIXTURES   as for tests/run.sh
#   TRUNC_RECORDS=20     record boundaries per input (the first ones, the last ones, the rest spread)
#   TRUNC_RANDOM=8       random cuts per input;  TRUNC_SEED=1 their seed
#   TRUNC_TIMEOUT=10     seconds per run;  TRUNC_JOBS=nproc  runs in parallel
#   FILTERS="w1 w2"      only fixtures whose "truncate/NAME" contains one of the words
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" truncate
need_perfconv truncate
need_python truncate
export TRUNC_TMP=$TMP

python3 - <<'EOF'
import concurrent.futures, os, random, re, struct, subprocess, sys

env = os.environ
perfconv = env["PERFCONV"]
fix = env["FIXTURES"]
root = os.path.join(fix, "root")
tmp = env["TRUNC_TMP"]
nrecords = int(env.get("TRUNC_RECORDS", "20"))
nrandom = int(env.get("TRUNC_RANDOM", "8"))
seed = env.get("TRUNC_SEED", "1")
timeout = float(env.get("TRUNC_TIMEOUT", "10"))
jobs = int(env.get("TRUNC_JOBS", "0")) or os.cpu_count() or 2
filters = env.get("FILTERS", "").split()
sanitizer = re.compile(rb"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:")


def cuts(data):
    """The cuts of one input: [(kind, n)], kind "" (plain), "r" (data.size too) or "stdin"."""
    n = len(data)
    out = {0, 1, 7, 8, 9, 15, 16, 17}
    e = {b"PERFILE2": "<", b"2ELIFREP": ">"}.get(data[:8])
    q = lambda off: struct.unpack_from(e + "Q", data, off)[0] if off + 8 <= n else 0
    start = end = 0
    pipe = False
    if e and q(8) == 16:
        # Pipe mode: records from byte 16 to the end of the stream.
        start, end, pipe = 16, n, True
    elif e:
        attr_size = q(16)
        a_off, a_size, d_off, d_size = q(24), q(32), q(40), q(48)
        start, end = d_off, d_off + d_size
        # The header, the attrs section with the first attrs' id sections, the data section, and the
        # feature table after the data.  A cut inside the feature section leaves every later feature
        # beyond the end of the file, so its start, the first feature and the last one's middle do.
        marks = [104, a_off, a_off + a_size, d_off, end, end + 8]
        if attr_size >= 16:
            for a in list(range(a_off, a_off + a_size, attr_size))[:4]:
                marks += [a + attr_size - 16, q(a + attr_size - 16)]
        nfeat = sum(bin(b).count("1") for b in data[72:104]) if n >= 104 else 0
        if nfeat:
            last = end + 16 * (nfeat - 1)
            marks += [q(end), q(last) + q(last + 8) // 2]
        for m in marks:
            out.update((m - 1, m, m + 1))
    bounds = []
    off = start
    while e and off + 8 <= min(end, n):
        typ, misc, size = struct.unpack_from(e + "IHH", data, off)
        if size < 8:
            break
        bounds.append(off)
        nxt = off + size
        # HEADER_TRACING_DATA (pipe mode) and AUXTRACE carry a payload after header.size.
        if pipe and typ == 66 and off + 12 <= n:
            nxt += struct.unpack_from(e + "I", data, off + 8)[0]
        elif typ == 71:
            nxt += q(off + 8)
        off = nxt
    bounds.append(off)
    if len(bounds) > nrecords:
        head = tail = nrecords // 4
        mid = nrecords - head - tail
        step = (len(bounds) - head - tail) / (mid + 1)
        bounds = (bounds[:head] + [bounds[head + int(step * (i + 1))] for i in range(mid)]
                  + bounds[len(bounds) - tail:])
    for b in bounds:
        out.update((b - 1, b, b + 1, b + 4))
    rnd = random.Random("%s:%d" % (seed, n))
    randoms = {rnd.randrange(n) for _ in range(nrandom)}
    out.update(randoms)
    plain = sorted(c for c in out if 0 <= c < n)
    result = [("", c) for c in plain]
    if e == "<" and not pipe:
        # r cuts: at the sampled boundaries, one byte into the next record, and the random cuts.
        rcuts = {b for b in bounds} | {b + 1 for b in bounds} | randoms
        result += [("r", c) for c in sorted(rcuts) if start < c < end]
    if pipe:
        result += [("stdin", c) for c in plain]
    return result


def make_cut(data, kind, n):
    cut = bytearray(data[:n])
    if kind == "r":
        d_off = struct.unpack_from("<Q", data, 40)[0]
        struct.pack_into("<Q", cut, 48, n - d_off)
        cut[72:104] = bytes(32)
    return bytes(cut)


def run_cut(fx, data, kind, n):
    """None when perfconv behaved, else a description."""
    name = "cut-%s-%s%d.data" % (fx, kind, n)
    wdir = os.path.join(tmp, "%s-%s%d" % (fx, kind, n))
    outdir = os.path.join(wdir, "out")
    os.makedirs(outdir)
    path = os.path.join(wdir, name)
    cut = make_cut(data, kind, n)
    args = ["-q", "--symfs", root, "--kallsyms", os.path.join(root, "kallsyms")]
    if kind == "stdin":
        args = [perfconv, "-i", "-"] + args + ["-o", "-"]
        feed = cut
    else:
        with open(path, "wb") as f:
            f.write(cut)
        args = [perfconv, "-i", path] + args + ["-o", os.path.join(outdir, "out.folded")]
        feed = None
    try:
        p = subprocess.run(args, input=feed, stdin=None if feed is not None else subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as t:
        rc, err = None, t.stderr or b""
    left = sorted(os.listdir(outdir))
    why = None
    if sanitizer.search(err):
        why = "sanitizer report"
    elif rc is None:
        why = "no exit within %g s" % timeout
    elif rc < 0:
        why = "killed by signal %d" % -rc
    elif rc not in (0, 1):
        why = "exit status %d, expected 0 or 1" % rc
    elif rc == 1 and kind != "stdin" and name.encode() not in err:
        why = "exit 1 but stderr does not name the file"
    elif rc == 1 and not re.search(rb"(?i)\boffset\b", err):
        why = "exit 1 but stderr does not give the offset"
    elif rc == 1 and left:
        why = "exit 1 but files were left in the output directory: %s" % " ".join(left)
    elif rc == 0 and kind != "stdin" and left != ["out.folded"]:
        why = "exit 0 but the output directory holds [%s] instead of out.folded alone" % " ".join(left)
    for f in left:
        os.unlink(os.path.join(outdir, f))
    if os.path.exists(path):
        os.unlink(path)
    os.rmdir(outdir)
    os.rmdir(wdir)
    if why is None:
        return None
    what = {"": "cut at", "r": "cut (data.size too) at", "stdin": "stdin cut at"}[kind]
    lines = err.decode("utf-8", "replace").splitlines()[:3]
    return "\n".join(["%s %d of %d bytes: %s" % (what, n, len(data), why)] + ["    " + l for l in lines])


def run_killed(fx, data):
    """A perf record killed before it rewrote its header: data.size 0, the feature bitmap of
    the first header, no feature sections.  perfconv must read the records to the end of the file
    and say that perf did not finish; its stacks must be those of the same records in a finished
    recording without feature sections (the r cut), at the data section's end and cut inside a
    record in the middle.  None when it did, else a description."""
    d_off, d_size = struct.unpack_from("<QQ", data, 40)
    end = d_off + d_size
    bounds, off = [], d_off
    while off + 8 <= end:
        size = struct.unpack_from("<H", data, off + 6)[0]
        if size < 8:
            break
        bounds.append(off)
        off += size
        if struct.unpack_from("<I", data, bounds[-1])[0] == 71:
            off += struct.unpack_from("<Q", data, bounds[-1] + 8)[0]
    mid = bounds[len(bounds) // 2] if bounds else end
    wdir = os.path.join(tmp, "killed-" + fx)
    os.makedirs(wdir)
    args = ["-q", "--symfs", root, "--kallsyms", os.path.join(root, "kallsyms"), "-f", "folded", "-o", "-"]
    bad = []
    for cut, ref in ((end, end), (mid + 3, mid)):
        killed = bytearray(data[:cut])
        struct.pack_into("<Q", killed, 48, 0)
        paths = [os.path.join(wdir, "killed-%d.data" % cut), os.path.join(wdir, "finished-%d.data" % ref)]
        with open(paths[0], "wb") as f:
            f.write(killed)
        with open(paths[1], "wb") as f:
            f.write(make_cut(data, "r", ref))
        got = [subprocess.run([perfconv, "-i", q] + args, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout) for q in paths]
        if got[0].returncode != 0 or got[1].returncode != 0:
            bad.append("cut at %d: exit %d (finished: %d): %s" % (cut, got[0].returncode, got[1].returncode,
                       got[0].stderr.decode("utf-8", "replace").strip()[:200]))
        elif got[0].stdout != got[1].stdout:
            bad.append("cut at %d: stacks differ from the finished recording's" % cut)
        elif b"perf record did not finish" not in subprocess.run(
                [perfconv, "-i", paths[0]] + args[1:], stdin=subprocess.DEVNULL, capture_output=True,
                timeout=timeout).stderr:
            bad.append("cut at %d: no warning that perf record did not finish" % cut)
        for q in paths:
            os.unlink(q)
    os.rmdir(wdir)
    return "; ".join(bad) or None


inputs = []
for fx in sorted(os.listdir(fix)):
    d = os.path.join(fix, fx)
    if not os.path.isdir(os.path.join(d, "expected")):
        continue
    if filters and not any(w in "truncate/" + fx for w in filters):
        continue
    for base in ("pipe.data", "perf.data", "perf.jit.data"):
        p = os.path.join(d, base)
        if os.path.isfile(p):
            inputs.append((fx + ("-jit" if base == "perf.jit.data" else ""), open(p, "rb").read()))

tasks = {}
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for fx, data in inputs:
        tasks[fx] = [pool.submit(run_cut, fx, data, kind, n) for kind, n in cuts(data)]
    killed = {fx: pool.submit(run_killed, fx, data) for fx, data in inputs
              if data[:8] == b"PERFILE2" and struct.unpack_from("<Q", data, 8)[0] != 16}
    for fx, data in inputs:
        bad = [r for r in (t.result() for t in tasks[fx]) if r]
        if bad:
            print("FAIL  truncate/%s: %d of %d cuts misbehaved" % (fx, len(bad), len(tasks[fx])))
            for line in "\n".join(bad[:6]).splitlines():
                print("      | " + line)
        else:
            print("ok    truncate/%s (%d cuts)" % (fx, len(tasks[fx])))
        if fx in killed:
            why = killed[fx].result()
            if why:
                print("FAIL  truncate/killed/%s: %s" % (fx, why))
            else:
                print("ok    truncate/killed/%s" % fx)
        sys.stdout.flush()
EOF
