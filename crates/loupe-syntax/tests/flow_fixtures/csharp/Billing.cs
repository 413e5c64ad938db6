using System;
using System.Collections.Generic;
using Json = System.Text.Json.JsonSerializer;

namespace Shop;

public static class Billing
{
    private static decimal rate = 0.2m;

    public static decimal Total(this Order order, decimal discount, params string[] codes)
    {
        decimal total = 0;
        foreach (var line in order.Lines)
        {
            total += line.Price * line.Quantity;
        }
        total -= discount;
        if (total < 0)
        {
            total = Math.Max(total, 0);
        }
        Log(codes, total);
        var text = Json.Serialize(total);
        Func<decimal, decimal> tax = total => total * rate;
        Action report = () => Console.WriteLine(total);
        return tax(total);
    }

    public static bool TryParse(string input, out Order result)
    {
        result = null;
        try
        {
            result = Json.Deserialize<Order>(input);
        }
        catch (FormatException error)
        {
            Log(new[] { input }, error.Message.Length);
            return false;
        }
        if (result is { Lines.Count: 0 } empty)
        {
            Log(null, empty.Lines.Count);
        }
        return result != null;
    }

    private static int Count(List<Order> orders) => orders.Count;
}
