// truthapp: the ReadyToRun ground-truth app of tests/r2r-truth.sh.  Its methods cover what a
// reader of method names has to get right (generic classes and methods over reference and value
// types, nested types, arrays of every shape, byrefs, pointers, function pointers, exception
// handlers, properties, constructors, local functions, lambdas, async methods, iterators, structs,
// explicit interface implementations, operators, modreq parameters, framework generics over the
// app's own types), and its run drives framework code (collections, LINQ, JSON, Regex,
// StringBuilder, async) so that the runtime logs many [PreJIT] methods of the framework's images.
// `truthapp [MAPS_OUT]`: runs everything once and copies /proc/self/maps to MAPS_OUT.
using System;
using System.Collections;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using Truth.Lib;

// a type in no namespace
public static class GlobalThing
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Twice(int x) => 2 * x;
}

namespace Truth.App
{
    public interface IShape
    {
        double Area();
        string Name { get; }
    }

    public interface IScaler<T>
    {
        T Scale(T v, int k);
    }

    public struct Vec : IEquatable<Vec>, IScaler<Vec>
    {
        public double X, Y;
        public Vec(double x, double y) { X = x; Y = y; }
        public static Vec operator +(Vec a, Vec b) => new Vec(a.X + b.X, a.Y + b.Y);
        public static bool operator ==(Vec a, Vec b) => a.X == b.X && a.Y == b.Y;
        public static bool operator !=(Vec a, Vec b) => !(a == b);
        public static implicit operator Vec(double d) => new Vec(d, d);
        public bool Equals(Vec o) => this == o;
        public override bool Equals(object o) => o is Vec v && Equals(v);
        public override int GetHashCode() => HashCode.Combine(X, Y);
        Vec IScaler<Vec>.Scale(Vec v, int k) => new Vec(v.X * k, v.Y * k);
        public readonly double Dot(in Vec o) => X * o.X + Y * o.Y;
        public readonly double Length => Math.Sqrt(X * X + Y * Y);
    }

    public record Person(string First, string Last, int Age)
    {
        public string Full => First + " " + Last;
    }

    public record struct Stamp(long Ticks, int Seq);

    public sealed class Circle : IShape
    {
        static readonly double Tau;
        static Circle() { Tau = Math.PI * 2; }
        public double R { get; init; }
        public Circle(double r) { R = r; }
        public double Area() => Tau / 2 * R * R;
        public string Name => "circle";
        ~Circle() { Counters.Finalized++; }
    }

    public static class Counters
    {
        public static int Finalized;
        public static long Sink;
    }

    public class Outer<T>
    {
        public T Value;
        public Outer(T v) { Value = v; }
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int Depth() => Value == null ? 0 : 1;

        public class Inner<U>
        {
            [MethodImpl(MethodImplOptions.NoInlining)]
            public U[] Both(T t, U u, ref int count, int[] ints, string[,] grid)
            {
                count += ints.Length + grid.Length;
                return new[] { u, u };
            }

            public class Deepest
            {
                [MethodImpl(MethodImplOptions.NoInlining)]
                public static KeyValuePair<T, U> Make(T t, U u) => new KeyValuePair<T, U>(t, u);
            }
        }

        public struct Cell
        {
            public T Item;
            [MethodImpl(MethodImplOptions.NoInlining)]
            public override string ToString() => "cell " + Item;
        }
    }

    public static class Generic
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static T Max<T>(T a, T b) where T : IComparable<T> => a.CompareTo(b) >= 0 ? a : b;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static List<KeyValuePair<TK, TV>> Zip<TK, TV>(IList<TK> ks, IList<TV> vs)
        {
            var r = new List<KeyValuePair<TK, TV>>();
            for (int i = 0; i < Math.Min(ks.Count, vs.Count); i++)
                r.Add(new KeyValuePair<TK, TV>(ks[i], vs[i]));
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static TOut[] Convert<TIn, TOut>(TIn[] xs, Func<TIn, TOut> f)
        {
            var r = new TOut[xs.Length];
            for (int i = 0; i < xs.Length; i++) r[i] = f(xs[i]);
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int CountNested<T>(Dictionary<string, List<T>>.Enumerator e, Nullable<int> extra)
        {
            int n = extra ?? 0;
            while (e.MoveNext()) n += e.Current.Value.Count;
            return n;
        }
    }

    public class Container<T> : IEnumerable<T>
    {
        readonly List<T> items = new List<T>();
        public int Count => items.Count;
        public T this[int i] { get => items[i]; set => items[i] = value; }
        public event EventHandler Changed;
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Add(T item) { items.Add(item); Changed?.Invoke(this, EventArgs.Empty); }
        [MethodImpl(MethodImplOptions.NoInlining)]
        public IEnumerable<T> Evens()
        {
            for (int i = 0; i < items.Count; i += 2)
                yield return items[i];
        }
        [MethodImpl(MethodImplOptions.NoInlining)]
        public TR Fold<TR>(TR seed, Func<TR, T, TR> f)
        {
            foreach (var x in items) seed = f(seed, x);
            return seed;
        }
        public IEnumerator<T> GetEnumerator() => items.GetEnumerator();
        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    public static unsafe class Native
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int SumPtr(int* p, int n)
        {
            int s = 0;
            for (int i = 0; i < n; i++) s += p[i];
            return s;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Fill(byte** rows, int n, ref byte* cur, out long written)
        {
            written = 0;
            for (int i = 0; i < n; i++) { *rows[i] = 1; written++; }
            cur = rows[0];
        }

        static int Twice(int x) => 2 * x;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int CallThrough(delegate*<int, int> f, delegate* unmanaged<int, void> g, int v)
        {
            int r = f(v);
            if (g != null) g(r);
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Run()
        {
            int* buf = stackalloc int[8];
            for (int i = 0; i < 8; i++) buf[i] = i;
            byte b = 0;
            byte* pb = &b;
            byte** rows = &pb;
            byte* cur = null;
            Fill(rows, 1, ref cur, out long w);
            return SumPtr(buf, 8) + CallThrough(&Twice, null, 21) + (int)w;
        }
    }

    public static class Errors
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Guarded(int x)
        {
            int r = 0;
            try
            {
                if (x % 3 == 0) throw new InvalidOperationException("three");
                r = 100 / (x % 5);
            }
            catch (DivideByZeroException)
            {
                r = -1;
            }
            catch (InvalidOperationException e) when (e.Message.Length > 2)
            {
                r = -2;
            }
            finally
            {
                Counters.Sink += r;
            }
            return r;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Nested(string s)
        {
            try
            {
                try { return s.Substring(10); }
                catch (ArgumentOutOfRangeException) { return s.ToUpperInvariant(); }
            }
            finally { Counters.Sink++; }
        }
    }

    public static class Big
    {
        // A long method with a rarely taken part: what hot/cold splitting would move out.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Churn(int n, bool rare)
        {
            long a = 1, b = 2, c = 3;
            for (int i = 0; i < n; i++)
            {
                a = a * 31 + i; b ^= a >> 3; c += b % 7;
                if ((i & 15) == 0) { a += c; b -= a; }
                switch (i % 6)
                {
                    case 0: a += 11; break;
                    case 1: b += 13; break;
                    case 2: c += 17; break;
                    case 3: a ^= b; break;
                    case 4: b ^= c; break;
                    default: c ^= a; break;
                }
            }
            if (rare)
            {
                var sb = new StringBuilder();
                for (int i = 0; i < 10; i++) sb.Append(i).Append(',').Append(a + i).Append(';');
                Console.Error.WriteLine(sb.ToString());
                try { File.WriteAllText("/nonexistent/dir/x", sb.ToString()); }
                catch (IOException e) { Console.Error.WriteLine(e.Message); }
                throw new ApplicationException("rare path " + a + b + c);
            }
            return a + b + c;
        }
    }

    public static class Flow
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> FetchAsync(int n)
        {
            int s = 0;
            for (int i = 0; i < n; i++)
            {
                await Task.Yield();
                s += await SquareAsync(i);
            }
            return s;
        }

        static async ValueTask<int> SquareAsync(int i)
        {
            await Task.Delay(0);
            return i * i;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static IEnumerable<string> Words(string text)
        {
            foreach (var w in text.Split(' '))
                if (w.Length > 0) yield return w;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async IAsyncEnumerable<int> Ticks(int n)
        {
            for (int i = 0; i < n; i++) { await Task.Yield(); yield return i; }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Closures(int k)
        {
            int local = k;
            int AddLocal(int x) => x + local;
            static int Square(int x) => x * x;
            Func<int, int> f = x => AddLocal(Square(x));
            return Enumerable.Range(0, 10).Select(f).Where(x => x % 2 == 0).Sum();
        }
    }

    public abstract class Animal
    {
        protected Animal() { }
        public abstract string Speak();
        public virtual T Accept<T>(Func<Animal, T> visitor) => visitor(this);
    }

    public class Dog : Animal
    {
        public override string Speak() => "woof";
        public override T Accept<T>(Func<Animal, T> visitor) => base.Accept(visitor);
    }

    public static class Shapes
    {
        // Every primitive, a TypedReference, native ints, tuples, spans and modreq'd parameters.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static double Prims(sbyte a, byte b, short c, ushort d, int e, uint f, long g, ulong h, float i,
            double j, char k, bool l, nint m, nuint n, object o, string p, decimal q)
            => a + b + c + d + e + f + g + (double)h + i + j + k + (l ? 1 : 0) + m + n + (o == null ? 0 : 1) + p.Length + (double)q;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Typed(TypedReference r) => __reftype(r) == typeof(int) ? __refvalue(r, int) : 0;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static (int, string) Tup((long a, Vec b) x, (int, int, int, int, int, int, int, int) wide)
            => ((int)x.a + wide.Item8, x.b.X.ToString());

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int SumSpan(ReadOnlySpan<int> s, Span<byte> scratch)
        {
            int t = 0;
            foreach (var x in s) t += x;
            if (scratch.Length > 0) scratch[0] = (byte)t;
            return t;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Jagged(int[][] j, int[,,] cube, string[][,] mixed) => j.Length + cube.Rank + mixed.Length;
    }

    public class Reader
    {
        double r;
        public double R
        {
            get => r;
            [MethodImpl(MethodImplOptions.NoInlining)]
            init { r = value; }
        }
        // in parameters and ref readonly returns of virtual methods carry modreq(InAttribute)
        [MethodImpl(MethodImplOptions.NoInlining)]
        public virtual double Dot(in Vec a, in Vec b) => a.X * b.X + a.Y * b.Y + r;
        readonly Vec[] store = { new Vec(1, 2) };
        [MethodImpl(MethodImplOptions.NoInlining)]
        public virtual ref readonly Vec First() => ref store[0];
    }

    public static class Größe
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Maß(int x) => x + 1;
    }

    public static class Workload
    {
        // Framework code the runtime loads from its own ReadyToRun images.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Framework()
        {
            long t = 0;
            var people = new List<Person>();
            for (int i = 0; i < 200; i++)
                people.Add(new Person("F" + i, "L" + (i % 17), 20 + i % 50));
            var json = JsonSerializer.Serialize(people);
            var back = JsonSerializer.Deserialize<List<Person>>(json);
            t += back.Count + json.Length;
            using (var doc = JsonDocument.Parse(json))
                t += doc.RootElement.GetArrayLength();
            var byLast = people.GroupBy(p => p.Last).OrderBy(g => g.Key).ToDictionary(g => g.Key, g => g.Sum(p => p.Age));
            t += byLast.Values.Sum();
            t += people.OrderByDescending(p => p.Age).ThenBy(p => p.First).Take(10).Sum(p => p.Age);
            t += people.Select(p => p.Age).Distinct().Count() + people.Max(p => p.Age) + (long)people.Average(p => p.Age);
            var re = new Regex(@"^F(\d+)$", RegexOptions.Compiled);
            var re2 = new Regex(@"L\d{1,2}", RegexOptions.IgnoreCase);
            foreach (var p in people)
            {
                var m = re.Match(p.First);
                if (m.Success) t += int.Parse(m.Groups[1].Value);
                t += re2.IsMatch(p.Last) ? 1 : 0;
            }
            var sb = new StringBuilder();
            foreach (var p in people.Take(50)) sb.AppendFormat("{0}:{1};", p.Full, p.Age).AppendLine();
            t += sb.ToString().Length + string.Join(",", people.Select(p => p.Last)).Length;
            var set = new HashSet<string>(people.Select(p => p.Last));
            var sorted = new SortedDictionary<int, string>();
            foreach (var p in people) sorted[p.Age * 1000 + p.First.Length] = p.First;
            var q = new Queue<int>(); var st = new Stack<string>();
            for (int i = 0; i < 100; i++) { q.Enqueue(i); st.Push(i.ToString("x")); }
            t += set.Count + sorted.Count + q.Sum() + st.Count;
            var pq = new PriorityQueue<string, int>();
            foreach (var p in people) pq.Enqueue(p.First, p.Age);
            t += pq.Dequeue().Length;
            t += Task.WhenAll(Enumerable.Range(0, 8).Select(i => Task.Run(() => i * 2))).Result.Sum();
            t += Flow.FetchAsync(20).GetAwaiter().GetResult();
            t += string.Concat(Enumerable.Repeat("ab", 10)).Replace("ab", "c").Length;
            t += DateTime.Parse("2024-02-29T12:00:00").DayOfYear + Guid.NewGuid().ToString().Length;
            t += Convert.ToBase64String(Encoding.UTF8.GetBytes(json)).Length;
            var arr = Enumerable.Range(0, 1000).Select(i => (i * 7919) % 1000).ToArray();
            Array.Sort(arr);
            t += Array.BinarySearch(arr, 500) + arr.AsSpan().IndexOf(999);
            return t + More();
        }

        // More framework images: XML, LINQ expressions, cryptography, compression, channels,
        // immutable and concurrent collections, big integers, parallel loops, SIMD.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long More()
        {
            long t = 0;
            var doc = System.Xml.Linq.XDocument.Parse("<r><p a='1'>x</p><p a='2'>y</p></r>");
            t += doc.Root.Elements("p").Sum(e => (int)e.Attribute("a"));
            var xs = new System.Xml.XmlDocument();
            xs.LoadXml("<a><b>3</b></a>");
            t += int.Parse(xs.SelectSingleNode("/a/b").InnerText);
            var prm = System.Linq.Expressions.Expression.Parameter(typeof(int), "x");
            var fn = System.Linq.Expressions.Expression.Lambda<Func<int, int>>(
                System.Linq.Expressions.Expression.Multiply(prm, prm), prm).Compile();
            t += fn(7);
            t += System.Security.Cryptography.SHA256.HashData(Encoding.UTF8.GetBytes("truth"))[0];
            using (var ms = new MemoryStream())
            {
                using (var gz = new System.IO.Compression.GZipStream(ms, System.IO.Compression.CompressionLevel.Fastest, true))
                    gz.Write(Encoding.UTF8.GetBytes(new string('a', 1000)));
                t += ms.Length;
            }
            var ch = System.Threading.Channels.Channel.CreateUnbounded<int>();
            for (int i = 0; i < 10; i++) ch.Writer.TryWrite(i);
            while (ch.Reader.TryRead(out var item)) t += item;
            var im = System.Collections.Immutable.ImmutableList.Create(1, 2, 3).Add(4);
            var imd = System.Collections.Immutable.ImmutableDictionary<string, int>.Empty.Add("a", 1);
            t += im.Sum() + imd["a"];
            var cd = new System.Collections.Concurrent.ConcurrentDictionary<int, string>();
            System.Threading.Tasks.Parallel.For(0, 64, i => cd.TryAdd(i, i.ToString()));
            t += cd.Count;
            t += (long)(System.Numerics.BigInteger.Pow(3, 40) % 1000);
            var va = new System.Numerics.Vector<int>(3);
            t += System.Numerics.Vector.Sum(va * va);
            t += new Uri("http://example.com:8080/a/b?q=1").Port + DateTimeOffset.Parse("2024-01-02T03:04:05+01:00").Hour;
            t += string.Format(System.Globalization.CultureInfo.InvariantCulture, "{0:N2}", 1234.5).Length;
            return t;
        }
    }

    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long App()
        {
            long t = 0;
            var v = new Vec(3, 4) + 1.0;
            t += (long)v.Length + (long)v.Dot(new Vec(1, 1)) + (v == new Vec(4, 5) ? 1 : 0);
            t += ((IScaler<Vec>)v).Scale(v, 2).X > 0 ? 1 : 0;
            var s = new Stamp(5, 6);
            t += s.Seq + (s with { Seq = 9 }).Seq;
            IShape c = new Circle(2) { R = 3 };
            t += (long)c.Area() + c.Name.Length;
            var o = new Outer<string>("x");
            t += o.Depth() + new Outer<int>(5).Depth();
            int count = 0;
            t += new Outer<string>.Inner<int>().Both("a", 1, ref count, new[] { 1, 2 }, new string[2, 3]).Length;
            t += new Outer<int>.Inner<string>().Both(1, "b", ref count, new int[0], new string[1, 1]).Length + count;
            t += Outer<long>.Inner<Vec>.Deepest.Make(1, v).Key;
            t += Outer<string>.Inner<object>.Deepest.Make("k", null).Key.Length;
            t += new Outer<double>.Cell { Item = 2.5 }.ToString().Length + new Outer<string>.Cell { Item = "z" }.ToString().Length;
            t += Generic.Max(3, 9) + Generic.Max("a", "b").Length + (long)Generic.Max(1.5, 0.5) + (long)Generic.Max(new DateTime(1), new DateTime(2)).Ticks;
            t += Generic.Zip(new[] { 1, 2, 3 }, new[] { "a", "b" }).Count + Generic.Zip(new[] { "x" }, new[] { v }).Count;
            t += Generic.Convert(new[] { 1, 2 }, x => x.ToString()).Length + Generic.Convert(new[] { "1" }, int.Parse)[0];
            t += Generic.Convert(new[] { v }, x => new Pair<Vec, int>(x, 1)).Length;
            var dict = new Dictionary<string, List<Vec>> { ["a"] = new List<Vec> { v, v } };
            t += Generic.CountNested(dict.GetEnumerator(), 1) + Generic.CountNested(new Dictionary<string, List<string>>().GetEnumerator(), null);
            var cont = new Container<Vec>();
            cont.Changed += (sender, e) => Counters.Sink++;
            for (int i = 0; i < 5; i++) cont.Add(new Vec(i, i));
            cont[0] = new Vec(9, 9);
            t += cont.Evens().Count() + (long)cont.Fold(0.0, (a, x) => a + x.X) + cont.Count;
            var names = new Container<string>();
            names.Add("p"); names.Add("q");
            t += names.Evens().Count() + names.Fold(0, (a, x) => a + x.Length) + names[1].Length;
            t += Native.Run();
            for (int i = 0; i < 12; i++) t += Errors.Guarded(i);
            t += Errors.Nested("short").Length + Errors.Nested("a longer string here").Length;
            t += Big.Churn(1000, false);
            try { Big.Churn(3, true); } catch (ApplicationException) { t++; }
            t += Flow.FetchAsync(5).Result + Flow.Words("a bb  ccc").Count() + Flow.Closures(3);
            t += CountTicks().Result;
            Animal d = new Dog();
            t += d.Speak().Length + d.Accept(a => a.Speak().Length) + d.Accept(a => a.GetType().Name).Length;
            t += Größe.Maß(1);
            int tr = 7;
            t += (long)Shapes.Prims(1, 2, 3, 4, 5, 6, 7, 8, 9f, 10, 'k', true, 11, 12, null, "p", 13m) + Shapes.Typed(__makeref(tr));
            t += Shapes.Tup((5, v), (1, 2, 3, 4, 5, 6, 7, 8)).Item1 + Shapes.SumSpan(new[] { 1, 2, 3 }, stackalloc byte[4]);
            t += Shapes.Jagged(new int[2][], new int[1, 2, 3], new string[1][,]);
            var rd = new Reader { R = 0.5 };
            t += (long)rd.Dot(v, v) + (long)rd.First().X + (long)rd.R;
            t += GlobalThing.Twice(4);
            var pair = new Pair<string, int>("k", 1);
            t += Box<string>.Lid.Close(new Box<string>("b"), ref pair) + new Box<int>(4).Map(x => x * 2L);
            t += LibMath.Sum(new List<int> { 1, 2, 3 }) + (long)LibMath.Norm(new double[,] { { 3, 4 } });
            var pairs = new List<Pair<Shade, Vec>> { new Pair<Shade, Vec>(Shade.Dark, v) };
            pairs.Sort((a, b) => a.Key.CompareTo(b.Key));
            t += pairs.Count + pairs[0].ToString().Length;
            var vset = new HashSet<Vec> { v, new Vec(1, 2) };
            var vdict = new Dictionary<Vec, Stamp> { [v] = s };
            t += vset.Count + vdict[v].Seq + new Person("a", "b", 3).Full.Length;
            return t;
        }

        static async Task<int> CountTicks()
        {
            int n = 0;
            await foreach (var i in Flow.Ticks(3)) n += i;
            return n;
        }

        public static int Main(string[] args)
        {
            long t = App() + Workload.Framework();
            Console.WriteLine(t != 0 ? "done" : "zero");
            if (args.Length > 0)
                File.WriteAllText(args[0], File.ReadAllText("/proc/self/maps"));
            return 0;
        }
    }
}
