// The .NET workload of tests/offcpu.sh: waits of known length under known managed frames.
//   Program.Holder        a thread sleeps (Thread.Sleep) 40 ms holding a Monitor (C# lock) and
//                         10 ms without it, 10 times
//   Program.WaitForLock   another thread blocks on that Monitor, 10 times; it spins between them,
//                         so these are its only waits
//   Program.RunDelays     the main thread waits synchronously for a task that awaits
//                         Task.Delay(30), 10 times.  The awaited delay itself blocks no thread (its
//                         continuation runs on the thread pool); the thread that waits is the one
//                         blocked on the task's completion, under RunDelays.  It waits on the
//                         task's wait handle, which blocks at once: Task.Wait and
//                         GetAwaiter().GetResult() first spin and sched_yield, and on a busy
//                         machine a 30 ms wait can pass in the yields (runnable, not blocked
//                         time).  One such wait in Warmup first JITs the async machinery outside
//                         RunDelays.
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
        static long lockNs, delayNs, sleepNs;
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
                    Sleep(40);
                }
                Sleep(10);
            }
        }

        static void Sleep(int ms)
        {
            var sw = Stopwatch.StartNew();
            Thread.Sleep(ms);
            sleepNs += Ns(sw);
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
        static void Warmup()
        {
            WaitFor(DelayOnce());
        }

        static void WaitFor(Task t)
        {
            ((IAsyncResult)t).AsyncWaitHandle.WaitOne();
            t.GetAwaiter().GetResult();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void RunDelays()
        {
            for (int i = 0; i < Rounds; i++)
            {
                var sw = Stopwatch.StartNew();
                WaitFor(DelayOnce());
                delayNs += Ns(sw);
            }
        }

        public static int Main(string[] args)
        {
            if (args.Length != 1)
                return 2;
            var holder = new Thread(Holder) { Name = "oc-holder" };
            var waiter = new Thread(Waiter) { Name = "oc-waiter" };
            Warmup();
            holder.Start();
            waiter.Start();
            RunDelays();
            holder.Join();
            waiter.Join();
            File.WriteAllText(args[0], $"lock {lockNs}\ndelay {delayNs}\nsleep {sleepNs}\n");
            return 0;
        }
    }
}
