using System;
using System.Collections.Generic;
namespace Fmt {
  public class C<T> {
    public class N<U> { public U[] M2(T a, U b, string[,] s, ref DateTime d, int x) { return new U[] { b }; } }
    public V G<V>(V v, List<KeyValuePair<T, V>> l) { l.Add(new KeyValuePair<T, V>(default(T), v)); return v; }
    public T Get(List<T> l) { return l[0]; }
  }
  public static class S {
    public static int Sum(int[] a) { int s = 0; foreach (var x in a) s += x; return s; }
    public static unsafe int Call(delegate*<int, int> f, int* p) { return f(*p); }
    public static int Fact(int n) { try { return n <= 1 ? 1 : n * Fact(n - 1); } catch (Exception) { return -1; } finally { Console.Write(""); } }
  }
}
