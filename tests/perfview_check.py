#!/usr/bin/env python3
"""perfview_check.py - reads a PerfView .trace.zip the way PerfView's Linux parser does
(TraceEvent LinuxPerfScriptEventParser: output-formats.md section 3.3) and checks it.

  perfview_check.py fold ZIP [--tid]
      parse the zip's first *.data.txt entry with the grammar of old (<= v3.1.23, a blank
      line ends a sample) and new (>= v3.1.24, a line not starting with TAB ends it) PerfView;
      both must give the same samples, none may stop the parse early.  Print the samples
      summed into folded stacks with stackcollapse-perf.pl's rules (period sums, the first
      event only, name tidying), sorted bytewise, to compare with perfconv's folded output.
  perfview_check.py perfscript ZIP EXPECTED [--no-trace]
      compare perf.data.txt with perf's own `perf script -F ...` text: the same samples, the
      same frame lines byte for byte, the same header fields (perf pads them with spaces;
      perfconv separates them with one).  A header field perf did not print (time) must be
      0.000000 in perfconv's.  --no-trace ignores the tracepoint payloads.
  perfview_check.py processes ZIP
      print PerfView's stack roots: "Process <comms> (<pid>)" and "Thread (<tid>)" with their
      sample counts, one per line, sorted.

Exit status 1 with a message naming the entry and byte offset on any problem.
"""
import re
import sys
import zipfile


class ParseError(Exception):
    pass


def data_txt(zpath):
    z = zipfile.ZipFile(zpath)
    for info in z.infolist():  # PerfView takes the first entry whose name ends in .data.txt
        if info.filename.lower().endswith(".data.txt"):
            return info.filename, z.read(info)
    raise ParseError("%s: no *.data.txt entry" % zpath)


def isdigit(c):
    return 48 <= c <= 57


def isspace(c):
    return c in b" \t\n\r\x0b\x0c"


class Parser:
    """A port of the parts of LinuxPerfScriptEventParser that read samples."""

    def __init__(self, buf, old):
        self.b = buf
        self.old = old
        self.n = len(buf)

    def peek(self, pos):
        return self.b[pos] if pos < self.n else 0

    def end_of_sample(self, pos):
        cur, nxt = self.peek(pos), self.peek(pos + 1)
        if pos >= self.n or cur == 0:
            return True
        if self.old:
            return cur == 10 and nxt in (10, 13, 0)
        return cur == 10 and nxt != 9

    def skip_ws(self, pos):
        while pos < self.n and isspace(self.b[pos]):
            pos += 1
        return pos

    def read_int(self, pos):
        start = pos
        if self.peek(pos) == ord("-"):
            pos += 1
        while pos < self.n and isdigit(self.b[pos]):
            pos += 1
        if pos == start:
            raise ParseError("expected a number at offset %d" % start)
        return int(self.b[start:pos]), pos

    def find_end_of_comm(self, pos):
        """FindEndOfProcessCommand: the index (from pos) of the whitespace before the pid."""
        idx = 0
        while True:  # startOver
            first_space, seen_digit = -1, False
            if isdigit(self.peek(pos)):
                first_space, seen_digit = 0, True
            while True:
                idx += 1
                if pos + idx >= self.n:
                    return -1
                v = self.b[pos + idx]
                if v == 10:
                    return -1
                if first_space < 0:
                    if isspace(v):
                        first_space = idx
                        continue
                    break
                elif not seen_digit:
                    if isdigit(v):
                        seen_digit = True
                    elif not isspace(v):
                        break
                else:
                    if v == ord("/") and isdigit(self.peek(pos + idx + 1)):
                        return first_space
                    elif not isdigit(v):
                        if self.peek(pos + idx + 1) == ord("["):
                            return first_space
                        break

    def up_to(self, pos, ch):
        e = self.b.find(ch, pos)
        return self.n if e < 0 else e

    def samples(self):
        pos = 0
        if self.b.startswith(b"\xef\xbb\xbf"):
            pos = 3
        while True:  # preamble: whitespace and '#' lines
            pos = self.skip_ws(pos)
            if self.peek(pos) == ord("#"):
                pos = self.up_to(pos, b"\n")
                continue
            break
        while True:
            pos = self.skip_ws(pos)
            if pos >= self.n:
                return
            hstart = pos
            idx = self.find_end_of_comm(pos)
            if idx < 0:
                raise ParseError("PerfView stops parsing here: no pid/tid or [cpu] after the comm, "
                                 "offset %d: %r" % (hstart, self.b[hstart:self.up_to(hstart, b"\n")][:120]))
            comm = self.b[pos:pos + idx]
            pos = self.skip_ws(pos + idx)
            pid, pos = self.read_int(pos)
            tid = pid
            if self.peek(pos) == ord("/"):
                tid, pos = self.read_int(pos + 1)
            pos = self.skip_ws(pos)
            cpu = -1
            if self.peek(pos) == ord("["):
                cpu, pos = self.read_int(pos + 1)
                pos += 1
            pos = self.skip_ws(pos)
            e = self.up_to(pos, b":")
            try:
                time = float(self.b[pos:e]) * 1000
            except ValueError:
                raise ParseError("bad time %r at offset %d" % (self.b[pos:e], pos))
            pos = self.skip_ws(e + 1)
            period = -1
            if isdigit(self.peek(pos)):
                period, pos = self.read_int(pos)
            pos = self.skip_ws(pos)
            e = self.up_to(pos, b":")
            event = self.b[pos:e]
            pos = e + 1
            e = self.up_to(pos, b"\n")
            details = self.b[pos:e].strip()
            header = self.b[hstart:e]
            pos = e
            frames = []
            while not self.end_of_sample(pos):
                pos, fr = self.frame(pos)
                frames.append(fr)
            yield dict(comm=comm, pid=pid, tid=tid, cpu=cpu, time=time, period=period, event=event,
                       details=details, frames=frames, header=header, offset=hstart)

    def frame(self, pos):
        pos = self.skip_ws(pos)
        e = self.up_to(pos, b" ")
        addr = self.b[pos:e]
        pos = self.skip_ws(e)
        eol = self.up_to(pos, b"\n")
        lp = self.b.rfind(b"(", pos, eol)
        if lp < 0:
            lp = eol
        sym = self.b[pos:lp]
        mod = self.b[lp:eol]
        return eol, dict(addr=addr, sym=sym.strip(), mod=mod.strip())


def outer(s):
    while len(s) >= 2 and ((s[:1] == b"(" and s[-1:] == b")") or (s[:1] == b"[" and s[-1:] == b"]")):
        s = s[1:-1]
    return s


def perfview_name(fr):
    """StackFrame.DisplayName, without the optimization tier handling of jitted code."""
    mod = outer(fr["mod"])
    sym = outer(fr["sym"])
    if mod.endswith(b".map"):
        for tok in fr["sym"].split(b" "):
            if len(tok) > 2 and tok[:1] == b"[" and tok[-1:] == b"]":
                rest = fr["sym"].split(tok, 1)[1].strip()
                mod, sym = tok[1:-1], rest or mod
                break
    mod = mod.rsplit(b"/", 1)[-1]
    i = sym.rfind(b"+0x")
    if 0 < i < len(sym) - 3:
        sym = sym[:i]
    return mod + b"!" + sym


def parse(buf, name):
    new = list(Parser(buf, old=False).samples())
    old = list(Parser(buf, old=True).samples())
    if len(new) != len(old) or any(a["frames"] != b["frames"] or a["header"] != b["header"]
                                   for a, b in zip(new, old)):
        raise ParseError("%s: old and new PerfView read different samples (%d and %d)" % (name, len(old), len(new)))
    return new


# ---- stackcollapse-perf.pl's rules on the parsed samples ----

EV_START = re.compile(rb"^(\S.+?)\s+(\d+)\/*(\d+)*\s+")
EV_NAME = re.compile(rb":\s*(\d+)*\s+(\S+):\s*$")


def tidy(func, mod, java):
    if func == b"[unknown]":
        func = b"[" + (mod.rsplit(b"/", 1)[-1] if mod != b"[unknown]" else b"unknown") + b"]"
    func = func.replace(b";", b":")
    if not re.search(rb"\.\(.*\)\.", func):
        func = re.sub(rb"\((?!anonymous namespace\)).*", b"", func, count=1)
    func = func.replace(b'"', b"").replace(b"'", b"")
    if java and b"/" in func and func.startswith(b"L"):
        func = func[1:]
    return func


def fold(samples, tid_mode):
    acc, filt = {}, None
    for s in samples:
        m = EV_START.match(s["header"])
        if not m:
            raise ParseError("header at offset %d: stackcollapse would not read it" % s["offset"])
        comm, pid, tid = m.group(1), m.group(2), m.group(3)
        weight = 1
        n = EV_NAME.search(s["header"])
        if re.search(rb"\s0\.000000:", s["header"]):
            n = None  # recorded without time: perf's default header has no ':' before the period
        if n:
            if filt is None:
                filt = n.group(2)
            if n.group(2) != filt:
                continue
            if n.group(1):
                weight = int(n.group(1))
        # perf's default text (stackcollapse's input) has the tid only: the script's pid is "?"
        tid, pid = b"%d" % s["tid"], b"?"
        pname = comm + (b"-" + pid + b"/" + tid if tid_mode else b"")
        pname = pname.replace(b" ", b"_")
        java = pname.startswith(b"java")
        stack = [pname]
        for fr in reversed(s["frames"]):
            func = fr["sym"]
            func = re.sub(rb"\+0x[\da-f]+$", b"", func)
            if func.startswith(b"("):
                continue
            mod = fr["mod"][1:-1] if fr["mod"].startswith(b"(") and fr["mod"].endswith(b")") else fr["mod"]
            parts = [p for p in re.split(rb"->", func)]
            while parts and parts[-1] == b"":
                parts.pop()
            out = []
            for i, p in enumerate(parts):
                t = tidy(p, mod, java)
                if i > 0 and b"_[i]" not in t:
                    t += b"_[i]"
                out.append(t)
            if out:
                stack.append(b";".join(out))
        key = b";".join(stack)
        acc[key] = acc.get(key, 0) + weight
    return acc


def norm_header(h, drop_trace):
    toks = h.split()
    if drop_trace:  # everything after the event token "name:" goes
        for i, t in enumerate(toks):
            if t.endswith(b":") and not re.match(rb"^\d+\.\d+:$", t):
                toks = toks[:i + 1]
                break
    return toks


def cmd_perfscript(zpath, expected, drop_trace):
    name, buf = data_txt(zpath)
    ours = parse(buf, name)
    theirs = []
    with open(expected, "rb") as f:  # perf's text: PerfView may not read it (no time, say)
        off = 0
        for line in f:
            if line.startswith(b"\t"):
                addr, _, rest = line.strip().partition(b" ")
                lp = rest.rfind(b"(")
                lp = len(rest) if lp < 0 else lp
                theirs[-1]["frames"].append(dict(addr=addr, sym=rest[:lp].strip(), mod=rest[lp:].strip()))
            elif line.strip():
                theirs.append(dict(header=line.rstrip(b"\n"), frames=[], offset=off))
            off += len(line)
    if len(ours) != len(theirs):
        raise ParseError("%d samples in %s, %d in %s" % (len(ours), name, len(theirs), expected))
    for a, b in zip(ours, theirs):
        ha, hb = norm_header(a["header"], drop_trace), norm_header(b["header"], drop_trace)
        if not re.search(rb"\s\d+\.\d{6}:", b" " + b["header"]):  # perf printed no time
            ha = [t for t in ha if t != b"0.000000:"]
        if ha != hb:
            raise ParseError("header at offset %d differs:\n  perfconv: %s\n  perf:     %s" % (
                a["offset"], b" ".join(ha).decode(errors="replace"), b" ".join(hb).decode(errors="replace")))
        if a["frames"] != b["frames"]:
            for x, y in zip(a["frames"] + [None] * 99, b["frames"] + [None] * 99):
                if x != y:
                    raise ParseError("sample at offset %d: frame differs:\n  perfconv: %r\n  perf:     %r" % (
                        a["offset"], x, y))
    print("%d samples match" % len(ours))


def main(argv):
    try:
        if len(argv) >= 3 and argv[1] == "fold":
            name, buf = data_txt(argv[2])
            acc = fold(parse(buf, name), "--tid" in argv[3:])
            out = sys.stdout.buffer
            for k in sorted(acc):
                out.write(k + b" " + str(acc[k]).encode() + b"\n")
        elif len(argv) >= 4 and argv[1] == "perfscript":
            cmd_perfscript(argv[2], argv[3], "--no-trace" in argv[4:])
        elif len(argv) >= 3 and argv[1] == "processes":
            name, buf = data_txt(argv[2])
            comms, counts = {}, {}
            for s in parse(buf, name):
                comms.setdefault(s["pid"], set()).add(s["comm"])
                key = (s["pid"], s["tid"])
                counts[key] = counts.get(key, 0) + 1
            out = sys.stdout.buffer
            for (pid, tid), c in sorted(counts.items()):
                out.write(b"Process %s (%d);Thread (%d) %d\n" % (b";".join(sorted(comms[pid])), pid, tid, c))
        else:
            sys.stderr.write(__doc__)
            return 2
    except ParseError as e:
        sys.stderr.write("perfview_check: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
