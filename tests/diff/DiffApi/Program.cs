// perfconv live workload of tests/diff-live.sh: an ASP.NET Core minimal API with four endpoints of
// pure managed work, the same amount each: GET /quote runs Pricing.Quote, /stock Inventory.Count,
// /ship Shipping.Plan and /bill Billing.Total; the load calls each in turn.  Version 2 (built with
// -p:DefineConstants=V2) makes Pricing.Quote's work eight times heavier and leaves the others as they
// were: the change a diff must find (of the work in these four, its share goes from 1/4 to 8/11, the
// others' fall by a third of that each).  GET /hello answers "hello" (readiness).  Run it with --urls http://127.0.0.1:PORT.
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Logging;

namespace DiffApi
{
    static class Pricing
    {
#if V2
        const int Rounds = 8_000_000;
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
            for (int i = 0; i < 1_000_000; i++)
                h = h * 17 + (i ^ (h >> 5));
            return h;
        }
    }

    static class Shipping
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static long Plan(int seed)
        {
            long h = seed;
            for (int i = 0; i < 1_000_000; i++)
                h = h * 13 + (i ^ (h >> 3));
            return h;
        }
    }

    static class Billing
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static long Total(int seed)
        {
            long h = seed;
            for (int i = 0; i < 1_000_000; i++)
                h = h * 29 + (i ^ (h >> 9));
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
            app.MapGet("/ship", () => Shipping.Plan(5).ToString());
            app.MapGet("/bill", () => Billing.Total(3).ToString());
            app.Run();
        }
    }
}
