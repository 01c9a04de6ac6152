// NettraceCheck: a .nettrace read by TraceEvent's EventPipeEventSource, printed as lines that do not
// depend on the reader's order (tests/events.sh sorts both sides):
//
//   trace pid=P pointer=N cpus=N
//   count PROVIDER ID VERSION N                       every event, by provider, event id and version
//   GCStart count= depth= reason= type= tid=          and one line per event of the kinds below, with
//   GCEnd count= depth= tid=                          the payload fields perfconv decodes
//   GCHeapStats gen0= gen1= gen2= gen3= gen4= promoted0= promoted1= promoted2= pinned= handles=
//   GCSuspendEEBegin reason= count=
//   GCTriggered reason=
//   GCAllocationTick kind= amount= type= heap= size=
//   MethodJittingStarted NAMESPACE NAME SIGNATURE il=
//   MethodLoadVerbose NAMESPACE NAME start= size= token=
//   MethodDCEndVerbose NAMESPACE NAME start= size= token=
//   ModuleDCEnd IL_PATH
//   ExceptionThrown TYPE hresult= flags= MESSAGE
//   ExceptionCatchStart METHOD
//
// Usage: NettraceCheck FILE.nettrace
using System;
using System.Collections.Generic;
using System.Linq;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

static class Program
{
    static readonly List<string> lines = new List<string>();

    static void Add(string s) => lines.Add(s);

    static int Main(string[] args)
    {
        if (args.Length != 1) {
            Console.Error.WriteLine("usage: NettraceCheck FILE.nettrace");
            return 2;
        }
        var counts = new Dictionary<string, long>();
        int pid = -1;
        using (var src = new EventPipeEventSource(args[0])) {
            var clr = src.Clr;
            var rundown = new ClrRundownTraceEventParser(src);
            clr.GCStart += d => Add($"GCStart count={d.Count} depth={d.Depth} reason={(int)d.Reason} type={(int)d.Type} tid={d.ThreadID}");
            clr.GCStop += d => Add($"GCEnd count={d.Count} depth={d.Depth} tid={d.ThreadID}");
            clr.GCHeapStats += d => Add($"GCHeapStats gen0={d.GenerationSize0} gen1={d.GenerationSize1} gen2={d.GenerationSize2} " +
                $"gen3={d.GenerationSize3} gen4={d.GenerationSize4} promoted0={d.TotalPromotedSize0} promoted1={d.TotalPromotedSize1} " +
                $"promoted2={d.TotalPromotedSize2} pinned={d.PinnedObjectCount} handles={d.GCHandleCount}");
            clr.GCSuspendEEStart += d => Add($"GCSuspendEEBegin reason={(int)d.Reason} count={d.Count}");
            clr.GCTriggered += d => Add($"GCTriggered reason={(int)d.Reason}");
            clr.GCAllocationTick += d => Add($"GCAllocationTick kind={(int)d.AllocationKind} amount={d.AllocationAmount64} " +
                $"type={d.TypeName} heap={d.HeapIndex} size={d.ObjectSize}");
            clr.MethodJittingStarted += d => Add($"MethodJittingStarted {d.MethodNamespace} {d.MethodName} {d.MethodSignature} il={d.MethodILSize}");
            clr.MethodLoadVerbose += d => Add($"MethodLoadVerbose {d.MethodNamespace} {d.MethodName} start=0x{d.MethodStartAddress:x} size={d.MethodSize} token=0x{d.MethodToken:x}");
            rundown.MethodDCStopVerbose += d => Add($"MethodDCEndVerbose {d.MethodNamespace} {d.MethodName} start=0x{d.MethodStartAddress:x} size={d.MethodSize} token=0x{d.MethodToken:x}");
            rundown.LoaderModuleDCStop += d => Add($"ModuleDCEnd {d.ModuleILPath}");
            clr.ExceptionStart += d => Add($"ExceptionThrown {d.ExceptionType} hresult=0x{d.ExceptionHRESULT:x} flags={(int)d.ExceptionFlags} {d.ExceptionMessage}");
            clr.ExceptionCatchStart += d => Add($"ExceptionCatchStart {d.MethodName}");
            src.AllEvents += d => {
                if (pid < 0)
                    pid = d.ProcessID;
                string key = $"{d.ProviderName} {(int)d.ID} {d.Version}";
                counts[key] = counts.TryGetValue(key, out long n) ? n + 1 : 1;
            };
            src.Process();
            Add($"trace pid={pid} pointer={src.PointerSize} cpus={src.NumberOfProcessors}");
        }
        foreach (var kv in counts)
            Add($"count {kv.Key} {kv.Value}");
        lines.Sort(string.CompareOrdinal);
        foreach (var l in lines)
            Console.WriteLine(l);
        return 0;
    }
}
