// The .NET workload of tests/offcpu.sh: waits of known length under known managed frames.
//   Program.WaitForLock   a thread blocks on a Monitor (C# lock) that another thread holds for
//                         40 ms, 10 times; it spins between them, so these are its only waits
//   Program.RunDelays     the main thread waits for an awaited Task.Delay(30), 10 times
// Each wait is measured with a Stopwatch and the totals (nanoseconds) are written to the file named
// by the first argument: the values the off-CPU profile is compared with.
using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace OffCpu
{
    public static class Program
    {
        const int Rounds = 10;
        static readonly object Gate = new object();
        static long lockNs, delayNs;
        static int round;

        static long Ns(Stopwatch sw) => (long)(sw.ElapsedTicks * (1e9 / Stopwatch.Frequency));

        // The holder takes the lock, announces the round, holds it 40 ms and leaves it for 10 ms.
        static void Holder()
        {
            for (int i = 0; i < Rounds; i++)
            {
                lock (Gate)
                {
                    Volatile.Write(ref round, i + 1);
                    Thread.Sleep(40);
                }
                Thread.Sleep(10);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void WaitForLock()
        {
            var sw = Stopwatch.StartNew();
            lock (Gate)
            {
                sw.Stop();
            }
            lockNs += Ns(sw);
        }

        // The waiter spins (on the CPU) until the holder has the lock: its only waits are for the lock.
        static void Waiter()
        {
            for (int i = 0; i < Rounds; i++)
            {
                while (Volatile.Read(ref round) <= i)
                    Thread.SpinWait(20);
                WaitForLock();
            }
        }

        static async Task DelayOnce()
        {
            await Task.Delay(30);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void RunDelays()
        {
            for (int i = 0; i < Rounds; i++)
            {
                var sw = Stopwatch.StartNew();
                DelayOnce().GetAwaiter().GetResult();
                delayNs += Ns(sw);
            }
        }

        public static int Main(string[] args)
        {
            if (args.Length != 1)
                return 2;
            var holder = new Thread(Holder) { Name = "oc-holder" };
            var waiter = new Thread(Waiter) { Name = "oc-waiter" };
            holder.Start();
            waiter.Start();
            RunDelays();
            holder.Join();
            waiter.Join();
            File.WriteAllText(args[0], $"lock {lockNs}\ndelay {delayNs}\n");
            return 0;
        }
    }
}
