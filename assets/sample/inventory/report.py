"""A printable stock report."""

import os

from .pricing import bulk_discount, line_total


def currency():
    """Currency symbol from the environment."""
    return os.getenv("CURRENCY", "EUR")


def format_report(inventory):
    """One line per item, then the total value."""
    lines = []
    for item in inventory.items():
        discount = bulk_discount(item.quantity)
        lines.append(f"{item.name:<10} {item.quantity:>5} x {item.price:>7.2f}  -{discount:>2}%  {line_total(item):>9.2f} {currency()}")
    lines.append(f"{'total':<36} {inventory.total_value():>9.2f} {currency()}")
    return "\n".join(lines)
