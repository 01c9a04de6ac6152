// truthlib: a second assembly, so that the app's signatures hold TypeRefs to it and a composite
// image has more than one component.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace Truth.Lib
{
    public struct Pair<TKey, TValue>
    {
        public TKey Key;
        public TValue Value;
        public Pair(TKey k, TValue v) { Key = k; Value = v; }
        [MethodImpl(MethodImplOptions.NoInlining)]
        public override string ToString() => "(" + Key + ", " + Value + ")";
    }

    public class Box<T>
    {
        public T Item;
        public Box(T item) { Item = item; }
        [MethodImpl(MethodImplOptions.NoInlining)]
        public TOut Map<TOut>(Func<T, TOut> f) => f(Item);
        public class Lid
        {
            [MethodImpl(MethodImplOptions.NoInlining)]
            public static int Close(Box<T> b, ref Pair<T, int> p) => p.Value + (b == null ? 0 : 1);
        }
    }

    public static class LibMath
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Sum(IEnumerable<int> xs) { long s = 0; foreach (var x in xs) s += x; return s; }
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static double Norm(double[,] m)
        {
            double s = 0;
            for (int i = 0; i < m.GetLength(0); i++)
                for (int j = 0; j < m.GetLength(1); j++)
                    s += m[i, j] * m[i, j];
            return Math.Sqrt(s);
        }
    }

    public enum Shade : byte { Light, Dark }
}
