#!/usr/bin/env python3
"""swap-endian.py - rewrite a perf.data (file or pipe mode) in the other byte order.

    scripts/swap-endian.py IN OUT

The result is what a machine of the other byte order would have written for the same
recording: the file header and feature bitmap, the attrs (each field at its own width, the
flag bitfield word with the bit order of every byte reversed, as perf's swap_bitfield() reads
it), the id arrays, every feature section in its own layout (strings keep their bytes, their
lengths are swapped), and every record of the data section field by field: sample fields per
the attr's sample_type (pid/tid and cpu as two 32-bit words, callchains, registers), the
sample_id_all trailer of the other records, MMAP2 prot and flags, EVENT_UPDATE payloads,
THREAD_MAP and CPU_MAP.  What stays byte for byte: strings, build-ids, the tracing data
(its own header says its byte order), the payload of a RAW sample (tracepoint fields are in
the recording machine's order; only the 32-bit size in front is swapped, as perf reads it),
and the user stack copy, which perf reads back as 64-bit words (it swaps them as such).

The file sizes and offsets do not change, so the output is a copy of the input with fields
turned around in place.  The swap is its own inverse: swapping twice gives the input back.
In pipe mode the attrs, features and tracing data come as records (HEADER_ATTR,
HEADER_FEATURE, HEADER_TRACING_DATA) and are swapped as such.  Anything this script does not
know how to swap (a record or feature type the fixtures do not have, compressed records) is
an error rather than a silently wrong file.
Python 3 standard library only.
"""
import struct
import sys

SAMPLE_BITS = dict(
    IP=1 << 0, TID=1 << 1, TIME=1 << 2, ADDR=1 << 3, READ=1 << 4, CALLCHAIN=1 << 5, ID=1 << 6,
    CPU=1 << 7, PERIOD=1 << 8, STREAM_ID=1 << 9, RAW=1 << 10, BRANCH_STACK=1 << 11,
    REGS_USER=1 << 12, STACK_USER=1 << 13, WEIGHT=1 << 14, DATA_SRC=1 << 15, IDENTIFIER=1 << 16,
    TRANSACTION=1 << 17, REGS_INTR=1 << 18, PHYS_ADDR=1 << 19, AUX=1 << 20, CGROUP=1 << 21,
    DATA_PAGE_SIZE=1 << 22, CODE_PAGE_SIZE=1 << 23, WEIGHT_STRUCT=1 << 24)
S = SAMPLE_BITS

# perf_event_attr fields by offset and width (uapi layout up to config3); offset 40 is the
# flag bitfield word, handled apart.
ATTR_FIELDS = [(0, 4), (4, 4), (8, 8), (16, 8), (24, 8), (32, 8), (48, 4), (52, 4), (56, 8),
               (64, 8), (72, 8), (80, 8), (88, 4), (92, 4), (96, 8), (104, 4), (108, 2),
               (110, 2), (112, 4), (116, 4), (120, 8), (128, 8)]

FORMAT_TOTAL_TIME_ENABLED, FORMAT_TOTAL_TIME_RUNNING, FORMAT_ID, FORMAT_GROUP, FORMAT_LOST = 1, 2, 4, 8, 16
MISC_MMAP_BUILD_ID = 1 << 14


class SwapError(Exception):
    pass


def revbits(b):
    b = (b & 0xF0) >> 4 | (b & 0x0F) << 4
    b = (b & 0xCC) >> 2 | (b & 0x33) << 2
    return (b & 0xAA) >> 1 | (b & 0x55) << 1


class Swapper:
    def __init__(self, src):
        self.src = src
        self.out = bytearray(src)
        if src[:8] == b"PERFILE2":
            self.e = "<"
        elif src[:8] == b"2ELIFREP":
            self.e = ">"
        else:
            raise SwapError("not a perf.data file (no PERFILE2 magic)")
        self.attrs = []  # (sample_type, read_format, regs_user, regs_intr, branch_sample_type, sample_id_all)
        self.id2attr = {}

    # --- primitives: read in the input's order, turn a field around in place ---
    def u(self, off, w):
        if off < 0 or off + w > len(self.src):
            raise SwapError("field at offset %d runs past the end of the file" % off)
        return struct.unpack_from(self.e + {1: "B", 2: "H", 4: "I", 8: "Q"}[w], self.src, off)[0]

    def sw(self, off, w):
        if off < 0 or off + w > len(self.src):
            raise SwapError("field at offset %d runs past the end of the file" % off)
        self.out[off:off + w] = self.src[off:off + w][::-1]

    def sw_words(self, off, n, w=8):
        for i in range(n):
            self.sw(off + i * w, w)

    # --- header and attrs ---
    def header(self):
        hsize = self.u(8, 8)
        if hsize == 16:                # pipe mode: attrs and features come as records
            self.pipe = True
            self.out[0:8] = self.src[0:8][::-1]
            self.sw(8, 8)
            self.data_off, self.data_size = 16, len(self.src) - 16
            return
        self.pipe = False
        if hsize < 104:
            raise SwapError("header size %d is too small" % hsize)
        self.out[0:8] = self.src[0:8][::-1]
        self.sw_words(8, 8)            # size, attr_size, attrs, data, event_types sections
        self.sw_words(72, 4)           # the feature bitmap, four 64-bit words
        self.attr_size = self.u(16, 8)
        self.attrs_off, self.attrs_size = self.u(24, 8), self.u(32, 8)
        self.data_off, self.data_size = self.u(40, 8), self.u(48, 8)
        if self.u(64, 8):
            raise SwapError("an event_types section (perf before 2012) is not supported")
        self.feat_bits = [b for b in range(256) if (self.u(72 + (b // 64) * 8, 8) >> (b % 64)) & 1]

    def attr(self, off, avail):
        """swap one perf_event_attr at off; returns its fields needed for the records"""
        size = self.u(off + 4, 4) or 64
        if size > avail:
            raise SwapError("attr at offset %d is larger than its entry" % off)
        if size > 136:
            raise SwapError("attr at offset %d has %d bytes, more than this script knows" % (off, size))
        for o, w in ATTR_FIELDS:
            if o + w <= size:
                self.sw(off + o, w)
        for i in range(40, 48):
            self.out[off + i] = revbits(self.src[off + i])
        flags = self.u(off + 40, 8) if self.e == "<" else int.from_bytes(
            bytes(revbits(b) for b in self.src[off + 40:off + 48]), "little")
        sample_id_all = (flags >> 18) & 1
        return (self.u(off + 24, 8), self.u(off + 32, 8), self.u(off + 80, 8) if size > 80 else 0,
                self.u(off + 96, 8) if size > 96 else 0, self.u(off + 72, 8) if size > 72 else 0,
                sample_id_all, size)

    def attrs_section(self):
        if self.attr_size < 64 + 16:
            raise SwapError("attr size %d is invalid" % self.attr_size)
        for i in range(self.attrs_size // self.attr_size):
            off = self.attrs_off + i * self.attr_size
            a = self.attr(off, self.attr_size - 16)
            self.attrs.append(a)
            ids_off, ids_size = self.u(off + self.attr_size - 16, 8), self.u(off + self.attr_size - 8, 8)
            self.sw_words(off + self.attr_size - 16, 2)
            for j in range(ids_size // 8):
                self.id2attr[self.u(ids_off + j * 8, 8)] = a
                self.sw(ids_off + j * 8, 8)
        if not self.attrs:
            raise SwapError("no attrs")

    # --- feature sections ---
    def string(self, p, end):
        n = self.u(p, 4)
        self.sw(p, 4)
        if p + 4 + n > end:
            raise SwapError("string at offset %d runs past its section" % p)
        return p + 4 + n

    def strings(self, p, end):
        n = self.u(p, 4)
        self.sw(p, 4)
        p += 4
        for _ in range(n):
            p = self.string(p, end)
        return p

    def feature(self, bit, p, size):
        end = p + size
        if bit == 1:                                   # TRACING_DATA: says its own byte order
            return
        if bit == 2:                                   # BUILD_ID: build_id records
            while p + 8 <= end:
                rsize = self.u(p + 6, 2)
                if rsize < 8 + 4 + 24:
                    raise SwapError("build-id record of %d bytes at offset %d" % (rsize, p))
                self.sw(p, 4)
                self.sw(p + 4, 2)
                self.sw(p + 6, 2)
                self.sw(p + 8, 4)                      # pid; the build-id and name are bytes
                p += rsize
            return
        if bit in (3, 4, 5, 6, 8, 9):                  # HOSTNAME ... ARCH, CPUDESC, CPUID
            self.string(p, end)
            return
        if bit == 7:                                   # NRCPUS: avail, online
            self.sw_words(p, 2, 4)
            self.nr_cpus = self.u(p, 4)
            return
        if bit in (10, 21, 23):                        # TOTAL_MEM, SAMPLE_TIME, CLOCKID: u64s
            self.sw_words(p, size // 8)
            return
        if bit == 11:                                  # CMDLINE
            self.strings(p, end)
            return
        if bit == 12:                                  # EVENT_DESC
            nr, asz = self.u(p, 4), self.u(p + 4, 4)
            self.sw_words(p, 2, 4)
            p += 8
            for _ in range(nr):
                self.attr(p, asz)
                p += asz
                nids = self.u(p, 4)
                self.sw(p, 4)
                p = self.string(p + 4, end)
                self.sw_words(p, nids)
                p += nids * 8
            return
        if bit == 13:                                  # CPU_TOPOLOGY
            p = self.strings(p, end)                   # sibling cores
            p = self.strings(p, end)                   # sibling threads
            ncpu = getattr(self, "nr_cpus", 0)
            if p + ncpu * 8 <= end:
                self.sw_words(p, ncpu * 2, 4)          # core_id, socket_id per cpu
                p += ncpu * 8
                if p + 4 <= end:
                    p = self.strings(p, end)           # sibling dies
                    self.sw_words(p, ncpu, 4)          # die_id per cpu
            return
        if bit == 14:                                  # NUMA_TOPOLOGY
            nr = self.u(p, 4)
            self.sw(p, 4)
            p += 4
            for _ in range(nr):
                self.sw(p, 4)
                self.sw_words(p + 4, 2)
                p = self.string(p + 20, end)
            return
        if bit == 15 or bit == 19:                     # BRANCH_STACK, STAT: no data
            return
        if bit == 16:                                  # PMU_MAPPINGS
            nr = self.u(p, 4)
            self.sw(p, 4)
            p += 4
            for _ in range(nr):
                self.sw(p, 4)
                p = self.string(p + 4, end)
            return
        if bit == 17:                                  # GROUP_DESC
            nr = self.u(p, 4)
            self.sw(p, 4)
            p += 4
            for _ in range(nr):
                p = self.string(p, end)
                self.sw_words(p, 2, 4)
                p += 8
            return
        if bit == 20:                                  # CACHE
            cnt = self.u(p + 4, 4)
            self.sw_words(p, 2, 4)
            p += 8
            for _ in range(cnt):
                self.sw_words(p, 4, 4)
                p += 16
                for _ in range(3):
                    p = self.string(p, end)
            return
        if bit == 22:                                  # MEM_TOPOLOGY
            nr = self.u(p + 16, 8)
            self.sw_words(p, 3)
            p += 24
            for _ in range(nr):
                nbits = self.u(p + 16, 8)
                words = 3 + (nbits + 63) // 64
                self.sw_words(p, words)
                p += words * 8
            return
        if bit == 24:                                  # DIR_FORMAT
            self.sw(p, 8)
            return
        if bit in (25, 26, 31) and size >= 4 and self.u(p, 4) == 0:
            self.sw(p, 4)                              # BPF_PROG_INFO, BPF_BTF, PMU_CAPS: none
            return
        if bit == 27:                                  # COMPRESSED
            self.sw_words(p, 5, 4)
            return
        if bit == 28 or bit == 30:                     # CPU_PMU_CAPS, HYBRID_TOPOLOGY: string pairs
            nr = self.u(p, 4)
            self.sw(p, 4)
            p += 4
            for _ in range(2 * nr):
                p = self.string(p, end)
            return
        if bit == 29:                                  # CLOCK_DATA
            self.sw_words(p, 2, 4)
            self.sw_words(p + 8, 2)
            return
        if bit == 31:                                  # PMU_CAPS
            nr = self.u(p, 4)
            self.sw(p, 4)
            p += 4
            for _ in range(nr):
                ncaps = self.u(p, 4)
                self.sw(p, 4)
                p += 4
                for _ in range(2 * ncaps):
                    p = self.string(p, end)
                p = self.string(p, end)
            return
        raise SwapError("feature %d is not supported by this script" % bit)

    def features(self):
        table = self.data_off + self.data_size
        for k, bit in enumerate(self.feat_bits):
            off = table + 16 * k
            p, size = self.u(off, 8), self.u(off + 8, 8)
            self.sw_words(off, 2)
            if p + size > len(self.src):
                raise SwapError("feature %d section runs past the end of the file" % bit)
            self.feature(bit, p, size)

    # --- records ---
    def attr_of_sample(self, body, end):
        first = self.attrs[0]
        st = first[0]
        if len(self.attrs) == 1:
            return first
        if st & S["IDENTIFIER"]:
            pos = 0
        elif st & S["ID"]:
            pos = sum(1 for b in ("IP", "TID", "TIME", "ADDR") if st & S[b])
        else:
            return first
        return self.id2attr.get(self.u(body + pos * 8, 8), first)

    def trailer_len(self):
        st, sid_all = self.attrs[0][0], self.attrs[0][5]
        if not sid_all:
            return 0
        return 8 * sum(1 for b in ("TID", "TIME", "ID", "STREAM_ID", "CPU", "IDENTIFIER") if st & S[b])

    def trailer(self, end):
        """swap the sample_id_all trailer that ends at end; returns where it starts"""
        st = self.attrs[0][0]
        n = self.trailer_len()
        p = end - n
        if n == 0:
            return end
        for b in ("TID", "TIME", "ID", "STREAM_ID", "CPU", "IDENTIFIER"):
            if st & S[b]:
                if b in ("TID", "CPU"):
                    self.sw_words(p, 2, 4)
                else:
                    self.sw(p, 8)
                p += 8
        return end - n

    def regs(self, p, mask):
        abi = self.u(p, 8)
        self.sw(p, 8)
        p += 8
        if abi:
            n = bin(mask).count("1")
            self.sw_words(p, n)
            p += 8 * n
        return p

    def sample(self, body, end):
        a = self.attr_of_sample(body, end)
        st, rf, regs_user, regs_intr, bst = a[0], a[1], a[2], a[3], a[4]
        p = body
        for b in ("IDENTIFIER", "IP", "TID", "TIME", "ADDR", "ID", "STREAM_ID", "CPU", "PERIOD"):
            if st & S[b]:
                if b in ("TID", "CPU"):
                    self.sw_words(p, 2, 4)
                else:
                    self.sw(p, 8)
                p += 8
        if st & S["READ"]:
            per = 1 + bool(rf & FORMAT_ID) + bool(rf & FORMAT_LOST)
            times = bool(rf & FORMAT_TOTAL_TIME_ENABLED) + bool(rf & FORMAT_TOTAL_TIME_RUNNING)
            if rf & FORMAT_GROUP:
                n = 1 + times + self.u(p, 8) * per
            else:
                n = per + times
            self.sw_words(p, n)
            p += 8 * n
        if st & S["CALLCHAIN"]:
            n = self.u(p, 8)
            self.sw_words(p, 1 + n)
            p += 8 * (1 + n)
        if st & S["RAW"]:
            n = self.u(p, 4)
            self.sw(p, 4)                              # the payload keeps the recording's order
            p += 4 + n
        if st & S["BRANCH_STACK"]:
            raise SwapError("branch stacks are not supported by this script")
        if st & S["REGS_USER"]:
            p = self.regs(p, regs_user)
        if st & S["STACK_USER"]:
            n = self.u(p, 8)
            self.sw(p, 8)
            if n % 8:
                raise SwapError("user stack copy of %d bytes is not in 64-bit words" % n)
            self.sw_words(p + 8, n // 8)               # perf reads the copy back as u64 words
            p += 8 + n
            if n:
                self.sw(p, 8)
                p += 8
        if st & S["WEIGHT_STRUCT"]:
            self.sw(p, 4)
            self.sw_words(p + 4, 2, 2)
            p += 8
        elif st & S["WEIGHT"]:
            self.sw(p, 8)
            p += 8
        for b in ("DATA_SRC", "TRANSACTION"):
            if st & S[b]:
                self.sw(p, 8)
                p += 8
        if st & S["REGS_INTR"]:
            p = self.regs(p, regs_intr)
        for b in ("PHYS_ADDR", "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE"):
            if st & S[b]:
                self.sw(p, 8)
                p += 8
        if st & S["AUX"]:
            n = self.u(p, 8)
            self.sw(p, 8)
            p += 8 + n
        if p > end:
            raise SwapError("sample at offset %d is shorter than its sample_type" % (body - 8))

    def cpu_map(self, p, end):
        typ = self.u(p, 2)
        self.sw(p, 2)
        if typ == 0:                                   # list of cpus
            nr = self.u(p + 2, 2)
            self.sw_words(p + 2, 1 + nr, 2)
        elif typ == 1:                                 # mask: nr, long_size, masks
            nr, long_size = self.u(p + 2, 2), self.u(p + 4, 2)
            self.sw_words(p + 2, 2, 2)
            if long_size == 4:
                self.sw_words(p + 6, nr, 4)
            elif long_size == 8:
                self.sw(p + 6, 4)
                self.sw_words(p + 10, nr, 8)
            else:
                raise SwapError("cpu map mask of long size %d" % long_size)
        elif typ == 2:                                 # range: any_cpu, pad, start, end
            self.sw_words(p + 4, 2, 2)
        else:
            raise SwapError("cpu map of type %d" % typ)

    def record(self, off, typ, misc, size):
        body, end = off + 8, off + size
        if typ == 9:
            self.sample(body, end)
        elif typ in (1, 10):                           # MMAP, MMAP2
            self.sw_words(body, 2, 4)
            self.sw_words(body + 8, 3)
            if typ == 10:
                if misc & MISC_MMAP_BUILD_ID:
                    self.sw(body + 34, 2)              # the size byte and build-id stay
                else:
                    self.sw_words(body + 32, 2, 4)
                    self.sw_words(body + 40, 2)
                self.sw_words(body + 56, 2, 4)         # prot, flags
            self.trailer(end)
        elif typ == 3:                                 # COMM
            self.sw_words(body, 2, 4)
            self.trailer(end)
        elif typ in (4, 7):                            # EXIT, FORK
            self.sw_words(body, 4, 4)
            self.sw(body + 16, 8)
            self.trailer(end)
        elif typ == 2:                                 # LOST
            self.sw_words(body, 2)
            self.trailer(end)
        elif typ in (5, 6):                            # THROTTLE, UNTHROTTLE
            self.sw_words(body, 3)
            self.trailer(end)
        elif typ == 13:                                # LOST_SAMPLES
            self.sw(body, 8)
            self.trailer(end)
        elif typ == 14:                                # SWITCH
            self.trailer(end)
        elif typ == 15:                                # SWITCH_CPU_WIDE
            self.sw_words(body, 2, 4)
            self.trailer(end)
        elif typ == 17:                                # KSYMBOL
            self.sw(body, 8)
            self.sw(body + 8, 4)
            self.sw_words(body + 12, 2, 2)
            self.trailer(end)
        elif typ == 18:                                # BPF_EVENT
            self.sw_words(body, 2, 2)
            self.sw(body + 4, 4)
            self.trailer(end)
        elif typ == 16:                                # NAMESPACES
            self.sw_words(body, 2, 4)
            nr = self.u(body + 8, 8)
            self.sw_words(body + 8, 1 + 2 * nr)
            self.trailer(end)
        elif typ == 19:                                # CGROUP
            self.sw(body, 8)
            self.trailer(end)
        elif typ in (68, 82):                          # FINISHED_ROUND, FINISHED_INIT
            pass
        elif typ == 64:                                # HEADER_ATTR: attr, then its ids
            a = self.attr(body, size - 8)
            self.attrs.append(a)
            for q in range(body + a[6], end - 7, 8):
                self.id2attr[self.u(q, 8)] = a
                self.sw(q, 8)
        elif typ == 80:                                # HEADER_FEATURE: id, then its section
            feat = self.u(body, 8)
            self.sw(body, 8)
            if size > 16:
                self.feature(feat, body + 8, size - 16)
        elif typ == 66:                                # HEADER_TRACING_DATA: size, data after
            self.sw(body, 4)
        elif typ == 67:                                # HEADER_BUILD_ID: a BUILD_ID feature record
            self.sw(body, 4)
        elif typ in (69, 79):                          # ID_INDEX, TIME_CONV: u64s
            self.sw_words(body, (size - 8) // 8)
        elif typ == 73:                                # THREAD_MAP: nr, {pid, comm[16]}
            nr = self.u(body, 8)
            self.sw(body, 8)
            for i in range(nr):
                self.sw(body + 8 + 24 * i, 8)
        elif typ == 74:                                # CPU_MAP
            self.cpu_map(body, end)
        elif typ == 78:                                # EVENT_UPDATE: type, id, payload
            kind = self.u(body, 8)
            self.sw_words(body, 2)
            if kind == 1:                              # SCALE: a double
                self.sw(body + 16, 8)
            elif kind == 3:                            # CPUS
                self.cpu_map(body + 16, end)
            elif kind not in (0, 2):                   # UNIT, NAME: strings
                raise SwapError("EVENT_UPDATE of type %d" % kind)
        else:
            raise SwapError("record type %d at offset %d is not supported by this script" % (typ, off))

    def records(self):
        p, end = self.data_off, self.data_off + self.data_size
        while p < end:
            if end - p < 8:
                raise SwapError("record header cut at offset %d" % p)
            typ, misc, size = self.u(p, 4), self.u(p + 4, 2), self.u(p + 6, 2)
            if size < 8 or p + size > end:
                raise SwapError("record of type %d at offset %d has bad size %d" % (typ, p, size))
            self.sw(p, 4)
            self.sw(p + 4, 2)
            self.sw(p + 6, 2)
            if typ in (81, 83):
                raise SwapError("compressed records are not supported by this script")
            if typ < 64 and not self.attrs:
                raise SwapError("record of type %d at offset %d before any attr" % (typ, p))
            self.record(p, typ, misc, size)
            p += size
            if typ == 66 and self.pipe:                # the tracing data follows the record
                p += self.u(p - size + 8, 4)

    def run(self):
        self.header()
        if not self.pipe:
            self.attrs_section()
            self.features()
        self.records()
        return bytes(self.out)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: swap-endian.py IN OUT\n")
        return 2
    try:
        with open(argv[1], "rb") as f:
            data = Swapper(f.read()).run()
    except (OSError, SwapError) as e:
        sys.stderr.write("swap-endian.py: '%s': %s\n" % (argv[1], e))
        return 1
    with open(argv[2], "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
