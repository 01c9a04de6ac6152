#!/usr/bin/env python3
# tests/tools/r2r-truth.py - compares perfconv's ReadyToRun method names (`perfconv --r2r-dump`)
# with the two real oracles: crossgen2's own r2rmap of the image, and the [PreJIT] records the
# .NET runtime writes to its jitdump.  Used by tests/r2r-truth.sh; prints one summary line, then
# each mismatch with its class; exits 1 when anything differs, 2 when the only differences are
# names perfconv printed as "?" (left unformatted).
#
#   r2rmap  MAP DUMP          DUMP (--r2r-dump-style r2rmap) must be MAP line for line
#   runtime MAP DUMP [--asm NS=ASM]... [--ref-dir DIR]...
#                             each MAP entry has a DUMP line (runtime style) at its RVA, with its
#                             length, that names the same method: owner, name, parameter and return
#                             types (the runtime prints the definition's signature: !n is replaced
#                             by the owner's type arguments, !!n matches any type), tier [PreJIT],
#                             and for owners whose namespace starts with NS the assembly ASM; each
#                             [Asm] scope of a parameter type must name an ASM.dll in a DIR
#   prejit  JITDUMP MAPS [--symfs DIR] [--only SUBSTR]...
#                             for every [PreJIT] / [PreJit-cold] record of JITDUMP in an image of
#                             MAPS (/proc/PID/maps text, or a perf.data whose MMAP2 records are
#                             read), the line of `$PERFCONV --r2r-dump IMAGE` at the record's RVA
#                             must carry the record's name byte for byte (and its size)
#   maps    PERFDATA          print the MMAP2 records of PERFDATA in /proc/PID/maps form
import os
import re
import struct
import subprocess
import sys
from collections import Counter, defaultdict

EXAMPLES = 12          # mismatches shown per class
REF_DIRS = []          # --ref-dir: where the assemblies named by [Asm] scopes must exist
UNNAMED = 'not formatted by perfconv ("?")'


# ---------------------------------------------------------------------------------------------
# Inputs: r2rmap lines, PE sections, jitdump records, mappings.

def read_map(path):
    """RVA -> (length, name) of an r2rmap-form file; the header lines (RVA >= 0xFFFFFFF0) apart."""
    ents, hdr, dups = {}, [], []
    with open(path, encoding='utf-8', errors='surrogateescape') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            m = re.match(r'^([0-9A-F]{8,}) ([0-9A-F]{2,}) (.*)$', line)
            if not m:
                raise SystemExit('%s:%d: not an r2rmap line: %r' % (path, n, line))
            rva, ln = int(m.group(1), 16), int(m.group(2), 16)
            if rva >= 0xFFFFFFF0:
                hdr.append(line)
            elif rva in ents:
                dups.append(line)
            else:
                ents[rva] = (ln, m.group(3))
    return ents, hdr, dups


def pe_sections(path):
    """[(VirtualAddress, PointerToRawData, SizeOfRawData, VirtualSize)] of a PE file."""
    with open(path, 'rb') as f:
        pe = f.read(4096)
    if pe[:2] != b'MZ':
        return None
    lf = struct.unpack_from('<I', pe, 0x3c)[0]
    if pe[lf:lf + 4] != b'PE\0\0':
        return None
    nsec, optsz = struct.unpack_from('<H', pe, lf + 6)[0], struct.unpack_from('<H', pe, lf + 20)[0]
    secs = []
    for i in range(nsec):
        vsize, va, rawsz, raw = struct.unpack_from('<IIII', pe, lf + 24 + optsz + 40 * i + 8)
        secs.append((va, raw, rawsz, vsize))
    return secs


def read_jitdump(path):
    """[(code_addr, code_size, name)] of the JIT_CODE_LOAD records of a jitdump file."""
    with open(path, 'rb') as f:
        d = f.read()
    if d[:4] not in (b'JiTD', b'DTiJ'):
        raise SystemExit('%s: not a jitdump file' % path)
    hsize = struct.unpack_from('<I', d, 8)[0]
    pos, recs = hsize, []
    while pos + 16 <= len(d):
        rid, size = struct.unpack_from('<II', d, pos)
        if size < 16 or pos + size > len(d):
            break
        if rid == 0:        # JIT_CODE_LOAD: pid, tid, vma, code_addr, code_size, code_index, name
            addr, csize = struct.unpack_from('<QQ', d, pos + 32)
            end = d.index(b'\0', pos + 56)
            recs.append((addr, csize, d[pos + 56:end].decode('utf-8', 'surrogateescape')))
        pos += size
    return recs


def perf_mmap2(path):
    """(start, length, pgoff, prot-string, filename) of each MMAP2 record of a perf.data file."""
    with open(path, 'rb') as f:
        d = f.read()
    if d[:8] != b'PERFILE2':
        raise SystemExit('%s: not a perf.data file (PERFILE2)' % path)
    data_off, data_size = struct.unpack_from('<QQ', d, 40)
    pos, end, out = data_off, data_off + data_size, []
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', d, pos)
        if size < 8:
            break
        if typ == 10:       # PERF_RECORD_MMAP2
            start, ln, pgoff = struct.unpack_from('<QQQ', d, pos + 16)
            prot = struct.unpack_from('<I', d, pos + 64)[0]
            fn = d[pos + 72:d.index(b'\0', pos + 72)].decode('utf-8', 'surrogateescape')
            perms = ('r' if prot & 1 else '-') + ('w' if prot & 2 else '-') + ('x' if prot & 4 else '-') + 'p'
            out.append((start, ln, pgoff, perms, fn))
        pos += size
    return out


def read_maps(path):
    """The mappings of a /proc/PID/maps copy or of a perf.data file, as perf_mmap2 gives them."""
    with open(path, 'rb') as f:
        magic = f.read(8)
    if magic == b'PERFILE2':
        return perf_mmap2(path)
    out = []
    with open(path, encoding='utf-8', errors='surrogateescape') as f:
        for line in f:
            m = re.match(r'^([0-9a-f]+)-([0-9a-f]+) (\S{4}) ([0-9a-f]+) \S+ \d+\s+(/.*)$', line.rstrip('\n'))
            if m:
                s, e = int(m.group(1), 16), int(m.group(2), 16)
                out.append((s, e - s, int(m.group(4), 16), m.group(3), m.group(5)))
    return out


# ---------------------------------------------------------------------------------------------
# Names.  The r2rmap style (crossgen2): [RET " "] OWNER "::" NAME "(" PARAMS joined by ", " ")".
# The runtime style: [instance ] RET " [" ASM "] " OWNER "::" NAME "(" PARAMS joined by "," ")" [TIER].

def split_top(s, sep, opens='[(', closes='])'):
    """s split at each sep outside brackets."""
    out, depth, cur, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if c == '\\':
            i += 2
            continue
        if c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
        elif depth == 0 and s.startswith(sep, i):
            out.append(s[cur:i])
            i += len(sep)
            cur = i
            continue
        i += 1
    out.append(s[cur:])
    return out


def find_top(s, sub, opens='[(', closes='])'):
    """Index of the first sub outside brackets, or -1."""
    depth, i = 0, 0
    while i < len(s):
        c = s[i]
        if c == '\\':
            i += 2
            continue
        if depth == 0 and s.startswith(sub, i):
            return i
        if c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
        i += 1
    return -1


def parse_r2rmap_name(name):
    """(ret or None, owner, method, [params]) of an r2rmap-style name, or None."""
    k = find_top(name, '::')
    if k < 0:
        return None
    head, rest = name[:k], name[k + 2:]
    # the owner is the text after the last space outside brackets
    parts = split_top(head, ' ')
    owner = parts[-1]
    ret = head[:len(head) - len(owner)].rstrip(' ') or None
    p = rest.find('(')
    if p < 0 or not rest.endswith(')'):
        return None
    params = rest[p + 1:-1]
    return ret, owner, rest[:p], (split_top(params, ', ') if params else [])


TIER_RE = re.compile(r'\[(PreJIT|PreJit-cold|QuickJitted|OptimizedTier1|Optimized|Tier0|Tier1|[A-Za-z0-9-]+)\]$')


def parse_runtime_name(name):
    """(prefix words, ret, asm, owner, method, params string, tier) of a runtime-style name, or None."""
    tier = None
    m = TIER_RE.search(name)
    if m and name[:m.start()].endswith(')'):
        tier, name = m.group(1), name[:m.start()]
    k = find_top(name, '::', '[(', '])')
    if k < 0:
        return None
    head, rest = name[:k], name[k + 2:]
    # head: [prefix] RET " [" ASM "] " OWNER; the owner has no space outside brackets
    j = head.rfind('] ')
    if j < 0:
        return None
    owner = head[j + 2:]
    i = head.rfind(' [', 0, j)
    if i < 0:
        return None
    asm, ret = head[i + 2:j], head[:i]
    prefix = []
    while True:
        w = ret.split(' ', 1)
        if len(w) == 2 and w[0] in ('instance', 'explicit', 'vararg', 'unmanaged', 'cdecl', 'stdcall',
                                      'thiscall', 'fastcall'):
            prefix.append(w[0])
            ret = w[1]
        else:
            break
    p = rest.find('(')
    if p < 0 or not rest.endswith(')'):
        return None
    return prefix, ret, asm, owner, rest[:p], rest[p + 1:-1], tier


PRIMS = {
    'void': 'System.Void', 'bool': 'System.Boolean', 'char': 'System.Char', 'int8': 'System.SByte',
    'uint8': 'System.Byte', 'int16': 'System.Int16', 'uint16': 'System.UInt16', 'int32': 'System.Int32',
    'uint32': 'System.UInt32', 'int64': 'System.Int64', 'uint64': 'System.UInt64',
    'float32': 'System.Single', 'float64': 'System.Double', 'native int': 'System.IntPtr',
    'native uint': 'System.UIntPtr', 'object': 'System.Object', 'string': 'System.String',
    'typedref': 'System.TypedReference',
}
CALLCONV = ('instance', 'explicit', 'unmanaged', 'cdecl', 'stdcall', 'thiscall', 'fastcall', 'vararg',
            'default')


class RtType:
    """A parser of the runtime's ILDASM-style type text that prints it in crossgen2's TypeString
    form: owner type arguments for !n, a placeholder for !!n (any type), no modifiers."""

    def __init__(self, s, targs, scopes=None):
        self.s, self.i, self.targs = s, 0, targs
        self.scopes = scopes          # (own assembly, [(namespace, assembly)]) to check scopes by

    def check_scope(self, scope, name):
        """The [Asm] before a class name: none for the image's own types, the defining assembly
        for the others (known for the namespaces of the rules; in the rules' assemblies, System.*
        from a System.* or netstandard/mscorlib assembly)."""
        if self.scopes is None:
            return
        own, rules = self.scopes
        for ns, asm in rules:
            if name.startswith(ns):
                want = None if asm == own else asm
                if scope != want:
                    self.error('scope [%s] for %s of assembly %s' % (scope, name, asm))
                return
        if own in [a for n, a in rules] and name.startswith('System.') and not (scope and re.match(r'(System(\.\w+)*|netstandard|mscorlib)$', scope)):
            self.error('scope [%s] for %s' % (scope, name))
        if scope and REF_DIRS and not any(os.path.isfile(os.path.join(d, scope + '.dll')) for d in REF_DIRS):
            self.error('scope [%s]: no %s.dll in %s' % (scope, scope, ' '.join(REF_DIRS)))

    def error(self, why):
        raise ValueError('%s at %d of %r' % (why, self.i, self.s))

    def eat(self, t):
        if self.s.startswith(t, self.i):
            self.i += len(t)
            return True
        return False

    def classname(self):
        s = self.s
        scope = None
        if s.startswith('[', self.i):            # [Asm] or [.module X] scope
            j = s.index(']', self.i)
            scope = s[self.i + 1:j]
            self.i = j + 1
        start, out = self.i, []
        while self.i < len(s):
            c = s[self.i]
            if c == '\\':
                out.append(s[self.i:self.i + 2])
                self.i += 2
                continue
            if c == '<' and (not out or out[-1] in ('.', '+')):
                j = s.index('>', self.i)             # a compiler-made name (<>c, <Evens>d__10)
                # starts a name segment; any other '<' opens generic arguments
                out.append(s[self.i:j + 1])
                self.i = j + 1
                continue
            if c in '<[*&,)> ':
                break
            out.append('+' if c == '/' else c)
            self.i += 1
        if self.i == start:
            self.error('no class name')
        self.check_scope(scope, ''.join(out))
        return ''.join(out)

    def type(self):
        s = self.s
        if self.eat('method '):
            while True:
                w = re.match(r'(\w+) ', s[self.i:])
                if w and w.group(1) in CALLCONV:
                    self.i += len(w.group(0))
                else:
                    break
            ret = self.type()
            if not self.eat(' *('):
                self.error('no " *(" in a function pointer')
            args = []
            if not self.eat(')'):
                while True:
                    args.append(self.type())
                    if self.eat(')'):
                        break
                    if not self.eat(','):
                        self.error('no "," between function pointer parameters')
            t = '%s (%s)' % (ret, ', '.join(args))
        elif self.eat('class ') or self.eat('valuetype '):
            t = self.classname()
            if self.eat('<'):
                args = [self.type()]
                while self.eat(','):
                    args.append(self.type())
                if not self.eat('>'):
                    self.error('no ">" after generic arguments')
                t += '[%s]' % ', '.join(args)
        elif self.eat('!!'):
            n = re.match(r'\d+', s[self.i:]) or self.error('no number after !!')
            self.i += len(n.group(0))
            t = '\0M%s\0' % n.group(0)
        elif self.eat('!'):
            n = re.match(r'\d+', s[self.i:]) or self.error('no number after !')
            self.i += len(n.group(0))
            k = int(n.group(0))
            t = self.targs[k] if k < len(self.targs) else '!%d' % k
        else:
            for p in sorted(PRIMS, key=len, reverse=True):
                if s.startswith(p, self.i) and not re.match(r'[\w.]', s[self.i + len(p):self.i + len(p) + 1]):
                    self.i += len(p)
                    t = PRIMS[p]
                    break
            else:
                self.error('unknown type')
        while True:                               # suffixes, in signature order
            if self.eat('[]'):
                t += '[]'
            elif s.startswith('[', self.i):
                j = s.index(']', self.i)
                dims = s[self.i + 1:j].split(',')
                if not all(re.match(r'(-?\d+(\.\.\.(-?\d+)?)?)?$', d) for d in dims) and dims != ['...']:
                    self.error('bad array dimensions')
                self.i = j + 1
                t += '[*]' if len(dims) == 1 else '[%s]' % (',' * (len(dims) - 1))
            elif self.eat('*'):
                t += '*'
            elif self.eat('&'):
                t += '&'
            elif self.eat(' pinned'):
                pass
            elif self.eat(' modreq(') or self.eat(' modopt('):
                self.eat('class ') or self.eat('valuetype ')
                self.classname()
                if not self.eat(')'):
                    self.error('no ")" after a modifier')
            else:
                return t

    def whole(self):
        t = self.type()
        if self.i != len(self.s):
            self.error('text after the type')
        return t


def type_args(owner):
    """The type arguments of a runtime-style owner (TypeString form, ',' between them), in
    crossgen2's form (', ')."""
    if not owner.endswith(']'):
        return []
    depth = 0
    for i in range(len(owner) - 1, -1, -1):
        if owner[i] == ']':
            depth += 1
        elif owner[i] == '[':
            depth -= 1
            if depth == 0:
                inner = owner[i + 1:-1]
                if inner == '' or set(inner) <= {','}:
                    return []            # an array, not an instantiation
                return [to_r2rmap_owner(a) for a in split_top(inner, ',')]
    return []


def to_r2rmap_owner(t):
    """A runtime TypeString name in crossgen2's TypeString form: ', ' between type arguments, and
    no backslash before the characters the runtime escapes in simple names (, [ ] & * + \\)."""
    out, depth, i = [], 0, 0
    while i < len(t):
        c = t[i]
        if c == '\\':
            out.append(t[i + 1:i + 2])
            i += 2
            continue
        if c == '[':
            depth += 1
        elif c == ']':
            depth -= 1
        out.append(', ' if c == ',' and depth > 0 and not (t[i - 1] in '[,' or t[i + 1] in '],') else c)
        i += 1
    return ''.join(out)


def pattern(expected):
    """A regular expression from a converted type list: each !!n placeholder matches any type,
    the same one at each of its places."""
    seen, out = set(), []
    for part in re.split(r'(\0M\d+\0)', expected):
        m = re.match(r'\0M(\d+)\0$', part)
        if m:
            g = 'm' + m.group(1)
            out.append('(?P=%s)' % g if g in seen else '(?P<%s>.+?)' % g)
            seen.add(g)
        else:
            out.append(re.escape(part))
    return re.compile(''.join(out) + r'\Z')


def identity_diff(rt, r2, asm_rules):
    """Classes in which the runtime-style name rt and the r2rmap-style name r2 name different
    methods (empty: the same method)."""
    a = parse_runtime_name(rt)
    b = parse_r2rmap_name(r2)
    if a is None:
        return ['unparsable runtime-style name']
    if b is None:
        return ['unparsable r2rmap name']
    prefix, ret, asm, owner, meth, params, tier = a
    bret, bowner, bmeth, bparams = b
    bad = []
    if tier != 'PreJIT':
        bad.append('tier tag [%s]' % tier)
    if to_r2rmap_owner(owner) != bowner:
        bad.append('owner type')
    if meth != bmeth:
        bad.append('method name')
    for ns, want in asm_rules:
        if owner.startswith(ns) and asm != want:
            bad.append('assembly')
            break
    targs = type_args(owner)
    scopes = (asm, asm_rules)
    try:
        rparams = [RtType(p, targs, scopes).whole() for p in split_top(params, ',', '[(<', '])>')] if params else []
        rret = RtType(ret, targs, scopes).whole()
    except ValueError as e:
        return bad + ['unparsable type (%s)' % e]
    joined = '\x01'.join(rparams) + '\x02' + rret
    want = '\x01'.join(bparams) + '\x02' + (bret or 'System.Void')
    if not pattern(joined).match(want):
        if len(rparams) != len(bparams):
            bad.append('parameter count')
        elif not pattern('\x01'.join(rparams)).match('\x01'.join(bparams)):
            bad.append('parameter types')
        else:
            bad.append('return type')
    return bad


# ---------------------------------------------------------------------------------------------

def report(title, total, good, classes, extra_lines=()):
    pct = 100.0 * good / total if total else 0.0
    print('%s: %d of %d (%.1f%%)' % (title, good, total, pct))
    for cls, ex in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print('  class %s: %d' % (cls, len(ex)))
        for e in ex[:EXAMPLES]:
            print('    ' + e)
    for l in extra_lines:
        print('  ' + l)
    if total and good == total and not extra_lines:
        return 0
    # 2: the only differences are names perfconv left unformatted (a gap, not a wrong name)
    return 2 if total and set(classes) == {UNNAMED} and not extra_lines else 1


def cmd_r2rmap(mp, dump):
    want, whdr, wdups = read_map(mp)
    got, ghdr, gdups = read_map(dump)
    classes = defaultdict(list)
    good = 0
    for rva in sorted(want):
        wl, wn = want[rva]
        if rva not in got:
            inside = [r for r in got if r < rva < r + got[r][0]]
            cls = 'no line at the RVA' + (' (inside another line)' if inside else '')
            classes[cls].append('%08X %02X %s' % (rva, wl, wn))
            continue
        gl, gn = got[rva]
        if (gl, gn) == (wl, wn):
            good += 1
            continue
        if gn == '?':
            cls = UNNAMED
        elif gn != wn:
            a, b = parse_r2rmap_name(wn), parse_r2rmap_name(gn)
            if a is None or b is None:
                cls = 'name differs'
            else:
                what = [w for w, x, y in zip(('return type', 'owner type', 'method name', 'parameters'), a, b) if x != y]
                cls = 'name differs in ' + ', '.join(what)
            if gl != wl:
                cls += ', and length'
        else:
            cls = 'length differs'
        if gn == '?' and gl != wl:
            cls = 'length differs'
        classes[cls].append('%08X %02X %s\n    perfconv: %08X %02X %s' % (rva, wl, wn, rva, gl, gn))
    extra = ['perfconv line with no r2rmap entry: %08X %02X %s' % (r, got[r][0], got[r][1])
             for r in sorted(set(got) - set(want))]
    if whdr != ghdr:
        extra.append('header lines differ: r2rmap %s, perfconv %s' % (whdr, ghdr))
    for d in gdups:
        extra.append('perfconv line with a repeated RVA: ' + d)
    # line for line: the whole files, byte for byte
    with open(mp, 'rb') as f1, open(dump, 'rb') as f2:
        same = f1.read() == f2.read()
    if not same and not extra and good == len(want):
        extra.append('the files differ (line order?) although every entry matches')
    return report('r2rmap style: %s entries identical' % os.path.basename(mp), len(want), good, classes, extra)


def cmd_runtime(mp, dump, asm_rules):
    want, _, _ = read_map(mp)
    got, _, _ = read_map(dump)
    classes = defaultdict(list)
    good = 0
    for rva in sorted(want):
        wl, wn = want[rva]
        if rva not in got:
            classes['no line at the RVA'].append('%08X %02X %s' % (rva, wl, wn))
            continue
        gl, gn = got[rva]
        bad = [UNNAMED] if gn == '?' else identity_diff(gn, wn, asm_rules)
        if gl != wl and gn != '?':
            bad.append('length')
        if bad:
            classes[', '.join(bad)].append('%08X %02X %s\n    perfconv: %08X %02X %s' % (rva, wl, wn, rva, gl, gn))
        else:
            good += 1
    hot = {r for r in got if not got[r][1].endswith('[PreJit-cold]')}
    extra = ['perfconv line with no r2rmap entry: %08X %02X %s' % (r, got[r][0], got[r][1])
             for r in sorted(hot - set(want))]
    # a cold part carries the name of a method's hot part, and lies outside every r2rmap range
    hot_names = {got[r][1][:-len('[PreJIT]')] for r in hot if got[r][1].endswith('[PreJIT]')}
    ranges = sorted((r, r + want[r][0]) for r in want)
    for r in sorted(set(got) - hot):
        if got[r][1][:-len('[PreJit-cold]')] not in hot_names:
            extra.append('cold line whose name no hot line has: %08X %02X %s' % (r, got[r][0], got[r][1]))
        if any(a < r + got[r][0] and r < b for a, b in ranges):
            extra.append('cold line inside a method\'s hot range: %08X %02X %s' % (r, got[r][0], got[r][1]))
    return report('runtime style: %s entries naming the same method' % os.path.basename(mp),
                  len(want), good, classes, extra)


def dump_image(path, cache):
    if path not in cache:
        exe = os.environ.get('PERFCONV', 'perfconv')
        p = subprocess.run([exe, '--r2r-dump', path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            cache[path] = ('perfconv --r2r-dump exit status %d: %s' % (
                p.returncode, p.stderr.decode('utf-8', 'replace').strip().splitlines()[-1:]), {})
        else:
            ents = {}
            for line in p.stdout.decode('utf-8', 'surrogateescape').splitlines():
                m = re.match(r'^([0-9A-F]{8,}) ([0-9A-F]{2,}) (.*)$', line)
                if m and int(m.group(1), 16) < 0xFFFFFFF0:
                    ents[int(m.group(1), 16)] = (int(m.group(2), 16), m.group(3))
            cache[path] = (None, ents)
    return cache[path]


def cmd_prejit(jd, maps, symfs, only):
    recs = read_jitdump(jd)
    mappings = [m for m in read_maps(maps) if m[4].lower().endswith('.dll')]
    secs_cache, dumps = {}, {}
    classes = defaultdict(list)
    per_image = Counter()
    seen = set()
    good = total = doubled = 0
    for addr, size, name in recs:
        if not (name.endswith('[PreJIT]') or name.endswith('[PreJit-cold]')):
            continue
        hit = [m for m in mappings if m[0] <= addr < m[0] + m[1]]
        if not hit:
            if not only:
                total += 1
                classes['no image mapping holds the address'].append('%x %s' % (addr, name))
            continue
        start, ln, pgoff, perms, path = hit[0]
        if only and not any(o in path for o in only):
            continue
        total += 1
        fpath = symfs + path if symfs else path
        if fpath not in secs_cache:
            secs_cache[fpath] = pe_sections(fpath) if os.path.isfile(fpath) else None
        secs = secs_cache[fpath]
        if secs is None:
            classes['image not readable'].append('%s: %s' % (fpath, name))
            continue
        off = addr - start + pgoff
        rva = [va + off - raw for va, raw, rawsz, vs in secs if raw <= off < raw + rawsz]
        if not rva:
            classes['address outside the sections'].append('%x %s' % (addr, name))
            continue
        rva = rva[0]
        key = (path, rva, name)
        if key in seen:
            total -= 1
            continue
        seen.add(key)
        per_image[os.path.basename(path)] += 1
        err, ents = dump_image(fpath, dumps)
        if err:
            classes[err].append('%s %08X %s' % (os.path.basename(path), rva, name))
            continue
        ex = '%s %08X %02X %s' % (os.path.basename(path), rva, size, name)
        if rva not in ents:
            inside = [r for r in ents if r < rva < r + ents[r][0]]
            if inside:
                r = inside[0]
                classes['no line at the RVA, inside another line'].append(ex + '\n    perfconv: %08X %02X %s' % (r, ents[r][0], ents[r][1]))
            else:
                classes['no line at the RVA'].append(ex)
            continue
        gl, gn = ents[rva]
        # The runtime (10.0.12) names a cold part with the hot part's name in front of it
        # (LogPreCompiledMethod appends the cold name to the same string): X[PreJIT]X[PreJit-cold].
        # perfconv's cold line must be the second half, and the first half its hot name.
        m = re.match(r'^(.*)\[PreJIT\](.*)\[PreJit-cold\]$', name)
        if m and m.group(1) == m.group(2):
            name = m.group(2) + '[PreJit-cold]'
            doubled += 1
        if gn == name:
            if gl == size:
                good += 1
            else:
                classes['length differs'].append(ex + '\n    perfconv length %02X' % gl)
            continue
        a, b = parse_runtime_name(name), parse_runtime_name(gn)
        if gn == '?':
            cls = UNNAMED
        elif a is None or b is None:
            cls = 'name differs (unparsable)'
        else:
            fields = ('prefix', 'return type', 'assembly', 'owner type', 'method name', 'parameters', 'tier tag')
            cls = 'name differs in ' + ', '.join(f for f, x, y in zip(fields, a, b) if x != y)
        if gl != size and gn != '?':
            cls += ', and length'
        classes[cls].append(ex + '\n    perfconv: %08X %02X %s' % (rva, gl, gn))
    imgs = ', '.join('%s %d' % kv for kv in sorted(per_image.items(), key=lambda kv: (-kv[1], kv[0])))
    print('images: %s' % (imgs or 'none'))
    if doubled:
        print('cold parts: %d, compared with the runtime\'s doubled name cut to its [PreJit-cold] half' % doubled)
    return report('[PreJIT] records named byte for byte', total, good, classes)


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    cmd, args = argv[1], argv[2:]
    opts = defaultdict(list)
    pos = []
    i = 0
    while i < len(args):
        if args[i].startswith('--'):
            opts[args[i]].append(args[i + 1])
            i += 2
        else:
            pos.append(args[i])
            i += 1
    if cmd == 'r2rmap' and len(pos) == 2:
        return cmd_r2rmap(*pos)
    if cmd == 'runtime' and len(pos) == 2:
        REF_DIRS.extend(opts['--ref-dir'])
        rules = [tuple(r.split('=', 1)) for r in opts['--asm']]
        return cmd_runtime(pos[0], pos[1], rules)
    if cmd == 'prejit' and len(pos) == 2:
        return cmd_prejit(pos[0], pos[1], (opts['--symfs'] or [''])[0], opts['--only'])
    if cmd == 'maps' and len(pos) == 1:
        for s, ln, pg, perms, fn in perf_mmap2(pos[0]):
            print('%x-%x %s %08x 00:00 0 %s' % (s, s + ln, perms, pg, fn))
        return 0
    raise SystemExit('usage: see the head of %s' % argv[0])


if __name__ == '__main__':
    sys.exit(main(sys.argv))
