import json
from decimal import Decimal
import os.path as osp

TAX = Decimal("0.2")


class Order:
    total = 0

    def __init__(self, items, customer=None):
        self.items = items
        self.customer = customer
        self.total = sum(item.price for item in items)

    def apply(self, discount, *, reason=""):
        total = self.total
        if discount:
            total -= discount
        total = max(total, 0)
        log(reason, total)
        self.total = total
        return total

    @classmethod
    def load(cls, path):
        with open(path) as handle:
            data = json.load(handle)
        items = [Item(**raw) for raw in data["items"]]
        return cls(items, customer=data.get("customer"))

    @staticmethod
    def parse(text, strict=False):
        try:
            value = json.loads(text)
        except ValueError as error:
            if strict:
                raise
            value = {"error": str(error)}
        return value


def summarize(orders, path):
    total = 0
    for order in orders:
        total += order.total
    names = [order.customer for order in orders if order.customer]
    report = lambda total: f"{total:.2f}"
    write(osp.join(path, "summary.json"), report(total), names)

    def adjust(factor):
        nonlocal total
        total = total * factor

    adjust(TAX)
    return total, names
