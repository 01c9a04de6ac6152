// Program.cs - opens a perfconv .trace.zip with TraceEvent, the library PerfView reads Linux
// traces with, and reports what PerfView sees, for tests/perfview.sh to compare with perfconv's
// folded output.
//
//   PerfViewCheck ZIP names|depth OUT
//
// 1. LinuxPerfScriptEventParser reads the zip's *.data.txt.  Every sample's frames must end with
//    PerfView's thread frame (its tid) and process frame (its pid and comm).  The samples are
//    summed into OUT as stackcollapse-perf.pl --tid would fold them: "comm-?/tid;frames root
//    first weight", the weight being the period when the header carries one and no tracepoint
//    payload, and only the first event's samples counted.  With "names" each frame is PerfView's
//    module!symbol mapped back to stackcollapse's name; with "depth" every frame is "f" (for JIT
//    frames of perf maps, whose names PerfView rewrites beyond recovery).
// 2. LinuxPerfScriptStackSource, the CPU stack view PerfView opens for a .trace.zip, must read the
//    zip too: each of its samples rooted in "Process ... (pid)" then "Thread (tid)" of a thread the
//    parser saw.  It drops the last sample of every CPU (its weight is the gap to the next sample
//    on the same CPU).
// Prints "events=N cpus=C stacksource=S threads=T" on success; exits 1 with a message otherwise.
//
//   PerfViewCheck --runtime-events FILE.nettrace|FILE.trace.zip OUT
//
// 3. The runtime's events and PerfView's GC and JIT stats of either file (RuntimeEvents.cs).
using System;
using System.Collections.Generic;
using System.IO;
using System.IO.Compression;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;
using Microsoft.Diagnostics.Tracing.StackSources;
using Microsoft.Diagnostics.Tracing.Stacks;

static class Program
{
    static string Tidy(string sym)
    {
        sym = sym.Replace(';', ':');
        if (!Regex.IsMatch(sym, @"\.\(.*\)\."))
            sym = new Regex(@"\((?!anonymous namespace\)).*").Replace(sym, "", 1);
        return sym.Replace("\"", "").Replace("'", "");
    }

    // null: stackcollapse drops the frame (a name starting with '('; for a perf-map frame PerfView
    // moved the name into the module)
    static string FrameName(StackFrame f, bool names)
    {
        if (f.Symbol.StartsWith("(") || (f.Symbol.EndsWith(".map") && f.Module.StartsWith("(")))
            return null;
        if (!names)
            return "f";
        if (f.Symbol == "unknown")
            return "[" + f.Module + "]";
        return Tidy(f.Symbol);
    }

    static int Fail(string msg)
    {
        Console.Error.WriteLine("PerfViewCheck: " + msg);
        return 1;
    }

    static int Main(string[] args)
    {
        if (args.Length == 3 && args[0] == "--runtime-events")
            return RuntimeEvents.Run(args[1], args[2]);
        if (args.Length != 3 || (args[1] != "names" && args[1] != "depth"))
            return Fail("usage: PerfViewCheck ZIP names|depth OUT");
        string zip = args[0];
        bool names = args[1] == "names";

        // 1. every sample through the parser
        var acc = new Dictionary<string, long>(StringComparer.Ordinal);
        var threads = new HashSet<string>(StringComparer.Ordinal);
        var cpus = new HashSet<int>();
        string filter = null;
        int events = 0;
        using (var archive = ZipFile.OpenRead(zip))
        {
            var entry = archive.Entries.FirstOrDefault(e => e.FullName.EndsWith(".data.txt", StringComparison.OrdinalIgnoreCase));
            if (entry == null)
                return Fail(zip + ": no *.data.txt entry");
            var parser = new LinuxPerfScriptEventParser();
            using (var stream = entry.Open())
            {
                foreach (LinuxEvent ev in parser.ParseSkippingPreamble(stream))
                {
                    events++;
                    cpus.Add(ev.CpuNumber);
                    var frames = ev.CallerStacks.ToList();
                    if (frames.Count < 2 || !(frames[frames.Count - 2] is ThreadFrame tf) || !(frames[frames.Count - 1] is ProcessFrame pf))
                        return Fail($"sample {events}: no thread and process frames");
                    if (tf.ID != ev.ThreadID || pf.ID != ev.ProcessID || pf.Name != ev.Command)
                        return Fail($"sample {events}: thread/process frames {tf.DisplayName} / {pf.DisplayName} do not match {ev.Command} {ev.ProcessID}/{ev.ThreadID}");
                    threads.Add(ev.ProcessID + "/" + ev.ThreadID);
                    long weight = 1;
                    // PerfView splits "cpu-clock:pppH:" into the name and "pppH:"; a tracepoint's
                    // payload follows its name with spaces (then stackcollapse counts 1 a sample)
                    string prop = ev.EventProperty;
                    bool plain = prop.Length == 0 || (prop.EndsWith(":") && !prop.Any(char.IsWhiteSpace));
                    if (plain)
                    {
                        string name = ev.EventName + ":" + prop;
                        filter ??= name;
                        if (name != filter)
                            continue;
                        if (ev.TimeProperty >= 0 && ev.TimeMSec != 0)
                            weight = ev.TimeProperty;
                    }
                    var sb = new StringBuilder(ev.Command.Replace(' ', '_') + "-?/" + ev.ThreadID);
                    for (int i = frames.Count - 3; i >= 0; i--)
                    {
                        if (!(frames[i] is StackFrame sf))
                            return Fail($"sample {events}: frame {i} is a {frames[i].Kind} frame");
                        string fn = FrameName(sf, names);
                        if (fn != null)
                            sb.Append(';').Append(fn);
                    }
                    string key = sb.ToString();
                    acc[key] = acc.TryGetValue(key, out long w) ? w + weight : weight;
                }
            }
        }
        using (var o = new StreamWriter(args[2], false, new UTF8Encoding(false)))
        {
            o.NewLine = "\n";
            foreach (var k in acc.Keys.OrderBy(k => k, StringComparer.Ordinal))
                o.WriteLine(k + " " + acc[k]);
        }

        // 2. PerfView's CPU view of the zip
        var source = new LinuxPerfScriptStackSource(zip, false);
        int samples = 0;
        string bad = null;
        source.ForEach(sample =>
        {
            samples++;
            var chain = new List<string>();
            for (var ix = sample.StackIndex; ix != StackSourceCallStackIndex.Invalid; ix = source.GetCallerIndex(ix))
                chain.Add(source.GetFrameName(source.GetFrameIndex(ix), false));
            var m = chain.Count >= 2 ? Regex.Match(chain[chain.Count - 1], @"^Process .* \((-?\d+)\)$") : Match.Empty;
            var t = chain.Count >= 2 ? Regex.Match(chain[chain.Count - 2], @"^Thread \((-?\d+)\)$") : Match.Empty;
            if (bad == null && (!m.Success || !t.Success))
                bad = $"stack source sample {samples}: root frames are {string.Join(" <- ", chain.AsEnumerable().Reverse().Take(2))}";
            else if (bad == null && !threads.Contains(m.Groups[1].Value + "/" + t.Groups[1].Value))
                bad = $"stack source sample {samples}: thread {m.Groups[1].Value}/{t.Groups[1].Value} was not seen by the parser";
        });
        if (bad != null)
            return Fail(bad);
        Console.WriteLine($"events={events} cpus={cpus.Count} stacksource={samples} threads={threads.Count}");
        return 0;
    }
}
