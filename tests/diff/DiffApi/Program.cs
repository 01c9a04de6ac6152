// perfconv live workload of tests/diff-live.sh: an ASP.NET Core minimal API with two endpoints of
// pure managed work.  GET /quote runs Pricing.Quote, GET /stock runs Inventory.Count; each request
// of the load calls both.  Version 2 (built with -p:DefineConstants=V2) makes Pricing.Quote's work
// four times heavier and leaves Inventory.Count as it was: the change a diff must find.  GET
// /hello answers "hello" (readiness).  Run it with --urls http://127.0.0.1:PORT (loopback only).
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Logging;

namespace DiffApi
{
    static class Pricing
    {
#if V2
        const int Rounds = 4_000_000;
#else
        const int Rounds = 1_000_000;
#endif
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static long Quote(int seed)
        {
            long h = seed;
            for (int i = 0; i < Rounds; i++)
                h = h * 31 + (i ^ (h >> 7));
            return h;
        }
    }

    static class Inventory
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static long Count(int seed)
        {
            long h = seed;
            for (int i = 0; i < 2_000_000; i++)
                h = h * 17 + (i ^ (h >> 5));
            return h;
        }
    }

    static class Program
    {
        static void Main(string[] args)
        {
            var builder = WebApplication.CreateSlimBuilder(args);
            builder.Logging.ClearProviders();
            var app = builder.Build();
            app.MapGet("/hello", () => "hello");
            app.MapGet("/quote", () => Pricing.Quote(42).ToString());
            app.MapGet("/stock", () => Inventory.Count(7).ToString());
            app.Run();
        }
    }
}
