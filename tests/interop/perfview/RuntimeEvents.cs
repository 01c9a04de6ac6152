// RuntimeEvents.cs - the .NET runtime's events as TraceEvent reads them from a .nettrace
// (EventPipeEventSource, TraceLog.CreateFromEventPipeDataFile) or from the LTTng CTF inside a
// .trace.zip (CtfTraceEventSource, TraceLog.CreateFromLttngTextDataFile, what PerfView opens),
// printed the same way for both so that tests/perfview.sh can compare them:
//
//   E TIME_NS PID TID PROVIDER ID VERSION EVENTNAME|NAME=VALUE|...   every CLR and rundown event, in
//                                                                    the reader's order; TIME_NS is
//                                                                    the event's QPC (CLOCK_MONOTONIC
//                                                                    ns on Linux)
//   gc PID count=N gen0=N gen1=N gen2=N pause_ms=X allocated_mb=X    GCStats of TraceLog's GC analysis
//   gcone PID NUMBER gen=G reason=R type=T pause_ms=X allocated_mb=X peak_mb=X   one line a GC
//   jit PID methods=N jit_ms=X il_bytes=N                            JITStats
//   jitone PID METHOD il=N ms=X                                      one line a JIT-compiled method
//
// Usage: PerfViewCheck --runtime-events FILE.nettrace|FILE.trace.zip OUT
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Analysis;
using Microsoft.Diagnostics.Tracing.Etlx;
using TraceLog = Microsoft.Diagnostics.Tracing.Etlx.TraceLog;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

static class RuntimeEvents
{
    static readonly PropertyInfo qpc = typeof(TraceEvent).GetProperty("TimeStampQPC",
        BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public);

    static string Value(object v)
    {
        switch (v)
        {
            case null: return "null";
            case string s: return s.Replace("|", "\\|").Replace("\n", "\\n");
            case byte[] b: return Convert.ToHexString(b);
            case IFormattable f: return f.ToString(null, CultureInfo.InvariantCulture);
            case IEnumerable e:
                var parts = new List<string>();
                foreach (var x in e)
                    parts.Add(Value(x));
                return "[" + string.Join(",", parts) + "]";
            default: return v.ToString();
        }
    }

    static string Line(TraceEvent d)
    {
        var sb = new StringBuilder();
        long t = qpc != null ? Convert.ToInt64(qpc.GetValue(d)) : 0;
        sb.Append($"E {t} {d.ProcessID} {d.ThreadID} {d.ProviderName} {(int)d.ID} {d.Version} {d.EventName}");
        var names = d.PayloadNames ?? Array.Empty<string>();
        for (int i = 0; i < names.Length; i++)
        {
            string v;
            try { v = Value(d.PayloadValue(i)); }
            catch (Exception ex) { v = "!" + ex.GetType().Name; }
            sb.Append('|').Append(names[i]).Append('=').Append(v);
        }
        return sb.ToString();
    }

    static string Ms(double v) => v.ToString("F6", CultureInfo.InvariantCulture);

    public static int Run(string path, string outPath)
    {
        bool zip = path.EndsWith(".zip", StringComparison.OrdinalIgnoreCase);
        var lines = new List<string>();

        // 1. every runtime event, through the source PerfView's readers are built on
        using (TraceEventDispatcher src = zip ? new CtfTraceEventSource(path) : new EventPipeEventSource(path))
        {
            var clr = new ClrTraceEventParser(src);
            var rundown = new ClrRundownTraceEventParser(src);
            clr.All += d => lines.Add(Line(d));
            rundown.All += d => lines.Add(Line(d));
            src.Process();
        }

        // 2. GCStats and JITStats, from the TraceLog PerfView makes of the file
        string etlx = Path.Combine(Path.GetTempPath(), $"perfconv-{Environment.ProcessId}-{Path.GetFileName(path)}.etlx");
        try
        {
            if (zip)
                TraceLog.CreateFromLttngTextDataFile(path, etlx);
            else
                TraceLog.CreateFromEventPipeDataFile(path, etlx);
            using (var log = new TraceLog(etlx))
            {
                var src = log.Events.GetSource();
                src.NeedLoadedDotNetRuntimes();
                src.Process();
                foreach (var p in src.Processes().OrderBy(p => p.ProcessID))
                {
                    var rt = p.LoadedDotNetRuntime();
                    if (rt == null)
                        continue;
                    var gcs = rt.GC.GCs;
                    lines.Add($"gc {p.ProcessID} count={gcs.Count} gen0={gcs.Count(g => g.Generation == 0)} " +
                              $"gen1={gcs.Count(g => g.Generation == 1)} gen2={gcs.Count(g => g.Generation == 2)} " +
                              $"pause_ms={Ms(gcs.Sum(g => g.PauseDurationMSec))} " +
                              $"allocated_mb={Ms(gcs.Sum(g => g.AllocedSinceLastGCMB))}");
                    foreach (var g in gcs)
                        lines.Add($"gcone {p.ProcessID} {g.Number} gen={g.Generation} reason={g.Reason} type={g.Type} " +
                                  $"pause_ms={Ms(g.PauseDurationMSec)} allocated_mb={Ms(g.AllocedSinceLastGCMB)} " +
                                  $"peak_mb={Ms(g.HeapSizePeakMB)} after_mb={Ms(g.HeapSizeAfterMB)}");
                    var methods = rt.JIT.Methods;
                    lines.Add($"jit {p.ProcessID} methods={methods.Count} jit_ms={Ms(methods.Sum(m => m.CompileCpuTimeMSec))} " +
                              $"il_bytes={methods.Sum(m => (long)m.ILSize)}");
                    foreach (var m in methods)
                        lines.Add($"jitone {p.ProcessID} {m.MethodName} il={m.ILSize} ms={Ms(m.CompileCpuTimeMSec)}");
                }
            }
        }
        finally
        {
            try { File.Delete(etlx); } catch { }
        }
        using (var o = new StreamWriter(outPath, false, new UTF8Encoding(false)))
        {
            o.NewLine = "\n";
            foreach (var l in lines)
                o.WriteLine(l);
        }
        Console.WriteLine($"events={lines.Count(l => l.StartsWith("E "))}");
        return 0;
    }
}
