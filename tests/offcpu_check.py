#!/usr/bin/env python3
"""tests/offcpu_check.py - checks of tests/offcpu.sh on perfconv's folded off-CPU profiles.

  known FOLDED KNOWN TOL            the workload's functions (tests/offcpu/ocwork.c) must weigh
                                    what the program measured itself (KNOWN), within TOL percent,
                                    sleep_a/sleep_b must keep its ratio, and the spinning thread
                                    must have (almost) no off-CPU time
  thread-time FOLDED KNOWN TOL      a --thread-time profile: the waits end in [off-cpu: S] frames
                                    of the known weights, the spinner has on-CPU time only
  timehist FOLDED TIMEHIST SCRIPT TOL [all]
                                    per-thread off-CPU totals of a --tid profile against
                                    perf sched timehist --state: for each of the workload's threads,
                                    the sum of the wait time of every run that followed a switch-out
                                    in a sleeping state (any state but X/Z with 'all'; timehist's
                                    wait time runs from the switch-out to the switch-in, its sch
                                    delay is the part after the wakeup).  timehist cannot show a
                                    thread's last wait: the switch-out of the dead thread that ends
                                    the run after it is recorded with tid -1.  That one is taken from
                                    perf script's sched_switch lines (SCRIPT: -F tid,time,event,trace)
                                    Exits 3 instead of 1 when the recording itself is inconsistent
                                    for a thread of the workload (a switch-in while it runs, a
                                    switch-out while it is off the CPU: a sched_switch missing or
                                    out of time order across CPUs): timehist then drops the wait
                                    ("time travel") that perfconv ends at the thread's next sample
  dotnet FOLDED ALLFOLDED KNOWN TOL [lock|frames]
                                    the .NET app (tests/offcpu/dotnet), converted with --off-cpu
                                    (FOLDED) and --off-cpu=all (ALLFOLDED): "lock" compares the
                                    blocked thread's whole off-CPU time with its measured lock
                                    waits (no more than TOL above, and within TOL with the
                                    runnable time under Monitor.Enter, whose spin a busy machine
                                    preempts); "frames" the time under each managed method that
                                    waited (see dotnet_frames)
  clip FOLDED SLEEPS TOL RANGE...   a --time profile of oc-sleeper (RANGE: START,END in ns, the
                                    --time ranges): sleep_b's weight must be the part of the
                                    program's own sleep_b intervals (SLEEPS: start and end, one a
                                    line) inside the ranges, within TOL percent, and sleep_a none
  sum FOLDED PATTERN                print the total weight of lines matching a regular expression

Prints one line of measured values; exits 1 (with the reason) when a check fails.
"""
import re
import sys

FUNCS = ("sleep_a", "sleep_b", "reader_wait", "writer_pause")


def folded(path):
    for line in open(path, encoding="utf-8", errors="replace"):
        stack, _, w = line.rstrip("\n").rpartition(" ")
        yield stack, int(w)


def known(path):
    return {k: int(v) for k, v in (l.split() for l in open(path) if l.strip())}


def by_func(path, leaf=None):
    tot = {f: 0 for f in FUNCS}
    spin = 0
    for stack, w in folded(path):
        frames = stack.split(";")
        if not frames[0].startswith("oc-"):
            continue
        if frames[0].startswith("oc-spinner"):
            spin += w if leaf is None or frames[-1] == leaf else 0
            continue
        if leaf is not None and frames[-1] != leaf:
            continue
        for f in FUNCS:
            if f in frames:
                tot[f] += w
    return tot, spin


def pct(got, want):
    return 100.0 * (got - want) / want if want else float("inf")


def check_known(fpath, kpath, tol, leaf=None):
    k = known(kpath)
    tot, spin = by_func(fpath, leaf)
    errs, parts = [], []
    for f in FUNCS:
        d = pct(tot[f], k[f])
        parts.append("%s %.1f/%.1f ms (%+.2f%%)" % (f, tot[f] / 1e6, k[f] / 1e6, d))
        if abs(d) > tol:
            errs.append("%s off by %.2f%%" % (f, d))
    r_got = tot["sleep_a"] / tot["sleep_b"] if tot["sleep_b"] else 0
    r_want = k["sleep_a"] / k["sleep_b"]
    d = pct(r_got, r_want)
    parts.append("sleep_a/sleep_b %.4f/%.4f (%+.2f%%)" % (r_got, r_want, d))
    if abs(d) > tol:
        errs.append("ratio off by %.2f%%" % d)
    return tot, spin, errs, parts


def under(path, thread, *frames):
    """Weight of the stacks of threads named THREAD (their comm, any tid) whose frames
    contain each of FRAMES in that order (a frame matches when it ends in the name)."""
    tot = 0
    for stack, w in folded(path):
        fr = stack.split(";")
        if fr[0].rpartition("/")[0].rsplit("-", 1)[0] != thread:
            continue
        i = 1
        for want in frames:
            while i < len(fr) and not fr[i].endswith(want):
                i += 1
            if i == len(fr):
                break
            i += 1
        else:
            tot += w
    return tot


def thread_total(path, thread):
    return under(path, thread)


def dotnet_frames(fpath, apath, k, tol):
    """Each managed method's blocked time against what the app measured around its waits:
      Holder > Thread::Sleep                 its sleeps
      WaitForLock > Monitor::Enter           the contended lock
      RunDelays > WaitHandle::WaitOneNoCheck the synchronous wait for a task that awaits
                                             Task.Delay (on the task's wait handle)
    within TOL percent, and (APATH, --off-cpu=all) no more than TOL above it with the
    runnable time added: the waits are blocked ones, not spins that yield.  For the lock,
    blocked plus runnable time must be within TOL and the blocked time no more than TOL
    above: Monitor.Enter spins first, and a busy machine preempts the spin.  The holder's and
    the waiter's blocked time must be (almost) all under their method: the rest is the
    thread's start; the main thread also waits to start the runtime and for the joins."""
    errs, parts = [], []
    checks = (
        ("sleep", "oc-holder", ("Program::Holder", "Thread::Sleep"), True),
        ("lock", "oc-waiter", ("Program::WaitForLock", "Monitor::Enter"), True),
        ("delay", "OffCpu", ("Program::RunDelays", "WaitHandle::WaitOneNoCheck"), False),
    )
    for key, thread, frames, whole in checks:
        spins = key == "lock"
        b = under(fpath, thread, *frames)
        a = under(apath, thread, *frames)
        want = k[key]
        d_b, d_a = pct(b, want), pct(a, want)
        parts.append("%s %.1f/%.1f ms (%+.1f%%; with runnable %+.1f%%)"
                     % (" > ".join(frames), b / 1e6, want / 1e6, d_b, d_a))
        # Monitor.Enter spins before it blocks: on a busy machine the spinning thread is
        # preempted (runnable, not blocked) for part of the wait, so there the blocked time
        # may fall short as long as blocked plus runnable time covers the wait
        low = d_a if spins else d_b
        if d_b > tol or d_a > tol or low < -tol:
            errs.append("%s: blocked %+.1f%%, with runnable %+.1f%%" % (frames[0], d_b, d_a))
        if whole:
            t = thread_total(fpath, thread)
            share = 100.0 * b / t if t else 0
            parts[-1] += ", %.1f%% of %s's" % (share, thread)
            if share < 90:
                errs.append("only %.1f%% of %s's blocked time is under %s" % (share, thread, frames[0]))
    return errs, parts


def main():
    mode = sys.argv[1]
    if mode == "known":
        fpath, kpath, tol = sys.argv[2], sys.argv[3], float(sys.argv[4])
        tot, spin, errs, parts = check_known(fpath, kpath, tol)
        # the control: the spinner only ever switches out runnable
        limit = 0.01 * known(kpath)["reader_wait"]
        parts.append("oc-spinner %.2f ms" % (spin / 1e6))
        if spin > limit:
            errs.append("the spinning thread has %.2f ms of off-CPU time" % (spin / 1e6))
    elif mode == "thread-time":
        fpath, kpath, tol = sys.argv[2], sys.argv[3], float(sys.argv[4])
        tot, spin, errs, parts = check_known(fpath, kpath, tol, leaf="[off-cpu: S]")
        _, spin_all = by_func(fpath)
        parts.append("oc-spinner on-CPU %.1f ms, off-CPU S %.2f ms" % ((spin_all - spin) / 1e6, spin / 1e6))
        if spin_all - spin <= 0 or spin > 0.01 * known(kpath)["reader_wait"]:
            errs.append("the spinner must have on-CPU time and no sleeping time")
        # the on-CPU part of the sleeper is small; its waits must not lose the state frame.  On a
        # loaded machine the sleeper may wait a little in D (a page fault reading its code back):
        # that is the kernel's truth, so only more than 1% of its sleeps in another state fails
        other = {}
        for stack, w in folded(fpath):
            fr = stack.split(";")
            if fr[0].startswith("oc-sleeper") and ("sleep_a" in fr or "sleep_b" in fr) and \
                    fr[-1].startswith("[off-cpu") and fr[-1] != "[off-cpu: S]":
                other[fr[-1]] = other.get(fr[-1], 0) + w
        k = known(kpath)
        if sum(other.values()) > 0.01 * (k["sleep_a"] + k["sleep_b"]):
            errs.append("sleep ends in %s" % ", ".join("%s %.2f ms" % (f, w / 1e6) for f, w in sorted(other.items())))
    elif mode == "timehist":
        fpath, tpath, spath, tol = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
        every = len(sys.argv) > 6 and sys.argv[6] == "all"
        # threads are counted by tid whatever their name: a thread is "ocwork" until it names itself
        ours, names = {}, {}
        for stack, w in folded(fpath):
            head = stack.split(";", 1)[0]
            comm, _, tid = head.rpartition("/")
            ours[int(tid)] = ours.get(int(tid), 0) + w
            if comm.startswith("oc-"):
                names[int(tid)] = comm.rsplit("-", 1)[0]
        line = re.compile(r"^\s*[\d.]+\s+\[\d+\]\s+(\S+)\[(\d+)(?:/\d+)?\]\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+(\S+)")
        theirs, prev = {}, {}
        for l in open(tpath, errors="replace"):
            m = line.match(l)
            if not m:
                continue
            tid = int(m.group(2))
            if m.group(1).startswith("oc-"):
                names[tid] = m.group(1)
            p = prev.get(tid)
            if p is not None and (p in ("S", "D", "I") or (every and p not in ("X", "Z"))):
                theirs[tid] = theirs.get(tid, 0) + round(float(m.group(3)) * 1e6)
            prev[tid] = m.group(5)
        # the last wait of each thread: its last switch-out before it switched out dead (X)
        sw = re.compile(r"^\s*-?\d+\s+([\d.]+):\s+sched:sched_switch:.* prev_pid=(\d+) .*prev_state=(\S+) ==> .* next_pid=(\d+) ")
        out, last = {}, {}
        for l in open(spath, errors="replace"):
            m = sw.match(l)
            if not m:
                continue
            t, pp, st, np_ = round(float(m.group(1)) * 1e6), int(m.group(2)), m.group(3), int(m.group(4))
            if np_ in out:
                last[np_] = t - out.pop(np_)
            if st.rstrip("+") in ("X", "Z"):
                if pp in last and pp in names:
                    theirs[pp] = theirs.get(pp, 0) + last[pp] * 1000
            elif st.rstrip("+") in ("S", "D", "I") or every:
                out[pp] = t
            last.pop(pp, None) if st.rstrip("+") not in ("X", "Z") else None
        ours = {t: v for t, v in ours.items() if t in names}
        theirs = {t: v for t, v in theirs.items() if t in names}
        # is each thread's switch stream in / out / in / ...?
        on, odd = {}, []
        for l in open(spath, errors="replace"):
            m = sw.match(l)
            if not m:
                continue
            t, pp, np_ = m.group(1), int(m.group(2)), int(m.group(4))
            if pp in names:
                if on.get(pp) is False:
                    odd.append("%s out at %s while off the CPU" % (names[pp], t))
                on[pp] = False
            if np_ in names:
                if on.get(np_):
                    odd.append("%s in at %s while on a CPU" % (names[np_], t))
                on[np_] = True
        errs, parts = [], []
        for tid in sorted(set(ours) | set(theirs)):
            a, b = ours.get(tid, 0), theirs.get(tid, 0)
            name = names.get(tid, "?")
            parts.append("%s/%d %.3f/%.3f ms" % (name, tid, a / 1e6, b / 1e6))
            # timehist prints microseconds: allow its rounding (1 us a run) besides TOL
            if abs(a - b) > tol / 100.0 * max(a, b) + 1e6:
                errs.append("thread %d: perfconv %.3f ms, timehist %.3f ms" % (tid, a / 1e6, b / 1e6))
        if len([t for t in theirs if theirs[t] > 0]) < 3:
            errs.append("timehist shows fewer than 3 waiting threads of the workload")
        if errs and odd:
            print("; ".join(parts))
            print("INCONSISTENT: %d sched_switch events of the workload's threads out of order or missing (%s); %s"
                  % (len(odd), ", ".join(odd[:3]), "; ".join(errs)))
            return 3
    elif mode == "dotnet":
        fpath, apath, k, tol, what = sys.argv[2], sys.argv[3], known(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
        if what == "lock":
            # the waiter's whole blocked time, and (for a busy machine, where Monitor.Enter's
            # spin is preempted) with the runnable time under Monitor.Enter added
            w = thread_total(fpath, "oc-waiter")
            wa = max(w, under(apath, "oc-waiter", "Program::WaitForLock", "Monitor::Enter"))
            d, da = pct(w, k["lock"]), pct(wa, k["lock"])
            errs = [] if d <= tol and abs(da) <= tol else ["oc-waiter off by %+.2f%% (%+.2f%% with runnable)" % (d, da)]
            parts = ["oc-waiter off-CPU %.1f ms, its lock waits %.1f ms (%+.2f%%; with runnable under "
                     "Monitor::Enter %+.2f%%)" % (w / 1e6, k["lock"] / 1e6, d, da)]
        else:
            errs, parts = dotnet_frames(fpath, apath, k, tol)
    elif mode == "clip":
        fpath, spath, tol = sys.argv[2], sys.argv[3], float(sys.argv[4])
        ranges = [tuple(int(x) for x in r.split(",")) for r in sys.argv[5:]]
        sleeps = [tuple(int(x) for x in l.split()) for l in open(spath) if l.strip()]
        want = sum(max(0, min(e, t1) - max(s0, t0)) for s0, e in ranges for t0, t1 in sleeps)
        tot, _ = by_func(fpath)
        d = pct(tot["sleep_b"], want)
        parts = ["sleep_b %.3f ms in the window, %.3f ms of its sleeps inside it (%+.2f%%); sleep_a %.3f ms"
                 % (tot["sleep_b"] / 1e6, want / 1e6, d, tot["sleep_a"] / 1e6)]
        errs = []
        if abs(d) > tol:
            errs.append("sleep_b off by %+.2f%%" % d)
        if tot["sleep_a"]:
            errs.append("sleep_a outside the window counted")
    elif mode == "sum":
        pat = re.compile(sys.argv[3])
        print(sum(w for s, w in folded(sys.argv[2]) if pat.search(s)))
        return 0
    else:
        print("unknown mode %s" % mode)
        return 2
    print("; ".join(parts))
    if errs:
        print("FAILED: " + "; ".join(errs))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
