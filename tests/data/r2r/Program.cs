using System;
using System.Runtime.CompilerServices;
static class Program {
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Leaf(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * i % 7; return s; }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Middle(long n) { return Leaf(n) + 1; }
    static int Main(string[] args) {
        double secs = args.Length > 0 ? double.Parse(args[0]) : 2.0;
        var end = DateTime.UtcNow.AddSeconds(secs);
        long t = 0;
        while (DateTime.UtcNow < end) t += Middle(200000);
        Console.WriteLine(t);
        if (args.Length > 1) System.Threading.Thread.Sleep(int.Parse(args[1]));
        return 0;
    }
}
