"""Pricing rules: bulk discounts and tax."""

import os

DEFAULT_TAX_RATE = 0.2


def tax_rate():
    """The tax rate from the environment (TAX_RATE), or the default."""
    value = os.environ.get("TAX_RATE")
    if value is None:
        return DEFAULT_TAX_RATE
    return float(value)


def bulk_discount(quantity):
    """Discount in percent for buying quantity units.

    100 units or more earn 10 %, 50 or more earn 5 %.
    """
    if quantity > 100:
        return 10
    if quantity >= 50:
        return 5
    return 0


def apply_discount(price, percent):
    """Price after taking percent off."""
    return price * (1 - percent / 100)


def price_with_tax(price):
    """Price with tax added."""
    return price * (1 + tax_rate())


def line_total(item):
    """What a line of stock is worth: discount for its quantity, then tax."""
    discounted = apply_discount(item.subtotal(), bulk_discount(item.quantity))
    return round(price_with_tax(discounted), 2)
