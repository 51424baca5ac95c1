"""A small stock-keeping package used as CodeLoom's sample project."""

from .models import Inventory, Item

__all__ = ["Inventory", "Item"]
