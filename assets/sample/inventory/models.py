"""Items and the inventory that holds them."""

from dataclasses import dataclass

from . import pricing


@dataclass
class Item:
    """One line of stock: a named product, its unit price and quantity."""

    name: str
    price: float
    quantity: int = 0

    def subtotal(self):
        """Price of the whole line before discounts and tax."""
        return self.price * self.quantity


class Inventory:
    """A collection of items keyed by name."""

    def __init__(self, items=None):
        self._items = {}
        for item in items or []:
            self.add(item)

    def add(self, item):
        """Add an item, or increase the quantity of an existing one."""
        if item.quantity < 0:
            raise ValueError(f"negative quantity for {item.name}")
        existing = self._items.get(item.name)
        if existing is None:
            self._items[item.name] = Item(item.name, item.price, item.quantity)
        else:
            existing.quantity += item.quantity

    def remove(self, name, quantity):
        """Take quantity units of name out of stock."""
        item = self.find(name)
        if item.quantity < quantity:
            raise ValueError(f"only {item.quantity} {name} in stock")
        item.quantity -= quantity

    def find(self, name):
        """Return the item called name or raise KeyError."""
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(f"no item named {name!r}") from None

    def items(self):
        """Items sorted by name."""
        return sorted(self._items.values(), key=lambda item: item.name)

    def total_value(self):
        """Value of the whole stock, discounts and tax included."""
        return round(sum(pricing.line_total(item) for item in self.items()), 2)
