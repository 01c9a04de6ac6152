using System; using System.Collections.Generic; using Fmt;
namespace Demo.Ns {
  public class Outer<T> { public class Inner { public int M(T a, ref int b, int[] c, string[,] d) { return b + c.Length; } } }
  public static class Program {
    public static int Main(string[] args) {
      var c = new C<string>(); var l = new List<KeyValuePair<string, int>>();
      c.G(3, l); var d = new Dictionary<int, string> { [1] = "a" };
      var o = new Outer<string>.Inner(); int b = 1;
      Console.WriteLine(d[1] + S.Sum(new[] { 1, 2 }) + S.Fact(5) + o.M("x", ref b, new int[1], new string[1,1]) + c.Get(new List<string>{"q"}));
      return 0;
    }
  }
}
