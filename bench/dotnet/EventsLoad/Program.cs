// perfconv benchmark workload: the runtime's events in bulk, for bench/events.sh.
//
//   EventsLoad SECONDS
//
// For SECONDS it allocates at two sites (int[250] and a 64-byte class, three bytes to one, as
// fixtures/dotnet-events' workload does), throws and catches an exception every millisecond,
// forces a gen-1 GC every 50 ms and compiles a new generic instantiation now and then, so that a
// session with the GC (verbose: allocation ticks), JIT, exception and stack keywords writes a large
// stream: about 5 MB a second here.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace EventsLoad
{
    sealed class Record
    {
        public long A, B, C, D, E, F;
    }

    static class Program
    {
        static int[] sinkInts;
        static readonly Record[] sinkRecords = new Record[64];

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AllocInts(int n)
        {
            for (int i = 0; i < n; i++)
                sinkInts = new int[250];
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AllocRecords(int n)
        {
            for (int i = 0; i < n; i++)
                sinkRecords[i & 63] = new Record { A = i };
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Throw(int i) => throw new InvalidOperationException("load " + i);

        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Spin<T>(int n)
        {
            long x = typeof(T).Name.Length;
            for (int i = 0; i < n; i++)
                x = x * 6364136223846793005L + 1442695040888963407L;
            return x;
        }

        static int Main(string[] args)
        {
            double seconds = args.Length > 0 ? double.Parse(args[0]) : 10;
            var clock = Stopwatch.StartNew();
            long rounds = 0, caught = 0, spun = 0;
            long nextGc = 50;
            while (clock.Elapsed.TotalSeconds < seconds) {
                AllocInts(300);             // 300 KB
                AllocRecords(1600);         // 100 KB
                try { Throw((int)rounds); } catch (InvalidOperationException) { caught++; }
                if (clock.ElapsedMilliseconds >= nextGc) {
                    GC.Collect(1, GCCollectionMode.Forced, blocking: true);
                    nextGc += 50;
                }
                if (rounds % 4096 == 0)
                    spun += Spin<ValueTuple<long, long>>(1000) + Spin<Tuple<long>>(1000);
                rounds++;
            }
            Console.WriteLine($"rounds {rounds} caught {caught} gen1 {GC.CollectionCount(1)} spun {spun & 0xff}");
            return 0;
        }
    }
}
