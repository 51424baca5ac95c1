"""Loading and saving an inventory."""

import json
import os

from .models import Inventory, Item


class BaseStore:
    """Where an inventory lives."""

    def load(self):
        raise NotImplementedError

    def save(self, inventory):
        raise NotImplementedError


class JsonStore(BaseStore):
    """An inventory kept in a JSON file (INVENTORY_DB in .env)."""

    def __init__(self, path=None):
        self.path = path or os.getenv("INVENTORY_DB", "data/inventory.json")

    def load(self):
        with open(self.path, encoding="utf-8") as f:
            rows = json.load(f)
        return Inventory(Item(**row) for row in rows)

    def save(self, inventory):
        rows = [{"name": i.name, "price": i.price, "quantity": i.quantity} for i in inventory.items()]
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
        os.replace(tmp, self.path)
